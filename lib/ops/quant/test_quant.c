/* test_quant.c — INT8 quantization against PyTorch's formula written out on the host, over fresh
 * random data and every edge: ties at .5 (to even), the saturation bounds ±127.5 and beyond, ±inf,
 * NaN, zero points at both ends, per tensor and per channel on a middle axis; dequantization; the
 * observers' scales and zero points; bad parameters. */
#include "helpers.h"

#include <math.h>

static signed char want_q(float x, float scale, int zp)
{
    const float inv = 1.0f / scale, v = x * inv; /* PyTorch: value * inv_scale, f32 */
    if (isnan(v)) return (signed char)zp;
    float r = (float)zp + rintf(v);
    r = r < -128 ? -128 : r > 127 ? 127 : r;
    return (signed char)(int)r;
}

/* Quantize and dequantize n values from element xo of x into element qo of q, against the formula. */
static void check_at(clrun_ctx *ctx, const float *x, size_t n, const clrun_qparams *p, size_t xo, size_t qo)
{
    clrun_buf *bx, *bq, *by;
    signed char *q = malloc(n + 1);
    float *y = malloc(n * 4 + 4);
    CHECK_OK(ctx, clrun_buf_new(ctx, (n + xo) * 4 + 4, 0, &bx));
    CHECK_OK(ctx, clrun_buf_new(ctx, n + qo + 1, 0, &bq));
    CHECK_OK(ctx, clrun_buf_new(ctx, (n + xo) * 4 + 4, 0, &by));
    CHECK_OK(ctx, clrun_upload(bx, xo * 4, x, n * 4));
    CHECK_OK(ctx, clrun_quantize(ctx, bx, xo, bq, qo, n, p));
    CHECK_OK(ctx, clrun_download(bq, qo, q, n));
    CHECK_OK(ctx, clrun_dequantize(ctx, bq, qo, by, xo, n, p));
    CHECK_OK(ctx, clrun_download(by, xo * 4, y, n * 4));
    const size_t ch = p->channels ? p->channels : 1;
    for (size_t i = 0; i < n; i++) {
        const size_t c = ch == 1 ? 0 : (i / p->inner) % ch;
        const signed char w = want_q(x[i], p->scale[c], p->zero_point[c]);
        if (q[i] != w)
            fail_msg("x[%zu] = %a (scale %a, zero point %d): %d, the formula gives %d", i, x[i], p->scale[c], p->zero_point[c], q[i], w);
        const float back = (float)(w - p->zero_point[c]) * p->scale[c];
        if (memcmp(&y[i], &back, 4)) fail_msg("dequantize q[%zu] = %d: %a, the formula gives %a", i, w, y[i], back);
    }
    clrun_buf_free(bx), clrun_buf_free(bq), clrun_buf_free(by);
    free(q), free(y);
}

/* both kernels: odd offsets (an element a work-item) and offsets on 4 (four) */
static void check(clrun_ctx *ctx, const float *x, size_t n, const clrun_qparams *p)
{
    check_at(ctx, x, n, p, 1, 3);
    check_at(ctx, x, n, p, 0, 4);
}

static void per_tensor_edges(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t rng = test_seed();
    enum { N = 4000 };
    float *x = malloc(N * 4);
    static const float scales[] = {0.25f, 0.1f, 1.0f / 3, 3e-5f, 7.5f};
    static const int zps[] = {0, -128, 127, 5, -37};
    for (int t = 0; t < 5; t++) {
        const float s = scales[t];
        const int zp = zps[t];
        size_t n = 0;
        for (int k = -140; k <= 140 && n < N - 8; k++) { /* exact ties k + 0.5 where x·inv is exact, and their neighbours */
            const float v = ((float)k + 0.5f) * s;
            x[n++] = v, x[n++] = nextafterf(v, INFINITY), x[n++] = nextafterf(v, -INFINITY);
        }
        x[n++] = INFINITY, x[n++] = -INFINITY, x[n++] = NAN, x[n++] = 1e30f, x[n++] = -1e30f, x[n++] = 0.0f, x[n++] = -0.0f;
        while (n < N) x[n++] = rng_float(&rng) * 160 * s;
        const clrun_qparams p = {1, 0, &s, &zp};
        check(ctx, x, N, &p);
    }
    free(x);
}

