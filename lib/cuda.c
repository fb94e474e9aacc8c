/* cuda.c — one memory for NVIDIA's OpenCL and the CUDA driver, and kernels launched through the driver.
 *
 * NVIDIA's OpenCL gives a work-group 48 KiB of local memory and no thread-block clusters; the CUDA
 * driver gives a block up to 227 KiB and clusters. An OpenCL buffer's address means nothing to the
 * CUDA driver, but memory made with the driver's virtual-memory API (cuMemCreate with a POSIX-fd
 * handle, cuMemAddressReserve/cuMemMap/cuMemSetAccess) and imported into OpenCL
 * (cl_khr_external_memory_opaque_fd, clCreateBufferWithProperties) is one memory for both. So, on an
 * NVIDIA GPU whose driver has the extensions, and with $CLRUN_CUDA=1 (read once per context, at its first
 * large buffer; off by default while the driver-launched kernel does not yet compute right — below):
 *
 * - Buffers of CLRUN__CU_MIN bytes and more that clrun_buf_new makes are such allocations: each has
 *   its cl_mem and a CUDA address valid in the device's primary context (clrun_buf_cuda_address).
 *   Their size is rounded up to the driver's granularity (2 MiB on Hopper): under the threshold of
 *   4 MiB the rounding could waste up to half, so smaller buffers stay plain OpenCL ones. Buffers an
 *   application wraps (clrun_buf_wrap) stay what they are. A buffer is acquired for OpenCL once, when
 *   made; its memory is unmapped and released when OpenCL destroys the cl_mem (a destructor callback),
 *   that is after the last command that uses it, sub-buffers included.
 * - clrun__launch_cuda runs a library kernel through the driver: the PTX text of its program (built
 *   by NVIDIA's OpenCL, the -clrun-ptx-rewrite path) with its one __local array named clrun_dyn_smem
 *   made dynamic shared memory, loaded with cuModuleLoadDataEx once per program, launched on a stream
 *   of the context's own with as many bytes of it as the kernel asks. Every buffer argument must be
 *   shared. Order with the OpenCL queue: the queue signals an exported binary semaphore the stream
 *   waits for, and the stream signals one the queue waits for (cl_khr_external_semaphore_opaque_fd),
 *   so nothing waits on the host; the memory is released to CUDA before and acquired back after. With
 *   $CLRUN_CUDA_SYNC=finish, or where semaphores cannot be made, the queue is finished before and the
 *   stream after.
 *
 * libcuda.so.1 is loaded with dlopen on first use and never linked. Anything missing — the library,
 * a symbol, the extensions, a matching CUDA device — or $CLRUN_CUDA unset leaves clrun on plain OpenCL
 * buffers and kernels, with the reason under $CLRUN_VERBOSE. What each step costs is printed there too
 * and measured in docs/BENCHMARKS.md. */
#include "internal.h"

#include <CL/cl_ext.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CLRUN__CU_MIN ((size_t)4 << 20) /* buffers from this size are shared allocations */

typedef int cu_result;
typedef int cu_device;
typedef void *cu_context, *cu_module, *cu_function, *cu_stream, *cu_extsem;
typedef unsigned long long cu_ptr, cu_handle;

/* The driver's structures this file fills, as cuda.h lays them out (CUDA 12). */
typedef struct {
    int type, handle_types; /* CU_MEM_ALLOCATION_TYPE_PINNED 1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR 1 */
    int loc_type, loc_id;   /* CU_MEM_LOCATION_TYPE_DEVICE 1, the device */
    void *win32;
    unsigned char flags[8];
} cu_alloc_prop;
typedef struct {
    int loc_type, loc_id;
    int flags; /* CU_MEM_ACCESS_FLAGS_PROT_READWRITE 3 */
} cu_access_desc;
typedef struct {
    int type; /* CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD 1 */
    int pad;
    union {
        int fd;
        void *p[2];
    } handle;
    unsigned flags, reserved[16];
} cu_extsem_desc;
typedef struct {
    unsigned long long words[32]; /* CUDA_EXTERNAL_SEMAPHORE_SIGNAL/WAIT_PARAMS (144 bytes), all zero: a binary semaphore */
} cu_extsem_params;

