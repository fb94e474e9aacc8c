/* test_scan.c — clrun_scan against a host loop: every type and op, inclusive and exclusive, rows of
 * awkward lengths (0, 1, 2^k ± 1, primes, several tiles and tiles of tiles), offsets, in place;
 * integer sums exact (wrapping), float sums within pairwise summation's bound, max/min with NaN. */
#include "helpers.h"

#include <math.h>

static double get(const void *p, clrun_dtype t, size_t i)
{
    switch (t) {
    case CLRUN_I32: return ((const int32_t *)p)[i];
    case CLRUN_U32: return ((const uint32_t *)p)[i];
    case CLRUN_I64: return (double)((const int64_t *)p)[i];
    case CLRUN_U64: return (double)((const uint64_t *)p)[i];
    case CLRUN_F32: return ((const float *)p)[i];
    default: return ((const double *)p)[i];
    }
}

static void fill(void *p, clrun_dtype t, size_t n, uint64_t *s, int nans)
{
    for (size_t i = 0; i < n; i++) {
        const uint64_t r = rng_next(s);
        switch (t) {
        case CLRUN_I32: ((int32_t *)p)[i] = (int32_t)r; break; /* full range: sums wrap */
        case CLRUN_U32: ((uint32_t *)p)[i] = (uint32_t)r; break;
        case CLRUN_I64: ((int64_t *)p)[i] = (int64_t)r; break;
        case CLRUN_U64: ((uint64_t *)p)[i] = r; break;
        case CLRUN_F32: ((float *)p)[i] = nans && r % 997 == 3 ? NAN : rng_float(s) * 100; break;
        default: ((double *)p)[i] = nans && r % 997 == 3 ? NAN : (double)rng_float(s) * 100; break;
        }
    }
}

/* the host's scan of row x (n elements) into y, integers as unsigned 64-bit arithmetic */
static void host(const void *x, void *y, clrun_dtype t, clrun_scan_op op, int exclusive, size_t n)
{
    if (t == CLRUN_F32 || t == CLRUN_F64) {
        double run = op == CLRUN_SCAN_SUM ? 0 : op == CLRUN_SCAN_MAX ? -INFINITY : INFINITY, c = 0;
        for (size_t i = 0; i < n; i++) {
            const double v = get(x, t, i);
            double next;
            if (op == CLRUN_SCAN_SUM) { /* compensated, as the reference */
                const double yv = v - c, tt = run + yv;
                c = (tt - run) - yv, next = tt;
            } else {
                next = isnan(run) ? run : isnan(v) ? v : op == CLRUN_SCAN_MAX ? fmax(run, v) : fmin(run, v);
            }
            const double out = exclusive ? run : next;
            if (t == CLRUN_F32) ((float *)y)[i] = (float)out;
            else ((double *)y)[i] = out;
            run = next;
        }
        return;
    }
    const int sign = t == CLRUN_I32 || t == CLRUN_I64, wide = t == CLRUN_I64 || t == CLRUN_U64;
    int64_t srun = op == CLRUN_SCAN_MAX ? (wide ? INT64_MIN : INT32_MIN) : op == CLRUN_SCAN_MIN ? (wide ? INT64_MAX : INT32_MAX) : 0;
    uint64_t urun = op == CLRUN_SCAN_MIN ? (wide ? UINT64_MAX : UINT32_MAX) : 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t before = sign ? (uint64_t)srun : urun;
        if (sign) {
            const int64_t v = t == CLRUN_I32 ? ((const int32_t *)x)[i] : ((const int64_t *)x)[i];
            srun = op == CLRUN_SCAN_SUM   ? (int64_t)((uint64_t)srun + (uint64_t)v)
                   : op == CLRUN_SCAN_MAX ? (v > srun ? v : srun)
                                          : (v < srun ? v : srun);
            if (t == CLRUN_I32) srun = (int32_t)(uint32_t)srun;
        } else {
            const uint64_t v = t == CLRUN_U32 ? ((const uint32_t *)x)[i] : ((const uint64_t *)x)[i];
            urun = op == CLRUN_SCAN_SUM ? urun + v : op == CLRUN_SCAN_MAX ? (v > urun ? v : urun) : (v < urun ? v : urun);
            if (t == CLRUN_U32) urun = (uint32_t)urun;
        }
        const uint64_t out = exclusive ? before : sign ? (uint64_t)srun : urun;
        if (wide) ((uint64_t *)y)[i] = out;
        else ((uint32_t *)y)[i] = (uint32_t)out;
    }
}