static void per_channel_middle_axis(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t rng = test_seed() + 1;
    /* shape A × C × I, the channel axis in the middle; I = 1 is the last axis (a channel per element) */
    static const size_t shapes[][3] = {{3, 7, 50}, {9, 5, 1}, {11, 3, 2}, {6, 4, 3}};
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        const size_t A = shapes[si][0], C = shapes[si][1], I = shapes[si][2];
        float *x = malloc(A * C * I * 4), s[8];
        int32_t zp[8];
        for (size_t c = 0; c < C; c++) s[c] = 0.01f + (float)(rng_next(&rng) % 1000) / 997.0f, zp[c] = (int)(rng_next(&rng) % 256) - 128;
        for (size_t i = 0; i < A * C * I; i++) x[i] = rng_float(&rng) * 200 * s[(i / I) % C];
        const clrun_qparams p = {C, I, s, zp};
        check(ctx, x, A * C * I, &p);
        free(x);
    }
}

static void calibrate(void **state)
{
    (void)state;
    const float x[] = {-1.0f, 0.5f, 2.0f, NAN, -0.25f, 1.5f};
    float s;
    int32_t z;
    CHECK_OK(NULL, clrun_quant_calibrate(x, 6, 1, 0, 1, 100, &s, &z));
    assert_true(s == 2.0f / 127.5f && z == 0);
    CHECK_OK(NULL, clrun_quant_calibrate(x, 6, 1, 0, 0, 100, &s, &z));
    const float sa = 3.0f / 255.0f;
    assert_true(s == sa);
    assert_int_equal(z, (int)(-128.0f - nearbyintf(-1.0f / sa)));
    const float pos[] = {0.5f, 2.0f}; /* min above 0: taken as 0, so the zero point is -128 */
    CHECK_OK(NULL, clrun_quant_calibrate(pos, 2, 1, 0, 0, 100, &s, &z));
    assert_int_equal(z, -128);
    const float zeros[] = {0, 0, 0};
    CHECK_OK(NULL, clrun_quant_calibrate(zeros, 3, 1, 0, 1, 100, &s, &z));
    assert_true(s == 1.1920928955078125e-07f); /* the observer's epsilon */
    /* percentile: one outlier in 100 values clipped at 99 */
    float v[100];
    for (int i = 0; i < 100; i++) v[i] = (float)i / 100;
    v[57] = 1000;
    CHECK_OK(NULL, clrun_quant_calibrate(v, 100, 1, 0, 1, 99, &s, &z));
    assert_true(s == 0.99f / 127.5f);
    /* per channel: two channels, rows of 3 */
    const float m[] = {1, -2, 3, 10, 20, -30};
    float s2[2];
    int32_t z2[2];
    CHECK_OK(NULL, clrun_quant_calibrate(m, 6, 2, 3, 1, 100, s2, z2));
    assert_true(s2[0] == 3.0f / 127.5f && s2[1] == 30.0f / 127.5f);
    CHECK_FAIL(NULL, clrun_quant_calibrate(m, 5, 2, 3, 1, 100, s2, z2), CLRUN_INVALID_ARG, "whole runs");
    CHECK_FAIL(NULL, clrun_quant_calibrate(m, 6, 1, 0, 1, 0, s2, z2), CLRUN_INVALID_ARG, "percentile");
}

/* Per-channel calibration over many channels is linear in the elements (it once scanned them all
 * per channel: minutes for 200,000 channels), and each channel's parameters are those of the
 * channel calibrated alone. alarm(): a quadratic pass fails. */
static void calibrate_many_channels(void **state)
{
    (void)state;
    enum { CH = 200000, INNER = 2, RUNS = 2 };
    const size_t n = (size_t)CH * INNER * RUNS;
    float *x = malloc(n * sizeof *x), *s = malloc(CH * sizeof *s), one_x[INNER * RUNS];
    int32_t *z = malloc(CH * sizeof *z);
    assert_true(x && s && z);
    uint64_t rng = test_seed();
    for (size_t i = 0; i < n; i++) x[i] = rng_float(&rng) * 8.0f;
    alarm(20);
    CHECK_OK(NULL, clrun_quant_calibrate(x, n, CH, INNER, 0, 100, s, z));
    alarm(0);
    for (size_t c = 0; c < CH; c += 9973) { /* layout [RUNS][CH][INNER] */
        for (size_t r = 0; r < RUNS; r++) memcpy(one_x + r * INNER, x + (r * CH + c) * INNER, INNER * sizeof *x);
        float s1;
        int32_t z1;
        CHECK_OK(NULL, clrun_quant_calibrate(one_x, INNER * RUNS, 1, 0, 0, 100, &s1, &z1));
        assert_true(s1 == s[c] && z1 == z[c]);
    }
    free(x), free(s), free(z);
}

