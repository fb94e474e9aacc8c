/* test_sort.c — the sorts against a host reference (qsort on NumPy's order with the position as the
 * last key, so stable): every key type, ascending and descending, NaN of both signs and several
 * payloads, -0.0 and 0.0, infinities, many equal keys; rows of awkward lengths (0, 1, 2^k ± 1,
 * primes, several blocks), several rows (the row passes), offsets, in place; argsort, pairs and
 * top-k from the same reference; what is refused. Results are compared bit for bit. */
#include "helpers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const clrun_dtype types[] = {CLRUN_U8,  CLRUN_BOOL, CLRUN_I8,  CLRUN_U16, CLRUN_I16, CLRUN_F16, CLRUN_BF16,
                                    CLRUN_U32, CLRUN_I32,  CLRUN_F32, CLRUN_U64, CLRUN_I64, CLRUN_F64};

static double half_value(uint16_t h)
{
    const int e = (h >> 10) & 31, m = h & 1023, s = h >> 15;
    double v = e == 31 ? (m ? NAN : INFINITY) : e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return s ? -v : v;
}

/* The key at i as a number of its own kind: kind 0 unsigned, 1 signed, 2 float (NaN stays NaN) */
static void value(const void *p, clrun_dtype t, size_t i, int *kind, uint64_t *u, int64_t *s, double *f)
{
    *kind = 0;
    switch (t) {
    case CLRUN_U8:
    case CLRUN_BOOL: *u = ((const uint8_t *)p)[i]; break;
    case CLRUN_U16: *u = ((const uint16_t *)p)[i]; break;
    case CLRUN_U32: *u = ((const uint32_t *)p)[i]; break;
    case CLRUN_U64: *u = ((const uint64_t *)p)[i]; break;
    case CLRUN_I8: *kind = 1, *s = ((const int8_t *)p)[i]; break;
    case CLRUN_I16: *kind = 1, *s = ((const int16_t *)p)[i]; break;
    case CLRUN_I32: *kind = 1, *s = ((const int32_t *)p)[i]; break;
    case CLRUN_I64: *kind = 1, *s = ((const int64_t *)p)[i]; break;
    case CLRUN_F16: *kind = 2, *f = half_value(((const uint16_t *)p)[i]); break;
    case CLRUN_BF16: {
        uint32_t b = (uint32_t)((const uint16_t *)p)[i] << 16;
        float x;
        memcpy(&x, &b, 4);
        *kind = 2, *f = x;
        break;
    }
    case CLRUN_F32: *kind = 2, *f = ((const float *)p)[i]; break;
    default: *kind = 2, *f = ((const double *)p)[i]; break;
    }
}

/* NumPy's order: -1, 0, 1 (NaN after everything, NaNs equal; -0.0 equal to 0.0) */
static int order(const void *p, clrun_dtype t, size_t a, size_t b)
{
    int k;
    uint64_t ua = 0, ub = 0;
    int64_t sa = 0, sb = 0;
    double fa = 0, fb = 0;
    value(p, t, a, &k, &ua, &sa, &fa);
    value(p, t, b, &k, &ub, &sb, &fb);
    if (k == 0) return ua < ub ? -1 : ua > ub;
    if (k == 1) return sa < sb ? -1 : sa > sb;
    if (isnan(fa) || isnan(fb)) return isnan(fa) - isnan(fb);
    return fa < fb ? -1 : fa > fb;
}

static const void *cmp_keys;
static clrun_dtype cmp_type;
static int cmp_desc;
static int by_key(const void *x, const void *y)
{
    const size_t a = *(const size_t *)x, b = *(const size_t *)y;
    int c = order(cmp_keys, cmp_type, a, b);
    if (cmp_desc) c = -c;
    return c ? c : (a > b) - (a < b); /* stable: the position last */
}

/* perm[r·n + j]: the position within row r of the key that goes to place j */
static void reference(const void *keys, clrun_dtype t, int desc, size_t rows, size_t n, size_t *perm)
{
    const size_t es = clrun_dtype_size(t);
    for (size_t r = 0; r < rows; r++) {
        size_t *pr = perm + r * n;
        for (size_t j = 0; j < n; j++) pr[j] = j;
        cmp_keys = (const char *)keys + r * n * es, cmp_type = t, cmp_desc = desc;
        qsort(pr, n, sizeof *pr, by_key);
    }
}

