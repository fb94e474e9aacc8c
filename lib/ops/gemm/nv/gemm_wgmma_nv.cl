/* gemm_wgmma_nv.cl — C = alpha·op(A)·op(B) + beta·C on Hopper's tensor cores with wgmma (sm_90a),
 * through NVIDIA's OpenCL. Built with the -clrun-ptx-rewrite option (lib/program.c): NVIDIA's
 * OpenCL C compiles for sm_90, where wgmma does not assemble, so every sm_90a instruction is written
 * in inline asm behind "//@@" — a PTX comment, into which the compiler still substitutes the asm
 * operands' registers — and the library uncomments those lines in the compiled PTX, retargets it to
 * sm_90a and builds it again as a program binary. The host picks this kernel after a probe (an exact
 * small product) and falls back to lib/ops/gemm/nv/gemm_mma_nv.cl where it fails.
 *
 * ABT 1 (f16) or 2 (bf16): wgmma.mma_async.m64nWNk16, f32 accumulators; ABT 3 (s8, clrun_gemm_s8):
 * m64nWNk32, exact int32 sums, stored through s8_epilogue.h.
 *
 * A work-group of WG warpgroups (128 threads each) computes a BM×BN tile of C; warpgroup w owns
 * rows w·BM/WG .. as BM/WG/64 slices of 64 rows, each multiplied by BN/WN instructions of width WN,
 * whose accumulators live in registers. K advances in slices of KB bytes (64: 32 f16/bf16 or 64
 * s8; or 32) through STAGES local buffers filled by cp.async (16-byte copies that zero-fill past the matrix
 * edges: any M, N, K); the tensor cores read both operands straight from local memory through
 * matrix descriptors, asynchronously, while the next slices' copies are issued.
 *
 * Local layouts (what the descriptors describe):
 * - K-major (A stored M×K, B stored N×K): rows of KB bytes, 16-byte chunk c of row r at chunk
 *   c ^ ((r / 2) mod 4) — the 64-byte swizzle — or, rows of 32 bytes, c ^ ((r / 4) mod 2) — the
 *   32-byte one; 8 rows apart is the stride dimension.
 * - MN-major (A stored K×M, B stored K×N; f16/bf16 only: the instruction transposes them): the
 *   M (N) extent in blocks of 64 elements (128 bytes), each block BK rows of k, chunk c of row k at
 *   c ^ (k mod 8) — the 128-byte swizzle; blocks are the leading-dimension stride apart, groups of
 *   8 rows of k (1024 bytes) the stride-dimension one.
 * WS 0: every thread copies and multiplies; a barrier per slice. WAIT 0: each slice's instructions
 * finish before the next slice starts (copies of STAGES-1 slices ahead in flight); WAIT 1: one
 * slice's instructions stay in flight across the barrier (copies of STAGES-2 slices ahead).
 * WS 1 or 2 (warp-specialised): warpgroup 0 only copies, running up to STAGES slices ahead, and the
 * WG others only multiply, keeping WAIT slices' instructions in flight; no barrier in the loop, but
 * two mbarriers per stage: full (WS 1: cp.async arrives on it itself when the copies land, and the
 * consumers fence the async proxy; WS 2: the producer waits for its copies one slice behind, fences
 * and arrives) and empty (each consumer warp arrives when its products of the slice are done).
 *
 * TMA 1 (with WS 1; f16, bf16 and s8): the producer is one thread that loads each stage with the Tensor
 * Memory Accelerator (cp.async.bulk.tensor) from tensor maps the host encoded with the CUDA driver
 * (lib/ops/gemm/nv/tmap_nv.c) — 64-byte (KB 64) or 32-byte (KB 32) swizzled boxes of BK × rows for a
 * K-major operand, 128-byte swizzled boxes of 64 × BK per block for an MN-major one, the layouts
 * above exactly, out-of-bounds elements zero — and arms the stage's full mbarrier with the bytes to
 * expect (mbarrier.arrive.expect_tx); the copies complete it. The maps (128 bytes each) are in
 * global memory at tmaps + 16·tm_a (A's) and tmaps + 16·tm_b (B's).
 *
 * SP 1 (f16/bf16 with TMA 1, KB 64; clrun_gemm_sp): A is 2:4 compressed (clrun.h): a slice is 32 of K,
 * A's tile BM rows of 16 values (32 bytes, the 32-byte swizzle, loaded by TMA from the values), B's
 * as above; each 64-row piece is one wgmma.mma_async.sp.m64nWNk32 whose metadata comes in a register
 * per thread, read from global memory one slice ahead: SPMETA 1, the first two threads of each quad,
 * thread c holding half c (16 columns) of rows g and g+8 of its warp's 16; SPMETA 2, thread 0 row g
 * and thread 1 row g+8, whole words. The host's probe picks the form that computes correctly.
 *
 * CUDA_LAUNCH 1 (with TMA 1): the same kernel launched through the CUDA driver (lib/cuda.c) on buffers shared
 * with CUDA, so that its stages may take up to 227 KiB of shared memory rather than OpenCL's 48.
 *
 * The host guarantees what cp.async and TMA need: leading dimensions, offsets and batch strides
 * multiples of 16 bytes' worth of elements. */

