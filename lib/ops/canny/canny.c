/* canny.c — Canny edges on the device (the .cl files beside it): thresholds as OpenCV converts them, launches. */
#include "opkit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One Canny job, checked: the image, the edges, OpenCV's integer thresholds and the options. */
struct job {
    clrun_buf *src;
    size_t src_off, src_stride;
    clrun_buf *dst;
    size_t dst_off, dst_stride;
    int W, H;
    unsigned channels;
    int low, high, l2, aperture, blur; /* blur 0: none */
    double sigma;
    int map_in; /* tests: the source is a map of 0, 1 (weak), 2 (strong) */
};

static clrun_status run(clrun_ctx *ctx, struct job j);

/* OpenCV's 8-bit Gaussian kernel of size n (3, 5 or 7) for sigma, as cv2.GaussianBlur builds it:
 * for sigma <= 0 (or NaN) its fixed table for the size; otherwise the weights exp(-x²/(2σ²))
 * normalised to sum 1, computed in double in OpenCV's order (x in half pixels, the centre's weight
 * being the reciprocal of the sum), then put in 8.8 fixed point from the edge inwards, each
 * rounding's error carried into the next weight, the centre taking what makes the sum exactly 256.
 * g[0..n/2]: the weights from the edge to the centre. This construction reproduced
 * cv2.GaussianBlur's output on 1000 sigmas per size (0.05 to 10); only a last-bit difference between
 * libm's exp and OpenCV's software exp could tip a rounding, which needs a weight within ~1e-13 of a
 * half. A fused multiply-add cannot change anything here: the only products added to are by 2 and
 * 256, exact. */
static void gauss_taps(int n, double sigma, int g[4])
{
    static const int table[3][4] = {{64, 128}, {16, 64, 96}, {8, 28, 56, 72}};
    const int h = n / 2;
    if (!(sigma > 0)) {
        memcpy(g, table[h - 1], sizeof table[0]);
        return;
    }
    const double scale = -0.125 / (sigma * sigma);
    double w[3], sum = 0;
    for (int i = 0; i < h; i++) {
        const double x = 2 * i + 1 - n;
        w[i] = exp(x * x * scale);
        sum += w[i];
    }
    sum = 1.0 / (sum * 2 + 1.0);
    double err = 0;
    int total = 0;
    for (int i = 0; i < h; i++) {
        const double k = w[i] * sum, adj = k * 256.0 + err, v = nearbyint(adj);
        err = adj - v;
        g[i] = (int)v;
        total += g[i];
    }
    g[h] = 256 - 2 * total;
}

/* OpenCV's integer thresholds: swapped when low > high; for L2 clamped to 32767 and squared when
 * positive; floored. Clamped to the int range (values beyond it select all or nothing anyway). */
static int threshold(double t, int l2)
{
    if (l2) {
        t = t < 32767.0 ? t : 32767.0;
        if (t > 0) t *= t;
    }
    t = floor(t);
    return t < -2147483648.0 ? INT32_MIN : t > 2147483647.0 ? INT32_MAX : (int)t;
}

/* The parameters' own checks, before any image is looked at. */
static clrun_status check_params(clrun_ctx *ctx, const clrun_canny_params *p)
{
    const int aperture = p->aperture ? p->aperture : 3;
    if (aperture != 3 && aperture != 5 && aperture != 7)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: aperture %d: the Sobel aperture is 3, 5 or 7", p->aperture);
    if (isnan(p->low) || isnan(p->high)) return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: a threshold is NaN");
    if (p->blur < 0 || p->blur > 7 || (p->blur > 1 && p->blur % 2 == 0) || p->blur == 2)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: blur size %d: 0 or 1 (none), 3, 5 or 7", p->blur);
    if (isnan(p->blur_sigma)) return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: the blur sigma is NaN");
    return CLRUN_OK;
}

