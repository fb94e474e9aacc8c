/* gemm_s8.c — INT8 GEMM: s8 × s8 accumulated in int32, exact, with the f32 GEMM's layout
 * (transposes, batches, offsets, leading dimensions), and the fused epilogue of an INT8 linear layer
 * (scales per row and column, bias, ReLU). Three kernels, the same sums: NVIDIA's tensor cores
 * (mma.sync s8 in cl/gemm_mma_nv.cl, chosen by a probe), CPUs (the f32 CPU kernel on s8 widened to
 * f32, exact in blocks of 1024 along K: cl/gemm_cpu.cl), other GPUs (cl/gemm_s8.cl). */
#include "op.h"

#include <stdio.h>
#include <string.h>

/* Copy op(S) (rows × cols, TR: stored transposed) of every batch into dst at element d_off, rows of
 * ldd bytes, zero past cols. */
static clrun_status pack(clrun_ctx *ctx, clrun_buf *src, size_t off, size_t ld, size_t stride, int tr, size_t rows, size_t cols, size_t ldd,
                         size_t batch, clrun_buf *dst, size_t d_off)
{
    clrun_kernel *k;
    clrun_status st;
    if ((st = clrun__lib_kernel(ctx, "gemm_s8", tr ? "-DTR=1" : "-DTR=0", "clrun_s8_pack", &k))) return st;
    const clrun__grid g = {3, {(ldd + 63) / 64 * 64, (rows + 63) / 64 * 4, batch}, {64, 4, 1}};
    return CLRUN__RUN(k, g, ARG_U32(rows), ARG_U32(cols), ARG_U32(ldd), ARG_BUF(src), ARG_U64(off), ARG_U32(ld ? ld : 1), ARG_U64(stride),
                      ARG_BUF(dst), ARG_U64(d_off), ARG_U64(rows * ldd));
}
/* The tensor-core kernel reads A as M×K and B as N×K with rows, offsets and batch strides on 16
 * bytes; operands in another layout are packed into the context's scratch buffer first (one pass
 * over them: about 3% of an 8192³ product's time on the H200). */
static clrun_status run_tensor(clrun_ctx *ctx, const clrun_gemm_desc *d, const clrun_s8_epilogue *e)
{
    clrun_status st;
    const size_t batch = d->batch ? d->batch : 1, ldk = (d->k + 15) / 16 * 16;
    clrun_gemm_desc t = *d;
    const int pa = d->k && (d->trans_a || d->lda % 16 || d->a_off % 16 || (batch > 1 && d->stride_a % 16));
    const int pb = d->k && (!d->trans_b || d->ldb % 16 || d->b_off % 16 || (batch > 1 && d->stride_b % 16));
    t.trans_a = 0, t.trans_b = 1;
    if (!d->k) t.a = t.b = NULL, t.a_off = t.b_off = t.stride_a = t.stride_b = 0, t.lda = t.ldb = 16; /* never read */
    if (pa || pb) {
        const size_t abytes = pa ? d->m * ldk * batch : 0, bbytes = pb ? d->n * ldk * batch : 0;
        clrun_buf *s;
        if ((st = clrun__scratch(ctx, abytes + bbytes, &s))) return st;
        if (pa) {
            if ((st = pack(ctx, d->a, d->a_off, d->lda, d->stride_a, d->trans_a, d->m, d->k, ldk, batch, s, 0))) return st;
            t.a = s, t.a_off = 0, t.lda = ldk, t.stride_a = d->m * ldk;
        }
        if (pb) {
            if ((st = pack(ctx, d->b, d->b_off, d->ldb, d->stride_b, !d->trans_b, d->n, d->k, ldk, batch, s, abytes))) return st;
            t.b = s, t.b_off = abytes, t.ldb = ldk, t.stride_b = d->n * ldk;
        }
    }
    return clrun__gemm_s8_tensor(ctx, &t, e);
}

static int s8_probe(clrun_ctx *ctx);
static const char s8_key = 0;

/* Whether the INT8 tensor-core kernel runs here: NVIDIA's OpenCL on a GPU, not refused by
 * CLRUN_NO_TENSOR, and the probe's small product exact. Asked once per context. */
static int s8_tensor(clrun_ctx *ctx)
{
    signed char *state = clrun__op_state(ctx, &s8_key, 1, NULL);
    if (!state) return 0;
    if (!*state) {
        *state = clrun__nv_tensor_candidate(ctx) && s8_probe(ctx) ? 1 : -1;
    }
    return *state == 1;
}

static clrun_status probe_run(clrun_ctx *ctx, const clrun_gemm_desc *d, void *arg)
{
    (void)arg;
    return run_tensor(ctx, d, NULL);
}