/* Keys that test the order: random bits, few distinct values (ties), floats' specials. */
static void fill(void *p, clrun_dtype t, size_t n, uint64_t *s)
{
    const size_t es = clrun_dtype_size(t);
    const int ties = rng_next(s) % 3 == 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rng_next(s);
        if (ties) r = r % 7 * 0x0101010101010101ull;
        if (t == CLRUN_BOOL) r &= 1;
        if (t == CLRUN_F32 || t == CLRUN_F64 || t == CLRUN_F16 || t == CLRUN_BF16) {
            const int pick = (int)(rng_next(s) % 16);
            double v = rng_float(s) * 1000;
            if (pick == 0) v = NAN;
            else if (pick == 1) v = -0.0;
            else if (pick == 2) v = 0.0;
            else if (pick == 3) v = pick % 2 ? INFINITY : -INFINITY;
            else if (pick == 4) v = -INFINITY;
            else if (pick == 5) v = 1e-310;
            else if (ties) v = (double)(r % 7) - 3;
            if (t == CLRUN_F64) {
                memcpy((char *)p + i * 8, &v, 8);
                if (pick == 0) ((uint64_t *)p)[i] ^= (rng_next(s) & 0x8000000000000fffull); /* NaN: either sign, a payload */
            } else {
                float f = (float)v;
                uint32_t b;
                memcpy(&b, &f, 4);
                if (pick == 0) b ^= (uint32_t)(rng_next(s) & 0x80000fffu);
                if (t == CLRUN_F32) memcpy((char *)p + i * 4, &b, 4);
                else if (t == CLRUN_BF16) ((uint16_t *)p)[i] = (uint16_t)(b >> 16) | (pick == 0 ? 0x40 : 0);
                else {
                    /* float16: from the value's own bits (specials by hand, the rest a 16-bit pattern) */
                    uint16_t h = (uint16_t)r;
                    if (pick == 0) h = (uint16_t)(0x7c01 | (r & 0x83ff));
                    else if (pick == 1) h = 0x8000;
                    else if (pick == 2) h = 0;
                    else if (pick == 3 || pick == 4) h = pick == 3 ? 0x7c00 : 0xfc00;
                    else if ((h & 0x7c00) == 0x7c00) h &= 0xbfff; /* no more NaNs than asked */
                    ((uint16_t *)p)[i] = h;
                }
            }
        } else memcpy((char *)p + i * es, &r, es);
    }
}

