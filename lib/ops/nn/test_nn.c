/* test_nn.c — the layers against host references in double precision: activations (every type),
 * batch normalisation (training, evaluation, backward; both layouts; also against finite
 * differences), max and average pooling (strides, padding, NaN), linear, cross-entropy (huge
 * logits, bad labels), dropout, SGD and AdamW against PyTorch's update rules; refusals. */
#include "helpers.h"

#include <math.h>

static float ld(const void *p, clrun_dtype t, size_t i)
{
    if (t == CLRUN_F16) return clrun_f16_to_f32(((const uint16_t *)p)[i]);
    if (t == CLRUN_BF16) return clrun_bf16_to_f32(((const uint16_t *)p)[i]);
    return ((const float *)p)[i];
}

static void st(void *p, clrun_dtype t, size_t i, float v)
{
    if (t == CLRUN_F16) ((uint16_t *)p)[i] = clrun_f32_to_f16(v);
    else if (t == CLRUN_BF16) ((uint16_t *)p)[i] = clrun_f32_to_bf16(v);
    else ((float *)p)[i] = v;
}

static double unit(clrun_dtype t) { return t == CLRUN_F16 ? 0x1p-11 : t == CLRUN_BF16 ? 0x1p-8 : 0x1p-24; }

static clrun_buf *up(clrun_ctx *ctx, const void *p, size_t bytes)
{
    clrun_buf *b;
    CHECK_OK(ctx, clrun_buf_new(ctx, bytes ? bytes : 1, 0, &b));
    if (p && bytes) CHECK_OK(ctx, clrun_upload(b, 0, p, bytes));
    return b;
}

static void *down(clrun_ctx *ctx, clrun_buf *b, size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    CHECK_OK(ctx, clrun_download(b, 0, p, bytes));
    return p;
}

static void *rand_t(clrun_dtype t, size_t n, float scale, uint64_t *rs)
{
    void *p = malloc(n * 4 + 4);
    for (size_t i = 0; i < n; i++) st(p, t, i, rng_float(rs) * scale);
    return p;
}

/* |got - want| within rel·|want| + abs, else fail naming what and i */
static void near(const char *what, size_t i, double got, double want, double rel, double abs_)
{
    if (!(fabs(got - want) <= rel * fabs(want) + abs_) && !(isnan(got) && isnan(want)))
        fail_msg("%s: element %zu is %.9g, want %.9g", what, i, got, want);
}

static void activations(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t rs = test_seed();
    const clrun_dtype types[] = {CLRUN_F32, CLRUN_F16, CLRUN_BF16};
    const size_t n = 4099;
    for (int ti = 0; ti < 3; ti++)
        for (int a = 0; a < 3; a++) {
            const clrun_dtype t = types[ti];
            const size_t es = clrun_dtype_size(t);
            void *x = rand_t(t, n, 6, &rs), *dy = rand_t(t, n, 1, &rs);
            st(x, t, 0, 0.0f), st(x, t, 1, NAN), st(x, t, 2, -0.0f);
            clrun_buf *bx = up(ctx, x, n * es), *bdy = up(ctx, dy, n * es), *by = up(ctx, NULL, n * es);
            CHECK_OK(ctx, clrun_act_forward(ctx, (clrun_act)a, t, n, bx, by));
            void *y = down(ctx, by, n * es);
            CHECK_OK(ctx, clrun_act_backward(ctx, (clrun_act)a, t, n, bx, bdy, bdy)); /* in place on dy */
            void *dx = down(ctx, bdy, n * es);
            char what[64];
            for (size_t i = 0; i < n; i++) {
                const double v = ld(x, t, i), g = ld(dy, t, i);
                double f, d;
                if (a == CLRUN_ACT_RELU) f = v > 0 ? v : isnan(v) ? v : 0, d = v > 0 ? g : 0;
                else if (a == CLRUN_ACT_GELU) {
                    f = 0.5 * v * (1 + erf(v / sqrt(2)));
                    d = g * (0.5 * (1 + erf(v / sqrt(2))) + v * exp(-0.5 * v * v) / sqrt(2 * M_PI));
                } else {
                    const double k = sqrt(2 / M_PI), th = tanh(k * (v + 0.044715 * v * v * v));
                    f = 0.5 * v * (1 + th);
                    d = g * (0.5 * (1 + th) + 0.5 * v * (1 - th * th) * k * (1 + 3 * 0.044715 * v * v));
                }
                snprintf(what, sizeof what, "%s %s forward", clrun_dtype_name(t), clrun_act_name((clrun_act)a));
                near(what, i, ld(y, t, i), f, unit(t) + 2e-6, 1e-6);
                snprintf(what, sizeof what, "%s %s backward", clrun_dtype_name(t), clrun_act_name((clrun_act)a));
                /* the tanh form cancels in 1 + tanh and 1 - tanh² for large |x| (as PyTorch's kernels do) */
                const double cancel = a == CLRUN_ACT_GELU_TANH ? 2.4e-7 * (1 + fabs(v) * (1 + 0.14 * v * v)) * fabs(g) : 0;
                near(what, i, ld(dx, t, i), d, unit(t) + 2e-6, 1e-6 + cancel);
            }
            clrun_buf_free(bx), clrun_buf_free(bdy), clrun_buf_free(by);
            free(x), free(dy), free(y), free(dx);
        }
}

