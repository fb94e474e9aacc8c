/* gemm_cpu.cl — C = alpha·op(A)·op(B) + beta·C in f32 (A and B in f32, f16 or bf16: ABT in
 * common.h), row-major, CPU-shaped (PoCL).
 *
 * Three kernels. clrun_gemm_pack_b copies op(B) into panels of NR columns, each panel K rows of NR
 * contiguous floats, zero past N: the multiply then reads one contiguous stream per work-item
 * whatever the transpose and leading dimension, with no edge cases and no TLB misses from a
 * row stride. clrun_gemm_pack_a (f16/bf16 inputs, which need a pass to be widened anyway) copies
 * op(A) into panels of RM rows, so that the multiply reads RM consecutive floats per step of K.
 * clrun_gemm_cpu gives each work-item an RM×NR block of C over the whole K: per step of
 * K, two vector loads of the panel and RM broadcasts of op(A) feed 2·RM vector FMAs whose
 * accumulators stay in registers (the loops over the block are unrolled; left rolled, the
 * accumulators live on the stack). No __local memory and no barrier: PoCL keeps private values
 * across barriers in memory. Rows of op(A) past M are clamped to the last one and not stored.
 *
 * Tuning parameters (-D): VW (vector width: 4, 8 or 16 floats; NR = 2·VW), RM (rows per
 * work-item: as many as the vector registers hold, 2·RM + 3 of them), TA, TB (1: transposed).
 * Work-groups are 8×1 along M: consecutive work-items take consecutive row blocks against the same
 * panel, which stays in cache while op(A) streams past it (the other order streams the panels from
 * memory and loses a factor of two at K = 4096). Batches run along the third dimension. */

#ifndef VW
#define VW 8
#endif
#ifndef RM
#define RM 6
#endif
#ifndef PSUM
#define PSUM 0
#endif
#ifndef KB
#define KB 16
#endif
#ifndef PA
#define PA 0 /* 1: A comes packed in panels of RM rows (clrun_gemm_pack_a), whatever ABT */
#endif
#ifndef S8
#define S8 0 /* 1: INT8 GEMM: A and B were s8, packed as f32 (ABT 3: exact); C from exact int32 sums */
#endif
#if S8
#pragma OPENCL FP_CONTRACT OFF /* the epilogue's operations are rounded apart */
#include "s8_epilogue.h"
/* Products of two s8 are at most 2^14 in magnitude, so f32 sums of up to 1024 of them (below 2^24)
 * are exact: each block of SB steps is summed in f32 FMAs, converted and added in int32. */
#define SB 1024
#endif
#define NR (2 * VW)

#include "common.h"
#define AT CLRUN_AT
#define BT CLRUN_BT

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FV CAT(float, VW)
#define IV CAT(int, VW)
#define VLOAD CAT(vload, VW)
#define VSTORE CAT(vstore, VW)
/* VW elements of B from p + k·VW, widened to f32 (f16 has none: PoCL's vload_half16 is several
 * times slower than sixteen vload_half, so f16 panels take the element-by-element path) */
#if ABT == 2
#define LDV(k, p) CAT(as_float, VW)(CAT(convert_uint, VW)(CAT(vload, VW)(k, p)) << 16)
#elif ABT == 3
#define LDV(k, p) CAT(convert_float, VW)(CAT(vload, VW)(k, p))
#else
#define LDV(k, p) VLOAD(k, p)
#endif

/* Steps of K a packing work-item copies (the host's grids count them too): fewer, longer work-items
 * than one per step, which PoCL runs several times faster. */
#define PK 16

/* Bp[batch][panel][p][c] = op(B)[p][panel·NR + c], 0 past N. One work-item per (PK steps of K,
 * panel): consecutive work-items take consecutive steps, so a transposed B is read along its rows too. */
__kernel void clrun_gemm_pack_b(const uint N, const uint K, __global const CLRUN_ELT *restrict B0, const ulong b_off, const uint ldb,
                                const ulong stride_b, __global float *restrict Bp, const ulong stride_p)
{
    const uint p0 = get_global_id(0) * PK, panel = get_global_id(1), j0 = panel * NR;
    if (p0 >= K || j0 >= N) return;
    const size_t batch = get_global_id(2);
    __global const CLRUN_ELT *B = B0 + b_off + batch * stride_b;
    for (uint p = p0; p < min(K, p0 + PK); p++) {
        __global float *dst = Bp + batch * stride_p + ((size_t)panel * K + p) * NR;
#if !TB && ABT != 1
        if (j0 + NR <= N) {
            VSTORE(LDV(0, B + (size_t)p * ldb + j0), 0, dst);
            VSTORE(LDV(1, B + (size_t)p * ldb + j0), 1, dst);
            continue;
        }
#endif
        for (uint c = 0; c < NR; c++) dst[c] = j0 + c < N ? BT(p, j0 + c) : 0.0f;
    }
}

