/* test_vector.c — element-wise ops against a CPU reference: every op, f32 and f16 storage, awkward
 * sizes, offsets (aligned and not), in place; bit-exact (where the device keeps f32 subnormals;
 * where it flushes them, bit-exact with a reference that flushes them too). Host f16 conversions against cl_half.h. */
#include "helpers.h"

#include <CL/cl_half.h>
#include <math.h>

static float ref(clrun_vec_op op, float x, float y, float z, float alpha)
{
    switch (op) {
    case CLRUN_MUL: return x * y;
    case CLRUN_ADD: return x + y;
    case CLRUN_SUB: return x - y;
    case CLRUN_DIV: return x / y;
    case CLRUN_AXPY: return fmaf(alpha, x, y);
    case CLRUN_SCALE: return alpha * x;
    case CLRUN_FMA: return fmaf(x, y, z);
    }
    return NAN;
}

static int same(float a, float b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, 4) == 0; }

/* A device without f32 subnormals (clrun_device_info.fp32_denorms 0: llvmpipe) flushes them to
 * zero, in and out: the reference then does so too, either zero's sign accepted. */
static float flush(float v) { return fpclassify(v) == FP_SUBNORMAL ? copysignf(0.0f, v) : v; }

/* Run op over n elements at the given offsets; compare with the reference, and check that nothing
 * outside [d_off, d_off + n) of dst changed. */
static void check_op(clrun_ctx *ctx, clrun_vec_op op, clrun_dtype t, size_t n, size_t d_off, size_t a_off, size_t b_off, size_t c_off,
                     uint64_t *s)
{
    size_t es = clrun_dtype_size(t), cap = n + 16;
    float *x = malloc(cap * 4), *y = malloc(cap * 4), *z = malloc(cap * 4), *d = malloc(cap * 4);
    uint16_t *hx = malloc(cap * 2), *hy = malloc(cap * 2), *hz = malloc(cap * 2), *hd = malloc(cap * 2);
    float alpha = rng_float(s) * 3.0f;
    for (size_t i = 0; i < cap; i++) {
        x[i] = rng_float(s) * 100.0f, y[i] = rng_float(s) * 100.0f, z[i] = rng_float(s), d[i] = -12345.0f;
        if (i % 97 == 5) y[i] = 0.0f; /* division by zero: inf, nan */
        if (i % 89 == 7) x[i] = INFINITY;
        if (i % 83 == 3) x[i] = NAN;
        if (i % 79 == 11) x[i] = 1e-41f; /* subnormal */
        if (t == CLRUN_F16) {
            hx[i] = clrun_f32_to_f16(x[i]), hy[i] = clrun_f32_to_f16(y[i]), hz[i] = clrun_f32_to_f16(z[i]), hd[i] = 0x7E00u;
            x[i] = clrun_f16_to_f32(hx[i]), y[i] = clrun_f16_to_f32(hy[i]), z[i] = clrun_f16_to_f32(hz[i]);
        }
    }
    clrun_buf *bx, *by, *bz, *bd;
    CHECK_OK(ctx, clrun_buf_new(ctx, cap * es, 0, &bx));
    CHECK_OK(ctx, clrun_buf_new(ctx, cap * es, 0, &by));
    CHECK_OK(ctx, clrun_buf_new(ctx, cap * es, 0, &bz));
    CHECK_OK(ctx, clrun_buf_new(ctx, cap * es, 0, &bd));
    CHECK_OK(ctx, clrun_upload(bx, 0, t == CLRUN_F16 ? (void *)hx : (void *)x, cap * es));
    CHECK_OK(ctx, clrun_upload(by, 0, t == CLRUN_F16 ? (void *)hy : (void *)y, cap * es));
    CHECK_OK(ctx, clrun_upload(bz, 0, t == CLRUN_F16 ? (void *)hz : (void *)z, cap * es));
    CHECK_OK(ctx, clrun_upload(bd, 0, t == CLRUN_F16 ? (void *)hd : (void *)d, cap * es));
    CHECK_OK(ctx, clrun_vec(ctx, op, t, n, alpha, bd, d_off, bx, a_off, by, b_off, bz, c_off));
    void *out = malloc(cap * es);
    CHECK_OK(ctx, clrun_download(bd, 0, out, cap * es));
    for (size_t i = 0; i < cap; i++) {
        int inside = i >= d_off && i < d_off + n;
        float got = t == CLRUN_F16 ? clrun_f16_to_f32(((uint16_t *)out)[i]) : ((float *)out)[i];
        if (!inside) {
            float was = t == CLRUN_F16 ? clrun_f16_to_f32(0x7E00u) : -12345.0f;
            if (!same(got, was))
                fail_msg("%s %s n=%zu: dst[%zu] outside the range was written", clrun_vec_op_name(op), clrun_dtype_name(t), n, i);
            continue;
        }
        size_t j = i - d_off;
        float want = ref(op, x[a_off + j], y[b_off + j], z[c_off + j], alpha);
        if (t == CLRUN_F16) want = clrun_f16_to_f32(clrun_f32_to_f16(want));
        if (!clrun_ctx_device(ctx)->fp32_denorms && !same(got, want)) {
            want = flush(ref(op, flush(x[a_off + j]), flush(y[b_off + j]), flush(z[c_off + j]), alpha));
            if (t == CLRUN_F16) want = clrun_f16_to_f32(clrun_f32_to_f16(want));
            if (got == 0.0f && want == 0.0f) want = got;
        }
        if (!same(got, want))
            fail_msg("%s %s n=%zu offsets %zu/%zu/%zu/%zu: [%zu] got %.9g want %.9g (x %.9g y %.9g z %.9g alpha %.9g)",
                     clrun_vec_op_name(op), clrun_dtype_name(t), n, d_off, a_off, b_off, c_off, j, got, want, x[a_off + j], y[b_off + j],
                     z[c_off + j], alpha);
    }
    free(out);
    free(x), free(y), free(z), free(d), free(hx), free(hy), free(hz), free(hd);
    clrun_buf_free(bx), clrun_buf_free(by), clrun_buf_free(bz), clrun_buf_free(bd);
}

