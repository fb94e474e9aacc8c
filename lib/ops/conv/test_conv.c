/* test_conv.c — clrun_conv2d_* against a direct loop in double precision: random shapes with every
 * option (stride, padding, dilation, groups and depthwise, bias), both layouts, f32, f16 and bf16,
 * the three passes; shapes with several tiles and a split depth; bits repeat run to run; refusals. */
#include "helpers.h"

#include <math.h>

/* storage of type t: element i as f32, and f32 v stored (rounded to nearest even) */
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

/* the unit roundoff of storing a result of type t */
static double unit(clrun_dtype t) { return t == CLRUN_F16 ? 0x1p-11 : t == CLRUN_BF16 ? 0x1p-8 : 0x1p-24; }

struct shape {
    int N, C, H, W, K, R, S, P, Q, sh, sw, ph, pw, dh, dw, G, nhwc;
};

static size_t act(const struct shape *s, int n, int c, int h, int w, int C, int H, int W)
{
    return s->nhwc ? (((size_t)n * H + h) * W + w) * C + c : (((size_t)n * C + c) * H + h) * W + w;
}

static size_t wt(const struct shape *s, int k, int c, int r, int q) /* c within the group */
{
    const int Cg = s->C / s->G;
    return s->nhwc ? (((size_t)k * s->R + r) * s->S + q) * Cg + c : (((size_t)k * Cg + c) * s->R + r) * s->S + q;
}

/* runs the statements for every tap: an output yi, the input xi and the weight wi it multiplies */
#define FOR_TAPS(s, ...)                                                                                                      \
    for (int n = 0; n < (s)->N; n++)                                                                                          \
        for (int k = 0; k < (s)->K; k++)                                                                                      \
            for (int p = 0; p < (s)->P; p++)                                                                                  \
                for (int q = 0; q < (s)->Q; q++)                                                                              \
                    for (int c = 0; c < (s)->C / (s)->G; c++)                                                                 \
                        for (int r = 0; r < (s)->R; r++)                                                                      \
                            for (int u = 0; u < (s)->S; u++) {                                                                \
                                const int hh = p * (s)->sh - (s)->ph + r * (s)->dh, ww = q * (s)->sw - (s)->pw + u * (s)->dw; \
                                if (hh < 0 || hh >= (s)->H || ww < 0 || ww >= (s)->W) continue;                               \
                                const int cin = (k / ((s)->K / (s)->G)) * ((s)->C / (s)->G) + c;                              \
                                const size_t yi = act((s), n, k, p, q, (s)->K, (s)->P, (s)->Q),                               \
                                             xi = act((s), n, cin, hh, ww, (s)->C, (s)->H, (s)->W), wi = wt((s), k, c, r, u); \
                                __VA_ARGS__                                                                                   \
                            }

static void compare(const char *what, const clrun_conv2d_desc *d, const struct shape *s, clrun_dtype t, const void *got, const double *want,
                    const double *mag, size_t n, int depth)
{
    for (size_t i = 0; i < n; i++) {
        const double g = ld(got, t, i), bound = 2.0 * depth * 0x1p-24 * mag[i] + unit(t) * fabs(want[i]) +
                                                (t == CLRUN_F16 ? 0x1p-25 : 1e-30); /* f16's subnormals */
        if (!(fabs(g - want[i]) <= bound))
            fail_msg("%s (%s) %s %s N%d C%d %dx%d K%d %dx%d stride %d,%d pad %d,%d dil %d,%d groups %d: element %zu is %.9g, want %.9g",
                     what, d->algo == CLRUN_CONV_GEMM ? "gemm" : "implicit", clrun_dtype_name(t), s->nhwc ? "NHWC" : "NCHW", s->N, s->C,
                     s->H, s->W, s->K, s->R, s->S, s->sh, s->sw, s->ph, s->pw, s->dh, s->dw, s->G, i, g, want[i]);
    }
}

static clrun_buf *upload(clrun_ctx *ctx, const void *p, size_t bytes)
{
    clrun_buf *b;
    CHECK_OK(ctx, clrun_buf_new(ctx, bytes ? bytes : 1, 0, &b));
    if (bytes) CHECK_OK(ctx, clrun_upload(b, 0, p, bytes));
    return b;
}

