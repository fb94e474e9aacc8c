/* gemm_mma_nv.cl — C = alpha·op(A)·op(B) + beta·C on NVIDIA tensor cores through inline PTX.
 * NVIDIA's OpenCL only (sm_80 and later: mma.sync, ldmatrix, cp.async); the host builds it after a
 * probe says the compiler takes it (lib/ops/gemm/nv/mma_nv.c).
 *
 * ABT 1 (f16) or 2 (bf16): mma.sync.m16n8k16 with f32 accumulators. ABT 0 (f32): 3xTF32 on
 * mma.sync.m16n8k8.tf32: each operand x splits into big = tf32(x) and small = tf32(x - big), and
 * big·big + big·small + small·big (the small·small term is below f32's precision) is summed in f32.
 *
 * A work-group of NW = (BM/WTM)·(BN/WTN) warps computes a BM×BN tile of C; warp w owns a WTM×WTN
 * sub-tile, as (WTM/16)×(WTN/8) mma tiles whose accumulators live in registers. K advances in
 * slices of BK through STAGES local buffers filled by cp.async (16-byte copies that zero-fill past
 * the matrix edges: any M, N, K), so the copies of slices k+1 .. k+STAGES-1 overlap the multiply of
 * slice k. Each tile is stored as in global memory (rows along the stored contiguous dimension), its
 * 16-byte chunks XOR-swizzled by row so that ldmatrix (f16) and the scalar fragment reads (f32) hit
 * distinct banks; transposed operands are read with ldmatrix.trans. Work-groups walk the tiles in
 * groups of GM tile rows, so neighbours in time share panels of A and B in L2.
 *
 * ABT 3 (s8, clrun_gemm_s8): mma.sync.m16n8k32.s32.s8.s8.s32, exact int32 sums, C stored through
 * s8_epilogue.h; A must be stored M×K and B N×K (TA 0, TB 1: ldmatrix cannot transpose bytes; the
 * host packs other layouts first).
 *
 * SP 1 (f16/bf16, clrun_gemm_sp): A is 2:4 compressed (clrun.h): its tiles hold BK/2 values per row
 * and BK/32 metadata words per row (cp.async of 4 bytes), multiplied by mma.sp.m16n8k32 (SPORD 1:
 * the ordered-metadata form). SPMETA says which threads hand the instruction which words: 1, the
 * first two of each quad, thread c holding half c (16 columns) of rows g and g+8; 2, thread 0 row g
 * and thread 1 row g+8, whole words. The host's probe picks the one that computes correctly.
 *
 * The host guarantees what cp.async needs: leading dimensions, offsets and batch strides multiples
 * of 16 bytes' worth of elements (8 for f16/bf16, 4 for f32). */

#ifndef ABT
#define ABT 1
#endif
#include "common.h" /* TA, TB: A, B stored transposed */
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 32
#endif
#ifndef WTM
#define WTM 64
#endif
#ifndef WTN
#define WTN 64
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef GM
#define GM 8
#endif
#ifndef C2
#define C2 0 /* 1: C's element offset, leading dimension and batch stride are even: store pairs as float2 */
#endif
#ifndef SP
#define SP 0
#endif
#ifndef SPMETA
#define SPMETA 1
#endif
#ifndef SPORD
#define SPORD 1
#endif
#if SP && (ABT == 0 || ABT == 3 || TA || BK % 32)
#error "the sparse kernel takes f16 or bf16, A stored M×K, slices of 32"
#endif
#ifndef TFACC
#define TFACC 1 /* 3xTF32: 1 each step's products summed from zero, then into acc; 2 each slice's */
#endif

#define NW ((BM / WTM) * (BN / WTN))
#define NTHR (NW * 32)
#define MT (WTM / 16) /* mma tiles along M per warp */
#define NT (WTN / 8)  /* mma tiles along N per warp */

#if ABT == 0
#define ELT float
#define EPC 4 /* elements per 16-byte chunk */
#define KSTEP 8
#define ACC float
#elif ABT == 3
#define ELT char
#define EPC 16
#define KSTEP 32
#define ACC int
#if TA || !TB
#error "the s8 tensor-core kernel reads A as M×K and B as N×K"
#endif
#pragma OPENCL FP_CONTRACT OFF
#include "s8_epilogue.h"
#else
#define ACC float
#define ELT ushort
#define EPC 8
#define KSTEP (SP ? 32 : 16)
#endif

