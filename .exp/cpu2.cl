#ifndef RM
#define RM 8
#endif
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void k(const uint M, const uint N, const uint K, __global const float *restrict A, const uint lda,
                __global const float *restrict B, const uint ldb, __global float *C, const uint ldc)
{
#if SWAP
    const uint j0 = get_global_id(1) * 32, ib0 = get_global_id(0) * RM * MC;
#else
    const uint j0 = get_global_id(0) * 32, ib0 = get_global_id(1) * RM * MC;
#endif
    for (uint i0 = ib0; i0 < ib0 + RM * MC; i0 += RM) {
    float16 lo[RM], hi[RM];
    for (int r = 0; r < RM; r++) lo[r] = hi[r] = (float16)(0.0f);
    for (uint p = 0; p < K; p++) {
        const __global float *row = B + (size_t)p * ldb + j0;
        const float16 b0 = vload16(0, row), b1 = vload16(1, row);
        for (int r = 0; r < RM; r++) {
            const float a = A[(size_t)(i0 + r) * lda + p];
            lo[r] = fma((float16)(a), b0, lo[r]);
            hi[r] = fma((float16)(a), b1, hi[r]);
        }
    }
    for (int r = 0; r < RM; r++) {
        vstore16(lo[r], 0, C + (size_t)(i0 + r) * ldc + j0);
        vstore16(hi[r], 1, C + (size_t)(i0 + r) * ldc + j0);
    }
    }
}
