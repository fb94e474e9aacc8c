/* test_hist.c — clrun_bincount and clrun_histogram against host loops written as NumPy's are: counts
 * for every key type (keys below 0 and past the bins left out), weighted sums added in order in
 * float64 (compared bit for bit), local and global counters (few and many bins), histogram bins of
 * float32, float64 and int32 elements with values on the edges, outside the range and NaN, weighted
 * sums in blocks of 65,536; what is refused. */
#include "helpers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int64_t key_at(const void *p, clrun_dtype t, size_t i)
{
    switch (t) {
    case CLRUN_I8: return ((const int8_t *)p)[i];
    case CLRUN_I16: return ((const int16_t *)p)[i];
    case CLRUN_I32: return ((const int32_t *)p)[i];
    case CLRUN_I64: return ((const int64_t *)p)[i];
    case CLRUN_U8:
    case CLRUN_BOOL: return ((const uint8_t *)p)[i];
    case CLRUN_U16: return ((const uint16_t *)p)[i];
    case CLRUN_U32: return ((const uint32_t *)p)[i];
    default: return ((const uint64_t *)p)[i] > INT64_MAX ? -1 : (int64_t)((const uint64_t *)p)[i];
    }
}

static void bincount_case(clrun_ctx *ctx, clrun_dtype t, size_t n, size_t nbins, int weighted, uint64_t *s)
{
    const size_t es = clrun_dtype_size(t);
    unsigned char *x = malloc(n * es + 8);
    float *w = malloc(n * 4 + 4);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rng_next(s);
        int64_t v = (int64_t)(r % (nbins + nbins / 4 + 2)) - (t == CLRUN_BOOL ? 0 : 1); /* some below 0, some past the bins */
        if (t == CLRUN_BOOL) v &= 1;
        if (t == CLRUN_U8 || t == CLRUN_U16 || t == CLRUN_U32 || t == CLRUN_U64) v = v < 0 ? 0 : v;
        memcpy(x + i * es, &v, es); /* little-endian: the low bytes */
        w[i] = rng_float(s) * 10;
    }
    int64_t *want_n = calloc(nbins, 8), *got_n = malloc(nbins * 8);
    double *want_w = calloc(nbins, 8), *got_w = malloc(nbins * 8);
    for (size_t i = 0; i < n; i++) {
        const int64_t v = key_at(x, t, i);
        if (v >= 0 && (uint64_t)v < nbins) want_n[v]++, want_w[v] += (double)w[i];
    }
    clrun_buf *bx, *bw, *bo;
    CHECK_OK(ctx, clrun_buf_new_from(ctx, x, n * es + 8, 0, &bx));
    CHECK_OK(ctx, clrun_buf_new_from(ctx, w, n * 4 + 4, 0, &bw));
    CHECK_OK(ctx, clrun_buf_new(ctx, (nbins + 2) * 8, 0, &bo));
    if (weighted && !clrun_ctx_device(ctx)->fp64) { /* sums in float64: refused, never approximated */
        CHECK_FAIL(ctx, clrun_bincount(ctx, t, bx, 0, n, bw, 0, CLRUN_F32, nbins, bo, 2), CLRUN_UNSUPPORTED, "no fp64");
    } else if (weighted) {
        CHECK_OK(ctx, clrun_bincount(ctx, t, bx, 0, n, bw, 0, CLRUN_F32, nbins, bo, 2));
        CHECK_OK(ctx, clrun_download(bo, 16, got_w, nbins * 8));
        for (size_t b = 0; b < nbins; b++)
            if (memcmp(&got_w[b], &want_w[b], 8))
                fail_msg("bincount %s weighted, %zu keys, %zu bins: bin %zu is %.17g, the ordered float64 sum %.17g", clrun_dtype_name(t),
                         n, nbins, b, got_w[b], want_w[b]);
    } else {
        CHECK_OK(ctx, clrun_bincount(ctx, t, bx, 0, n, NULL, 0, CLRUN_F32, nbins, bo, 1));
        CHECK_OK(ctx, clrun_download(bo, 8, got_n, nbins * 8));
        for (size_t b = 0; b < nbins; b++)
            if (got_n[b] != want_n[b])
                fail_msg("bincount %s, %zu keys, %zu bins: bin %zu counts %lld, want %lld", clrun_dtype_name(t), n, nbins, b,
                         (long long)got_n[b], (long long)want_n[b]);
    }
    clrun_buf_free(bx), clrun_buf_free(bw), clrun_buf_free(bo);
    free(x), free(w), free(want_n), free(got_n), free(want_w), free(got_w);
}

