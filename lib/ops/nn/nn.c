/* nn.c — the layers of a vision network (nn.cl): activations, batch normalisation, pooling, linear,
 * softmax cross-entropy, dropout, SGD and AdamW. Convolution is lib/ops/conv. */
#include "opkit.h"

#include <math.h>
#include <stdio.h>

#define TYPE_NAME(t) ((unsigned)(t) < CLRUN_DTYPE_COUNT ? clrun_dtype_name(t) : "unknown")

static size_t group_size(clrun_ctx *ctx)
{
    size_t wg = clrun_ctx_device(ctx)->type == CLRUN_DEVICE_CPU ? 64 : 256, max = clrun_ctx_device(ctx)->max_work_group;
    while (wg > 1 && wg > max) wg >>= 1;
    return wg;
}

/* the kernel `name` of nn.cl for storage type t, layout nhwc and the extra options */
static clrun_status kernel(clrun_ctx *ctx, clrun_dtype t, int nhwc, const char *extra, const char *name, clrun_kernel **k)
{
    char opts[160];
    snprintf(opts, sizeof opts, "-DABT=%d -DNHWC=%d -DCLRUN_WG=%zu %s", clrun__float_code(t) < 0 ? 0 : clrun__float_code(t), nhwc,
             group_size(ctx), extra ? extra : "");
    return clrun__lib_kernel(ctx, "nn", opts, name, k);
}

static clrun_status float_type(clrun_ctx *ctx, const char *fn, clrun_dtype t)
{
    if (clrun__float_code(t) < 0)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: element type %s: float32, float16 or bfloat16", fn, TYPE_NAME(t));
    return CLRUN_OK;
}

#define ENTER(fn)                                                              \
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, fn ": ctx is NULL"); \
    CLRUN__SERIAL(ctx);                                                        \
    clrun_status st

/* ---- activations ------------------------------------------------------------------------------- */

const char *clrun_act_name(clrun_act act)
{
    switch (act) {
    case CLRUN_ACT_RELU: return "relu";
    case CLRUN_ACT_GELU: return "gelu";
    case CLRUN_ACT_GELU_TANH: return "gelu_tanh";
    }
    return NULL;
}

static clrun_status act_check(clrun_ctx *ctx, const char *fn, clrun_act act, clrun_dtype t)
{
    if (!clrun_act_name(act)) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: unknown activation %d (relu, gelu, gelu_tanh)", fn, (int)act);
    return float_type(ctx, fn, t);
}

clrun_status clrun_act_forward(clrun_ctx *ctx, clrun_act act, clrun_dtype t, size_t n, clrun_buf *x, clrun_buf *y)
{
    ENTER("clrun_act_forward");
    const size_t es = clrun_dtype_size(t);
    if ((st = act_check(ctx, "clrun_act_forward", act, t)) || (st = clrun__span(ctx, "clrun_act_forward", "x", x, 0, n, es)) ||
        (st = clrun__span(ctx, "clrun_act_forward", "y", y, 0, n, es)))
        return st;
    if (!n) return CLRUN_OK;
    char extra[16];
    snprintf(extra, sizeof extra, "-DACT=%d", (int)act);
    clrun_kernel *k;
    if ((st = kernel(ctx, t, 0, extra, "clrun_act_fwd", &k))) return st;
    return CLRUN__RUN(k, CLRUN__GRID1(n), ARG_BUF(x), ARG_BUF(y), ARG_U64(n));
}

clrun_status clrun_act_backward(clrun_ctx *ctx, clrun_act act, clrun_dtype t, size_t n, clrun_buf *x, clrun_buf *dy, clrun_buf *dx)
{
    ENTER("clrun_act_backward");
    const size_t es = clrun_dtype_size(t);
    if ((st = act_check(ctx, "clrun_act_backward", act, t)) || (st = clrun__span(ctx, "clrun_act_backward", "x", x, 0, n, es)) ||
        (st = clrun__span(ctx, "clrun_act_backward", "dy", dy, 0, n, es)) ||
        (st = clrun__span(ctx, "clrun_act_backward", "dx", dx, 0, n, es)))
        return st;
    if (dx == x && dx != dy) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_act_backward: dx is x (dx may be dy only)");
    if (!n) return CLRUN_OK;
    char extra[16];
    snprintf(extra, sizeof extra, "-DACT=%d", (int)act);
    clrun_kernel *k;
    if ((st = kernel(ctx, t, 0, extra, "clrun_act_bwd", &k))) return st;
    return CLRUN__RUN(k, CLRUN__GRID1(n), ARG_BUF(x), ARG_BUF(dy), ARG_BUF(dx), ARG_U64(n));
}

