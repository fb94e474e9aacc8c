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
#if ABT == 0
#define RAW float
#else
#define RAW ushort /* f16 and bf16 moved as bits: half is not a load/store type without cl_khr_fp16 */
#endif

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

/* ---- the GEMM path: im2col in chunks of images, the product by clrun_gemm (tensor cores where the
 * device has them), col2im, and the epilogue. The columns of images n0 .. n0 + ni of group g:
 *   NCHW  col[(c, r, s)][(i, p, q)]   (c of the group; the weights' row order)
 *   NHWC  col[(i, p, q)][(r, s, c)]
 * one work-item per element of what is written. */

/* one work-item per run of contiguous columns: NCHW a row (c, r, s, i, p) of Q outputs, NHWC a tap
 * (i, p, q, r, s) of Cg channels; indices within a chunk fit 32 bits (the budget keeps it under 2^31) */
__kernel void clrun_im2col(DIMS, __global const T *x, __global T *col, int n0, int ni, int g)
{
    DERIVED;
    const int PQ = P * Q, cols = ni * PQ;
#if NHWC
    const int e = get_global_id(0);
    if (e >= cols * RS) return;
    const int ipq = e / RS, rs = e % RS, i = ipq / PQ, pq = ipq % PQ;
    const int h = (pq / Q) * sh - ph + (rs / S) * dh, w = (pq % Q) * sw - pw + (rs % S) * dw;
    __global T *o = col + (ulong)ipq * (Cg * RS) + rs * Cg;
    if (h >= 0 && h < H && w >= 0 && w < W) {
        __global const RAW *src = (__global const RAW *)x + ACT(n0 + i, g * Cg, h, w, C, H, W);
        for (int c = 0; c < Cg; c++) ((__global RAW *)o)[c] = src[c];
    } else {
        for (int c = 0; c < Cg; c++) ST(o, c, 0.0f);
    }
#else
    const int e = get_global_id(0), rowsP = ni * P;
    if (e >= Cg * RS * rowsP) return;
    const int crs = e / rowsP, ip = e % rowsP, i = ip / P, p = ip % P, c = crs / RS, rs = crs % RS;
    const int h = p * sh - ph + (rs / S) * dh, w0 = (rs % S) * dw - pw;
    __global T *o = col + (ulong)crs * cols + i * PQ + p * Q;
    if (h < 0 || h >= H) {
        for (int q = 0; q < Q; q++) ST(o, q, 0.0f);
        return;
    }
    __global const RAW *src = (__global const RAW *)x + ACT(n0 + i, g * Cg + c, h, 0, C, H, W);
    for (int q = 0; q < Q; q++) {
        const int w = q * sw + w0;
        if (w >= 0 && w < W) ((__global RAW *)o)[q] = src[w];
        else ST(o, q, 0.0f);
    }
#endif
}

/* dx of images n0 .. n0 + ni, group g, from the columns' gradients (f32, im2col's layout): each
 * input element sums the taps that read it */
__kernel void clrun_col2im(DIMS, __global const float *colg, __global T *dx, int n0, int ni, int g)
{
    DERIVED;
    const ulong e = get_global_id(0), HWn = (ulong)H * W, PQ = (ulong)P * Q, rows = (ulong)Cg * RS, cols = (ulong)ni * PQ;
    if (e >= (ulong)ni * Cg * HWn) return;
    const int i = (int)(e / ((ulong)Cg * HWn)), c = (int)(e / HWn % (ulong)Cg), hw = (int)(e % HWn), h = hw / W, w = hw % W;
    float s = 0.0f;
    for (int r = 0; r < R; r++) {
        const int th = h + ph - r * dh;
        if (th < 0 || th % sh) continue;
        const int p = th / sh;
        if (p >= P) continue;
        for (int u = 0; u < S; u++) {
            const int tw = w + pw - u * dw;
            if (tw < 0 || tw % sw) continue;
            const int q = tw / sw;
            if (q >= Q) continue;
            const ulong ipq = (ulong)i * PQ + (ulong)p * Q + q;
#if NHWC
            s += colg[ipq * rows + (ulong)(r * S + u) * Cg + c];
#else
            s += colg[((ulong)c * RS + r * S + u) * cols + ipq];
#endif
        }
    }
    ST(dx, ACT(n0 + i, g * Cg + c, h, w, C, H, W), s);
}

/* y of images n0 .. n0 + ni from the products (f32: NCHW [k][(i, p, q)], NHWC [(i, p, q)][k]) plus
 * the bias, rounded once */
__kernel void clrun_conv_out(DIMS, __global const float *acc, __global const T *bias, __global T *y, int n0, int ni)
{
    DERIVED;
    const ulong e = get_global_id(0), PQ = (ulong)P * Q, cols = (ulong)ni * PQ;
    if (e >= cols * K) return;
#if NHWC
    const ulong ipq = e / K;
    const int k = (int)(e % K);
#else
    const int k = (int)(e / cols);
    const ulong ipq = e % cols;
#endif
    const int i = (int)(ipq / PQ), pq = (int)(ipq % PQ);
    const float b = bias ? CLRUN_LD(bias, k) : 0.0f;
    ST(y, ACT(n0 + i, k, pq / Q, pq % Q, K, P, Q), acc[e] + b);
}

/* NCHW: dy of images n0 .. n0 + ni as [k][(i, p, q)] */
__kernel void clrun_dy_rows(DIMS, __global const T *dy, __global T *dyt, int n0, int ni)
{
    DERIVED;
    const ulong e = get_global_id(0), PQ = (ulong)P * Q, cols = (ulong)ni * PQ;
    if (e >= cols * K) return;
    const int k = (int)(e / cols), i = (int)(e % cols / PQ), pq = (int)(e % PQ);
    ST(dyt, e, CLRUN_LD(dy, ACT(n0 + i, k, pq / Q, pq % Q, K, P, Q)));
}

/* NCHW 1×1 layers of stride 1 (a product per image, no columns): y of images n0 .. n0 + ni from the
 * products in y's own order (f32) plus the bias, rounded once */
__kernel void clrun_conv_out_nchw(DIMS, __global const float *acc, __global const T *bias, __global T *y, int n0, int ni)
{
    DERIVED;
    const ulong e = get_global_id(0), PQ = (ulong)P * Q;
    if (e >= (ulong)ni * K * PQ) return;
    const int k = (int)(e / PQ % (ulong)K);
    ST(y, (ulong)n0 * K * PQ + e, acc[e] + (bias ? CLRUN_LD(bias, k) : 0.0f));
}
