/* gemm.cl — C = alpha·op(A)·op(B) + beta·C in f32, row-major, GPU-shaped.
 *
 * Work-item mapping: a work-group computes one TM×TN tile of C with (TM/WM)×(TN/WN) work-items;
 * work-item (tx, ty) owns the WM×WN elements at rows ty + i·(TM/WM), columns tx + j·(TN/WN) of the
 * tile (strided, so its reads of the B tile are consecutive across a warp and its reads of the A tile
 * are broadcasts). Each step over K stages a TM×TK slice of op(A) and a TK×TN slice of op(B) in local
 * memory, zero-filled past the matrix edges, so any M, N, K work without padding copies. Batches run
 * along the third dimension of the NDRange.
 *
 * Tuning parameters (-D): TM, TN (tile), TK (depth of a local-memory slice), WM, WN (elements per
 * work-item), TA, TB (1: A, B transposed), VEC (1: each work-item owns a contiguous WM×WN block and
 * reads the local tiles as float4, which needs WM and WN multiples of 4), DB (1: the next slices are
 * loaded into registers while the current ones are multiplied; TM·TK and TK·TN must be multiples of
 * the work-group size). Shaped for GPUs; correct on any device. */

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
#ifndef TA
#define TA 0
#endif
#ifndef TB
#define TB 0
#endif
#ifndef DB
#define DB 0 /* 1: the next slices are fetched into registers while the current ones are used */
#endif
#ifndef VEC
#define VEC 0 /* 1: work-items own contiguous WM×WN blocks and read the tiles with 16-byte loads */
#endif

#define RM (TM / WM) /* work-items along M */
#define RN (TN / WN) /* work-items along N */
#define NT (RM * RN) /* work-items per group */

/* op(A)[i][p] and op(B)[p][j] */
#include "common.h"
#define AT CLRUN_AT
#define BT CLRUN_BT

/* Element e of the staged slice of op(A) (TM×TK, stored layout order) at depth k0, zero past the
 * edges; likewise for op(B). Consecutive e read consecutive addresses. */
static inline float a_elem(__global const float *A, uint M, uint K, uint lda, uint m0, uint e, uint k0)
{
#if TA
    const uint i = e % TM, p = e / TM;
#else
    const uint p = e % TK, i = e / TK;
#endif
    const uint gi = m0 + i, gp = k0 + p;
    return (gi < M && gp < K) ? AT(gi, gp) : 0.0f;
}

static inline float b_elem(__global const float *B, uint K, uint N, uint ldb, uint n0, uint e, uint k0)
{
#if TB
    const uint p = e % TK, j = e / TK;
#else
    const uint j = e % TN, p = e / TN;
#endif
    const uint gp = k0 + p, gj = n0 + j;
    return (gp < K && gj < N) ? BT(gp, gj) : 0.0f;
}

__kernel __attribute__((reqd_work_group_size(RN, RM, 1))) void
clrun_gemm(const uint M, const uint N, const uint K, const float alpha, const float beta,
           __global const float *restrict A0, const ulong a_off, const uint lda, const ulong stride_a,
           __global const float *restrict B0, const ulong b_off, const uint ldb, const ulong stride_b,
           __global float *C0, const ulong c_off, const uint ldc, const ulong stride_c)
{
#if VEC
    __local float As[TK][TM] __attribute__((aligned(16))); /* op(A) slice, stored k-major */
    __local float Bs[TK][TN] __attribute__((aligned(16)));
#define ROW(i) (ty * WM + (i))
#define COL(j) (tx * WN + (j))
#else
    __local float As[TK][TM + 1]; /* op(A) slice, stored k-major; +1 spreads the banks */
    __local float Bs[TK][TN + 1];
#define ROW(i) (ty + (i) * RM)
#define COL(j) (tx + (j) * RN)
#endif
    const uint tx = get_local_id(0), ty = get_local_id(1), tid = ty * RN + tx;
    const uint m0 = get_group_id(1) * TM, n0 = get_group_id(0) * TN;
    const size_t batch = get_global_id(2);
    __global const float *A = A0 + a_off + batch * stride_a;
    __global const float *B = B0 + b_off + batch * stride_b;
    __global float *C = C0 + c_off + batch * stride_c;

    float acc[WM][WN];
    for (int i = 0; i < WM; i++)
        for (int j = 0; j < WN; j++) acc[i][j] = 0.0f;

#if DB
    /* software pipeline: slice k0 + TK travels global -> registers while slice k0 is multiplied */
    float ra[(TM * TK) / NT], rb[(TK * TN) / NT];
    for (uint r = 0; r < (TM * TK) / NT; r++) ra[r] = a_elem(A, M, K, lda, m0, tid + r * NT, 0);
    for (uint r = 0; r < (TK * TN) / NT; r++) rb[r] = b_elem(B, K, N, ldb, n0, tid + r * NT, 0);
#endif
    for (uint k0 = 0; k0 < K; k0 += TK) {
        /* stage the slices; consecutive work-items read consecutive addresses of the stored layout */
        for (uint r = 0, e = tid; e < TM * TK; r++, e += NT) {
#if DB
            const float v = ra[r];
#else
            const float v = a_elem(A, M, K, lda, m0, e, k0);
#endif
            As[TA ? e / TM : e % TK][TA ? e % TM : e / TK] = v;
        }
        for (uint r = 0, e = tid; e < TK * TN; r++, e += NT) {
#if DB
            const float v = rb[r];
#else
            const float v = b_elem(B, K, N, ldb, n0, e, k0);
#endif
            Bs[TB ? e % TK : e / TN][TB ? e / TK : e % TN] = v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#if DB
        if (k0 + TK < K) {
            for (uint r = 0; r < (TM * TK) / NT; r++) ra[r] = a_elem(A, M, K, lda, m0, tid + r * NT, k0 + TK);
            for (uint r = 0; r < (TK * TN) / NT; r++) rb[r] = b_elem(B, K, N, ldb, n0, tid + r * NT, k0 + TK);
        }
#endif
#pragma unroll
        for (int p = 0; p < TK; p++) {
            float a[WM], b[WN];
#if VEC
            for (int i = 0; i < WM; i += 4) vstore4(vload4(0, &As[p][ROW(i)]), 0, &a[i]);
            for (int j = 0; j < WN; j += 4) vstore4(vload4(0, &Bs[p][COL(j)]), 0, &b[j]);
#else
            for (int i = 0; i < WM; i++) a[i] = As[p][ROW(i)];
            for (int j = 0; j < WN; j++) b[j] = Bs[p][COL(j)];
#endif
            for (int i = 0; i < WM; i++)
                for (int j = 0; j < WN; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
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