/* ---- 4-D activations ----------------------------------------------------------------------------- */

static clrun_status tensor_check(clrun_ctx *ctx, const char *fn, const clrun_tensor4 *t, size_t *count)
{
    if (!t) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: the tensor is NULL", fn);
    if (t->layout != CLRUN_NCHW && t->layout != CLRUN_NHWC)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: layout %d: CLRUN_NCHW or CLRUN_NHWC", fn, (int)t->layout);
    clrun_status st = float_type(ctx, fn, t->type);
    if (st) return st;
    if (t->n < 1 || t->c < 1 || t->h < 1 || t->w < 1)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: a %dx%dx%dx%d tensor: every size at least 1", fn, t->n, t->c, t->h, t->w);
    const long long c = (long long)t->n * t->c * t->h * t->w;
    if (c >= (1LL << 31)) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: a tensor of 2^31 elements or more (split the batch)", fn);
    *count = (size_t)c;
    return CLRUN_OK;
}

/* ---- batch normalisation ------------------------------------------------------------------------- */

static clrun_status bn_check(clrun_ctx *ctx, const char *fn, const clrun_tensor4 *t, const clrun_batchnorm *bn, size_t *count)
{
    clrun_status st = tensor_check(ctx, fn, t, count);
    if (st) return st;
    if (!bn) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: bn is NULL", fn);
    if (!(bn->eps >= 0) || !isfinite(bn->eps))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: eps %g: a finite number of 0 or more", fn, bn->eps);
    if (!(bn->momentum >= 0 && bn->momentum <= 1))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: momentum %g: from 0 to 1", fn, bn->momentum);
    const size_t c = (size_t)t->c;
    const struct {
        const char *name;
        clrun_buf *b;
    } p[] = {{"gamma", bn->gamma},
             {"beta", bn->beta},
             {"running_mean", bn->running_mean},
             {"running_var", bn->running_var},
             {"save_mean", bn->save_mean},
             {"save_invstd", bn->save_invstd}};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        if (p[i].b && (st = clrun__span(ctx, fn, p[i].name, p[i].b, 0, c, 4))) return st;
    if (bn->training && (!bn->save_mean || !bn->save_invstd))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: training needs save_mean and save_invstd (c floats each)", fn);
    if (bn->training && (long long)t->n * t->h * t->w < 2)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: training needs more than one value per channel (n·h·w is 1)", fn);
    return CLRUN_OK;
}

clrun_status clrun_batchnorm_forward(clrun_ctx *ctx, const clrun_tensor4 *t, const clrun_batchnorm *bn, clrun_buf *x, clrun_buf *y)
{
    ENTER("clrun_batchnorm_forward");
    size_t n;
    if ((st = bn_check(ctx, "clrun_batchnorm_forward", t, bn, &n))) return st;
    const size_t es = clrun_dtype_size(t->type);
    if ((st = clrun__span(ctx, "clrun_batchnorm_forward", "x", x, 0, n, es)) ||
        (st = clrun__span(ctx, "clrun_batchnorm_forward", "y", y, 0, n, es)))
        return st;
    if (!bn->training && (!bn->running_mean || !bn->running_var))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_batchnorm_forward: evaluation needs running_mean and running_var");
    const int nhwc = t->layout == CLRUN_NHWC, HW = t->h * t->w, M = t->n * HW;
    clrun_kernel *k;
    if (bn->training) {
        const size_t wg = group_size(ctx);
        if ((st = kernel(ctx, t->type, nhwc, NULL, "clrun_bn_stats", &k)) ||
            (st = CLRUN__RUN(k, ((clrun__grid){1, {(size_t)t->c * wg, 1, 1}, {wg, 1, 1}}), ARG_BUF(x), ARG_I32(t->c), ARG_I32(HW),
                             ARG_I32(M), ARG_F32(bn->eps), ARG_F32(bn->momentum), ARG_BUF(bn->save_mean), ARG_BUF(bn->save_invstd),
                             ARG_BUF(bn->running_mean), ARG_BUF(bn->running_var))))
            return st;
    }
    if ((st = kernel(ctx, t->type, nhwc, NULL, "clrun_bn_apply", &k))) return st;
    clrun_buf *mean = bn->training ? bn->save_mean : bn->running_mean, *scale = bn->training ? bn->save_invstd : bn->running_var;
    return CLRUN__RUN(k, CLRUN__GRID1(n), ARG_BUF(x), ARG_BUF(y), ARG_I32(t->c), ARG_I32(HW), ARG_U64(n), ARG_BUF(mean), ARG_BUF(scale),
                      ARG_F32(bn->eps), ARG_I32(!bn->training), ARG_BUF(bn->gamma), ARG_BUF(bn->beta));
}

