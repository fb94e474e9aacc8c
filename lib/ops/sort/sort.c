/* sort.c — clrun_sort, clrun_argsort, clrun_sort_pairs, clrun_topk: stable radix sorts along rows
 * (sort.cl), 4 bits a pass, the rows' own passes last (on the row number each index carries). */
#include "opkit.h"

#include <stdio.h>

/* How a key type is read and ordered: its stored type, width, kind (0 unsigned, 1 signed, 2
 * float) and, for floats, the exponent mask. */
static const struct {
    clrun_dtype t;
    const char *s;
    unsigned bits, kind;
    const char *exp;
} keyt[] = {
    {CLRUN_U8, "uchar", 8, 0, "0"},
    {CLRUN_BOOL, "uchar", 8, 0, "0"},
    {CLRUN_I8, "uchar", 8, 1, "0"},
    {CLRUN_U16, "ushort", 16, 0, "0"},
    {CLRUN_I16, "ushort", 16, 1, "0"},
    {CLRUN_F16, "ushort", 16, 2, "0x7c00u"},
    {CLRUN_BF16, "ushort", 16, 2, "0x7f80u"},
    {CLRUN_U32, "uint", 32, 0, "0"},
    {CLRUN_I32, "uint", 32, 1, "0"},
    {CLRUN_F32, "uint", 32, 2, "0x7f800000u"},
    {CLRUN_U64, "ulong", 64, 0, "0"},
    {CLRUN_I64, "ulong", 64, 1, "0"},
    {CLRUN_F64, "ulong", 64, 2, "0x7ff0000000000000ul"},
};

/* the stored type of values of es bytes */
static const char *stored(size_t es) { return es == 1 ? "uchar" : es == 2 ? "ushort" : es == 4 ? "uint" : "ulong"; }

static int key_index(clrun_dtype t)
{
    for (int i = 0; i < (int)(sizeof keyt / sizeof keyt[0]); i++)
        if (keyt[i].t == t) return i;
    return -1;
}

static size_t group_size(clrun_ctx *ctx)
{
    size_t wg = clrun_ctx_device(ctx)->type == CLRUN_DEVICE_CPU ? 64 : 256, max = clrun_ctx_device(ctx)->max_work_group;
    while (wg > 16 && wg > max) wg >>= 1;
    return wg;
}

/* elements per work-item: long runs on CPUs (their barriers cost), short ones on GPUs */
static size_t per_item(clrun_ctx *ctx) { return clrun_ctx_device(ctx)->type == CLRUN_DEVICE_CPU ? 64 : 8; }

/* One sort: keys of type keyt[ki], `rows` rows of n from key_in at key_off. Results: the keys in
 * order into key_out at out_off (NULL: not kept); with idx_out, each key's position within its row
 * (int64) at idx_off; with flat_out, each key's element number (uint32) from 0, for a gather. */
struct job {
    int ki;
    int desc;
    clrun_buf *key_in;
    size_t key_off;
    clrun_buf *key_out;
    size_t out_off;
    clrun_buf *idx_out;
    size_t idx_off;
    clrun_buf **flat_out;
    size_t rows, n;
};

static clrun_status kernel(clrun_ctx *ctx, int ki, const char *name, clrun_kernel **k)
{
    char opts[160];
    snprintf(opts, sizeof opts, "-DCLRUN_S=%s -DCLRUN_BITS=%u -DCLRUN_KT=%u -DCLRUN_EXP=%s -DCLRUN_WG=%zu -DCLRUN_PER=%zu", keyt[ki].s,
             keyt[ki].bits, keyt[ki].kind, keyt[ki].exp, group_size(ctx), per_item(ctx));
    return clrun__lib_kernel(ctx, "sort", opts, name, k);
}

/* sort.cl's mode bits */
enum { M_DESC = 1, M_IDX = 2, M_IOTA = 4, M_FROMIDX = 8, M_FINAL = 16 };