static void check(clrun_ctx *ctx, clrun_dtype t, int desc, size_t rows, size_t n, int in_place, uint64_t *s)
{
    const size_t es = clrun_dtype_size(t), count = rows * n, off = 3;
    char *x = malloc((count + 2 * off) * es + 1), *y = malloc((count + 2 * off) * es + 1), *tk = malloc(rows * 5 * es + 1);
    size_t *perm = malloc((count + 1) * sizeof *perm);
    int64_t *idx = malloc((count + off + 1) * 8), *ti = malloc((rows * 5 + 1) * 8);
    int32_t *v = malloc((count + 1) * 4);
    fill(x, t, count + 2 * off, s);
    reference(x + off * es, t, desc, rows, n, perm);
    clrun_buf *bi, *bo, *bx, *bv, *bk, *bt;
    const unsigned flags = desc ? CLRUN_SORT_DESCENDING : 0;
    CHECK_OK(ctx, clrun_buf_new_from(ctx, x, (count + 2 * off) * es, 0, &bi));
    CHECK_OK(ctx, clrun_buf_new(ctx, (count + 2 * off) * es + 1, 0, &bo));
    CHECK_OK(ctx, clrun_buf_new(ctx, (count + off + 1) * 8, 0, &bx));
    /* sort: into another buffer at another offset, or in place */
    if (in_place) CHECK_OK(ctx, clrun_sort(ctx, t, flags, bi, off, bi, off, rows, n));
    else CHECK_OK(ctx, clrun_sort(ctx, t, flags, bi, off, bo, 1, rows, n));
    CHECK_OK(ctx, clrun_download(in_place ? bi : bo, 0, y, (count + 2 * off) * es));
    const char *got = y + (in_place ? off : 1) * es;
    for (size_t i = 0; i < count; i++)
        if (memcmp(got + i * es, x + (off + (i / n) * n + perm[i]) * es, es))
            fail_msg("sort %s%s %zu×%zu: element %zu differs from NumPy's stable order (position %zu of its row)", clrun_dtype_name(t),
                     desc ? " descending" : "", rows, n, i, perm[i]);
    if (in_place) { /* nothing outside the rows written */
        assert_memory_equal(y, x, off * es);
        assert_memory_equal(y + (off + count) * es, x + (off + count) * es, off * es);
        CHECK_OK(ctx, clrun_upload(bi, 0, x, (count + 2 * off) * es));
    }
    /* argsort at an offset */
    CHECK_OK(ctx, clrun_argsort(ctx, t, flags, bi, off, bx, off, rows, n));
    CHECK_OK(ctx, clrun_download(bx, off * 8, idx, count * 8));
    for (size_t i = 0; i < count; i++)
        if (idx[i] != (int64_t)perm[i])
            fail_msg("argsort %s%s %zu×%zu: index %zu is %lld, want %zu", clrun_dtype_name(t), desc ? " descending" : "", rows, n, i,
                     (long long)idx[i], perm[i]);
    /* pairs: int32 values follow their keys */
    for (size_t i = 0; i < count; i++) v[i] = (int32_t)(i * 2654435761u);
    CHECK_OK(ctx, clrun_buf_new_from(ctx, v, count * 4 + 4, 0, &bv));
    CHECK_OK(ctx, clrun_buf_new(ctx, (count + 2 * off) * es + 1, 0, &bk));
    CHECK_OK(ctx, clrun_buf_copy(bk, 0, bi, off * es, count * es));
    CHECK_OK(ctx, clrun_sort_pairs(ctx, t, flags, bk, 0, bv, 0, CLRUN_I32, rows, n));
    int32_t *gv = malloc(count * 4 + 4);
    CHECK_OK(ctx, clrun_download(bv, 0, gv, count * 4));
    CHECK_OK(ctx, clrun_download(bk, 0, y, count * es));
    for (size_t i = 0; i < count; i++) {
        const size_t from = (i / n) * n + perm[i];
        if (gv[i] != v[from] || memcmp(y + i * es, x + (off + from) * es, es))
            fail_msg("sort_pairs %s %zu×%zu: pair %zu is not the key and value from %zu", clrun_dtype_name(t), rows, n, i, from);
    }
    /* top-k: the first k of the same order */
    const size_t k = n < 5 ? n : 5;
    CHECK_OK(ctx, clrun_buf_new(ctx, rows * 5 * es + 1, 0, &bt));
    clrun_buf *bti;
    CHECK_OK(ctx, clrun_buf_new(ctx, rows * 5 * 8 + 8, 0, &bti));
    CHECK_OK(ctx, clrun_topk(ctx, t, flags, bi, off, rows, n, k, bt, 0, bti, 0));
    CHECK_OK(ctx, clrun_download(bt, 0, tk, rows * k * es));
    CHECK_OK(ctx, clrun_download(bti, 0, ti, rows * k * 8));
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < k; j++)
            if (ti[r * k + j] != (int64_t)perm[r * n + j] || memcmp(tk + (r * k + j) * es, x + (off + r * n + perm[r * n + j]) * es, es))
                fail_msg("topk %s %zu×%zu k %zu: row %zu place %zu", clrun_dtype_name(t), rows, n, k, r, j);
    clrun_buf_free(bi), clrun_buf_free(bo), clrun_buf_free(bx), clrun_buf_free(bv), clrun_buf_free(bk), clrun_buf_free(bt);
    clrun_buf_free(bti);
    free(x), free(y), free(tk), free(perm), free(idx), free(ti), free(v), free(gv);
}

static void every_type_and_size(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    const size_t sizes[] = {0, 1, 2, 3, 16, 17, 255, 257, 4095, 4097, 8191};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
            check(ctx, types[t], (int)((z + t) % 2), z % 3 == 2 ? 3 : 1, sizes[z], z % 4 == 1, &s);
}

