/* tmap_nv.c — tensor maps for Hopper's TMA (cp.async.bulk.tensor), encoded by NVIDIA's CUDA driver.
 *
 * Only the CUDA driver API writes a tensor map (cuTensorMapEncodeTiled); NVIDIA's OpenCL driver has
 * no counterpart. This module loads libcuda.so.1 with dlopen — never linked, so libclrun needs
 * nothing of CUDA anywhere — the first time a context on an NVIDIA GPU asks for a map (the first
 * tensor-core GEMM that would use TMA, not clrun_open): cuInit once per process, then, per
 * context, the CUDA device with the OpenCL device's PCI bus and slot (cl_nv_device_attribute_query)
 * and its primary context, retained (the encoder needs a current context) and released at
 * clrun_close. What that costs is measured under $CLRUN_VERBOSE and in docs/BENCHMARKS.md.
 *
 * A map names its tensor by device address: the address NVIDIA's OpenCL gives a buffer is read
 * once per buffer by a one-line kernel (lib/ops/gemm/nv/tmap_nv.cl) and kept in the buffer. Maps are 128 bytes,
 * written into slots of a per-context device buffer with clEnqueueFillBuffer (whose pattern is
 * copied at the call, so nothing on the host must outlive it) and kept per content: the same
 * operands, shapes and boxes reuse their slot. When the slots run out, the context's queues are
 * finished before any slot is written again, so no kernel in flight ever sees its map change.
 *
 * Any failure — no libcuda.so.1, no matching device, an error from the driver — makes the module
 * say no (the reason under $CLRUN_VERBOSE), and the kernels that would have used TMA are not used. */
#include "nv.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int cu_result;
typedef int cu_device;
typedef void *cu_context;

static struct {
    pthread_once_t once;
    int ok;
    char why[256];
    double init_ms;
    cu_result (*init)(unsigned);
    cu_result (*dev_count)(int *);
    cu_result (*dev_get)(cu_device *, int);
    cu_result (*dev_attr)(int *, int, cu_device);
    cu_result (*retain)(cu_context *, cu_device);
    cu_result (*release)(cu_device);
    cu_result (*set_current)(cu_context);
    cu_result (*encode)(void *map, int dtype, uint32_t rank, void *addr, const uint64_t *dims, const uint64_t *strides, const uint32_t *box,
                        const uint32_t *elem_strides, int interleave, int swizzle, int l2, int oob);
} cu = {.once = PTHREAD_ONCE_INIT};

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void load(void)
{
    const double t0 = now_ms();
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(cu.why, sizeof cu.why, "libcuda.so.1 could not be loaded (%s)", dlerror());
        return;
    }
#define SYM(field, name)                                                                                  \
    if (!(*(void **)&cu.field = dlsym(h, name))) {                                                        \
        snprintf(cu.why, sizeof cu.why, "libcuda.so.1 has no %s (a CUDA driver older than 12.0?)", name); \
        return;                                                                                           \
    }
    SYM(init, "cuInit");
    SYM(dev_count, "cuDeviceGetCount");
    SYM(dev_get, "cuDeviceGet");
    SYM(dev_attr, "cuDeviceGetAttribute");
    SYM(retain, "cuDevicePrimaryCtxRetain");
    SYM(release, "cuDevicePrimaryCtxRelease_v2");
    SYM(set_current, "cuCtxSetCurrent");
    SYM(encode, "cuTensorMapEncodeTiled");
#undef SYM
    cu_result r = cu.init(0);
    if (r) {
        snprintf(cu.why, sizeof cu.why, "cuInit failed (CUDA error %d)", r);
        return;
    }
    cu.init_ms = now_ms() - t0;
    cu.ok = 1; /* the library stays loaded for the process: its contexts may outlive any one of ours */
}

#define SLOTS 256 /* maps per context before the slots are reused (after a finish) */

struct tmap_state {
    int tried, ok;
    cu_device dev;
    cu_context cc;
    clrun_buf *slots;
    unsigned used;
    struct {
        unsigned char map[128];
        cl_command_queue by; /* the queue that wrote it */
    } * keys;                /* the content of each slot */
};

