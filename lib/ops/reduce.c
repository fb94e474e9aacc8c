/* reduce.c — reductions (cl/reduce.cl): one kernel pass writes a partial result per work-group (GPU
 * shape) or per chunk (CPU shape); the host combines the partials. */
#include "../internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GPU_LOCAL 256

struct plan {
    int cpu;          /* chunked CPU shape */
    size_t groups;    /* partial results */
    size_t local;     /* work-group size */
    size_t chunk;     /* elements per work-item (CPU shape) */
    unsigned vw;
};

static void make_plan(const clrun_ctx *ctx, size_t n, struct plan *p)
{
    const clrun_device_info *in = &ctx->info;
    const char *shape = getenv("CLRUN_REDUCE_SHAPE"); /* "cpu" or "gpu": force a shape (tests) */
    p->cpu = shape ? strcmp(shape, "cpu") == 0 : in->type == CLRUN_DEVICE_CPU;
    unsigned cu = in->compute_units ? in->compute_units : 1;
    if (p->cpu) {
        p->vw = 8; /* one AVX2 register; 16 spills into calls on hosts without AVX-512 */
        p->local = 1;
        size_t want = cu, per = (n + want - 1) / want; /* one chunk per core measured best on PoCL */
        if (per < 4096) per = 4096;
        p->chunk = (per + p->vw - 1) / p->vw * p->vw;
        p->groups = (n + p->chunk - 1) / p->chunk; /* every work-item has work: PoCL hands out
                                                      work-groups in blocks, so empty ones unbalance */
    } else {
        p->vw = 4;
        p->local = GPU_LOCAL;
        size_t full = (n / p->vw + p->local - 1) / p->local;
        const char *g = getenv("CLRUN_REDUCE_GROUPS"); /* work-groups per compute unit (tuning) */
        size_t per_cu = g && atoi(g) > 0 ? (size_t)atoi(g) : 8;
        p->groups = full < (size_t)cu * per_cu ? full : (size_t)cu * per_cu;
        if (p->groups < 1) p->groups = 1;
        p->chunk = 0;
    }
}

static clrun_status check_input(clrun_ctx *ctx, const char *what, clrun_dtype t, clrun_buf *x, size_t off, size_t n)
{
    if (t != CLRUN_F32 && t != CLRUN_F16)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: element type %s is not supported (f32 or f16)", what, clrun_dtype_name(t));
    if (!x) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: buffer is NULL", what);
    size_t cap = x->bytes / clrun_dtype_size(t);
    if (off > cap || n > cap - off)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: elements [%zu, %zu + %zu) are outside the buffer's %zu elements", what, off, off, n, cap);
    return CLRUN_OK;
}

