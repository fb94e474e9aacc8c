/* conv.c — clrun_conv2d_*: 2-D convolution's three passes as implicit GEMMs (conv.cl). */
#include "opkit.h"

#include <limits.h>
#include <stdio.h>

/* d with PyTorch's defaults in place of zeros */
static clrun_conv2d_desc normalised(const clrun_conv2d_desc *d)
{
    clrun_conv2d_desc e = *d;
    if (!e.stride_h) e.stride_h = 1;
    if (!e.stride_w) e.stride_w = 1;
    if (!e.dilation_h) e.dilation_h = 1;
    if (!e.dilation_w) e.dilation_w = 1;
    if (!e.groups) e.groups = 1;
    return e;
}

static int fits(long long a, long long b, long long c, long long d) { return a * b * c * d < (1LL << 31); }

/* checks d (normalised) and gives the output's sizes */
static clrun_status check(clrun_ctx *ctx, const char *fn, const clrun_conv2d_desc *d, int *P, int *Q)
{
    const clrun_tensor4 *x = &d->x;
    if (x->layout != CLRUN_NCHW && x->layout != CLRUN_NHWC)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: layout %d: CLRUN_NCHW or CLRUN_NHWC", fn, (int)x->layout);
    if (clrun__float_code(x->type) < 0)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: element type %s: float32, float16 or bfloat16", fn,
                           (unsigned)x->type < CLRUN_DTYPE_COUNT ? clrun_dtype_name(x->type) : "unknown");
    const struct {
        const char *name;
        int v, min;
    } m[] = {{"x.n", x->n, 1},
             {"x.c", x->c, 1},
             {"x.h", x->h, 1},
             {"x.w", x->w, 1},
             {"k", d->k, 1},
             {"r", d->r, 1},
             {"s", d->s, 1},
             {"stride_h", d->stride_h, 1},
             {"stride_w", d->stride_w, 1},
             {"pad_h", d->pad_h, 0},
             {"pad_w", d->pad_w, 0},
             {"dilation_h", d->dilation_h, 1},
             {"dilation_w", d->dilation_w, 1},
             {"groups", d->groups, 1}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (m[i].v < m[i].min) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: %s is %d: at least %d", fn, m[i].name, m[i].v, m[i].min);
    if (x->c % d->groups || d->k % d->groups)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: %d input and %d output channels in %d groups: both must be multiples of the groups",
                           fn, x->c, d->k, d->groups);
    const long long eh = (long long)d->dilation_h * (d->r - 1) + 1, ew = (long long)d->dilation_w * (d->s - 1) + 1;
    const long long hp = x->h + 2LL * d->pad_h, wp = x->w + 2LL * d->pad_w;
    if (eh > hp || ew > wp)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: a %lldx%lld window (dilated) is larger than the padded %lldx%lld input", fn, eh, ew,
                           hp, wp);
    const long long p = (hp - eh) / d->stride_h + 1, q = (wp - ew) / d->stride_w + 1;
    if (!fits(x->n, x->c, x->h, x->w) || !fits(x->n, d->k, p, q) || !fits(d->k, x->c / d->groups, d->r, d->s) ||
        !fits(x->n, x->h + 2LL * d->pad_h, x->w + 2LL * d->pad_w, d->k > x->c ? d->k : x->c))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: a tensor of 2^31 elements or more (split the batch)", fn);
    *P = (int)p, *Q = (int)q;
    return CLRUN_OK;
}

clrun_status clrun_conv2d_shape(clrun_ctx *ctx, const clrun_conv2d_desc *d, clrun_tensor4 *y)
{
    if (!d || !y) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_conv2d_shape: %s is NULL", d ? "y" : "d");
    const clrun_conv2d_desc e = normalised(d);
    int P = 0, Q = 0;
    clrun_status st = check(ctx, "clrun_conv2d_shape", &e, &P, &Q);
    if (st) return st;
    *y = (clrun_tensor4){e.x.layout, e.x.type, e.x.n, e.k, P, Q};
    return CLRUN_OK;
}

/* the tile of a pass: TSM × TSN outputs per work-group, TSK deep, WPTM × WPTN per work-item */
struct tile {
    int tsm, tsn, tsk, wptm, wptn;
};