static void release(clrun_ctx *ctx, void *state)
{
    (void)ctx;
    struct tmap_state *s = state;
    clrun_buf_free(s->slots);
    free(s->keys);
    if (s->ok) cu.release(s->dev);
}

static const char tmap_key = 0;

/* The context's state, set up on first use; NULL where tensor maps cannot be made here (the reason
 * under $CLRUN_VERBOSE, once per context). */
static struct tmap_state *ready(clrun_ctx *ctx)
{
    struct tmap_state *s = clrun__op_state(ctx, &tmap_key, sizeof *s, release);
    if (!s) return NULL;
    if (s->tried) return s->ok ? s : NULL;
    s->tried = 1;
    char why[300] = "";
    const double t0 = now_ms();
    if (clrun__setting_on(CLRUN__SET_NO_TMA)) snprintf(why, sizeof why, "$CLRUN_NO_TMA is set");
    else if (!clrun__gemm_nv_candidate(ctx)) snprintf(why, sizeof why, "not an NVIDIA GPU");
    if (!*why) pthread_once(&cu.once, load);
    if (!*why && !cu.ok) snprintf(why, sizeof why, "%s", cu.why);
    int n = 0;
    if (!*why && (cu.dev_count(&n) || n < 1)) snprintf(why, sizeof why, "the CUDA driver sees no device");
    if (!*why) { /* the CUDA device of this OpenCL device: by PCI bus and slot where the driver says them */
        cl_uint bus = 0, slot = 0;
        const int have =
            clGetDeviceInfo(clrun_ctx_cl_device(ctx), 0x4008 /* CL_DEVICE_PCI_BUS_ID_NV */, sizeof bus, &bus, NULL) == CL_SUCCESS &&
            clGetDeviceInfo(clrun_ctx_cl_device(ctx), 0x4009 /* CL_DEVICE_PCI_SLOT_ID_NV */, sizeof slot, &slot, NULL) == CL_SUCCESS;
        int found = -1;
        for (int i = 0; i < n && found < 0; i++) {
            cu_device d;
            int b = -1, dv = -1;
            if (cu.dev_get(&d, i)) continue;
            if (!have) {
                if (n == 1) found = i, s->dev = d;
                continue;
            }
            if (!cu.dev_attr(&b, 33 /* CU_DEVICE_ATTRIBUTE_PCI_BUS_ID */, d) && !cu.dev_attr(&dv, 34 /* PCI_DEVICE_ID */, d) &&
                (cl_uint)b == bus && ((cl_uint)dv == slot || (cl_uint)dv == slot >> 3))
                found = i, s->dev = d;
        }
        if (found < 0 && n == 1 && !cu.dev_get(&s->dev, 0)) found = 0; /* one CUDA device: it is this one */
        if (found < 0)
            snprintf(why, sizeof why, "no CUDA device matches this OpenCL device%s",
                     have ? " by PCI bus and slot" : " (several, and no PCI ids)");
    }
    cu_result r = 0;
    if (!*why && (r = cu.retain(&s->cc, s->dev))) snprintf(why, sizeof why, "cuDevicePrimaryCtxRetain failed (CUDA error %d)", r);
    if (!*why) s->ok = 1; /* released at clrun_close from here on */
    if (!*why && clrun_buf_new(ctx, (size_t)SLOTS * 128, 0, &s->slots) != CLRUN_OK)
        snprintf(why, sizeof why, "no device memory for the maps: %s", clrun_last_error(ctx));
    if (!*why && !(s->keys = calloc(SLOTS, sizeof *s->keys))) snprintf(why, sizeof why, "out of host memory");
    if (*why) {
        if (clrun__setting_on(CLRUN__SET_VERBOSE)) fprintf(stderr, "clrun: no TMA on %s: %s\n", clrun_ctx_device(ctx)->name, why);
        return NULL;
    }
    if (clrun__setting_on(CLRUN__SET_VERBOSE))
        fprintf(stderr,
                "clrun: TMA on %s: the CUDA driver loaded and initialised in %.1f ms (once per process), its primary context retained in "
                "%.1f ms\n",
                clrun_ctx_device(ctx)->name, cu.init_ms, now_ms() - t0);
    return s;
}