static void check(clrun_ctx *ctx, clrun_dtype t, clrun_scan_op op, int exclusive, size_t rows, size_t n, int in_place, uint64_t *s)
{
    const size_t es = clrun_dtype_size(t), off = 3, count = rows * n, cap = count + 2 * off;
    unsigned char *x = malloc(cap * es + 1), *y = malloc(cap * es + 1), *want = malloc(cap * es + 1);
    fill(x, t, cap, s, op != CLRUN_SCAN_SUM);
    clrun_buf *bi, *bo;
    CHECK_OK(ctx, clrun_buf_new(ctx, cap * es, 0, &bi));
    CHECK_OK(ctx, clrun_upload(bi, 0, x, cap * es));
    if (in_place) bo = bi;
    else CHECK_OK(ctx, clrun_buf_new(ctx, cap * es, 0, &bo));
    CHECK_OK(ctx, clrun_scan(ctx, op, exclusive, t, bi, off, bo, off, rows, n));
    CHECK_OK(ctx, clrun_download(bo, 0, y, cap * es));
    for (size_t r = 0; r < rows; r++) host(x + (off + r * n) * es, want + (off + r * n) * es, t, op, exclusive, n);
    for (size_t i = off; i < off + count; i++) {
        const double g = get(y, t, i), w = get(want, t, i);
        if (t == CLRUN_F32 || t == CLRUN_F64) {
            if (isnan(w) != isnan(g)) fail_msg("%s %zu×%zu: element %zu is %g, want %g", clrun_scan_op_name(op), rows, n, i, g, w);
            /* float sums: within pairwise summation's bound of the exact running sum */
            const double bound = op == CLRUN_SCAN_SUM ? (t == CLRUN_F32 ? 1e-6 : 1e-14) * 100.0 * (double)n * 2 : 0;
            if (!isnan(w) && fabs(g - w) > bound)
                fail_msg("%s %zu×%zu: element %zu is %.17g, want %.17g", clrun_scan_op_name(op), rows, n, i, g, w);
        } else if (memcmp(y + i * es, want + i * es, es)) {
            fail_msg("%s %s%s %zu×%zu: element %zu is %.17g, want %.17g", clrun_dtype_name(t), exclusive ? "exclusive " : "",
                     clrun_scan_op_name(op), rows, n, i, g, w);
        }
    }
    if (in_place) /* nothing outside the rows written */
        assert_true(memcmp(y, x, off * es) == 0 && memcmp(y + (off + count) * es, x + (off + count) * es, off * es) == 0);
    clrun_buf_free(bi);
    if (!in_place) clrun_buf_free(bo);
    free(x), free(y), free(want);
}

static void every_type_op_and_size(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    const clrun_dtype types[] = {CLRUN_I32, CLRUN_U32, CLRUN_I64, CLRUN_U64, CLRUN_F32, CLRUN_F64};
    const size_t sizes[] = {0, 1, 2, 3, 1023, 1024, 1025, 4099, 65537};
    for (size_t t = 0; t < 6; t++) {
        if (types[t] == CLRUN_F64 && !clrun_ctx_device(ctx)->fp64) continue;
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
            for (int op = 0; op < 3; op++) check(ctx, types[t], (clrun_scan_op)op, (int)(z % 2), z % 3 + 1, sizes[z], z % 4 == 1, &s);
    }
    check(ctx, CLRUN_I32, CLRUN_SCAN_SUM, 0, 1, ((size_t)1 << 24) + 5, 0, &s); /* tiles of tiles of tiles (of 4096 on CPUs) */
    check(ctx, CLRUN_F32, CLRUN_SCAN_SUM, 1, 2, (size_t)1 << 20 | 7, 1, &s);
}

static void refusals(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_buf *b;
    CHECK_OK(ctx, clrun_buf_new(ctx, 64, 0, &b));
    CHECK_FAIL(ctx, clrun_scan(ctx, CLRUN_SCAN_SUM, 0, CLRUN_F16, b, 0, b, 0, 1, 4), CLRUN_INVALID_ARG, "float64");
    CHECK_FAIL(ctx, clrun_scan(ctx, (clrun_scan_op)7, 0, CLRUN_I32, b, 0, b, 0, 1, 4), CLRUN_INVALID_ARG, "unknown op");
    CHECK_FAIL(ctx, clrun_scan(ctx, CLRUN_SCAN_SUM, 0, CLRUN_I32, b, 0, b, 0, 2, 9), CLRUN_INVALID_ARG, "past the input");
    CHECK_FAIL(ctx, clrun_scan(ctx, CLRUN_SCAN_SUM, 0, CLRUN_I32, b, 0, b, 1, 1, 8), CLRUN_INVALID_ARG, "overlap");
    CHECK_FAIL(ctx, clrun_scan(ctx, CLRUN_SCAN_SUM, 0, CLRUN_I32, b, 0, b, 0, SIZE_MAX, 2), CLRUN_INVALID_ARG, "overflow");
    CHECK_FAIL(ctx, clrun_scan(ctx, CLRUN_SCAN_SUM, 0, CLRUN_I32, NULL, 0, b, 0, 1, 2), CLRUN_INVALID_ARG, "NULL");
    assert_int_equal(clrun_scan(NULL, CLRUN_SCAN_SUM, 0, CLRUN_I32, b, 0, b, 0, 1, 2), CLRUN_INVALID_ARG);
    CHECK_OK(ctx, clrun_scan(ctx, CLRUN_SCAN_SUM, 0, CLRUN_I32, b, 0, b, 0, 0, 5));
    assert_null(clrun_scan_op_name((clrun_scan_op)9));
    clrun_buf_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(every_type_op_and_size), cmocka_unit_test(refusals)};
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