#ifndef ABT
#define ABT 1
#endif
#ifndef CUDA_LAUNCH
#define CUDA_LAUNCH 0 /* 1: built to be launched through the CUDA driver, local memory dynamic (below) */
#endif
#include "common.h" /* TA, TB */
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef WG
#define WG 1
#endif
#ifndef WN
#if BN < 256
#define WN BN
#else
#define WN 256
#endif
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef WAIT
#define WAIT 0
#endif
#ifndef GM
#define GM 8
#endif
#ifndef C2
#define C2 0
#endif
#ifndef KB
#define KB 64 /* bytes of K per slice: 64 (64-byte swizzle) or 32 (32-byte swizzle) */
#endif

#ifndef WS
#define WS 0
#endif
#ifndef TMA
#define TMA 0
#endif
#if TMA && (WS != 1 || (ABT == 3 && (TA || !TB)))
#error "TMA loads run with WS 1 (s8: A M×K, B N×K)"
#endif
#ifndef SP
#define SP 0
#endif
#ifndef SPMETA
#define SPMETA 1
#endif
#if SP && (ABT == 3 || TA || !TMA || KB != 64)
#error "the 2:4 kernel: f16/bf16, A compressed M×K, TMA loads, 64-byte slices of B"
#endif
#if WS /* one producer warpgroup copies, WG consumer warpgroups multiply */
#define NTHR ((WG + 1) * 128)
#define LTHR 128
#else
#define NTHR (WG * 128)
#define LTHR NTHR
#endif
#define MI (BM / WG / 64) /* 64-row slices per warpgroup */
#define NI (BN / WN)      /* instructions per slice along N */
#define NACC (WN / 2)     /* accumulators of one m64×WN instruction per thread */

#if ABT == 3
#define ELT char
#define EPC 16
#define KS 32
#define ACC int
#if TA || !TB
#error "the s8 wgmma kernel reads A as M×K and B as N×K"
#endif
#pragma OPENCL FP_CONTRACT OFF
#include "s8_epilogue.h"
#elif ABT == 1 || ABT == 2
#define ELT ushort
#define EPC 8
#define KS (SP ? 32 : 16)
#define ACC float
#else
#error "ABT is 1 (f16), 2 (bf16) or 3 (s8)"
#endif
#define BK (KB / (int)sizeof(ELT)) /* elements of K per slice */
#if KB != 64 && KB != 32
#error "KB is 64 or 32"
#endif
#if BM % (64 * WG) || BN % WN || WN % 8 || WN > 256 || (WN != 64 && WN != 128 && WN != 256)
#error "BM a multiple of 64·WG; WN 64, 128 or 256, dividing BN"
#endif
#if (TA && BM % 64) || (!TB && BN % 64)
#error "MN-major tiles come in blocks of 64"
#endif

#define A_BYTES (SP ? BM * KB / 2 : BM * KB)
#define B_BYTES (BN * KB)
#define ST_BYTES (A_BYTES + B_BYTES)