static struct {
    pthread_once_t once;
    int ok;
    char why[256];
    double init_ms;
    struct clrun__cu_api api;
    cu_result (*dev_count)(int *);
    cu_result (*dev_get)(cu_device *, int);
    cu_result (*dev_attr)(int *, int, cu_device);
    cu_result (*retain)(cu_context *, cu_device);
    cu_result (*release)(cu_device);
    cu_result (*granularity)(size_t *, const cu_alloc_prop *, int);
    cu_result (*mem_create)(cu_handle *, size_t, const cu_alloc_prop *, unsigned long long);
    cu_result (*mem_export)(void *, cu_handle, int, unsigned long long);
    cu_result (*mem_release)(cu_handle);
    cu_result (*reserve)(cu_ptr *, size_t, size_t, cu_ptr, unsigned long long);
    cu_result (*addr_free)(cu_ptr, size_t);
    cu_result (*map)(cu_ptr, size_t, size_t, cu_handle, unsigned long long);
    cu_result (*unmap)(cu_ptr, size_t);
    cu_result (*set_access)(cu_ptr, size_t, const cu_access_desc *, size_t);
    cu_result (*module_load)(cu_module *, const void *, unsigned, int *, void **);
    cu_result (*module_unload)(cu_module);
    cu_result (*get_function)(cu_function *, cu_module, const char *);
    cu_result (*func_attr)(cu_function, int, int);
    cu_result (*param_info)(cu_function, size_t, size_t *, size_t *); /* CUDA 12.4; may be NULL */
    cu_result (*launch)(cu_function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, cu_stream, void **, void **);
    cu_result (*stream_create)(cu_stream *, unsigned);
    cu_result (*stream_destroy)(cu_stream);
    cu_result (*stream_sync)(cu_stream);
    cu_result (*memcpy_async)(cu_ptr, cu_ptr, size_t, cu_stream);
    cu_result (*memcpy_dtoh)(void *, cu_ptr, size_t);
    cu_result (*sem_import)(cu_extsem *, const cu_extsem_desc *);
    cu_result (*sem_destroy)(cu_extsem);
    cu_result (*sem_signal)(const cu_extsem *, const cu_extsem_params *, unsigned, cu_stream);
    cu_result (*sem_wait)(const cu_extsem *, const cu_extsem_params *, unsigned, cu_stream);
    cu_result (*error_string)(cu_result, const char **);
} cu = {.once = PTHREAD_ONCE_INIT};

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static const char *cu_err(cu_result r)
{
    const char *s = NULL;
    if (cu.error_string && !cu.error_string(r, &s) && s) return s;
    return "a CUDA error";
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
    if (!(*(void **)&field = dlsym(h, name))) {                                                           \
        snprintf(cu.why, sizeof cu.why, "libcuda.so.1 has no %s (a CUDA driver older than 12.0?)", name); \
        return;                                                                                           \
    }
    cu_result (*init)(unsigned);
    SYM(init, "cuInit");
    SYM(cu.dev_count, "cuDeviceGetCount");
    SYM(cu.dev_get, "cuDeviceGet");
    SYM(cu.dev_attr, "cuDeviceGetAttribute");
    SYM(cu.retain, "cuDevicePrimaryCtxRetain");
    SYM(cu.release, "cuDevicePrimaryCtxRelease_v2");
    SYM(cu.api.set_current, "cuCtxSetCurrent");
    SYM(cu.api.encode_tiled, "cuTensorMapEncodeTiled");
    SYM(cu.granularity, "cuMemGetAllocationGranularity");
    SYM(cu.mem_create, "cuMemCreate");
    SYM(cu.mem_export, "cuMemExportToShareableHandle");
    SYM(cu.mem_release, "cuMemRelease");
    SYM(cu.reserve, "cuMemAddressReserve");
    SYM(cu.addr_free, "cuMemAddressFree");
    SYM(cu.map, "cuMemMap");
    SYM(cu.unmap, "cuMemUnmap");
    SYM(cu.set_access, "cuMemSetAccess");
    SYM(cu.module_load, "cuModuleLoadDataEx");
    SYM(cu.module_unload, "cuModuleUnload");
    SYM(cu.get_function, "cuModuleGetFunction");
    SYM(cu.func_attr, "cuFuncSetAttribute");
    SYM(cu.launch, "cuLaunchKernel");
    SYM(cu.stream_create, "cuStreamCreate");
    SYM(cu.stream_destroy, "cuStreamDestroy_v2");
    SYM(cu.stream_sync, "cuStreamSynchronize");
    SYM(cu.memcpy_async, "cuMemcpyDtoDAsync_v2");
    SYM(cu.memcpy_dtoh, "cuMemcpyDtoH_v2");
    SYM(cu.sem_import, "cuImportExternalSemaphore");
    SYM(cu.sem_destroy, "cuDestroyExternalSemaphore");
    SYM(cu.sem_signal, "cuSignalExternalSemaphoresAsync");
    SYM(cu.sem_wait, "cuWaitExternalSemaphoresAsync");
#undef SYM
    *(void **)&cu.param_info = dlsym(h, "cuFuncGetParamInfo");
    *(void **)&cu.error_string = dlsym(h, "cuGetErrorString");
    cu_result r = init(0);
    if (r) {
        snprintf(cu.why, sizeof cu.why, "cuInit failed (CUDA error %d)", r);
        return;
    }
    cu.init_ms = now_ms() - t0;
    cu.ok = 1; /* the library stays loaded for the process: its contexts may outlive any one of ours */
}

/* The OpenCL extension entry points, per platform (the context's). */
typedef cl_mem(CL_API_CALL *create_buffer_fn)(cl_context, const cl_properties *, cl_mem_flags, size_t, void *, cl_int *);

struct cu_module_entry {
    cl_program program;
    cu_module module;
    cu_function function;
    char name[64];
    int max_dyn; /* the dynamic shared memory the function is allowed so far */
};

/* A context's CUDA state (clrun__op_state): the device, its primary context, the stream and
 * semaphores, the modules loaded. */
struct cu_state {
    int tried, ok;             /* the driver: loaded, device matched, primary context retained */
    int share_tried, share_ok; /* shared allocations */
    int launch_tried;          /* launch: stream (and semaphores) made */
    int launch_ok;
    char why[300];
    cu_device dev;
    int ordinal;
    cu_context cc;
    size_t gran;
    create_buffer_fn create_buffer;
    clEnqueueAcquireExternalMemObjectsKHR_fn acquire;
    clEnqueueReleaseExternalMemObjectsKHR_fn release;
    cu_stream stream;
    int sems; /* semaphores made: to_cu (OpenCL signals, CUDA waits), from_cu */
    cl_semaphore_khr cl_to, cl_from;
    cu_extsem cu_to, cu_from;
    clEnqueueSignalSemaphoresKHR_fn cl_signal;
    clEnqueueWaitSemaphoresKHR_fn cl_wait;
    clReleaseSemaphoreKHR_fn cl_sem_release;
    struct cu_module_entry *mods;
    size_t nmods;
    double import_ms, imports; /* the cost of making shared buffers: total, count (for $CLRUN_VERBOSE) */
};