/* element (n, c, j) of a tensor, j over h·w */
static size_t at(const clrun_tensor4 *t, int n, int c, int j)
{
    const size_t hw = (size_t)t->h * t->w;
    return t->layout == CLRUN_NHWC ? ((size_t)n * hw + j) * t->c + c : ((size_t)n * t->c + c) * hw + j;
}

/* the host's training forward: y, mean, invstd (biased), and the unbiased variance */
static void bn_host(const clrun_tensor4 *t, const void *x, const float *gamma, const float *beta, double eps, double *y, double *mean,
                    double *invstd, double *uvar)
{
    const int hw = t->h * t->w, M = t->n * hw;
    for (int c = 0; c < t->c; c++) {
        double s = 0, q = 0;
        for (int n = 0; n < t->n; n++)
            for (int j = 0; j < hw; j++) s += ld(x, t->type, at(t, n, c, j));
        const double mu = s / M;
        for (int n = 0; n < t->n; n++)
            for (int j = 0; j < hw; j++) q += (ld(x, t->type, at(t, n, c, j)) - mu) * (ld(x, t->type, at(t, n, c, j)) - mu);
        mean[c] = mu, invstd[c] = 1 / sqrt(q / M + eps), uvar[c] = q / (M - 1);
        for (int n = 0; n < t->n; n++)
            for (int j = 0; j < hw; j++) {
                const size_t e = at(t, n, c, j);
                y[e] = (ld(x, t->type, e) - mu) * invstd[c] * gamma[c] + beta[c];
            }
    }
}

