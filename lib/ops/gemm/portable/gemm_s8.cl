/* gemm_s8.cl — C = op(A)·op(B) over int8, accumulated in int32 exactly (lib/ops/gemm/portable/portable.c): a
 * work-item per element of C, tiles of A and B staged in local memory (GPUs without tensor cores).
 * TA, TB: transposes; EPI: C's epilogue (s8_epilogue.h). Also clrun_s8_pack, which copies op(A)
 * or op(B) into the row layout the tensor-core kernel reads. */
#pragma OPENCL FP_CONTRACT OFF
#define T 16

#include "s8_epilogue.h"

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
    clrun_s8_store(Cv, c_off + z * stride_c + (ulong)i * ldc + j, acc, i, j, rs, cs, bias, flags);
}


/* D[z][r][c] = op(S)[r][c] for c < cols, 0 for cols <= c < ldd (r < rows): op(A) as M×K or op(B)ᵀ
 * as N×K, rows of ldd (a multiple of 16) bytes, for the tensor-core kernel. TR 1: op(S)[r][c] is
 * S[c·lds + r], transposed through a 64×64 tile in local memory so that both sides move along rows. */
#ifndef TR
#define TR 0
#endif
__kernel __attribute__((reqd_work_group_size(64, 4, 1))) void clrun_s8_pack(const uint rows, const uint cols, const uint ldd,
                                                                         __global const char *S, const ulong s_off, const uint lds,
                                                                         const ulong s_stride, __global char *D, const ulong d_off,
                                                                         const ulong d_stride)
{
    const uint tx = get_local_id(0), ty = get_local_id(1), c0 = get_group_id(0) * 64, r0 = get_group_id(1) * 64, z = get_global_id(2);
    S += s_off + z * s_stride, D += d_off + z * d_stride;
#if TR
    __local char t[64][65];
    for (uint y = ty; y < 64; y += 4) {
        const uint c = c0 + y, r = r0 + tx;
        t[y][tx] = c < cols && r < rows ? S[(ulong)c * lds + r] : 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint y = ty; y < 64; y += 4) {
        const uint r = r0 + y, c = c0 + tx;
        if (r < rows && c < ldd) D[(ulong)r * ldd + c] = t[tx][y];
    }
#else
    for (uint y = ty; y < 64; y += 4) {
        const uint r = r0 + y, c = c0 + tx;
        if (r < rows && c < ldd) D[(ulong)r * ldd + c] = c < cols ? S[(ulong)r * lds + c] : 0;
    }
#endif
}