static void state_release(clrun_ctx *ctx, void *p)
{
    (void)ctx;
    struct cu_state *s = p;
    if (!s->ok) return;
    cu.api.set_current(s->cc);
    if (s->stream) cu.stream_sync(s->stream);
    for (size_t i = 0; i < s->nmods; i++) cu.module_unload(s->mods[i].module);
    free(s->mods);
    if (s->cu_to) cu.sem_destroy(s->cu_to);
    if (s->cu_from) cu.sem_destroy(s->cu_from);
    if (s->cl_to) s->cl_sem_release(s->cl_to);
    if (s->cl_from) s->cl_sem_release(s->cl_from);
    if (s->stream) cu.stream_destroy(s->stream);
    if (clrun__setting_on(CLRUN__SET_VERBOSE) && s->imports)
        fprintf(stderr, "clrun: %.0f shared buffers made on %s, %.3f ms each on average (cuMemCreate … clCreateBufferWithProperties)\n",
                s->imports, clrun_ctx_device(ctx)->name, s->import_ms / s->imports);
    cu.release(s->dev);
}

static const char cu_key = 0;

static int has_ext(const char *list, const char *name)
{
    const size_t n = strlen(name);
    for (const char *p = list; p && (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) return 1;
    return 0;
}

/* The context's CUDA state with the driver loaded, the device matched and its primary context
 * retained (for tensor maps, whatever $CLRUN_CUDA says), or NULL (the reason under $CLRUN_VERBOSE,
 * once per context). */
static struct cu_state *driver(clrun_ctx *ctx)
{
    if (ctx->info.type != CLRUN_DEVICE_GPU || !strstr(ctx->info.platform_vendor, "NVIDIA")) return NULL;
    struct cu_state *s = clrun__op_state(ctx, &cu_key, sizeof *s, state_release);
    if (!s) return NULL;
    if (s->tried) return s->ok ? s : NULL;
    s->tried = 1;
    char why[300] = ""; /* not s->why: ready() may have written its own reason there first */
    const size_t wn = sizeof why;
    const double t0 = now_ms();
    pthread_once(&cu.once, load);
    if (!cu.ok) snprintf(why, wn, "%s", cu.why);
    int n = 0;
    if (!*why && (cu.dev_count(&n) || n < 1)) snprintf(why, wn, "the CUDA driver sees no device");
    if (!*why) { /* the CUDA device of this OpenCL device: by PCI bus and slot where the driver says them */
        cl_uint bus = 0, slot = 0;
        const int have = clGetDeviceInfo(ctx->device, 0x4008 /* CL_DEVICE_PCI_BUS_ID_NV */, sizeof bus, &bus, NULL) == CL_SUCCESS &&
                         clGetDeviceInfo(ctx->device, 0x4009 /* CL_DEVICE_PCI_SLOT_ID_NV */, sizeof slot, &slot, NULL) == CL_SUCCESS;
        int found = -1;
        for (int i = 0; i < n && found < 0 && have; i++) {
            cu_device d;
            int b = -1, dv = -1;
            if (cu.dev_get(&d, i)) continue;
            if (!cu.dev_attr(&b, 33 /* CU_DEVICE_ATTRIBUTE_PCI_BUS_ID */, d) && !cu.dev_attr(&dv, 34 /* PCI_DEVICE_ID */, d) &&
                (cl_uint)b == bus && ((cl_uint)dv == slot || (cl_uint)dv == slot >> 3))
                found = i, s->dev = d;
        }
        if (found < 0 && n == 1 && !cu.dev_get(&s->dev, 0)) found = 0; /* one CUDA device: it is this one */
        if (found < 0)
            snprintf(why, wn, "no CUDA device matches this OpenCL device%s", have ? " by PCI bus and slot" : " (several, and no PCI ids)");
        s->ordinal = found;
    }
    cu_result r = 0;
    if (!*why && (r = cu.retain(&s->cc, s->dev))) snprintf(why, wn, "cuDevicePrimaryCtxRetain failed: %s", cu_err(r));
    if (*why) {
        snprintf(s->why, sizeof s->why, "%s", why);
        if (clrun__setting_on(CLRUN__SET_VERBOSE)) fprintf(stderr, "clrun: no CUDA driver for %s: %s\n", ctx->info.name, why);
        return NULL;
    }
    s->ok = 1; /* released at clrun_close from here on */
    if (clrun__setting_on(CLRUN__SET_VERBOSE))
        fprintf(stderr,
                "clrun: the CUDA driver for %s (CUDA device %d): loaded and initialised in %.1f ms (once per process), its primary "
                "context retained in %.1f ms\n",
                ctx->info.name, s->ordinal, cu.init_ms, now_ms() - t0);
    return s;
}

/* The context's CUDA state with shared allocations possible ($CLRUN_CUDA=1, the extensions), or NULL. */
static struct cu_state *ready(clrun_ctx *ctx)
{
    if (ctx->info.type != CLRUN_DEVICE_GPU || !strstr(ctx->info.platform_vendor, "NVIDIA")) return NULL;
    struct cu_state *s = clrun__op_state(ctx, &cu_key, sizeof *s, state_release);
    if (!s || s->share_tried) return s && s->share_ok ? s : NULL;
    s->share_tried = 1; /* decided once per context, $CLRUN_CUDA as it is now */
    char why[300] = "", ext[8192] = "";
    if (!clrun__setting_on(CLRUN__SET_CUDA)) {
        snprintf(s->why, sizeof s->why, "$CLRUN_CUDA=1 is not set");
        return NULL;
    }
    if (!driver(ctx)) return NULL;
    if (clGetDeviceInfo(ctx->device, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL) != CL_SUCCESS ||
        !has_ext(ext, "cl_khr_external_memory_opaque_fd"))
        snprintf(why, sizeof why, "the OpenCL driver has no cl_khr_external_memory_opaque_fd");
    const cu_alloc_prop prop = {1, 1, 1, s->dev, NULL, {0}};
    cu_result r = 0;
    if (!*why && ((r = cu.granularity(&s->gran, &prop, 0)) || !s->gran))
        snprintf(why, sizeof why, "cuMemGetAllocationGranularity failed: %s", cu_err(r));
    if (!*why) {
        *(void **)&s->create_buffer = dlsym(RTLD_DEFAULT, "clCreateBufferWithProperties");
        s->acquire = (clEnqueueAcquireExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(
            ctx->platform, "clEnqueueAcquireExternalMemObjectsKHR");
        s->release = (clEnqueueReleaseExternalMemObjectsKHR_fn)clGetExtensionFunctionAddressForPlatform(
            ctx->platform, "clEnqueueReleaseExternalMemObjectsKHR");
        if (!s->create_buffer || !s->acquire || !s->release)
            snprintf(why, sizeof why, "the OpenCL loader or driver lacks clCreateBufferWithProperties or the external-memory entry points");
    }
    if (*why) {
        snprintf(s->why, sizeof s->why, "%s", why);
        if (clrun__setting_on(CLRUN__SET_VERBOSE)) fprintf(stderr, "clrun: no memory shared with CUDA on %s: %s\n", ctx->info.name, why);
        return NULL;
    }
    s->share_ok = 1;
    if (clrun__setting_on(CLRUN__SET_VERBOSE))
        fprintf(stderr, "clrun: memory shared with CUDA on %s: allocations from %zu bytes, rounded to %zu\n", ctx->info.name, CLRUN__CU_MIN,
                s->gran);
    return s;
}

const struct clrun__cu_api *clrun__cu(clrun_ctx *ctx, void **cu_ctx)
{
    struct cu_state *s = ctx ? driver(ctx) : NULL;
    if (!s) return NULL;
    if (cu_ctx) *cu_ctx = s->cc;
    return &cu.api;
}

/* ---- shared allocations -------------------------------------------------------------------- */

struct cu_alloc {
    cu_device dev;
    cu_ptr ptr;
    size_t size;
    cu_handle handle;
    cu_context cc;
    struct cu_alloc *next; /* on the list of allocations whose cl_mem is gone */
};

/* Allocations whose cl_mem OpenCL destroyed, to be unmapped and released: not in the destructor
 * callback itself, which NVIDIA's runtime may call from inside its own driver calls (at a finish or
 * as the context is released), where a CUDA call waits forever. */
static pthread_mutex_t gone_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cu_alloc *gone;

static void free_alloc(struct cu_alloc *a)
{
    cu.api.set_current(a->cc);
    if (a->ptr) {
        cu.unmap(a->ptr, a->size);
        cu.addr_free(a->ptr, a->size);
    }
    if (a->handle) cu.mem_release(a->handle);
    cu.release(a->dev);
    free(a);
}

static void CL_CALLBACK destroyed(cl_mem mem, void *user)
{
    (void)mem;
    struct cu_alloc *a = user;
    pthread_mutex_lock(&gone_lock);
    a->next = gone, gone = a;
    pthread_mutex_unlock(&gone_lock);
}

void clrun__cu_drain(void)
{
    pthread_mutex_lock(&gone_lock);
    struct cu_alloc *a = gone;
    gone = NULL;
    pthread_mutex_unlock(&gone_lock);
    while (a) {
        struct cu_alloc *next = a->next;
        free_alloc(a);
        a = next;
    }
}

int clrun__cu_alloc(clrun_ctx *ctx, size_t bytes, cl_mem_flags flags, int force, cl_mem *mem, uint64_t *addr, int *ordinal)
{
    *mem = NULL, *addr = 0;
    if (bytes < CLRUN__CU_MIN && !force) return 0;
    struct cu_state *s = ready(ctx);
    if (!s) return 0;
    clrun__cu_drain(); /* what was freed goes back to the driver before more is taken */
    const double t0 = now_ms();
    struct cu_alloc *a = calloc(1, sizeof *a);
    if (!a) return 0;
    cu_context cc;
    a->dev = s->dev;
    a->size = (bytes + s->gran - 1) / s->gran * s->gran;
    const cu_alloc_prop prop = {1, 1, 1, s->dev, NULL, {0}};
    const cu_access_desc access = {1, s->dev, 3};
    int fd = -1;
    cu_result r = cu.retain(&cc, s->dev); /* each allocation holds the primary context until it is freed */
    if (r) {
        free(a);
        return 0;
    }
    a->cc = cc;
    const char *step = "cuCtxSetCurrent";
    if (!(r = cu.api.set_current(cc)) && (step = "cuMemCreate", !(r = cu.mem_create(&a->handle, a->size, &prop, 0))) &&
        (step = "cuMemExportToShareableHandle", !(r = cu.mem_export(&fd, a->handle, 1, 0))) &&
        (step = "cuMemAddressReserve", !(r = cu.reserve(&a->ptr, a->size, s->gran, 0, 0))) &&
        (step = "cuMemMap", !(r = cu.map(a->ptr, a->size, 0, a->handle, 0)))) {
        step = "cuMemSetAccess";
        if ((r = cu.set_access(a->ptr, a->size, &access, 1))) cu.unmap(a->ptr, a->size);
    }
    if (r) {
        if (a->ptr && strcmp(step, "cuMemAddressReserve")) cu.addr_free(a->ptr, a->size);
        a->ptr = 0;
        if (fd >= 0) close(fd);
        if (clrun__setting_on(CLRUN__SET_VERBOSE))
            fprintf(stderr, "clrun: a shared buffer of %zu bytes could not be made (%s: %s); it is a plain OpenCL one\n", bytes, step,
                    cu_err(r));
        free_alloc(a);
        return 0;
    }
    const cl_properties props[] = {CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR,
                                   (cl_properties)fd,
                                   CL_DEVICE_HANDLE_LIST_KHR,
                                   (cl_properties)(uintptr_t)ctx->device,
                                   CL_DEVICE_HANDLE_LIST_END_KHR,
                                   0};
    cl_int err = CL_SUCCESS;
    cl_mem m = s->create_buffer(ctx->context, props, flags, bytes, NULL, &err);
    /* the import may take the descriptor over (as Vulkan's does) or keep its own reference: it is
     * closed here only if it is still open */
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) close(fd);
    if (m && (err = clSetMemObjectDestructorCallback(m, destroyed, a)) != CL_SUCCESS) {
        clReleaseMemObject(m); /* (its memory is freed below) */
        m = NULL;
    }
    if (!m) {
        if (clrun__setting_on(CLRUN__SET_VERBOSE))
            fprintf(stderr, "clrun: importing a CUDA allocation of %zu bytes into OpenCL failed (%s); it is a plain OpenCL buffer\n", bytes,
                    clrun_cl_error_name(err));
        free_alloc(a);
        return 0;
    }
    /* from here the cl_mem owns the allocation: freed when OpenCL destroys it */
    if ((err = s->acquire(ctx->own.queue, 1, &m, 0, NULL, NULL)) != CL_SUCCESS) {
        clReleaseMemObject(m);
        return 0;
    }
    s->import_ms += now_ms() - t0, s->imports++;
    *mem = m, *addr = a->ptr, *ordinal = s->ordinal;
    return 1;
}

void clrun__cu_unshare(clrun_ctx *ctx, cl_mem root)
{
    struct cu_state *s = ready(ctx); /* (made with the allocation) */
    cl_command_queue q = clrun_ctx_cl_queue(ctx);
    if (s && q) s->release(q, 1, &root, 0, NULL, NULL);
}

clrun_status clrun_buf_cuda_address(const clrun_buf *b, uint64_t *address, int *cuda_device)
{
    if (!b) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_buf_cuda_address: b is NULL");
    if (!address) return clrun__fail(b->ctx, CLRUN_INVALID_ARG, "clrun_buf_cuda_address: address is NULL");
    *address = 0;
    if (!b->cu_addr) {
        const struct cu_state *s = clrun__op_state(b->ctx, &cu_key, sizeof *s, state_release);
        return clrun__fail(b->ctx, CLRUN_UNSUPPORTED, "clrun_buf_cuda_address: this buffer's memory is OpenCL's alone: %s",
                           b->ctx->info.type != CLRUN_DEVICE_GPU || !strstr(b->ctx->info.platform_vendor, "NVIDIA")
                               ? "memory is shared with CUDA on NVIDIA GPUs only"
                           : s && ((s->tried && !s->ok) || (s->share_tried && !s->share_ok))
                               ? s->why
                               : "buffers under 4 MiB, and buffers wrapped with clrun_buf_wrap, are not shared");
    }
    *address = b->cu_addr;
    if (cuda_device) *cuda_device = b->cu_dev;
    return CLRUN_OK;
}

/* ---- driver launches ----------------------------------------------------------------------- */

/* The stream and, unless $CLRUN_CUDA_SYNC=finish, the two semaphores; 0 where launches cannot be made. */
static int launch_ready(clrun_ctx *ctx, struct cu_state *s)
{
    if (s->launch_tried) return s->launch_ok;
    s->launch_tried = 1;
    cu.api.set_current(s->cc);
    cu_result r = cu.stream_create(&s->stream, 1 /* CU_STREAM_NON_BLOCKING */);
    if (r) {
        if (clrun__setting_on(CLRUN__SET_VERBOSE)) fprintf(stderr, "clrun: no CUDA stream (%s): no driver launches\n", cu_err(r));
        s->stream = NULL;
        return 0;
    }
    s->launch_ok = 1;
    int sync = -1; /* 0 semaphore, 1 finish */
    if (clrun__setting_choice(ctx, CLRUN__SET_CUDA_SYNC, &sync) == CLRUN_OK && sync == 1) return 1;
    char ext[8192] = "", why[200] = "";
    clCreateSemaphoreWithPropertiesKHR_fn create = (clCreateSemaphoreWithPropertiesKHR_fn)clGetExtensionFunctionAddressForPlatform(
        ctx->platform, "clCreateSemaphoreWithPropertiesKHR");
    clGetSemaphoreHandleForTypeKHR_fn handle =
        (clGetSemaphoreHandleForTypeKHR_fn)clGetExtensionFunctionAddressForPlatform(ctx->platform, "clGetSemaphoreHandleForTypeKHR");
    s->cl_signal = (clEnqueueSignalSemaphoresKHR_fn)clGetExtensionFunctionAddressForPlatform(ctx->platform, "clEnqueueSignalSemaphoresKHR");
    s->cl_wait = (clEnqueueWaitSemaphoresKHR_fn)clGetExtensionFunctionAddressForPlatform(ctx->platform, "clEnqueueWaitSemaphoresKHR");
    s->cl_sem_release = (clReleaseSemaphoreKHR_fn)clGetExtensionFunctionAddressForPlatform(ctx->platform, "clReleaseSemaphoreKHR");
    if (clGetDeviceInfo(ctx->device, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL) != CL_SUCCESS ||
        !has_ext(ext, "cl_khr_external_semaphore_opaque_fd") || !create || !handle || !s->cl_signal || !s->cl_wait || !s->cl_sem_release)
        snprintf(why, sizeof why, "the OpenCL driver has no cl_khr_external_semaphore_opaque_fd");
    for (int i = 0; i < 2 && !*why; i++) {
        const cl_semaphore_properties_khr props[] = {CL_SEMAPHORE_TYPE_KHR,
                                                     CL_SEMAPHORE_TYPE_BINARY_KHR,
                                                     CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR,
                                                     CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR,
                                                     CL_SEMAPHORE_EXPORT_HANDLE_TYPES_LIST_END_KHR,
                                                     CL_DEVICE_HANDLE_LIST_KHR,
                                                     (cl_semaphore_properties_khr)(uintptr_t)ctx->device,
                                                     CL_DEVICE_HANDLE_LIST_END_KHR,
                                                     0};
        cl_int err = CL_SUCCESS;
        cl_semaphore_khr sem = create(ctx->context, props, &err);
        if (!sem && err == CL_INVALID_PROPERTY) { /* a driver that takes no device list: the context's one device */
            cl_semaphore_properties_khr shorter[6];
            memcpy(shorter, props, 5 * sizeof *props);
            shorter[5] = 0;
            sem = create(ctx->context, shorter, &err);
        }
        int fd = -1;
        if (!sem) {
            snprintf(why, sizeof why, "clCreateSemaphoreWithPropertiesKHR failed (%s)", clrun_cl_error_name(err));
            break;
        }
        *(i ? &s->cl_from : &s->cl_to) = sem;
        if ((err = handle(sem, ctx->device, CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR, sizeof fd, &fd, NULL)) != CL_SUCCESS) {
            snprintf(why, sizeof why, "clGetSemaphoreHandleForTypeKHR failed (%s)", clrun_cl_error_name(err));
            break;
        }
        cu_extsem_desc d = {0};
        d.type = 1, d.handle.fd = fd;
        if ((r = cu.sem_import(i ? &s->cu_from : &s->cu_to, &d))) {
            close(fd);
            snprintf(why, sizeof why, "cuImportExternalSemaphore failed (%s)", cu_err(r));
        }
    }
    if (*why) {
        if (clrun__setting_on(CLRUN__SET_VERBOSE))
            fprintf(stderr, "clrun: driver launches on %s are ordered by finishing the queue and the stream: %s\n", ctx->info.name, why);
        return 1;
    }
    s->sems = 1;
    return 1;
}

int clrun__cu_launchable(clrun_ctx *ctx)
{
    struct cu_state *s = ready(ctx);
    return s && launch_ready(ctx, s);
}

char *clrun__ptx_dynamic_smem(const char *ptx, size_t len)
{
    const char *end = ptx + len;
    while (end > ptx && end[-1] == 0) end--;
    const char *decl = NULL, *decl_end = NULL, *after = NULL;
    for (const char *p = ptx; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl + 1 : end, *q = p;
        while (q < le && (*q == ' ' || *q == '\t')) q++;
        if (!after && (size_t)(le - q) > 13 && !memcmp(q, ".address_size", 13)) after = le;
        if (!decl && (size_t)(le - q) > 8 && !memcmp(q, ".shared ", 8)) {
            const char *name = q;
            while (name < le && *name != '[') name++;
            const char *n0 = name;
            while (n0 > q && n0[-1] != ' ' && n0[-1] != '\t') n0--;
            if (name < le && memmem(n0, (size_t)(name - n0), "clrun_dyn_smem", 14)) decl = p, decl_end = le;
        }
        p = le;
    }
    if (!decl || !after || after > decl) return NULL;
    /* the declaration's words up to the name's '[', .shared → .extern .shared */
    const char *q = decl, *br = memchr(decl, '[', (size_t)(decl_end - decl));
    while (*q == ' ' || *q == '\t') q++;
    const size_t head = (size_t)(br - q);
    char *o = malloc((size_t)(end - ptx) + head + 32), *w = o;
    if (!o) return NULL;
    memcpy(w, ptx, (size_t)(after - ptx)), w += after - ptx;
    memcpy(w, ".extern ", 8), w += 8;
    memcpy(w, q, head), w += head;
    memcpy(w, "[];\n", 4), w += 4;
    memcpy(w, after, (size_t)(decl - after)), w += decl - after;
    memcpy(w, decl_end, (size_t)(end - decl_end)), w += end - decl_end;
    *w = 0;
    /* NVIDIA's OpenCL compiler adds environment registers that its runtime sets: %envreg0-2 to the
     * group ids (the offset of a grid it splits), %envreg3-5 to the global ids (the global offset).
     * A driver launch is one grid without an offset, where both are 0; any other register is refused. */
    char *r = o;
    for (char *p = o; *p;) {
        if (!strncmp(p, "%envreg", 7)) {
            const char *d = p + 7;
            if (!(d[0] >= '0' && d[0] <= '5') || (d[1] >= '0' && d[1] <= '9')) {
                free(o);
                return NULL;
            }
            *r++ = '0', p += 8;
        } else *r++ = *p++;
    }
    *r = 0;
    return o;
}

static struct cu_module_entry *module_for(clrun_kernel *k, struct cu_state *s)
{
    clrun_ctx *ctx = k->prog->ctx;
    for (size_t i = 0; i < s->nmods; i++)
        if (s->mods[i].program == k->prog->program && !strcmp(s->mods[i].name, k->name)) return &s->mods[i];
    const double t0 = now_ms();
    size_t len = 0;
    unsigned char *bin = clrun__program_binary(ctx, k->prog->program, &len);
    char *ptx = bin ? clrun__ptx_dynamic_smem((const char *)bin, len) : NULL;
    free(bin);
    if (!ptx) {
        clrun__fail(ctx, CLRUN_UNSUPPORTED, "cuda launch of %s: its program's binary is no PTX text with a __local clrun_dyn_smem",
                    k->name);
        return NULL;
    }
    char log[2048] = "";
    int opt[2] = {5 /* CU_JIT_ERROR_LOG_BUFFER */, 6 /* CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES */};
    void *val[2] = {log, (void *)(uintptr_t)sizeof log};
    cu_module m = NULL;
    cu_function f = NULL;
    cu.api.set_current(s->cc);
    cu_result r = cu.module_load(&m, ptx, 2, opt, val);
    free(ptx);
    if (r) {
        clrun__fail(ctx, CLRUN_BUILD_FAILED, "cuda launch of %s: cuModuleLoadDataEx failed (%s)%s%s", k->name, cu_err(r), *log ? ": " : "",
                    log);
        return NULL;
    }
    if ((r = cu.get_function(&f, m, k->name))) {
        cu.module_unload(m);
        clrun__fail(ctx, CLRUN_BUILD_FAILED, "cuda launch of %s: cuModuleGetFunction failed (%s)", k->name, cu_err(r));
        return NULL;
    }
    struct cu_module_entry *grown = realloc(s->mods, (s->nmods + 1) * sizeof *grown);
    if (!grown) {
        cu.module_unload(m);
        clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "out of host memory");
        return NULL;
    }
    s->mods = grown;
    struct cu_module_entry *e = &s->mods[s->nmods++];
    *e = (struct cu_module_entry){k->prog->program, m, f, "", 0};
    snprintf(e->name, sizeof e->name, "%s", k->name);
    if (clrun__setting_on(CLRUN__SET_VERBOSE))
        fprintf(stderr, "clrun: %s loaded into the CUDA driver in %.1f ms\n", k->name, now_ms() - t0);
    return e;
}