static struct tile pick_tile(int M)
{
    if (M <= 16) return (struct tile){16, 64, 16, 1, 4}; /* few channels (depthwise, the first layer) */
    return (struct tile){64, 64, 16, 4, 4};
}

#define ARG_DIMS(e, P, Q)                                                                                                               \
    ARG_I32((e).x.n), ARG_I32((e).x.c), ARG_I32((e).x.h), ARG_I32((e).x.w), ARG_I32((e).k), ARG_I32((e).r), ARG_I32((e).s), ARG_I32(P), \
        ARG_I32(Q), ARG_I32((e).stride_h), ARG_I32((e).stride_w), ARG_I32((e).pad_h), ARG_I32((e).pad_w), ARG_I32((e).dilation_h),      \
        ARG_I32((e).dilation_w), ARG_I32((e).groups)

static size_t group_size(clrun_ctx *ctx)
{
    size_t wg = clrun_ctx_device(ctx)->type == CLRUN_DEVICE_CPU ? 64 : 256, max = clrun_ctx_device(ctx)->max_work_group;
    while (wg > 1 && wg > max) wg >>= 1;
    return wg;
}

static void options(char *buf, size_t len, int mode, const clrun_conv2d_desc *e, struct tile t, size_t wg)
{
    snprintf(buf, len, "-DMODE=%d -DNHWC=%d -DABT=%d -DTSM=%d -DTSN=%d -DTSK=%d -DWPTM=%d -DWPTN=%d -DCLRUN_WG=%zu", mode,
             e->x.layout == CLRUN_NHWC, clrun__float_code(e->x.type), t.tsm, t.tsn, t.tsk, t.wptm, t.wptn, wg);
}

/* one pass: mode 0 forward (A = w, B = x, Y = y), 1 backward-data (w, dy, dx), 2 backward-weights
 * (dy, x, dw) */
static clrun_status pass(clrun_ctx *ctx, int mode, const clrun_conv2d_desc *e, int P, int Q, clrun_buf *A, clrun_buf *B, clrun_buf *Y,
                         clrun_buf *bias)
{
    const int G = e->groups, Cg = e->x.c / G, Kg = e->k / G, RS = e->r * e->s;
    long long M, NC, KD;
    if (mode == 0) M = Kg, NC = (long long)e->x.n * P * Q, KD = (long long)Cg * RS;
    else if (mode == 1) M = Cg, NC = (long long)e->x.n * e->x.h * e->x.w, KD = (long long)Kg * RS;
    else M = Kg, NC = (long long)Cg * RS, KD = (long long)e->x.n * P * Q;
    const struct tile t = pick_tile((int)M);
    const long long gm = (M + t.tsm - 1) / t.tsm, gn = (NC + t.tsn - 1) / t.tsn, ktiles = (KD + t.tsk - 1) / t.tsk;
    int splits = 1;
    if (mode == 2) {
        /* enough work-groups to fill the device, and no work-item walking more than 256 tiles */
        const long long want = (long long)clrun_ctx_device(ctx)->compute_units * 4, have = gm * gn * G;
        long long s = have >= want ? 1 : (want + have - 1) / have;
        if (s < (ktiles + 255) / 256) s = (ktiles + 255) / 256;
        if (s > ktiles) s = ktiles;
        /* the partial sums stay under 256 MiB unless the walk bound needs more */
        const long long cap = ((long long)256 << 20) / (4 * (long long)e->k * NC);
        if (s > cap && cap >= (ktiles + 255) / 256) s = cap;
        splits = s < 1 ? 1 : (int)s;
    }
    char opts[200];
    const size_t wg = group_size(ctx);
    options(opts, sizeof opts, mode, e, t, wg);
    clrun_kernel *k;
    clrun_status st;
    if ((st = clrun__lib_kernel(ctx, "conv", opts, "clrun_conv", &k))) return st;
    clrun_buf *part = NULL;
    const size_t out_n = (size_t)e->k * (size_t)NC;
    if (splits > 1 && (st = clrun__scratch(ctx, (size_t)splits * out_n * sizeof(float), &part))) return st;
    const size_t rm = (size_t)(t.tsm / t.wptm), rn = (size_t)(t.tsn / t.wptn);
    const clrun__grid g = {3, {(size_t)gn * rn, (size_t)gm * rm, (size_t)G * (size_t)splits}, {rn, rm, 1}};
    if ((st = CLRUN__RUN(k, g, ARG_DIMS(*e, P, Q), ARG_BUF(A), ARG_BUF(B), ARG_BUF(Y), ARG_BUF(bias), ARG_BUF(part), ARG_I32(splits))))
        return st;
    if (splits == 1) return CLRUN_OK;
    clrun_kernel *ks;
    if ((st = clrun__lib_kernel(ctx, "conv", opts, "clrun_conv_sum", &ks))) return st;
    return CLRUN__RUN(ks, CLRUN__GRID1(out_n), ARG_BUF(part), ARG_BUF(Y), ARG_U64(out_n), ARG_I32(splits));
}