clrun_status clrun_batchnorm_backward(clrun_ctx *ctx, const clrun_tensor4 *t, const clrun_batchnorm *bn, clrun_buf *x, clrun_buf *dy,
                                      clrun_buf *dx, clrun_buf *dgamma, clrun_buf *dbeta)
{
    ENTER("clrun_batchnorm_backward");
    size_t n;
    if ((st = bn_check(ctx, "clrun_batchnorm_backward", t, bn, &n))) return st;
    if (!bn->save_mean || !bn->save_invstd)
        return clrun__fail(ctx, CLRUN_INVALID_ARG,
                           "clrun_batchnorm_backward: save_mean and save_invstd (from a training forward) are NULL");
    const size_t es = clrun_dtype_size(t->type);
    if ((st = clrun__span(ctx, "clrun_batchnorm_backward", "x", x, 0, n, es)) ||
        (st = clrun__span(ctx, "clrun_batchnorm_backward", "dy", dy, 0, n, es)) ||
        (st = clrun__span(ctx, "clrun_batchnorm_backward", "dx", dx, 0, n, es)) ||
        (dgamma && (st = clrun__span(ctx, "clrun_batchnorm_backward", "dgamma", dgamma, 0, (size_t)t->c, 4))) ||
        (dbeta && (st = clrun__span(ctx, "clrun_batchnorm_backward", "dbeta", dbeta, 0, (size_t)t->c, 4))))
        return st;
    if (dx == x) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_batchnorm_backward: dx is x (dx may be dy)");
    const int nhwc = t->layout == CLRUN_NHWC, HW = t->h * t->w, M = t->n * HW;
    const size_t wg = group_size(ctx);
    clrun_buf *sums;
    clrun_kernel *k;
    if ((st = clrun__scratch(ctx, 2 * (size_t)t->c * 4, &sums)) || (st = kernel(ctx, t->type, nhwc, NULL, "clrun_bn_grad_stats", &k)) ||
        (st = CLRUN__RUN(k, ((clrun__grid){1, {(size_t)t->c * wg, 1, 1}, {wg, 1, 1}}), ARG_BUF(x), ARG_BUF(dy), ARG_I32(t->c), ARG_I32(HW),
                         ARG_I32(M), ARG_BUF(bn->save_mean), ARG_BUF(bn->save_invstd), ARG_BUF(sums))))
        return st;
    if ((dgamma || dbeta) &&
        ((st = kernel(ctx, t->type, nhwc, NULL, "clrun_bn_params", &k)) ||
         (st = CLRUN__RUN(k, CLRUN__GRID1((size_t)t->c), ARG_BUF(sums), ARG_I32(t->c), ARG_BUF(dgamma), ARG_BUF(dbeta)))))
        return st;
    if ((st = kernel(ctx, t->type, nhwc, NULL, "clrun_bn_dx", &k))) return st;
    return CLRUN__RUN(k, CLRUN__GRID1(n), ARG_BUF(x), ARG_BUF(dy), ARG_BUF(dx), ARG_I32(t->c), ARG_I32(HW), ARG_I32(M), ARG_U64(n),
                      ARG_BUF(bn->save_mean), ARG_BUF(bn->save_invstd), ARG_BUF(bn->gamma), ARG_BUF(sums));
}