static void bad_parameters(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_buf *b, *q;
    CHECK_OK(ctx, clrun_buf_new(ctx, 64, 0, &b));
    CHECK_OK(ctx, clrun_buf_new(ctx, 16, 0, &q));
    float s = 0;
    int32_t z = 0;
    clrun_qparams p = {1, 0, &s, &z};
    CHECK_FAIL(ctx, clrun_quantize(ctx, b, 0, q, 0, 16, &p), CLRUN_INVALID_ARG, "positive and finite");
    s = NAN;
    CHECK_FAIL(ctx, clrun_quantize(ctx, b, 0, q, 0, 16, &p), CLRUN_INVALID_ARG, "positive and finite");
    s = 1, z = 128;
    CHECK_FAIL(ctx, clrun_quantize(ctx, b, 0, q, 0, 16, &p), CLRUN_INVALID_ARG, "-128 to 127");
    z = 0;
    CHECK_FAIL(ctx, clrun_quantize(ctx, b, 0, q, 1, 16, &p), CLRUN_INVALID_ARG, "run past the destination");
    CHECK_FAIL(ctx, clrun_dequantize(ctx, q, 0, b, 1, 16, &p), CLRUN_INVALID_ARG, "run past the destination");
    CHECK_FAIL(ctx, clrun_quantize(ctx, b, 0, q, 0, 16, NULL), CLRUN_INVALID_ARG, "NULL");
    clrun_buf_free(b), clrun_buf_free(q);
}

/* INT8 GEMM against an int64 reference on the host: transposes, batches with strides, offsets,
 * padded leading dimensions, K = 0, beta 1 (add into C), and the fused f32 epilogue. */
static void gemm_s8_in(clrun_ctx *ctx, clrun_gemm_backend be);

static void gemm_s8_exact(void **state) /* every kernel of the op, on any device */
{
    clrun_ctx *ctx = *state;
    gemm_s8_in(ctx, CLRUN_GEMM_CPU_KERNEL);
    gemm_s8_in(ctx, CLRUN_GEMM_GPU_KERNEL);
    gemm_s8_in(ctx, CLRUN_GEMM_AUTO);
    /* the tensor cores: exact on NVIDIA's GPUs, refused in words elsewhere */
    const clrun_device_info *in = clrun_ctx_device(ctx);
    if (strstr(in->platform_vendor, "NVIDIA") && in->type == CLRUN_DEVICE_GPU) {
        gemm_s8_in(ctx, CLRUN_GEMM_TENSOR);
        gemm_s8_in(ctx, CLRUN_GEMM_MMA_SYNC); /* mma.sync beside wgmma in one context */
        if (clrun_gemm_tensor_kernel(ctx, CLRUN_I8) && strcmp(clrun_gemm_tensor_kernel(ctx, CLRUN_I8), "wgmma") == 0) {
            /* other wgmma tiles: 32-byte slices, two warpgroups, one slice in flight, warp-specialised */
            static const char *const tiles[] = {"128,256,2,256,4,0,32", "128,128,2,64,3,1", "128,128,2,128,5,1,32,1",
                                                "128,128,1,128,2,0,64,2"};
            for (int t = 0; t < 4; t++) {
                char spec[64];
                snprintf(spec, sizeof spec, "wgmma:%s", tiles[t]);
                setenv("CLRUN_GEMM_TILES", spec, 1);
                gemm_s8_in(ctx, CLRUN_GEMM_WGMMA);
            }
            unsetenv("CLRUN_GEMM_TILES");
            /* and the mma.sync kernel, in a context that never probes wgmma */
            clrun_ctx *c = NULL;
            setenv("CLRUN_NO_WGMMA", "1", 1);
            CHECK_OK(NULL, clrun_open(&c, getenv("CLRUN_TEST_DEVICE")));
            assert_string_equal(clrun_gemm_tensor_kernel(c, CLRUN_I8), "mma.sync");
            gemm_s8_in(c, CLRUN_GEMM_TENSOR);
            clrun_close(c);
            unsetenv("CLRUN_NO_WGMMA");
        }
    } else {
        clrun_buf *b;
        CHECK_OK(ctx, clrun_buf_new(ctx, 64, 0, &b));
        clrun_gemm_desc d = {0};
        d.m = d.n = d.k = 4, d.alpha = 1, d.type = CLRUN_I8, d.a = d.b = d.c = b, d.lda = d.ldb = d.ldc = 4, d.backend = CLRUN_GEMM_TENSOR;
        CHECK_FAIL(ctx, clrun_gemm_s8(ctx, &d, NULL), CLRUN_UNSUPPORTED, "no matrix-unit kernel for INT8");
        d.backend = CLRUN_GEMM_WGMMA;
        CHECK_FAIL(ctx, clrun_gemm_s8(ctx, &d, NULL), CLRUN_UNSUPPORTED, "the wgmma backend does not run on");
        clrun_buf_free(b);
    }
    /* CLBlast has no INT8 GEMM, built in or not */
    clrun_buf *b;
    CHECK_OK(ctx, clrun_buf_new(ctx, 64, 0, &b));
    clrun_gemm_desc d = {0};
    d.m = d.n = d.k = 4, d.alpha = 1, d.type = CLRUN_I8, d.a = d.b = d.c = b, d.lda = d.ldb = d.ldc = 4, d.backend = CLRUN_GEMM_CLBLAST;
    CHECK_FAIL(ctx, clrun_gemm_s8(ctx, &d, NULL), CLRUN_UNSUPPORTED, "the clblast backend has no kernel for INT8 products");
    d.backend = (clrun_gemm_backend)42;
    CHECK_FAIL(ctx, clrun_gemm_s8(ctx, &d, NULL), CLRUN_INVALID_ARG, "unknown backend 42");
    clrun_buf_free(b);
}

