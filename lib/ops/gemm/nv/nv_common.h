/* nv_common.h — what NVIDIA's tensor-core GEMM kernels share (lib/ops/gemm/nv/gemm_mma_nv.cl,
 * lib/ops/gemm/nv/gemm_wgmma_nv.cl): local addresses, the 16-byte cp.async, and C's store of an accumulator
 * pair. Included after ABT, C2 (and, for ABT 3, s8_epilogue.h) are set. */
#ifndef CLRUN_NV_COMMON_H
#define CLRUN_NV_COMMON_H

#define STR_(x) #x
#define STR(x) STR_(x)

/* the shared-window address of a local pointer, as the PTX instructions take it */
static inline uint smem_addr(__local const void *p) { return (uint)(size_t)p; }

/* 16 bytes from src to local address dst; bytes < 16 zero-fills the rest (0: src is not read) */
static inline void cp_async16(uint dst, __global const void *src, uint bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
}

#if ABT == 3
/* C[at], C[at + 1] (row gi, columns gj, gj + 1; the second only when two) from int32 sums x, y,
 * through the INT8 epilogue */
static inline void nv_store_pair_s8(__global void *C0, const ulong at, const int x, const int y, const uint gi, const uint gj, const int two,
                                    __global const float *rs, __global const float *cs, __global const float *bias, const int flags)
{
    clrun_s8_store(C0, at, x, gi, gj, rs, cs, bias, flags);
    if (two) clrun_s8_store(C0, at + 1, y, gi, gj + 1, rs, cs, bias, flags);
}
#else
/* p[0], p[1] (the second only when two) = alpha·(x, y) + beta·p (beta 0: p is not read); C2: the
 * host saw C's rows 8-byte aligned, so a pair goes as one float2 */
static inline void nv_store_pair(__global float *p, const float x, const float y, const int two, const float alpha, const float beta)
{
    if (C2 && two) {
        const float2 r = (float2)(x, y);
        *(__global float2 *)p = beta == 0.0f ? alpha * r : fma((float2)(alpha), r, beta * *(__global float2 *)p);
        return;
    }
    p[0] = beta == 0.0f ? alpha * x : fma(alpha, x, beta * p[0]);
    if (two) p[1] = beta == 0.0f ? alpha * y : fma(alpha, y, beta * p[1]);
}
#endif

#endif