/* ---- pooling ------------------------------------------------------------------------------------------ */

static clrun_status pool_check(clrun_ctx *ctx, const char *fn, const clrun_tensor4 *x, const clrun_pool_desc *p, clrun_pool_desc *e,
                               clrun_tensor4 *y, size_t *nx)
{
    clrun_status st = tensor_check(ctx, fn, x, nx);
    if (st) return st;
    if (!p) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: p is NULL", fn);
    *e = *p;
    if (!e->stride_h) e->stride_h = e->kh;
    if (!e->stride_w) e->stride_w = e->kw;
    if (e->kh < 1 || e->kw < 1 || e->stride_h < 1 || e->stride_w < 1)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: a %dx%d window with stride %d,%d: at least 1 each", fn, e->kh, e->kw, e->stride_h,
                           e->stride_w);
    if (e->pad_h < 0 || e->pad_w < 0 || 2 * e->pad_h > e->kh || 2 * e->pad_w > e->kw)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: padding %d,%d: from 0 to half the %dx%d window", fn, e->pad_h, e->pad_w, e->kh,
                           e->kw);
    const long long hp = x->h + 2LL * e->pad_h, wp = x->w + 2LL * e->pad_w;
    if (e->kh > hp || e->kw > wp)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: a %dx%d window is larger than the padded %lldx%lld input", fn, e->kh, e->kw, hp,
                           wp);
    *y = *x;
    y->h = (int)((hp - e->kh) / e->stride_h + 1), y->w = (int)((wp - e->kw) / e->stride_w + 1);
    return CLRUN_OK;
}

clrun_status clrun_pool_shape(clrun_ctx *ctx, const clrun_tensor4 *x, const clrun_pool_desc *p, clrun_tensor4 *y)
{
    if (!y) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_pool_shape: y is NULL");
    clrun_pool_desc e;
    size_t nx;
    return pool_check(ctx, "clrun_pool_shape", x, p, &e, y, &nx);
}

#define POOL_ARGS(x, y, e)                                                                                                                \
    ARG_I32((x)->n), ARG_I32((x)->c), ARG_I32((x)->h), ARG_I32((x)->w), ARG_I32((y).h), ARG_I32((y).w), ARG_I32((e).kh), ARG_I32((e).kw), \
        ARG_I32((e).stride_h), ARG_I32((e).stride_w), ARG_I32((e).pad_h), ARG_I32((e).pad_w), ARG_I32((e).count_include_pad != 0)

clrun_status clrun_pool_forward(clrun_ctx *ctx, const clrun_tensor4 *x, const clrun_pool_desc *p, clrun_buf *xb, clrun_buf *y)
{
    ENTER("clrun_pool_forward");
    clrun_pool_desc e;
    clrun_tensor4 yt;
    size_t nx;
    if ((st = pool_check(ctx, "clrun_pool_forward", x, p, &e, &yt, &nx))) return st;
    const size_t ny = (size_t)yt.n * yt.c * yt.h * yt.w, es = clrun_dtype_size(x->type);
    if ((st = clrun__span(ctx, "clrun_pool_forward", "x", xb, 0, nx, es)) ||
        (st = clrun__span(ctx, "clrun_pool_forward", "y", y, 0, ny, es)))
        return st;
    if (y == xb) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_pool_forward: y is x (not in place)");
    char extra[16];
    snprintf(extra, sizeof extra, "-DPMAX=%d", e.max != 0);
    clrun_kernel *k;
    if ((st = kernel(ctx, x->type, x->layout == CLRUN_NHWC, extra, "clrun_pool_fwd", &k))) return st;
    return CLRUN__RUN(k, CLRUN__GRID1(ny), ARG_BUF(xb), ARG_BUF(y), ARG_U64(ny), POOL_ARGS(x, yt, e));
}