static void batchnorm(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t rs = test_seed() ^ 0xb17;
    const clrun_tensor4 shapes[] = {{CLRUN_NCHW, CLRUN_F32, 3, 5, 7, 6},
                                    {CLRUN_NHWC, CLRUN_F16, 4, 3, 5, 5},
                                    {CLRUN_NCHW, CLRUN_BF16, 2, 4, 3, 3},
                                    {CLRUN_NHWC, CLRUN_F32, 64, 2, 9, 9},
                                    {CLRUN_NCHW, CLRUN_F32, 2, 1, 1, 1}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const clrun_tensor4 *t = &shapes[si];
        const size_t n = (size_t)t->n * t->c * t->h * t->w, es = clrun_dtype_size(t->type), C = (size_t)t->c;
        void *x = rand_t(t->type, n, 3, &rs), *dy = rand_t(t->type, n, 1, &rs);
        for (size_t i = 0; i < n; i++) st(x, t->type, i, ld(x, t->type, i) + 2.0f); /* a mean away from 0 */
        float gamma[8], beta[8], rm[8], rv[8];
        for (size_t c = 0; c < C; c++)
            gamma[c] = 1 + rng_float(&rs) / 2, beta[c] = rng_float(&rs), rm[c] = rng_float(&rs), rv[c] = 1 + rng_float(&rs) / 2;
        clrun_buf *bx = up(ctx, x, n * es), *bdy = up(ctx, dy, n * es), *by = up(ctx, NULL, n * es), *g = up(ctx, gamma, C * 4),
                  *b = up(ctx, beta, C * 4), *m = up(ctx, rm, C * 4), *v = up(ctx, rv, C * 4), *sm = up(ctx, NULL, C * 4),
                  *si_ = up(ctx, NULL, C * 4), *dg = up(ctx, NULL, C * 4), *db = up(ctx, NULL, C * 4);
        clrun_batchnorm bn = {1, 0.1f, 1e-5f, g, b, m, v, sm, si_};
        CHECK_OK(ctx, clrun_batchnorm_forward(ctx, t, &bn, bx, by));
        double *y = malloc(n * sizeof(double)), mean[8], invstd[8], uvar[8];
        bn_host(t, x, gamma, beta, 1e-5, y, mean, invstd, uvar);
        void *gy = down(ctx, by, n * es);
        float *grm = down(ctx, m, C * 4), *grv = down(ctx, v, C * 4), *gsm = down(ctx, sm, C * 4), *gsi = down(ctx, si_, C * 4);
        for (size_t i = 0; i < n; i++) near("batchnorm forward", i, ld(gy, t->type, i), y[i], unit(t->type) * 2, 1e-5 + unit(t->type) * 2);
        for (size_t c = 0; c < C; c++) {
            near("saved mean", c, gsm[c], mean[c], 1e-5, 1e-6);
            near("saved invstd", c, gsi[c], invstd[c], 1e-5, 0);
            near("running mean", c, grm[c], 0.9 * rm[c] + 0.1 * mean[c], 1e-5, 1e-6);
            near("running var", c, grv[c], 0.9 * rv[c] + 0.1 * uvar[c], 1e-5, 1e-6);
        }
        /* backward against the closed form, in double */
        CHECK_OK(ctx, clrun_batchnorm_backward(ctx, t, &bn, bx, bdy, by, dg, db));
        void *gdx = down(ctx, by, n * es);
        float *gdg = down(ctx, dg, C * 4), *gdb = down(ctx, db, C * 4);
        const int hw = t->h * t->w, M = t->n * hw;
        for (int c = 0; c < t->c; c++) {
            double sdy = 0, sdyx = 0, mag = 0;
            for (int nn = 0; nn < t->n; nn++)
                for (int j = 0; j < hw; j++) {
                    const size_t e = at(t, nn, c, j);
                    const double xh = (ld(x, t->type, e) - mean[c]) * invstd[c];
                    sdy += ld(dy, t->type, e), sdyx += ld(dy, t->type, e) * xh, mag += fabs(ld(dy, t->type, e)) * (1 + fabs(xh));
                }
            near("dbeta", (size_t)c, gdb[c], sdy, 0, 1e-6 * mag + 1e-6);
            near("dgamma", (size_t)c, gdg[c], sdyx, 0, 1e-6 * mag + 1e-6);
            for (int nn = 0; nn < t->n; nn++)
                for (int j = 0; j < hw; j++) {
                    const size_t e = at(t, nn, c, j);
                    const double xh = (ld(x, t->type, e) - mean[c]) * invstd[c];
                    const double want = gamma[c] * invstd[c] * (ld(dy, t->type, e) - sdy / M - xh * sdyx / M);
                    near("batchnorm dx", e, ld(gdx, t->type, e), want, unit(t->type) * 2,
                         gamma[c] * invstd[c] * (1e-5 * mag / M + 1e-6) + unit(t->type) * 1e-2);
                }
        }
        /* evaluation: the running statistics as they are now */
        bn.training = 0;
        CHECK_OK(ctx, clrun_batchnorm_forward(ctx, t, &bn, bx, by));
        void *ey = down(ctx, by, n * es);
        for (int c = 0; c < t->c; c++)
            for (int nn = 0; nn < t->n; nn++)
                for (int j = 0; j < hw; j++) {
                    const size_t e = at(t, nn, c, j);
                    const double want = (ld(x, t->type, e) - grm[c]) / sqrt((double)grv[c] + 1e-5) * gamma[c] + beta[c];
                    near("batchnorm eval", e, ld(ey, t->type, e), want, unit(t->type) * 2, 1e-5 + unit(t->type) * 2);
                }
        clrun_buf *bufs[] = {bx, bdy, by, g, b, m, v, sm, si_, dg, db};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) clrun_buf_free(bufs[i]);
        free(x), free(dy), free(y), free(gy), free(grm), free(grv), free(gsm), free(gsi), free(gdx), free(gdg), free(gdb), free(ey);
    }
}

