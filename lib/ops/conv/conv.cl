/* conv.cl — 2-D convolution as an implicit GEMM: the three passes (forward, backward-data,
 * backward-weights) are one tiled matrix product each, whose operands are gathered from the
 * tensors as the tiles are loaded (no im2col in memory).
 *
 * Built per pass and layout: -DMODE (0 forward, 1 backward-data, 2 backward-weights), -DNHWC (0:
 * NCHW activations and K×C/G×R×S weights, PyTorch's; 1: NHWC activations and K×R×S×C/G weights,
 * cuDNN's NHWC), -DABT (the storage type of every tensor: 0 f32, 1 f16, 2 bf16; common.h), and the
 * tile: -DTSM × -DTSN outputs per work-group, -DTSK deep, each work-item WPTM × WPTN outputs.
 * Accumulation is f32 whatever the storage type; results are rounded once (to nearest even).
 *
 * Per group g of the G groups (Cg = C/G input and Kg = K/G output channels), with RS = R·S:
 *   MODE 0  y[n, k, p, q]   M = Kg, columns (n, p, q), depth (c, r, s): A = w, B = x gathered
 *   MODE 1  dx[n, c, h, w]  M = Cg, columns (n, h, w), depth (k, r, s): A = w, B = dy gathered
 *           (the (p, q) whose window covers (h, w) through tap (r, s); none where the stride skips it)
 *   MODE 2  dw[k, c, r, s]  M = Kg, columns (c, r, s), depth (n, p, q): A = dy, B = x gathered;
 *           split over the depth (grid dimension 2 is G · splits): each split writes f32 partial
 *           sums that clrun_conv_sum adds in split order (the result does not depend on timing).
 * The depth order within a tile is fixed, so a result is the same bits on every run. */
#include "common.h"

#if ABT == 1
#define ST(p, i, v) vstore_half_rte((v), (i), (p))
#elif ABT == 2
#define ST(p, i, v) ((p)[i] = clrun_bf16_rne(as_uint(v)))
#else
#define ST(p, i, v) ((p)[i] = (v))
#endif
#define T CLRUN_ELT

#define RTSM (TSM / WPTM)
#define RTSN (TSN / WPTN)
#define NT (RTSM * RTSN)

/* the problem, as the host passes it (conv.c's ARG_DIMS): 16 ints */
#define DIMS                                                                                                                          \
    int N, int C, int H, int W, int K, int R, int S, int P, int Q, int sh, int sw, int ph, int pw, int dh, int dw, int G
#define DERIVED                                                                                                                       \
    const int Cg = C / G, Kg = K / G, RS = R * S;                                                                                     \
    (void)H, (void)W, (void)sh, (void)sw, (void)ph, (void)pw, (void)dh, (void)dw, (void)Cg, (void)Kg, (void)RS

/* element (n, c, h, w) of an activation with C channels */
#if NHWC
#define ACT(n, c, h, w, C_, H_, W_) ((((long)(n) * (H_) + (h)) * (W_) + (w)) * (C_) + (c))
#else
#define ACT(n, c, h, w, C_, H_, W_) ((((long)(n) * (C_) + (c)) * (H_) + (h)) * (W_) + (w))
#endif