/* ---- the GEMM path ------------------------------------------------------------------------------- */

/* kernel `name` of conv.cl for e's layout and type (the GEMM path's kernels take no tile) */
static clrun_status path_kernel(clrun_ctx *ctx, const clrun_conv2d_desc *e, const char *name, clrun_kernel **k)
{
    char opts[200];
    options(opts, sizeof opts, 0, e, pick_tile(64), group_size(ctx));
    return clrun__lib_kernel(ctx, "conv", opts, name, k);
}

/* images per chunk: the columns of one group stay within the budget */
static int chunk_images(clrun_ctx *ctx, const clrun_conv2d_desc *e, int P, int Q)
{
    const size_t budget = clrun_ctx_device(ctx)->type == CLRUN_DEVICE_CPU ? (size_t)32 << 20 : (size_t)256 << 20;
    const size_t per = (size_t)(e->x.c / e->groups) * e->r * e->s * P * Q * 4;
    size_t n = per ? budget / per : 1;
    if (n < 1) n = 1;
    return n > (size_t)e->x.n ? e->x.n : (int)n;
}

/* im2col's work-items for ni images: NCHW one per row of Q columns, NHWC one per tap of Cg channels */
static size_t im2col_items(const clrun_conv2d_desc *e, int P, int Q, int ni)
{
    const size_t RS = (size_t)e->r * e->s;
    return e->x.layout == CLRUN_NHWC ? (size_t)ni * P * Q * RS : (size_t)(e->x.c / e->groups) * RS * (size_t)ni * P;
}

/* a 1×1 NHWC layer of stride 1 and no padding: x is its own column matrix */
static int direct(const clrun_conv2d_desc *e)
{
    return e->x.layout == CLRUN_NHWC && e->r == 1 && e->s == 1 && e->stride_h == 1 && e->stride_w == 1 && !e->pad_h && !e->pad_w;
}

static clrun_status run_chunk(clrun_kernel *k, size_t n, const clrun_conv2d_desc *e, int P, int Q, clrun_buf *a, clrun_buf *b, int n0,
                              int ni, int g, int with_g)
{
    if (with_g) return CLRUN__RUN(k, CLRUN__GRID1(n), ARG_DIMS(*e, P, Q), ARG_BUF(a), ARG_BUF(b), ARG_I32(n0), ARG_I32(ni), ARG_I32(g));
    return CLRUN__RUN(k, CLRUN__GRID1(n), ARG_DIMS(*e, P, Q), ARG_BUF(a), ARG_BUF(b), ARG_I32(n0), ARG_I32(ni));
}

/* an NCHW 1×1 layer of stride 1 and no padding: per image, y = W·x, dx = Wᵀ·dy, dW += dy·xᵀ */
static int pointwise(const clrun_conv2d_desc *e)
{
    return e->x.layout == CLRUN_NCHW && e->r == 1 && e->s == 1 && e->stride_h == 1 && e->stride_w == 1 && !e->pad_h && !e->pad_w;
}