/* batch norm's backward against central differences of L = Σ dy·y, in f32 with a wide step */
static void batchnorm_finite_differences(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t rs = test_seed() ^ 0xfd;
    const clrun_tensor4 t = {CLRUN_NCHW, CLRUN_F32, 2, 2, 3, 2};
    const size_t n = 24;
    float *x = rand_t(CLRUN_F32, n, 2, &rs), *dy = rand_t(CLRUN_F32, n, 1, &rs), gamma[2] = {1.5f, 0.7f}, beta[2] = {0.1f, -0.2f};
    clrun_buf *bx = up(ctx, x, n * 4), *by = up(ctx, NULL, n * 4), *bdy = up(ctx, dy, n * 4), *g = up(ctx, gamma, 8), *b = up(ctx, beta, 8),
              *sm = up(ctx, NULL, 8), *si_ = up(ctx, NULL, 8), *dg = up(ctx, NULL, 8);
    const clrun_batchnorm bn = {1, 0.1f, 1e-5f, g, b, NULL, NULL, sm, si_};
    CHECK_OK(ctx, clrun_batchnorm_forward(ctx, &t, &bn, bx, by));
    CHECK_OK(ctx, clrun_batchnorm_backward(ctx, &t, &bn, bx, bdy, by, dg, NULL));
    float *dx = down(ctx, by, n * 4), *gdg = down(ctx, dg, 8);
    for (size_t i = 0; i < n; i++) {
        double l[2];
        for (int s = 0; s < 2; s++) {
            const float keep = x[i];
            x[i] = keep + (s ? -1e-2f : 1e-2f);
            double y[24], mean[2], invstd[2], uvar[2];
            bn_host(&t, x, gamma, beta, 1e-5, y, mean, invstd, uvar);
            l[s] = 0;
            for (size_t k = 0; k < n; k++) l[s] += dy[k] * y[k];
            x[i] = keep;
        }
        near("dx by finite differences", i, dx[i], (l[0] - l[1]) / ((double)(x[i] + 1e-2f) - (double)(x[i] - 1e-2f)), 2e-2, 2e-3);
    }
    (void)gdg;
    clrun_buf *bufs[] = {bx, by, bdy, g, b, sm, si_, dg};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) clrun_buf_free(bufs[i]);
    free(x), free(dy), free(dx), free(gdg);
}

static void pooling(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t rs = test_seed() ^ 0x9001;
    for (int iter = 0; iter < 24; iter++) {
        clrun_pool_desc p = {.max = iter % 2, .kh = 1 + (int)(rng_next(&rs) % 4), .kw = 1 + (int)(rng_next(&rs) % 4)};
        p.stride_h = (int)(rng_next(&rs) % 4), p.stride_w = (int)(rng_next(&rs) % 4); /* 0: the window */
        p.pad_h = (int)(rng_next(&rs) % (p.kh / 2 + 1)), p.pad_w = (int)(rng_next(&rs) % (p.kw / 2 + 1));
        p.count_include_pad = iter % 4 < 2;
        const clrun_dtype t = iter % 3 == 2 ? CLRUN_F16 : CLRUN_F32;
        const clrun_tensor4 x = {iter % 5 < 2 ? CLRUN_NHWC : CLRUN_NCHW, t,
                                 1 + (int)(rng_next(&rs) % 3),           1 + (int)(rng_next(&rs) % 4),
                                 p.kh + (int)(rng_next(&rs) % 9),        p.kw + (int)(rng_next(&rs) % 9)};
        clrun_tensor4 y;
        CHECK_OK(ctx, clrun_pool_shape(ctx, &x, &p, &y));
        const int sh = p.stride_h ? p.stride_h : p.kh, sw = p.stride_w ? p.stride_w : p.kw;
        const size_t nx = (size_t)x.n * x.c * x.h * x.w, ny = (size_t)y.n * y.c * y.h * y.w, es = clrun_dtype_size(t);
        void *hx = rand_t(t, nx, 4, &rs), *hdy = rand_t(t, ny, 1, &rs);
        if (iter % 6 == 1) st(hx, t, nx / 2, NAN);
        if (iter % 4 == 3) st(hx, t, 0, ld(hx, t, 1)); /* a tie */
        clrun_buf *bx = up(ctx, hx, nx * es), *bdy = up(ctx, hdy, ny * es), *by = up(ctx, NULL, ny * es), *bdx = up(ctx, NULL, nx * es);
        CHECK_OK(ctx, clrun_pool_forward(ctx, &x, &p, bx, by));
        CHECK_OK(ctx, clrun_pool_backward(ctx, &x, &p, bx, bdy, bdx));
        void *gy = down(ctx, by, ny * es), *gdx = down(ctx, bdx, nx * es);
        double *want_dx = calloc(nx, sizeof(double));
        const clrun_tensor4 xs = x, ys = y;
        for (int nn = 0; nn < x.n; nn++)
            for (int c = 0; c < x.c; c++)
                for (int pp = 0; pp < y.h; pp++)
                    for (int q = 0; q < y.w; q++) {
                        const int h0 = pp * sh - p.pad_h, w0 = q * sw - p.pad_w;
                        double best = -INFINITY, sum = 0;
                        long where = -1;
                        int cells = 0;
                        for (int r = 0; r < p.kh; r++)
                            for (int s = 0; s < p.kw; s++) {
                                const int h = h0 + r, w = w0 + s;
                                if (h < 0 || h >= x.h || w < 0 || w >= x.w) continue;
                                const size_t e = at(&xs, nn, c, h * x.w + w);
                                const double v = ld(hx, t, e);
                                cells++, sum += v;
                                if (where < 0 || v > best || isnan(v)) best = v, where = (long)e;
                            }
                        const int h1 = h0 + p.kh < x.h + p.pad_h ? h0 + p.kh : x.h + p.pad_h,
                                  w1 = w0 + p.kw < x.w + p.pad_w ? w0 + p.kw : x.w + p.pad_w;
                        const int div = p.count_include_pad ? (h1 - h0) * (w1 - w0) : cells;
                        const size_t o = at(&ys, nn, c, pp * y.w + q);
                        const double want = p.max ? best : sum / div, g = ld(hdy, t, o);
                        near(p.max ? "max pool" : "average pool", o, ld(gy, t, o), want, unit(t) * 2, 1e-6);
                        if (p.max) want_dx[where] += g;
                        else
                            for (int r = 0; r < p.kh; r++)
                                for (int s = 0; s < p.kw; s++) {
                                    const int h = h0 + r, w = w0 + s;
                                    if (h >= 0 && h < x.h && w >= 0 && w < x.w) want_dx[at(&xs, nn, c, h * x.w + w)] += g / div;
                                }
                    }
        for (size_t i = 0; i < nx; i++)
            near(p.max ? "max pool backward" : "average pool backward", i, ld(gdx, t, i), want_dx[i], unit(t) * 4, 1e-5);
        clrun_buf_free(bx), clrun_buf_free(bdy), clrun_buf_free(by), clrun_buf_free(bdx);
        free(hx), free(hdy), free(gy), free(gdx), free(want_dx);
    }
}