/* the tiles as stored: rows × chunks */
#define A_ROWS (TA ? BK : BM)
#define A_CH ((TA ? BM : SP ? BK / 2 : BK) / EPC)
#define B_ROWS (TB ? BN : BK)
#define B_CH ((TB ? BK : BN) / EPC)
#define A_SZ (A_ROWS * A_CH * EPC) /* elements per stage */
#define B_SZ (B_ROWS * B_CH * EPC)
#define MW (BK / 32)                                            /* SP: metadata words per row of a slice */
#define M_SZ (SP ? BM * MW * 4 / (int)sizeof(ELT) : 0)            /* in elements */
#define ST_SZ (A_SZ + B_SZ + M_SZ)

/* Physical chunk of logical chunk c in row r of a tile with ch chunks per row. Rows of 128 bytes or
 * more: c ^ (r mod 8), so the same chunk of 8 consecutive rows lands in 8 distinct bank groups;
 * rows of 64 bytes (two per 128-byte line): c ^ ((r / 2) mod 4). */
#define SWZ(ch, r, c) ((ch) >= 8 ? ((c) ^ ((r) & 7)) : (ch) == 4 ? ((c) ^ (((r) >> 1) & 3)) : ((c) ^ (((r) >> 2) & 1)))
#define A_AT(r, c) ((r) * (A_CH * EPC) + SWZ(A_CH, r, (c) / EPC) * EPC + (c) % EPC) /* element offset */
#define B_AT(r, c) ((r) * (B_CH * EPC) + SWZ(B_CH, r, (c) / EPC) * EPC + (c) % EPC)

#include "nv_common.h"

/* Copy the slice of depth k0 of op(A) and op(B) into stage buffers as, bs (cp.async, not waited). */
static inline void load_slice(__local ELT *as, __local ELT *bs, __global const ELT *A, __global const ELT *B, const uint lda,
                              const uint ldb, const uint M, const uint N, const uint K, const uint m0, const uint n0, const uint k0,
                              const uint tid, __global const uint *meta, const uint km)
{
#pragma unroll
    for (uint e = tid; e < A_ROWS * A_CH; e += NTHR) {
        const uint r = e / A_CH, c = (e % A_CH) * EPC;
        /* stored row r, elements c .. c+EPC-1 along the contiguous dimension */
        const uint gr = (TA ? k0 : m0) + r, gc = (TA ? m0 : SP ? k0 / 2 : k0) + c, rows = TA ? K : M;
        const uint cols = TA ? M : SP ? 2 * ((K + 3) / 4) : K;
        const uint ok = gr < rows && gc < cols;
        const uint bytes = ok ? min((uint)EPC, cols - gc) * (uint)sizeof(ELT) : 0u;
        cp_async16(smem_addr(as + A_AT(r, c)), ok ? A + (size_t)gr * lda + gc : A, bytes);
    }
#pragma unroll
    for (uint e = tid; e < B_ROWS * B_CH; e += NTHR) {
        const uint r = e / B_CH, c = (e % B_CH) * EPC;
        const uint gr = (TB ? n0 : k0) + r, gc = (TB ? k0 : n0) + c, rows = TB ? N : K, cols = TB ? K : N;
        const uint ok = gr < rows && gc < cols;
        const uint bytes = ok ? min((uint)EPC, cols - gc) * (uint)sizeof(ELT) : 0u;
        cp_async16(smem_addr(bs + B_AT(r, c)), ok ? B + (size_t)gr * ldb + gc : B, bytes);
    }
#if SP /* metadata word w of row r at word r·MW + w after B's tile; zeros past M and K */
    __local uint *ms = (__local uint *)(bs + B_SZ);
    for (uint e = tid; e < BM * MW; e += NTHR) {
        const uint gr = m0 + e / MW, gw = k0 / 32 + e % MW, ok = gr < M && gw < km;
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(ms + e)), "l"(ok ? meta + (size_t)gr * km + gw : meta),
                     "r"(ok ? 4u : 0u)
                     : "memory");
    }
