/* gemm.cl — C = alpha·op(A)·op(B) + beta·C in f32 (A and B in f32, f16 or bf16), row-major, GPU-shaped.
 *
 * Work-item mapping: a work-group computes one TM×TN tile of C with (TM/WM)×(TN/WN) work-items;
 * work-item (tx, ty) owns the WM×WN elements at rows ty + i·(TM/WM), columns tx + j·(TN/WN) of the
 * tile (strided, so its reads of the B tile are consecutive across a warp and its reads of the A tile
 * are broadcasts). Each step over K stages a TM×TK slice of op(A) and a TK×TN slice of op(B) in local
 * memory, zero-filled past the matrix edges, so any M, N, K work without padding copies. Batches run
 * along the third dimension of the NDRange.
 *
 * Tuning parameters (-D): TM, TN (tile), TK (depth of a local-memory slice), WM, WN (elements per
 * work-item), TA, TB (1: A, B transposed), VEC (1: a work-item owns WM/4 × WN/4 quads of 4×4
 * elements, quad q of rows starting at q·TM/(WM/4) + 4·ty, likewise for columns, and reads the local
 * tiles with 16-byte loads: a quarter-warp then reads 128 consecutive bytes, free of bank conflicts;
 * needs WM, WN multiples of 4), DB (1: the next slices are loaded into registers while the current
 * ones are multiplied; 2: also two local buffers, so one barrier per slice; both need TM·TK and TK·TN
 * multiples of the work-group size). Shaped for GPUs; correct on any device. */

#ifndef TM
#define TM 64
#endif
#ifndef TN
#define TN 64
#endif
#ifndef TK
#define TK 16
#endif
#ifndef WM
#define WM 4
#endif
#ifndef WN
#define WN 4
#endif
#ifndef DB
#define DB 0 /* 1: next slices fetched into registers during the multiply; 2: and two local buffers */
#endif
#ifndef PSUM
#define PSUM 0 /* 1: sum each slice apart, then into the accumulators (more accurate, more registers) */
#endif
#ifndef GW
#define GW 1 /* 4: 16-byte global loads (leading dimensions, offsets and the stored rows' length multiples of 4) */
#endif
#ifndef VEC
#define VEC 0 /* 1: work-items own 4×4 quads and read the tiles with 16-byte loads */
#endif

#define RM (TM / WM) /* work-items along M */
#define RN (TN / WN) /* work-items along N */
#define NT (RM * RN) /* work-items per group */

#include "common.h" /* ABT: element type of A and B (f32, f16, bf16), widened to f32 on load */

#if VEC
#define PAD 4 /* keeps rows 16-byte aligned; staging stores of a k-major slice hit distinct banks */
#define ROW(i) (((i) / 4) * (TM / (WM / 4)) + ty * 4 + (i) % 4)
#define COL(j) (((j) / 4) * (TN / (WN / 4)) + tx * 4 + (j) % 4)
#else
#define PAD 1 /* spreads the banks */
#define ROW(i) (ty + (i) * RM)
#define COL(j) (tx + (j) * RN)
#endif
#define NBUF (DB == 2 ? 2 : 1)