static clrun_status run(clrun_ctx *ctx, const struct job *j)
{
    const size_t total = j->rows * j->n, es = clrun_dtype_size(keyt[j->ki].t), wg = group_size(ctx), block = wg * per_item(ctx);
    const size_t groups = (total + block - 1) / block;
    const int with_idx = j->rows > 1 || j->idx_out || j->flat_out;
    unsigned row_passes = 0;
    for (size_t r = j->rows - 1; r; r >>= 4) row_passes++;
    const unsigned key_passes = keyt[j->ki].bits / 4, passes = key_passes + row_passes;
    clrun_buf *kt[2] = {NULL, NULL}, *it[2] = {NULL, NULL}, *counts = NULL;
    clrun_status st;
    /* keys: pass p writes kdst(p); the last one key_out when it is kept, so the passes alternate
     * between it and one temporary (two temporaries when the keys are not kept) */
    if ((st = clrun_buf_new(ctx, total * es, 0, &kt[0])) || (!j->key_out && (st = clrun_buf_new(ctx, total * es, 0, &kt[1]))) ||
        (with_idx && ((st = clrun_buf_new(ctx, total * 4, 0, &it[0])) || (st = clrun_buf_new(ctx, total * 4, 0, &it[1])))) ||
        (st = clrun_buf_new(ctx, 16 * groups * 4, 0, &counts)))
        goto done;
    clrun_buf *src = j->key_in;
    size_t src_off = j->key_off;
    if (j->key_out && src == j->key_out && passes % 2) { /* in place with an odd count: start from a copy */
        if ((st = clrun_buf_copy(kt[0], 0, src, src_off * es, total * es))) goto done;
        src = kt[0], src_off = 0;
    }
    for (unsigned p = 0; p < passes; p++) {
        const int last = p + 1 == passes, fromidx = p >= key_passes, final = last && j->idx_out != NULL;
        const unsigned shift = 4 * (fromidx ? p - key_passes : p);
        clrun_buf *dst;
        size_t dst_off = 0;
        if (j->key_out) {
            const int to_out = (passes - 1 - p) % 2 == 0;
            dst = to_out ? j->key_out : kt[0];
            if (to_out) dst_off = j->out_off;
        } else dst = kt[p % 2];
        clrun_buf *isrc = p ? it[(p - 1) % 2] : NULL, *idst = final ? j->idx_out : with_idx ? it[p % 2] : NULL;
        const size_t ioff = final ? j->idx_off : 0;
        const unsigned mode =
            (j->desc ? M_DESC : 0) | (with_idx ? M_IDX : 0) | (p == 0 ? M_IOTA : 0) | (fromidx ? M_FROMIDX : 0) | (final ? M_FINAL : 0);
        clrun_kernel *kc, *ks;
        if ((st = kernel(ctx, j->ki, "clrun_radix_count", &kc)) || (st = kernel(ctx, j->ki, "clrun_radix_scatter", &ks))) goto done;
        const clrun__grid g = {1, {groups * wg, 1, 1}, {wg, 1, 1}};
        if ((st = CLRUN__RUN(kc, g, ARG_BUF(src), ARG_U64(src_off), ARG_BUF(isrc), ARG_U64(total), ARG_U32(shift), ARG_U64(j->n),
                             ARG_U32(mode), ARG_BUF(counts))) ||
            (st = clrun_scan(ctx, CLRUN_SCAN_SUM, 1, CLRUN_U32, counts, 0, counts, 0, 1, 16 * groups)))
            goto done;
        st = CLRUN__RUN(ks, g, ARG_BUF(src), ARG_U64(src_off), ARG_BUF(isrc), ARG_U64(total), ARG_U32(shift), ARG_U64(j->n), ARG_U32(mode),
                        ARG_BUF(counts), ARG_BUF(dst), ARG_U64(dst_off), ARG_BUF(final ? NULL : idst), ARG_BUF(final ? idst : NULL),
                        ARG_U64(ioff));
        if (st) goto done;
        src = dst, src_off = dst_off;
    }
    if (j->flat_out) {
        *j->flat_out = it[(passes - 1) % 2];
        it[(passes - 1) % 2] = NULL;
    }
done:
    clrun_buf_free(kt[0]), clrun_buf_free(kt[1]), clrun_buf_free(it[0]), clrun_buf_free(it[1]), clrun_buf_free(counts);
    return st;
}

