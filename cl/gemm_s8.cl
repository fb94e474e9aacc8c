/* gemm_s8.cl — C = op(A)·op(B) over int8, accumulated in int32 exactly (lib/ops/gemm_s8.c): a
 * work-item per element of C, tiles of A and B staged in local memory. TA, TB: transposes; EPI 1:
 * C is f32, C = (float)acc · row_scale[i] · col_scale[j] + bias[j], then ReLU when RELU (each
 * operation rounded apart: no contraction); EPI 0: C is int32, C = acc (+ C when ACC). */
#pragma OPENCL FP_CONTRACT OFF
#define T 16

/* Element `at` of C, row i, column j, from its exact sum: the epilogue (EPI) or the int32 store. */
inline void store(__global void *Cv, const ulong at, const int acc, const uint i, const uint j, __global const float *rs,
                  __global const float *cs, __global const float *bias, const int flags)
{
#if EPI
    float v = (float)acc;
    if (rs) v = v * rs[i];
    if (cs) v = v * cs[j];
    if (bias) v = v + bias[j];
    if (flags & 1) v = fmax(v, 0.0f);
    ((__global float *)Cv)[at] = v;
#else
    __global int *C = (__global int *)Cv;
    C[at] = (flags & 2) ? C[at] + acc : acc;
#endif
}

__kernel __attribute__((reqd_work_group_size(T, T, 1))) void
clrun_gemm_s8(const uint M, const uint N, const uint K, __global const char *A, const ulong a_off, const uint lda, const ulong stride_a,
              __global const char *B, const ulong b_off, const uint ldb, const ulong stride_b, __global void *Cv, const ulong c_off,
              const uint ldc, const ulong stride_c, __global const float *rs, __global const float *cs, __global const float *bias,
              const int flags)
{
    __local char la[T][T + 4], lb[T][T + 4];
    const uint j = get_global_id(0), i = get_global_id(1), z = get_global_id(2);
    const uint tx = get_local_id(0), ty = get_local_id(1);
    A += a_off + z * stride_a, B += b_off + z * stride_b;
    int acc = 0;
    for (uint k0 = 0; k0 < K; k0 += T) {
        /* A's tile: rows of C's tile (i), columns k0 + tx; B's: rows k0 + ty, columns of C's tile (j) */
        const uint ak = k0 + tx, bk = k0 + ty, ai = get_group_id(1) * T + ty, bj = get_group_id(0) * T + tx;
#if TA
        la[ty][tx] = ai < M && ak < K ? A[(ulong)ak * lda + ai] : 0;
#else
        la[ty][tx] = ai < M && ak < K ? A[(ulong)ai * lda + ak] : 0;
#endif
#if TB
        lb[ty][tx] = bj < N && bk < K ? B[(ulong)bj * ldb + bk] : 0;
#else
        lb[ty][tx] = bj < N && bk < K ? B[(ulong)bk * ldb + bj] : 0;
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = 0; k < T; k++) acc += (int)la[ty][k] * (int)lb[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (i >= M || j >= N) return;
    store(Cv, c_off + z * stride_c + (ulong)i * ldc + j, acc, i, j, rs, cs, bias, flags);
}

/* The CPU shape: a work-item per 4 rows × 16 columns of C, B's row segment read once for the four
 * rows and widened to int16 vectors, no local memory and no barriers (the same exact sums). */
#define RM 4
__kernel void clrun_gemm_s8_cpu(const uint M, const uint N, const uint K, __global const char *A, const ulong a_off, const uint lda,
                                const ulong stride_a, __global const char *B, const ulong b_off, const uint ldb, const ulong stride_b,
                                __global void *Cv, const ulong c_off, const uint ldc, const ulong stride_c, __global const float *rs,
                                __global const float *cs, __global const float *bias, const int flags)
{
    const uint j0 = get_global_id(0) * 16, i0 = get_global_id(1) * RM, z = get_global_id(2);
    if (j0 >= N || i0 >= M) return;
    A += a_off + z * stride_a, B += b_off + z * stride_b;
    int16 acc[RM];
    for (int r = 0; r < RM; r++) acc[r] = (int16)(0);
    const int full = j0 + 16 <= N;
    for (uint k = 0; k < K; k++) {
        int16 b;
#if TB
        char bb[16];
        for (int c = 0; c < 16; c++) bb[c] = j0 + c < N ? B[(ulong)(j0 + c) * ldb + k] : 0;
        b = convert_int16(vload16(0, bb));
#else
        if (full) b = convert_int16(vload16(0, B + (ulong)k * ldb + j0));
        else {
            char bb[16];
            for (int c = 0; c < 16; c++) bb[c] = j0 + c < N ? B[(ulong)k * ldb + j0 + c] : 0;
            b = convert_int16(vload16(0, bb));
        }
#endif
        for (int r = 0; r < RM; r++) {
            const uint i = i0 + r;
#if TA
            const int a = i < M ? A[(ulong)k * lda + i] : 0;
#else
            const int a = i < M ? A[(ulong)i * lda + k] : 0;
#endif
            acc[r] += a * b;
        }
    }
    for (int r = 0; r < RM; r++) {
        const uint i = i0 + r;
        if (i >= M) break;
        int v16[16];
        vstore16(acc[r], 0, v16);
        for (int c = 0; c < 16 && j0 + c < N; c++)
            store(Cv, c_off + z * stride_c + (ulong)i * ldc + j0 + c, v16[c], i, j0 + c, rs, cs, bias, flags);
    }
}