static void *random_tensor(clrun_dtype t, size_t n, uint64_t *rs)
{
    void *p = malloc(n * 4 + 4);
    for (size_t i = 0; i < n; i++) st(p, t, i, rng_float(rs));
    return p;
}

static void run_case(clrun_ctx *ctx, struct shape s, clrun_dtype t, int with_bias, uint64_t *rs)
{
    clrun_conv2d_desc d = {.x = {s.nhwc ? CLRUN_NHWC : CLRUN_NCHW, t, s.N, s.C, s.H, s.W},
                           .k = s.K,
                           .r = s.R,
                           .s = s.S,
                           .stride_h = s.sh,
                           .stride_w = s.sw,
                           .pad_h = s.ph,
                           .pad_w = s.pw,
                           .dilation_h = s.dh,
                           .dilation_w = s.dw,
                           .groups = s.G};
    clrun_tensor4 y;
    CHECK_OK(ctx, clrun_conv2d_shape(ctx, &d, &y));
    s.P = y.h, s.Q = y.w;
    assert_int_equal(y.c, s.K);
    const size_t es = clrun_dtype_size(t), nx = (size_t)s.N * s.C * s.H * s.W, nw = (size_t)s.K * (s.C / s.G) * s.R * s.S,
                 ny = (size_t)s.N * s.K * s.P * s.Q;
    void *x = random_tensor(t, nx, rs), *w = random_tensor(t, nw, rs), *b = random_tensor(t, (size_t)s.K, rs),
         *dy = random_tensor(t, ny, rs);
    double *want = calloc(nx + nw + ny + 1, sizeof(double)), *mag = calloc(nx + nw + ny + 1, sizeof(double));
    void *got = malloc((nx + nw + ny) * es + 4);
    clrun_buf *bx = upload(ctx, x, nx * es), *bw = upload(ctx, w, nw * es), *bb = upload(ctx, b, s.K * es), *bdy = upload(ctx, dy, ny * es),
              *out;
    const int depth = (s.C / s.G) * s.R * s.S;

    for (int algo = CLRUN_CONV_IMPLICIT; algo <= CLRUN_CONV_GEMM; algo++) { /* both paths */
        d.algo = (clrun_conv_algo)algo;
        /* forward */
        for (size_t i = 0; i < ny; i++) {
            const int k = s.nhwc ? (int)(i % s.K) : (int)(i / ((size_t)s.P * s.Q) % s.K);
            want[i] = with_bias ? ld(b, t, k) : 0, mag[i] = fabs(want[i]);
        }
        FOR_TAPS(&s, {
            const double v = (double)ld(x, t, xi) * ld(w, t, wi);
            want[yi] += v, mag[yi] += fabs(v);
        });
        CHECK_OK(ctx, clrun_buf_new(ctx, ny * es, 0, &out));
        CHECK_OK(ctx, clrun_conv2d_forward(ctx, &d, bx, bw, with_bias ? bb : NULL, out));
        CHECK_OK(ctx, clrun_download(out, 0, got, ny * es));
        compare("forward", &d, &s, t, got, want, mag, ny, depth + 1);
        clrun_buf_free(out);

        /* backward-data */
        memset(want, 0, nx * sizeof(double)), memset(mag, 0, nx * sizeof(double));
        FOR_TAPS(&s, {
            const double v = (double)ld(dy, t, yi) * ld(w, t, wi);
            want[xi] += v, mag[xi] += fabs(v);
        });
        CHECK_OK(ctx, clrun_buf_new(ctx, nx * es, 0, &out));
        CHECK_OK(ctx, clrun_conv2d_backward_data(ctx, &d, bdy, bw, out));
        CHECK_OK(ctx, clrun_download(out, 0, got, nx * es));
        compare("backward-data", &d, &s, t, got, want, mag, nx, (s.K / s.G) * s.R * s.S);
        clrun_buf_free(out);

        /* backward-weights and the bias's gradient */
        memset(want, 0, (nw + s.K) * sizeof(double)), memset(mag, 0, (nw + s.K) * sizeof(double));
        FOR_TAPS(&s, {
            const double v = (double)ld(dy, t, yi) * ld(x, t, xi);
            want[wi] += v, mag[wi] += fabs(v);
        });
        for (size_t i = 0; i < ny; i++) {
            const int k = s.nhwc ? (int)(i % s.K) : (int)(i / ((size_t)s.P * s.Q) % s.K);
            want[nw + k] += ld(dy, t, i), mag[nw + k] += fabs(ld(dy, t, i));
        }
        clrun_buf *db;
        CHECK_OK(ctx, clrun_buf_new(ctx, nw * es, 0, &out));
        CHECK_OK(ctx, clrun_buf_new(ctx, s.K * es, 0, &db));
        CHECK_OK(ctx, clrun_conv2d_backward_weights(ctx, &d, bx, bdy, out, with_bias ? db : NULL));
        CHECK_OK(ctx, clrun_download(out, 0, got, nw * es));
        compare("backward-weights", &d, &s, t, got, want, mag, nw, s.N * s.P * s.Q);
        if (with_bias) {
            CHECK_OK(ctx, clrun_download(db, 0, got, s.K * es));
            compare("bias gradient", &d, &s, t, got, want + nw, mag + nw, (size_t)s.K, s.N * s.P * s.Q);
        }
        clrun_buf_free(out), clrun_buf_free(db);
    }
    clrun_buf_free(bx), clrun_buf_free(bw), clrun_buf_free(bb), clrun_buf_free(bdy);
    free(x), free(w), free(b), free(dy), free(want), free(mag), free(got);
}