/* Launch kernel `name` of reduce.cl over (x, y) and download the partials into host (bytes each). */
static clrun_status run(clrun_ctx *ctx, const char *name, clrun_dtype t, clrun_buf *x, size_t xo, clrun_buf *y, size_t yo,
                        size_t n, int extreme, struct plan *p, void **host)
{
    char opts[160];
    clrun_status st;
    clrun_kernel *k = NULL;
    clrun_buf *scratch = NULL;
    make_plan(ctx, n, p);
    int aligned = xo % p->vw == 0 && yo % p->vw == 0;
    /* -w: PoCL warns about 16-wide vectors on AVX2 hosts (an ABI note, not a problem) */
    snprintf(opts, sizeof opts, "-w -DCLRUN_VW=%u -DCLRUN_CHUNKED=%d -DCLRUN_ALIGNED=%d -DCLRUN_HALF=%d", p->vw, p->cpu, aligned,
             t == CLRUN_F16);
    size_t per = extreme ? sizeof(float) + sizeof(cl_ulong) : 2 * sizeof(float);
    size_t bytes = p->groups * per;
    if ((st = clrun__lib_kernel(ctx, "reduce", opts, name, &k)) || (st = clrun__scratch(ctx, bytes, &scratch))) return st;
    cl_mem m = scratch->mem;
    cl_int err = CL_SUCCESS;
    cl_buffer_region r1 = {0, p->groups * (extreme ? sizeof(float) : 2 * sizeof(float))};
    size_t off2 = (r1.size + ctx->info.mem_base_align - 1) / ctx->info.mem_base_align * ctx->info.mem_base_align;
    if (extreme && off2 + p->groups * sizeof(cl_ulong) > scratch->bytes) {
        if ((st = clrun__scratch(ctx, off2 + p->groups * sizeof(cl_ulong), &scratch))) return st;
        m = scratch->mem;
    }
    clrun_buf vals = {ctx, m, r1.size}, idxs = {ctx, NULL, 0};
    if (extreme) {
        cl_buffer_region r2 = {off2, p->groups * sizeof(cl_ulong)};
        idxs.mem = clCreateSubBuffer(m, 0, CL_BUFFER_CREATE_TYPE_REGION, &r2, &err);
        idxs.bytes = r2.size;
        if (!idxs.mem) return clrun__fail_cl(ctx, err, "clCreateSubBuffer", "%s: partial results", name);
    }
    cl_ulong xoff = xo, yoff = yo, nn = n, chunk = p->chunk;
    if ((st = clrun_arg_buf(k, 0, x)) || (st = clrun_arg_u64(k, 1, xoff)) || (st = clrun_arg_buf(k, 2, y)) ||
        (st = clrun_arg_u64(k, 3, yoff)) || (st = clrun_arg_u64(k, 4, nn)) || (st = clrun_arg_u64(k, 5, chunk)))
        goto done;
    if (extreme) {
        if ((st = clrun_arg_buf(k, 6, &vals)) || (st = clrun_arg_buf(k, 7, &idxs)) ||
            (st = clrun_arg_local(k, 8, p->local * sizeof(float))) || (st = clrun_arg_local(k, 9, p->local * sizeof(cl_ulong))))
            goto done;
    } else if ((st = clrun_arg_buf(k, 6, &vals)) || (st = clrun_arg_local(k, 7, p->local * 2 * sizeof(float)))) {
        goto done;
    }
    size_t global = p->groups * p->local, local = p->local;
    if ((st = clrun_launch(k, 1, &global, &local))) goto done;
    *host = malloc(bytes + 16);
    if (!*host) {
        st = clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "%s: out of memory", name);
        goto done;
    }
    if ((st = clrun_download(&vals, 0, *host, vals.bytes))) goto done;
    if (extreme && (st = clrun_download(&idxs, 0, (char *)*host + vals.bytes, idxs.bytes))) goto done;
done:
    if (idxs.mem) clReleaseMemObject(idxs.mem);
    if (st != CLRUN_OK && *host) {
        free(*host);
        *host = NULL;
    }
    return st;
}

static clrun_status sumlike(clrun_ctx *ctx, const char *what, const char *kname, clrun_dtype t, clrun_buf *x, size_t xo,
                            clrun_buf *y, size_t yo, size_t n, double *result)
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
    return sumlike(ctx, "clrun_sum", "clrun_sum", t, x, off, x, off, n, result);
}

clrun_status clrun_dot(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t x_off, clrun_buf *y, size_t y_off, size_t n, double *result)
{
    return sumlike(ctx, "clrun_dot", "clrun_dot", t, x, x_off, y, y_off, n, result);
}

clrun_status clrun_norm2(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t off, size_t n, double *result)
{
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
        int beats = mi == (cl_ulong)-1 ||
                    (isnan(m) ? (isnan(v) && vi < mi) : (isnan(v) || (gt ? v > m : v < m) || (v == m && vi < mi)));
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
    if (!result) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_max: result is NULL");
    return extreme(ctx, "clrun_max", 1, t, x, off, n, result, NULL);
}

clrun_status clrun_min(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t off, size_t n, float *result)
{
    if (!result) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_min: result is NULL");
    return extreme(ctx, "clrun_min", 0, t, x, off, n, result, NULL);
}

clrun_status clrun_argmax(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t off, size_t n, size_t *index)
{
    if (!index) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_argmax: index is NULL");
    return extreme(ctx, "clrun_argmax", 1, t, x, off, n, NULL, index);
}
