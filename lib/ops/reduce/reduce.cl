/* reduce.cl — reductions: sum, dot, sum of squares (norm2), max, min, argmax; f32 and f16 input,
 * f32 arithmetic with compensation.
 *
 * Each kernel writes one partial result per work-group; the host combines the partials (in double
 * for the sums). Accumulation: every work-item keeps CLRUN_VW independent Neumaier pairs (sum s,
 * compensation c); dot adds the exact rounding error of each product (fma TwoProduct), so dot is
 * as accurate as the sum. Work-groups combine their work-items' pairs in a tree in local memory.
 *
 * Tuning parameters (-D):
 *   CLRUN_VW       elements per vector load: 4 on GPUs, 16 on CPUs
 *   CLRUN_CHUNKED  1: work-item w takes one contiguous chunk (CPU shape, work-groups of one item,
 *                  no barrier is reached); 0: work-items stride through the array (GPU shape,
 *                  coalesced loads, work-groups of any power-of-two size)
 *   CLRUN_ALIGNED  1: a_off and b_off are multiples of CLRUN_VW, so loads are whole vectors
 *   CLRUN_HALF     1: the input is f16 (vload_half)
 * Kernel arguments: (a, a_off, b, b_off, n, chunk, partial, scratch...) — chunk is the elements per
 * work-item in the chunked shape, a multiple of CLRUN_VW. */
#include "common.h"

#ifndef CLRUN_VW
#define CLRUN_VW 4
#endif
#ifndef CLRUN_CHUNKED
#define CLRUN_CHUNKED 0
#endif
#ifndef CLRUN_ALIGNED
#define CLRUN_ALIGNED 0
#endif
#ifndef CLRUN_HALF
#define CLRUN_HALF 0
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define VT CAT(float, CLRUN_VW)
#define IT CAT(int, CLRUN_VW)

#if CLRUN_HALF
#define T half
#define LOAD1(i, p) vload_half((i), (p))
#if CLRUN_ALIGNED
#define LOADV(k, p) CAT(vloada_half, CLRUN_VW)((k), (p))
#else
#define LOADV(k, p) CAT(vload_half, CLRUN_VW)((k), (p))
#endif
#else
#define T float
#define LOAD1(i, p) ((p)[i])
#if CLRUN_ALIGNED
#define LOADV(k, p) (((__global const VT *)(p))[k])
#else
#define LOADV(k, p) CAT(vload, CLRUN_VW)((k), (p))
#endif
#endif

/* Neumaier: add v to (s, c). Works on scalars and vectors alike. */
#define NEU(TY, s, c, v)                                                                             \
    do {                                                                                             \
        const TY t_ = (s) + (v);                                                                     \
        (c) += select(((v) - t_) + (s), ((s) - t_) + (v), CLRUN_GE(fabs(s), fabs(v)));              \
        (s) = t_;                                                                                    \
    } while (0)
#define CLRUN_GE(a, b) isgreaterequal(a, b)

/* Kahan: add v to (s, c) where c holds the NEGATED running error (s + (-c) is the sum). Four
 * dependent operations and a select, no branches, so it vectorises everywhere. A compensation
 * that is not finite (the sum reached ±inf: inf - inf) is dropped, or the next step's v - c would
 * turn the infinite sum into NaN (NumPy's sum of [0, inf, 0] is inf). */
#define KAHAN(TY, s, c, v)                                                                           \
    do {                                                                                             \
        const TY y_ = (v) - (c);                                                                     \
        const TY t_ = (s) + y_;                                                                      \
        const TY e_ = (t_ - (s)) - y_;                                                               \
        (c) = select((TY)(0.0f), e_, isfinite(e_));                                                  \
        (s) = t_;                                                                                    \
    } while (0)

/* The range of work-item w in elements: [lo, hi), and the vector steps in it. */
#define RANGE()                                                                                      \
    const size_t w = get_global_id(0), G = get_global_size(0);                                       \
    (void)G;

/* The n % VW elements after the last whole vector: in the chunked shape the last work-item takes
 * them all; in the strided shape work-item w < n % VW takes one. */
#if CLRUN_CHUNKED
#define TAIL_FIRST() (w == G - 1 ? nv * CLRUN_VW : (size_t)n)
#define TAIL_STEP 1
#else
#define TAIL_FIRST() (nv * CLRUN_VW + w)
#define TAIL_STEP G
#endif

/* Where the partial results go. The CPU shape writes one per work-item and contains no barrier at
 * all (PoCL saves every private value across a barrier, even one never reached); the GPU shape
 * merges its work-group in a tree in local memory. */