static void every_op_sizes_offsets(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    const size_t sizes[] = {0, 1, 2, 3, 4, 5, 7, 31, 97, 1000, 4099, 65537};
    const clrun_dtype types[] = {CLRUN_F32, CLRUN_F16};
    for (int op = CLRUN_MUL; op <= CLRUN_FMA; op++)
        for (int t = 0; t < 2; t++)
            for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
                size_t n = sizes[k];
                check_op(ctx, (clrun_vec_op)op, types[t], n, 0, 0, 0, 0, &s);                                   /* vector kernel */
                check_op(ctx, (clrun_vec_op)op, types[t], n, 4, 8, 12, 0, &s);                                  /* offsets of 4 */
                check_op(ctx, (clrun_vec_op)op, types[t], n, 8, 16, 0, 8, &s);                                  /* offsets of 8 */
                check_op(ctx, (clrun_vec_op)op, types[t], n, 1 + rng_next(&s) % 5, rng_next(&s) % 7, 3, 5, &s); /* unaligned */
            }
}

static void in_place_and_errors(void **state)
{
    clrun_ctx *ctx = *state;
    enum { N = 1001 };
    float x[N], y[N], back[N];
    uint64_t s = test_seed();
    for (int i = 0; i < N; i++) x[i] = rng_float(&s), y[i] = rng_float(&s);
    clrun_buf *bx, *by;
    CHECK_OK(ctx, clrun_buf_new(ctx, sizeof x, 0, &bx));
    CHECK_OK(ctx, clrun_buf_new(ctx, sizeof y, 0, &by));
    CHECK_OK(ctx, clrun_upload(bx, 0, x, sizeof x));
    CHECK_OK(ctx, clrun_upload(by, 0, y, sizeof y));
    CHECK_OK(ctx, clrun_axpy(ctx, CLRUN_F32, N, 2.5f, bx, by)); /* y = 2.5 x + y */
    CHECK_OK(ctx, clrun_download(by, 0, back, sizeof back));
    for (int i = 0; i < N; i++) assert_true(back[i] == fmaf(2.5f, x[i], y[i]));
    CHECK_OK(ctx, clrun_mul(ctx, CLRUN_F32, N, bx, bx, bx)); /* x = x * x */
    CHECK_OK(ctx, clrun_download(bx, 0, back, sizeof back));
    for (int i = 0; i < N; i++) assert_true(back[i] == x[i] * x[i]);
    CHECK_FAIL(ctx, clrun_add(ctx, CLRUN_F32, N + 1, bx, bx, by), CLRUN_INVALID_ARG, "outside");
    CHECK_FAIL(ctx, clrun_vec(ctx, CLRUN_MUL, CLRUN_F32, 10, 0, bx, N - 5, bx, 0, by, 0, NULL, 0), CLRUN_INVALID_ARG, "dst");
    CHECK_FAIL(ctx, clrun_vec(ctx, CLRUN_MUL, CLRUN_I32, 10, 0, bx, 0, bx, 0, by, 0, NULL, 0), CLRUN_INVALID_ARG, "not supported");
    CHECK_FAIL(ctx, clrun_vec(ctx, CLRUN_FMA, CLRUN_F32, 10, 0, bx, 0, bx, 0, by, 0, NULL, 0), CLRUN_INVALID_ARG, "operand c is NULL");
    CHECK_FAIL(ctx, clrun_vec(ctx, (clrun_vec_op)99, CLRUN_F32, 10, 0, bx, 0, bx, 0, by, 0, NULL, 0), CLRUN_INVALID_ARG, "unknown op");
    CHECK_OK(ctx, clrun_vec(ctx, CLRUN_SCALE, CLRUN_F32, 10, 2.0f, by, 0, bx, 0, NULL, 0, NULL, 0)); /* b unused */
    clrun_buf_free(bx);
    clrun_buf_free(by);
}

