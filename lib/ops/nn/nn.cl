/* nn.cl — the layers of a vision network: activations, batch normalisation, pooling, the linear
 * layer's bias, softmax cross-entropy, dropout's scaling and the SGD and AdamW steps.
 *
 * Built per storage type of the activations (-DABT: 0 f32, 1 f16, 2 bf16; common.h), the layout
 * (-DNHWC 0 or 1) and the work-group size of the per-channel reductions (-DCLRUN_WG, a power of
 * two). Arithmetic is f32; an activation is rounded once when stored. Every reduction adds in a
 * fixed order (a strided run per work-item, then a tree), so results repeat bit for bit. */
#include "common.h"

#if ABT == 1
#define ST(p, i, v) vstore_half_rte((v), (i), (p))
#elif ABT == 2
#define ST(p, i, v) ((p)[i] = clrun_bf16_rne(as_uint(v)))
#else
#define ST(p, i, v) ((p)[i] = (v))
#endif
#define T CLRUN_ELT

/* ---- activations (-DACT: 0 ReLU, 1 GELU with erf, 2 GELU with tanh) ---------------------------- */

#define SQRT_2_PI 0.7978845608028654f  /* √(2/π) */
#define INV_SQRT_2PI 0.3989422804014327f /* 1/√(2π) */

__kernel void clrun_act_fwd(__global const T *x, __global T *y, ulong n)
{
    const ulong i = get_global_id(0);
    if (i >= n) return;
    const float v = CLRUN_LD(x, i);
#if ACT == 0
    const float r = v > 0.0f ? v : isnan(v) ? v : 0.0f;
#elif ACT == 1
    const float r = 0.5f * v * (1.0f + erf(v * 0.7071067811865476f));
#else
    const float r = 0.5f * v * (1.0f + tanh(SQRT_2_PI * (v + 0.044715f * v * v * v)));
#endif
    ST(y, i, r);
}

__kernel void clrun_act_bwd(__global const T *x, __global const T *dy, __global T *dx, ulong n)
{
    const ulong i = get_global_id(0);
    if (i >= n) return;
    const float v = CLRUN_LD(x, i), g = CLRUN_LD(dy, i);
#if ACT == 0
    const float r = v > 0.0f ? g : 0.0f;
#elif ACT == 1
    const float r = g * (0.5f * (1.0f + erf(v * 0.7071067811865476f)) + v * INV_SQRT_2PI * exp(-0.5f * v * v));
#else
    const float t = tanh(SQRT_2_PI * (v + 0.044715f * v * v * v));
    const float r = g * (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * SQRT_2_PI * (1.0f + 3.0f * 0.044715f * v * v));
#endif
    ST(dx, i, r);
}

/* ---- per-channel helpers ----------------------------------------------------------------------- */

/* element j (of N·HW) of channel c */
#if NHWC
#define CH(c, j, C, HW) ((ulong)(j) * (C) + (c))
#else
#define CH(c, j, C, HW) (((ulong)((j) / (HW)) * (C) + (c)) * (HW) + (j) % (HW))
#endif