static clrun_status pointwise_forward(clrun_ctx *ctx, const clrun_conv2d_desc *e, clrun_buf *x, clrun_buf *w, clrun_buf *bias, clrun_buf *y)
{
    const clrun_dtype T = e->x.type;
    const int G = e->groups, Cg = e->x.c / G, Kg = e->k / G, direct_out = T == CLRUN_F32 && !bias;
    const size_t HW = (size_t)e->x.h * e->x.w, C = (size_t)e->x.c, K = (size_t)e->k;
    const int ni_max = chunk_images(ctx, e, e->x.h, e->x.w);
    clrun_buf *acc = NULL;
    clrun_kernel *kout;
    clrun_status st;
    if ((st = path_kernel(ctx, e, "clrun_conv_out_nchw", &kout)) ||
        (!direct_out && (st = clrun_buf_new(ctx, K * HW * (size_t)ni_max * 4, 0, &acc))))
        goto done;
    for (int n0 = 0; n0 < e->x.n && !st; n0 += ni_max) {
        const int ni = e->x.n - n0 < ni_max ? e->x.n - n0 : ni_max;
        for (int g = 0; g < G && !st; g++) {
            clrun_gemm_desc d;
            clrun_gemm_desc_init(&d, T, (size_t)ni, (size_t)Kg, HW, (size_t)Cg, 0, 0);
            d.a = w, d.a_off = (size_t)g * Kg * Cg, d.lda = (size_t)Cg, d.stride_a = 0;
            d.b = x, d.b_off = (size_t)n0 * C * HW + (size_t)g * Cg * HW, d.ldb = HW, d.stride_b = C * HW;
            d.c = direct_out ? y : acc, d.c_off = (direct_out ? (size_t)n0 * K * HW : 0) + (size_t)g * Kg * HW, d.ldc = HW,
            d.stride_c = K * HW;
            st = clrun_gemm(ctx, &d);
        }
        if (!st && !direct_out)
            st = CLRUN__RUN(kout, CLRUN__GRID1((size_t)ni * K * HW), ARG_DIMS(*e, e->x.h, e->x.w), ARG_BUF(acc), ARG_BUF(bias), ARG_BUF(y),
                            ARG_I32(n0), ARG_I32(ni));
    }
done:
    clrun_buf_free(acc);
    return st;
}

static clrun_status pointwise_backward_data(clrun_ctx *ctx, const clrun_conv2d_desc *e, clrun_buf *dy, clrun_buf *w, clrun_buf *dx)
{
    const clrun_dtype T = e->x.type;
    const int G = e->groups, Cg = e->x.c / G, Kg = e->k / G, direct_out = T == CLRUN_F32;
    const size_t HW = (size_t)e->x.h * e->x.w, C = (size_t)e->x.c, K = (size_t)e->k;
    const int ni_max = chunk_images(ctx, e, e->x.h, e->x.w);
    clrun_buf *acc = NULL;
    clrun_status st = direct_out ? CLRUN_OK : clrun_buf_new(ctx, C * HW * (size_t)ni_max * 4, 0, &acc);
    for (int n0 = 0; n0 < e->x.n && !st; n0 += ni_max) {
        const int ni = e->x.n - n0 < ni_max ? e->x.n - n0 : ni_max;
        for (int g = 0; g < G && !st; g++) {
            clrun_gemm_desc d;
            clrun_gemm_desc_init(&d, T, (size_t)ni, (size_t)Cg, HW, (size_t)Kg, 1, 0);
            d.a = w, d.a_off = (size_t)g * Kg * Cg, d.lda = (size_t)Cg, d.stride_a = 0;
            d.b = dy, d.b_off = (size_t)n0 * K * HW + (size_t)g * Kg * HW, d.ldb = HW, d.stride_b = K * HW;
            d.c = direct_out ? dx : acc, d.c_off = (direct_out ? (size_t)n0 * C * HW : 0) + (size_t)g * Cg * HW, d.ldc = HW,
            d.stride_c = C * HW;
            st = clrun_gemm(ctx, &d);
        }
        if (!st && !direct_out) st = clrun_cast(ctx, acc, 0, CLRUN_F32, dx, (size_t)n0 * C * HW, T, (size_t)ni * C * HW);
    }
    clrun_buf_free(acc);
    return st;
}