static int pick(uint64_t *rs, int lo, int hi) { return lo + (int)(rng_next(rs) % (uint64_t)(hi - lo + 1)); }

static void random_shapes(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t rs = test_seed();
    const clrun_dtype types[] = {CLRUN_F32, CLRUN_F16, CLRUN_BF16};
    for (int i = 0; i < 36; i++) {
        struct shape s = {0};
        s.G = i % 4 == 3 ? pick(&rs, 2, 3) : 1;
        s.N = pick(&rs, 1, 3), s.C = s.G * pick(&rs, 1, 5), s.K = s.G * pick(&rs, 1, 6);
        if (i % 6 == 5) s.G = s.C, s.K = s.C * pick(&rs, 1, 2); /* depthwise (and a multiplier) */
        s.R = pick(&rs, 1, 4), s.S = pick(&rs, 1, 4), s.sh = pick(&rs, 1, 3), s.sw = pick(&rs, 1, 3);
        s.dh = pick(&rs, 1, 2), s.dw = pick(&rs, 1, 2), s.ph = pick(&rs, 0, 2), s.pw = pick(&rs, 0, 2);
        s.H = pick(&rs, 1, 11) + (s.R - 1) * s.dh, s.W = pick(&rs, 1, 11) + (s.S - 1) * s.dw, s.nhwc = i % 2;
        run_case(ctx, s, types[i % 3], i % 5 != 4, &rs);
    }
}

/* several tiles each way, a split depth in backward-weights (N·P·Q deep), the 1×1 and the
 * strided 3×3 of a ResNet */