static void linear_and_cross_entropy(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t rs = test_seed() ^ 0x11;
    const size_t rows = 37, in = 19, out = 10;
    for (int ti = 0; ti < 2; ti++) {
        const clrun_dtype t = ti ? CLRUN_F16 : CLRUN_F32;
        const size_t es = clrun_dtype_size(t);
        void *x = rand_t(t, rows * in, 1, &rs), *w = rand_t(t, out * in, 1, &rs);
        float *b = rand_t(CLRUN_F32, out, 1, &rs);
        int32_t labels[37];
        for (size_t r = 0; r < rows; r++) labels[r] = (int32_t)(rng_next(&rs) % out);
        labels[5] = -1, labels[6] = (int32_t)out; /* no class: NaN loss, no gradient */
        clrun_buf *bx = up(ctx, x, rows * in * es), *bw = up(ctx, w, out * in * es), *bb = up(ctx, b, out * 4),
                  *by = up(ctx, NULL, rows * out * 4), *bl = up(ctx, labels, sizeof labels), *loss = up(ctx, NULL, rows * 4),
                  *pred = up(ctx, NULL, rows * 4), *bdx = up(ctx, NULL, rows * in * es), *bdw = up(ctx, NULL, out * in * 4),
                  *bdb = up(ctx, NULL, out * 4);
        CHECK_OK(ctx, clrun_linear_forward(ctx, t, rows, in, out, bx, bw, bb, by));
        float *y = down(ctx, by, rows * out * 4);
        /* logits far from 0: log-sum-exp must not overflow */
        for (size_t i = 0; i < out; i++) y[i] += 1000.0f;
        CHECK_OK(ctx, clrun_upload(by, 0, y, out * 4));
        CHECK_OK(ctx, clrun_cross_entropy(ctx, rows, out, by, bl, 0.5f, loss, by, pred)); /* dlogits in place */
        float *gl = down(ctx, loss, rows * 4), *gd = down(ctx, by, rows * out * 4);
        int32_t *gp = down(ctx, pred, rows * 4);
        for (size_t r = 0; r < rows; r++) {
            double m = -INFINITY, s = 0;
            size_t am = 0;
            for (size_t j = 0; j < out; j++) {
                double v = b[j];
                for (size_t k = 0; k < in; k++) v += (double)ld(x, t, r * in + k) * ld(w, t, j * in + k);
                if (r == 0) v += 1000.0;
                near("linear forward", r * out + j, r == 0 ? y[j] : y[r * out + j], v, 1e-5, 1e-5);
                if (y[r * out + j] > m) m = y[r * out + j], am = j;
            }
            assert_int_equal(gp[r], (int)am);
            for (size_t j = 0; j < out; j++) s += exp(y[r * out + j] - m);
            const double lse = m + log(s);
            if (labels[r] < 0 || labels[r] >= (int)out) assert_true(isnan(gl[r]));
            else near("cross-entropy loss", r, gl[r], lse - y[r * out + labels[r]], 1e-5, 1e-5);
            for (size_t j = 0; j < out; j++) {
                const int ok = labels[r] >= 0 && labels[r] < (int)out;
                const double want = ok ? (exp(y[r * out + j] - lse) - (j == (size_t)labels[r])) * 0.5 : 0;
                near("cross-entropy gradient", r * out + j, gd[r * out + j], want, 1e-5, 1e-6);
            }
        }
        /* the linear layer's backward from these gradients */
        CHECK_OK(ctx, clrun_linear_backward(ctx, t, rows, in, out, bx, bw, by, bdx, bdw, bdb));
        void *gdx = down(ctx, bdx, rows * in * es);
        float *gdw = down(ctx, bdw, out * in * 4), *gdb = down(ctx, bdb, out * 4);
        /* dy as the GEMMs saw it: rounded to t */
        for (size_t j = 0; j < out; j++) { /* db from dy in f32 */
            double sb = 0;
            for (size_t r = 0; r < rows; r++) sb += gd[r * out + j];
            near("linear db", j, gdb[j], sb, 1e-5, 1e-6);
        }
        for (size_t i = 0; i < rows * out; i++)
            if (t == CLRUN_F16) gd[i] = clrun_f16_to_f32(clrun_f32_to_f16(gd[i]));
        for (size_t j = 0; j < out; j++) {
            for (size_t k = 0; k < in; k++) {
                double v = 0;
                for (size_t r = 0; r < rows; r++) v += (double)gd[r * out + j] * ld(x, t, r * in + k);
                near("linear dw", j * in + k, gdw[j * in + k], v, 1e-4 + unit(t) * 4, 1e-4 + unit(t));
            }
        }
        for (size_t r = 0; r < rows; r++)
            for (size_t k = 0; k < in; k++) {
                double v = 0;
                for (size_t j = 0; j < out; j++) v += (double)gd[r * out + j] * ld(w, t, j * in + k);
                near("linear dx", r * in + k, ld(gdx, t, r * in + k), v, 1e-4 + unit(t) * 4, 1e-4 + unit(t));
            }
        clrun_buf *bufs[] = {bx, bw, bb, by, bl, loss, pred, bdx, bdw, bdb};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) clrun_buf_free(bufs[i]);
        free(x), free(w), free(b), free(y), free(gl), free(gd), free(gp), free(gdx), free(gdw), free(gdb);
    }
}

