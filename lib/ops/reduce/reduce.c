/* reduce.c — reductions (lib/ops/reduce/reduce.cl): one kernel pass writes a partial result per work-group (GPU
 * shape) or per chunk (CPU shape); the host combines the partials. */
#include "opkit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GPU_LOCAL 256

struct plan {
    int cpu;       /* chunked CPU shape */
    size_t groups; /* partial results */
    size_t local;  /* work-group size */
    size_t chunk;  /* elements per work-item (CPU shape) */
    unsigned vw;
};

static clrun_status make_plan(clrun_ctx *ctx, size_t n, struct plan *p)
{
    const clrun_device_info *in = clrun_ctx_device(ctx);
    int shape;                   /* CLRUN_REDUCE_SHAPE: gpu (0) or cpu (1) forces a shape (tests) */
    unsigned per_cu = 8, ng = 0; /* CLRUN_REDUCE_GROUPS: work-groups per compute unit (tuning) */
    clrun_status st;
    if ((st = clrun__setting_choice(ctx, CLRUN__SET_REDUCE_SHAPE, &shape)) ||
        (st = clrun__setting_uints(ctx, CLRUN__SET_REDUCE_GROUPS, &per_cu, &ng)))
        return st;
    if (ng && per_cu < 1) return clrun__setting_refuse(ctx, CLRUN__SET_REDUCE_GROUPS, "at least 1 work-group per compute unit");
    if (!ng) per_cu = 8;
    p->cpu = shape >= 0 ? shape == 1 : in->type == CLRUN_DEVICE_CPU;
    unsigned cu = in->compute_units ? in->compute_units : 1;
    if (p->cpu) {
        p->vw = 8; /* one AVX2 register; 16 spills into calls on hosts without AVX-512 */
        p->local = 1;
        size_t want = cu, per = (n + want - 1) / want; /* one chunk per core measured best on PoCL */
        if (per < 4096) per = 4096;
        if (per > (size_t)CLRUN__MAX_TRIPS * p->vw) per = (size_t)CLRUN__MAX_TRIPS * p->vw; /* more chunks than cores then */
        p->chunk = (per + p->vw - 1) / p->vw * p->vw;
        p->groups = (n + p->chunk - 1) / p->chunk; /* every work-item has work: PoCL hands out
                                                      work-groups in blocks, so empty ones unbalance */
    } else {
        p->vw = 4;
        p->local = GPU_LOCAL;
        size_t full = (n / p->vw + p->local - 1) / p->local;
        p->groups = full < (size_t)cu * per_cu ? full : (size_t)cu * per_cu;
        /* enough work-groups that no work-item strides more than CLRUN__MAX_TRIPS times */
        const size_t floor_groups = (full + CLRUN__MAX_TRIPS - 1) / CLRUN__MAX_TRIPS;
        if (p->groups < floor_groups) p->groups = floor_groups;
        if (p->groups < 1) p->groups = 1;
        p->chunk = 0;
    }
    return CLRUN_OK;
}

static clrun_status check_input(clrun_ctx *ctx, const char *what, clrun_dtype t, clrun_buf *x, size_t off, size_t n)
{
    if (t != CLRUN_F32 && t != CLRUN_F16)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: element type %s is not supported (f32 or f16)", what, clrun_dtype_name(t));
    if (!x) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: buffer is NULL", what);
    size_t cap = clrun_buf_size(x) / clrun_dtype_size(t);
    if (off > cap || n > cap - off)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: elements [%zu, %zu + %zu) are outside the buffer's %zu elements", what, off, off, n,
                           cap);
    return CLRUN_OK;
}

/* Launch kernel `name` of reduce.cl over (x, y) and download the partials into host: the values
 * (two floats per group for sums, one for extremes), then for extremes the indices. */
static clrun_status run(clrun_ctx *ctx, const char *name, clrun_dtype t, clrun_buf *x, size_t xo, clrun_buf *y, size_t yo, size_t n,
                        int extreme, struct plan *p, void **host)
{
    char opts[160];
    clrun_status st;
    clrun_kernel *k = NULL;
    clrun_buf *scratch = NULL, *idxs = NULL;
    *host = NULL;
    if ((st = make_plan(ctx, n, p))) return st;
    int aligned = xo % p->vw == 0 && yo % p->vw == 0;
    /* -w: PoCL warns about 16-wide vectors on AVX2 hosts (an ABI note, not a problem) */
    snprintf(opts, sizeof opts, "-w -DCLRUN_VW=%u -DCLRUN_CHUNKED=%d -DCLRUN_ALIGNED=%d -DCLRUN_HALF=%d", p->vw, p->cpu, aligned,
             t == CLRUN_F16);
    /* the values at the scratch's start; for extremes, the indices in a view from the next aligned
     * offset */
    const size_t align = clrun_ctx_device(ctx)->mem_base_align ? clrun_ctx_device(ctx)->mem_base_align : 1;
    const size_t vbytes = p->groups * (extreme ? sizeof(float) : 2 * sizeof(float)), ibytes = extreme ? p->groups * sizeof(cl_ulong) : 0;
    const size_t ioff = (vbytes + align - 1) / align * align;
    if ((st = clrun__lib_kernel(ctx, "reduce", opts, name, &k)) || (st = clrun__scratch(ctx, extreme ? ioff + ibytes : vbytes, &scratch)))
        return st;
    if (extreme && (st = clrun_buf_sub(scratch, ioff, ibytes, &idxs))) return st;
    const clrun__grid grid = {1, {p->groups * p->local, 1, 1}, {p->local, 1, 1}};
    if (extreme)
        st = CLRUN__RUN(k, grid, ARG_BUF(x), ARG_U64(xo), ARG_BUF(y), ARG_U64(yo), ARG_U64(n), ARG_U64(p->chunk), ARG_BUF(scratch),
                        ARG_BUF(idxs), ARG_LOCAL(p->local * sizeof(float)), ARG_LOCAL(p->local * sizeof(cl_ulong)));
    else
        st = CLRUN__RUN(k, grid, ARG_BUF(x), ARG_U64(xo), ARG_BUF(y), ARG_U64(yo), ARG_U64(n), ARG_U64(p->chunk), ARG_BUF(scratch),
                        ARG_LOCAL(p->local * 2 * sizeof(float)));
    if (st) goto done;
    if (!(*host = malloc(vbytes + ibytes + 16))) {
        st = clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "%s: out of memory", name);
        goto done;
    }
    if ((st = clrun_download(scratch, 0, *host, vbytes))) goto done;
    if (extreme && (st = clrun_download(idxs, 0, (char *)*host + vbytes, ibytes))) goto done;