clrun_status clrun_canny(clrun_ctx *ctx, clrun_buf *src, size_t src_off, size_t src_stride, size_t width, size_t height, unsigned channels,
                         clrun_buf *dst, size_t dst_off, size_t dst_stride, const clrun_canny_params *p)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_canny: ctx is NULL");
    CLRUN__SERIAL(ctx);
    clrun_status st;
    if (!p || !src || !dst) return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: NULL argument");
    if (channels != 1 && channels != 3) return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: images have 1 or 3 channels, not %u", channels);
    if ((st = check_params(ctx, p))) return st;
    const int aperture = p->aperture ? p->aperture : 3, blur = p->blur > 1 ? p->blur : 0;
    if (width == 0 || height == 0) return CLRUN_OK;
    if (width > INT32_MAX || height > INT32_MAX || width * height >= ((size_t)1 << 31) || src_stride > UINT32_MAX ||
        dst_stride > UINT32_MAX)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: image of %zu×%zu is too large (fewer than 2^31 pixels)", width, height);
    if (src_stride < width * channels || dst_stride < width)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: a row stride (%zu, %zu) is smaller than the row (%zu, %zu bytes)", src_stride,
                           dst_stride, width * channels, width);
    size_t src_end = src_off + (height - 1) * src_stride + width * channels, dst_end = dst_off + (height - 1) * dst_stride + width;
    if (src_end > clrun_buf_size(src) || src_end < src_off)
        return clrun__fail(ctx, CLRUN_INVALID_ARG,
                           "canny: the source image (%zu rows of stride %zu from byte %zu) runs past its buffer of %zu bytes", height,
                           src_stride, src_off, clrun_buf_size(src));
    if (dst_end > clrun_buf_size(dst) || dst_end < dst_off)
        return clrun__fail(ctx, CLRUN_INVALID_ARG,
                           "canny: the edge image (%zu rows of stride %zu from byte %zu) runs past its buffer of %zu bytes", height,
                           dst_stride, dst_off, clrun_buf_size(dst));
    double lo = p->low, hi = p->high;
    if (aperture == 7) lo /= 16, hi /= 16; /* as OpenCV: its aperture-7 gradients are scaled by 1/16 */
    if (lo > hi) {
        const double t = lo;
        lo = hi, hi = t;
    }
    return run(ctx, (struct job){src, src_off, src_stride, dst, dst_off, dst_stride, (int)width, (int)height, channels,
                                 threshold(lo, p->l2), threshold(hi, p->l2), p->l2 != 0, aperture, blur, p->blur_sigma, 0});
}

/* Tests: the hysteresis (both shapes' own kernels, after their classification) on a W×H map of 0, 1
 * (weak) and 2 (strong) bytes in a buffer, rows packed. */
clrun_status clrun__canny_map(clrun_ctx *ctx, clrun_buf *map, int W, int H, clrun_buf *dst)
{
    return run(ctx, (struct job){map, 0, (size_t)W, dst, 0, (size_t)W, W, H, 1, 0, 0, 0, 3, 0, 0.0, 1});
}

/* The kernels' shape: GPUs, tiles of bx × by·py pixels in work-groups of bx × by; CPUs, blocks of
 * CW × RB pixels, a work-item each. CLRUN_CANNY_SHAPE forces either on any device (tests);
 * CLRUN_CANNY_TILE sets the GPU tile (tuning). */
struct shape {
    int cpu, bx, by, py;
};

/* CPU blocks: 256×64 beat 256×16 and 256×32 by 10–25% at 4K on PoCL (fewer border pixels to join;
 * the map, stack and magnitude rows, 55 KB, stay in cache) and equalled 512×64 and 256×128 */
enum { CW = 128, RB = 64 };

static clrun_status read_shape(clrun_ctx *ctx, struct shape *s)
{
    clrun_status st;
    int forced;
    unsigned t[3] = {32, 8, 4}, n = 0;
    if ((st = clrun__setting_choice(ctx, CLRUN__SET_CANNY_SHAPE, &forced)) ||
        (st = clrun__setting_uints(ctx, CLRUN__SET_CANNY_TILE, t, &n)))
        return st;
    if (n && (t[0] < 1 || t[1] < 1 || t[2] < 1 || (uint64_t)t[0] * t[1] > 1024 || t[2] > 16))
        return clrun__setting_refuse(ctx, CLRUN__SET_CANNY_TILE, "BX, BY and PY at least 1, BX·BY at most 1024, PY at most 16");
    *s = (struct shape){forced >= 0 ? forced == 1 : clrun_ctx_device(ctx)->type == CLRUN_DEVICE_CPU, (int)t[0], (int)t[1], (int)t[2]};
    return CLRUN_OK;
}