clrun_status clrun__launch_cuda(clrun_kernel *k, clrun__grid g, size_t dyn, const clrun__arg *args, size_t n)
{
    clrun_ctx *ctx = k->prog->ctx;
    CLRUN__SERIAL(ctx);
    struct cu_state *s = ready(ctx);
    if (!s || !launch_ready(ctx, s)) return clrun__fail(ctx, CLRUN_UNSUPPORTED, "cuda launch of %s: no CUDA driver here", k->name);
    if (n > 64) return clrun__fail(ctx, CLRUN_INVALID_ARG, "cuda launch of %s: more than 64 arguments", k->name);
    struct cu_module_entry *e = module_for(k, s);
    if (!e) return CLRUN_BUILD_FAILED;
    union {
        uint64_t u64;
        uint32_t u32;
        int32_t i32;
        float f32;
        double f64;
    } vals[64];
    void *params[64];
    cl_mem mems[64];
    cl_uint nm = 0;
    for (size_t i = 0; i < n; i++) {
        const clrun__arg *a = &args[i];
        size_t size = 0;
        switch (a->kind) {
        case CLRUN__A_BUF:
            if (a->v.buf && !a->v.buf->cu_share)
                return clrun__fail(ctx, CLRUN_UNSUPPORTED, "cuda launch of %s: argument %zu is not a buffer shared with CUDA", k->name, i);
            vals[i].u64 = a->v.buf ? a->v.buf->cu_addr : 0, size = 8;
            if (a->v.buf) {
                cl_mem root = a->v.buf->cu_share->root;
                cl_uint j = 0;
                while (j < nm && mems[j] != root) j++;
                if (j == nm) mems[nm++] = root;
            }
            break;
        case CLRUN__A_I32: vals[i].i32 = a->v.i32, size = 4; break;
        case CLRUN__A_U32: vals[i].u32 = a->v.u32, size = 4; break;
        case CLRUN__A_U64: vals[i].u64 = a->v.u64, size = 8; break;
        case CLRUN__A_F32: vals[i].f32 = a->v.f32, size = 4; break;
        case CLRUN__A_F64: vals[i].f64 = a->v.f64, size = 8; break;
        default:
            return clrun__fail(ctx, CLRUN_INVALID_ARG, "cuda launch of %s: argument %zu is of a kind a CUDA launch cannot take", k->name,
                               i);
        }
        size_t off = 0, psize = 0;
        if (cu.param_info && (cu.param_info(e->function, i, &off, &psize) || psize != size))
            return clrun__fail(ctx, CLRUN_ARG_MISMATCH, "cuda launch of %s: argument %zu is %zu bytes; the PTX parameter is %zu", k->name,
                               i, size, psize);
        params[i] = &vals[i];
    }
    size_t off = 0, psize = 0;
    if (cu.param_info && !cu.param_info(e->function, n, &off, &psize))
        return clrun__fail(ctx, CLRUN_ARG_MISMATCH, "cuda launch of %s: the PTX takes more than the %zu arguments given", k->name, n);
    cu.api.set_current(s->cc);
    cu_result r = 0;
    if ((int)dyn > e->max_dyn) {
        if ((r = cu.func_attr(e->function, 8 /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */, (int)dyn)))
            return clrun__fail(ctx, CLRUN_UNSUPPORTED, "cuda launch of %s: %zu bytes of dynamic shared memory refused (%s)", k->name, dyn,
                               cu_err(r));
        e->max_dyn = (int)dyn;
    }
    unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    for (unsigned d = 0; d < g.dims; d++) {
        if (!g.local[d] || g.global[d] % g.local[d])
            return clrun__fail(ctx, CLRUN_INVALID_ARG, "cuda launch of %s: the global size is no multiple of the local size", k->name);
        grid[d] = (unsigned)(g.global[d] / g.local[d]), block[d] = (unsigned)g.local[d];
    }
    cl_command_queue q = clrun_ctx_cl_queue(ctx);
    static const cu_extsem_params none = {{0}};
    cl_int err;
    if ((err = s->release(q, nm, mems, 0, NULL, NULL)) != CL_SUCCESS)
        return clrun__fail_cl(ctx, err, "clEnqueueReleaseExternalMemObjectsKHR", "handing %s's buffers to CUDA", k->name);
    if (s->sems) {
        if ((err = s->cl_signal(q, 1, &s->cl_to, NULL, 0, NULL, NULL)) != CL_SUCCESS)
            return clrun__fail_cl(ctx, err, "clEnqueueSignalSemaphoresKHR", "ordering %s after the queue", k->name);
        r = cu.sem_wait(&s->cu_to, &none, 1, s->stream);
    } else if ((err = clFinish(q)) != CL_SUCCESS) {
        return clrun__fail_cl(ctx, err, "clFinish", "ordering %s after the queue", k->name);
    }
    if (!r) r = cu.launch(e->function, grid[0], grid[1], grid[2], block[0], block[1], block[2], (unsigned)dyn, s->stream, params, NULL);
    if (!r) r = s->sems ? cu.sem_signal(&s->cu_from, &none, 1, s->stream) : cu.stream_sync(s->stream);
    if (s->sems && (err = s->cl_wait(q, 1, &s->cl_from, NULL, 0, NULL, NULL)) != CL_SUCCESS)
        return clrun__fail_cl(ctx, err, "clEnqueueWaitSemaphoresKHR", "ordering the queue after %s", k->name);
    if ((err = s->acquire(q, nm, mems, 0, NULL, NULL)) != CL_SUCCESS)
        return clrun__fail_cl(ctx, err, "clEnqueueAcquireExternalMemObjectsKHR", "taking %s's buffers back from CUDA", k->name);
    if (r) return clrun__fail(ctx, CLRUN_CL_ERROR, "cuda launch of %s failed: %s", k->name, cu_err(r));
    return CLRUN_OK;
}