static void dropout(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t rs = test_seed() ^ 0xd0;
    const size_t n = 100003;
    float *x = rand_t(CLRUN_F32, n, 1, &rs);
    clrun_buf *bx = up(ctx, x, n * 4), *by = up(ctx, NULL, n * 4), *mask = up(ctx, NULL, n), *mask2 = up(ctx, NULL, n);
    const float ps[] = {0.0f, 0.3f, 0.9f};
    for (int i = 0; i < 3; i++) {
        clrun_rand_desc r, r2;
        clrun_rand_desc_init(&r, rs, CLRUN_RAND_BITS, CLRUN_U32);
        r2 = r;
        CHECK_OK(ctx, clrun_dropout(ctx, CLRUN_F32, n, ps[i], &r, bx, mask, by));
        assert_true(r.offset > 0);
        CHECK_OK(ctx, clrun_dropout(ctx, CLRUN_F32, n, ps[i], &r2, bx, mask2, by)); /* the same stream: the same mask */
        unsigned char *m = down(ctx, mask, n), *m2 = down(ctx, mask2, n);
        float *y = down(ctx, by, n * 4);
        assert_memory_equal(m, m2, n);
        size_t kept = 0;
        const float scale = (float)(1.0 / (1.0 - (double)ps[i]));
        for (size_t k = 0; k < n; k++) {
            kept += m[k];
            assert_true(m[k] <= 1);
            if (y[k] != (m[k] ? x[k] * scale : 0.0f))
                fail_msg("dropout p %g: element %zu is %g, want %g", ps[i], k, y[k], m[k] ? x[k] * scale : 0.0f);
        }
        const double keep = 1 - ps[i], sd = sqrt(n * keep * (1 - keep));
        if (fabs((double)kept - n * keep) > 6 * sd + 1e-9) fail_msg("dropout p %g kept %zu of %zu", ps[i], kept, n);
        CHECK_OK(ctx, clrun_dropout_backward(ctx, CLRUN_F32, n, ps[i], mask, bx, by));
        float *dx = down(ctx, by, n * 4);
        for (size_t k = 0; k < n; k++) assert_true(dx[k] == (m[k] ? x[k] * scale : 0.0f));
        free(m), free(m2), free(y), free(dx);
    }
    clrun_rand_desc r;
    clrun_rand_desc_init(&r, 1, CLRUN_RAND_BITS, CLRUN_U32);
    CHECK_FAIL(ctx, clrun_dropout(ctx, CLRUN_F32, n, 1.0f, &r, bx, mask, by), CLRUN_INVALID_ARG, "p 1");
    CHECK_FAIL(ctx, clrun_dropout(ctx, CLRUN_F32, n, 0.5f, NULL, bx, mask, by), CLRUN_INVALID_ARG, "random stream");
    clrun_buf_free(bx), clrun_buf_free(by), clrun_buf_free(mask), clrun_buf_free(mask2);
    free(x);
}