__kernel __attribute__((reqd_work_group_size(RTSN, RTSM, 1))) void clrun_conv(DIMS, __global const T *A,
                                                                               __global const T *B, __global T *Y,
                                                                               __global const T *bias, __global float *part,
                                                                               int splits)
{
    DERIVED;
    __local float As[TSK][TSM + 1];
    __local float Bs[TSK][TSN + 1];
#if MODE == 0
    const int M = Kg, NC = N * P * Q, KD = Cg * RS;
#elif MODE == 1
    const int M = Cg, NC = N * H * W, KD = Kg * RS;
#else
    const int M = Kg, NC = Cg * RS, KD = N * P * Q;
#endif
    const int g = get_group_id(2) / splits, split = get_group_id(2) % splits;
    const int ln = get_local_id(0), lm = get_local_id(1), lid = lm * RTSN + ln;
    const int m0 = get_group_id(1) * TSM, j0 = get_group_id(0) * TSN;
    /* this split's range of the depth, in whole tiles */
    const int ktiles = (KD + TSK - 1) / TSK, per = (ktiles + splits - 1) / splits;
    const int kbeg = split * per * TSK, kend = min(KD, (split + 1) * per * TSK);

    /* B's loads: this work-item's column is fixed (NT is a multiple of TSN), so decode it once */
    const int jl = lid % TSN, j = j0 + jl;
    int bn = 0, bh = 0, bw = 0, bc = 0, br = 0, bs = 0;
    if (j < NC) {
#if MODE == 0 /* (n, p, q): the window's corner */
        bn = j / (P * Q);
        const int pq = j % (P * Q);
        bh = (pq / Q) * sh - ph, bw = (pq % Q) * sw - pw;
#elif MODE == 1 /* (n, h, w), shifted by the padding */
        bn = j / (H * W);
        const int hw = j % (H * W);
        bh = hw / W + ph, bw = hw % W + pw;
#else /* (c, r, s) in the weights' order */
#if NHWC
        bc = j % Cg;
        const int rs = j / Cg;
#else
        bc = j / RS;
        const int rs = j % RS;
#endif
        br = (rs / S) * dh - ph, bs = (rs % S) * dw - pw;
#endif
    }
    const int kl_a = lid % TSK; /* A's loads: the depth offset is fixed */

    float acc[WPTM][WPTN];
    for (int i = 0; i < WPTM; i++)
        for (int k = 0; k < WPTN; k++) acc[i][k] = 0.0f;

    for (int k0 = kbeg; k0 < kend; k0 += TSK) {
        for (int e = lid; e < TSK * TSM; e += NT) { /* A: (m, kk) */
            const int ml = e / TSK, m = m0 + ml, kk = k0 + kl_a;
            float v = 0.0f;
            if (m < M && kk < kend) {
#if MODE == 0 /* w[g·Kg + m][kk]: the weights' own order in both layouts */
                v = CLRUN_LD(A, (long)(g * Kg + m) * KD + kk);
#elif MODE == 1 /* w[k][c][r][s] or w[k][r][s][c] with kk = (k, rs), m = c */
                const int k = kk / RS, rs = kk % RS;
#if NHWC
                v = CLRUN_LD(A, ((long)(g * Kg + k) * RS + rs) * Cg + m);
#else
                v = CLRUN_LD(A, ((long)(g * Kg + k) * Cg + m) * RS + rs);
#endif
#else /* dy[n, g·Kg + m, p, q] with kk = (n, p, q) */
                const int n = kk / (P * Q), pq = kk % (P * Q);
                v = CLRUN_LD(A, ACT(n, g * Kg + m, pq / Q, pq % Q, K, P, Q));
#endif
            }
            As[kl_a][ml] = v;
        }
        for (int e = lid; e < TSK * TSN; e += NT) { /* B: (kk, j) */
            const int kk = k0 + e / TSN;
            float v = 0.0f;
            if (j < NC && kk < kend) {
#if MODE == 0
#if NHWC
                const int c = kk % Cg, rs = kk / Cg;
#else
                const int c = kk / RS, rs = kk % RS;
#endif
                const int h = bh + (rs / S) * dh, w = bw + (rs % S) * dw;
                if (h >= 0 && h < H && w >= 0 && w < W) v = CLRUN_LD(B, ACT(bn, g * Cg + c, h, w, C, H, W));
#elif MODE == 1
                const int k = kk / RS, rs = kk % RS;
                const int th = bh - (rs / S) * dh, tw = bw - (rs % S) * dw;
                if (th >= 0 && tw >= 0 && th % sh == 0 && tw % sw == 0) {
                    const int p = th / sh, q = tw / sw;
                    if (p < P && q < Q) v = CLRUN_LD(B, ACT(bn, g * Kg + k, p, q, K, P, Q));
                }
#else
                const int n = kk / (P * Q), pq = kk % (P * Q);
                const int h = (pq / Q) * sh + br, w = (pq % Q) * sw + bs;
                if (h >= 0 && h < H && w >= 0 && w < W) v = CLRUN_LD(B, ACT(n, g * Cg + bc, h, w, C, H, W));
#endif
            }
            Bs[e / TSN][jl] = v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TSK; k++) {
            float a[WPTM];
            for (int i = 0; i < WPTM; i++) a[i] = As[k][lm + i * RTSM];
            for (int t = 0; t < WPTN; t++) {
                const float b = Bs[k][ln + t * RTSN];
                for (int i = 0; i < WPTM; i++) acc[i][t] = fma(a[i], b, acc[i][t]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    for (int i = 0; i < WPTM; i++) {
        const int m = m0 + lm + i * RTSM;
        if (m >= M) continue;
        for (int t = 0; t < WPTN; t++) {
            const int jj = j0 + ln + t * RTSN;
            if (jj >= NC) continue;
#if MODE == 0
            const int n = jj / (P * Q), pq = jj % (P * Q);
            const float b = bias ? CLRUN_LD(bias, g * Kg + m) : 0.0f;
            ST(Y, ACT(n, g * Kg + m, pq / Q, pq % Q, K, P, Q), acc[i][t] + b);
#elif MODE == 1
            const int n = jj / (H * W), hw = jj % (H * W);
            ST(Y, ACT(n, g * Cg + m, hw / W, hw % W, C, H, W), acc[i][t]);
#else
            const long o = (long)(g * Kg + m) * NC + jj;
            if (splits == 1) ST(Y, o, acc[i][t]);
            else part[(long)split * K * NC + o] = acc[i][t];
#endif
        }
    }
}

/* y[i] = the sum over the splits of part[s · n + i], in split order, rounded once to T */
__kernel void clrun_conv_sum(__global const float *part, __global T *y, ulong n, int splits)
{
    const ulong i = get_global_id(0);
    if (i >= n) return;
    float s = 0.0f;
    for (int k = 0; k < splits; k++) s += part[k * n + i];
    ST(y, i, s);
}

/* db[k] = the sum of dy over (n, p, q) for channel k: one work-group of CLRUN_WG per channel, each
 * work-item a strided run, then a tree in local memory (fixed order) */
__kernel __attribute__((reqd_work_group_size(CLRUN_WG, 1, 1))) void clrun_conv_bias_grad(DIMS, __global const T *dy,
                                                                                           __global T *db)
{
    DERIVED;
    __local float sh_[CLRUN_WG];
    const int k = get_group_id(0), l = get_local_id(0), npq = N * P * Q;
    float s = 0.0f;
    for (int i = l; i < npq; i += CLRUN_WG) {
        const int n = i / (P * Q), pq = i % (P * Q);
        s += CLRUN_LD(dy, ACT(n, k, pq / Q, pq % Q, K, P, Q));
    }
    sh_[l] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = CLRUN_WG / 2; h > 0; h >>= 1) {
        if (l < h) sh_[l] += sh_[l + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) ST(db, k, sh_[0]);
}
