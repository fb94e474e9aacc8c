/* fft.c — clrun_fft_*: fast Fourier transforms generated and run by VkFFT (a header-only library with
 * an OpenCL backend) on the context's own device, queue and buffers.
 *
 * A plan is one VkFFT application. Plans live in the context (a plan cache keyed by the whole
 * descriptor): clrun_fft_plan_new hands out a reference to a plan made before when one matches,
 * and clrun_fft_plan_free drops the reference; up to PLANS_KEPT plans nobody holds stay for the next
 * caller, the least recently used going first. VkFFT's compiled kernels go to clrun's persistent
 * cache (clrun__blob_*), so a second process loads them instead of compiling.
 *
 * Data flow (VkFFT's model: an out-of-place plan reads inputBuffer and works in buffer):
 *  - in place (c2c only): buffer = out, both directions;
 *  - out of place, c2c and r2c: inputBuffer = in, buffer = out (in is only read);
 *  - c2r (inverseReturnToInputBuffer: buffer → inputBuffer): in is copied to scratch, buffer =
 *    scratch, inputBuffer = out, so the caller's input survives (VkFFT works in `buffer`).
 * The norm: VkFFT scales the inverse by 1/N itself ("backward"); "ortho" and "forward" run
 * clrun_fft_scale over the output after the transform. */
#include "opkit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PLANS_KEPT 16

#ifdef CLRUN_HAVE_VKFFT
/* VkFFT builds each kernel with clCreateProgramWithSource and clBuildProgram (no options). Its own
 * save/load of binaries (saveApplicationToString) over-reads its buffer on load, so clrun caches at
 * that seam instead: the two calls are routed through these wrappers, which look each generated
 * source up in clrun's persistent cache (clrun__blob_*, keyed by the source and the device) and
 * store the binary of what they built. vk_cur names the context of the plan being made. */
static _Thread_local struct {
    clrun_ctx *ctx;
    unsigned loaded, built;
    struct vk_prog {
        cl_program prog;
        char *source; /* NULL when made from a cached binary */
        size_t len;
    } progs[8];
} vk_cur;

static struct vk_prog *vk_slot(cl_program p)
{
    for (int i = 0; i < 8; i++)
        if (vk_cur.progs[i].prog == p) return &vk_cur.progs[i];
    return NULL;
}

static cl_program vk_create_source(cl_context c, cl_uint count, const char **strings, const size_t *lengths, cl_int *err)
{
    if (count != 1 || !vk_cur.ctx) return clCreateProgramWithSource(c, count, strings, lengths, err);
    const size_t len = lengths && lengths[0] ? lengths[0] : strlen(strings[0]);
    struct vk_prog *slot = vk_slot(NULL);
    size_t blen = 0;
    unsigned char *bin = slot ? clrun__blob_load(vk_cur.ctx, "vkfft", strings[0], len, &blen) : NULL;
    if (bin) {
        cl_device_id dev = clrun_ctx_cl_device(vk_cur.ctx);
        const unsigned char *b = bin;
        cl_int e;
        cl_program p = clCreateProgramWithBinary(c, 1, &dev, &blen, &b, NULL, &e);
        free(bin);
        if (e == CL_SUCCESS) {
            *slot = (struct vk_prog){p, NULL, 0};
            if (err) *err = CL_SUCCESS;
            return p;
        }
        clrun__blob_remove(vk_cur.ctx, "vkfft", strings[0], len);
    }
    cl_program p = clCreateProgramWithSource(c, count, strings, lengths, err);
    char *copy = slot && p ? malloc(len) : NULL;
    if (copy) *slot = (struct vk_prog){p, memcpy(copy, strings[0], len), len};
    return p;
}

static cl_int vk_build(cl_program p, cl_uint n, const cl_device_id *devs, const char *opts, void(CL_CALLBACK *cb)(cl_program, void *),
                       void *data)
{
    cl_int e = clBuildProgram(p, n, devs, opts, cb, data);
    struct vk_prog *slot = vk_cur.ctx ? vk_slot(p) : NULL;
    if (!slot) return e;
    if (!slot->source) {
        vk_cur.loaded += e == CL_SUCCESS;
    } else {
        vk_cur.built++;
        size_t blen = 0;
        unsigned char *bin = e == CL_SUCCESS ? clrun__program_binary(vk_cur.ctx, p, &blen) : NULL;
        if (bin) clrun__blob_store(vk_cur.ctx, "vkfft", slot->source, slot->len, bin, blen);
        free(bin);
        free(slot->source);
    }
    *slot = (struct vk_prog){0};
    return e;
}