/* Ap[d0 + batch·stride_p ...][panel][p][r] = op(A)[panel·RM + r][p] widened to f32 (rows past M repeat the last):
 * the multiply then reads RM consecutive floats per step of K instead of RM rows lda apart. Used
 * for f16/bf16/s8 inputs, which need a pass over A anyway to widen it. One work-item per (PK steps
 * of K, panel). */
__kernel void clrun_gemm_pack_a(const uint M, const uint K, __global const CLRUN_ELT *restrict A0, const ulong a_off, const uint lda,
                                const ulong stride_a, __global float *restrict Ap, const ulong d0, const ulong stride_p)
{
    const uint p0 = get_global_id(0) * PK, panel = get_global_id(1);
    if (p0 >= K || panel * RM >= M) return;
    const size_t batch = get_global_id(2);
    __global const CLRUN_ELT *A = A0 + a_off + batch * stride_a;
    __global float *dst = Ap + d0 + batch * stride_p + ((size_t)panel * K + p0) * RM;
    for (uint p = p0; p < min(K, p0 + PK); p++, dst += RM)
        for (uint r = 0; r < RM; r++) dst[r] = AT(min(panel * RM + r, M - 1), p);
}

__kernel __attribute__((reqd_work_group_size(8, 1, 1))) void
clrun_gemm_cpu(const uint M, const uint N, const uint K, const float alpha, const float beta,
               __global const CLRUN_ELT *restrict A0, const ulong a_off, const uint lda, const ulong stride_a,
               __global const float *restrict Bp, const ulong stride_p,
#if S8
               __global void *C0, const ulong c_off, const uint ldc, const ulong stride_c, __global const float *rs,
               __global const float *cs, __global const float *bias, const int flags)
#else
               __global float *C0, const ulong c_off, const uint ldc, const ulong stride_c)
