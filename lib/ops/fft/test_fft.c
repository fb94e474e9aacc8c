/* test_fft.c — clrun_fft_* against a direct DFT in double on the host: c2c and real transforms of
 * 1 to 3 axes, batched, lengths that are powers of two, primes (Rader, Bluestein) and awkward
 * products, every norm, in place and out of place at offsets, f32 and f64 (where the device has
 * fp64); the input left as it was; plans reused within a context and loaded from the persistent
 * cache by the next; bad descriptors and calls refused with words. Without VkFFT in the build every
 * call must say CLRUN_UNSUPPORTED. */
#include "helpers.h"

#include <math.h>

/* the DFT of x (complex, shape n[0..nd), C order) along every axis, sign -1 forward, +1 inverse */
static void dft(const double *x, double *y, unsigned nd, const size_t *n, int sign)
{
    size_t total = 1;
    for (unsigned a = 0; a < nd; a++) total *= n[a];
    double *cur = malloc(total * 2 * sizeof *cur), *tmp = malloc(total * 2 * sizeof *tmp);
    assert_non_null(cur), assert_non_null(tmp);
    memcpy(cur, x, total * 2 * sizeof *cur);
    size_t inner = total;
    for (unsigned a = 0; a < nd; a++) {
        const size_t len = n[a];
        inner /= len;
        const size_t outer = total / (len * inner);
        for (size_t o = 0; o < outer; o++)
            for (size_t i = 0; i < inner; i++)
                for (size_t k = 0; k < len; k++) {
                    double re = 0, im = 0;
                    for (size_t j = 0; j < len; j++) {
                        const double ang = sign * 2 * M_PI * (double)((j * k) % len) / (double)len;
                        const double *v = cur + 2 * ((o * len + j) * inner + i);
                        re += v[0] * cos(ang) - v[1] * sin(ang);
                        im += v[0] * sin(ang) + v[1] * cos(ang);
                    }
                    double *w = tmp + 2 * ((o * len + k) * inner + i);
                    w[0] = re, w[1] = im;
                }
        memcpy(cur, tmp, total * 2 * sizeof *cur);
    }
    memcpy(y, cur, total * 2 * sizeof *cur);
    free(cur), free(tmp);
}