__kernel __attribute__((reqd_work_group_size(RN, RM, 1))) void
clrun_gemm(const uint M, const uint N, const uint K, const float alpha, const float beta,
           __global const CLRUN_ELT *restrict A0, const ulong a_off, const uint lda, const ulong stride_a,
           __global const CLRUN_ELT *restrict B0, const ulong b_off, const uint ldb, const ulong stride_b,
           __global float *C0, const ulong c_off, const uint ldc, const ulong stride_c)
{
    __local float As[NBUF][TK][TM + PAD] __attribute__((aligned(16))); /* op(A) slice, stored k-major */
    __local float Bs[NBUF][TK][TN + PAD] __attribute__((aligned(16)));
    const uint tx = get_local_id(0), ty = get_local_id(1), tid = ty * RN + tx;
    const uint m0 = get_group_id(1) * TM, n0 = get_group_id(0) * TN;
    const size_t batch = get_global_id(2);
    __global const CLRUN_ELT *A = A0 + a_off + batch * stride_a;
    __global const CLRUN_ELT *B = B0 + b_off + batch * stride_b;
    __global float *C = C0 + c_off + batch * stride_c;

    float acc[WM][WN];
    for (int i = 0; i < WM; i++)
        for (int j = 0; j < WN; j++) acc[i][j] = 0.0f;

    /* The slices are read in runs of GW elements along the stored matrix's contiguous dimension
     * (GW = 4: 16-byte loads, which the host picks when leading dimensions, offsets and that
     * dimension are multiples of 4). Run r of this work-item's share of a slice is run e = tid + r·NT
     * of the slice in stored order, so consecutive work-items read consecutive addresses. Rows of
     * op(A) and columns of op(B) past the matrix are clamped to the last run: they feed only results
     * that are never stored. The depth is checked only in a slice that crosses K (reading 0). */
#if GW == 4
#define VT float4
#define VLOAD(p) CLRUN_LD4(p) /* the host guarantees alignment to 4 elements */
#define VSTORE(v, p) vstore4(v, 0, p)
#else
#define VT float
#define VLOAD(p) CLRUN_LD(p, 0)
#define VSTORE(v, p) (*(p) = (v))
#endif
#define QA ((TA ? TM : TK) / GW) /* runs per stored row of the A slice */
#define QB ((TB ? TK : TN) / GW)
#define NA ((TM * TK / GW + NT - 1) / NT)
#define NB ((TK * TN / GW + NT - 1) / NT)
#define EA(r) (tid + (r) * NT)
#define EB(r) (tid + (r) * NT)
#define ROW_A(e) (TA ? ((e) % QA) * GW : (e) / QA) /* first element's row in the op(A) slice */
#define DEPTH_A(e) (TA ? (e) / QA : ((e) % QA) * GW)
#define COL_B(e) (TB ? (e) / QB : ((e) % QB) * GW)
#define DEPTH_B(e) (TB ? ((e) % QB) * GW : (e) / QB)
    __global const CLRUN_ELT *pa[NA], *pb[NB];
    for (uint r = 0; r < NA; r++) {
        const uint e = EA(r), i = min(m0 + ROW_A(e), M - (TA ? GW : 1)), p = DEPTH_A(e);
        pa[r] = A + (TA ? (size_t)p * lda + i : (size_t)i * lda + p);
    }
    for (uint r = 0; r < NB; r++) {
        const uint e = EB(r), j = min(n0 + COL_B(e), N - (TB ? 1 : GW)), p = DEPTH_B(e);
        pb[r] = B + (TB ? (size_t)j * ldb + p : (size_t)p * ldb + j);
    }
    const size_t step_a = TA ? (size_t)TK * lda : TK, step_b = TB ? TK : (size_t)TK * ldb;
    /* fetch the slice at depth k0 into ra, rb and move the pointers to the next one */
#define FETCH(k0)                                                                                                   \
    do {                                                                                                            \
        const int full_ = (k0) + TK <= K;                                                                           \
        for (uint r = 0; r < NA; r++) {                                                                             \
            ra[r] = (EA(r) < TM * TK / GW && (full_ || (k0) + DEPTH_A(EA(r)) < K)) ? VLOAD(pa[r]) : 0.0f;           \
            pa[r] += step_a;                                                                                        \
        }                                                                                                           \
        for (uint r = 0; r < NB; r++) {                                                                             \
            rb[r] = (EB(r) < TK * TN / GW && (full_ || (k0) + DEPTH_B(EB(r)) < K)) ? VLOAD(pb[r]) : 0.0f;           \
            pb[r] += step_b;                                                                                        \
        }                                                                                                           \
    } while (0)
    VT ra[NA], rb[NB];
#if DB
    /* software pipeline: slice k0 + TK travels global -> registers while slice k0 is multiplied */
    FETCH(0u);
#endif
    /* element c of a run goes along the stored contiguous dimension: i for TA, p otherwise */
#define STAGE_A(buf, e, v)                                                                                          \
    do {                                                                                                            \
        float t_[GW];                                                                                               \
        VSTORE(v, t_);                                                                                              \
        for (uint c = 0; c < GW; c++) As[buf][DEPTH_A(e) + (TA ? 0 : c)][ROW_A(e) + (TA ? c : 0)] = t_[c];          \
    } while (0)
#define STAGE_B(buf, e, v)                                                                                          \
    do {                                                                                                            \
        float t_[GW];                                                                                               \
        VSTORE(v, t_);                                                                                              \
        for (uint c = 0; c < GW; c++) Bs[buf][DEPTH_B(e) + (TB ? c : 0)][COL_B(e) + (TB ? 0 : c)] = t_[c];          \
    } while (0)
    /* stage ra, rb into local buffer buf */
#define STAGE(buf)                                                                                                  \
    do {                                                                                                            \
        for (uint r = 0; r < NA; r++)                                                                               \
            if (EA(r) < TM * TK / GW) STAGE_A(buf, EA(r), ra[r]);                                                   \
        for (uint r = 0; r < NB; r++)                                                                               \
            if (EB(r) < TK * TN / GW) STAGE_B(buf, EB(r), rb[r]);                                                   \
    } while (0)
    /* acc += the slices in local buffer buf */
#if VEC
#define LOAD_AB(buf, p)                                                                                             \
    for (int i = 0; i < WM; i += 4) vstore4(vload4(0, &As[buf][p][ROW(i)]), 0, &a[i]);                            \
    for (int j = 0; j < WN; j += 4) vstore4(vload4(0, &Bs[buf][p][COL(j)]), 0, &b[j])
#else
#define LOAD_AB(buf, p)                                                                                             \
    for (int i = 0; i < WM; i++) a[i] = As[buf][p][ROW(i)];                                                         \
    for (int j = 0; j < WN; j++) b[j] = Bs[buf][p][COL(j)]
#endif
#if PSUM
/* each slice's products are summed on their own, then added to acc: sums of K/TK + TK terms
 * instead of K, about three times more accurate than one running sum, for WM·WN more registers */
#define MULTIPLY(buf)                                                                                               \
    do {                                                                                                            \
        float t[WM][WN];                                                                                            \
        _Pragma("unroll") for (int p = 0; p < TK; p++)                                                              \
        {                                                                                                           \
            float a[WM], b[WN];                                                                                     \
            LOAD_AB(buf, p);                                                                                        \
            for (int i = 0; i < WM; i++)                                                                            \
                for (int j = 0; j < WN; j++) t[i][j] = p ? fma(a[i], b[j], t[i][j]) : a[i] * b[j];                  \
        }                                                                                                           \
        for (int i = 0; i < WM; i++)                                                                                \
            for (int j = 0; j < WN; j++) acc[i][j] += t[i][j];                                                      \
    } while (0)
#else
#define MULTIPLY(buf)                                                                                               \
    _Pragma("unroll") for (int p = 0; p < TK; p++)                                                                  \
    {                                                                                                               \
        float a[WM], b[WN];                                                                                         \
        LOAD_AB(buf, p);                                                                                            \
        for (int i = 0; i < WM; i++)                                                                                \
            for (int j = 0; j < WN; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]);                                    \
    }
