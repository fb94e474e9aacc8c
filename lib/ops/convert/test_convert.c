/* test_convert.c — f32 <-> f16 and f32 <-> bf16: the host converters over all 2^32 float bit
 * patterns (f16 against Khronos' cl_half_from_float(x, CL_HALF_RTE), bf16 against a rounding
 * computed in double), the 2^16 half and bfloat16 patterns against their exact values, and the
 * device conversions (clrun_cast) against the host ones on 2^26 spread patterns, every special
 * value, and offsets. */
#include "helpers.h"

#include <CL/cl_half.h>
#include <math.h>

static float bits_f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void host_f16_all_patterns(void **state)
{
    (void)state;
    for (uint64_t b = 0; b <= 0xFFFFFFFFull; b++) {
        const float f = bits_f((uint32_t)b);
        const uint16_t got = clrun_f32_to_f16(f);
        if (isnan(f)) {
            if ((got & 0x7C00u) != 0x7C00u || !(got & 0x3FFu)) fail_msg("f32 %08x (NaN) -> f16 %04x is not NaN", (unsigned)b, got);
        } else {
            const uint16_t want = cl_half_from_float(f, CL_HALF_RTE);
            if (got != want) fail_msg("f32 %08x -> f16 %04x, Khronos says %04x", (unsigned)b, got, want);
        }
    }
    for (uint32_t h = 0; h < 65536; h++) { /* exact values: (-1)^s · m · 2^(e-25) */
        const unsigned e = (h >> 10) & 31, m = h & 1023;
        const float got = clrun_f16_to_f32((uint16_t)h);
        if (e == 31) {
            assert_true(m ? isnan(got) : isinf(got));
            continue;
        }
        const double v = (h & 0x8000 ? -1.0 : 1.0) * (e ? ldexp(1024.0 + m, (int)e - 25) : ldexp(m, -24));
        if ((double)got != v || !!signbit(got) != !!(h & 0x8000)) fail_msg("f16 %04x -> %.9g, want %.9g", h, got, v);
    }
}

/* bf16 by another route: the two bf16 neighbours of x (truncated and one ulp up) compared in double */
static uint16_t bf16_reference(uint32_t u)
{
    const float f = bits_f(u);
    if (isnan(f)) return 0x7FC0u;
    if (isinf(f)) return (uint16_t)(u >> 16);
    const uint32_t lo = u & 0xFFFF0000u, hi = lo + 0x10000u;
    const double x = fabs((double)f), a = fabs((double)bits_f(lo));
    const double b = ((hi >> 23) & 0xFF) == 0xFF ? ldexp(1.0, 128) : fabs((double)bits_f(hi)); /* past the largest: 2^128 */
    const double da = x - a, db = b - x;
    if (da < db || (da == db && !((lo >> 16) & 1))) return (uint16_t)(lo >> 16);
    return (uint16_t)(hi >> 16);
}

static void host_bf16_all_patterns(void **state)
{
    (void)state;
    for (uint64_t b = 0; b <= 0xFFFFFFFFull; b++) {
        const uint32_t u = (uint32_t)b;
        if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFFu)) { /* NaN */
            if (clrun_f32_to_bf16(bits_f(u)) != 0x7FC0u)
                fail_msg("f32 %08x (NaN) -> bf16 %04x, want 7fc0", u, clrun_f32_to_bf16(bits_f(u)));
            continue;
        }
        const uint16_t got = clrun_f32_to_bf16(bits_f(u)), want = bf16_reference(u);
        if (got != want) fail_msg("f32 %08x -> bf16 %04x, want %04x", u, got, want);
    }
    for (uint32_t h = 0; h < 65536; h++) {
        const float got = clrun_bf16_to_f32((uint16_t)h);
        const uint32_t back = (uint32_t)h << 16;
        assert_memory_equal(&got, &back, 4);
    }
}

/* Patterns for the device: 2^26 spread over all 2^32 (a random start, stride 64) and the specials. */
static size_t device_inputs(uint32_t *in, size_t cap, uint64_t *s)
{
    static const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00001u, 0x7F800001u,
                                        0x7F7FFFFFu, 0x00000001u, 0x807FFFFFu, 0x477FE000u, 0x477FEFFFu, 0x477FF000u, 0x477FF001u,
                                        0x33000000u, 0x33000001u, 0x387FC000u, 0x38800000u, 0x3F808000u, 0x3F818000u, 0x7F7F8000u};
    size_t n = 0;
    for (size_t i = 0; i < sizeof specials / sizeof *specials; i++) in[n++] = specials[i];
    const uint32_t start = (uint32_t)(rng_next(s) % 64);
    for (uint64_t b = start; b <= 0xFFFFFFFFull && n < cap; b += 64) in[n++] = (uint32_t)b;
    return n;
}