/* The checks every call shares; *ki the key type's row. */
static clrun_status check(clrun_ctx *ctx, const char *what, clrun_dtype t, clrun_buf *in, size_t in_off, size_t rows, size_t n, int *ki)
{
    if ((*ki = key_index(t)) < 0)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: keys of type %s: integers, bool, float16, bfloat16, float32 or float64", what,
                           (unsigned)t < CLRUN_DTYPE_COUNT ? clrun_dtype_name(t) : "unknown");
    if (n && rows > SIZE_MAX / n) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: %zu rows of %zu elements overflow", what, rows, n);
    if (rows * n >= ((size_t)1 << 32))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: %zu elements: a sort takes fewer than 2^32", what, rows * n);
    return clrun__span(ctx, what, "the input", in, in_off, rows * n, clrun_dtype_size(t));
}

/* 1 when bytes [a, a + an) of x and [b, b + bn) of y are shared */
static int ranges_meet(clrun_buf *x, size_t a, size_t an, clrun_buf *y, size_t b, size_t bn)
{
    return x == y && an && bn && a < b + bn && b < a + an;
}

/* 1 when [a, a + n) and [b, b + n) of one buffer overlap at different offsets (bytes) */
static int overlap(clrun_buf *x, size_t a, clrun_buf *y, size_t b, size_t n) { return x == y && a != b && (a < b ? b - a : a - b) < n; }

clrun_status clrun_sort(clrun_ctx *ctx, clrun_dtype t, unsigned flags, clrun_buf *in, size_t in_off, clrun_buf *out, size_t out_off,
                        size_t rows, size_t n)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_sort: ctx is NULL");
    CLRUN__SERIAL(ctx);
    int ki;
    clrun_status st;
    if ((st = check(ctx, "clrun_sort", t, in, in_off, rows, n, &ki)) ||
        (st = clrun__span(ctx, "clrun_sort", "out", out, out_off, rows * n, clrun_dtype_size(t))))
        return st;
    const size_t es = clrun_dtype_size(t);
    if (overlap(in, in_off * es, out, out_off * es, rows * n * es))
        return clrun__fail(ctx, CLRUN_INVALID_ARG,
                           "clrun_sort: the input and the output overlap at different offsets (in place: one offset)");
    if (rows * n == 0) return CLRUN_OK;
    const struct job j = {ki, (flags & CLRUN_SORT_DESCENDING) != 0, in, in_off, out, out_off, NULL, 0, NULL, rows, n};
    return run(ctx, &j);
}

clrun_status clrun_argsort(clrun_ctx *ctx, clrun_dtype t, unsigned flags, clrun_buf *in, size_t in_off, clrun_buf *idx, size_t idx_off,
                           size_t rows, size_t n)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_argsort: ctx is NULL");
    CLRUN__SERIAL(ctx);
    int ki;
    clrun_status st;
    if ((st = check(ctx, "clrun_argsort", t, in, in_off, rows, n, &ki)) ||
        (st = clrun__span(ctx, "clrun_argsort", "idx", idx, idx_off, rows * n, 8)))
        return st;
    if (ranges_meet(in, in_off * clrun_dtype_size(t), rows * n * clrun_dtype_size(t), idx, idx_off * 8, rows * n * 8))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_argsort: the keys and the indices overlap");
    if (rows * n == 0) return CLRUN_OK;
    const struct job j = {ki, (flags & CLRUN_SORT_DESCENDING) != 0, in, in_off, NULL, 0, idx, idx_off, NULL, rows, n};
    return run(ctx, &j);
}

