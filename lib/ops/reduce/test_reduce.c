/* test_reduce.c — reductions against an fp64 reference: sum, dot, norm2 within the documented bound
 * (also at n = 10^8), max/min/argmax with NumPy's NaN and tie rules; both kernel shapes (GPU-shaped
 * strided work-groups and CPU-shaped chunks), f32 and f16 input, awkward sizes and offsets. */
#include "helpers.h"

#include <math.h>

static int teardown(void **state)
{
    unsetenv("CLRUN_REDUCE_SHAPE");
    return ctx_teardown(state);
}

static const double U = 1.0 / 16777216.0; /* 2^-24 */

static double bound(double S, size_t n) { return 8 * U * S + 4 * U * U * (double)n * S + 1e-300; }

/* Upload n values (f32, or f16 when half) at offset off of a fresh buffer; values[] receives what
 * the device sees (after rounding to f16). */
static clrun_buf *upload(clrun_ctx *ctx, float *values, size_t n, size_t off, int half)
{
    size_t es = half ? 2 : 4;
    clrun_buf *b = NULL;
    CHECK_OK(ctx, clrun_buf_new(ctx, (n + off + 1) * es, 0, &b));
    if (half) {
        uint16_t *h = malloc((n + off + 1) * 2);
        for (size_t i = 0; i < n + off + 1; i++) h[i] = 0x3C00; /* 1.0 around the range: must not count */
        for (size_t i = 0; i < n; i++) h[off + i] = clrun_f32_to_f16(values[i]), values[i] = clrun_f16_to_f32(h[off + i]);
        CHECK_OK(ctx, clrun_upload(b, 0, h, (n + off + 1) * 2));
        free(h);
    } else {
        float *f = malloc((n + off + 1) * 4);
        for (size_t i = 0; i < n + off + 1; i++) f[i] = 1.0f;
        memcpy(f + off, values, n * 4);
        CHECK_OK(ctx, clrun_upload(b, 0, f, (n + off + 1) * 4));
        free(f);
    }
    return b;
}

static void sums_within_bound(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    const size_t sizes[] = {0, 1, 2, 3, 5, 15, 16, 17, 63, 255, 1000, 4097, 65537, 1000003};
    const char *shapes[] = {"gpu", "cpu"};
    for (int sh = 0; sh < 2; sh++) {
        setenv("CLRUN_REDUCE_SHAPE", shapes[sh], 1);
        for (int half = 0; half < 2; half++)
            for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
                size_t n = sizes[k], off = k % 3 == 0 ? 0 : (k % 3 == 1 ? 4 : 1 + rng_next(&s) % 13);
                float *x = malloc((n + 1) * 4), *y = malloc((n + 1) * 4);
                for (size_t i = 0; i < n; i++) x[i] = rng_float(&s) * (1 + (float)(rng_next(&s) % 1000)), y[i] = rng_float(&s);
                clrun_buf *bx = upload(ctx, x, n, off, half), *by = upload(ctx, y, n, off + 1, half);
                clrun_dtype t = half ? CLRUN_F16 : CLRUN_F32;
                double sum = 0, sabs = 0, dot = 0, dabs = 0, sq = 0;
                for (size_t i = 0; i < n; i++) {
                    sum += x[i], sabs += fabs(x[i]);
                    dot += (double)x[i] * y[i], dabs += fabs((double)x[i] * y[i]);
                    sq += (double)x[i] * x[i];
                }
                double got;
                CHECK_OK(ctx, clrun_sum(ctx, t, bx, off, n, &got));
                if (fabs(got - sum) > bound(sabs, n))
                    fail_msg("sum %s %s n=%zu off=%zu: %.17g vs %.17g", shapes[sh], half ? "f16" : "f32", n, off, got, sum);
                CHECK_OK(ctx, clrun_dot(ctx, t, bx, off, by, off + 1, n, &got));
                if (fabs(got - dot) > bound(dabs, n)) fail_msg("dot %s n=%zu: %.17g vs %.17g", shapes[sh], n, got, dot);
                CHECK_OK(ctx, clrun_norm2(ctx, t, bx, off, n, &got));
                if (fabs(got * got - sq) > bound(sq, n) + 4 * U * sq)
                    fail_msg("norm2 %s n=%zu: %.17g vs %.17g", shapes[sh], n, got, sqrt(sq));
                clrun_buf_free(bx);
                clrun_buf_free(by);
                free(x);
                free(y);
            }
    }
    unsetenv("CLRUN_REDUCE_SHAPE");
}