#else
    (void)meta, (void)km;
#endif
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

#if ABT != 0
#if ABT == 1
#define MMA_TYPE "f16"
#else
#define MMA_TYPE "bf16"
#endif
#if ABT == 3 /* k 32 bytes: a0..a3 rows g, g+8 × bytes 4c.., then 16+4c..; b0, b1 the same along k */
static inline void mma_step(int *c, const uint *a, const uint *b)
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#else
#define mma_step mma16816
#endif
#if SP
#if SPORD
#define SP_FORM "mma.sp::ordered_metadata"
#else
#define SP_FORM "mma.sp"
#endif
/* 16×32 of A (compressed: 16×16 values in a, metadata e) times 32×8 of B (b0, b1 rows 0-15; b2, b3 16-31) */
static inline void mma_sp(float *c, const uint *a, const uint *b, const uint e)
{
    asm volatile(SP_FORM ".sync.aligned.m16n8k32.row.col.f32." MMA_TYPE "." MMA_TYPE ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                 "{%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x0;\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e));
}
/* A zero half word is a row or slice past the matrix (real groups never encode 0): columns 0 and 1 */
static inline uint meta_half(uint h) { return h ? h : 0x4444u; }
#endif
#define LDSM_X4(r, addr, trans)                                                                                     \
    asm volatile("ldmatrix.sync.aligned.m8n8.x4" trans ".shared.b16 {%0,%1,%2,%3}, [%4];\n"                        \
                 : "=r"((r)[0]), "=r"((r)[1]), "=r"((r)[2]), "=r"((r)[3])                                          \
                 : "r"(addr))

static inline void mma16816(float *c, const uint *a, const uint *b)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." MMA_TYPE "." MMA_TYPE ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#else
/* x rounded to tf32 (10 mantissa bits), to nearest with ties away from zero: what cvt.rna.tf32.f32
 * computes, in two integer operations at full rate (the conversion unit does a sixteenth of that,
 * and the splits would be the kernel's bottleneck) */
static inline uint tf32_big(float x) { return (as_uint(x) + 0x1000u) & 0xFFFFE000u; }

static inline void mma1688(float *c, const uint *a, const uint *b)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* x as tf32 hi + lo (both tf32 patterns) */
static inline void split(float x, uint *hi, uint *lo)
{
    *hi = tf32_big(x);
    *lo = tf32_big(x - as_float(*hi));
}
#endif

__kernel __attribute__((reqd_work_group_size(NTHR, 1, 1))) void
clrun_gemm_mma(const uint M, const uint N, const uint K, const float alpha, const float beta,
               __global const ELT *restrict A0, const ulong a_off, const uint lda, const ulong stride_a,
#if SP
               __global const uint *restrict meta0, const ulong meta_off,
#endif
               __global const ELT *restrict B0, const ulong b_off, const uint ldb, const ulong stride_b,
#if ABT == 3
               __global void *C0, const ulong c_off, const uint ldc, const ulong stride_c, __global const float *rs,
               __global const float *cs, __global const float *bias, const int flags)
#else
               __global float *C0, const ulong c_off, const uint ldc, const ulong stride_c)