#define VKFFT_BACKEND 3
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#pragma GCC diagnostic ignored "-Wformat-overflow"
#endif
#define clCreateProgramWithSource vk_create_source
#define clBuildProgram vk_build
#include <vkFFT.h>
#undef clCreateProgramWithSource
#undef clBuildProgram
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#endif

struct clrun_fft_plan {
    clrun_ctx *ctx;
    clrun_fft_desc d;
    unsigned refs;
    uint64_t used; /* the context's clock at the last new/exec: the least recent unheld plan goes first */
    clrun_fft_plan *next;
    int lut;       /* CLRUN_FFT_TWIDDLES: 1 table (the default), 0 computed in the kernels */
    size_t n_real; /* elements of one transform on the real side (c2c: its complex count) */
    size_t n_cplx; /* complex elements of one transform's complex side */
    clrun_fft_info info;
#ifdef CLRUN_HAVE_VKFFT
    cl_device_id dev; /* VkFFT keeps pointers to these three */
    cl_context cl_ctx;
    cl_command_queue queue;
    VkFFTApplication app;
    uint64_t buf_bytes, in_bytes;
#endif
};

typedef struct fft_state {
    clrun_fft_plan *plans;
    uint64_t clock;
} fft_state;

const char *clrun_fft_norm_name(clrun_fft_norm norm)
{
    switch (norm) {
    case CLRUN_FFT_NORM_BACKWARD: return "backward";
    case CLRUN_FFT_NORM_ORTHO: return "ortho";
    case CLRUN_FFT_NORM_FORWARD: return "forward";
    }
    return NULL;
}

int clrun_fft_available(void)
{
#ifdef CLRUN_HAVE_VKFFT
    return 1;
#else
    return 0;
#endif
}

static void plan_release(clrun_fft_plan *p)
{
#ifdef CLRUN_HAVE_VKFFT
    if (p->app.configuration.FFTdim) deleteVkFFT(&p->app);
#endif
    free(p);
}

static void state_release(clrun_ctx *ctx, void *state)
{
    (void)ctx;
    fft_state *s = state;
    for (clrun_fft_plan *p = s->plans, *next; p; p = next) next = p->next, plan_release(p);
    s->plans = NULL;
}

