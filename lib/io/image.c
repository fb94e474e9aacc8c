/* image.c — 8-bit images: PNG through libpng, JPEG through libjpeg-turbo (read), binary PGM/PPM;
 * 1 (gray) or 3 (RGB) channels. */
#include "../internal.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h> /* before jpeglib.h, which needs FILE */
#include <jpeglib.h>
#include <png.h>
#include <zlib.h> /* Z_BEST_SPEED, Z_RLE */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

clrun_status clrun_image_new(clrun_image *img, size_t width, size_t height, unsigned channels)
{
    if (!img) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_image_new: image is NULL");
    memset(img, 0, sizeof *img);
    if (channels != 1 && channels != 3) return clrun__fail(NULL, CLRUN_INVALID_ARG, "images have 1 or 3 channels, not %u", channels);
    size_t stride, bytes;
    if (__builtin_mul_overflow(width, channels, &stride) || __builtin_mul_overflow(stride, height, &bytes))
        return clrun__fail(NULL, CLRUN_INVALID_ARG, "image of %zu×%zu is too large", width, height);
    img->data = calloc(bytes ? bytes : 1, 1);
    if (!img->data) return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "cannot allocate an image of %zu×%zu×%u", width, height, channels);
    img->width = width, img->height = height, img->stride = stride, img->channels = channels;
    return CLRUN_OK;
}

void clrun_image_free(clrun_image *img)
{
    if (!img) return;
    free(img->data);
    memset(img, 0, sizeof *img);
}

/* Images whose decoded bytes (width × height × channels) pass this are refused before anything is
 * decoded or allocated: 2 GiB, a 46340² gray frame or a 26754² color one. */
#define MAX_BYTES ((size_t)1 << 31)

/* ---- PNG ---------------------------------------------------------------------------------------*/

struct png_err {
    char text[256];
};

static void png_error_fn(png_structp png, png_const_charp msg)
{
    struct png_err *e = png_get_error_ptr(png);
    snprintf(e->text, sizeof e->text, "%s", msg);
    png_longjmp(png, 1);
}

static void png_warning_fn(png_structp png, png_const_charp msg)
{
    (void)png, (void)msg; /* benign (CRC of ancillary chunks, sRGB profiles): OpenCV ignores them too */
}

static clrun_status read_png(const char *path, FILE *f, clrun_image *out)
{
    struct png_err err = {""};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &err, png_error_fn, png_warning_fn);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    unsigned char *volatile data = NULL;
    png_bytep *volatile rows = NULL;
    if (!png || !info) {
        png_destroy_read_struct(png ? &png : NULL, NULL, NULL);
        return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "%s: cannot start libpng", path);
    }
    if (setjmp(png_jmpbuf(png))) {
        free(data);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        return clrun__fail(NULL, CLRUN_FORMAT_ERROR, "%s: not a readable PNG: %s", path, err.text[0] ? err.text : "libpng error");
    }
    png_init_io(png, f);
    png_set_sig_bytes(png, 8); /* clrun_image_read has read the signature */
    png_set_user_limits(png, 1u << 24, 1u << 24);
    png_read_info(png, info);
    png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    int depth = png_get_bit_depth(png, info), type = png_get_color_type(png, info);
    /* to 8-bit gray or RGB, as OpenCV's imread: palette expanded, 1/2/4-bit gray expanded, 16-bit to
     * its high byte, alpha and transparency dropped (a palette's tRNS becomes alpha when expanded) */
    if (type == PNG_COLOR_TYPE_PALETTE) {
        png_set_palette_to_rgb(png);
        if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_strip_alpha(png);
    }
    if (type == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (depth == 16) png_set_strip_16(png);
    if (type & PNG_COLOR_MASK_ALPHA) png_set_strip_alpha(png);
    png_read_update_info(png, info);
    unsigned channels = png_get_channels(png, info);
    if (channels != 1 && channels != 3) png_error(png, "unexpected channel layout");
    size_t stride = (size_t)w * channels;
    if (stride * h > MAX_BYTES) {
        snprintf(err.text, sizeof err.text, "an image of %u×%u×%u decodes to more than the 2 GiB clrun reads", (unsigned)w, (unsigned)h, channels);
        png_longjmp(png, 1);
    }
    if (png_get_rowbytes(png, info) != stride) png_error(png, "unexpected row layout");
    const size_t total = stride * h;
    data = malloc(total ? total : 1);
    rows = malloc(sizeof *rows * (h ? h : 1));
    if (!data || !rows) png_error(png, "out of memory");
    for (png_uint_32 y = 0; y < h; y++) rows[y] = data + (size_t)y * stride;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    *out = (clrun_image){w, h, stride, channels, data};
    return CLRUN_OK;
}