static clrun_status run(clrun_ctx *ctx, struct job j)
{
    clrun_status st;
    struct shape sh = {0};
    if ((st = read_shape(ctx, &sh))) return st;
    const int cpu = sh.cpu, W = j.W, H = j.H;
    const size_t width = (size_t)W, height = (size_t)H, tw = (size_t)sh.bx, th = (size_t)sh.by * (size_t)sh.py;
    const size_t ntx = (width + tw - 1) / tw, nty = (height + th - 1) / th;
    /* scratch: W·H + 1 labels (the CPU shape uses only its border pixels'), on GPUs then the nodes
     * of the tiles' borders and a flag per tile (lib/ops/canny/canny_gpu.cl). Then, from `base`, the blurred
     * image, or a copy of an image that overlaps its edges: edges are written while neighbouring
     * tiles still read the image. */
    const size_t base = (width * height + 1 + (cpu ? 0 : 2 * ntx * height + 2 * nty * width + ntx * nty)) * sizeof(int);
    const size_t span = (height - 1) * j.src_stride + width * j.channels, dspan = (height - 1) * j.dst_stride + width;
    const int copy = !j.blur && j.src == j.dst && j.src_off < j.dst_off + dspan && j.dst_off < j.src_off + span;
    /* GPU tiles are staged in 4-byte words when the rows, as the tile kernel reads them (the image
     * as given or copied, same layout, or the blurred one), start at multiples of 4 bytes (buffers
     * themselves are aligned far more) */
    const size_t rd_off = j.blur || copy ? base : j.src_off, rd_stride = j.blur ? width * j.channels : j.src_stride;
    const int align4 = !cpu && j.channels == 1 && sh.bx % 4 == 0 && rd_off % 4 == 0 && rd_stride % 4 == 0;
    char opts[192];
    snprintf(opts, sizeof opts, "-DCN=%u -DL2=%d -DR=%d -DBX=%d -DBY=%d -DPY=%d -DCW=%d -DRB=%d -DKB=%d -DMAP_IN=%d -DALIGN4=%d",
             j.channels, j.l2, j.aperture / 2, sh.bx, sh.by, sh.py, CW, RB, j.blur ? j.blur : 3, j.map_in, align4);
    /* the tiles or blocks, the join, the fix */
    clrun_kernel *k[3] = {NULL};
    static const char *const names[2][3] = {{"clrun_canny_tile", "clrun_canny_join", "clrun_canny_fix"},
                                            {"clrun_canny_block_cpu", "clrun_canny_join_cpu", "clrun_canny_fix_cpu"}};
    clrun_buf *scratch;
    for (int i = 0; i < 3; i++)
        if ((st = clrun__lib_kernel(ctx, cpu ? "canny_cpu" : "canny_gpu", opts, names[cpu][i], &k[i]))) return st;
    if ((st = clrun__scratch(ctx, base + (j.blur ? width * height * j.channels : copy ? span : 0), &scratch))) return st;
    if (copy) {
        if ((st = clrun_buf_copy(scratch, base, j.src, j.src_off, span))) return st;
        j.src = scratch, j.src_off = base;
    }
    if (j.blur) { /* the blurred image is the source from here on */
        clrun_kernel *bk;
        /* GPUs: a work-item per pixel; CPUs: per block of CW × RB pixels, as the classification */
        clrun__grid bg = {2, {(width + 15) / 16 * 16, (height + 15) / 16 * 16, 1}, {16, 16, 1}};
        if (cpu) bg = (clrun__grid){2, {(width + CW - 1) / CW, (height + RB - 1) / RB, 1}, {1, 1, 1}};
        int g[4] = {0};
        gauss_taps(j.blur, j.sigma, g);
        if ((st = clrun__lib_kernel(ctx, "canny_blur", opts, cpu ? "clrun_canny_blur_cpu" : "clrun_canny_blur", &bk)) ||
            (st = CLRUN__RUN(bk, bg, ARG_BUF(j.src), ARG_U64(j.src_off), ARG_U32(j.src_stride), ARG_I32(W), ARG_I32(H), ARG_BUF(scratch),
                             ARG_U64(base), ARG_I32(g[0]), ARG_I32(g[1]), ARG_I32(g[2]), ARG_I32(g[3]))))
            return st;
        j.src = scratch, j.src_off = base, j.src_stride = width * j.channels;
    }
    /* the tiles or blocks: both shapes take (image, thresholds, scratch, edges) */
    if ((st = CLRUN__BIND(k[0], ARG_BUF(j.src), ARG_U64(j.src_off), ARG_U32(j.src_stride), ARG_I32(W), ARG_I32(H), ARG_I32(j.low),
                          ARG_I32(j.high), ARG_BUF(scratch), ARG_BUF(j.dst), ARG_U64(j.dst_off), ARG_U32(j.dst_stride))))
        return st;
    if (cpu) {
        /* the blocks, then join and fix, a work-item per block again, both (W, H, scratch, edges) */
        const clrun__grid blocks = {2, {(width + CW - 1) / CW, (height + RB - 1) / RB, 1}, {1, 1, 1}};
        if ((st = clrun_launch(k[0], blocks.dims, blocks.global, blocks.local))) return st;
        for (int i = 1; i < 3; i++)
            if ((st = CLRUN__RUN(k[i], blocks, ARG_I32(W), ARG_I32(H), ARG_BUF(scratch), ARG_BUF(j.dst), ARG_U64(j.dst_off),
                                 ARG_U32(j.dst_stride))))
                return st;
        return CLRUN_OK;
    }
    const clrun__grid tiles = {2, {ntx * tw, nty * (size_t)sh.by, 1}, {tw, (size_t)sh.by, 1}};
    /* the join: a work-item per pixel on a border between two tiles */
    const size_t border = (nty - 1) * width + (ntx - 1) * height;
    const clrun__grid join = {1, {(border + 255) / 256 * 256, 1, 1}, {256, 1, 1}};
    if ((st = clrun_launch(k[0], tiles.dims, tiles.global, tiles.local))) return st;
    if (border && (st = CLRUN__RUN(k[1], join, ARG_I32(W), ARG_I32(H), ARG_BUF(scratch)))) return st;
    return CLRUN__RUN(k[2], tiles, ARG_I32(W), ARG_I32(H), ARG_BUF(scratch), ARG_BUF(j.dst), ARG_U64(j.dst_off), ARG_U32(j.dst_stride));
}