/* clrun_f32_to_f16 against Khronos' cl_half_from_float(x, CL_HALF_RTE) on a strided sweep of all
 * float bit patterns plus every pattern near the edges; the full 2^32 sweep is tools/half-sweep. */
static void host_half_conversions(void **state)
{
    (void)state;
    uint64_t s = test_seed();
    uint32_t start = (uint32_t)rng_next(&s) % 4099;
    size_t checked = 0;
    for (uint64_t b = start; b <= 0xFFFFFFFFull; b += 4099) {
        uint32_t u = (uint32_t)b;
        float f;
        memcpy(&f, &u, 4);
        uint16_t want = cl_half_from_float(f, CL_HALF_RTE), got = clrun_f32_to_f16(f);
        if (isnan(f)) assert_true((got & 0x7C00u) == 0x7C00u && (got & 0x3FFu));
        else if (got != want) fail_msg("f32 %08x -> f16 %04x, Khronos says %04x", u, got, want);
        checked++;
    }
    for (uint32_t h = 0; h < 0x10000u; h++) { /* every half, both ways (the reference decodes by the
                                                 definition; cl_half_to_float has a signed-shift UB) */
        uint32_t e = (h >> 10) & 0x1F, m = h & 0x3FF;
        float k = e == 31 ? (m ? NAN : INFINITY) : e ? ldexpf(1.0f + m / 1024.0f, (int)e - 15) : ldexpf((float)m, -24);
        if (h & 0x8000) k = -k;
        float f = clrun_f16_to_f32((uint16_t)h);
        assert_true(same(f, k) || (isnan(f) && isnan(k)));
        if (!isnan(f)) assert_int_equal(clrun_f32_to_f16(f), h);
    }
    assert_true(checked > 1000000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_op_sizes_offsets),
        cmocka_unit_test(in_place_and_errors),
        cmocka_unit_test(host_half_conversions),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