static clrun_status write_png(const char *path, FILE *f, const clrun_image *img)
{
    struct png_err err = {""};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &err, png_error_fn, png_warning_fn);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(png ? &png : NULL, NULL);
        return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "%s: cannot start libpng", path);
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return clrun__fail(NULL, CLRUN_IO_ERROR, "cannot write %s: %s", path, err.text[0] ? err.text : "libpng error");
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)img->width, (png_uint_32)img->height, 8,
                 img->channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    /* cv2.imwrite's defaults: the Sub filter, zlib's fastest level and its run-length strategy,
     * several times faster than libpng's defaults (every filter tried, level 6) */
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
    png_set_compression_level(png, Z_BEST_SPEED);
    png_set_compression_strategy(png, Z_RLE);
    png_write_info(png, info);
    for (size_t y = 0; y < img->height; y++) png_write_row(png, img->data + y * img->stride);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return CLRUN_OK;
}

/* ---- PGM / PPM ---------------------------------------------------------------------------------*/

/* Next header number: skips whitespace and # comments. -1 when there is none. */
static long pnm_number(FILE *f)
{
    int c = fgetc(f);
    for (;;) {
        while (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') c = fgetc(f);
        if (c != '#') break;
        while (c != '\n' && c != EOF) c = fgetc(f);
    }
    if (c < '0' || c > '9') return -1;
    long v = 0;
    for (; c >= '0' && c <= '9'; c = fgetc(f)) {
        v = v * 10 + (c - '0');
        if (v > (1L << 24)) return -1;
    }
    /* exactly one whitespace byte ends the header's last number */
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f') return -1;
    return v;
}

static clrun_status read_pnm(const char *path, FILE *f, int kind, clrun_image *out)
{
    long w = pnm_number(f), h = w >= 0 ? pnm_number(f) : -1, maxval = h >= 0 ? pnm_number(f) : -1;
    if (w <= 0 || h <= 0 || maxval <= 0 || maxval > 65535)
        return clrun__fail(NULL, CLRUN_FORMAT_ERROR, "%s: bad P%c header (width, height and maxval 1..65535 expected)", path, kind);
    unsigned channels = kind == '5' ? 1 : 3;
    if ((size_t)w * (size_t)h * channels > MAX_BYTES)
        return clrun__fail(NULL, CLRUN_FORMAT_ERROR, "%s: an image of %ld×%ld×%u decodes to more than the 2 GiB clrun reads", path, w, h, channels);
    clrun_status st = clrun_image_new(out, (size_t)w, (size_t)h, channels);
    if (st) return st;
    size_t n = out->stride * out->height, bps = maxval > 255 ? 2 : 1;
    unsigned char *raw = bps == 1 ? out->data : malloc(n * 2);
    if (!raw) {
        clrun_image_free(out);
        return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    size_t got = fread(raw, 1, n * bps, f);
    if (got != n * bps) {
        if (raw != out->data) free(raw);
        clrun_image_free(out);
        return clrun__fail(NULL, CLRUN_FORMAT_ERROR, "%s: truncated P%c data (%zu of %zu bytes)", path, kind, got, n * bps);
    }
    if (bps == 2) { /* big-endian samples: keep the high byte of the value scaled to 16 bits */
        for (size_t i = 0; i < n; i++) {
            unsigned v = (unsigned)raw[2 * i] << 8 | raw[2 * i + 1];
            out->data[i] = (unsigned char)((v > (unsigned)maxval ? 65535u : v * 65535u / (unsigned)maxval) >> 8);
        }
        free(raw);
    } else if (maxval != 255) {
        for (size_t i = 0; i < n; i++) {
            unsigned v = out->data[i];
            out->data[i] = (unsigned char)(v >= (unsigned)maxval ? 255 : (v * 255 + (unsigned)maxval / 2) / (unsigned)maxval);
        }
    }
    return CLRUN_OK;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

/* ---- JPEG (read) -------------------------------------------------------------------------------*/

struct jpeg_err {
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
    char text[JMSG_LENGTH_MAX];
};

static void jpeg_error_fn(j_common_ptr c)
{
    struct jpeg_err *e = (struct jpeg_err *)c->err;
    c->err->format_message(c, e->text);
    longjmp(e->jump, 1);
}

static void jpeg_message_fn(j_common_ptr c) { (void)c; /* warnings (corrupt data the decoder repairs): as OpenCV, ignored */ }

/* As cv2.imread decodes it: libjpeg's defaults (the accurate integer IDCT, fancy upsampling), gray
 * as 1 channel, YCbCr and RGB as RGB; CMYK and YCCK refused. */
static clrun_status read_jpeg(const char *path, FILE *f, clrun_image *out)
{
    struct jpeg_decompress_struct c;
    struct jpeg_err err;
    unsigned char *volatile data = NULL;
    memset(&err, 0, sizeof err);
    c.err = jpeg_std_error(&err.mgr);
    err.mgr.error_exit = jpeg_error_fn;
    err.mgr.output_message = jpeg_message_fn;
    if (setjmp(err.jump)) {
        free(data);
        jpeg_destroy_decompress(&c);
        return clrun__fail(NULL, CLRUN_FORMAT_ERROR, "%s: not a readable JPEG: %s", path, err.text);
    }
    jpeg_create_decompress(&c);
    jpeg_stdio_src(&c, f);
    jpeg_read_header(&c, TRUE);
    if (c.jpeg_color_space == JCS_CMYK || c.jpeg_color_space == JCS_YCCK) {
        jpeg_destroy_decompress(&c);
        return clrun__fail(NULL, CLRUN_FORMAT_ERROR, "%s: a CMYK JPEG; clrun reads gray, YCbCr and RGB ones (convert it to RGB first)", path);
    }
    const unsigned channels = c.jpeg_color_space == JCS_GRAYSCALE ? 1 : 3;
    c.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    const size_t w = c.image_width, h = c.image_height;
    if (w && h && (w * h > MAX_BYTES / channels)) {
        jpeg_destroy_decompress(&c);
        return clrun__fail(NULL, CLRUN_FORMAT_ERROR, "%s: %zu×%zu×%u bytes decoded is over the 2 GiB clrun reads", path, w, h, channels);
    }
    jpeg_start_decompress(&c);
    if ((unsigned)c.output_components != channels || !w || !h) {
        snprintf(err.text, sizeof err.text, "%d components of %zu×%zu pixels", c.output_components, w, h);
        longjmp(err.jump, 1);
    }
    if (!(data = malloc(w * h * channels))) {
        jpeg_destroy_decompress(&c);
        return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "%s: cannot allocate %zu×%zu×%u bytes", path, w, h, channels);
    }
    while (c.output_scanline < c.output_height) {
        JSAMPROW row = data + (size_t)c.output_scanline * w * channels;
        jpeg_read_scanlines(&c, &row, 1);
    }
    jpeg_finish_decompress(&c);
    jpeg_destroy_decompress(&c);
    *out = (clrun_image){w, h, w * channels, channels, data};
    return CLRUN_OK;
}

clrun_status clrun_image_read(const char *path, clrun_image *out)
{
    if (!path || !out) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_image_read: NULL argument");
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) return clrun__fail(NULL, errno == ENOENT ? CLRUN_NOT_FOUND : CLRUN_IO_ERROR, "cannot open %s: %s", path, strerror(errno));
    unsigned char sig[8] = {0};
    size_t n = fread(sig, 1, sizeof sig, f);
    clrun_status st;
    if (n == 8 && png_sig_cmp(sig, 0, 8) == 0) {
        st = read_png(path, f, out);
    } else if (n >= 3 && sig[0] == 0xFF && sig[1] == 0xD8 && sig[2] == 0xFF) {
        fseek(f, 0, SEEK_SET);
        st = read_jpeg(path, f, out);
    } else if (n >= 2 && sig[0] == 'P' && (sig[1] == '5' || sig[1] == '6')) {
        fseek(f, 2, SEEK_SET);
        st = read_pnm(path, f, sig[1], out);
    } else {
        st = clrun__fail(NULL, CLRUN_FORMAT_ERROR, "%s: not a PNG, JPEG or binary PGM/PPM (P5/P6) file", path);
    }
    fclose(f);
    return st;
}

struct image_out {
    const char *path;
    const clrun_image *img;
};

static int write_image(FILE *f, void *arg)
{
    const struct image_out *o = arg;
    const clrun_image *img = o->img;
    if (!(ends_with(o->path, ".pgm") || ends_with(o->path, ".ppm") || ends_with(o->path, ".pnm")))
        return write_png(o->path, f, img) == CLRUN_OK ? 0 : -2;
    int ok = fprintf(f, "P%c\n%zu %zu\n255\n", img->channels == 1 ? '5' : '6', img->width, img->height) > 0;
    for (size_t y = 0; ok && y < img->height; y++)
        ok = fwrite(img->data + y * img->stride, 1, img->width * img->channels, f) == img->width * img->channels;
    return ok ? 0 : -1;
}

clrun_status clrun_image_write(const char *path, const clrun_image *img)
{
    int err;
    if (!path || !img || !img->data || (img->channels != 1 && img->channels != 3) || img->stride < img->width * img->channels ||
        img->width > UINT32_MAX || img->height > UINT32_MAX || !img->width || !img->height)
        return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_image_write: bad arguments (1 or 3 channels, width and height ≥ 1)");
    struct image_out o = {path, img};
    if (clrun__save(path, write_image, &o, &err) != 0)
        return err == -1 ? CLRUN_IO_ERROR : clrun__fail(NULL, CLRUN_IO_ERROR, "cannot write %s: %s", path, strerror(err));
    return CLRUN_OK;
}