static int same_desc(const clrun_fft_desc *a, const clrun_fft_desc *b)
{
    if (a->kind != b->kind || a->precision != b->precision || a->ndim != b->ndim || a->batch != b->batch || a->norm != b->norm ||
        !a->inplace != !b->inplace)
        return 0;
    for (unsigned i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

/* the descriptor's checks; *n_real and *n_cplx as in the plan */
static clrun_status check_desc(clrun_ctx *ctx, const clrun_fft_desc *d, clrun_fft_desc *norm_d, size_t *n_real, size_t *n_cplx)
{
    if (d->kind != CLRUN_FFT_C2C && d->kind != CLRUN_FFT_REAL)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_fft_plan_new: unknown kind %d (CLRUN_FFT_C2C or CLRUN_FFT_REAL)", (int)d->kind);
    if (d->precision != CLRUN_F32 && d->precision != CLRUN_F64)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_fft_plan_new: precision is f32 or f64, not %s",
                           (unsigned)d->precision < CLRUN_DTYPE_COUNT ? clrun_dtype_name(d->precision) : "an unknown type");
    if (!clrun_fft_norm_name(d->norm))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_fft_plan_new: unknown norm %d (backward, ortho or forward)", (int)d->norm);
    if (d->ndim < 1 || d->ndim > CLRUN_FFT_MAX_DIMS)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_fft_plan_new: %u transformed dimensions (1 to %d)", d->ndim, CLRUN_FFT_MAX_DIMS);
    if (d->kind == CLRUN_FFT_REAL && d->inplace)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_fft_plan_new: a real transform runs out of place (its two sides differ in size)");
    *norm_d = *d;
    if (!norm_d->batch) norm_d->batch = 1;
    for (unsigned i = d->ndim; i < CLRUN_FFT_MAX_DIMS; i++) norm_d->shape[i] = 0;
    size_t nr = 1, nc = 1;
    for (unsigned i = 0; i < d->ndim; i++) {
        const size_t n = d->shape[i];
        if (!n) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_fft_plan_new: dimension %u has length 0 (an empty transform)", i);
        if (n >= ((size_t)1 << 32))
            return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_fft_plan_new: dimension %u has length %zu (at most 2^32 - 1)", i, n);
        if (d->kind == CLRUN_FFT_REAL && i == d->ndim - 1 && n < 2)
            return clrun__fail(ctx, CLRUN_INVALID_ARG,
                               "clrun_fft_plan_new: a real transform's last axis has 2 elements or more (one "
                               "element: a c2c plan of the complex input does it)");
        const size_t c = d->kind == CLRUN_FFT_REAL && i == d->ndim - 1 ? n / 2 + 1 : n;
        if (nr > SIZE_MAX / n || nc > SIZE_MAX / c)
            return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_fft_plan_new: the shape's size overflows");
        nr *= n, nc *= c;
    }
    const size_t es = d->precision == CLRUN_F64 ? 8 : 4;
    if (nc > SIZE_MAX / 2 / es / norm_d->batch || nr > SIZE_MAX / es / norm_d->batch)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_fft_plan_new: the batch's size overflows");
    if (ctx) {
        const clrun_device_info *di = clrun_ctx_device(ctx);
        const uint64_t bytes = (uint64_t)nc * 2 * es * norm_d->batch;
        if (d->precision == CLRUN_F64 && !di->fp64)
            return clrun__fail(ctx, CLRUN_UNSUPPORTED, "clrun_fft_plan_new: f64 transforms need fp64, which %s lacks", di->name);
        if (bytes > di->max_alloc)
            return clrun__fail(ctx, CLRUN_INVALID_ARG,
                               "clrun_fft_plan_new: the transform's complex side takes %llu bytes; %s's largest buffer is %llu bytes",
                               (unsigned long long)bytes, di->name, (unsigned long long)di->max_alloc);
    }
    *n_real = nr, *n_cplx = nc;
    return CLRUN_OK;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#ifdef CLRUN_HAVE_VKFFT
/* VkFFT's result code in words, for the errors that users can act on */
static const char *vkfft_words(VkFFTResult r)
{
    switch (r) {
    case VKFFT_ERROR_MALLOC_FAILED: return "out of host memory";
    case VKFFT_ERROR_UNSUPPORTED_RADIX:
    case VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH:
    case VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH_R2C: return "VkFFT cannot make a transform of this length on this device";
    case VKFFT_ERROR_FAILED_TO_ALLOCATE: return "VkFFT could not allocate its temporary buffer";
    case VKFFT_ERROR_FAILED_TO_CREATE_PROGRAM:
    case VKFFT_ERROR_FAILED_TO_COMPILE_PROGRAM:
    case VKFFT_ERROR_FAILED_TO_GET_CODE_SIZE:
    case VKFFT_ERROR_FAILED_TO_GET_CODE: return "the driver could not build VkFFT's kernels";
    case VKFFT_ERROR_FAILED_TO_LAUNCH_KERNEL: return "a VkFFT kernel failed to launch";
    default: return "VkFFT failed";
    }
}

static clrun_status vkfft_fail(clrun_ctx *ctx, VkFFTResult r, const char *what)
{
    const clrun_status st = r == VKFFT_ERROR_MALLOC_FAILED                    ? CLRUN_HOST_OUT_OF_MEMORY
                            : r == VKFFT_ERROR_FAILED_TO_ALLOCATE             ? CLRUN_DEVICE_OUT_OF_MEMORY
                            : r >= VKFFT_ERROR_UNSUPPORTED_RADIX && r <= 3005 ? CLRUN_UNSUPPORTED
                            : r == VKFFT_ERROR_FAILED_TO_COMPILE_PROGRAM      ? CLRUN_BUILD_FAILED
                                                                              : CLRUN_CL_ERROR;
    return clrun__fail(ctx, st, "%s: %s (VkFFT error %d)", what, vkfft_words(r), (int)r);
}

static clrun_status make_app(clrun_ctx *ctx, clrun_fft_plan *p)
{
    const clrun_fft_desc *d = &p->d;
    const size_t es = d->precision == CLRUN_F64 ? 8 : 4;
    p->dev = clrun_ctx_cl_device(ctx);
    p->cl_ctx = clrun_ctx_cl_context(ctx);
    VkFFTConfiguration c;
    memset(&c, 0, sizeof c);
    uint64_t real_stride = 1, cplx_stride = 1;
    unsigned ax = 0;
    for (unsigned i = 0; i < d->ndim; i++) { /* VkFFT's axis 0 is the innermost: NumPy's last */
        const size_t n = d->shape[d->ndim - 1 - i];
        if (n == 1) continue; /* the transform of one element is itself */
        c.size[ax] = n;
        real_stride *= n;
        cplx_stride *= d->kind == CLRUN_FFT_REAL && i == 0 ? n / 2 + 1 : n;
        c.bufferStride[ax] = cplx_stride;
        c.inputBufferStride[ax] = d->kind == CLRUN_FFT_REAL ? real_stride : cplx_stride;
        ax++;
    }
    if (!ax) return CLRUN_OK; /* every axis has one element: exec copies */
    c.FFTdim = ax;
    for (unsigned a = ax; a < 3; a++) c.size[a] = 1;
    c.numberBatches = d->batch;
    c.device = &p->dev;
    c.context = &p->cl_ctx;
    c.doublePrecision = d->precision == CLRUN_F64;
    c.performR2C = d->kind == CLRUN_FFT_REAL;
    c.isInputFormatted = !d->inplace;
    c.inverseReturnToInputBuffer = d->kind == CLRUN_FFT_REAL; /* c2r: buffer → inputBuffer */
    c.normalize = d->norm == CLRUN_FFT_NORM_BACKWARD;
    c.specifyOffsetsAtLaunch = 1;
    /* twiddles from a table made in double on the host (VkFFT computes them with native_sin/cos
     * otherwise, which NVIDIA's OpenCL approximates: 2-5x cuFFT's error measured) */
    c.useLUT = p->lut;
    p->buf_bytes = (uint64_t)p->n_cplx * 2 * es * d->batch;
    p->in_bytes = (uint64_t)(d->kind == CLRUN_FFT_REAL ? p->n_real : p->n_cplx * 2) * es * d->batch;
    c.bufferSize = &p->buf_bytes;
    if (c.isInputFormatted) c.inputBufferSize = &p->in_bytes;
    c.useUint64 = p->buf_bytes >= ((uint64_t)1 << 31) || p->in_bytes >= ((uint64_t)1 << 31);
    const double t0 = now_ms();
    vk_cur.ctx = ctx, vk_cur.loaded = vk_cur.built = 0;
    VkFFTResult r = initializeVkFFT(&p->app, c);
    if (r != VKFFT_SUCCESS && vk_cur.loaded) { /* a cached binary the driver refused: build from source */
        memset(&p->app, 0, sizeof p->app);
        vk_cur.ctx = NULL;
        r = initializeVkFFT(&p->app, c);
    }
    p->info.source = vk_cur.built || !vk_cur.loaded ? CLRUN_FFT_PLAN_BUILT : CLRUN_FFT_PLAN_LOADED;
    for (int i = 0; i < 8; i++) free(vk_cur.progs[i].source);
    memset(&vk_cur, 0, sizeof vk_cur);
    if (r != VKFFT_SUCCESS) {
        memset(&p->app, 0, sizeof p->app);
        return vkfft_fail(ctx, r, "clrun_fft_plan_new");
    }
    p->info.build_ms = now_ms() - t0;
    return CLRUN_OK;
}
#endif

clrun_status clrun_fft_plan_new(clrun_ctx *ctx, const clrun_fft_desc *d, clrun_fft_plan **out)
{
    if (out) *out = NULL;
    if (!ctx || !d || !out) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_fft_plan_new: NULL argument");
    CLRUN__SERIAL(ctx);
    clrun_fft_desc nd;
    size_t nr = 0, nc = 0;
    clrun_status st = check_desc(ctx, d, &nd, &nr, &nc);
    if (st) return st;
#ifndef CLRUN_HAVE_VKFFT
    (void)plan_release, (void)same_desc, (void)state_release, (void)now_ms;
    return clrun__fail(ctx, CLRUN_UNSUPPORTED,
                       "clrun_fft_plan_new: this libclrun was built without VkFFT (install libvkfft-dev and "
                       "build again; the meson setup log says whether it was found)");
#else
    fft_state *s = clrun__op_state(ctx, &clrun_fft_plan_new, sizeof *s, state_release);
    if (!s) return CLRUN_HOST_OUT_OF_MEMORY;
    int tw;
    if ((st = clrun__setting_choice(ctx, CLRUN__SET_FFT_TWIDDLES, &tw))) return st;
    const int lut = tw != 1;
    s->clock++;
    for (clrun_fft_plan *p = s->plans; p; p = p->next)
        if (same_desc(&p->d, &nd) && p->lut == lut) {
            p->refs++, p->used = s->clock;
            p->info.source = CLRUN_FFT_PLAN_REUSED, p->info.build_ms = 0;
            return *out = p, CLRUN_OK;
        }
    clrun_fft_plan *p = calloc(1, sizeof *p);
    if (!p) return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "clrun_fft_plan_new: out of host memory");
    p->ctx = ctx, p->d = nd, p->n_real = nr, p->n_cplx = nc, p->lut = lut;
    if ((st = make_app(ctx, p))) return free(p), st;
    p->info.in_count = nd.kind == CLRUN_FFT_REAL ? nr * nd.batch : nc * nd.batch;
    p->info.out_count = nc * nd.batch;
    p->refs = 1, p->used = s->clock;
    p->next = s->plans, s->plans = p;
    return *out = p, CLRUN_OK;
#endif
}

clrun_status clrun_fft_plan_info(const clrun_fft_plan *p, clrun_fft_info *info)
{
    if (!p || !info) return clrun__fail(p ? p->ctx : NULL, CLRUN_INVALID_ARG, "clrun_fft_plan_info: NULL argument");
    *info = p->info;
    return CLRUN_OK;
}

void clrun_fft_plan_free(clrun_fft_plan *p)
{
    if (!p) return;
    CLRUN__SERIAL(p->ctx);
    fft_state *s = clrun__op_state(p->ctx, &clrun_fft_plan_new, sizeof *s, state_release);
    if (!s || !p->refs) return;
    p->refs--;
    /* keep at most PLANS_KEPT plans that nobody holds: drop the least recently used beyond that */
    for (;;) {
        unsigned idle = 0;
        clrun_fft_plan **oldest = NULL;
        for (clrun_fft_plan **q = &s->plans; *q; q = &(*q)->next)
            if (!(*q)->refs && (idle++, !oldest || (*q)->used < (*oldest)->used)) oldest = q;
        if (idle <= PLANS_KEPT) break;
        clrun_fft_plan *gone = *oldest;
        *oldest = gone->next;
        plan_release(gone);
    }
}

#ifdef CLRUN_HAVE_VKFFT
/* fft.cl's kernel `name` for the plan's precision */
static clrun_status fft_kernel(clrun_ctx *ctx, const clrun_fft_desc *d, const char *name, clrun_kernel **k)
{
    const int f64 = d->precision == CLRUN_F64;
    return clrun__lib_kernel(ctx, "fft", f64 ? "-DCLRUN_T=double -DCLRUN_FP64" : "-DCLRUN_T=float", name, k);
}

static clrun_status hermitian(clrun_ctx *ctx, const clrun_fft_desc *d, clrun_buf *b, size_t rows, size_t m, int even)
{
    clrun_kernel *k;
    clrun_status st = fft_kernel(ctx, d, "clrun_fft_hermitian", &k);
    return st ? st : CLRUN__RUN(k, CLRUN__GRID1(rows), ARG_BUF(b), ARG_U64(rows), ARG_U64(m), ARG_U32(even));
}

static clrun_status scale(clrun_ctx *ctx, const clrun_fft_desc *d, clrun_buf *b, size_t off, size_t n, double s)
{
    clrun_kernel *k;
    clrun_status st = fft_kernel(ctx, d, "clrun_fft_scale", &k);
    if (st) return st;
    if (d->precision == CLRUN_F64) return CLRUN__RUN(k, CLRUN__GRID1(n), ARG_BUF(b), ARG_U64(off), ARG_U64(n), ARG_F64(s));
    return CLRUN__RUN(k, CLRUN__GRID1(n), ARG_BUF(b), ARG_U64(off), ARG_U64(n), ARG_F32(s));
}
#endif

clrun_status clrun_fft_exec(clrun_fft_plan *p, int inverse, clrun_buf *in, size_t in_off, clrun_buf *out, size_t out_off)
{
    if (!p) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_fft_exec: NULL plan");
    clrun_ctx *ctx = p->ctx;
    CLRUN__SERIAL(ctx);
    const clrun_fft_desc *d = &p->d;
    const size_t es = d->precision == CLRUN_F64 ? 8 : 4, cs = 2 * es;
    const int real = d->kind == CLRUN_FFT_REAL;
    /* the element sizes and counts of each side: real transforms have a real side (forward's input,
     * inverse's output) */
    const size_t ces = real && !inverse ? es : cs, cnt_in = real && !inverse ? p->n_real * d->batch : p->n_cplx * d->batch;
    const size_t oes = real && inverse ? es : cs, cnt_out = real && inverse ? p->n_real * d->batch : p->n_cplx * d->batch;
    clrun_status st;
    if (d->inplace) {
        if (in && (in != out || in_off != out_off))
            return clrun__fail(ctx, CLRUN_INVALID_ARG,
                               "clrun_fft_exec: an in-place plan transforms out at out_off (pass in NULL, or equal)");
        in = out, in_off = out_off;
    } else if (in == out && in && in_off * ces < out_off * oes + cnt_out * oes && out_off * oes < in_off * ces + cnt_in * ces) {
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_fft_exec: in and out overlap (make the plan with inplace set)");
    }
    if ((st = clrun__span(ctx, "clrun_fft_exec", "in", in, in_off, cnt_in, ces)) ||
        (st = clrun__span(ctx, "clrun_fft_exec", "out", out, out_off, cnt_out, oes)))
        return st;
#ifndef CLRUN_HAVE_VKFFT
    (void)inverse;
    return clrun__fail(ctx, CLRUN_UNSUPPORTED, "clrun_fft_exec: this libclrun was built without VkFFT");
#else
    fft_state *s = clrun__op_state(ctx, &clrun_fft_plan_new, sizeof *s, state_release);
    if (s) p->used = ++s->clock;
    p->queue = clrun_queue_cl(clrun_queue_current(ctx));
    cl_mem mout = clrun_buf_cl_mem(out), min = clrun_buf_cl_mem(in), mwork = NULL;
    VkFFTLaunchParams lp;
    memset(&lp, 0, sizeof lp);
    lp.commandQueue = &p->queue;
    if (d->inplace) {
        lp.buffer = &mout, lp.bufferOffset = (uint64_t)out_off * cs;
    } else if (!inverse || !real) {
        lp.inputBuffer = &min, lp.inputBufferOffset = (uint64_t)in_off * ces;
        lp.buffer = &mout, lp.bufferOffset = (uint64_t)out_off * cs;
    } else { /* VkFFT works in `buffer`: a copy of the input, so the caller's stays as it was */
        clrun_buf *work;
        const size_t bytes = cnt_in * ces;
        if ((st = clrun__scratch(ctx, bytes, &work))) return st;
        mwork = clrun_buf_cl_mem(work);
        cl_int err = clEnqueueCopyBuffer(p->queue, min, mwork, (size_t)in_off * ces, 0, bytes, 0, NULL, NULL);
        if (err) return clrun__fail_cl(ctx, err, "clEnqueueCopyBuffer", "clrun_fft_exec: copying the input");
        const size_t last = d->shape[d->ndim - 1];
        if (d->ndim == 1 && (st = hermitian(ctx, d, work, d->batch, last / 2 + 1, last % 2 == 0))) return st;
        lp.buffer = &mwork, lp.bufferOffset = 0;
        lp.inputBuffer = &mout, lp.inputBufferOffset = (uint64_t)out_off * oes;
    }
    if (!p->app.configuration.FFTdim) { /* every axis of length 1: the transform is the identity */
        if (!d->inplace && cnt_out) {
            cl_int err =
                clEnqueueCopyBuffer(p->queue, min, mout, (size_t)in_off * ces, (size_t)out_off * oes, cnt_out * oes, 0, NULL, NULL);
            if (err) return clrun__fail_cl(ctx, err, "clEnqueueCopyBuffer", "clrun_fft_exec");
        }
    } else {
        VkFFTResult r = VkFFTAppend(&p->app, inverse ? 1 : -1, &lp);
        if (r != VKFFT_SUCCESS) return vkfft_fail(ctx, r, "clrun_fft_exec");
    }
    const double n = (double)p->n_real; /* the transform's logical size (real lengths for a real transform) */
    double f = 1;
    if (d->norm == CLRUN_FFT_NORM_ORTHO) f = 1 / sqrt(n);
    else if (d->norm == CLRUN_FFT_NORM_FORWARD && !inverse) f = 1 / n;
    if (f != 1) return scale(ctx, d, out, out_off * (oes / es), cnt_out * (oes / es), f);
    return CLRUN_OK;
#endif
}
