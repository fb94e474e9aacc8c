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

static void check(clrun_ctx *ctx, const float *x, size_t n, const clrun_qparams *p)
{
    clrun_buf *bx, *bq, *by;
    signed char *q = malloc(n + 1);
    float *y = malloc(n * 4 + 4);
    CHECK_OK(ctx, clrun_buf_new(ctx, n * 4 + 4, 0, &bx));
    CHECK_OK(ctx, clrun_buf_new(ctx, n + 3, 0, &bq));
    CHECK_OK(ctx, clrun_buf_new(ctx, n * 4 + 4, 0, &by));
    CHECK_OK(ctx, clrun_upload(bx, 4, x, n * 4)); /* from element 1, to element 3: offsets */
    CHECK_OK(ctx, clrun_quantize(ctx, bx, 1, bq, 3, n, p));
    CHECK_OK(ctx, clrun_download(bq, 3, q, n));
    CHECK_OK(ctx, clrun_dequantize(ctx, bq, 3, by, 1, n, p));
    CHECK_OK(ctx, clrun_download(by, 4, y, n * 4));
    const size_t ch = p->channels ? p->channels : 1;
    for (size_t i = 0; i < n; i++) {
        const size_t c = ch == 1 ? 0 : (i / p->inner) % ch;
        const signed char w = want_q(x[i], p->scale[c], p->zero_point[c]);
        if (q[i] != w) fail_msg("x[%zu] = %a (scale %a, zero point %d): %d, the formula gives %d", i, x[i], p->scale[c], p->zero_point[c], q[i], w);
        const float back = (float)(w - p->zero_point[c]) * p->scale[c];
        if (memcmp(&y[i], &back, 4)) fail_msg("dequantize q[%zu] = %d: %a, the formula gives %a", i, w, y[i], back);
    }
    clrun_buf_free(bx), clrun_buf_free(bq), clrun_buf_free(by);
    free(q), free(y);
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
    enum { A = 3, C = 7, I = 50 }; /* shape A × C × I, the channel axis in the middle */
    float *x = malloc(A * C * I * 4), s[C];
    int32_t zp[C];
    for (int c = 0; c < C; c++) s[c] = 0.01f + (float)(rng_next(&rng) % 1000) / 997.0f, zp[c] = (int)(rng_next(&rng) % 256) - 128;
    for (size_t i = 0; i < A * C * I; i++) x[i] = rng_float(&rng) * 200 * s[(i / I) % C];
    const clrun_qparams p = {C, I, s, zp};
    check(ctx, x, A * C * I, &p);
    free(x);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(per_tensor_edges),
        cmocka_unit_test(per_channel_middle_axis),
        cmocka_unit_test(calibrate),
        cmocka_unit_test(bad_parameters),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