static void bincount_every_type(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    const clrun_dtype types[] = {CLRUN_I8, CLRUN_U8, CLRUN_BOOL, CLRUN_I16, CLRUN_U16, CLRUN_I32, CLRUN_U32, CLRUN_I64, CLRUN_U64};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const size_t nb = types[t] == CLRUN_BOOL ? 2 : types[t] == CLRUN_I8 || types[t] == CLRUN_U8 ? 100 : 1000;
        bincount_case(ctx, types[t], 1, nb, 0, &s);
        bincount_case(ctx, types[t], 100003, nb, 0, &s);
        bincount_case(ctx, types[t], 4099, nb, 1, &s);
    }
    bincount_case(ctx, CLRUN_I32, 200001, 5000, 0, &s); /* global counters */
    bincount_case(ctx, CLRUN_I64, 70001, 3000, 1, &s);
    bincount_case(ctx, CLRUN_I32, 0, 7, 0, &s);
    bincount_case(ctx, CLRUN_I32, 0, 7, 1, &s);
}

/* np.histogram's steps on the host, in float (f32 elements) or double */
static void host_hist(const void *x, clrun_dtype t, size_t n, const void *edges, size_t nb, double scale, const float *w, int64_t *cnt,
                      float *sums)
{
    float block_part[4096];
    double part[4096];
    for (size_t b = 0; b < nb; b++) cnt[b] = 0, sums[b] = 0;
    for (size_t start = 0; start < n; start += 65536) {
        for (size_t b = 0; b < nb; b++) part[b] = 0;
        for (size_t i = start; i < n && i < start + 65536; i++) {
            long k;
            if (t == CLRUN_F32) {
                const float v = ((const float *)x)[i], *e = edges;
                if (!(v >= e[0] && v <= e[nb])) continue;
                k = (long)((v - e[0]) * (float)scale);
                if (k >= (long)nb) k = (long)nb - 1;
                if (k > 0 && v < e[k]) k--;
                if (k < (long)nb - 1 && v >= e[k + 1]) k++;
            } else {
                const double v = t == CLRUN_F64 ? ((const double *)x)[i] : ((const int32_t *)x)[i];
                const double *e = edges;
                if (!(v >= e[0] && v <= e[nb])) continue;
                k = (long)((v - e[0]) * scale);
                if (k >= (long)nb) k = (long)nb - 1;
                if (k > 0 && v < e[k]) k--;
                if (k < (long)nb - 1 && v >= e[k + 1]) k++;
            }
            cnt[k]++, part[k] += (double)w[i];
        }
        for (size_t b = 0; b < nb; b++) block_part[b] = (float)part[b], sums[b] = sums[b] + block_part[b];
    }
}

static void hist_case(clrun_ctx *ctx, clrun_dtype t, size_t n, size_t nb, double lo, double hi, uint64_t *s)
{
    const size_t es = clrun_dtype_size(t);
    const int f64 = t != CLRUN_F32;
    unsigned char *x = malloc(n * es + 8), *edges = malloc((nb + 1) * 8);
    float *w = malloc(n * 4 + 4), *sums = malloc(nb * 4), *got_s = malloc(nb * 4);
    int64_t *cnt = malloc(nb * 8), *got = malloc(nb * 8);
    clrun_histogram_edges(lo, hi, nb, f64, edges);
    for (size_t i = 0; i < n; i++) {
        const uint64_t r = rng_next(s);
        double v = lo - 1 + (hi - lo + 2) * ((double)(r >> 11) / 9007199254740992.0);
        if (r % 17 == 0) v = f64 ? ((double *)edges)[r % (nb + 1)] : ((float *)edges)[r % (nb + 1)]; /* on an edge */
        if (r % 101 == 0 && t != CLRUN_I32) v = NAN;
        if (t == CLRUN_F32) ((float *)x)[i] = (float)v;
        else if (t == CLRUN_F64) ((double *)x)[i] = v;
        else ((int32_t *)x)[i] = (int32_t)floor(v);
        w[i] = rng_float(s);
    }
    const double scale = (double)nb / (hi - lo);
    host_hist(x, t, n, edges, nb, scale, w, cnt, sums);
    clrun_buf *bx, *bw, *be, *bo;
    CHECK_OK(ctx, clrun_buf_new_from(ctx, x, n * es + 8, 0, &bx));
    CHECK_OK(ctx, clrun_buf_new_from(ctx, w, n * 4 + 4, 0, &bw));
    CHECK_OK(ctx, clrun_buf_new_from(ctx, edges, (nb + 1) * 8, 0, &be));
    CHECK_OK(ctx, clrun_buf_new(ctx, nb * 8 + 8, 0, &bo));
    const int fp64 = clrun_ctx_device(ctx)->fp64;
    if (!fp64 && t != CLRUN_F32) /* float64 bins: refused, never approximated */
        CHECK_FAIL(ctx, clrun_histogram(ctx, t, bx, 0, n, NULL, 0, CLRUN_F32, nb, be, scale, 0, bo, 1), CLRUN_UNSUPPORTED, "no fp64");
    else CHECK_OK(ctx, clrun_histogram(ctx, t, bx, 0, n, NULL, 0, CLRUN_F32, nb, be, scale, 0, bo, 1));
    CHECK_OK(ctx, clrun_download(bo, 8, got, nb * 8));
    for (size_t b = 0; b < nb && (fp64 || t == CLRUN_F32); b++)
        if (got[b] != cnt[b])
            fail_msg("histogram %s, %zu elements, %zu bins: bin %zu counts %lld, NumPy's steps %lld", clrun_dtype_name(t), n, nb, b,
                     (long long)got[b], (long long)cnt[b]);
    if (!fp64) CHECK_FAIL(ctx, clrun_histogram(ctx, t, bx, 0, n, bw, 0, CLRUN_F32, nb, be, scale, 0, bo, 0), CLRUN_UNSUPPORTED, "no fp64");
    else CHECK_OK(ctx, clrun_histogram(ctx, t, bx, 0, n, bw, 0, CLRUN_F32, nb, be, scale, 0, bo, 0));
    CHECK_OK(ctx, clrun_download(bo, 0, got_s, nb * 4));
    for (size_t b = 0; b < nb && fp64; b++)
        if (memcmp(&got_s[b], &sums[b], 4))
            fail_msg("histogram %s weighted: bin %zu is %.9g, NumPy's blocks give %.9g", clrun_dtype_name(t), b, got_s[b], sums[b]);
    clrun_buf_free(bx), clrun_buf_free(bw), clrun_buf_free(be), clrun_buf_free(bo);
    free(x), free(edges), free(w), free(sums), free(got_s), free(cnt), free(got);
}