static clrun_status pointwise_backward_weights(clrun_ctx *ctx, const clrun_conv2d_desc *e, clrun_buf *x, clrun_buf *dy, clrun_buf *dw)
{
    const clrun_dtype T = e->x.type;
    const int G = e->groups, Cg = e->x.c / G, Kg = e->k / G;
    const size_t HW = (size_t)e->x.h * e->x.w, C = (size_t)e->x.c, K = (size_t)e->k, nw = K * (size_t)Cg;
    clrun_buf *acc = NULL;
    clrun_status st = T == CLRUN_F32 ? CLRUN_OK : clrun_buf_new(ctx, nw * 4, 0, &acc);
    clrun_buf *out = T == CLRUN_F32 ? dw : acc;
    for (int n = 0; n < e->x.n && !st; n++) /* dW_g += dy_n,g · x_n,gᵀ, image after image */
        for (int g = 0; g < G && !st; g++) {
            clrun_gemm_desc d;
            clrun_gemm_desc_init(&d, T, 1, (size_t)Kg, (size_t)Cg, HW, 0, 1);
            d.a = dy, d.a_off = (size_t)n * K * HW + (size_t)g * Kg * HW, d.lda = HW;
            d.b = x, d.b_off = (size_t)n * C * HW + (size_t)g * Cg * HW, d.ldb = HW;
            d.c = out, d.c_off = (size_t)g * Kg * Cg, d.ldc = (size_t)Cg, d.beta = n ? 1.0f : 0.0f;
            st = clrun_gemm(ctx, &d);
        }
    if (!st && T != CLRUN_F32) st = clrun_cast(ctx, acc, 0, CLRUN_F32, dw, 0, T, nw);
    clrun_buf_free(acc);
    return st;
}

static clrun_status gemm_forward(clrun_ctx *ctx, const clrun_conv2d_desc *e, int P, int Q, clrun_buf *x, clrun_buf *w, clrun_buf *bias,
                                 clrun_buf *y)
{
    if (pointwise(e)) return pointwise_forward(ctx, e, x, w, bias, y);
    const clrun_dtype T = e->x.type;
    const int G = e->groups, Cg = e->x.c / G, Kg = e->k / G, nhwc = e->x.layout == CLRUN_NHWC, dir = direct(e);
    const size_t es = clrun_dtype_size(T), PQ = (size_t)P * Q, rows = (size_t)Cg * e->r * e->s;
    const int ni_max = chunk_images(ctx, e, P, Q);
    clrun_buf *col = NULL, *acc = NULL;
    clrun_kernel *kim, *kout;
    clrun_status st;
    if ((st = path_kernel(ctx, e, "clrun_im2col", &kim)) || (st = path_kernel(ctx, e, "clrun_conv_out", &kout)) ||
        (!dir && (st = clrun_buf_new(ctx, rows * PQ * (size_t)ni_max * es, 0, &col))) ||
        (st = clrun_buf_new(ctx, (size_t)e->k * PQ * (size_t)ni_max * 4, 0, &acc)))
        goto done;
    for (int n0 = 0; n0 < e->x.n && !st; n0 += ni_max) {
        const int ni = e->x.n - n0 < ni_max ? e->x.n - n0 : ni_max;
        const size_t cols = PQ * (size_t)ni;
        for (int g = 0; g < G && !st; g++) {
            if (!dir && (st = run_chunk(kim, im2col_items(e, P, Q, ni), e, P, Q, x, col, n0, ni, g, 1))) break;
            clrun_gemm_desc d;
            if (nhwc) { /* acc[(i, p, q)][g·Kg + k] = col · W_gᵀ */
                clrun_gemm_desc_init(&d, T, 1, cols, (size_t)Kg, rows, 0, 1);
                d.a = dir ? x : col, d.a_off = dir ? (size_t)n0 * PQ * e->x.c + (size_t)g * Cg : 0, d.lda = dir ? (size_t)e->x.c : rows;
                d.b = w, d.b_off = (size_t)g * Kg * rows, d.ldb = rows;
                d.c = acc, d.c_off = (size_t)g * Kg, d.ldc = (size_t)e->k;
            } else { /* acc[g·Kg + k][(i, p, q)] = W_g · col */
                clrun_gemm_desc_init(&d, T, 1, (size_t)Kg, cols, rows, 0, 0);
                d.a = w, d.a_off = (size_t)g * Kg * rows, d.lda = rows;
                d.b = col, d.ldb = cols;
                d.c = acc, d.c_off = (size_t)g * Kg * cols, d.ldc = cols;
            }
            st = clrun_gemm(ctx, &d);
        }
        if (!st)
            st = CLRUN__RUN(kout, CLRUN__GRID1((size_t)e->k * cols), ARG_DIMS(*e, P, Q), ARG_BUF(acc), ARG_BUF(bias), ARG_BUF(y),
                            ARG_I32(n0), ARG_I32(ni));
    }
done:
    clrun_buf_free(col), clrun_buf_free(acc); /* released when the queued work is done with them */
    return st;
}

