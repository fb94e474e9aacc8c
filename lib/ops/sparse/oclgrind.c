/* oclgrind.c — the sparse kernels on small, awkward shapes under Oclgrind's checkers (the families
 * tests/oclgrind_ops.c runs; tests/oclgrind_check.py says how). */
#include "oclgrind_ops.h"

/* 2:4 sparsity: prune, compress, decompress, and the sparse GEMM on both shapes, f16 and bf16; K
 * not a multiple of 4 or 32. */
static void sparse(void)
{
    const clrun_dtype types[] = {CLRUN_F16, CLRUN_BF16};
    const clrun_gemm_backend backends[] = {CLRUN_GEMM_GPU_KERNEL, CLRUN_GEMM_CPU_KERNEL};
    for (int t = 0; t < 2; t++) {
        const size_t rows = 11, k = 38, ld = k + 2, kv = clrun_sp24_kv(k), km = clrun_sp24_km(k);
        clrun_buf *x = make(types[t], rows * ld + 1), *vals = make(types[t], rows * kv), *meta = make(CLRUN_F32, rows * km),
                  *back = make(types[t], rows * ld);
        TRY(clrun_sp24_compress(ctx, types[t], x, 1, ld, rows, k, vals, meta));
        TRY(clrun_sp24_decompress(ctx, types[t], vals, meta, rows, k, back, 0, ld));
        TRY(clrun_sp24_prune(ctx, types[t], x, 1, ld, rows, k));
        for (int bi = 0; bi < 2; bi++) {
            clrun_gemm_desc d;
            memset(&d, 0, sizeof d);
            const size_t n = 9 + (size_t)bi;
            d.type = types[t], d.backend = backends[bi], d.m = rows, d.n = n, d.k = k, d.alpha = 0.75f, d.beta = bi ? 0.5f : 0.0f;
            d.trans_b = bi, d.a = vals, d.lda = kv, d.ldb = bi ? k : n, d.ldc = n + 1;
            d.b = make(types[t], (bi ? n : k) * d.ldb), d.c = make(CLRUN_F32, rows * d.ldc);
            TRY(clrun_gemm_sp(ctx, &d, meta, 0));
            TRY(clrun_finish(ctx));
            clrun_buf_free(d.b), clrun_buf_free(d.c);
        }
        TRY(clrun_finish(ctx));
        clrun_buf_free(x), clrun_buf_free(vals), clrun_buf_free(meta), clrun_buf_free(back);
    }
}

const struct og_family og_families_sparse[] = {{"sparse", sparse}, {0}};