/* byte offsets in a tile: K-major row r chunk c; MN-major row k (of K), chunk c along M or N */
#if KB == 64
#define KM_AT(r, c) ((r) * 64 + (((c) ^ (((r) >> 1) & 3)) << 4))
#define KM_DESC(a) desc((a), 16, 512, 2)
#else
#define KM_AT(r, c) ((r) * 32 + (((c) ^ (((r) >> 2) & 1)) << 4))
#define KM_DESC(a) desc((a), 16, 256, 3)
#endif
#define MN_AT(k, c) (((c) >> 3) * (BK * 128) + (k) * 128 + ((((c) & 7) ^ ((k) & 7)) << 4))

#include "nv_common.h"
#include "wgmma_ops.h"
#if WN == 64
#define WG_REGS WG_REGS64
#define WG_OPSF WG_OPS64F
#define WG_OPSI WG_OPS64I
#define WG_DA WG_DA64
#define WG_DB WG_DB64
#define WG_P WG_P64
#define WG_E WG_E64
#elif WN == 128
#define WG_REGS WG_REGS128
#define WG_OPSF WG_OPS128F
#define WG_OPSI WG_OPS128I
#define WG_DA WG_DA128
#define WG_DB WG_DB128
#define WG_P WG_P128
#define WG_E WG_E128
#else
#define WG_REGS WG_REGS256
#define WG_OPSF WG_OPS256F
#define WG_OPSI WG_OPS256I
#define WG_DA WG_DA256
#define WG_DB WG_DB256
#define WG_P WG_P256
#define WG_E WG_E256
#endif
#if ABT == 3
#define WG_OPS WG_OPSI
#define WG_INSTR "wgmma.mma_async.sync.aligned.m64n" STR(WN) "k32.s32.s8.s8 " WG_REGS ", " WG_DA ", " WG_DB ", p;"
#else
#if ABT == 1
#define WG_T "f16"
#else
#define WG_T "bf16"
#endif
#define WG_OPS WG_OPSF
/* imm-trans-a/b: 1 reads the operand MN-major (A stored K×M, B stored K×N) */
#if SP /* the metadata register, sparsity selector 0 (the first threads of each quad) */
#define WG_INSTR                                                                                                                       \
    "wgmma.mma_async.sp.sync.aligned.m64n" STR(WN) "k32.f32." WG_T "." WG_T " " WG_REGS ", " WG_DA ", " WG_DB ", " WG_E ", 0, p, 1, 1, " \
    STR(TA) ", " STR(TB_T) ";"
#else
#define WG_INSTR                                                                                                                     \
    "wgmma.mma_async.sync.aligned.m64n" STR(WN) "k16.f32." WG_T "." WG_T " " WG_REGS ", " WG_DA ", " WG_DB ", p, 1, 1, " STR(TA) ", " \
    STR(TB_T) ";"
#endif
#if TB
#define TB_T 0
#else
#define TB_T 1
#endif
#endif

/* d += A·B for one 64×WN piece: A's and B's descriptors (and, SP, the metadata register e) */
#define WGMMA(d, da, db, e)                                                                                                             \
    asm volatile("//@@{\n//@@.reg .pred p;\n//@@setp.ne.b32 p, " WG_P ", 0;\n//@@" WG_INSTR "\n//@@}\n" : WG_OPS(d) : "l"(da), "l"(db), \
                 "r"(1), "r"(e))
/* keeps the compiler from moving accumulator accesses across the asynchronous instructions */
#define ACC_FENCE(d) asm volatile("" : WG_OPS(d)::"memory")

/* matrix descriptor: start address, leading and stride dimension byte offsets, swizzle mode
 * (1: 128 bytes, 2: 64 bytes) */
static inline ulong desc(uint addr, uint lbo, uint sbo, uint mode)
{
    return (ulong)((addr & 0x3FFFFu) >> 4) | (ulong)(lbo >> 4) << 16 | (ulong)(sbo >> 4) << 32 | (ulong)mode << 62;
}
#define MN_DESC(a) desc((a), BK * 128, 1024, 1)
#if SP /* A's compressed tile: rows of 32 bytes, the 32-byte swizzle */
#define A_KM_DESC(a) desc((a), 16, 256, 3)
#define A_ROW 32
#else
#define A_KM_DESC(a) KM_DESC(a)
#define A_ROW KB
#endif