/* n = 10^8: fresh random data with cancellation, and 10^8 ones (a plain f32 loop stops at 2^24). */
static void hundred_million(void **state)
{
    clrun_ctx *ctx = *state;
    const size_t n = 100000000;
    uint64_t s = test_seed();
    float *x = malloc(n * 4);
    assert_non_null(x);
    double sum = 0, sabs = 0;
    for (size_t i = 0; i < n; i++) {
        x[i] = rng_float(&s) + 0.25f;
        sum += x[i], sabs += fabs(x[i]);
    }
    clrun_buf *b = NULL;
    CHECK_OK(ctx, clrun_buf_new(ctx, n * 4, 0, &b));
    CHECK_OK(ctx, clrun_upload(b, 0, x, n * 4));
    double got = 0;
    CHECK_OK(ctx, clrun_sum(ctx, CLRUN_F32, b, 0, n, &got));
    fprintf(stderr, "sum of 1e8: error %.3g, bound %.3g (S = %.6g)\n", fabs(got - sum), bound(sabs, n), sabs);
    assert_true(fabs(got - sum) <= bound(sabs, n));
    float naive = 0;
    for (size_t i = 0; i < n; i++) naive += 1.0f, x[i] = 1.0f;
    CHECK_OK(ctx, clrun_upload(b, 0, x, n * 4));
    CHECK_OK(ctx, clrun_sum(ctx, CLRUN_F32, b, 0, n, &got));
    assert_true(naive == 16777216.0f); /* what a plain f32 loop gives */
    assert_true(got == 1e8);
    clrun_buf_free(b);
    free(x);
}

static void extremes_and_nan_rules(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    const size_t sizes[] = {1, 2, 7, 255, 256, 257, 4099, 100003};
    const char *shapes[] = {"gpu", "cpu"};
    for (int sh = 0; sh < 2; sh++) {
        setenv("CLRUN_REDUCE_SHAPE", shapes[sh], 1);
        for (int half = 0; half < 2; half++)
            for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
                for (int variant = 0; variant < 3; variant++) { /* plain, ties, NaNs */
                    size_t n = sizes[k], off = variant;
                    float *x = malloc(n * 4);
                    for (size_t i = 0; i < n; i++) x[i] = rng_float(&s) * 1000;
                    if (variant == 1) { /* the maximum and minimum appear several times */
                        for (size_t r = 0; r < 3; r++) x[rng_next(&s) % n] = 5000.0f, x[rng_next(&s) % n] = -5000.0f;
                    }
                    if (variant == 2) x[rng_next(&s) % n] = NAN, x[rng_next(&s) % n] = NAN;
                    clrun_buf *b = upload(ctx, x, n, off, half);
                    clrun_dtype t = half ? CLRUN_F16 : CLRUN_F32;
                    float mx = x[0], mn = x[0];
                    size_t ai = 0, first_nan = n;
                    for (size_t i = 0; i < n; i++) {
                        if (isnan(x[i]) && first_nan == n) first_nan = i;
                        if (x[i] > mx) mx = x[i];
                        if (x[i] < mn) mn = x[i];
                        if (x[i] > x[ai]) ai = i;
                    }
                    if (first_nan < n) ai = first_nan;
                    float got;
                    size_t gi;
                    CHECK_OK(ctx, clrun_max(ctx, t, b, off, n, &got));
                    if (first_nan < n) assert_true(isnan(got));
                    else if (got != mx) fail_msg("max %s n=%zu: %g vs %g", shapes[sh], n, got, mx);
                    CHECK_OK(ctx, clrun_min(ctx, t, b, off, n, &got));
                    if (first_nan < n) assert_true(isnan(got));
                    else if (got != mn) fail_msg("min %s n=%zu: %g vs %g", shapes[sh], n, got, mn);
                    CHECK_OK(ctx, clrun_argmax(ctx, t, b, off, n, &gi));
                    if (gi != ai)
                        fail_msg("argmax %s %s n=%zu variant %d: %zu vs %zu", shapes[sh], half ? "f16" : "f32", n, variant, gi, ai);
                    clrun_buf_free(b);
                    free(x);
                }
    }
    unsetenv("CLRUN_REDUCE_SHAPE");
}

