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

/* The range of work-item w in elements: [lo, hi), and the vector steps in it. */
#define RANGE()                                                                                      \
    const size_t w = get_global_id(0), G = get_global_size(0);                                       \
    (void)G;

/* Sum-like reductions: MODE 0 sum, 1 dot, 2 sum of squares. Partials are float2 (s, c). */
#define SUMLIKE(NAME, MODE)                                                                          \
    __kernel void NAME(__global const T *a, ulong a_off, __global const T *b, ulong b_off, ulong n,   \
                       ulong chunk, __global float2 *partial, __local float2 *tmp)                  \
    {                                                                                                \
        RANGE();                                                                                     \
        VT s = (VT)(0.0f), c = (VT)(0.0f);                                                           \
        const __global T *pa = a + a_off, *pb = b + b_off;                                           \
        const size_t nv = n / CLRUN_VW;                                                              \
        size_t k0, k1, step;                                                                         \
        if (CLRUN_CHUNKED) {                                                                         \
            k0 = w * (chunk / CLRUN_VW);                                                             \
            k1 = min(nv, k0 + chunk / CLRUN_VW);                                                     \
            step = 1;                                                                                \
        } else {                                                                                     \
            k0 = w, k1 = nv, step = G;                                                               \
        }                                                                                            \
        for (size_t k = k0; k < k1; k += step) {                                                     \
            const VT x = LOADV(k, pa);                                                               \
            if (MODE == 0) {                                                                         \
                NEU(VT, s, c, x);                                                                        \
            } else {                                                                                 \
                const VT y = MODE == 1 ? LOADV(k, pb) : x;                                           \
                const VT p = x * y;                                                                  \
                NEU(VT, s, c, p);                                                                        \
                c += fma(x, y, -p);                                                                  \
            }                                                                                        \
        }                                                                                            \
        /* the n % VW tail: the work-items whose index is below it take one element each */          \
        float ss = 0.0f, cc = 0.0f;                                                                  \
        const size_t tail = n - nv * CLRUN_VW;                                                       \
        if (w < tail) {                                                                              \
            const float x = LOAD1(nv * CLRUN_VW + w, pa);                                            \
            if (MODE == 0) {                                                                         \
                ss = x;                                                                              \
            } else {                                                                                 \
                const float y = MODE == 1 ? LOAD1(nv * CLRUN_VW + w, pb) : x;                        \
                ss = x * y;                                                                          \
                cc = fma(x, y, -ss);                                                                 \
            }                                                                                        \
        }                                                                                            \
        /* fold the vector lanes */                                                                  \
        for (int i = 0; i < CLRUN_VW; i++) {                                                         \
            const float v = ((float *)&s)[i];                                                        \
            NEU(float, ss, cc, v);                                                                          \
            cc += ((float *)&c)[i];                                                                  \
        }                                                                                            \
        if (CLRUN_CHUNKED) {                                                                         \
            partial[w] = (float2)(ss, cc);                                                           \
            return;                                                                                  \
        }                                                                                            \
        const size_t l = get_local_id(0), L = get_local_size(0);                                     \
        tmp[l] = (float2)(ss, cc);                                                                   \
        for (size_t half_ = L / 2; half_ > 0; half_ /= 2) {                                          \
            barrier(CLK_LOCAL_MEM_FENCE);                                                            \
            if (l < half_) {                                                                         \
                float2 u = tmp[l];                                                                   \
                const float2 v = tmp[l + half_];                                                     \
                NEU(float, u.x, u.y, v.x);                                                                  \
                u.y += v.y;                                                                          \
                tmp[l] = u;                                                                          \
            }                                                                                        \
        }                                                                                            \
        if (l == 0) partial[get_group_id(0)] = tmp[0];                                               \
    }

SUMLIKE(clrun_sum, 0)
SUMLIKE(clrun_dot, 1)
SUMLIKE(clrun_sumsq, 2)

/* NaN-propagating max/min with the first index: a candidate (v, i) beats (m, mi) when it is NaN and
 * m is not (or both NaN and i < mi), or both are numbers and v is larger (smaller), or equal with
 * i < mi. NumPy's rules for max, min and argmax. */
#define BEATS(v, i, m, mi, GT)                                                                       \
    (isnan(m) ? (isnan(v) && (i) < (mi)) : (isnan(v) || (v) GT (m) || ((v) == (m) && (i) < (mi))))

#define EXTREME(NAME, GT)                                                                            \
    __kernel void NAME(__global const T *a, ulong a_off, __global const T *b, ulong b_off, ulong n,   \
                       ulong chunk, __global float *pval, __global ulong *pidx, __local float *tv,   \
                       __local ulong *ti)                                                            \
    {                                                                                                \
        RANGE();                                                                                     \
        (void)b;                                                                                     \
        (void)b_off;                                                                                 \
        const __global T *pa = a + a_off;                                                            \
        float m = NAN;                                                                               \
        ulong mi = (ulong)-1; /* no candidate yet */                                                 \
        size_t i0, i1, step;                                                                         \
        if (CLRUN_CHUNKED) {                                                                         \
            i0 = w * chunk, i1 = min((size_t)n, i0 + (size_t)chunk), step = 1;                       \
        } else {                                                                                     \
            i0 = w, i1 = n, step = G;                                                                \
        }                                                                                            \
        for (size_t i = i0; i < i1; i += step) {                                                     \
            const float v = LOAD1(i, pa);                                                            \
            if (mi == (ulong)-1 || BEATS(v, (ulong)i, m, mi, GT)) m = v, mi = i;                     \
        }                                                                                            \
        if (CLRUN_CHUNKED) {                                                                         \
            pval[w] = m, pidx[w] = mi;                                                               \
            return;                                                                                  \
        }                                                                                            \
        const size_t l = get_local_id(0), L = get_local_size(0);                                     \
        tv[l] = m, ti[l] = mi;                                                                       \
        for (size_t half_ = L / 2; half_ > 0; half_ /= 2) {                                          \
            barrier(CLK_LOCAL_MEM_FENCE);                                                            \
            if (l < half_) {                                                                         \
                const float v = tv[l + half_];                                                       \
                const ulong vi = ti[l + half_];                                                      \
                if (vi != (ulong)-1 && (ti[l] == (ulong)-1 || BEATS(v, vi, tv[l], ti[l], GT)))       \
                    tv[l] = v, ti[l] = vi;                                                           \
            }                                                                                        \
        }                                                                                            \
        if (l == 0) pval[get_group_id(0)] = tv[0], pidx[get_group_id(0)] = ti[0];                    \
    }

EXTREME(clrun_max, >)
EXTREME(clrun_min, <)