done:
    clrun_buf_free(idxs);
    if (st != CLRUN_OK) {
        free(*host);
        *host = NULL;
    }
    return st;
}

static clrun_status sumlike(clrun_ctx *ctx, const char *what, const char *kname, clrun_dtype t, clrun_buf *x, size_t xo, clrun_buf *y,
                            size_t yo, size_t n, double *result)
{
    clrun_status st;
    struct plan p;
    void *host = NULL;
    if (!result) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: result is NULL", what);
    if ((st = check_input(ctx, what, t, x, xo, n)) || (st = check_input(ctx, what, t, y, yo, n))) return st;
    if (n == 0) return *result = 0.0, CLRUN_OK;
    if ((st = run(ctx, kname, t, x, xo, y, yo, n, 0, &p, &host))) return st;
    const float *part = host;
    double s = 0.0, c = 0.0; /* partials are few; a double Neumaier finishes them */
    for (size_t g = 0; g < p.groups; g++) {
        double v = part[2 * g], tt = s + v;
        c += fabs(s) >= fabs(v) ? (s - tt) + v : (v - tt) + s;
        s = tt;
        c += part[2 * g + 1];
    }
    free(host);
    *result = isfinite(s) ? s + c : s; /* an inf or NaN sum leaves a NaN compensation */
    return CLRUN_OK;
}

clrun_status clrun_sum(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t off, size_t n, double *result)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_sum: ctx is NULL");
    CLRUN__SERIAL(ctx);
    return sumlike(ctx, "clrun_sum", "clrun_sum", t, x, off, x, off, n, result);
}

clrun_status clrun_dot(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t x_off, clrun_buf *y, size_t y_off, size_t n, double *result)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_dot: ctx is NULL");
    CLRUN__SERIAL(ctx);
    return sumlike(ctx, "clrun_dot", "clrun_dot", t, x, x_off, y, y_off, n, result);
}

clrun_status clrun_norm2(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t off, size_t n, double *result)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_norm2: ctx is NULL");
    CLRUN__SERIAL(ctx);
    clrun_status st = sumlike(ctx, "clrun_norm2", "clrun_sumsq", t, x, off, x, off, n, result);
    if (st == CLRUN_OK) *result = sqrt(*result);
    return st;
}

/* max (gt = 1) or min (gt = 0) with the first index. */
static clrun_status extreme(clrun_ctx *ctx, const char *what, int gt, clrun_dtype t, clrun_buf *x, size_t off, size_t n, float *value,
                            size_t *index)
{
    clrun_status st;
    struct plan p;
    void *host = NULL;
    if ((st = check_input(ctx, what, t, x, off, n))) return st;
    if (n == 0) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s of no elements is undefined", what);
    if ((st = run(ctx, gt ? "clrun_max" : "clrun_min", t, x, off, x, off, n, 1, &p, &host))) return st;
    const float *vals = host;
    cl_ulong *idx = malloc(p.groups * sizeof *idx);
    if (!idx) {
        free(host);
        return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    memcpy(idx, (const char *)host + p.groups * sizeof(float), p.groups * sizeof *idx);
    float m = NAN;
    cl_ulong mi = (cl_ulong)-1;
    for (size_t g = 0; g < p.groups; g++) {
        float v = vals[g];
        cl_ulong vi = idx[g];
        if (vi == (cl_ulong)-1) continue;
        int beats = mi == (cl_ulong)-1 || (isnan(m) ? (isnan(v) && vi < mi) : (isnan(v) || (gt ? v > m : v < m) || (v == m && vi < mi)));
        if (beats) m = v, mi = vi;
    }
    free(idx);
    free(host);
    if (value) *value = m;
    if (index) *index = (size_t)mi;
    return CLRUN_OK;
}

clrun_status clrun_max(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t off, size_t n, float *result)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_max: ctx is NULL");
    CLRUN__SERIAL(ctx);
    if (!result) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_max: result is NULL");
    return extreme(ctx, "clrun_max", 1, t, x, off, n, result, NULL);
}

clrun_status clrun_min(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t off, size_t n, float *result)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_min: ctx is NULL");
    CLRUN__SERIAL(ctx);
    if (!result) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_min: result is NULL");
    return extreme(ctx, "clrun_min", 0, t, x, off, n, result, NULL);
}

clrun_status clrun_argmax(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t off, size_t n, size_t *index)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_argmax: ctx is NULL");
    CLRUN__SERIAL(ctx);
    if (!index) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_argmax: index is NULL");
    return extreme(ctx, "clrun_argmax", 1, t, x, off, n, NULL, index);
}