#if CLRUN_CHUNKED
#define FINISH_SUM(ss, cc) (partial[w] = (float2)((ss), (cc)))
#define FINISH_EXT(m, mi, GT) (pval[w] = (m), pidx[w] = (mi))
#else
#define FINISH_SUM(ss, cc)                                                                           \
    do {                                                                                             \
        const size_t l = get_local_id(0), L = get_local_size(0);                                     \
        tmp[l] = (float2)((ss), (cc));                                                               \
        for (size_t half_ = L / 2; half_ > 0; half_ /= 2) {                                          \
            barrier(CLK_LOCAL_MEM_FENCE);                                                            \
            if (l < half_) {                                                                         \
                float2 u = tmp[l];                                                                   \
                const float2 v = tmp[l + half_];                                                     \
                NEU(float, u.x, u.y, v.x);                                                           \
                u.y += v.y;                                                                          \
                tmp[l] = u;                                                                          \
            }                                                                                        \
        }                                                                                            \
        if (l == 0) partial[get_group_id(0)] = tmp[0];                                               \
    } while (0)
#define FINISH_EXT(m, mi, GT)                                                                        \
    do {                                                                                             \
        const size_t l = get_local_id(0), L = get_local_size(0);                                     \
        tv[l] = (m), ti[l] = (mi);                                                                   \
        for (size_t half_ = L / 2; half_ > 0; half_ /= 2) {                                          \
            barrier(CLK_LOCAL_MEM_FENCE);                                                            \
            if (l < half_) {                                                                         \
                const float v = tv[l + half_];                                                       \
                const ulong vi = ti[l + half_];                                                      \
                if (vi != NONE_ && (ti[l] == NONE_ || BEATS(v, vi, tv[l], ti[l], GT)))               \
                    tv[l] = v, ti[l] = vi;                                                           \
            }                                                                                        \
        }                                                                                            \
        if (l == 0) pval[get_group_id(0)] = tv[0], pidx[get_group_id(0)] = ti[0];                    \
    } while (0)
#endif

/* One vector step of a sum-like reduction into (s, c) from vector index k (MODE as below). */
#define ACC(MODE, s, c, k)                                                                               \
    do {                                                                                             \
        const VT x = LOADV(k, pa);                                                                   \
        if (MODE == 0) {                                                                             \
            KAHAN(VT, s, c, x);                                                                      \
        } else {                                                                                     \
            const VT y = MODE == 1 ? LOADV(k, pb) : x;                                               \
            const VT p = x * y;                                                                      \
            KAHAN(VT, s, c, p);                                                                      \
            const VT pe_ = fma(x, y, -p); /* the product's exact error (c is negated) */             \
            c -= select((VT)(0.0f), pe_, isfinite(pe_)); /* none for an infinite product */          \
        }                                                                                            \
    } while (0)

/* Sum-like reductions: MODE 0 sum, 1 dot, 2 sum of squares. Partials are float2 (s, c). */
#define SUMLIKE(NAME, MODE)                                                                          \
    __kernel void NAME(__global const T *a, ulong a_off, __global const T *b, ulong b_off, ulong n,   \
                       ulong chunk, __global float2 *partial, __local float2 *tmp)                  \
    {                                                                                                \
        RANGE();                                                                                     \
        /* four independent (s, c) pairs hide the latency of the dependent Kahan steps */           \
        VT s0 = (VT)(0.0f), c0 = (VT)(0.0f), s1 = s0, c1 = s0, s2 = s0, c2 = s0, s3 = s0, c3 = s0;  \
        const __global T *pa = a + a_off, *pb = b + b_off;                                           \
        const size_t nv = n / CLRUN_VW;                                                              \
        /* chunked: [w·chunk, (w+1)·chunk) contiguous; strided: w, w + G, ... (step is a constant  \
         * 1 in the chunked shape, so the CPU compiler sees a plain counted loop) */                 \
        const size_t step = CLRUN_CHUNKED ? 1 : G;                                                   \
        const size_t k0 = CLRUN_CHUNKED ? w * (chunk / CLRUN_VW) : w;                                \
        const size_t k1 = CLRUN_CHUNKED ? min(nv, k0 + chunk / CLRUN_VW) : nv;                       \
        size_t k = k0;                                                                               \
        for (; k + 3 * step < k1; k += 4 * step) {                                                   \
            ACC(MODE, s0, c0, k);                                                                          \
            ACC(MODE, s1, c1, k + step);                                                                   \
            ACC(MODE, s2, c2, k + 2 * step);                                                               \
            ACC(MODE, s3, c3, k + 3 * step);                                                               \
        }                                                                                            \
        for (; k < k1; k += step) ACC(MODE, s0, c0, k);                                                    \
        /* the n % VW tail: the work-items whose index is below it take one element each */          \
        float ss = 0.0f, cc = 0.0f;                                                                  \
        for (size_t i = TAIL_FIRST(); i < n; i += TAIL_STEP) {                                       \
            const float x = LOAD1(i, pa);                                                            \
            if (MODE == 0) {                                                                         \
                NEU(float, ss, cc, x);                                                               \
            } else {                                                                                 \
                const float y = MODE == 1 ? LOAD1(i, pb) : x;                                        \
                const float p = x * y;                                                               \
                NEU(float, ss, cc, p);                                                               \
                cc += fma(x, y, -p);                                                                 \
            }                                                                                        \
        }                                                                                            \
        /* fold the lanes; c is negated */                                                                  \
        for (int i = 0; i < CLRUN_VW; i++) {                                                         \
            NEU(float, ss, cc, ((float *)&s0)[i]);                                                   \
            NEU(float, ss, cc, ((float *)&s1)[i]);                                                   \
            NEU(float, ss, cc, ((float *)&s2)[i]);                                                   \
            NEU(float, ss, cc, ((float *)&s3)[i]);                                                   \
            cc -= ((float *)&c0)[i] + ((float *)&c1)[i] + ((float *)&c2)[i] + ((float *)&c3)[i];     \
        }                                                                                            \
        FINISH_SUM(ss, cc);                                                                          \
    }

