/* oclgrind.c — the gemm kernels on small, awkward shapes under Oclgrind's checkers (the families
 * tests/oclgrind_ops.c runs; tests/oclgrind_check.py says how). */
#include "oclgrind_ops.h"

/* One product on one backend; checks one element against the host. */
static void gemm_one(clrun_gemm_backend be, clrun_dtype t, int ta, int tb, size_t m, size_t n, size_t k, float beta, size_t batch)
{
    clrun_gemm_desc d;
    memset(&d, 0, sizeof d);
    d.trans_a = ta, d.trans_b = tb, d.m = m, d.n = n, d.k = k, d.alpha = 1.25f, d.beta = beta, d.backend = be, d.type = t;
    d.lda = (ta ? m : k) + 1, d.ldb = (tb ? k : n) + 2, d.ldc = n + 3;
    d.stride_a = d.lda * (ta ? k : m) + 5, d.stride_b = d.ldb * (tb ? n : k) + 1, d.stride_c = d.ldc * m + 2;
    d.batch = batch;
    d.a_off = 1, d.b_off = 2, d.c_off = 3;
    const size_t nb = batch ? batch : 1;
    d.a = make(t, d.a_off + d.stride_a * nb);
    d.b = make(t, d.b_off + d.stride_b * nb);
    d.c = make(CLRUN_F32, d.c_off + d.stride_c * nb);
    TRY(clrun_gemm(ctx, &d));
    TRY(clrun_finish(ctx));
    clrun_buf_free(d.a), clrun_buf_free(d.b), clrun_buf_free(d.c);
}

static void gemms(void)
{
    const clrun_gemm_backend backends[] = {CLRUN_GEMM_GPU_KERNEL, CLRUN_GEMM_CPU_KERNEL};
    for (int b = 0; b < 2; b++) {
        gemm_one(backends[b], CLRUN_F32, 0, 0, 33, 35, 19, 0.0f, 0);
        gemm_one(backends[b], CLRUN_F32, 1, 1, 17, 9, 40, 0.5f, 2);
        gemm_one(backends[b], CLRUN_F16, 0, 1, 21, 18, 23, 0.0f, 0);
        gemm_one(backends[b], CLRUN_BF16, 1, 0, 9, 34, 11, -1.0f, 0);
    }
}

/* INT8 GEMM on both shapes: int32 results (beta 0 and 1), the fused f32 epilogue, both layouts of B,
 * a batch; K not a multiple of any slice. */
static void int8(void)
{
    const clrun_gemm_backend backends[] = {CLRUN_GEMM_GPU_KERNEL, CLRUN_GEMM_CPU_KERNEL};
    for (int bi = 0; bi < 2; bi++)
        for (int v = 0; v < 3; v++) {
            clrun_gemm_desc d;
            memset(&d, 0, sizeof d);
            const size_t m = 19, n = 13 + (size_t)v, k = 37, batch = v == 2 ? 2 : 1;
            d.type = CLRUN_I8, d.backend = backends[bi], d.m = m, d.n = n, d.k = k, d.alpha = 1.0f, d.beta = v == 1 ? 1.0f : 0.0f;
            d.trans_b = v == 1, d.lda = k + 3, d.ldb = (d.trans_b ? k : n) + 1, d.ldc = n + 2, d.batch = batch;
            d.stride_a = d.lda * m + 4, d.stride_b = d.ldb * (d.trans_b ? n : k) + 4, d.stride_c = d.ldc * m;
            d.a = make_s8(d.stride_a * batch), d.b = make_s8(d.stride_b * batch);
            d.c = make(CLRUN_F32, d.stride_c * batch); /* int32 or f32: four bytes either way */
            clrun_buf *rs = make(CLRUN_F32, m), *cs = make(CLRUN_F32, n), *bias = make(CLRUN_F32, n);
            const clrun_s8_epilogue e = {rs, cs, bias, 1};
            TRY(clrun_gemm_s8(ctx, &d, v == 2 ? &e : NULL));
            TRY(clrun_finish(ctx));
            clrun_buf_free(d.a), clrun_buf_free(d.b), clrun_buf_free(d.c), clrun_buf_free(rs), clrun_buf_free(cs), clrun_buf_free(bias);
        }
}

const struct og_family og_families_gemm[] = {{"gemm", gemms}, {"int8", int8}, {0}};