clrun_status clrun_canny_image(clrun_ctx *ctx, const clrun_image *in, const clrun_canny_params *p, clrun_image *out)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_canny_image: ctx is NULL");
    CLRUN__SERIAL(ctx);
    clrun_status st;
    if (!in || !out || !in->data) return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: NULL image");
    memset(out, 0, sizeof *out);
    if ((st = clrun_image_new(out, in->width, in->height, 1))) return clrun__fail(ctx, st, "%s", clrun_last_error(NULL));
    if (!in->width || !in->height) return CLRUN_OK;
    size_t row = in->width * in->channels, bytes = (in->height - 1) * in->stride + row;
    clrun_buf *s = NULL, *d = NULL;
    if (!(st = clrun_buf_new(ctx, bytes, 0, &s)) && !(st = clrun_upload(s, 0, in->data, bytes)) &&
        !(st = clrun_buf_new(ctx, out->stride * out->height, 0, &d)) &&
        !(st = clrun_canny(ctx, s, 0, in->stride, in->width, in->height, in->channels, d, 0, out->stride, p)))
        st = clrun_download(d, 0, out->data, out->stride * out->height);
    clrun_buf_free(s);
    clrun_buf_free(d);
    if (st) clrun_image_free(out);
    return st;
}

/* ---- the pipeline op: items are images, results their edges ---- */

static clrun_status pipe_shape(void *arg, clrun_ctx *ctx, const clrun_image *in, clrun_image *out)
{
    (void)arg;
    if (in->channels != 1 && in->channels != 3)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: images have 1 or 3 channels, not %u", in->channels);
    *out = (clrun_image){in->width, in->height, in->width, 1, NULL};
    return CLRUN_OK;
}

static clrun_status pipe_run(void *arg, clrun_ctx *ctx, clrun_buf *in, const clrun_image *ish, clrun_buf *out, const clrun_image *osh)
{
    return clrun_canny(ctx, in, 0, ish->stride, ish->width, ish->height, ish->channels, out, 0, osh->width, arg);
}

clrun_status clrun_pipe_canny(clrun_ctx *ctx, const clrun_canny_params *p, unsigned depth, clrun_pipe_deliver deliver, void *arg,
                              clrun_pipe **out)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_pipe_canny: ctx is NULL");
    clrun_status st;
    if (out) *out = NULL;
    if (!p) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_pipe_canny: the parameters are NULL");
    if ((st = check_params(ctx, p))) return st;
    clrun_canny_params *own = malloc(sizeof *own);
    if (!own) return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "clrun_pipe_canny: out of memory");
    *own = *p;
    const clrun_pipe_op op = {pipe_shape, pipe_run, own};
    if ((st = clrun_pipe_new(ctx, &op, depth, deliver, arg, out))) return free(own), st;
    clrun__pipe_adopt(*out, own);
    return CLRUN_OK;
}
