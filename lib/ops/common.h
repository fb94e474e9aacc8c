/* common.h — helpers shared by the kernel library's sources (included with #include "common.h"). */
#ifndef CLRUN_COMMON_H
#define CLRUN_COMMON_H

/* Element type of the GEMM operands A and B (-DABT): 0 f32, 1 f16 (IEEE binary16, read with
 * vload_half: no cl_khr_fp16 needed), 2 bf16 (the top half of an f32 pattern, stored as ushort),
 * 3 s8 (INT8 GEMM's packing on CPUs: every s8 is exact in f32).
 * Every element is widened to f32 on load; the arithmetic is f32 whatever ABT. CLRUN_LD(p, i) reads
 * element i of p, CLRUN_LD4(p) the four elements from p. */
#ifndef ABT
#define ABT 0
#endif
#if ABT == 1
#define CLRUN_ELT half
#define CLRUN_LD(p, i) vload_half((i), (p))
#define CLRUN_LD4(p) vload_half4(0, (p))
#elif ABT == 2
#define CLRUN_ELT ushort
#define CLRUN_LD(p, i) as_float((uint)(p)[i] << 16)
#define CLRUN_LD4(p) as_float4(convert_uint4(vload4(0, (p))) << 16)
#elif ABT == 3
#define CLRUN_ELT char
#define CLRUN_LD(p, i) ((float)(p)[i])
#define CLRUN_LD4(p) convert_float4(vload4(0, (p)))
#else
#define CLRUN_ELT float
#define CLRUN_LD(p, i) ((p)[i])
#define CLRUN_LD4(p) (*(__global const float4 *)(p)) /* callers guarantee 16-byte alignment */
#endif

/* f32 pattern x to bf16, rounded to nearest even; any NaN gives 0x7FC0, as PyTorch. */
static inline ushort clrun_bf16_rne(uint x)
{
    return (x & 0x7FFFFFFFu) > 0x7F800000u ? (ushort)0x7FC0u : (ushort)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

/* Whether the GEMM kernels' A and B are stored transposed (-DTA, -DTB: 0 or 1). */
#ifndef TA
#define TA 0
#endif
#ifndef TB
#define TB 0
#endif

/* Element (i, p) of op(A) and (p, j) of op(B) for the GEMM kernels: row-major with leading
 * dimensions lda, ldb; TA, TB say whether A, B are stored transposed. */
#define CLRUN_AT(i, p) (TA ? CLRUN_LD(A, (size_t)(p) * lda + (i)) : CLRUN_LD(A, (size_t)(i) * lda + (p)))
#define CLRUN_BT(p, j) (TB ? CLRUN_LD(B, (size_t)(j) * ldb + (p)) : CLRUN_LD(B, (size_t)(p) * ldb + (j)))
#endif