static void larger_shapes(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t rs = test_seed() ^ 0x5bd1e995;
    const struct shape shapes[] = {
        {.N = 4,
         .C = 40,
         .H = 15,
         .W = 13,
         .K = 72,
         .R = 3,
         .S = 3,
         .sh = 1,
         .sw = 1,
         .ph = 1,
         .pw = 1,
         .dh = 1,
         .dw = 1,
         .G = 1,
         .nhwc = 0},
        {.N = 3, .C = 96, .H = 9, .W = 9, .K = 80, .R = 1, .S = 1, .sh = 1, .sw = 1, .ph = 0, .pw = 0, .dh = 1, .dw = 1, .G = 1, .nhwc = 1},
        {.N = 2,
         .C = 32,
         .H = 14,
         .W = 14,
         .K = 64,
         .R = 3,
         .S = 3,
         .sh = 2,
         .sw = 2,
         .ph = 1,
         .pw = 1,
         .dh = 1,
         .dw = 1,
         .G = 2,
         .nhwc = 1},
        {.N = 16,
         .C = 1,
         .H = 28,
         .W = 28,
         .K = 16,
         .R = 3,
         .S = 3,
         .sh = 1,
         .sw = 1,
         .ph = 1,
         .pw = 1,
         .dh = 1,
         .dw = 1,
         .G = 1,
         .nhwc = 0},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        run_case(ctx, shapes[i], i == 2 || i == 4 ? CLRUN_F16 : CLRUN_F32, i != 1, &rs);
}

/* the same call twice gives the same bits (split sums are added in a fixed order) */
static void repeatable(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t rs = test_seed() ^ 0x77;
    clrun_conv2d_desc d = {.x = {CLRUN_NCHW, CLRUN_F32, 32, 8, 12, 12}, .k = 8, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1};
    const size_t nx = 32 * 8 * 144, nw = 8 * 8 * 9;
    void *x = random_tensor(CLRUN_F32, nx, &rs), *dy = random_tensor(CLRUN_F32, nx, &rs);
    clrun_buf *bx = upload(ctx, x, nx * 4), *bdy = upload(ctx, dy, nx * 4), *w1, *w2;
    CHECK_OK(ctx, clrun_buf_new(ctx, nw * 4, 0, &w1));
    CHECK_OK(ctx, clrun_buf_new(ctx, nw * 4, 0, &w2));
    CHECK_OK(ctx, clrun_conv2d_backward_weights(ctx, &d, bx, bdy, w1, NULL));
    CHECK_OK(ctx, clrun_conv2d_backward_weights(ctx, &d, bx, bdy, w2, NULL));
    float *a = malloc(nw * 4), *b = malloc(nw * 4);
    CHECK_OK(ctx, clrun_download(w1, 0, a, nw * 4));
    CHECK_OK(ctx, clrun_download(w2, 0, b, nw * 4));
    assert_memory_equal(a, b, nw * 4);
    clrun_buf_free(bx), clrun_buf_free(bdy), clrun_buf_free(w1), clrun_buf_free(w2);
    free(x), free(dy), free(a), free(b);
}

static void refusals(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_buf *b, *small;
    CHECK_OK(ctx, clrun_buf_new(ctx, 1 << 16, 0, &b));
    CHECK_OK(ctx, clrun_buf_new(ctx, 8, 0, &small));
    const clrun_conv2d_desc good = {.x = {CLRUN_NCHW, CLRUN_F32, 1, 4, 8, 8}, .k = 4, .r = 3, .s = 3};
    clrun_conv2d_desc d = good;
    clrun_tensor4 y;
    d.x.type = CLRUN_I32;
    CHECK_FAIL(ctx, clrun_conv2d_shape(ctx, &d, &y), CLRUN_INVALID_ARG, "float32, float16 or bfloat16");
    d = good, d.groups = 3;
    CHECK_FAIL(ctx, clrun_conv2d_shape(ctx, &d, &y), CLRUN_INVALID_ARG, "multiples of the groups");
    d = good, d.r = 11;
    CHECK_FAIL(ctx, clrun_conv2d_shape(ctx, &d, &y), CLRUN_INVALID_ARG, "larger than the padded");
    d = good, d.pad_w = -1;
    CHECK_FAIL(ctx, clrun_conv2d_shape(ctx, &d, &y), CLRUN_INVALID_ARG, "pad_w is -1");
    d = good, d.x.layout = (clrun_layout)5;
    CHECK_FAIL(ctx, clrun_conv2d_forward(ctx, &d, b, b, NULL, small), CLRUN_INVALID_ARG, "layout");
    d = good, d.x.n = 1 << 20, d.x.c = 1 << 12;
    CHECK_FAIL(ctx, clrun_conv2d_shape(ctx, &d, &y), CLRUN_INVALID_ARG, "2^31");
    CHECK_FAIL(ctx, clrun_conv2d_forward(ctx, &good, b, b, NULL, small), CLRUN_INVALID_ARG, "y");
    CHECK_FAIL(ctx, clrun_conv2d_forward(ctx, &good, b, b, NULL, b), CLRUN_INVALID_ARG, "in place");
    CHECK_FAIL(ctx, clrun_conv2d_backward_data(ctx, &good, small, b, b), CLRUN_INVALID_ARG, "dy");
    CHECK_FAIL(ctx, clrun_conv2d_backward_weights(ctx, &good, b, b, small, NULL), CLRUN_INVALID_ARG, "dw");
    CHECK_FAIL(ctx, clrun_conv2d_forward(ctx, NULL, b, b, NULL, b), CLRUN_INVALID_ARG, "NULL");
    assert_int_equal(clrun_conv2d_forward(NULL, &good, b, b, NULL, b), CLRUN_INVALID_ARG);
    clrun_buf_free(b), clrun_buf_free(small);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(random_shapes), cmocka_unit_test(larger_shapes), cmocka_unit_test(repeatable),
                                       cmocka_unit_test(refusals)};
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