#endif
{
    const uint panel = get_global_id(1), j0 = panel * NR, i0 = get_global_id(0) * RM;
    if (j0 >= N || i0 >= M) return;
    const size_t batch = get_global_id(2);
    __global const CLRUN_ELT *A = A0 + a_off + batch * stride_a;
    __global const float *bp = Bp + batch * stride_p + (size_t)panel * K * NR;
#if !S8
    __global float *C = C0 + c_off + batch * stride_c;
#endif
#if PA /* A packed by clrun_gemm_pack_a: panel get_global_id(0), RM floats per step of K */
    __global const float *ap = (__global const float *)A0 + a_off + batch * stride_a + (size_t)get_global_id(0) * K * RM;
#define A_AT(r, p) ap[(size_t)(p) * RM + (r)]
#else
#define A_AT(r, p) AT(row[r], p)
#endif
    uint row[RM];
    FV lo[RM], hi[RM];
#pragma unroll
    for (int r = 0; r < RM; r++) {
        row[r] = min(i0 + r, M - 1);
        lo[r] = hi[r] = (FV)(0.0f);
    }
#if S8
    IV il[RM], ih[RM]; /* exact sums: each block of SB steps is added here in int32 */
#pragma unroll
    for (int r = 0; r < RM; r++) il[r] = ih[r] = (IV)(0);
#define BLK SB
#define ADD_BLOCK(r) (il[r] += CAT(convert_int, VW)(tl[r]), ih[r] += CAT(convert_int, VW)(th[r]))
#else
    /* blocks of KB steps are summed on their own, then added to the accumulators: about three
     * times more accurate than one running sum, for twice the registers */
#define BLK KB
#define ADD_BLOCK(r) (lo[r] += tl[r], hi[r] += th[r])
#endif
#if S8 || PSUM
    for (uint p0 = 0; p0 < K; p0 += BLK) {
        FV tl[RM], th[RM];
#pragma unroll
        for (int r = 0; r < RM; r++) tl[r] = th[r] = (FV)(0.0f);
        for (uint p = p0; p < min(K, p0 + BLK); p++, bp += NR) {
            const FV b0 = VLOAD(0, bp), b1 = VLOAD(1, bp);
#pragma unroll
            for (int r = 0; r < RM; r++) {
                const FV a = (FV)(A_AT(r, p));
                tl[r] = fma(a, b0, tl[r]);
                th[r] = fma(a, b1, th[r]);
            }
        }
#pragma unroll
        for (int r = 0; r < RM; r++) ADD_BLOCK(r);
    }
#else
    for (uint p = 0; p < K; p++, bp += NR) {
        const FV b0 = VLOAD(0, bp), b1 = VLOAD(1, bp);
#pragma unroll
        for (int r = 0; r < RM; r++) {
            const FV a = (FV)(A_AT(r, p));
            lo[r] = fma(a, b0, lo[r]);
            hi[r] = fma(a, b1, hi[r]);
        }
    }
#endif
    const uint rows = min((uint)RM, M - i0), cols = min((uint)NR, N - j0);
#if S8
    for (uint r = 0; r < rows; r++) {
        const ulong at = c_off + batch * stride_c + (size_t)(i0 + r) * ldc + j0;
        if (cols == NR) { /* whole rows of the block: the epilogue in vectors, the same operations */
#if EPI
            FV x0 = CAT(convert_float, VW)(il[r]), x1 = CAT(convert_float, VW)(ih[r]);
            if (rs) x0 = x0 * rs[i0 + r], x1 = x1 * rs[i0 + r];
            if (cs) x0 = x0 * VLOAD(0, cs + j0), x1 = x1 * VLOAD(1, cs + j0);
            if (bias) x0 = x0 + VLOAD(0, bias + j0), x1 = x1 + VLOAD(1, bias + j0);
            if (flags & 1) x0 = fmax(x0, (FV)(0.0f)), x1 = fmax(x1, (FV)(0.0f));
            __global float *c = (__global float *)C0 + at;
            VSTORE(x0, 0, c);
            VSTORE(x1, 1, c);
#else
            __global int *c = (__global int *)C0 + at;
            if (flags & 2) il[r] += CAT(vload, VW)(0, c), ih[r] += CAT(vload, VW)(1, c);
            CAT(vstore, VW)(il[r], 0, c);
            CAT(vstore, VW)(ih[r], 1, c);
#endif
            continue;
        }
        int out[NR];
        CAT(vstore, VW)(il[r], 0, out);
        CAT(vstore, VW)(ih[r], 1, out);
        for (uint q = 0; q < cols; q++) clrun_s8_store(C0, at + q, out[q], i0 + r, j0 + q, rs, cs, bias, flags);
    }
#else
    for (uint r = 0; r < rows; r++) {
        __global float *c = C + (size_t)(i0 + r) * ldc + j0;
        if (cols == NR) {
            if (beta == 0.0f) { /* beta 0: C is not read */
                VSTORE(alpha * lo[r], 0, c);
                VSTORE(alpha * hi[r], 1, c);
            } else {
                VSTORE(fma((FV)(alpha), lo[r], beta * VLOAD(0, c)), 0, c);
                VSTORE(fma((FV)(alpha), hi[r], beta * VLOAD(1, c)), 1, c);
            }
        } else {
            float out[NR];
            VSTORE(lo[r], 0, out);
            VSTORE(hi[r], 1, out);
            for (uint q = 0; q < cols; q++) c[q] = beta == 0.0f ? alpha * out[q] : fma(alpha, out[q], beta * c[q]);
        }
    }
#endif
}

/* The sparse GEMM on CPUs (clrun_gemm_sp; SP 1): A 2:4 compressed (values of ABT, metadata words as
 * clrun.h lays them out), B packed by clrun_gemm_pack_b. clrun_gemm_sp_pack_a copies A into panels
 * of RM rows: per group, the rows' two values widened to f32 side by side, and per metadata word
 * the rows' words side by side. As clrun_gemm_cpu, a work-item owns an RM×NR block of C; per group
 * of 4 steps of K each row adds its two values times the two panel rows they name: half the FMAs
 * of the dense kernel, in one f32 sum per element in the order of K. */
#ifdef SP
__kernel void clrun_gemm_sp_pack_a(const uint M, const uint K, __global const CLRUN_ELT *restrict A0, const ulong a_off, const uint lda,
                                   const ulong stride_a, __global const uint *restrict meta0, const ulong meta_off,
                                   __global float *restrict Ap, const ulong ap_off, const ulong stride_p, __global uint *restrict Mp,
                                   const ulong mp_off, const ulong stride_m)
{
    const uint g = get_global_id(0), panel = get_global_id(1), G = (K + 3) / 4, km = (K + 31) / 32;
    if (g >= G || panel * RM >= M) return;
    const size_t batch = get_global_id(2);
    __global const CLRUN_ELT *A = A0 + a_off + batch * stride_a;
    __global const uint *meta = meta0 + meta_off + batch * (size_t)M * km;
    __global float *ap = Ap + ap_off + batch * stride_p + ((size_t)panel * G + g) * RM * 2;
    for (uint r = 0; r < RM; r++) {
        const size_t row = min(panel * RM + r, M - 1);
        ap[2 * r] = CLRUN_LD(A, row * lda + 2 * g), ap[2 * r + 1] = CLRUN_LD(A, row * lda + 2 * g + 1);
        if (g % 8 == 0) Mp[mp_off + batch * stride_m + ((size_t)panel * km + g / 8) * RM + r] = meta[row * km + g / 8];
    }
}