#endif
#if DB == 2
    /* two local buffers: while buffer cur is multiplied, the next slice goes global -> registers ->
     * the other buffer, last read before the previous barrier; so one barrier per slice. The loop
     * is unrolled by two so that the buffers are fixed addresses. */
    STAGE(0);
    barrier(CLK_LOCAL_MEM_FENCE);
#define DB_STEP(cur, k)                                                                                             \
    do {                                                                                                            \
        const int more = (k) + TK < K;                                                                              \
        if (more) FETCH((k) + TK);                                                                                  \
        MULTIPLY(cur);                                                                                              \
        if (more) STAGE(1 - (cur));                                                                                 \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                               \
    } while (0)
    for (uint k0 = 0; k0 < K; k0 += 2 * TK) {
        DB_STEP(0, k0);
        if (k0 + TK >= K) break;
        DB_STEP(1, k0 + TK);
    }
#else
    for (uint k0 = 0; k0 < K; k0 += TK) {
#if DB
        STAGE(0);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (k0 + TK < K) FETCH(k0 + TK);
#else
        FETCH(k0);
        STAGE(0);
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
        MULTIPLY(0);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif
    for (int i = 0; i < WM; i++) {
        const uint gi = m0 + ROW(i);
        if (gi >= M) continue;
        for (int j = 0; j < WN; j++) {
            const uint gj = n0 + COL(j);
            if (gj >= N) continue;
            __global float *c = C + (size_t)gi * ldc + gj;
            *c = beta == 0.0f ? alpha * acc[i][j] : fma(alpha, acc[i][j], beta * *c); /* beta 0: C is not read */
        }
    }
}