static clrun_status gemm_backward_data(clrun_ctx *ctx, const clrun_conv2d_desc *e, int P, int Q, clrun_buf *dy, clrun_buf *w, clrun_buf *dx)
{
    if (pointwise(e)) return pointwise_backward_data(ctx, e, dy, w, dx);
    const clrun_dtype T = e->x.type;
    const int G = e->groups, Cg = e->x.c / G, Kg = e->k / G, nhwc = e->x.layout == CLRUN_NHWC;
    const size_t es = clrun_dtype_size(T), PQ = (size_t)P * Q, rows = (size_t)Cg * e->r * e->s, HW = (size_t)e->x.h * e->x.w;
    const int ni_max = chunk_images(ctx, e, P, Q);
    clrun_buf *colg = NULL, *dyt = NULL;
    clrun_kernel *kc2i, *kdy;
    clrun_status st;
    if ((st = path_kernel(ctx, e, "clrun_col2im", &kc2i)) || (st = path_kernel(ctx, e, "clrun_dy_rows", &kdy)) ||
        (st = clrun_buf_new(ctx, rows * PQ * (size_t)ni_max * 4, 0, &colg)) ||
        (!nhwc && (st = clrun_buf_new(ctx, (size_t)e->k * PQ * (size_t)ni_max * es, 0, &dyt))))
        goto done;
    for (int n0 = 0; n0 < e->x.n && !st; n0 += ni_max) {
        const int ni = e->x.n - n0 < ni_max ? e->x.n - n0 : ni_max;
        const size_t cols = PQ * (size_t)ni;
        if (!nhwc && (st = run_chunk(kdy, (size_t)e->k * cols, e, P, Q, dy, dyt, n0, ni, 0, 0))) break;
        for (int g = 0; g < G && !st; g++) {
            clrun_gemm_desc d;
            if (nhwc) { /* colg[(i, p, q)][(r, s, c)] = dy_g · W_g */
                clrun_gemm_desc_init(&d, T, 1, cols, rows, (size_t)Kg, 0, 0);
                d.a = dy, d.a_off = (size_t)n0 * PQ * e->k + (size_t)g * Kg, d.lda = (size_t)e->k;
                d.b = w, d.b_off = (size_t)g * Kg * rows, d.ldb = rows;
                d.c = colg, d.ldc = rows;
            } else { /* colg[(c, r, s)][(i, p, q)] = W_gᵀ · dy_g */
                clrun_gemm_desc_init(&d, T, 1, rows, cols, (size_t)Kg, 1, 0);
                d.a = w, d.a_off = (size_t)g * Kg * rows, d.lda = rows;
                d.b = dyt, d.b_off = (size_t)g * Kg * cols, d.ldb = cols;
                d.c = colg, d.ldc = cols;
            }
            if (!(st = clrun_gemm(ctx, &d))) st = run_chunk(kc2i, (size_t)ni * Cg * HW, e, P, Q, colg, dx, n0, ni, g, 1);
        }
    }
done:
    clrun_buf_free(colg), clrun_buf_free(dyt);
    return st;
}