static void device_casts(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    const size_t cap = ((size_t)1 << 26) + 64;
    uint32_t *in = malloc(cap * 4), *back = malloc(cap * 4);
    uint16_t *out = malloc(cap * 2);
    assert_non_null(in), assert_non_null(out), assert_non_null(back);
    const size_t n_all = device_inputs(in, cap, &s), off_max = 4;
    clrun_buf *b32, *b16;
    CHECK_OK(ctx, clrun_buf_new(ctx, (n_all + off_max) * 4, 0, &b32));
    CHECK_OK(ctx, clrun_buf_new(ctx, (n_all + off_max) * 2, 0, &b16));
    /* pass 0: offsets of 4, every input, a count that leaves a tail (the four-wide kernels);
     * pass 1: offsets of 3 (the one-element kernels) on the first 2^20 + 5 inputs */
    for (int pass = 0; pass < 2; pass++) {
        const size_t off = pass ? 3 : 4, n = pass ? ((size_t)1 << 20) + 5 : n_all - (n_all % 4 == 0), nb = pass ? 65536 : 65535;
        CHECK_OK(ctx, clrun_upload(b32, off * 4, in, n * 4));
        for (int bf = 0; bf < 2; bf++) {
            const clrun_dtype t = bf ? CLRUN_BF16 : CLRUN_F16;
            CHECK_OK(ctx, clrun_cast(ctx, b32, off, CLRUN_F32, b16, off, t, n));
            CHECK_OK(ctx, clrun_download(b16, off * 2, out, n * 2));
            for (size_t i = 0; i < n; i++) {
                const float f = bits_f(in[i]);
                const uint16_t want = bf ? clrun_f32_to_bf16(f) : clrun_f32_to_f16(f);
                const int nan_ok = !bf && isnan(f) && (out[i] & 0x7C00u) == 0x7C00u && (out[i] & 0x3FFu); /* any f16 NaN */
                if (out[i] != want && !nan_ok) fail_msg("device f32 %08x -> %s %04x, host %04x", in[i], bf ? "bf16" : "f16", out[i], want);
            }
            /* back: every 16-bit pattern (pass 0: all but the last, for a tail) */
            for (uint32_t h = 0; h < 65536; h++) out[h] = (uint16_t)h;
            CHECK_OK(ctx, clrun_upload(b16, off * 2, out, 65536 * 2));
            CHECK_OK(ctx, clrun_cast(ctx, b16, off, t, b32, 0, CLRUN_F32, nb));
            CHECK_OK(ctx, clrun_download(b32, 0, back, nb * 4));
            for (uint32_t h = 0; h < nb; h++) {
                const float want = bf ? clrun_bf16_to_f32((uint16_t)h) : clrun_f16_to_f32((uint16_t)h), got = bits_f(back[h]);
                if (isnan(want) ? !isnan(got) : memcmp(&got, &want, 4) != 0)
                    fail_msg("device %s %04x -> f32 %08x", bf ? "bf16" : "f16", h, back[h]);
            }
            CHECK_OK(ctx, clrun_upload(b32, off * 4, in, n * 4));
        }
    }
    const size_t n = n_all, off = off_max; /* n + off + 1 elements run one past the buffers */
    CHECK_FAIL(ctx, clrun_cast(ctx, b32, 0, CLRUN_F16, b16, 0, CLRUN_BF16, 4), CLRUN_UNSUPPORTED, "f16 to bf16");
    CHECK_FAIL(ctx, clrun_cast(ctx, b32, n, CLRUN_F32, b16, 0, CLRUN_F16, off + 1), CLRUN_INVALID_ARG, "source buffer");
    CHECK_FAIL(ctx, clrun_cast(ctx, b32, 0, CLRUN_F32, b16, n, CLRUN_F16, off + 1), CLRUN_INVALID_ARG, "destination buffer");
    clrun_buf_free(b32), clrun_buf_free(b16);
    free(in), free(out), free(back);
}

/* One element-type enum: a zeroed GEMM descriptor or gradient means f32. */
static void one_type_enum(void **state)
{
    (void)state;
    clrun_gemm_desc d = {0};
    clrun_grad g = {0};
    assert_int_equal(d.type, CLRUN_F32);
    assert_int_equal(g.type, CLRUN_F32);
    assert_int_equal(clrun_dtype_size(CLRUN_BF16), 2);
    assert_string_equal(clrun_dtype_name(CLRUN_BF16), "bf16");
    clrun_dtype t;
    CHECK_OK(NULL, clrun_dtype_parse("bfloat16", &t));
    assert_int_equal(t, CLRUN_BF16);
    CHECK_OK(NULL, clrun_dtype_parse("ushort", &t)); /* the OpenCL name stays u16's */
    assert_int_equal(t, CLRUN_U16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(host_f16_all_patterns), cmocka_unit_test(host_bf16_all_patterns),
                                       cmocka_unit_test(device_casts), cmocka_unit_test(one_type_enum)};
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