clrun_status clrun_buf_copy_from_cuda(clrun_buf *dst, size_t offset, uint64_t src, size_t bytes)
{
    if (!dst) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_buf_copy_from_cuda: dst is NULL");
    clrun_ctx *ctx = dst->ctx;
    CLRUN__SERIAL(ctx);
    if (offset > dst->bytes || bytes > dst->bytes - offset)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_buf_copy_from_cuda: range [%zu, %zu + %zu) is outside the buffer of %zu bytes",
                           offset, offset, bytes, dst->bytes);
    if (!src) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_buf_copy_from_cuda: src is 0");
    if (!bytes) return CLRUN_OK;
    if (!dst->cu_addr) { /* memory OpenCL's alone: through the host, in pieces */
        struct cu_state *d = driver(ctx);
        if (!d) {
            const struct cu_state *st = clrun__op_state(ctx, &cu_key, sizeof *st, state_release);
            return clrun__fail(ctx, CLRUN_UNSUPPORTED, "clrun_buf_copy_from_cuda: no CUDA driver for this buffer's device: %s",
                               ctx->info.type != CLRUN_DEVICE_GPU || !strstr(ctx->info.platform_vendor, "NVIDIA")
                                   ? "CUDA memory is read on NVIDIA GPUs only"
                               : st ? st->why
                                    : "out of host memory");
        }
        const size_t piece = bytes < ((size_t)8 << 20) ? bytes : (size_t)8 << 20;
        unsigned char *h = malloc(piece);
        if (!h) return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "clrun_buf_copy_from_cuda: %zu bytes of staging memory", piece);
        clrun_status st = CLRUN_OK;
        cu.api.set_current(d->cc);
        for (size_t done = 0; done < bytes && st == CLRUN_OK; done += piece) {
            const size_t n = bytes - done < piece ? bytes - done : piece;
            const cu_result r = cu.memcpy_dtoh(h, src + done, n);
            if (r)
                st = clrun__fail(ctx, CLRUN_INVALID_ARG,
                                 "clrun_buf_copy_from_cuda: reading CUDA memory at 0x%llx failed (%s): is it device memory valid in the "
                                 "primary context?",
                                 (unsigned long long)(src + done), cu_err(r));
            else st = clrun_upload(dst, offset + done, h, n);
        }
        free(h);
        return st;
    }
    struct cu_state *s = ready(ctx);
    if (!s || !launch_ready(ctx, s)) return clrun__fail(ctx, CLRUN_UNSUPPORTED, "clrun_buf_copy_from_cuda: no CUDA driver here");
    cl_command_queue q = clrun_ctx_cl_queue(ctx);
    cl_int err = clFinish(q);
    if (err != CL_SUCCESS) return clrun__fail_cl(ctx, err, "clFinish", "clrun_buf_copy_from_cuda");
    cu.api.set_current(s->cc);
    /* on the legacy default stream: after what a DLPack producer ordered for it (stream=1) */
    cu_result r = cu.memcpy_async(dst->cu_addr + offset, src, bytes, NULL);
    if (!r) r = cu.stream_sync(NULL);
    if (r)
        return clrun__fail(ctx, CLRUN_INVALID_ARG,
                           "clrun_buf_copy_from_cuda: the copy failed (%s): is the source device memory of CUDA device %d, valid in its "
                           "primary context?",
                           cu_err(r), dst->cu_dev);
    return CLRUN_OK;
}

clrun_status clrun_cuda_synchronize(clrun_ctx *ctx)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_cuda_synchronize: ctx is NULL");
    CLRUN__SERIAL(ctx);
    struct cu_state *s = driver(ctx);
    if (!s)
        return clrun__fail(ctx, CLRUN_UNSUPPORTED, "clrun_cuda_synchronize: no CUDA driver for %s: %s", ctx->info.name,
                           ctx->info.type != CLRUN_DEVICE_GPU || !strstr(ctx->info.platform_vendor, "NVIDIA")
                               ? "not an NVIDIA GPU"
                               : ((struct cu_state *)clrun__op_state(ctx, &cu_key, sizeof *s, state_release))->why);
    cu.api.set_current(s->cc);
    const cu_result r = cu.stream_sync(NULL);
    if (r) return clrun__fail(ctx, CLRUN_CL_ERROR, "clrun_cuda_synchronize: cuStreamSynchronize failed (%s)", cu_err(r));
    return CLRUN_OK;
}