clrun_status clrun_sort_pairs(clrun_ctx *ctx, clrun_dtype t, unsigned flags, clrun_buf *keys, size_t keys_off, clrun_buf *vals,
                              size_t vals_off, clrun_dtype vt, size_t rows, size_t n)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_sort_pairs: ctx is NULL");
    CLRUN__SERIAL(ctx);
    int ki;
    clrun_status st;
    if ((st = check(ctx, "clrun_sort_pairs", t, keys, keys_off, rows, n, &ki))) return st;
    if ((unsigned)vt >= CLRUN_DTYPE_COUNT) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_sort_pairs: unknown value type %d", (int)vt);
    const size_t es = clrun_dtype_size(t), vs = clrun_dtype_size(vt), count = rows * n;
    if ((st = clrun__span(ctx, "clrun_sort_pairs", "vals", vals, vals_off, count, vs))) return st;
    if (ranges_meet(keys, keys_off * es, count * es, vals, vals_off * vs, count * vs))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_sort_pairs: the keys and the values overlap");
    if (count == 0) return CLRUN_OK;
    clrun_buf *perm = NULL, *copy = NULL;
    const struct job j = {ki, (flags & CLRUN_SORT_DESCENDING) != 0, keys, keys_off, keys, keys_off, NULL, 0, &perm, rows, n};
    clrun_kernel *k;
    char opts[96];
    snprintf(opts, sizeof opts, "-DCLRUN_S=%s -DCLRUN_BITS=32 -DCLRUN_KT=0 -DCLRUN_WG=1 -DCLRUN_PER=1", stored(vs));
    if (!(st = run(ctx, &j)) && !(st = clrun_buf_new(ctx, count * vs, 0, &copy)) &&
        !(st = clrun_buf_copy(copy, 0, vals, vals_off * vs, count * vs)) &&
        !(st = clrun__lib_kernel(ctx, "sort", opts, "clrun_sort_gather", &k)))
        st = CLRUN__RUN(k, CLRUN__GRID1(count), ARG_BUF(copy), ARG_U64(0), ARG_BUF(perm), ARG_BUF(vals), ARG_U64(vals_off), ARG_U64(count));
    clrun_buf_free(perm), clrun_buf_free(copy);
    return st;
}

clrun_status clrun_topk(clrun_ctx *ctx, clrun_dtype t, unsigned flags, clrun_buf *in, size_t in_off, size_t rows, size_t n, size_t k,
                        clrun_buf *vals, size_t vals_off, clrun_buf *idx, size_t idx_off)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_topk: ctx is NULL");
    CLRUN__SERIAL(ctx);
    int ki;
    clrun_status st;
    if ((st = check(ctx, "clrun_topk", t, in, in_off, rows, n, &ki))) return st;
    if (k > n) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_topk: k = %zu of rows of %zu", k, n);
    const size_t es = clrun_dtype_size(t);
    if ((st = clrun__span(ctx, "clrun_topk", "vals", vals, vals_off, rows * k, es)) ||
        (st = clrun__span(ctx, "clrun_topk", "idx", idx, idx_off, rows * k, 8)))
        return st;
    if (ranges_meet(vals, vals_off * es, rows * k * es, idx, idx_off * 8, rows * k * 8))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_topk: the values and the indices overlap");
    if (rows * k == 0) return CLRUN_OK;
    clrun_buf *sk = NULL, *si = NULL;
    clrun_kernel *kk;
    const struct job j = {ki, (flags & CLRUN_SORT_DESCENDING) != 0, in, in_off, NULL, 0, NULL, 0, NULL, rows, n};
    struct job jj = j;
    char opts[96];
    snprintf(opts, sizeof opts, "-DCLRUN_S=%s -DCLRUN_BITS=32 -DCLRUN_KT=0 -DCLRUN_WG=1 -DCLRUN_PER=1", keyt[ki].s);
    if (!(st = clrun_buf_new(ctx, rows * n * es, 0, &sk)) && !(st = clrun_buf_new(ctx, rows * n * 8, 0, &si))) {
        jj.key_out = sk, jj.idx_out = si;
        if (!(st = run(ctx, &jj)) && !(st = clrun__lib_kernel(ctx, "sort", opts, "clrun_sort_take", &kk)))
            st = CLRUN__RUN(kk, CLRUN__GRID1(rows * k), ARG_BUF(sk), ARG_BUF(si), ARG_U64(n), ARG_U64(k), ARG_U64(rows), ARG_BUF(vals),
                            ARG_U64(vals_off), ARG_BUF(idx), ARG_U64(idx_off));
    }
    clrun_buf_free(sk), clrun_buf_free(si);
    return st;
}