clrun_status clrun_pool_backward(clrun_ctx *ctx, const clrun_tensor4 *x, const clrun_pool_desc *p, clrun_buf *xb, clrun_buf *dy,
                                 clrun_buf *dx)
{
    ENTER("clrun_pool_backward");
    clrun_pool_desc e;
    clrun_tensor4 yt;
    size_t nx;
    if ((st = pool_check(ctx, "clrun_pool_backward", x, p, &e, &yt, &nx))) return st;
    const size_t ny = (size_t)yt.n * yt.c * yt.h * yt.w, es = clrun_dtype_size(x->type);
    if ((e.max && (st = clrun__span(ctx, "clrun_pool_backward", "x", xb, 0, nx, es))) ||
        (st = clrun__span(ctx, "clrun_pool_backward", "dy", dy, 0, ny, es)) ||
        (st = clrun__span(ctx, "clrun_pool_backward", "dx", dx, 0, nx, es)))
        return st;
    if (dx == dy || (e.max && dx == xb)) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_pool_backward: dx is an input (not in place)");
    char extra[16];
    snprintf(extra, sizeof extra, "-DPMAX=%d", e.max != 0);
    clrun_kernel *k;
    if ((st = kernel(ctx, x->type, x->layout == CLRUN_NHWC, extra, "clrun_pool_bwd", &k))) return st;
    return CLRUN__RUN(k, CLRUN__GRID1(nx), ARG_BUF(e.max ? xb : dy), ARG_BUF(dy), ARG_BUF(dx), ARG_U64(nx), POOL_ARGS(x, yt, e));
}

/* ---- linear --------------------------------------------------------------------------------------------- */

static clrun_status linear_check(clrun_ctx *ctx, const char *fn, clrun_dtype t, size_t rows, size_t in, size_t out)
{
    clrun_status st = float_type(ctx, fn, t);
    if (st) return st;
    if (!rows || !in || !out)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: %zu rows, %zu in, %zu out: each at least 1", fn, rows, in, out);
    if (rows > (1u << 30) / in || rows > (1u << 30) / out || in > (1u << 30) / out)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: %zu×%zu×%zu: a matrix of 2^30 elements or more", fn, rows, in, out);
    return CLRUN_OK;
}

clrun_status clrun_linear_forward(clrun_ctx *ctx, clrun_dtype t, size_t rows, size_t in, size_t out, clrun_buf *x, clrun_buf *w,
                                  clrun_buf *b, clrun_buf *y)
{
    ENTER("clrun_linear_forward");
    const size_t es = clrun_dtype_size(t);
    if ((st = linear_check(ctx, "clrun_linear_forward", t, rows, in, out)) ||
        (st = clrun__span(ctx, "clrun_linear_forward", "x", x, 0, rows * in, es)) ||
        (st = clrun__span(ctx, "clrun_linear_forward", "w", w, 0, out * in, es)) ||
        (b && (st = clrun__span(ctx, "clrun_linear_forward", "b", b, 0, out, 4))) ||
        (st = clrun__span(ctx, "clrun_linear_forward", "y", y, 0, rows * out, 4)))
        return st;
    if (y == x || y == w || y == b) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_linear_forward: y is an input (not in place)");
    clrun_kernel *k;
    if ((st = kernel(ctx, CLRUN_F32, 0, NULL, "clrun_bias_rows", &k)) ||
        (st = CLRUN__RUN(k, CLRUN__GRID1(rows * out), ARG_BUF(y), ARG_BUF(b), ARG_U64(rows), ARG_U64(out))))
        return st;
    clrun_gemm_desc g;
    clrun_gemm_desc_init(&g, t, 1, rows, out, in, 0, 1);
    g.a = x, g.b = w, g.c = y, g.beta = 1;
    return clrun_gemm(ctx, &g);
}

/* dw = dyᵀ·x and dx = dy·w (dyt: dy in t; dx through s at dx_off in f32 when t is not f32) */
static clrun_status linear_grads(clrun_ctx *ctx, clrun_dtype t, size_t rows, size_t in, size_t out, clrun_buf *x, clrun_buf *w,
                                 clrun_buf *dyt, clrun_buf *dx, clrun_buf *dw, clrun_buf *s, size_t dx_off)
{
    clrun_gemm_desc g;
    clrun_gemm_desc_init(&g, t, 1, out, in, rows, 1, 0);
    g.a = dyt, g.b = x, g.c = dw;
    clrun_status st = clrun_gemm(ctx, &g);
    if (st || !dx) return st;
    clrun_gemm_desc_init(&g, t, 1, rows, in, out, 0, 0);
    g.a = dyt, g.b = w, g.c = s ? s : dx, g.c_off = s ? dx_off : 0;
    if ((st = clrun_gemm(ctx, &g)) || !s) return st;
    return clrun_cast(ctx, s, dx_off, CLRUN_F32, dx, 0, t, rows * in);
}