static clrun_status gemm_backward_weights(clrun_ctx *ctx, const clrun_conv2d_desc *e, int P, int Q, clrun_buf *x, clrun_buf *dy,
                                          clrun_buf *dw)
{
    /* per image while each product is deep enough; small images gather the batch into one product */
    if (pointwise(e) && (size_t)e->x.h * e->x.w >= 512 && clrun_ctx_device(ctx)->type == CLRUN_DEVICE_CPU)
        return pointwise_backward_weights(ctx, e, x, dy, dw);
    const clrun_dtype T = e->x.type;
    const int G = e->groups, Cg = e->x.c / G, Kg = e->k / G, nhwc = e->x.layout == CLRUN_NHWC, dir = direct(e);
    const size_t es = clrun_dtype_size(T), PQ = (size_t)P * Q, rows = (size_t)Cg * e->r * e->s, nw = (size_t)e->k * rows;
    const int ni_max = chunk_images(ctx, e, P, Q);
    clrun_buf *col = NULL, *dyt = NULL, *acc = NULL;
    clrun_kernel *kim, *kdy;
    clrun_status st;
    if ((st = path_kernel(ctx, e, "clrun_im2col", &kim)) || (st = path_kernel(ctx, e, "clrun_dy_rows", &kdy)) ||
        (!dir && (st = clrun_buf_new(ctx, rows * PQ * (size_t)ni_max * es, 0, &col))) ||
        (!nhwc && (st = clrun_buf_new(ctx, (size_t)e->k * PQ * (size_t)ni_max * es, 0, &dyt))) ||
        (T != CLRUN_F32 && (st = clrun_buf_new(ctx, nw * 4, 0, &acc))))
        goto done;
    clrun_buf *out = T == CLRUN_F32 ? dw : acc;
    for (int n0 = 0; n0 < e->x.n && !st; n0 += ni_max) {
        const int ni = e->x.n - n0 < ni_max ? e->x.n - n0 : ni_max;
        const size_t cols = PQ * (size_t)ni;
        if (!nhwc && (st = run_chunk(kdy, (size_t)e->k * cols, e, P, Q, dy, dyt, n0, ni, 0, 0))) break;
        for (int g = 0; g < G && !st; g++) {
            if (!dir && (st = run_chunk(kim, im2col_items(e, P, Q, ni), e, P, Q, x, col, n0, ni, g, 1))) break;
            clrun_gemm_desc d;
            if (nhwc) { /* dW_g += dy_gᵀ · col */
                clrun_gemm_desc_init(&d, T, 1, (size_t)Kg, rows, cols, 1, 0);
                d.a = dy, d.a_off = (size_t)n0 * PQ * e->k + (size_t)g * Kg, d.lda = (size_t)e->k;
                d.b = dir ? x : col, d.b_off = dir ? (size_t)n0 * PQ * e->x.c + (size_t)g * Cg : 0, d.ldb = dir ? (size_t)e->x.c : rows;
            } else { /* dW_g += dy_g · colᵀ */
                clrun_gemm_desc_init(&d, T, 1, (size_t)Kg, rows, cols, 0, 1);
                d.a = dyt, d.a_off = (size_t)g * Kg * cols, d.lda = cols;
                d.b = col, d.ldb = cols;
            }
            d.c = out, d.c_off = (size_t)g * Kg * rows, d.ldc = rows, d.beta = n0 ? 1.0f : 0.0f;
            st = clrun_gemm(ctx, &d);
        }
    }
    if (!st && T != CLRUN_F32) st = clrun_cast(ctx, acc, 0, CLRUN_F32, dw, 0, T, nw);
done:
    clrun_buf_free(col), clrun_buf_free(dyt), clrun_buf_free(acc);
    return st;
}

/* the path for e: the call's, else $CLRUN_CONV_ALGO, else the measured rule */
static clrun_status choose(clrun_ctx *ctx, const clrun_conv2d_desc *e, int *gemm)
{
    int algo = (int)e->algo;
    if (algo < 0 || algo > CLRUN_CONV_GEMM)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_conv2d: algo %d: CLRUN_CONV_AUTO, CLRUN_CONV_IMPLICIT or CLRUN_CONV_GEMM", algo);
    if (algo == CLRUN_CONV_AUTO) {
        int choice = -1;
        clrun_status st = clrun__setting_choice(ctx, CLRUN__SET_CONV_ALGO, &choice);
        if (st) return st;
        algo = choice > 0 ? choice : 0;
    }
    if (algo == CLRUN_CONV_AUTO) {
        const int few = e->k / e->groups < 8 || (e->x.c / e->groups) * e->r * e->s < 8; /* depthwise, the first layer */
        const int cpu = clrun_ctx_device(ctx)->type == CLRUN_DEVICE_CPU;
        /* GPUs (H100, bench conv): the GEMM path wins from 28×28 outputs down, the implicit kernels above */
        const int small = (long long)(e->x.h / e->stride_h) * (e->x.w / e->stride_w) <= 1024;
        algo = !few && (cpu || (small && e->x.type != CLRUN_F32 && clrun_gemm_tensor_cores(ctx))) ? CLRUN_CONV_GEMM : CLRUN_CONV_IMPLICIT;
    }
    *gemm = algo == CLRUN_CONV_GEMM;
    return CLRUN_OK;
}

/* the element counts of x, w, y */
static void counts(const clrun_conv2d_desc *e, int P, int Q, size_t *nx, size_t *nw, size_t *ny)
{
    *nx = (size_t)e->x.n * e->x.c * e->x.h * e->x.w;
    *nw = (size_t)e->k * (e->x.c / e->groups) * e->r * e->s;
    *ny = (size_t)e->x.n * e->k * P * Q;
}

