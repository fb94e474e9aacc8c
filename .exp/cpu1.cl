#ifndef RM
#define RM 8
#endif
#ifndef PACK
#define PACK 0
#endif
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void k(const uint M, const uint N, const uint K, __global const float *restrict A, const uint lda,
                __global const float *restrict B, const uint ldb, __global float *C, const uint ldc)
{
    const uint j0 = get_global_id(0) * 32, i0 = get_global_id(1) * RM;
    float16 lo[RM], hi[RM];
#pragma unroll
    for (int r = 0; r < RM; r++) lo[r] = hi[r] = (float16)(0.0f);
#if PACK
    __global const float *bp = B + (size_t)get_global_id(0) * K * 32;
#endif
    for (uint p = 0; p < K; p++) {
#if PACK
        const float16 b0 = vload16(0, bp + p * 32), b1 = vload16(1, bp + p * 32);
#else
        const __global float *row = B + (size_t)p * ldb + j0;
        const float16 b0 = vload16(0, row), b1 = vload16(1, row);
#endif
#pragma unroll
        for (int r = 0; r < RM; r++) {
            const float a = A[(size_t)(i0 + r) * lda + p];
            lo[r] = fma((float16)(a), b0, lo[r]);
            hi[r] = fma((float16)(a), b1, hi[r]);
        }
    }
#pragma unroll
    for (int r = 0; r < RM; r++) {
        vstore16(lo[r], 0, C + (size_t)(i0 + r) * ldc + j0);
        vstore16(hi[r], 1, C + (size_t)(i0 + r) * ldc + j0);
    }
}