clrun_status clrun_linear_backward(clrun_ctx *ctx, clrun_dtype t, size_t rows, size_t in, size_t out, clrun_buf *x, clrun_buf *w,
                                   clrun_buf *dy, clrun_buf *dx, clrun_buf *dw, clrun_buf *db)
{
    ENTER("clrun_linear_backward");
    const size_t es = clrun_dtype_size(t);
    if ((st = linear_check(ctx, "clrun_linear_backward", t, rows, in, out)) ||
        (st = clrun__span(ctx, "clrun_linear_backward", "x", x, 0, rows * in, es)) ||
        (st = clrun__span(ctx, "clrun_linear_backward", "w", w, 0, out * in, es)) ||
        (st = clrun__span(ctx, "clrun_linear_backward", "dy", dy, 0, rows * out, 4)) ||
        (dx && (st = clrun__span(ctx, "clrun_linear_backward", "dx", dx, 0, rows * in, es))) ||
        (st = clrun__span(ctx, "clrun_linear_backward", "dw", dw, 0, out * in, 4)) ||
        (db && (st = clrun__span(ctx, "clrun_linear_backward", "db", db, 0, out, 4))))
        return st;
    if (dw == x || dw == w || dw == dy || (dx && (dx == x || dx == w || dx == dy || dx == dw)))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_linear_backward: an output is an input or the other output");
    /* a buffer of its own (clrun_gemm uses the context's scratch): dy in t, then dx in f32, when t is not f32 */
    const int cast = t != CLRUN_F32;
    clrun_buf *s = NULL, *dyt = dy;
    size_t dx_off = 0;
    if (cast) {
        const size_t dy_elems = rows * out, pad = (dy_elems * es + 255) / 256 * 256;
        dx_off = pad / 4;
        if ((st = clrun_buf_new(ctx, pad + (dx ? rows * in * 4 : 0), 0, &s))) return st;
        if ((st = clrun_cast(ctx, dy, 0, CLRUN_F32, s, 0, t, dy_elems))) return clrun_buf_free(s), st;
        dyt = s;
    }
    st = linear_grads(ctx, t, rows, in, out, x, w, dyt, dx, dw, s, dx_off);
    clrun_buf_free(s); /* released when the queued work is done with it */
    if (st || !db) return st;
    clrun_kernel *k;
    if ((st = kernel(ctx, CLRUN_F32, 0, NULL, "clrun_col_sums", &k))) return st;
    return CLRUN__RUN(k, CLRUN__GRID1(out), ARG_BUF(dy), ARG_BUF(db), ARG_U64(rows), ARG_U64(out));
}

/* ---- cross-entropy -------------------------------------------------------------------------------------- */

clrun_status clrun_cross_entropy(clrun_ctx *ctx, size_t rows, size_t classes, clrun_buf *logits, clrun_buf *labels, float grad_scale,
                                 clrun_buf *loss, clrun_buf *dlogits, clrun_buf *pred)
{
    ENTER("clrun_cross_entropy");
    if (!classes || classes > (1u << 24))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_cross_entropy: %zu classes: from 1 to 2^24", classes);
    if (rows > ((size_t)1 << 40) / classes) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_cross_entropy: %zu rows overflow", rows);
    if (!isfinite(grad_scale)) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_cross_entropy: grad_scale %g is not finite", grad_scale);
    if ((st = clrun__span(ctx, "clrun_cross_entropy", "logits", logits, 0, rows * classes, 4)) ||
        (st = clrun__span(ctx, "clrun_cross_entropy", "labels", labels, 0, rows, 4)) ||
        (loss && (st = clrun__span(ctx, "clrun_cross_entropy", "loss", loss, 0, rows, 4))) ||
        (dlogits && (st = clrun__span(ctx, "clrun_cross_entropy", "dlogits", dlogits, 0, rows * classes, 4))) ||
        (pred && (st = clrun__span(ctx, "clrun_cross_entropy", "pred", pred, 0, rows, 4))))
        return st;
    if ((loss && (loss == logits || loss == labels)) || (pred && (pred == logits || pred == labels)) || (dlogits && dlogits == labels))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_cross_entropy: an output is an input (only dlogits may be logits)");
    if (!rows) return CLRUN_OK;
    clrun_kernel *k;
    if ((st = kernel(ctx, CLRUN_F32, 0, NULL, "clrun_xent", &k))) return st;
    return CLRUN__RUN(k, CLRUN__GRID1(rows), ARG_BUF(logits), ARG_BUF(labels), ARG_U64(rows), ARG_I32((int)classes), ARG_F32(grad_scale),
                      ARG_BUF(loss), ARG_BUF(dlogits), ARG_BUF(pred));
}

