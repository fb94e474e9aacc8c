/* tmap_nv.c — tensor maps for Hopper's TMA (cp.async.bulk.tensor), encoded by NVIDIA's CUDA driver.
 *
 * Only the CUDA driver API writes a tensor map (cuTensorMapEncodeTiled); NVIDIA's OpenCL driver has
 * no counterpart. The core loads the driver (lib/cuda.c: dlopen, never linked) and retains the
 * primary context of the CUDA device of the context's OpenCL device, the first time it is asked
 * for (the first large buffer or the first tensor-core GEMM that would use TMA), and releases it at
 * clrun_close. What that costs is measured under $CLRUN_VERBOSE and in docs/BENCHMARKS.md.
 *
 * A map names its tensor by device address. For kernels OpenCL launches, the address NVIDIA's
 * OpenCL gives a buffer, read once per buffer by a one-line kernel (lib/ops/gemm/nv/tmap_nv.cl) and
 * kept in the buffer; for kernels launched through the CUDA driver (clrun__launch_cuda), the
 * buffer's CUDA address, and the map itself in a buffer shared with CUDA. Maps are 128 bytes,
 * written into slots of a per-context device buffer (one for each kind of launch) with
 * clEnqueueFillBuffer (whose pattern is copied at the call, so nothing on the host must outlive it)
 * and kept per content: the same operands, shapes and boxes reuse their slot. When the slots run
 * out, the context's queues are finished before any slot is written again, so no kernel in flight
 * ever sees its map change.
 *
 * Any failure — no libcuda.so.1, no matching device, an error from the driver — makes the module
 * say no (the reason under $CLRUN_VERBOSE), and the kernels that would have used TMA are not used. */
#include "nv.h"

#include <stdlib.h>
#include <string.h>

#define SLOTS 256 /* maps per context and kind of launch before the slots are reused (after a finish) */

struct slot_set {
    clrun_buf *buf;
    unsigned used;
    struct {
        unsigned char map[128];
        cl_command_queue by; /* the queue that wrote it */
    } * keys;                /* the content of each slot */
};

struct tmap_state {
    int tried, ok;
    const struct clrun__cu_api *cu;
    void *cc;
    struct slot_set sets[2]; /* for OpenCL launches, for CUDA ones */
};

static void release(clrun_ctx *ctx, void *state)
{
    (void)ctx;
    struct tmap_state *s = state;
    for (int i = 0; i < 2; i++) {
        clrun_buf_free(s->sets[i].buf);
        free(s->sets[i].keys);
    }
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
    if (clrun__setting_on(CLRUN__SET_NO_TMA)) snprintf(why, sizeof why, "$CLRUN_NO_TMA is set");
    else if (!clrun__gemm_nv_candidate(ctx)) snprintf(why, sizeof why, "not an NVIDIA GPU");
    else if (!(s->cu = clrun__cu(ctx, &s->cc)))
        snprintf(why, sizeof why, "the CUDA driver is not usable here (see the line on memory shared with CUDA)");
    if (*why) {
        if (clrun__setting_on(CLRUN__SET_VERBOSE)) fprintf(stderr, "clrun: no TMA on %s: %s\n", clrun_ctx_device(ctx)->name, why);
        return NULL;
    }
    s->ok = 1;
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
                         const uint64_t *strides, const uint32_t *box, int swizzle, int cuda, clrun_buf **slots, size_t *index)
{
    struct tmap_state *s = ready(ctx);
    if (!s) return clrun__fail(ctx, CLRUN_UNSUPPORTED, "tma: tensor maps cannot be made on this device ($CLRUN_VERBOSE says why)");
    struct slot_set *set = &s->sets[cuda != 0];
    clrun_status st;
    if (!set->buf) {
        if ((st = cuda ? clrun__buf_new_cuda(ctx, (size_t)SLOTS * 128, &set->buf) : clrun_buf_new(ctx, (size_t)SLOTS * 128, 0, &set->buf)))
            return st;
        if (!(set->keys = calloc(SLOTS, sizeof *set->keys))) {
            clrun_buf_free(set->buf);
            set->buf = NULL;
            return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "tma: out of host memory");
        }
    }
    uint64_t base = cuda ? clrun__buf_cuaddr(b) : 0;
    if (cuda && !base) return clrun__fail(ctx, CLRUN_UNSUPPORTED, "tma: the buffer is not shared with CUDA");
    if (!cuda && (st = address(ctx, b, &base))) return st;
    _Alignas(64) unsigned char map[128];
    const uint32_t ones[5] = {1, 1, 1, 1, 1};
    int r = s->cu->set_current(s->cc); /* current per thread: set on every call */
    if (!r)
        r = s->cu->encode_tiled(map, dtype, rank, (void *)(uintptr_t)(base + byte_off), dims, strides, box, ones, 0 /* no interleave */,
                                swizzle, 2 /* L2 promotion 128 B */, 0 /* out of bounds: zeros */);
    if (r) return clrun__fail(ctx, CLRUN_UNSUPPORTED, "tma: cuTensorMapEncodeTiled failed (CUDA error %d)", r);
    cl_command_queue q = clrun_ctx_cl_queue(ctx);
    unsigned i = 0;
    while (i < set->used && memcmp(set->keys[i].map, map, sizeof map)) i++;
    if (i < set->used && set->keys[i].by == q) return *slots = set->buf, *index = i, CLRUN_OK;
    /* a new map, or one written on another queue (whose write may not have run yet: written again
     * on this one, with the same bytes, which any reader in flight may see as well) */
    if (i == set->used && set->used == SLOTS) { /* every slot may be read by a kernel in flight: let them finish first */
        if ((st = clrun_finish(ctx))) return st;
        set->used = i = 0;
    }
    cl_int err = clEnqueueFillBuffer(q, clrun_buf_cl_mem(set->buf), map, sizeof map, (size_t)i * 128, sizeof map, 0, NULL, NULL);
    if (err != CL_SUCCESS) return clrun__fail_cl(ctx, err, "clEnqueueFillBuffer", "writing a tensor map");
    memcpy(set->keys[i].map, map, sizeof map);
    set->keys[i].by = q;
    if (i == set->used) set->used++;
    *slots = set->buf, *index = i;
    return CLRUN_OK;
}