SUMLIKE(clrun_sum, 0)
SUMLIKE(clrun_dot, 1)
SUMLIKE(clrun_sumsq, 2)

/* NaN-propagating max/min with the first index: a candidate (v, i) beats (m, mi) when it is NaN and
 * m is not (or both NaN and i < mi), or both are numbers and v is larger (smaller), or equal with
 * i < mi. NumPy's rules for max, min and argmax. */
#define BEATS(v, i, m, mi, GT)                                                                       \
    (isnan(m) ? (isnan(v) && (i) < (mi)) : (isnan(v) || (v) GT (m) || ((v) == (m) && (i) < (mi))))

#define UT CAT(uint, CLRUN_VW)
#define NONE_ ((ulong)-1)

/* Lanes keep the best value and the vector index where it was seen (strict comparison, so the first
 * occurrence wins within a lane) and the first vector index holding a NaN; the lanes, the tail and
 * the work-items are then merged with BEATS, which compares element indices. */
#define EXTREME(NAME, GT)                                                                            \
    __kernel void NAME(__global const T *a, ulong a_off, __global const T *b, ulong b_off, ulong n,   \
                       ulong chunk, __global float *pval, __global ulong *pidx, __local float *tv,   \
                       __local ulong *ti)                                                            \
    {                                                                                                \
        RANGE();                                                                                     \
        (void)b;                                                                                     \
        (void)b_off;                                                                                 \
        const __global T *pa = a + a_off;                                                            \
        const size_t nv = n / CLRUN_VW;                                                              \
        /* chunked: [w·chunk, (w+1)·chunk) contiguous; strided: w, w + G, ... (step is a constant  \
         * 1 in the chunked shape, so the CPU compiler sees a plain counted loop) */                 \
        const size_t step = CLRUN_CHUNKED ? 1 : G;                                                   \
        const size_t k0 = CLRUN_CHUNKED ? w * (chunk / CLRUN_VW) : w;                                \
        const size_t k1 = CLRUN_CHUNKED ? min(nv, k0 + chunk / CLRUN_VW) : nv;                       \
        float m = NAN;                                                                               \
        ulong mi = NONE_;                                                                            \
        if (k0 < k1) {                                                                               \
            VT mv = LOADV(k0, pa);                                                                   \
            UT mk = (UT)((uint)k0), nk = (UT)(0xFFFFFFFFu);                                          \
            nk = select(nk, mk, isnan(mv));                             \
            for (size_t k = k0 + step; k < k1; k += step) {                                          \
                const VT x = LOADV(k, pa);                                                           \
                const UT kk = (UT)((uint)k);                                                         \
                mk = select(mk, kk, (x GT mv));                           \
                mv = select(mv, x, x GT mv);                                                         \
                nk = select(nk, kk, isnan(x) & (nk == (UT)(0xFFFFFFFFu))); \
            }                                                                                        \
            for (int l_ = 0; l_ < CLRUN_VW; l_++) {                                                  \
                const uint nkl = ((uint *)&nk)[l_];                                                  \
                const float v = nkl != 0xFFFFFFFFu ? NAN : ((float *)&mv)[l_];                       \
                const ulong vi = (ulong)(nkl != 0xFFFFFFFFu ? nkl : ((uint *)&mk)[l_]) * CLRUN_VW + l_; \
                if (mi == NONE_ || BEATS(v, vi, m, mi, GT)) m = v, mi = vi;                          \
            }                                                                                        \
        }                                                                                            \
        for (size_t vi = TAIL_FIRST(); vi < n; vi += TAIL_STEP) {                                    \
            const float v = LOAD1(vi, pa);                                                           \
            if (mi == NONE_ || BEATS(v, (ulong)vi, m, mi, GT)) m = v, mi = vi;                       \
        }                                                                                            \
        FINISH_EXT(m, mi, GT);                                                                       \
    }

EXTREME(clrun_max, >)
EXTREME(clrun_min, <)