int clrun__tmap_available(clrun_ctx *ctx) { return ctx ? ready(ctx) != NULL : 0; }

/* The device address of a buffer, read once by a kernel and kept in the buffer. */
static clrun_status address(clrun_ctx *ctx, clrun_buf *b, uint64_t *out)
{
    uint64_t *da = clrun__buf_devaddr(b);
    if (!*da) {
        clrun_kernel *k;
        clrun_buf *tmp = NULL;
        uint64_t a = 0;
        clrun_status st;
        if ((st = clrun__lib_kernel(ctx, "tmap_nv", NULL, "clrun_buf_address", &k)) || (st = clrun_buf_new(ctx, 8, 0, &tmp)) ||
            (st = CLRUN__RUN(k, ((clrun__grid){1, {1, 1, 1}, {1, 1, 1}}), ARG_BUF(b), ARG_BUF(tmp))) ||
            (st = clrun_download(tmp, 0, &a, 8))) {
            clrun_buf_free(tmp);
            return st;
        }
        clrun_buf_free(tmp);
        if (!a) return clrun__fail(ctx, CLRUN_UNSUPPORTED, "tma: the driver gave a buffer the address 0");
        *da = a;
    }
    *out = *da;
    return CLRUN_OK;
}

clrun_status clrun__tmap(clrun_ctx *ctx, clrun_buf *b, size_t byte_off, int dtype, unsigned rank, const uint64_t *dims,
                         const uint64_t *strides, const uint32_t *box, int swizzle, clrun_buf **slots, size_t *index)
{
    struct tmap_state *s = ready(ctx);
    if (!s) return clrun__fail(ctx, CLRUN_UNSUPPORTED, "tma: tensor maps cannot be made on this device ($CLRUN_VERBOSE says why)");
    uint64_t base = 0;
    clrun_status st = address(ctx, b, &base);
    if (st) return st;
    _Alignas(64) unsigned char map[128];
    const uint32_t ones[5] = {1, 1, 1, 1, 1};
    cu_result r = cu.set_current(s->cc); /* current per thread: set on every call */
    if (!r)
        r = cu.encode(map, dtype, rank, (void *)(uintptr_t)(base + byte_off), dims, strides, box, ones, 0 /* no interleave */, swizzle,
                      2 /* L2 promotion 128 B */, 0 /* out of bounds: zeros */);
    if (r) return clrun__fail(ctx, CLRUN_UNSUPPORTED, "tma: cuTensorMapEncodeTiled failed (CUDA error %d)", r);
    cl_command_queue q = clrun_ctx_cl_queue(ctx);
    unsigned i = 0;
    while (i < s->used && memcmp(s->keys[i].map, map, sizeof map)) i++;
    if (i < s->used && s->keys[i].by == q) return *slots = s->slots, *index = i, CLRUN_OK;
    /* a new map, or one written on another queue (whose write may not have run yet: written again
     * on this one, with the same bytes, which any reader in flight may see as well) */
    if (i == s->used && s->used == SLOTS) { /* every slot may be read by a kernel in flight: let them finish first */
        if ((st = clrun_finish(ctx))) return st;
        s->used = i = 0;
    }
    cl_int err = clEnqueueFillBuffer(q, clrun_buf_cl_mem(s->slots), map, sizeof map, (size_t)i * 128, sizeof map, 0, NULL, NULL);
    if (err != CL_SUCCESS) return clrun__fail_cl(ctx, err, "clEnqueueFillBuffer", "writing a tensor map");
    memcpy(s->keys[i].map, map, sizeof map);
    s->keys[i].by = q;
    if (i == s->used) s->used++;
    *slots = s->slots, *index = i;
    return CLRUN_OK;
}