static void gemm_s8_in(clrun_ctx *ctx, clrun_gemm_backend be)
{
    uint64_t rng = test_seed() + 7;
    /* the last: K past the CPU kernel's exact f32 blocks of 1024, extremes only (sums past 2^24) */
    const size_t shapes[][3] = {{1, 1, 1}, {17, 33, 65}, {40, 7, 300}, {3, 100, 16}, {5, 9, 0}, {64, 64, 1000}, {13, 20, 2600}};
    const size_t last = sizeof shapes / sizeof *shapes - 1;
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                const size_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2], batch = 1 + (si % 3);
                const size_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
                const size_t lda = ac + rng_next(&rng) % 3, ldb = bc + rng_next(&rng) % 3, ldc = n + rng_next(&rng) % 3;
                const size_t sa = ar * lda + 5, sb = br * ldb + 3, sc = m * ldc + 2, ao = 7, bo = 2, co = 3;
                const size_t na = ao + batch * sa, nb = bo + batch * sb, nc = co + batch * sc;
                signed char *a = malloc(na + 1), *b = malloc(nb + 1);
                int32_t *c0 = malloc(nc * 4 + 4), *c = malloc(nc * 4 + 4);
                float *f = malloc(nc * 4 + 4), *rs = malloc(m * 4 + 4), *cs = malloc(n * 4 + 4), *bias = malloc(n * 4 + 4);
                for (size_t i = 0; i < na; i++)
                    a[i] = (signed char)(si == last ? (rng_next(&rng) & 7 ? -128 : 127) : (int)(rng_next(&rng) & 255));
                for (size_t i = 0; i < nb; i++)
                    b[i] = (signed char)(si == last ? (rng_next(&rng) & 7 ? -128 : 127) : (int)(rng_next(&rng) & 255));
                a[ao] = -128, b[bo] = -128; /* the extremes */
                for (size_t i = 0; i < nc; i++) c0[i] = (int32_t)(rng_next(&rng) % 2001) - 1000;
                for (size_t i = 0; i < m; i++) rs[i] = 0.001f + rng_float(&rng) * rng_float(&rng);
                for (size_t j = 0; j < n; j++) cs[j] = 0.01f + rng_float(&rng), bias[j] = rng_float(&rng) * 50;
                clrun_buf *ba, *bb, *bc_, *bf, *brs, *bcs, *bbias;
                CHECK_OK(ctx, clrun_buf_new(ctx, na, 0, &ba));
                CHECK_OK(ctx, clrun_buf_new(ctx, nb, 0, &bb));
                CHECK_OK(ctx, clrun_buf_new(ctx, nc * 4, 0, &bc_));
                CHECK_OK(ctx, clrun_buf_new(ctx, nc * 4, 0, &bf));
                CHECK_OK(ctx, clrun_buf_new(ctx, m * 4, 0, &brs));
                CHECK_OK(ctx, clrun_buf_new(ctx, n * 4, 0, &bcs));
                CHECK_OK(ctx, clrun_buf_new(ctx, n * 4, 0, &bbias));
                CHECK_OK(ctx, clrun_upload(ba, 0, a, na));
                CHECK_OK(ctx, clrun_upload(bb, 0, b, nb));
                CHECK_OK(ctx, clrun_upload(bc_, 0, c0, nc * 4));
                CHECK_OK(ctx, clrun_upload(brs, 0, rs, m * 4));
                CHECK_OK(ctx, clrun_upload(bcs, 0, cs, n * 4));
                CHECK_OK(ctx, clrun_upload(bbias, 0, bias, n * 4));
                clrun_gemm_desc d = {0};
                d.trans_a = ta, d.trans_b = tb, d.m = m, d.n = n, d.k = k, d.alpha = 1, d.beta = (si & 1) ? 1.0f : 0.0f, d.type = CLRUN_I8;
                d.backend = be;
                d.a = ba, d.a_off = ao, d.lda = lda, d.stride_a = sa, d.b = bb, d.b_off = bo, d.ldb = ldb, d.stride_b = sb;
                d.c = bc_, d.c_off = co, d.ldc = ldc, d.stride_c = sc, d.batch = batch;
                CHECK_OK(ctx, clrun_gemm_s8(ctx, &d, NULL));
                CHECK_OK(ctx, clrun_download(bc_, 0, c, nc * 4));
                const clrun_s8_epilogue e = {brs, bcs, bbias, (int)(si & 1)};
                d.c = bf, d.beta = 0;
                CHECK_OK(ctx, clrun_gemm_s8(ctx, &d, &e));
                CHECK_OK(ctx, clrun_download(bf, 0, f, nc * 4));
                for (size_t z = 0; z < batch; z++)
                    for (size_t i = 0; i < m; i++)
                        for (size_t j = 0; j < n; j++) {
                            int64_t acc = 0;
                            for (size_t q = 0; q < k; q++) {
                                const int64_t x = a[ao + z * sa + (ta ? q * lda + i : i * lda + q)];
                                const int64_t y = b[bo + z * sb + (tb ? j * ldb + q : q * ldb + j)];
                                acc += x * y;
                            }
                            const size_t at = co + z * sc + i * ldc + j;
                            const int64_t want = (si & 1) ? c0[at] + acc : acc;
                            if (c[at] != want)
                                fail_msg("%zux%zux%zu ta %d tb %d batch %zu: C[%zu][%zu][%zu] = %d, int64 gives %lld", m, n, k, ta, tb,
                                         batch, z, i, j, c[at], (long long)want);
                            volatile float v = (float)acc;
                            v = v * rs[i];
                            v = v * cs[j];
                            v = v + bias[j];
                            const float w = (si & 1) && v < 0 ? 0.0f : v;
                            if (memcmp(&f[at], &w, 4)) fail_msg("epilogue C[%zu][%zu][%zu] = %a, the formula gives %a", z, i, j, f[at], w);
                        }
                clrun_buf_free(ba), clrun_buf_free(bb), clrun_buf_free(bc_), clrun_buf_free(bf), clrun_buf_free(brs), clrun_buf_free(bcs),
                    clrun_buf_free(bbias);
                free(a), free(b), free(c0), free(c), free(f), free(rs), free(cs), free(bias);
            }
    clrun_gemm_desc d = {0};
    d.m = d.n = d.k = 4, d.alpha = 1, d.type = CLRUN_F32;
    CHECK_FAIL(ctx, clrun_gemm_s8(ctx, &d, NULL), CLRUN_INVALID_ARG, "CLRUN_I8");
    d.type = CLRUN_I8, d.alpha = 2;
    CHECK_FAIL(ctx, clrun_gemm_s8(ctx, &d, NULL), CLRUN_INVALID_ARG, "alpha is 1");
    d.alpha = 1, d.k = 200000;
    CHECK_FAIL(ctx, clrun_gemm_s8(ctx, &d, NULL), CLRUN_INVALID_ARG, "131072");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(per_tensor_edges),        cmocka_unit_test(per_channel_middle_axis), cmocka_unit_test(calibrate),
        cmocka_unit_test(calibrate_many_channels), cmocka_unit_test(bad_parameters),          cmocka_unit_test(gemm_s8_exact),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