static void long_rows_and_many_rows(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    check(ctx, CLRUN_F32, 0, 1, 100003, 0, &s); /* a prime, many blocks */
    check(ctx, CLRUN_F32, 1, 1, (1u << 17) + 1, 1, &s);
    check(ctx, CLRUN_I64, 0, 1, 65537, 0, &s);
    check(ctx, CLRUN_F64, 1, 2, 30011, 0, &s);
    check(ctx, CLRUN_I32, 0, 17, 1000, 0, &s); /* two row passes */
    check(ctx, CLRUN_F32, 1, 300, 7, 1, &s);   /* three, short rows */
    check(ctx, CLRUN_U16, 0, 4097, 3, 0, &s);  /* four */
    check(ctx, CLRUN_F16, 0, 65, 129, 0, &s);
}

static void refusals(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_buf *b, *i;
    CHECK_OK(ctx, clrun_buf_new(ctx, 64, 0, &b));
    CHECK_OK(ctx, clrun_buf_new(ctx, 64, 0, &i));
    CHECK_FAIL(ctx, clrun_sort(ctx, CLRUN_DTYPE_COUNT, 0, b, 0, b, 0, 1, 4), CLRUN_INVALID_ARG, "keys of type");
    CHECK_FAIL(ctx, clrun_sort(ctx, CLRUN_F32, 0, b, 0, b, 0, 2, 9), CLRUN_INVALID_ARG, "past the input");
    CHECK_FAIL(ctx, clrun_sort(ctx, CLRUN_F32, 0, b, 0, b, 1, 1, 8), CLRUN_INVALID_ARG, "overlap");
    CHECK_FAIL(ctx, clrun_sort(ctx, CLRUN_F32, 0, b, 0, b, 0, SIZE_MAX, 2), CLRUN_INVALID_ARG, "overflow");
    CHECK_FAIL(ctx, clrun_sort(ctx, CLRUN_U8, 0, b, 0, b, 0, 1, (size_t)1 << 32), CLRUN_INVALID_ARG, "fewer than 2^32");
    CHECK_FAIL(ctx, clrun_sort(ctx, CLRUN_F32, 0, NULL, 0, b, 0, 1, 2), CLRUN_INVALID_ARG, "NULL");
    CHECK_FAIL(ctx, clrun_sort(ctx, CLRUN_F32, 0, b, 0, NULL, 0, 1, 2), CLRUN_INVALID_ARG, "NULL");
    assert_int_equal(clrun_sort(NULL, CLRUN_F32, 0, b, 0, b, 0, 1, 2), CLRUN_INVALID_ARG);
    CHECK_FAIL(ctx, clrun_argsort(ctx, CLRUN_F32, 0, b, 0, b, 0, 1, 4), CLRUN_INVALID_ARG, "overlap");
    CHECK_FAIL(ctx, clrun_argsort(ctx, CLRUN_F32, 0, b, 0, i, 0, 1, 9), CLRUN_INVALID_ARG, "past idx");
    CHECK_FAIL(ctx, clrun_sort_pairs(ctx, CLRUN_F32, 0, b, 0, b, 2, CLRUN_I32, 1, 4), CLRUN_INVALID_ARG, "overlap");
    CHECK_FAIL(ctx, clrun_sort_pairs(ctx, CLRUN_F32, 0, b, 0, i, 0, CLRUN_DTYPE_COUNT, 1, 4), CLRUN_INVALID_ARG, "value type");
    CHECK_FAIL(ctx, clrun_topk(ctx, CLRUN_F32, 0, b, 0, 1, 4, 5, b, 8, i, 0), CLRUN_INVALID_ARG, "k = 5");
    CHECK_FAIL(ctx, clrun_topk(ctx, CLRUN_F32, 0, b, 0, 2, 4, 3, b, 8, i, 4), CLRUN_INVALID_ARG, "past idx");
    CHECK_FAIL(ctx, clrun_topk(ctx, CLRUN_F32, 0, b, 0, 1, 4, 2, i, 1, i, 0), CLRUN_INVALID_ARG, "overlap");
    CHECK_OK(ctx, clrun_sort(ctx, CLRUN_F32, 0, b, 0, b, 0, 0, 5)); /* nothing to sort */
    CHECK_OK(ctx, clrun_topk(ctx, CLRUN_F32, 0, b, 0, 2, 4, 0, b, 0, i, 0));
    clrun_buf_free(b), clrun_buf_free(i);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(every_type_and_size), cmocka_unit_test(long_rows_and_many_rows),
                                       cmocka_unit_test(refusals)};
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