/* the common start of a pass: ctx, d and the buffers checked */
#define START(fn, nbufs, ...)                                                  \
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, fn ": ctx is NULL"); \
    CLRUN__SERIAL(ctx);                                                        \
    if (!d) return clrun__fail(ctx, CLRUN_INVALID_ARG, fn ": d is NULL");      \
    const clrun_conv2d_desc e = normalised(d);                                 \
    int P = 0, Q = 0;                                                          \
    clrun_status st = check(ctx, fn, &e, &P, &Q);                              \
    if (st) return st;                                                         \
    size_t nx, nw, ny;                                                         \
    counts(&e, P, Q, &nx, &nw, &ny);                                           \
    const size_t es = clrun_dtype_size(e.x.type);                              \
    const struct {                                                             \
        const char *name;                                                      \
        clrun_buf *b;                                                          \
        size_t n;                                                              \
        int optional;                                                          \
    } bufs[nbufs] = {__VA_ARGS__};                                             \
    for (int i = 0; i < (nbufs); i++)                                          \
        if ((bufs[i].b || !bufs[i].optional) && (st = clrun__span(ctx, fn, bufs[i].name, bufs[i].b, 0, bufs[i].n, es))) return st

clrun_status clrun_conv2d_forward(clrun_ctx *ctx, const clrun_conv2d_desc *d, clrun_buf *x, clrun_buf *w, clrun_buf *bias, clrun_buf *y)
{
    START("clrun_conv2d_forward", 4, {"x", x, nx, 0}, {"w", w, nw, 0}, {"bias", bias, (size_t)e.k, 1}, {"y", y, ny, 0});
    if (y == x || y == w || (bias && y == bias))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_conv2d_forward: y is one of the inputs (not in place)");
    int gemm;
    if ((st = choose(ctx, &e, &gemm))) return st;
    return gemm ? gemm_forward(ctx, &e, P, Q, x, w, bias, y) : pass(ctx, 0, &e, P, Q, w, x, y, bias);
}

clrun_status clrun_conv2d_backward_data(clrun_ctx *ctx, const clrun_conv2d_desc *d, clrun_buf *dy, clrun_buf *w, clrun_buf *dx)
{
    START("clrun_conv2d_backward_data", 3, {"dy", dy, ny, 0}, {"w", w, nw, 0}, {"dx", dx, nx, 0});
    if (dx == dy || dx == w)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_conv2d_backward_data: dx is one of the inputs (not in place)");
    int gemm;
    if ((st = choose(ctx, &e, &gemm))) return st;
    return gemm ? gemm_backward_data(ctx, &e, P, Q, dy, w, dx) : pass(ctx, 1, &e, P, Q, w, dy, dx, NULL);
}

clrun_status clrun_conv2d_backward_weights(clrun_ctx *ctx, const clrun_conv2d_desc *d, clrun_buf *x, clrun_buf *dy, clrun_buf *dw,
                                           clrun_buf *db)
{
    START("clrun_conv2d_backward_weights", 4, {"x", x, nx, 0}, {"dy", dy, ny, 0}, {"dw", dw, nw, 0}, {"db", db, (size_t)e.k, 1});
    if (dw == x || dw == dy || (db && (db == x || db == dy || db == dw)))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_conv2d_backward_weights: an output is an input or the other output");
    int gemm;
    if ((st = choose(ctx, &e, &gemm)) ||
        (st = gemm ? gemm_backward_weights(ctx, &e, P, Q, x, dy, dw) : pass(ctx, 2, &e, P, Q, dy, x, dw, NULL)) || !db)
        return st;
    char opts[200];
    const size_t wg = group_size(ctx);
    options(opts, sizeof opts, 2, &e, pick_tile(e.k / e.groups), wg);
    clrun_kernel *k;
    if ((st = clrun__lib_kernel(ctx, "conv", opts, "clrun_conv_bias_grad", &k))) return st;
    const clrun__grid g = {1, {(size_t)e.k * wg, 1, 1}, {wg, 1, 1}};
    return CLRUN__RUN(k, g, ARG_DIMS(e, P, Q), ARG_BUF(dy), ARG_BUF(db));
}
