/* gemm_cpu.cl — C = alpha·op(A)·op(B) + beta·C in f32, row-major, CPU-shaped (PoCL).
 *
 * Work-item mapping: each work-item computes one RM×16 block of C (RM rows, 16 columns as two
 * float8 vectors, the width of an AVX2 register pair) over the whole K, with no __local memory and
 * no barrier (PoCL keeps private values across barriers, which would spill the accumulators). When
 * B is not transposed the 16 columns are loaded as vectors; blocks that cross the matrix edge, and
 * transposed B, take a scalar path. Batches run along the third dimension.
 *
 * Tuning parameters (-D): RM (rows per work-item), TA, TB (1: transposed). Work-groups are 8×1. */

#ifndef RM
#define RM 6
#endif
#ifndef TA
#define TA 0
#endif
#ifndef TB
#define TB 0
#endif

#include "common.h"
#define AT CLRUN_AT
#define BT CLRUN_BT

__kernel __attribute__((reqd_work_group_size(8, 1, 1))) void
clrun_gemm_cpu(const uint M, const uint N, const uint K, const float alpha, const float beta,
               __global const float *restrict A0, const ulong a_off, const uint lda, const ulong stride_a,
               __global const float *restrict B0, const ulong b_off, const uint ldb, const ulong stride_b,
               __global float *C0, const ulong c_off, const uint ldc, const ulong stride_c)
{
    const uint j0 = get_global_id(0) * 16, i0 = get_global_id(1) * RM;
    if (j0 >= N || i0 >= M) return;
    const size_t batch = get_global_id(2);
    __global const float *A = A0 + a_off + batch * stride_a;
    __global const float *B = B0 + b_off + batch * stride_b;
    __global float *C = C0 + c_off + batch * stride_c;
    const uint rows = min((uint)RM, M - i0), cols = min(16u, N - j0);
    float8 lo[RM], hi[RM];
    for (int r = 0; r < RM; r++) lo[r] = hi[r] = (float8)(0.0f);
    if (!TB && rows == RM && cols == 16) {
        for (uint p = 0; p < K; p++) {
            const __global float *row = B + (size_t)p * ldb + j0; /* not transposed here */
            const float8 b0 = vload8(0, row), b1 = vload8(1, row);
            for (int r = 0; r < RM; r++) {
                const float a = AT(i0 + r, p);
                lo[r] = fma((float8)(a), b0, lo[r]);
                hi[r] = fma((float8)(a), b1, hi[r]);
            }
        }
    } else {
        for (uint p = 0; p < K; p++) {
            float bv[16];
            for (uint c = 0; c < 16; c++) bv[c] = c < cols ? BT(p, j0 + c) : 0.0f;
            const float8 b0 = vload8(0, bv), b1 = vload8(1, bv);
            for (int r = 0; r < RM; r++) {
                const float a = (uint)r < rows ? AT(i0 + r, p) : 0.0f;
                lo[r] = fma((float8)(a), b0, lo[r]);
                hi[r] = fma((float8)(a), b1, hi[r]);
            }
        }
    }
    for (uint r = 0; r < rows; r++) {
        float out[16];
        vstore8(lo[r], 0, out);
        vstore8(hi[r], 1, out);
        __global float *c = C + (size_t)(i0 + r) * ldc + j0;
        for (uint q = 0; q < cols; q++) c[q] = beta == 0.0f ? alpha * out[q] : fma(alpha, out[q], beta * c[q]);
    }
}