/* One operand's slice of depth k0 into the tile at byte address t: rows r0 .. r0+R-1 of the
 * operand's M (or N) extent `rows` total; mn: stored K×R (MN-major) rather than R×K. */
static inline void load_tile(uint t, __global const ELT *X, const uint ld, const uint R, const uint r0, const uint rows, const uint K,
                             const uint k0, const int mn, const uint tid)
{
    if (mn) {
        const uint ch = R / EPC; /* chunks per stored row */
        for (uint e = tid; e < BK * ch; e += LTHR) {
            const uint k = e / ch, c = e % ch, gr = k0 + k, gc = r0 + c * EPC;
            const uint ok = gr < K && gc < rows;
            const uint bytes = ok ? min((uint)EPC, rows - gc) * (uint)sizeof(ELT) : 0u;
            cp_async16(t + MN_AT(k, c), ok ? X + (size_t)gr * ld + gc : X, bytes);
        }
    } else {
        for (uint e = tid; e < R * (KB / 16); e += LTHR) {
            const uint r = e / (KB / 16), c = e % (KB / 16), gr = r0 + r, gc = k0 + c * EPC;
            const uint ok = gr < rows && gc < K;
            const uint bytes = ok ? min((uint)EPC, K - gc) * (uint)sizeof(ELT) : 0u;
            cp_async16(t + KM_AT(r, c), ok ? X + (size_t)gr * ld + gc : X, bytes);
        }
    }
}

#if WS
/* mbarriers in local memory (byte addresses): init with an arrival count; wait for the completion of
 * the phase of this parity; arrive once */
static inline void mbar_init(uint a, uint n) { asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(a), "r"(n) : "memory"); }
static inline void mbar_wait(uint a, uint parity)
{
    uint done;
    do
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(a), "r"(parity)
                     : "memory");
    while (!done);
}
static inline void mbar_arrive(uint a) { asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared.b64 st, [%0];\n}\n" ::"r"(a) : "memory"); }
#endif

/* One slice's products at local address st, warpgroup w's rows: MI·NI·(BK/KS) instructions, committed
 * as one group. */
#define MMA_SLICE(st, w)                                                                                                               \
    do {                                                                                                                               \
        ACC_FENCE_ALL();                                                                                                               \
        asm volatile("//@@wgmma.fence.sync.aligned;\n" ::: "memory");                                                                  \
        _Pragma("unroll") for (uint kk = 0; kk < BK; kk += KS)                                                                         \
            _Pragma("unroll") for (int i = 0; i < MI; i++) {                                                                           \
                const uint mrow = (w) * (BM / WG) + i * 64;                                                                            \
                const ulong da = TA ? MN_DESC((st) + (mrow / 64) * (BK * 128) + (kk / 8) * 1024)                                        \
                                    : A_KM_DESC((st) + mrow * A_ROW + kk * (uint)sizeof(ELT) / (1 + SP));                              \
                _Pragma("unroll") for (int j = 0; j < NI; j++) {                                                                       \
                    const uint b_ = (st) + A_BYTES;                                                                                    \
                    const ulong db = TB ? KM_DESC(b_ + j * WN * KB + kk * (uint)sizeof(ELT))                                           \
                                        : MN_DESC(b_ + (j * WN / 64) * (BK * 128) + (kk / 8) * 1024);                                  \
                    WGMMA(acc[i][j], da, db, SP_E(i));                                                                                 \
                }                                                                                                                      \
            }                                                                                                                          \
        asm volatile("//@@wgmma.commit_group.sync.aligned;\n" ::: "memory");                                                           \
    } while (0)
