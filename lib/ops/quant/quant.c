/* quant.c — INT8 quantization (lib/ops/quant/quant.cl): f32 -> s8 and back with PyTorch's arithmetic
 * (quantize_per_tensor / quantize_per_channel to qint8, dequantize), and the observers' scale and
 * zero point from a tensor's range. */
#include "opkit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The parameters checked, and the per-channel arrays the kernels read (inv: 1/scale or scale); per
 * tensor only *f0 and *z0, and the buffers stay NULL. */
static clrun_status params(clrun_ctx *ctx, const char *what, const clrun_qparams *p, int inverse, clrun_buf **fb, clrun_buf **zb, float *f0,
                           int32_t *z0)
{
    clrun_status st;
    if (!p || !p->scale || !p->zero_point) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: NULL parameters", what);
    const size_t ch = p->channels ? p->channels : 1;
    if (ch > UINT32_MAX || (ch > 1 && !p->inner))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: %zu channels of %zu elements", what, ch, p->inner);
    float *f = malloc(ch * sizeof *f);
    if (!f) return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "%s: out of memory", what);
    for (size_t c = 0; c < ch; c++) {
        if (!(p->scale[c] > 0) || !isfinite(p->scale[c])) {
            free(f);
            return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: scale %zu is %g; scales are positive and finite", what, c, (double)p->scale[c]);
        }
        if (p->zero_point[c] < -128 || p->zero_point[c] > 127) {
            free(f);
            return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: zero point %zu is %d; qint8's are -128 to 127", what, c, (int)p->zero_point[c]);
        }
        f[c] = inverse ? 1.0f / p->scale[c] : p->scale[c]; /* f32 division, as PyTorch computes inv_scale */
    }
    *fb = *zb = NULL;
    *f0 = f[0], *z0 = p->zero_point[0];
    if (ch == 1) { /* per tensor: the kernels take the two numbers as arguments, no buffers */
        free(f);
        return CLRUN_OK;
    }
    if ((st = clrun_buf_new(ctx, ch * 4, 0, fb)) || (st = clrun_upload(*fb, 0, f, ch * 4)) || (st = clrun_buf_new(ctx, ch * 4, 0, zb)) ||
        (st = clrun_upload(*zb, 0, p->zero_point, ch * 4))) {
        clrun_buf_free(*fb), clrun_buf_free(*zb);
        *fb = *zb = NULL;
    }
    free(f);
    return st;
}

static clrun_status range_check(clrun_ctx *ctx, const char *what, const char *name, clrun_buf *b, size_t off, size_t n, size_t es)
{
    if (!b) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: the %s buffer is NULL", what, name);
    if (off > SIZE_MAX / es - n || (off + n) * es > clrun_buf_size(b))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: %zu elements from element %zu run past the %s buffer of %zu bytes", what, n, off,
                           name, clrun_buf_size(b));
    return CLRUN_OK;
}

static clrun_status run(clrun_ctx *ctx, int quant, clrun_buf *src, size_t src_off, clrun_buf *dst, size_t dst_off, size_t n,
                        const clrun_qparams *p)
{
    const char *what = quant ? "quantize" : "dequantize";
    clrun_status st;
    clrun_buf *fb = NULL, *zb = NULL;
    clrun_kernel *k;
    float f0 = 1.0f;
    int32_t z0 = 0;
    if ((st = params(ctx, what, p, quant, &fb, &zb, &f0, &z0))) return st;
    if (!(st = range_check(ctx, what, "source", src, src_off, n, quant ? 4 : 1)) &&
        !(st = range_check(ctx, what, "destination", dst, dst_off, n, quant ? 1 : 4)) && n &&
        !(st = clrun__lib_kernel(ctx, "quant", src_off % 4 == 0 && dst_off % 4 == 0 ? "-DVEC=4" : "-DVEC=1",
                                 quant ? "clrun_quantize" : "clrun_dequantize", &k)))
        st = CLRUN__RUN(k, CLRUN__GRID1(src_off % 4 == 0 && dst_off % 4 == 0 ? (n + 3) / 4 : n), ARG_BUF(src), ARG_U64(src_off),
                        ARG_BUF(dst), ARG_U64(dst_off), ARG_U64(n), ARG_BUF(fb), ARG_BUF(zb), ARG_F32(f0), ARG_I32(z0),
                        ARG_U32(p->channels ? p->channels : 1), ARG_U64(p->inner ? p->inner : 1));
    clrun_buf_free(fb), clrun_buf_free(zb); /* the launch keeps them until it is done */
    return st;
}