/* Infinities: a sum, dot or norm over data holding +inf (or -inf) at any place is that infinity,
 * both signs at once NaN, as NumPy's; the compensation once turned an infinite running sum into
 * NaN from the next element on. Both shapes, f32 and f16, awkward sizes. */
static void infinities(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    const size_t sizes[] = {1, 5, 16, 17, 255, 4099, 100003};
    const char *shapes[] = {"gpu", "cpu"};
    for (int sh = 0; sh < 2; sh++) {
        setenv("CLRUN_REDUCE_SHAPE", shapes[sh], 1);
        for (int half = 0; half < 2; half++)
            for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
                for (int variant = 0; variant < 3; variant++) { /* +inf, -inf, both */
                    const size_t n = sizes[k];
                    float *x = malloc(n * 4);
                    for (size_t i = 0; i < n; i++) x[i] = rng_float(&s) * 100;
                    const size_t p1 = rng_next(&s) % n, p2 = rng_next(&s) % n;
                    x[p1] = variant == 1 ? -INFINITY : INFINITY;
                    if (variant == 2 && p2 != p1) x[p2] = -INFINITY;
                    const int both = variant == 2 && p2 != p1;
                    clrun_buf *b = upload(ctx, x, n, 1, half);
                    const clrun_dtype t = half ? CLRUN_F16 : CLRUN_F32;
                    double sum = 0, dot = 0, nrm = 0;
                    CHECK_OK(ctx, clrun_sum(ctx, t, b, 1, n, &sum));
                    CHECK_OK(ctx, clrun_dot(ctx, t, b, 1, b, 1, n, &dot));
                    CHECK_OK(ctx, clrun_norm2(ctx, t, b, 1, n, &nrm));
                    const double want = both ? NAN : variant == 1 ? -INFINITY : INFINITY;
                    if (!(both ? isnan(sum) : sum == want) || dot != INFINITY || nrm != INFINITY)
                        fail_msg("%s shape, %s, n=%zu, inf at %zu%s: sum %g (want %g), dot %g, norm %g", shapes[sh], half ? "f16" : "f32",
                                 n, p1, both ? " and -inf" : "", sum, want, dot, nrm);
                    clrun_buf_free(b);
                    free(x);
                }
    }
}

static void empty_and_errors(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_buf *b = NULL;
    CHECK_OK(ctx, clrun_buf_new(ctx, 64, 0, &b));
    double d = 7;
    float f;
    size_t i;
    CHECK_OK(ctx, clrun_sum(ctx, CLRUN_F32, b, 3, 0, &d));
    assert_true(d == 0.0);
    CHECK_FAIL(ctx, clrun_max(ctx, CLRUN_F32, b, 0, 0, &f), CLRUN_INVALID_ARG, "no elements");
    CHECK_FAIL(ctx, clrun_argmax(ctx, CLRUN_F32, b, 0, 0, &i), CLRUN_INVALID_ARG, "no elements");
    CHECK_FAIL(ctx, clrun_sum(ctx, CLRUN_F32, b, 10, 7, &d), CLRUN_INVALID_ARG, "outside");
    CHECK_FAIL(ctx, clrun_sum(ctx, CLRUN_I32, b, 0, 4, &d), CLRUN_INVALID_ARG, "not supported");
    CHECK_FAIL(ctx, clrun_sum(ctx, CLRUN_F32, b, 0, 4, NULL), CLRUN_INVALID_ARG, "NULL");
    clrun_buf_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sums_within_bound), cmocka_unit_test(extremes_and_nan_rules), cmocka_unit_test(infinities),
        cmocka_unit_test(empty_and_errors),  cmocka_unit_test(hundred_million),
    };
    return cmocka_run_group_tests(tests, ctx_setup, teardown);
}