/* ---- dropout --------------------------------------------------------------------------------------------- */

static clrun_status mask_scale(clrun_ctx *ctx, clrun_dtype t, size_t n, float scale, clrun_buf *x, clrun_buf *mask, clrun_buf *y)
{
    clrun_kernel *k;
    clrun_status st = kernel(ctx, t, 0, NULL, "clrun_mask_scale", &k);
    if (st || !n) return st;
    return CLRUN__RUN(k, CLRUN__GRID1(n), ARG_BUF(x), ARG_BUF(mask), ARG_BUF(y), ARG_F32(scale), ARG_U64(n));
}

static clrun_status dropout_check(clrun_ctx *ctx, const char *fn, clrun_dtype t, size_t n, float p, clrun_buf *mask, clrun_buf *a,
                                  clrun_buf *y)
{
    clrun_status st = float_type(ctx, fn, t);
    if (st) return st;
    if (!(p >= 0 && p < 1)) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: p %g: from 0 up to (not including) 1", fn, p);
    const size_t es = clrun_dtype_size(t);
    if ((st = clrun__span(ctx, fn, "mask", mask, 0, n, 1)) || (st = clrun__span(ctx, fn, "the input", a, 0, n, es)) ||
        (st = clrun__span(ctx, fn, "the output", y, 0, n, es)))
        return st;
    if (mask == a || mask == y) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: mask is the input or the output", fn);
    return CLRUN_OK;
}

clrun_status clrun_dropout(clrun_ctx *ctx, clrun_dtype t, size_t n, float p, clrun_rand_desc *r, clrun_buf *x, clrun_buf *mask,
                           clrun_buf *y)
{
    ENTER("clrun_dropout");
    if ((st = dropout_check(ctx, "clrun_dropout", t, n, p, mask, x, y))) return st;
    if (!r) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_dropout: r (the random stream) is NULL");
    clrun_rand_desc d = *r;
    d.dist = CLRUN_RAND_BERNOULLI, d.type = CLRUN_U8, d.a = 1.0 - (double)p;
    if (n && (st = clrun_rand(ctx, &d, mask, 0, n))) return st;
    r->offset = d.offset;
    return mask_scale(ctx, t, n, (float)(1.0 / (1.0 - (double)p)), x, mask, y);
}

clrun_status clrun_dropout_backward(clrun_ctx *ctx, clrun_dtype t, size_t n, float p, clrun_buf *mask, clrun_buf *dy, clrun_buf *dx)
{
    ENTER("clrun_dropout_backward");
    if ((st = dropout_check(ctx, "clrun_dropout_backward", t, n, p, mask, dy, dx))) return st;
    return mask_scale(ctx, t, n, (float)(1.0 / (1.0 - (double)p)), dy, mask, dx);
}

/* ---- optimisers ------------------------------------------------------------------------------------------ */

static clrun_status opt_bufs(clrun_ctx *ctx, const char *fn, size_t n, clrun_buf *const *b, const char *const *names, int count)
{
    clrun_status st;
    for (int i = 0; i < count; i++)
        if ((st = clrun__span(ctx, fn, names[i], b[i], 0, n, 4))) return st;
    for (int i = 0; i < count; i++)
        for (int j = i + 1; j < count; j++)
            if (b[i] == b[j]) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: %s and %s are one buffer", fn, names[i], names[j]);
    return CLRUN_OK;
}