clrun_status clrun_quantize(clrun_ctx *ctx, clrun_buf *x, size_t x_off, clrun_buf *q, size_t q_off, size_t n, const clrun_qparams *p)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_quantize: ctx is NULL");
    CLRUN__SERIAL(ctx);
    return run(ctx, 1, x, x_off, q, q_off, n, p);
}

clrun_status clrun_dequantize(clrun_ctx *ctx, clrun_buf *q, size_t q_off, clrun_buf *x, size_t x_off, size_t n, const clrun_qparams *p)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_dequantize: ctx is NULL");
    CLRUN__SERIAL(ctx);
    return run(ctx, 0, q, q_off, x, x_off, n, p);
}

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile (p in (0, 100]) of v[0 .. m), sorted in place. */
static float rank(float *v, size_t m, double p)
{
    qsort(v, m, sizeof *v, cmp_float);
    size_t r = (size_t)ceil(p / 100.0 * (double)m);
    return v[r ? r - 1 : 0];
}

clrun_status clrun_quant_calibrate(const float *x, size_t n, size_t channels, size_t inner, int symmetric, double percentile, float *scale,
                                   int32_t *zero_point)
{
    const size_t ch = channels ? channels : 1;
    if (!x || !scale || !zero_point || !n) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_quant_calibrate: NULL or empty argument");
    if (!(percentile > 0 && percentile <= 100))
        return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_quant_calibrate: percentile %g is not in (0, 100]", percentile);
    if (ch > 1 && (!inner || n % (ch * inner)))
        return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_quant_calibrate: %zu elements are not whole runs of %zu channels × %zu", n, ch,
                           inner);
    const size_t per = n / ch;
    float *v = malloc(per * sizeof *v + 4), *w = malloc(per * sizeof *w + 4);
    if (!v || !w) return free(v), free(w), clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "clrun_quant_calibrate: out of memory");
    for (size_t c = 0; c < ch; c++) {
        size_t m = 0;
        const size_t run = ch == 1 ? n : inner; /* the channel's runs only: O(n) over all channels */
        for (size_t base = c * run; base < n; base += ch * run)
            for (size_t i = base; i < base + run; i++) /* the channel's finite values */
                if (isfinite(x[i])) v[m] = x[i], w[m] = -x[i], m++;
        float lo = 0, hi = 0;
        if (m) {
            hi = rank(v, m, percentile);  /* the percentile from the top */
            lo = -rank(w, m, percentile); /* and from the bottom */
        }
        /* torch.ao.quantization's MinMaxObserver for qint8 (quant_min -128, quant_max 127), in f32 */
        const float eps = 1.1920928955078125e-07f, neg = lo < 0 ? lo : 0, pos = hi > 0 ? hi : 0;
        if (symmetric) {
            const float mx = -neg > pos ? -neg : pos, s = mx / 127.5f;
            scale[c] = s > eps ? s : eps, zero_point[c] = 0;
        } else {
            const float s0 = (pos - neg) / 255.0f, s = s0 > eps ? s0 : eps;
            const float z = -128.0f - nearbyintf(neg / s);
            scale[c] = s, zero_point[c] = (int32_t)(z < -128 ? -128 : z > 127 ? 127 : z);
        }
    }
    free(v), free(w);
    return CLRUN_OK;
}
