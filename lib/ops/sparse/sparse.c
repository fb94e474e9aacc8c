/* sparse.c — 2:4 structured sparsity (lib/ops/sparse/sparse.cl): prune, compress, decompress, and the sparse
 * GEMM with A compressed: NVIDIA's sparse tensor cores (mma.sp in lib/ops/gemm/nv/gemm_mma_nv.cl, chosen by a
 * probe), CPUs (lib/ops/gemm/cpu/gemm_cpu.cl: half the FMAs of the dense kernel), other GPUs (lib/ops/sparse/sparse.cl). The
 * layout is in clrun.h. */
#include "opkit.h"

#include <stdio.h>
#include <string.h>

size_t clrun_sp24_kv(size_t k) { return 2 * ((k + 3) / 4); }
size_t clrun_sp24_km(size_t k) { return (k + 31) / 32; }

clrun_status clrun_sp24_meta_check(const uint32_t *meta, size_t rows, size_t k, size_t *bad_row, size_t *bad_group)
{
    const size_t km = clrun_sp24_km(k), groups = (k + 3) / 4;
    if (!meta && rows && k) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_sp24_meta_check: meta is NULL");
    for (size_t r = 0; r < rows; r++)
        for (size_t g = 0; g < groups; g++) {
            const unsigned e = (meta[r * km + g / 8] >> (4 * (g % 8))) & 15, lo = e & 3, hi = e >> 2;
            if (lo < hi) continue;
            if (bad_row) *bad_row = r;
            if (bad_group) *bad_group = g;
            return clrun__fail(NULL, CLRUN_FORMAT_ERROR,
                               "2:4 metadata: row %zu, group %zu (columns %zu-%zu) names columns %u and %u; two distinct columns, the "
                               "lower first, are needed (metadata as clrun op sparsify or clrun_sp24_compress writes it)",
                               r, g, 4 * g, 4 * g + 3, lo, hi);
        }
    return CLRUN_OK;
}

static clrun_status check_type(clrun_ctx *ctx, const char *what, clrun_dtype t)
{
    if (clrun__float_code(t) < 0)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: element type %s: 2:4 sparsity takes f32, f16 or bf16", what, clrun_dtype_name(t));
    return CLRUN_OK;
}

/* buf holds `count` elements of `es` bytes from element off (overflow-safe). */
static int fits(clrun_buf *buf, size_t off, size_t count, size_t es)
{
    return buf && off <= SIZE_MAX / es - count && (off + count) <= clrun_buf_size(buf) / es;
}

/* The dense rows × k matrix from element off with leading dimension ld lies inside x. */
static clrun_status check_dense(clrun_ctx *ctx, const char *what, clrun_buf *x, size_t es, size_t off, size_t ld, size_t rows, size_t k)
{
    if (!x) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: the dense matrix is NULL", what);
    if (ld < k) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: leading dimension %zu is smaller than K = %zu", what, ld, k);
    if (rows > UINT32_MAX || k > UINT32_MAX || ld > UINT32_MAX)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: rows, K and the leading dimension are below 2^32", what);
    if ((rows - 1) > (SIZE_MAX - k) / ld || !fits(x, off, (rows - 1) * ld + k, es))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: the %zu×%zu matrix (ld %zu, from element %zu) runs past its buffer of %zu bytes",
                           what, rows, k, ld, off, clrun_buf_size(x));
    return CLRUN_OK;
}

static clrun_status check_compressed(clrun_ctx *ctx, const char *what, clrun_buf *values, clrun_buf *meta, size_t es, size_t rows, size_t k)
{
    const size_t kv = clrun_sp24_kv(k), km = clrun_sp24_km(k);
    if (!values || !meta) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: values or metadata buffer is NULL", what);
    if (rows > SIZE_MAX / kv / es || !fits(values, 0, rows * kv, es))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: values need %zu×%zu elements (%zu bytes); the buffer has %zu", what, rows, kv,
                           rows * kv * es, clrun_buf_size(values));
    if (!fits(meta, 0, rows * km, 4))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: metadata needs %zu×%zu words (%zu bytes); the buffer has %zu", what, rows, km,
                           rows * km * 4, clrun_buf_size(meta));
    return CLRUN_OK;
}

static clrun_status kernel(clrun_ctx *ctx, clrun_dtype t, const char *name, clrun_kernel **k)
{
    char opts[16];
    snprintf(opts, sizeof opts, "-DABT=%d", clrun__float_code(t));
    return clrun__lib_kernel(ctx, "sparse", opts, name, k);
}

clrun_status clrun_sp24_prune(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t off, size_t ld, size_t rows, size_t k)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_sp24_prune: ctx is NULL");
    CLRUN__SERIAL(ctx);
    clrun_status st;
    clrun_kernel *kn;
    if (!rows || !k) return CLRUN_OK;
    if ((st = check_type(ctx, "sp24 prune", t)) || (st = check_dense(ctx, "sp24 prune", x, clrun_dtype_size(t), off, ld, rows, k)) ||
        (st = kernel(ctx, t, "clrun_sp24_prune", &kn)))
        return st;
    return CLRUN__RUN(kn, ((clrun__grid){2, {(k + 3) / 4, rows, 1}, {0}}), ARG_BUF(x), ARG_U64(off), ARG_U32(ld), ARG_U32(rows),
                      ARG_U32(k));
}

clrun_status clrun_sp24_compress(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t off, size_t ld, size_t rows, size_t k,
                                 clrun_buf *values, clrun_buf *meta)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_sp24_compress: ctx is NULL");
    CLRUN__SERIAL(ctx);
    clrun_status st;
    clrun_kernel *kn;
    if (!rows || !k) return CLRUN_OK;
    const size_t es = clrun_dtype_size(t);
    if ((st = check_type(ctx, "sp24 compress", t)) || (st = check_dense(ctx, "sp24 compress", x, es, off, ld, rows, k)) ||
        (st = check_compressed(ctx, "sp24 compress", values, meta, es, rows, k)) || (st = kernel(ctx, t, "clrun_sp24_compress", &kn)))
        return st;
    return CLRUN__RUN(kn, ((clrun__grid){2, {clrun_sp24_km(k), rows, 1}, {0}}), ARG_BUF(x), ARG_U64(off), ARG_U32(ld), ARG_U32(rows),
                      ARG_U32(k), ARG_BUF(values), ARG_BUF(meta));
}

clrun_status clrun_sp24_decompress(clrun_ctx *ctx, clrun_dtype t, clrun_buf *values, clrun_buf *meta, size_t rows, size_t k, clrun_buf *x,
                                   size_t off, size_t ld)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_sp24_decompress: ctx is NULL");
    CLRUN__SERIAL(ctx);
    clrun_status st;
    clrun_kernel *kn;
    if (!rows || !k) return CLRUN_OK;
    const size_t es = clrun_dtype_size(t);
    if ((st = check_type(ctx, "sp24 decompress", t)) || (st = check_dense(ctx, "sp24 decompress", x, es, off, ld, rows, k)) ||
        (st = check_compressed(ctx, "sp24 decompress", values, meta, es, rows, k)) || (st = kernel(ctx, t, "clrun_sp24_decompress", &kn)))
        return st;
    return CLRUN__RUN(kn, ((clrun__grid){2, {clrun_sp24_km(k), rows, 1}, {0}}), ARG_BUF(values), ARG_BUF(meta), ARG_U32(rows), ARG_U32(k),
                      ARG_BUF(x), ARG_U64(off), ARG_U32(ld));
}