/* SGD (momentum, Nesterov, weight decay) and AdamW over several steps against the host's f32 replay
 * of PyTorch's update rules */
static void optimisers(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t rs = test_seed() ^ 0x0b7;
    const size_t n = 1000;
    float *p = rand_t(CLRUN_F32, n, 1, &rs), hp[1000], hb[1000], hm[1000], hv[1000];
    memcpy(hp, p, sizeof hp);
    clrun_buf *bp = up(ctx, p, n * 4), *bg = up(ctx, NULL, n * 4), *bb = up(ctx, NULL, n * 4), *bm = up(ctx, NULL, n * 4),
              *bv = up(ctx, NULL, n * 4);
    const clrun_sgd sgds[] = {{0.1f, 0.9f, 0, 1e-2f, 0}, {0.05f, 0.8f, 0, 0, 1}, {0.2f, 0, 0, 0, 0}, {0.1f, 0.9f, 0.3f, 0, 0}};
    for (size_t o = 0; o < 4; o++)
        for (int step = 0; step < 3; step++) {
            float *g = rand_t(CLRUN_F32, n, 1, &rs);
            CHECK_OK(ctx, clrun_upload(bg, 0, g, n * 4));
            CHECK_OK(ctx, clrun_sgd_step(ctx, &sgds[o], n, bp, bg, sgds[o].momentum != 0 ? bb : NULL, step == 0));
            const clrun_sgd *s = &sgds[o];
            for (size_t i = 0; i < n; i++) {
                double d = (double)g[i] + (double)s->weight_decay * hp[i];
                if (s->momentum != 0) {
                    hb[i] = step == 0 ? (float)d : (float)(s->momentum * (double)hb[i] + (1 - (double)s->dampening) * d);
                    d = s->nesterov ? d + (double)s->momentum * hb[i] : hb[i];
                }
                hp[i] = (float)(hp[i] - (double)s->lr * d);
            }
            float *gp = down(ctx, bp, n * 4);
            for (size_t i = 0; i < n; i++) near("sgd", i, gp[i], hp[i], 1e-5, 1e-6), hp[i] = gp[i];
            free(g), free(gp);
        }
    memset(hm, 0, sizeof hm), memset(hv, 0, sizeof hv);
    float zero[1000] = {0};
    CHECK_OK(ctx, clrun_upload(bm, 0, zero, n * 4));
    CHECK_OK(ctx, clrun_upload(bv, 0, zero, n * 4));
    const clrun_adamw a = {1e-2f, 0.9f, 0.999f, 1e-8f, 0.05f};
    for (int step = 1; step <= 5; step++) {
        float *g = rand_t(CLRUN_F32, n, 1, &rs);
        CHECK_OK(ctx, clrun_upload(bg, 0, g, n * 4));
        CHECK_OK(ctx, clrun_adamw_step(ctx, &a, n, bp, bg, bm, bv, step));
        const double bc1 = 1 - pow(a.beta1, step), bc2 = 1 - pow(a.beta2, step);
        float *gp = down(ctx, bp, n * 4);
        for (size_t i = 0; i < n; i++) {
            hm[i] = (float)(a.beta1 * (double)hm[i] + (1 - (double)a.beta1) * g[i]);
            hv[i] = (float)(a.beta2 * (double)hv[i] + (1 - (double)a.beta2) * g[i] * g[i]);
            const double pd = hp[i] * (1 - (double)a.lr * a.weight_decay);
            hp[i] = (float)(pd - (double)a.lr / bc1 * hm[i] / (sqrt((double)hv[i]) / sqrt(bc2) + a.eps));
            near("adamw", i, gp[i], hp[i], 1e-5, 1e-6);
            hp[i] = gp[i];
        }
        free(g), free(gp);
    }
    CHECK_FAIL(ctx, clrun_adamw_step(ctx, &a, n, bp, bg, bm, bv, 0), CLRUN_INVALID_ARG, "step 0");
    CHECK_FAIL(ctx, clrun_adamw_step(ctx, &a, n, bp, bg, bm, bm, 1), CLRUN_INVALID_ARG, "one buffer");
    CHECK_FAIL(ctx, clrun_sgd_step(ctx, &sgds[0], n, bp, bg, NULL, 0), CLRUN_INVALID_ARG, "needs buf");
    const clrun_sgd bad = {0.1f, 0, 0.5f, 0, 1};
    CHECK_FAIL(ctx, clrun_sgd_step(ctx, &bad, n, bp, bg, bb, 0), CLRUN_INVALID_ARG, "Nesterov");
    clrun_buf_free(bp), clrun_buf_free(bg), clrun_buf_free(bb), clrun_buf_free(bm), clrun_buf_free(bv);
    free(p);
}