#if SP
#define SP_E(i) em[i]
/* A zero half word is a row or slice past the matrix (real groups never encode 0): columns 0 and 1 */
static inline uint meta_half(uint h) { return h ? h : 0x4444u; }
#else
#define SP_E(i) 0u
#endif
#define ACC_FENCE_ALL()                                                                                                                \
    do {                                                                                                                               \
        _Pragma("unroll") for (int i_ = 0; i_ < MI; i_++) _Pragma("unroll") for (int j_ = 0; j_ < NI; j_++) ACC_FENCE(acc[i_][j_]);   \
    } while (0)

__kernel __attribute__((reqd_work_group_size(NTHR, 1, 1))) void
clrun_gemm_wgmma(const uint M, const uint N, const uint K, const float alpha, const float beta, __global const ELT *restrict A0,
                 const ulong a_off, const uint lda, const ulong stride_a,
#if SP
                 __global const uint *restrict meta0, const ulong meta_off,
#endif
                 __global const ELT *restrict B0, const ulong b_off,
                 const uint ldb, const ulong stride_b,
#if ABT == 3
                 __global void *C0, const ulong c_off, const uint ldc, const ulong stride_c, __global const float *rs,
                 __global const float *cs, __global const float *bias, const int flags
#else
                 __global float *C0, const ulong c_off, const uint ldc, const ulong stride_c
#endif
#if TMA
                 ,
                 __global const ulong *tmaps, const ulong tm_a, const ulong tm_b
#endif
)
{
#if CUDA_LAUNCH
    /* launched through the CUDA driver (lib/cuda.c): this array becomes the dynamic shared memory,
     * STAGES·ST_BYTES + 1024 bytes of it, its start rounded up to the 1024 bytes the swizzles need */
    __local uchar clrun_dyn_smem[16] __attribute__((aligned(1024)));
    const uint base = (smem_addr(clrun_dyn_smem) + 1023u) & ~1023u;
#else
    __local uchar smem[STAGES * ST_BYTES] __attribute__((aligned(1024)));
    const uint base = smem_addr(smem);
#endif
    const uint tid = get_local_id(0), lane = tid & 31, warp = tid >> 5, wg = tid >> 7;
    const uint tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, pid = get_group_id(0);
    const uint group = pid / (GM * tiles_n), first_m = group * GM, gsize = min(tiles_m - first_m, (uint)GM);
    const uint in_group = pid % (GM * tiles_n);
    const uint m0 = (first_m + in_group % gsize) * BM, n0 = (in_group / gsize) * BN;
    const size_t batch = get_group_id(1); /* (work-groups of one in dimension 1) */
    __global const ELT *A = A0 + a_off + batch * stride_a;
    __global const ELT *B = B0 + b_off + batch * stride_b;

    ACC acc[MI][NI][NACC];
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < NI; j++)
#pragma unroll
            for (int h = 0; h < NACC; h++) acc[i][j][h] = 0;

    const uint kt_n = (K + BK - 1) / BK;
#define LOAD_SLICE(s, kt, t)                                                                                     \
    do {                                                                                                         \
        load_tile(base + (s) * ST_BYTES, A, lda, BM, m0, M, K, (kt) * BK, TA, t);                                \
        load_tile(base + (s) * ST_BYTES + A_BYTES, B, ldb, BN, n0, N, K, (kt) * BK, !TB, t);                     \
    } while (0)
#if WS
    /* full[s] completes when the producer's copies into stage s have landed (one noinc arrival per
     * producer thread, made by cp.async itself); empty[s] when every consumer warp is done reading it */
    __local ulong bars[2 * STAGES];
    const uint full = smem_addr(bars), empty = full + 8 * STAGES, cw = wg - 1;
    if (tid == 0)
        for (uint s = 0; s < STAGES; s++) mbar_init(full + 8 * s, TMA ? 1 : 128), mbar_init(empty + 8 * s, 4 * WG);
    barrier(CLK_LOCAL_MEM_FENCE);
