/* canny.c — Canny edges on the device (cl/canny.cl): thresholds as OpenCV converts them, launches. */
#include "../internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static clrun_status run(clrun_ctx *ctx, clrun_buf *src, size_t src_off, size_t src_stride, int W, int H, unsigned channels, clrun_buf *dst,
                        size_t dst_off, size_t dst_stride, int low, int high, int l2, int aperture, int blur, double sigma, int map_in);

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

clrun_status clrun_canny(clrun_ctx *ctx, clrun_buf *src, size_t src_off, size_t src_stride, size_t width, size_t height,
                         unsigned channels, clrun_buf *dst, size_t dst_off, size_t dst_stride, const clrun_canny_params *p)
{
    if (!p || !src || !dst) return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: NULL argument");
    if (channels != 1 && channels != 3) return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: images have 1 or 3 channels, not %u", channels);
    const int aperture = p->aperture ? p->aperture : 3;
    if (aperture != 3 && aperture != 5 && aperture != 7)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: aperture %d: the Sobel aperture is 3, 5 or 7", p->aperture);
    if (isnan(p->low) || isnan(p->high)) return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: a threshold is NaN");
    if (p->blur < 0 || p->blur > 7 || (p->blur > 1 && p->blur % 2 == 0) || p->blur == 2)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: blur size %d: 0 or 1 (none), 3, 5 or 7", p->blur);
    const int blur = p->blur > 1 ? p->blur : 0;
    if (isnan(p->blur_sigma)) return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: the blur sigma is NaN");
    if (width == 0 || height == 0) return CLRUN_OK;
    if (width > INT32_MAX || height > INT32_MAX || width * height >= ((size_t)1 << 31) || src_stride > UINT32_MAX || dst_stride > UINT32_MAX)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: image of %zu×%zu is too large (fewer than 2^31 pixels)", width, height);
    if (src_stride < width * channels || dst_stride < width)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: a row stride (%zu, %zu) is smaller than the row (%zu, %zu bytes)", src_stride,
                           dst_stride, width * channels, width);
    size_t src_end = src_off + (height - 1) * src_stride + width * channels, dst_end = dst_off + (height - 1) * dst_stride + width;
    if (src_end > clrun_buf_size(src) || src_end < src_off)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: the source image (%zu rows of stride %zu from byte %zu) runs past its buffer of %zu bytes",
                           height, src_stride, src_off, clrun_buf_size(src));
    if (dst_end > clrun_buf_size(dst) || dst_end < dst_off)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: the edge image (%zu rows of stride %zu from byte %zu) runs past its buffer of %zu bytes",
                           height, dst_stride, dst_off, clrun_buf_size(dst));
    double lo = p->low, hi = p->high;
    if (aperture == 7) lo /= 16, hi /= 16; /* as OpenCV: its aperture-7 gradients are scaled by 1/16 */
    if (lo > hi) {
        const double t = lo;
        lo = hi, hi = t;
    }
    return run(ctx, src, src_off, src_stride, (int)width, (int)height, channels, dst, dst_off, dst_stride, threshold(lo, p->l2),
               threshold(hi, p->l2), p->l2 != 0, aperture, blur, p->blur_sigma, 0);
}

/* Tests: the hysteresis (both shapes' own kernels, after their classification) on a W×H map of 0, 1
 * (weak) and 2 (strong) bytes in a buffer, rows packed. */
clrun_status clrun__canny_map(clrun_ctx *ctx, clrun_buf *map, int W, int H, clrun_buf *dst)
{
    return run(ctx, map, 0, (size_t)W, W, H, 1, dst, 0, (size_t)W, 0, 0, 0, 3, 0, 0.0, 1);
}