__kernel __attribute__((reqd_work_group_size(8, 1, 1))) void
clrun_gemm_sp_cpu(const uint M, const uint N, const uint K, const float alpha, const float beta,
                  __global const float *restrict Ap0, const ulong ap_off, const ulong stride_pa, __global const uint *restrict Mp0,
                  const ulong mp_off, const ulong stride_m,
                  __global const float *restrict Bp, const ulong stride_p, __global float *C0, const ulong c_off, const uint ldc,
                  const ulong stride_c)
{
    const uint panel = get_global_id(1), j0 = panel * NR, i0 = get_global_id(0) * RM;
    if (j0 >= N || i0 >= M) return;
    const size_t batch = get_global_id(2);
    const uint km = (K + 31) / 32, G = (K + 3) / 4, full = K / 4;
    __global const float *ap = Ap0 + ap_off + batch * stride_pa + (size_t)get_global_id(0) * G * RM * 2;
    __global const uint *mp = Mp0 + mp_off + batch * stride_m + (size_t)get_global_id(0) * km * RM;
    __global const float *bp = Bp + batch * stride_p + (size_t)panel * K * NR;
    __global float *C = C0 + c_off + batch * stride_c;
    FV lo[RM], hi[RM];
#pragma unroll
    for (int r = 0; r < RM; r++) lo[r] = hi[r] = (FV)(0.0f);
    for (uint g0 = 0; g0 < full; g0 += 8) {
        uint e[RM];
#pragma unroll
        for (int r = 0; r < RM; r++) e[r] = mp[(g0 / 8) * RM + r];
        const uint gn = min(8u, full - g0);
        for (uint g = g0; g < g0 + gn; g++) {
            __global const float *p = bp + (size_t)4 * g * NR, *v = ap + (size_t)g * RM * 2;
#pragma unroll
            for (int r = 0; r < RM; r++) {
                __global const float *p0 = p + (e[r] & 3) * NR, *p1 = p + ((e[r] >> 2) & 3) * NR;
                e[r] >>= 4;
                const FV v0 = (FV)(v[2 * r]), v1 = (FV)(v[2 * r + 1]);
                lo[r] = fma(v0, VLOAD(0, p0), lo[r]);
                hi[r] = fma(v0, VLOAD(1, p0), hi[r]);
                lo[r] = fma(v1, VLOAD(0, p1), lo[r]);
                hi[r] = fma(v1, VLOAD(1, p1), hi[r]);
            }
        }
    }
    if (full < G) { /* the last, partial group: only columns before K */
        const uint g = full;
        __global const float *v = ap + (size_t)g * RM * 2;
#pragma unroll
        for (int r = 0; r < RM; r++) {
            const uint e = mp[(g / 8) * RM + r] >> (4 * (g % 8)), k0 = 4 * g + (e & 3), k1 = 4 * g + ((e >> 2) & 3);
            if (k0 < K) {
                const FV x = (FV)(v[2 * r]);
                lo[r] = fma(x, VLOAD(0, bp + (size_t)k0 * NR), lo[r]), hi[r] = fma(x, VLOAD(1, bp + (size_t)k0 * NR), hi[r]);
            }
            if (k1 < K) {
                const FV x = (FV)(v[2 * r + 1]);
                lo[r] = fma(x, VLOAD(0, bp + (size_t)k1 * NR), lo[r]), hi[r] = fma(x, VLOAD(1, bp + (size_t)k1 * NR), hi[r]);
            }
        }
    }
    const uint rows = min((uint)RM, M - i0), cols = min((uint)NR, N - j0);
    for (uint r = 0; r < rows; r++) {
        __global float *c = C + (size_t)(i0 + r) * ldc + j0;
        float out[NR];
        VSTORE(lo[r], 0, out);
        VSTORE(hi[r], 1, out);
        for (uint q = 0; q < cols; q++) c[q] = beta == 0.0f ? alpha * out[q] : fma(alpha, out[q], beta * c[q]);
    }
}
#endif