#if TMA
    if (wg == 0) { /* the producer: one thread, the copies made by the TMA unit */
        if (tid == 0) {
            const ulong tma_a = (ulong)(tmaps + 16 * tm_a), tma_b = (ulong)(tmaps + 16 * tm_b);
            asm volatile("//@@fence.proxy.tensormap::generic.acquire.gpu [%0], 128;\n//@@fence.proxy.tensormap::generic.acquire.gpu [%1], "
                         "128;\n" ::"l"(tma_a),
                         "l"(tma_b)
                         : "memory");
            const int bz = (int)batch;
            for (uint kt = 0; kt < kt_n; kt++) {
                const uint s = kt % STAGES, st = base + s * ST_BYTES, fb = full + 8 * s;
                const int k0 = (int)(kt * BK);
                if (kt >= STAGES) mbar_wait(empty + 8 * s, ((kt / STAGES) - 1) & 1);
                asm volatile("//@@mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(fb), "r"((uint)ST_BYTES) : "memory");
#if TA
                for (uint b = 0; b < BM / 64; b++)
                    asm volatile("//@@cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
                                 "[%5];\n" ::"r"(st + b * (BK * 128)),
                                 "l"(tma_a), "r"((int)(m0 + b * 64)), "r"(k0), "r"(bz), "r"(fb)
                                 : "memory");
#else
                asm volatile("//@@cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
                             "[%5];\n" ::"r"(st),
                             "l"(tma_a), "r"(k0 >> SP), "r"((int)m0), "r"(bz), "r"(fb)
                             : "memory");
#endif
#if TB
                asm volatile("//@@cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
                             "[%5];\n" ::"r"(st + A_BYTES),
                             "l"(tma_b), "r"(k0), "r"((int)n0), "r"(bz), "r"(fb)
                             : "memory");
#else
                for (uint b = 0; b < BN / 64; b++)
                    asm volatile("//@@cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
                                 "[%5];\n" ::"r"(st + A_BYTES + b * (BK * 128)),
                                 "l"(tma_b), "r"((int)(n0 + b * 64)), "r"(k0), "r"(bz), "r"(fb)
                                 : "memory");
#endif
            }
        }
        return;
    }
#else
    if (wg == 0) { /* the producer: copies run ahead of the multiplies by up to STAGES slices */
#if WS == 2
        /* slices [0, pub) are published: landed (this thread's copies), fenced for the async proxy,
         * arrived on; one more may be in flight, and is published before the producer blocks */
        uint pub = 0;
#define PUBLISH(n)                                                                                     \
    do {                                                                                               \
        asm volatile("cp.async.wait_group " #n ";\n" ::: "memory");                                    \
        asm volatile("//@@fence.proxy.async.shared::cta;\n" ::: "memory");                             \
        mbar_arrive(full + 8 * (pub % STAGES));                                                        \
        pub++;                                                                                         \
    } while (0)
#endif
        for (uint kt = 0; kt < kt_n; kt++) {
            const uint s = kt % STAGES;
            if (kt >= STAGES) {
#if WS == 2
                if (pub < kt) PUBLISH(0);
#endif
                mbar_wait(empty + 8 * s, ((kt / STAGES) - 1) & 1);
            }
            LOAD_SLICE(s, kt, tid);
#if WS == 2
            asm volatile("cp.async.commit_group;\n" ::: "memory");
            if (pub < kt) PUBLISH(1); /* the slice before this one */
#else
            asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(full + 8 * s) : "memory");
#endif
        }
#if WS == 2
        if (pub < kt_n) PUBLISH(0);
#endif
        return;
    }
#endif
#if SP /* this thread's metadata words: piece i's rows ra (and ra + 8) */
    const size_t km = (K + 31) / 32;
    __global const uint *meta = meta0 + meta_off + batch * (size_t)M * km;
    const uint ra0 = m0 + cw * (BM / WG) + (warp & 3) * 16 + (lane >> 2), hc = lane & 1;
    uint em[MI], nx[MI][2];
#if SPMETA == 1
#define META_FETCH(kt)                                                                                          \
    _Pragma("unroll") for (int i = 0; i < MI; i++)                                                              \
    {                                                                                                           \
        const uint ra = ra0 + i * 64;                                                                           \
        nx[i][0] = ra < M ? meta[(size_t)ra * km + (kt)] : 0u;                                                   \
        nx[i][1] = ra + 8 < M ? meta[(size_t)(ra + 8) * km + (kt)] : 0u;                                         \
    }
#define META_USE(i) (meta_half((nx[i][0] >> (16 * hc)) & 0xFFFFu) | meta_half((nx[i][1] >> (16 * hc)) & 0xFFFFu) << 16)
#else
#define META_FETCH(kt)                                                                                          \
    _Pragma("unroll") for (int i = 0; i < MI; i++)                                                              \
    {                                                                                                           \
        const uint ra = ra0 + i * 64 + 8 * hc;                                                                  \
        nx[i][0] = nx[i][1] = ra < M ? meta[(size_t)ra * km + (kt)] : 0u;                                        \
    }
#define META_USE(i) (meta_half(nx[i][0] & 0xFFFFu) | meta_half(nx[i][0] >> 16) << 16)
#endif
    META_FETCH(0);
#endif
    for (uint kt = 0; kt < kt_n; kt++) { /* the consumers */
        const uint s = kt % STAGES;
#if SP /* this slice's words into the instruction's form; the next slice's fetched while this one waits */
#pragma unroll
        for (int i = 0; i < MI; i++) em[i] = META_USE(i);
        if (kt + 1 < kt_n) META_FETCH(kt + 1);
#endif
        mbar_wait(full + 8 * s, (kt / STAGES) & 1);
#if WS != 2
        asm volatile("//@@fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
        MMA_SLICE(base + s * ST_BYTES, cw);
        asm volatile("//@@wgmma.wait_group.sync.aligned " STR(WAIT) ";\n" ::: "memory");
        ACC_FENCE_ALL();
        /* the slice whose products are known done: WAIT 1, the previous one */
        if (lane == 0 && kt + 1 >= 1 + WAIT) mbar_arrive(empty + 8 * ((kt - WAIT) % STAGES));
    }
#else
    const uint cw = wg;
#define AHEAD (STAGES - 1 - WAIT) /* slices whose copies are in flight ahead of the one multiplied */
#pragma unroll
    for (uint s = 0; s < AHEAD; s++) {
        if (s < kt_n) LOAD_SLICE(s, s, tid);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    for (uint kt = 0; kt < kt_n; kt++) {
        asm volatile("cp.async.wait_group " STR(AHEAD) "-1;\n" ::: "memory");
        /* the copies were generic-proxy writes; the tensor cores read through the async proxy */
        asm volatile("//@@fence.proxy.async.shared::cta;\n" ::: "memory");
        barrier(CLK_LOCAL_MEM_FENCE);
        MMA_SLICE(base + (kt % STAGES) * ST_BYTES, cw);
        /* refill the stage every warpgroup finished with before the barrier */
        const uint nk = kt + AHEAD;
        if (nk < kt_n) LOAD_SLICE(nk % STAGES, nk, tid);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
        asm volatile("//@@wgmma.wait_group.sync.aligned " STR(WAIT) ";\n" ::: "memory");
        ACC_FENCE_ALL();
    }
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
    asm volatile("//@@wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    ACC_FENCE_ALL();

    /* accumulator h of piece (i, j): n8 block h/4; h%4 0, 1 at row g, columns 2c, 2c+1; 2, 3 at row g+8 */
    const uint g = (lane >> 2) + (warp & 3) * 16, c2 = (lane & 3) * 2;
#if ABT != 3
    __global float *C = C0 + c_off + batch * stride_c;
#endif
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < NI; j++)
#pragma unroll
            for (int h = 0; h < NACC; h += 2) {
                const uint gi = m0 + cw * (BM / WG) + i * 64 + g + ((h >> 1) & 1) * 8, gj = n0 + j * WN + (h >> 2) * 8 + c2;
                if (gi >= M || gj >= N) continue;
#if ABT == 3
                nv_store_pair_s8(C0, c_off + batch * stride_c + (size_t)gi * ldc + gj, acc[i][j][h], acc[i][j][h + 1], gi, gj, gj + 1 < N, rs, cs,
                                 bias, flags);
#else
                nv_store_pair(C + (size_t)gi * ldc + gj, acc[i][j][h], acc[i][j][h + 1], gj + 1 < N, alpha, beta);
#endif
            }
}