/* the work-group's sum of v, in a fixed tree; every work-item gets it */
static float group_sum(float v, __local float *sh)
{
    const uint l = get_local_id(0);
    sh[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = CLRUN_WG / 2; h > 0; h >>= 1) {
        if (l < h) sh[l] += sh[l + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float s = sh[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return s;
}

/* ---- batch normalisation ----------------------------------------------------------------------- */

/* one work-group per channel: the batch's mean and biased variance (two passes: the mean, then the
 * squares about it), saved as mean and 1/sqrt(var + eps); the running statistics updated (the
 * unbiased variance), as PyTorch */
__kernel __attribute__((reqd_work_group_size(CLRUN_WG, 1, 1))) void clrun_bn_stats(__global const T *x, int C, int HW, int M, float eps,
                                                                                     float momentum, __global float *save_mean,
                                                                                     __global float *save_invstd, __global float *run_mean,
                                                                                     __global float *run_var)
{
    __local float sh[CLRUN_WG];
    const int c = get_group_id(0), l = get_local_id(0);
    float s = 0.0f;
    for (int j = l; j < M; j += CLRUN_WG) s += CLRUN_LD(x, CH(c, j, C, HW));
    const float mean = group_sum(s, sh) / (float)M;
    s = 0.0f;
    for (int j = l; j < M; j += CLRUN_WG) {
        const float d = CLRUN_LD(x, CH(c, j, C, HW)) - mean;
        s = fma(d, d, s);
    }
    const float ss = group_sum(s, sh), var = ss / (float)M;
    if (l == 0) {
        save_mean[c] = mean;
        save_invstd[c] = 1.0f / sqrt(var + eps); /* rsqrt may be approximate */
        if (run_mean) run_mean[c] = (1.0f - momentum) * run_mean[c] + momentum * mean;
        if (run_var) run_var[c] = (1.0f - momentum) * run_var[c] + momentum * (ss / (float)(M - 1));
    }
}

/* y = gamma·(x - mean)·invstd + beta; evaluation (eval 1): mean and var are the running ones */
__kernel void clrun_bn_apply(__global const T *x, __global T *y, int C, int HW, ulong n, __global const float *mean,
                             __global const float *scale, float eps, int eval, __global const float *gamma, __global const float *beta)
{
    const ulong i = get_global_id(0);
    if (i >= n) return;
#if NHWC
    const int c = (int)(i % (ulong)C);
#else
    const int c = (int)((i / (ulong)HW) % (ulong)C);
#endif
    const float is = eval ? 1.0f / sqrt(scale[c] + eps) : scale[c];
    const float g = gamma ? gamma[c] : 1.0f, b = beta ? beta[c] : 0.0f;
    ST(y, i, fma((CLRUN_LD(x, i) - mean[c]) * is, g, b));
}

/* one work-group per channel: sums of dy and of dy·x̂ (dbeta and dgamma) */
__kernel __attribute__((reqd_work_group_size(CLRUN_WG, 1, 1))) void clrun_bn_grad_stats(__global const T *x, __global const T *dy, int C,
                                                                                          int HW, int M, __global const float *mean,
                                                                                          __global const float *invstd, __global float *sums)
{
    __local float sh[CLRUN_WG];
    const int c = get_group_id(0), l = get_local_id(0);
    const float mu = mean[c], is = invstd[c];
    float s = 0.0f, t = 0.0f;
    for (int j = l; j < M; j += CLRUN_WG) {
        const ulong e = CH(c, j, C, HW);
        const float g = CLRUN_LD(dy, e);
        s += g;
        t = fma(g, (CLRUN_LD(x, e) - mu) * is, t);
    }
    s = group_sum(s, sh);
    t = group_sum(t, sh);
    if (l == 0) sums[c] = s, sums[C + c] = t;
}

/* dx = gamma·invstd·(dy - dbeta/M - x̂·dgamma/M); dgamma, dbeta out of the sums */
__kernel void clrun_bn_dx(__global const T *x, __global const T *dy, __global T *dx, int C, int HW, int M, ulong n,
                          __global const float *mean, __global const float *invstd, __global const float *gamma, __global const float *sums)
{
    const ulong i = get_global_id(0);
    if (i >= n) return;
#if NHWC
    const int c = (int)(i % (ulong)C);
#else
    const int c = (int)((i / (ulong)HW) % (ulong)C);
#endif
    const float is = invstd[c], g = gamma ? gamma[c] : 1.0f, xh = (CLRUN_LD(x, i) - mean[c]) * is;
    const float db = sums[c] / (float)M, dg = sums[C + c] / (float)M;
    ST(dx, i, g * is * (CLRUN_LD(dy, i) - db - xh * dg));
}

__kernel void clrun_bn_params(__global const float *sums, int C, __global float *dgamma, __global float *dbeta)
{
    const int c = get_global_id(0);
    if (c >= C) return;
    if (dgamma) dgamma[c] = sums[C + c];
    if (dbeta) dbeta[c] = sums[c];
}

/* ---- pooling (-DPMAX 1: max, 0: average) ------------------------------------------------------- */

#if NHWC
#define AT(n, c, h, w, C, H, W) ((((ulong)(n) * (H) + (h)) * (W) + (w)) * (C) + (c))
#else
#define AT(n, c, h, w, C, H, W) ((((ulong)(n) * (C) + (c)) * (H) + (h)) * (W) + (w))
#endif

#define POOL_ARGS int N, int C, int H, int W, int P, int Q, int kh, int kw, int sh, int sw, int ph, int pw, int incl

/* output i's coordinates, in the layout's order */
#if NHWC
#define DECODE(i, n, c, p, q, C, P, Q)                                                                                                   \
    const int c = (int)((i) % (C)), q = (int)((i) / (C) % (Q)), p = (int)((i) / ((ulong)(C) * (Q)) % (P)),                              \
              n = (int)((i) / ((ulong)(C) * (Q) * (P)))
#else
#define DECODE(i, n, c, p, q, C, P, Q)                                                                                                   \
    const int q = (int)((i) % (Q)), p = (int)((i) / (Q) % (P)), c = (int)((i) / ((ulong)(Q) * (P)) % (C)),                              \
              n = (int)((i) / ((ulong)(Q) * (P) * (C)))
#endif

/* the window of output (p, q): its value (max: the first largest, NaN winning; average: the mean)
 * and, for max, the flat offset h·W + w of the winner (-1: none): the first largest, a NaN over
 * any number and the last NaN over an earlier one, as PyTorch's kernels */
static float window(__global const T *x, int n, int c, int p, int q, POOL_ARGS, int *arg)
{
    const int h0 = p * sh - ph, w0 = q * sw - pw;
    float best = -INFINITY, sum = 0.0f;
    int where = -1, cells = 0;
    for (int r = 0; r < kh; r++) {
        const int h = h0 + r;
        if (h < 0 || h >= H) continue;
        for (int s = 0; s < kw; s++) {
            const int w = w0 + s;
            if (w < 0 || w >= W) continue;
            const float v = CLRUN_LD(x, AT(n, c, h, w, C, H, W));
            cells++;
            sum += v;
            if (where < 0 || v > best || isnan(v)) best = v, where = h * W + w; /* PyTorch's rule: the last NaN */
        }
    }
    *arg = where;
#if PMAX
    (void)sum, (void)cells, (void)incl;
    return best;
#else
    const int h1 = min(h0 + kh, H + ph), w1 = min(w0 + kw, W + pw);
    const int whole = (h1 - h0) * (w1 - w0);
    return sum / (float)(incl ? whole : max(cells, 1));
#endif
}

__kernel void clrun_pool_fwd(__global const T *x, __global T *y, ulong n_out, POOL_ARGS)
{
    const ulong i = get_global_id(0);
    if (i >= n_out) return;
    DECODE(i, n, c, p, q, C, P, Q);
    int arg;
    ST(y, i, window(x, n, c, p, q, N, C, H, W, P, Q, kh, kw, sh, sw, ph, pw, incl, &arg));
}

/* dx at input (h, w): the sum over the windows that hold it (max: those it won) of their dy */
__kernel void clrun_pool_bwd(__global const T *x, __global const T *dy, __global T *dx, ulong n_in, POOL_ARGS)
{
    const ulong i = get_global_id(0);
    if (i >= n_in) return;
    DECODE(i, n, c, h, w, C, H, W);
    const int p0 = max(0, (h + ph - kh + sh) / sh), p1 = min(P - 1, (h + ph) / sh);
    const int q0 = max(0, (w + pw - kw + sw) / sw), q1 = min(Q - 1, (w + pw) / sw);
    float g = 0.0f;
    for (int p = p0; p <= p1; p++)
        for (int q = q0; q <= q1; q++) {
            if (h < p * sh - ph || w < q * sw - pw) continue;
#if PMAX
            int arg;
            window(x, n, c, p, q, N, C, H, W, P, Q, kh, kw, sh, sw, ph, pw, incl, &arg);
            if (arg == h * W + w) g += CLRUN_LD(dy, AT(n, c, p, q, C, P, Q));
#else
            const int h0 = p * sh - ph, w0 = q * sw - pw, h1 = min(h0 + kh, H + ph), w1 = min(w0 + kw, W + pw);
            int cells = incl ? (h1 - h0) * (w1 - w0) : (min(h0 + kh, H) - max(h0, 0)) * (min(w0 + kw, W) - max(w0, 0));
            g += CLRUN_LD(dy, AT(n, c, p, q, C, P, Q)) / (float)max(cells, 1);
#endif
        }
    ST(dx, i, g);
}

/* ---- linear: y[r, j] = b[j] (before the product is added), db[j] = Σ_r dy[r, j] ---------------- */

__kernel void clrun_bias_rows(__global float *y, __global const float *b, ulong rows, ulong cols)
{
    const ulong i = get_global_id(0);
    if (i >= rows * cols) return;
    y[i] = b ? b[i % cols] : 0.0f;
}

__kernel void clrun_col_sums(__global const float *dy, __global float *db, ulong rows, ulong cols)
{
    const ulong j = get_global_id(0);
    if (j >= cols) return;
    float s = 0.0f;
    for (ulong r = 0; r < rows; r++) s += dy[r * cols + j];
    db[j] = s;
}

/* ---- softmax cross-entropy: one work-item per row --------------------------------------------- */

__kernel void clrun_xent(__global const float *logits, __global const int *labels, ulong rows, int classes, float grad_scale,
                         __global float *loss, __global float *dlogits, __global int *pred)
{
    const ulong r = get_global_id(0);
    if (r >= rows) return;
    __global const float *z = logits + r * (ulong)classes;
    float m = z[0];
    int am = 0;
    for (int j = 1; j < classes; j++)
        if (z[j] > m || (isnan(z[j]) && !isnan(m))) m = z[j], am = j;
    float s = 0.0f;
    for (int j = 0; j < classes; j++) s += exp(z[j] - m);
    const float ls = log(s); /* log_softmax_j = (z_j - m) - ls, as PyTorch's */
    const int y = labels[r];
    const int ok = y >= 0 && y < classes;
    if (loss) loss[r] = ok ? -((z[y] - m) - ls) : NAN;
    if (pred) pred[r] = am;
    if (dlogits) {
        __global float *d = dlogits + r * (ulong)classes;
        for (int j = 0; j < classes; j++) d[j] = ok ? (exp((z[j] - m) - ls) - (j == y ? 1.0f : 0.0f)) * grad_scale : 0.0f;
    }
}

/* ---- dropout: y = x · mask · scale ----------------------------------------------------------- */

__kernel void clrun_mask_scale(__global const T *x, __global const uchar *mask, __global T *y, float scale, ulong n)
{
    const ulong i = get_global_id(0);
    if (i >= n) return;
    ST(y, i, mask[i] ? CLRUN_LD(x, i) * scale : 0.0f);
}

/* ---- optimisers (f32) ------------------------------------------------------------------------- */

__kernel void clrun_sgd(__global float *p, __global const float *g, __global float *buf, ulong n, float lr, float momentum, float dampening,
                        float wd, int nesterov, int first)
{
    const ulong i = get_global_id(0);
    if (i >= n) return;
    float d = g[i];
    if (wd != 0.0f) d = fma(wd, p[i], d);
    if (momentum != 0.0f) {
        const float b = first ? d : fma(momentum, buf[i], (1.0f - dampening) * d);
        buf[i] = b;
        d = nesterov ? fma(momentum, b, d) : b;
    }
    p[i] = fma(-lr, d, p[i]);
}

__kernel void clrun_adamw(__global float *p, __global const float *g, __global float *m, __global float *v, ulong n, float lr, float beta1,
                          float beta2, float eps, float decay, float step_size, float sqrt_bc2)
{
    const ulong i = get_global_id(0);
    if (i >= n) return;
    const float gi = g[i];
    const float mi = m[i] + (1.0f - beta1) * (gi - m[i]), vi = v[i] * beta2 + (1.0f - beta2) * gi * gi; /* lerp, addcmul */
    m[i] = mi, v[i] = vi;
    const float pd = p[i] * decay;
    p[i] = pd - step_size * (mi / (sqrt(vi) / sqrt_bc2 + eps));
    (void)lr;
}
