/* gemm_s8.c — INT8 GEMM (cl/gemm_s8.cl): s8 × s8 accumulated in int32, exact, with the f32 GEMM's
 * layout (transposes, batches, offsets, leading dimensions), and the fused epilogue of an INT8
 * linear layer (scales per row and column, bias, ReLU). */
#include "op.h"

#include <stdio.h>

static clrun_status check(clrun_ctx *ctx, const char *name, clrun_buf *b, size_t es, size_t off, size_t ld, size_t stride, size_t rows,
                          size_t cols, size_t batch)
{
    if (!rows || !cols) return CLRUN_OK;
    if (!b) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm s8: matrix %s is NULL", name);
    if (ld < cols) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm s8: ld%s %zu is smaller than its rows' %zu elements", name, ld, cols);
    if (ld > UINT32_MAX) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm s8: ld%s is too large", name);
    const size_t last = off + (batch - 1) * stride + (rows - 1) * ld + cols;
    if (last / es > SIZE_MAX / es || last * es > clrun_buf_size(b))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm s8: matrix %s (%zu×%zu, ld %zu, from element %zu, %zu batches) runs past its buffer of %zu bytes",
                           name, rows, cols, ld, off, batch, clrun_buf_size(b));
    return CLRUN_OK;
}

clrun_status clrun_gemm_s8(clrun_ctx *ctx, const clrun_gemm_desc *d, const clrun_s8_epilogue *e)
{
    clrun_status st;
    if (!d) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm s8: descriptor is NULL");
    if (d->type != CLRUN_I8) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm s8: the descriptor's type must be CLRUN_I8 (it is %s)", clrun_dtype_name(d->type));
    if (d->alpha != 1.0f || (d->beta != 0.0f && (d->beta != 1.0f || e)))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm s8: alpha is 1 and beta 0 (or 1 to add into an int32 C); scale through the epilogue");
    const size_t batch = d->batch ? d->batch : 1;
    if (d->m == 0 || d->n == 0) return CLRUN_OK;
    if (d->m > UINT32_MAX || d->n > UINT32_MAX) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm s8: M and N are below 2^32");
    if (d->k > 131072)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm s8: K = %zu: int32 sums of 128·128 products are exact only for K up to 131072", d->k);
    if (batch > 65535) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm s8: at most 65535 batches");
    if (batch > 1 && d->stride_c < d->m * d->ldc)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm s8: stride_c %zu makes the batches' C matrices overlap (or is 0)", d->stride_c);
    const size_t ar = d->trans_a ? d->k : d->m, ac = d->trans_a ? d->m : d->k, br = d->trans_b ? d->n : d->k, bc = d->trans_b ? d->k : d->n;
    if ((st = check(ctx, "A", d->a, 1, d->a_off, d->lda, d->stride_a, ar, ac, batch)) ||
        (st = check(ctx, "B", d->b, 1, d->b_off, d->ldb, d->stride_b, br, bc, batch)) ||
        (st = check(ctx, "C", d->c, 4, d->c_off, d->ldc, d->stride_c, d->m, d->n, batch)))
        return st;
    if (e && ((e->row_scale && clrun_buf_size(e->row_scale) < d->m * 4) || (e->col_scale && clrun_buf_size(e->col_scale) < d->n * 4) ||
              (e->bias && clrun_buf_size(e->bias) < d->n * 4)))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm s8: an epilogue buffer is shorter than its M (row scales) or N (column scales, bias) floats");
    char opts[64];
    snprintf(opts, sizeof opts, "-DTA=%d -DTB=%d -DEPI=%d", d->trans_a != 0, d->trans_b != 0, e != NULL);
    clrun_kernel *k;
    /* CPUs: rows of 16 columns a work-item, no barriers (PoCL runs the tiled kernel's 256-item
     * work-groups with a barrier every 16 steps of K far more slowly); GPUs: tiles in local memory */
    int forced;
    if ((st = clrun__setting_choice(ctx, CLRUN__SET_GEMM_S8_SHAPE, &forced))) return st;
    const int cpu = forced >= 0 ? forced == 1 : clrun_ctx_device(ctx)->type == CLRUN_DEVICE_CPU;
    if ((st = clrun__lib_kernel(ctx, "gemm_s8", opts, cpu ? "clrun_gemm_s8_cpu" : "clrun_gemm_s8", &k))) return st;
    clrun_buf *a = d->a ? d->a : d->c, *b = d->b ? d->b : d->c; /* K = 0: never read */
    clrun__grid g = {3, {(d->n + 15) / 16 * 16, (d->m + 15) / 16 * 16, batch}, {16, 16, 1}};
    if (cpu) g = (clrun__grid){3, {(d->n + 15) / 16, (d->m + 3) / 4, batch}, {1, 1, 1}};
    const int flags = (e && e->relu ? 1 : 0) | (d->beta == 1.0f ? 2 : 0);
    return CLRUN__RUN(k, g, ARG_U32(d->m), ARG_U32(d->n), ARG_U32(d->k), ARG_BUF(a), ARG_U64(d->a_off), ARG_U32(d->lda ? d->lda : 1),
                      ARG_U64(d->stride_a), ARG_BUF(b), ARG_U64(d->b_off), ARG_U32(d->ldb ? d->ldb : 1), ARG_U64(d->stride_b), ARG_BUF(d->c),
                      ARG_U64(d->c_off), ARG_U32(d->ldc), ARG_U64(d->stride_c), ARG_BUF(e ? e->row_scale : NULL), ARG_BUF(e ? e->col_scale : NULL),
                      ARG_BUF(e ? e->bias : NULL), ARG_I32(flags));
}