/* The probe: an NN product with edges in M, N and K (B packed, the epilogue off), against the host. */
static int s8_probe(clrun_ctx *ctx)
{
    enum { PM = 40, PN = 24, PK = 72 };
    signed char ha[PM * PK], hb[PK * PN];
    int32_t want[PM * PN];
    for (int i = 0; i < PM * PK; i++) ha[i] = (signed char)((i * 37) % 256 - 128);
    for (int i = 0; i < PK * PN; i++) hb[i] = (signed char)((i * 91) % 255 - 127);
    for (int i = 0; i < PM; i++)
        for (int j = 0; j < PN; j++) {
            int32_t s = 0;
            for (int p = 0; p < PK; p++) s += ha[i * PK + p] * hb[p * PN + j];
            want[i * PN + j] = s;
        }
    clrun_gemm_desc d = {0};
    d.m = PM, d.n = PN, d.k = PK, d.alpha = 1, d.lda = PK, d.ldb = PN, d.ldc = PN, d.type = CLRUN_I8;
    return clrun__probe_gemm(ctx, &d, ha, sizeof ha, hb, sizeof hb, want, sizeof want, probe_run, NULL, "gemm s8");
}

clrun_status clrun_gemm_s8(clrun_ctx *ctx, const clrun_gemm_desc *d, const clrun_s8_epilogue *e)
{
    CLRUN__SERIAL(ctx);
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
    if ((st = clrun__check_matrix(ctx, "gemm s8", "A", d->a, 1, d->a_off, d->lda, d->stride_a, ar, ac, batch)) ||
        (st = clrun__check_matrix(ctx, "gemm s8", "B", d->b, 1, d->b_off, d->ldb, d->stride_b, br, bc, batch)) ||
        (st = clrun__check_matrix(ctx, "gemm s8", "C", d->c, 4, d->c_off, d->ldc, d->stride_c, d->m, d->n, batch)))
        return st;
    if (e && ((e->row_scale && clrun_buf_size(e->row_scale) < d->m * 4) || (e->col_scale && clrun_buf_size(e->col_scale) < d->n * 4) ||
              (e->bias && clrun_buf_size(e->bias) < d->n * 4)))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm s8: an epilogue buffer is shorter than its M (row scales) or N (column scales, bias) floats");
    int forced;
    if ((st = clrun__setting_choice(ctx, CLRUN__SET_GEMM_S8_SHAPE, &forced))) return st;
    const int kind = forced >= 0 ? forced : clrun_ctx_device(ctx)->type == CLRUN_DEVICE_CPU ? 1 : s8_tensor(ctx) ? 2 : 0;
    if (kind == 1) return clrun__gemm_s8_cpu(ctx, d, e);
    if (kind == 2) {
        if (!s8_tensor(ctx))
            return clrun__fail(ctx, CLRUN_UNSUPPORTED, "gemm s8: no INT8 tensor-core kernel on %s (NVIDIA's OpenCL and mma.sync s8 are needed)",
                               clrun_ctx_device(ctx)->name);
        return run_tensor(ctx, d, e);
    }
    /* GPUs without tensor cores: tiles of C in local memory */
    char opts[64];
    snprintf(opts, sizeof opts, "-DTA=%d -DTB=%d -DEPI=%d", d->trans_a != 0, d->trans_b != 0, e != NULL);
    clrun_kernel *k;
    if ((st = clrun__lib_kernel(ctx, "gemm_s8", opts, "clrun_gemm_s8", &k))) return st;
    clrun_buf *a = d->a ? d->a : d->c, *b = d->b ? d->b : d->c; /* K = 0: never read */
    const clrun__grid g = {3, {(d->n + 15) / 16 * 16, (d->m + 15) / 16 * 16, batch}, {16, 16, 1}};
    const int flags = (e && e->relu ? 1 : 0) | (d->beta == 1.0f ? 2 : 0);
    return CLRUN__RUN(k, g, ARG_U32(d->m), ARG_U32(d->n), ARG_U32(d->k), ARG_BUF(a), ARG_U64(d->a_off), ARG_U32(d->lda ? d->lda : 1),
                      ARG_U64(d->stride_a), ARG_BUF(b), ARG_U64(d->b_off), ARG_U32(d->ldb ? d->ldb : 1), ARG_U64(d->stride_b), ARG_BUF(d->c),
                      ARG_U64(d->c_off), ARG_U32(d->ldc), ARG_U64(d->stride_c), ARG_BUF(e ? e->row_scale : NULL), ARG_BUF(e ? e->col_scale : NULL),
                      ARG_BUF(e ? e->bias : NULL), ARG_I32(flags));
}