clrun_status clrun_sgd_step(clrun_ctx *ctx, const clrun_sgd *o, size_t n, clrun_buf *param, clrun_buf *grad, clrun_buf *buf, int first)
{
    ENTER("clrun_sgd_step");
    if (!o) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_sgd_step: o is NULL");
    if (!isfinite(o->lr) || o->lr < 0 || !(o->momentum >= 0) || !isfinite(o->momentum) || !isfinite(o->dampening) ||
        !(o->weight_decay >= 0) || !isfinite(o->weight_decay))
        return clrun__fail(ctx, CLRUN_INVALID_ARG,
                           "clrun_sgd_step: lr %g, momentum %g, dampening %g, weight_decay %g: finite, not negative", o->lr, o->momentum,
                           o->dampening, o->weight_decay);
    if (o->nesterov && (o->momentum <= 0 || o->dampening != 0))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_sgd_step: Nesterov momentum needs a momentum and zero dampening");
    const int mom = o->momentum != 0;
    if (mom && !buf) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_sgd_step: momentum %g needs buf (n floats)", o->momentum);
    clrun_buf *const bufs[] = {param, grad, buf};
    const char *const names[] = {"param", "grad", "buf"};
    if ((st = opt_bufs(ctx, "clrun_sgd_step", n, bufs, names, mom ? 3 : 2))) return st;
    if (!n) return CLRUN_OK;
    clrun_kernel *k;
    if ((st = kernel(ctx, CLRUN_F32, 0, NULL, "clrun_sgd", &k))) return st;
    return CLRUN__RUN(k, CLRUN__GRID1(n), ARG_BUF(param), ARG_BUF(grad), ARG_BUF(mom ? buf : NULL), ARG_U64(n), ARG_F32(o->lr),
                      ARG_F32(o->momentum), ARG_F32(o->dampening), ARG_F32(o->weight_decay), ARG_I32(o->nesterov != 0),
                      ARG_I32(first != 0));
}

clrun_status clrun_adamw_step(clrun_ctx *ctx, const clrun_adamw *o, size_t n, clrun_buf *param, clrun_buf *grad, clrun_buf *m, clrun_buf *v,
                              int64_t step)
{
    ENTER("clrun_adamw_step");
    if (!o) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_adamw_step: o is NULL");
    if (!isfinite(o->lr) || o->lr < 0 || !(o->beta1 >= 0 && o->beta1 < 1) || !(o->beta2 >= 0 && o->beta2 < 1) || !(o->eps >= 0) ||
        !isfinite(o->eps) || !(o->weight_decay >= 0) || !isfinite(o->weight_decay))
        return clrun__fail(ctx, CLRUN_INVALID_ARG,
                           "clrun_adamw_step: lr %g, betas %g, %g, eps %g, weight_decay %g: lr, eps and weight_decay finite and not "
                           "negative, betas in [0, 1)",
                           o->lr, o->beta1, o->beta2, o->eps, o->weight_decay);
    if (step < 1) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_adamw_step: step %lld: 1 for the first", (long long)step);
    clrun_buf *const bufs[] = {param, grad, m, v};
    const char *const names[] = {"param", "grad", "m", "v"};
    if ((st = opt_bufs(ctx, "clrun_adamw_step", n, bufs, names, 4))) return st;
    if (!n) return CLRUN_OK;
    /* as PyTorch's single-tensor AdamW: the corrections in double, rounded to f32 once */
    const double bc1 = 1.0 - pow((double)o->beta1, (double)step), bc2 = 1.0 - pow((double)o->beta2, (double)step);
    const float decay = 1.0f - o->lr * o->weight_decay, step_size = (float)((double)o->lr / bc1), sqrt_bc2 = (float)sqrt(bc2);
    clrun_kernel *k;
    if ((st = kernel(ctx, CLRUN_F32, 0, NULL, "clrun_adamw", &k))) return st;
    return CLRUN__RUN(k, CLRUN__GRID1(n), ARG_BUF(param), ARG_BUF(grad), ARG_BUF(m), ARG_BUF(v), ARG_U64(n), ARG_F32(o->lr),
                      ARG_F32(o->beta1), ARG_F32(o->beta2), ARG_F32(o->eps), ARG_F32(decay), ARG_F32(step_size), ARG_F32(sqrt_bc2));
}