static clrun_status run(clrun_ctx *ctx, clrun_buf *src, size_t src_off, size_t src_stride, int W, int H, unsigned channels, clrun_buf *dst,
                        size_t dst_off, size_t dst_stride, int low, int high, int l2, int aperture, int blur, double sigma, int map_in)
{
    clrun_status st;
    const size_t width = (size_t)W, height = (size_t)H;
    /* two shapes (cl/canny.cl), both settling the hysteresis inside tiles and joining only their
     * borders globally: GPUs, tiles of bx × by·py pixels in work-groups of bx × by; CPUs, blocks of
     * cw × rb pixels, a work-item each */
    const char *shape = getenv("CLRUN_CANNY_SHAPE"); /* gpu or cpu: either shape on any device (tests) */
    const int cpu = shape && *shape ? strcmp(shape, "cpu") == 0 : ctx->info.type == CLRUN_DEVICE_CPU;
    /* CPU blocks: 256×64 beat 256×16 and 256×32 by 10–25% at 4K on PoCL (fewer border pixels to join;
     * the map, stack and magnitude rows, 55 KB, stay in cache) and equalled 512×64 and 256×128 */
    const int cw = 256, rb = 64;
    int bx = 32, by = 8, py = 4;
    const char *tile = getenv("CLRUN_CANNY_TILE"); /* BXxBYxPY: the GPU tile, for tuning */
    if (tile && *tile) {
        char *e;
        bx = (int)strtol(tile, &e, 10), by = *e == 'x' ? (int)strtol(e + 1, &e, 10) : 0, py = *e == 'x' ? (int)strtol(e + 1, &e, 10) : 0;
        if (*e || bx < 1 || by < 1 || py < 1 || bx * by > 1024 || py > 16)
            return clrun__fail(ctx, CLRUN_INVALID_ARG, "canny: CLRUN_CANNY_TILE=%s: expected BXxBYxPY, BX·BY at most 1024, PY at most 16", tile);
    }
    const size_t tw = (size_t)bx, th = (size_t)by * (size_t)py, ntx = (width + tw - 1) / tw, nty = (height + th - 1) / th;
    /* scratch: W·H + 1 labels (the CPU shape uses only its border pixels'), on GPUs then the nodes
     * of the tiles' borders and a flag per tile (cl/canny.cl). Then, from `base`, the blurred
     * image, or a copy of an image that overlaps its edges: edges are written while neighbouring
     * tiles still read the image. */
    const size_t base = (width * height + 1 + (cpu ? 0 : 2 * ntx * height + 2 * nty * width + ntx * nty)) * sizeof(int);
    const size_t span = (height - 1) * src_stride + width * channels, dspan = (height - 1) * dst_stride + width;
    const int copy = !blur && src == dst && src_off < dst_off + dspan && dst_off < src_off + span;
    /* GPU tiles are staged in 4-byte words when the rows, as the tile kernel reads them (the image
     * as given or copied, same layout, or the blurred one), start at multiples of 4 bytes (buffers
     * themselves are aligned far more) */
    const size_t rd_off = blur || copy ? base : src_off, rd_stride = blur ? width * channels : src_stride;
    const int align4 = !cpu && channels == 1 && bx % 4 == 0 && rd_off % 4 == 0 && rd_stride % 4 == 0;
    char opts[192];
    snprintf(opts, sizeof opts, "-DCN=%u -DL2=%d -DR=%d -DBX=%d -DBY=%d -DPY=%d -DCW=%d -DRB=%d -DKB=%d -DMAP_IN=%d -DALIGN4=%d", channels,
             l2, aperture / 2, bx, by, py, cw, rb, blur ? blur : 3, map_in, align4);
    /* the tiles or blocks, the join, the fix */
    clrun_kernel *k[3] = {NULL};
    static const char *const names[2][3] = {{"clrun_canny_tile", "clrun_canny_join", "clrun_canny_fix"},
                                            {"clrun_canny_block_cpu", "clrun_canny_join_cpu", "clrun_canny_fix_cpu"}};
    clrun_buf *scratch;
    for (int i = 0; i < 3; i++)
        if ((st = clrun__lib_kernel(ctx, "canny", opts, names[cpu][i], &k[i]))) return st;
    if ((st = clrun__scratch(ctx, base + (blur ? width * height * channels : copy ? span : 0), &scratch))) return st;
    if (copy) {
        if ((st = clrun_buf_copy(scratch, base, src, src_off, span))) return st;
        src = scratch, src_off = base;
    }
    if (blur) { /* the blurred image is the source from here on */
        clrun_kernel *bk;
        /* GPUs: a work-item per pixel; CPUs: per block of cw × rb pixels, as the classification */
        size_t bg[2] = {(width + 15) / 16 * 16, (height + 15) / 16 * 16}, bl[2] = {16, 16};
        if (cpu) bl[0] = bl[1] = 1, bg[0] = (width + cw - 1) / cw, bg[1] = (height + rb - 1) / rb;
        int g[4] = {0};
        gauss_taps(blur, sigma, g);
        if ((st = clrun__lib_kernel(ctx, "canny", opts, cpu ? "clrun_canny_blur_cpu" : "clrun_canny_blur", &bk)) || (st = clrun_arg_buf(bk, 0, src)) ||
            (st = clrun_arg_u64(bk, 1, src_off)) || (st = clrun_arg_u32(bk, 2, (cl_uint)src_stride)) || (st = clrun_arg_i32(bk, 3, W)) ||
            (st = clrun_arg_i32(bk, 4, H)) || (st = clrun_arg_buf(bk, 5, scratch)) || (st = clrun_arg_u64(bk, 6, base)))
            return st;
        for (int i = 0; i < 4; i++)
            if ((st = clrun_arg_i32(bk, 7 + (unsigned)i, g[i]))) return st;
        if ((st = clrun_launch(bk, 2, bg, bl))) return st;
        src = scratch, src_off = base, src_stride = width * channels;
    }
    /* the tiles or blocks: both shapes take (image, thresholds, scratch, edges) */
    clrun_kernel *c = k[0];
    if ((st = clrun_arg_buf(c, 0, src)) || (st = clrun_arg_u64(c, 1, src_off)) || (st = clrun_arg_u32(c, 2, (cl_uint)src_stride)) ||
        (st = clrun_arg_i32(c, 3, W)) || (st = clrun_arg_i32(c, 4, H)) || (st = clrun_arg_i32(c, 5, low)) || (st = clrun_arg_i32(c, 6, high)) ||
        (st = clrun_arg_buf(c, 7, scratch)) || (st = clrun_arg_buf(c, 8, dst)) || (st = clrun_arg_u64(c, 9, dst_off)) ||
        (st = clrun_arg_u32(c, 10, (cl_uint)dst_stride)))
        return st;
    /* join and fix: (W, H, scratch), then the edges for the fix (and the CPU join, which reads them) */
    for (int i = 1; i < 3; i++)
        if ((st = clrun_arg_i32(k[i], 0, W)) || (st = clrun_arg_i32(k[i], 1, H)) || (st = clrun_arg_buf(k[i], 2, scratch)) ||
            ((i == 2 || cpu) && ((st = clrun_arg_buf(k[i], 3, dst)) || (st = clrun_arg_u64(k[i], 4, dst_off)) ||
                                 (st = clrun_arg_u32(k[i], 5, (cl_uint)dst_stride)))))
            return st;
    if (cpu) {
        size_t blocks[2] = {(width + cw - 1) / cw, (height + rb - 1) / rb}, one[2] = {1, 1};
        /* join and fix: a work-item per row of blocks */
        if ((st = clrun_launch(c, 2, blocks, one)) || (st = clrun_launch(k[1], 1, &blocks[1], one)) || (st = clrun_launch(k[2], 1, &blocks[1], one)))
            return st;
        return CLRUN_OK;
    }
    size_t tiles[2] = {ntx * tw, nty * (size_t)by}, group[2] = {tw, (size_t)by};
    /* the join: a work-item per pixel on a border between two tiles */
    size_t border = (nty - 1) * width + (ntx - 1) * height, jl = 256, jg = (border + jl - 1) / jl * jl;
    if ((st = clrun_launch(c, 2, tiles, group))) return st;
    if (border && (st = clrun_launch(k[1], 1, &jg, &jl))) return st;
    return clrun_launch(k[2], 2, tiles, group);
}

clrun_status clrun_canny_image(clrun_ctx *ctx, const clrun_image *in, const clrun_canny_params *p, clrun_image *out)
{
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