static void histogram_types_and_edges(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    hist_case(ctx, CLRUN_F32, 1000, 10, -1.5, 2.25, &s);
    hist_case(ctx, CLRUN_F32, 200003, 37, 0.1, 0.7, &s); /* several blocks of 65,536 */
    hist_case(ctx, CLRUN_F64, 100001, 1000, -3, 1e3, &s);
    hist_case(ctx, CLRUN_I32, 5000, 7, -20, 50, &s);
    hist_case(ctx, CLRUN_F32, 0, 3, 0, 1, &s);
}

static void refusals(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_buf *b, *o;
    CHECK_OK(ctx, clrun_buf_new(ctx, 64, 0, &b));
    CHECK_OK(ctx, clrun_buf_new(ctx, 64, 0, &o));
    CHECK_FAIL(ctx, clrun_bincount(ctx, CLRUN_F32, b, 0, 4, NULL, 0, CLRUN_F32, 4, o, 0), CLRUN_INVALID_ARG, "integer");
    CHECK_FAIL(ctx, clrun_bincount(ctx, CLRUN_I32, b, 0, 17, NULL, 0, CLRUN_F32, 4, o, 0), CLRUN_INVALID_ARG, "past x");
    CHECK_FAIL(ctx, clrun_bincount(ctx, CLRUN_I32, b, 0, 4, NULL, 0, CLRUN_F32, 9, o, 0), CLRUN_INVALID_ARG, "past out");
    CHECK_FAIL(ctx, clrun_bincount(ctx, CLRUN_I32, b, 0, 4, NULL, 0, CLRUN_F32, 0, o, 0), CLRUN_INVALID_ARG, "bins");
    CHECK_FAIL(ctx, clrun_bincount(ctx, CLRUN_I32, b, 0, 4, b, 0, CLRUN_F16, 4, o, 0), CLRUN_INVALID_ARG, "weights");
    CHECK_FAIL(ctx, clrun_bincount(ctx, CLRUN_I32, NULL, 0, 4, NULL, 0, CLRUN_F32, 4, o, 0), CLRUN_INVALID_ARG, "NULL");
    assert_int_equal(clrun_bincount(NULL, CLRUN_I32, b, 0, 4, NULL, 0, CLRUN_F32, 4, o, 0), CLRUN_INVALID_ARG);
    CHECK_FAIL(ctx, clrun_histogram(ctx, CLRUN_F32, b, 0, 4, NULL, 0, CLRUN_F32, 3, b, 0.0, 0, o, 0), CLRUN_INVALID_ARG, "scale");
    CHECK_FAIL(ctx, clrun_histogram(ctx, CLRUN_F16, b, 0, 4, NULL, 0, CLRUN_F32, 3, b, 1.0, 0, o, 0), CLRUN_INVALID_ARG, "float32");
    CHECK_FAIL(ctx, clrun_histogram(ctx, CLRUN_F32, b, 0, 4, NULL, 0, CLRUN_F32, 16, b, 1.0, 0, o, 0), CLRUN_INVALID_ARG, "past edges");
    clrun_buf_free(b), clrun_buf_free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(bincount_every_type), cmocka_unit_test(histogram_types_and_edges),
                                       cmocka_unit_test(refusals)};
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