static void refusals(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_buf *b;
    CHECK_OK(ctx, clrun_buf_new(ctx, 4096, 0, &b));
    CHECK_FAIL(ctx, clrun_act_forward(ctx, (clrun_act)9, CLRUN_F32, 4, b, b), CLRUN_INVALID_ARG, "unknown activation");
    CHECK_FAIL(ctx, clrun_act_forward(ctx, CLRUN_ACT_RELU, CLRUN_I32, 4, b, b), CLRUN_INVALID_ARG, "float32");
    CHECK_FAIL(ctx, clrun_act_forward(ctx, CLRUN_ACT_RELU, CLRUN_F32, 2000, b, b), CLRUN_INVALID_ARG, "past");
    const clrun_tensor4 t = {CLRUN_NCHW, CLRUN_F32, 2, 2, 4, 4};
    clrun_batchnorm bn = {1, 0.1f, 1e-5f, NULL, NULL, NULL, NULL, NULL, NULL};
    CHECK_FAIL(ctx, clrun_batchnorm_forward(ctx, &t, &bn, b, b), CLRUN_INVALID_ARG, "save_mean");
    bn.training = 0;
    CHECK_FAIL(ctx, clrun_batchnorm_forward(ctx, &t, &bn, b, b), CLRUN_INVALID_ARG, "running_mean");
    const clrun_tensor4 one = {CLRUN_NCHW, CLRUN_F32, 1, 2, 1, 1};
    bn.training = 1, bn.save_mean = b, bn.save_invstd = b;
    CHECK_FAIL(ctx, clrun_batchnorm_forward(ctx, &one, &bn, b, b), CLRUN_INVALID_ARG, "more than one value");
    bn.momentum = 2;
    CHECK_FAIL(ctx, clrun_batchnorm_forward(ctx, &t, &bn, b, b), CLRUN_INVALID_ARG, "momentum");
    const clrun_pool_desc wide = {1, 3, 3, 1, 1, 2, 0, 0}, big = {0, 9, 9, 0, 0, 0, 0, 1};
    clrun_tensor4 y;
    CHECK_FAIL(ctx, clrun_pool_shape(ctx, &t, &wide, &y), CLRUN_INVALID_ARG, "half");
    CHECK_FAIL(ctx, clrun_pool_shape(ctx, &t, &big, &y), CLRUN_INVALID_ARG, "larger");
    const clrun_tensor4 empty = {CLRUN_NCHW, CLRUN_F32, 0, 2, 4, 4};
    CHECK_FAIL(ctx, clrun_pool_shape(ctx, &empty, &big, &y), CLRUN_INVALID_ARG, "at least 1");
    CHECK_FAIL(ctx, clrun_cross_entropy(ctx, 4, 0, b, b, 1, NULL, NULL, NULL), CLRUN_INVALID_ARG, "classes");
    CHECK_FAIL(ctx, clrun_cross_entropy(ctx, 4, 10, b, b, 1, b, NULL, NULL), CLRUN_INVALID_ARG, "an output is an input");
    CHECK_FAIL(ctx, clrun_linear_forward(ctx, CLRUN_F32, 4, 0, 3, b, b, NULL, b), CLRUN_INVALID_ARG, "at least 1");
    assert_null(clrun_act_name((clrun_act)7));
    assert_int_equal(clrun_act_forward(NULL, CLRUN_ACT_RELU, CLRUN_F32, 1, b, b), CLRUN_INVALID_ARG);
    clrun_buf_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(activations),
                                       cmocka_unit_test(batchnorm),
                                       cmocka_unit_test(batchnorm_finite_differences),
                                       cmocka_unit_test(pooling),
                                       cmocka_unit_test(linear_and_cross_entropy),
                                       cmocka_unit_test(dropout),
                                       cmocka_unit_test(optimisers),
                                       cmocka_unit_test(refusals)};
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