#endif
{
    __local ELT smem[STAGES * ST_SZ] __attribute__((aligned(128)));
    const uint tid = get_local_id(0), lane = tid & 31, warp = tid >> 5;
    /* grouped tile order: GM tile rows at a time, down each column of the group */
    const uint tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, pid = get_group_id(0);
    const uint group = pid / (GM * tiles_n), first_m = group * GM, gsize = min(tiles_m - first_m, (uint)GM);
    const uint in_group = pid % (GM * tiles_n);
    const uint m0 = (first_m + in_group % gsize) * BM, n0 = (in_group / gsize) * BN;
    const size_t batch = get_global_id(1);
    __global const ELT *A = A0 + a_off + batch * stride_a;
    __global const ELT *B = B0 + b_off + batch * stride_b;
#if ABT != 3
    __global float *C = C0 + c_off + batch * stride_c;
#endif
    const uint wm0 = (warp / (BN / WTN)) * WTM, wn0 = (warp % (BN / WTN)) * WTN;
    const uint km = (K + 31) / 32;
#if SP
    __global const uint *meta = meta0 + meta_off + batch * (size_t)M * km;
#else
    __global const uint *meta = 0;
#endif

    ACC acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0;

    const uint kt_n = (K + BK - 1) / BK;
#pragma unroll
    for (uint s = 0; s < STAGES - 1; s++) {
        if (s < kt_n) load_slice(smem + s * ST_SZ, smem + s * ST_SZ + A_SZ, A, B, lda, ldb, M, N, K, m0, n0, s * BK, tid, meta, km);
        else asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    for (uint kt = 0; kt < kt_n; kt++) {
        asm volatile("cp.async.wait_group " STR(STAGES) "-2;\n" ::: "memory");
        barrier(CLK_LOCAL_MEM_FENCE);
        /* refill the buffer every warp finished with before the barrier */
        const uint nk = kt + STAGES - 1, ns = nk % STAGES;
        if (nk < kt_n) load_slice(smem + ns * ST_SZ, smem + ns * ST_SZ + A_SZ, A, B, lda, ldb, M, N, K, m0, n0, nk * BK, tid, meta, km);
        else asm volatile("cp.async.commit_group;\n" ::: "memory");
        __local const ELT *as = smem + (kt % STAGES) * ST_SZ, *bs = as + A_SZ;
#if ABT == 0 && TFACC == 2
        float part[MT][NT][4];
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int j = 0; j < NT; j++) part[i][j][0] = part[i][j][1] = part[i][j][2] = part[i][j][3] = 0.0f;
#endif
#pragma unroll
        for (uint kk = 0; kk < BK; kk += KSTEP) {
#if SP
            uint af[MT][4], em[MT];
            const uint j = lane >> 3, q = lane & 7, g = lane >> 2, c = lane & 1;
            __local const uint *ms = (__local const uint *)(bs + B_SZ);
#pragma unroll
            for (int i = 0; i < MT; i++) {
                const uint mb = wm0 + i * 16, m = mb + (lane & 15), kc = kk / 2 + (lane >> 4) * 8;
                LDSM_X4(af[i], smem_addr(as + A_AT(m, kc)), "");
#if SPMETA == 1
                const uint w0 = ms[(mb + g) * MW + kk / 32], w1 = ms[(mb + g + 8) * MW + kk / 32];
                em[i] = meta_half((w0 >> (16 * c)) & 0xFFFFu) | meta_half((w1 >> (16 * c)) & 0xFFFFu) << 16;
#else
                const uint w = ms[(mb + g + 8 * c) * MW + kk / 32];
                em[i] = meta_half(w & 0xFFFFu) | meta_half(w >> 16) << 16;
#endif
            }
            /* a pair of n-tiles at a time: their B fragments (k 0-15, then 16-31) live only while
             * their mma.sp run, which keeps the warp's registers within bounds */
#pragma unroll
            for (int t = 0; t < NT; t += 2) {
                uint b0[4], b1[4];
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const uint nb = wn0 + t * 8, k16 = kk + 16 * h;
                    uint r[4];
#if TB
                    const uint n = nb + (j >> 1) * 8 + q, k = k16 + (j & 1) * 8;
                    LDSM_X4(r, smem_addr(bs + B_AT(n, k)), "");
#else
                    const uint k = k16 + (j & 1) * 8 + q, n = nb + (j >> 1) * 8;
                    LDSM_X4(r, smem_addr(bs + B_AT(k, n)), ".trans");
#endif
                    b0[2 * h] = r[0], b0[2 * h + 1] = r[1], b1[2 * h] = r[2], b1[2 * h + 1] = r[3];
                }
#pragma unroll
                for (int i = 0; i < MT; i++) {
                    mma_sp(acc[i][t], af[i], b0, em[i]);
                    mma_sp(acc[i][t + 1], af[i], b1, em[i]);
                }
            }
#elif ABT != 0
            uint af[MT][4], bf[NT][2];
            const uint j = lane >> 3, q = lane & 7;
#pragma unroll
            for (int i = 0; i < MT; i++) {
                const uint mb = wm0 + i * 16;
#if TA
                const uint k = kk + (j >> 1) * 8 + q, m = mb + (j & 1) * 8; /* stored k rows: transpose */
                LDSM_X4(af[i], smem_addr(as + A_AT(k, m)), ".trans");
#else
                const uint m = mb + (lane & 15), k = kk + (lane >> 4) * EPC;
                LDSM_X4(af[i], smem_addr(as + A_AT(m, k)), "");
#endif
            }
#pragma unroll
            for (int t = 0; t < NT; t += 2) {
                const uint nb = wn0 + t * 8;
                uint r[4];
#if TB
                const uint n = nb + (j >> 1) * 8 + q, k = kk + (j & 1) * EPC;
                LDSM_X4(r, smem_addr(bs + B_AT(n, k)), "");
#else
                const uint k = kk + (j & 1) * 8 + q, n = nb + (j >> 1) * 8; /* stored k rows: transpose */
                LDSM_X4(r, smem_addr(bs + B_AT(k, n)), ".trans");
#endif
                bf[t][0] = r[0], bf[t][1] = r[1], bf[t + 1][0] = r[2], bf[t + 1][1] = r[3];
            }
#pragma unroll
            for (int i = 0; i < MT; i++)
#pragma unroll
                for (int t = 0; t < NT; t++) mma_step(acc[i][t], af[i], bf[t]);
#else
            /* tf32 fragments (g = lane/4, c = lane%4): A a0 (g, c), a1 (g+8, c), a2 (g, c+4),
             * a3 (g+8, c+4); B b0 (k c, n g), b1 (k c+4, n g) */
            const uint g = lane >> 2, c = lane & 3;
            uint ah[MT][4], al[MT][4], bh[NT][2], bl[NT][2];
#pragma unroll
            for (int i = 0; i < MT; i++) {
                const uint m = wm0 + i * 16 + g;
#pragma unroll
                for (int h = 0; h < 4; h++) {
                    const uint mm = m + (h & 1) * 8, k = kk + c + (h >> 1) * 4;
                    split(TA ? as[A_AT(k, mm)] : as[A_AT(mm, k)], &ah[i][h], &al[i][h]);
                }
            }
#pragma unroll
            for (int t = 0; t < NT; t++) {
                const uint n = wn0 + t * 8 + g;
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const uint k = kk + c + h * 4;
                    split(TB ? bs[B_AT(n, k)] : bs[B_AT(k, n)], &bh[t][h], &bl[t][h]);
                }
            }
            /* the tensor cores' own accumulation truncates: the three products of a step (TFACC 1)
             * or of a slice (TFACC 2) are summed from zero there and added to acc in f32 here,
             * small terms first */
#pragma unroll
            for (int i = 0; i < MT; i++)
#pragma unroll
                for (int t = 0; t < NT; t++) {
#if TFACC == 2
                    float *tmp = part[i][t];
#else
                    float tmp[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#endif
                    mma1688(tmp, al[i], bh[t]);
                    mma1688(tmp, ah[i], bl[t]);
                    mma1688(tmp, ah[i], bh[t]);
#if TFACC != 2
                    for (int h = 0; h < 4; h++) acc[i][t][h] += tmp[h];
#endif
                }
#endif
        }
#if ABT == 0 && TFACC == 2
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int j = 0; j < NT; j++)
#pragma unroll
                for (int h = 0; h < 4; h++) acc[i][j][h] += part[i][j][h];
#endif
    }
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    /* accumulator (i, t): c0, c1 at row g, columns 2c, 2c+1 of the 16×8 tile; c2, c3 at row g+8 */
    const uint g = lane >> 2, c2 = (lane & 3) * 2;
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int t = 0; t < NT; t++)
#pragma unroll
            for (int hh = 0; hh < 4; hh += 2) {
                const uint gi = m0 + wm0 + i * 16 + g + (hh >> 1) * 8, gj = n0 + wn0 + t * 8 + c2;
                if (gi >= M || gj >= N) continue;
#if ABT == 3
                nv_store_pair_s8(C0, c_off + batch * stride_c + (size_t)gi * ldc + gj, acc[i][t][hh], acc[i][t][hh + 1], gi, gj, gj + 1 < N, rs,
                                 cs, bias, flags);
#else
                nv_store_pair(C + (size_t)gi * ldc + gj, acc[i][t][hh], acc[i][t][hh + 1], gj + 1 < N, alpha, beta);
#endif
            }
}