/* relative L2 error of got (es bytes per scalar) against want (double), count scalars */
static double rel_err(const void *got, size_t es, const double *want, size_t count)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < count; i++) {
        const double g = es == 4 ? ((const float *)got)[i] : ((const double *)got)[i];
        num += (g - want[i]) * (g - want[i]), den += want[i] * want[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void put(void *p, size_t es, size_t i, double v)
{
    if (es == 4) ((float *)p)[i] = (float)v;
    else ((double *)p)[i] = v;
}

static double at(const void *p, size_t es, size_t i) { return es == 4 ? ((const float *)p)[i] : ((const double *)p)[i]; }

/* One case: forward then inverse of `batch` arrays of shape n[0..nd) against the DFT. */
static void check(clrun_ctx *ctx, clrun_fft_kind kind, clrun_dtype prec, unsigned nd, const size_t *n, size_t batch, clrun_fft_norm norm,
                  int inplace, uint64_t *s)
{
    const size_t es = prec == CLRUN_F64 ? 8 : 4;
    size_t N = 1, NC = 1;
    for (unsigned a = 0; a < nd; a++) N *= n[a], NC *= a == nd - 1 && kind == CLRUN_FFT_REAL ? n[a] / 2 + 1 : n[a];
    const int real = kind == CLRUN_FFT_REAL;
    const size_t nin = (real ? N : 2 * N) * batch, nout = 2 * NC * batch; /* scalars */
    const size_t in_off = inplace ? 0 : 3, out_off = inplace ? 5 : 7;     /* elements of each side */
    void *x = malloc(nin * es), *y = malloc(nout * es), *z = malloc(nin * es), *x2 = malloc(nin * es);
    double *ref = malloc(2 * N * sizeof *ref), *full = malloc(2 * N * sizeof *full), *want = malloc(nout * sizeof *want);
    assert_true(x && y && z && x2 && ref && full && want);
    for (size_t i = 0; i < nin; i++) put(x, es, i, rng_float(s) * 4);
    const double fscale = norm == CLRUN_FFT_NORM_ORTHO ? 1 / sqrt((double)N) : norm == CLRUN_FFT_NORM_FORWARD ? 1 / (double)N : 1;
    for (size_t b = 0; b < batch; b++) {
        for (size_t i = 0; i < N; i++) {
            ref[2 * i] = real ? at(x, es, b * N + i) : at(x, es, 2 * (b * N + i));
            ref[2 * i + 1] = real ? 0 : at(x, es, 2 * (b * N + i) + 1);
        }
        dft(ref, full, nd, n, -1);
        const size_t last = n[nd - 1], lastc = real ? last / 2 + 1 : last;
        for (size_t r = 0; r < N / last; r++)
            for (size_t k = 0; k < lastc; k++)
                for (int c = 0; c < 2; c++) want[2 * (b * NC + r * lastc + k) + c] = full[2 * (r * last + k) + c] * fscale;
    }
    clrun_fft_desc d = {.kind = kind, .precision = prec, .ndim = nd, .batch = batch, .norm = norm, .inplace = inplace};
    for (unsigned a = 0; a < nd; a++) d.shape[a] = n[a];
    clrun_fft_plan *p;
    CHECK_OK(ctx, clrun_fft_plan_new(ctx, &d, &p));
    clrun_fft_info info;
    CHECK_OK(ctx, clrun_fft_plan_info(p, &info));
    assert_int_equal(info.in_count, (real ? N : N) * batch);
    assert_int_equal(info.out_count, NC * batch);
    const size_t ies = real ? es : 2 * es, ces = 2 * es;
    clrun_buf *bin = NULL, *bout;
    CHECK_OK(ctx, clrun_buf_new(ctx, (out_off + NC * batch + 2) * ces, 0, &bout));
    if (inplace) {
        CHECK_OK(ctx, clrun_upload(bout, out_off * ces, x, nin * es));
    } else {
        CHECK_OK(ctx, clrun_buf_new(ctx, (in_off + (nin / (real ? 1 : 2)) + 1) * ies, 0, &bin));
        CHECK_OK(ctx, clrun_upload(bin, in_off * ies, x, nin * es));
    }
    CHECK_OK(ctx, clrun_fft_exec(p, 0, bin, in_off, bout, out_off));
    CHECK_OK(ctx, clrun_download(bout, out_off * ces, y, nout * es));
    const double tol = (prec == CLRUN_F64 ? 1e-12 : 3e-6) * (log2((double)N) + 1);
    double e = rel_err(y, es, want, nout);
    if (!(e <= tol))
        fail_msg("%s forward %s %u-D %zu x %zu (first %zu) norm %s%s: relative error %.3g > %.3g", real ? "real" : "c2c",
                 clrun_dtype_name(prec), nd, batch, N, n[0], clrun_fft_norm_name(norm), inplace ? " in place" : "", e, tol);
    if (!inplace) { /* the input is left as it was */
        CHECK_OK(ctx, clrun_download(bin, in_off * ies, x2, nin * es));
        assert_memory_equal(x, x2, nin * es);
    }
    /* inverse of the spectrum: back to x */
    clrun_buf *bback = inplace ? bout : NULL;
    const size_t back_off = inplace ? out_off : 1;
    if (!inplace) CHECK_OK(ctx, clrun_buf_new(ctx, (back_off + nin / (real ? 1 : 2) + 1) * ies, 0, &bback));
    CHECK_OK(ctx, clrun_fft_exec(p, 1, inplace ? NULL : bout, out_off, bback, back_off));
    CHECK_OK(ctx, clrun_download(bback, back_off * ies, z, nin * es));
    double *xd = malloc(nin * sizeof *xd);
    assert_non_null(xd);
    for (size_t i = 0; i < nin; i++) xd[i] = at(x, es, i);
    e = rel_err(z, es, xd, nin);
    if (!(e <= tol))
        fail_msg("%s inverse %s of %zu x %zu norm %s: relative error %.3g > %.3g", real ? "real" : "c2c", clrun_dtype_name(prec), batch, N,
                 clrun_fft_norm_name(norm), e, tol);
    if (!inplace) { /* the spectrum, the inverse's input, is left as it was */
        void *y2 = malloc(nout * es);
        assert_non_null(y2);
        CHECK_OK(ctx, clrun_download(bout, out_off * ces, y2, nout * es));
        assert_memory_equal(y, y2, nout * es);
        free(y2);
    }
    clrun_fft_plan_free(p);
    if (bback != bout) clrun_buf_free(bback);
    clrun_buf_free(bin), clrun_buf_free(bout);
    free(x), free(y), free(z), free(x2), free(ref), free(full), free(want), free(xd);
}

static void transforms(void **state)
{
    clrun_ctx *ctx = *state;
    if (!clrun_fft_available()) skip();
    uint64_t s = test_seed();
    static const size_t lens[] = {1, 2, 3, 7, 12, 17, 64, 100, 127, 243, 331, 1021}; /* radix 2, 3, 5, 7 and 13, Rader, Bluestein */
    const int fp64 = clrun_ctx_device(ctx)->fp64;
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
        const size_t n[1] = {lens[i]};
        const clrun_dtype prec = fp64 && i % 3 == 2 ? CLRUN_F64 : CLRUN_F32;
        check(ctx, CLRUN_FFT_C2C, prec, 1, n, 1 + i % 3, (clrun_fft_norm)(i % 3), 0, &s);
        if (lens[i] > 1) check(ctx, CLRUN_FFT_REAL, prec, 1, n, 1 + (i + 1) % 3, (clrun_fft_norm)((i + 1) % 3), 0, &s);
        if (i % 4 == 0) check(ctx, CLRUN_FFT_C2C, prec, 1, n, 2, CLRUN_FFT_NORM_BACKWARD, 1, &s);
    }
    static const size_t shapes2[][2] = {{4, 8}, {3, 5}, {16, 17}, {30, 2}};
    for (size_t i = 0; i < sizeof shapes2 / sizeof *shapes2; i++) {
        check(ctx, CLRUN_FFT_C2C, CLRUN_F32, 2, shapes2[i], 1 + i % 2, (clrun_fft_norm)(i % 3), i == 1, &s);
        check(ctx, CLRUN_FFT_REAL, fp64 && i == 2 ? CLRUN_F64 : CLRUN_F32, 2, shapes2[i], 2 - i % 2, (clrun_fft_norm)((i + 2) % 3), 0, &s);
    }
    static const size_t shapes3[][3] = {{2, 3, 4}, {5, 4, 6}};
    for (size_t i = 0; i < sizeof shapes3 / sizeof *shapes3; i++) {
        check(ctx, CLRUN_FFT_C2C, CLRUN_F32, 3, shapes3[i], 1 + i % 2, (clrun_fft_norm)i, 0, &s);
        check(ctx, CLRUN_FFT_REAL, CLRUN_F32, 3, shapes3[i], 1, (clrun_fft_norm)((i + 1) % 3), 0, &s);
    }
}

/* one long transform against the round trip and Parseval's theorem (a direct DFT would take minutes) */
static void long_transform(void **state)
{
    clrun_ctx *ctx = *state;
    if (!clrun_fft_available()) skip();
    uint64_t s = test_seed();
    const size_t n = (size_t)1 << 18;
    float *x = malloc(2 * n * sizeof *x), *y = malloc(2 * n * sizeof *y);
    assert_true(x && y);
    double ex = 0, ey = 0;
    for (size_t i = 0; i < 2 * n; i++) x[i] = rng_float(&s), ex += (double)x[i] * x[i];
    clrun_fft_desc d = {.kind = CLRUN_FFT_C2C, .ndim = 1, .shape = {n}, .norm = CLRUN_FFT_NORM_ORTHO};
    clrun_fft_plan *p;
    clrun_buf *a, *b;
    CHECK_OK(ctx, clrun_fft_plan_new(ctx, &d, &p));
    CHECK_OK(ctx, clrun_buf_new(ctx, 2 * n * sizeof *x, 0, &a));
    CHECK_OK(ctx, clrun_buf_new(ctx, 2 * n * sizeof *x, 0, &b));
    CHECK_OK(ctx, clrun_upload(a, 0, x, 2 * n * sizeof *x));
    CHECK_OK(ctx, clrun_fft_exec(p, 0, a, 0, b, 0));
    CHECK_OK(ctx, clrun_download(b, 0, y, 2 * n * sizeof *y));
    for (size_t i = 0; i < 2 * n; i++) ey += (double)y[i] * y[i];
    assert_true(fabs(ey - ex) <= 1e-5 * ex); /* ortho is unitary */
    double dc_re = 0;
    for (size_t i = 0; i < n; i++) dc_re += x[2 * i];
    assert_true(fabs(y[0] - dc_re / sqrt((double)n)) <= 1e-3 * (1 + fabs(y[0])));
    CHECK_OK(ctx, clrun_fft_exec(p, 1, b, 0, a, 0));
    CHECK_OK(ctx, clrun_download(a, 0, y, 2 * n * sizeof *y));
    double num = 0;
    for (size_t i = 0; i < 2 * n; i++) num += ((double)y[i] - x[i]) * ((double)y[i] - x[i]);
    assert_true(sqrt(num / ex) <= 1e-6 * 18);
    clrun_fft_plan_free(p);
    clrun_buf_free(a), clrun_buf_free(b);
    free(x), free(y);
}

/* plans: equal descriptors share one within a context; a new context loads the kernels from disk */
static void plans_are_cached(void **state)
{
    clrun_ctx *ctx = *state;
    if (!clrun_fft_available()) skip();
    const size_t len = 60 + (size_t)(test_seed() % 1000) * 2; /* a length this run has likely not cached */
    clrun_fft_desc d = {.kind = CLRUN_FFT_REAL, .ndim = 1, .shape = {len}, .batch = 3};
    clrun_fft_plan *p, *q;
    clrun_fft_info info;
    CHECK_OK(ctx, clrun_fft_plan_new(ctx, &d, &p));
    CHECK_OK(ctx, clrun_fft_plan_new(ctx, &d, &q));
    assert_ptr_equal(p, q);
    CHECK_OK(ctx, clrun_fft_plan_info(q, &info));
    assert_int_equal(info.source, CLRUN_FFT_PLAN_REUSED);
    clrun_fft_plan_free(q), clrun_fft_plan_free(p);
    d.batch = 0; /* counts as 1: another plan */
    CHECK_OK(ctx, clrun_fft_plan_new(ctx, &d, &q));
    assert_ptr_not_equal(p, q);
    clrun_fft_plan_free(q);
    for (int i = 0; i < 20; i++) { /* more idle plans than are kept: the oldest go, nothing leaks */
        clrun_fft_desc e = {.kind = CLRUN_FFT_C2C, .ndim = 1, .shape = {(size_t)(2 + i % 10)}, .batch = 1 + i / 10};
        CHECK_OK(ctx, clrun_fft_plan_new(ctx, &e, &q));
        clrun_fft_plan_free(q);
    }
    clrun_ctx *other;
    CHECK_OK(NULL, clrun_open(&other, test_device()));
    d.batch = 3;
    CHECK_OK(other, clrun_fft_plan_new(other, &d, &q));
    CHECK_OK(other, clrun_fft_plan_info(q, &info));
    char dir[4096];
    if (clrun_cache_dir(dir, sizeof dir)) assert_int_equal(info.source, CLRUN_FFT_PLAN_LOADED);
    clrun_fft_plan_free(q);
    clrun_close(other);
}

/* CLRUN_FFT_TWIDDLES: both kinds of twiddles transform right, and a plan of each is its own */
static void twiddles_setting(void **state)
{
    clrun_ctx *ctx = *state;
    if (!clrun_fft_available()) skip();
    uint64_t s = test_seed();
    const size_t n[1] = {97};
    clrun_fft_desc d = {.kind = CLRUN_FFT_C2C, .ndim = 1, .shape = {97}};
    clrun_fft_plan *table, *computed;
    CHECK_OK(ctx, clrun_fft_plan_new(ctx, &d, &table));
    setenv("CLRUN_FFT_TWIDDLES", "computed", 1);
    CHECK_OK(ctx, clrun_fft_plan_new(ctx, &d, &computed));
    assert_ptr_not_equal(table, computed);
    check(ctx, CLRUN_FFT_C2C, CLRUN_F32, 1, n, 2, CLRUN_FFT_NORM_BACKWARD, 0, &s);
    setenv("CLRUN_FFT_TWIDDLES", "sines", 1);
    clrun_fft_plan *bad = (clrun_fft_plan *)1;
    CHECK_FAIL(ctx, clrun_fft_plan_new(ctx, &d, &bad), CLRUN_INVALID_ARG, "CLRUN_FFT_TWIDDLES");
    assert_null(bad);
    unsetenv("CLRUN_FFT_TWIDDLES");
    clrun_fft_plan_free(table), clrun_fft_plan_free(computed);
}

static void refusals(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_fft_plan *p = (clrun_fft_plan *)1;
    clrun_fft_desc d = {.kind = CLRUN_FFT_C2C, .ndim = 1, .shape = {8}};
    if (!clrun_fft_available()) {
        CHECK_FAIL(ctx, clrun_fft_plan_new(ctx, &d, &p), CLRUN_UNSUPPORTED, "without VkFFT");
        assert_null(p);
        return;
    }
    CHECK_FAIL(ctx, clrun_fft_plan_new(ctx, NULL, &p), CLRUN_INVALID_ARG, "NULL");
    assert_null(p);
    clrun_fft_desc bad = d;
    bad.ndim = 0;
    CHECK_FAIL(ctx, clrun_fft_plan_new(ctx, &bad, &p), CLRUN_INVALID_ARG, "transformed dimensions");
    bad.ndim = 4;
    CHECK_FAIL(ctx, clrun_fft_plan_new(ctx, &bad, &p), CLRUN_INVALID_ARG, "transformed dimensions");
    bad = d, bad.shape[0] = 0;
    CHECK_FAIL(ctx, clrun_fft_plan_new(ctx, &bad, &p), CLRUN_INVALID_ARG, "empty");
    bad = d, bad.kind = (clrun_fft_kind)5;
    CHECK_FAIL(ctx, clrun_fft_plan_new(ctx, &bad, &p), CLRUN_INVALID_ARG, "unknown kind");
    bad = d, bad.norm = (clrun_fft_norm)9;
    CHECK_FAIL(ctx, clrun_fft_plan_new(ctx, &bad, &p), CLRUN_INVALID_ARG, "unknown norm");
    bad = d, bad.precision = CLRUN_F16;
    CHECK_FAIL(ctx, clrun_fft_plan_new(ctx, &bad, &p), CLRUN_INVALID_ARG, "f32 or f64");
    bad = d, bad.kind = CLRUN_FFT_REAL, bad.inplace = 1;
    CHECK_FAIL(ctx, clrun_fft_plan_new(ctx, &bad, &p), CLRUN_INVALID_ARG, "out of place");
    bad = d, bad.ndim = 3, bad.shape[0] = bad.shape[1] = bad.shape[2] = (size_t)1 << 20;
    CHECK_FAIL(ctx, clrun_fft_plan_new(ctx, &bad, &p), CLRUN_INVALID_ARG, "largest buffer");
    bad = d, bad.precision = CLRUN_F64;
    if (!clrun_ctx_device(ctx)->fp64) CHECK_FAIL(ctx, clrun_fft_plan_new(ctx, &bad, &p), CLRUN_UNSUPPORTED, "fp64");
    CHECK_OK(ctx, clrun_fft_plan_new(ctx, &d, &p));
    clrun_buf *b;
    CHECK_OK(ctx, clrun_buf_new(ctx, 8 * 8, 0, &b));
    CHECK_FAIL(ctx, clrun_fft_exec(p, 0, b, 1, b, 0), CLRUN_INVALID_ARG, "overlap");
    CHECK_FAIL(ctx, clrun_fft_exec(p, 0, b, 0, NULL, 0), CLRUN_INVALID_ARG, "NULL");
    clrun_buf *small;
    CHECK_OK(ctx, clrun_buf_new(ctx, 8 * 7, 0, &small));
    CHECK_FAIL(ctx, clrun_fft_exec(p, 0, b, 0, small, 0), CLRUN_INVALID_ARG, "past");
    CHECK_FAIL(ctx, clrun_fft_exec(p, 0, small, 0, b, 0), CLRUN_INVALID_ARG, "past");
    assert_int_equal(clrun_fft_exec(NULL, 0, b, 0, b, 0), CLRUN_INVALID_ARG);
    clrun_fft_plan_free(p);
    clrun_fft_plan_free(NULL);
    assert_null(clrun_fft_norm_name((clrun_fft_norm)7));
    assert_string_equal(clrun_fft_norm_name(CLRUN_FFT_NORM_ORTHO), "ortho");
    clrun_buf_free(b), clrun_buf_free(small);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(transforms), cmocka_unit_test(long_transform), cmocka_unit_test(plans_are_cached),
                                       cmocka_unit_test(twiddles_setting), cmocka_unit_test(refusals)};
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
