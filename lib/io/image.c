/* image.c — 8-bit images, 1 (gray) or 3 (RGB) channels: PNG through libpng, JPEG through libjpeg-turbo (read), binary PGM/PPM. */
#include "../internal.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h> /* before jpeglib.h, which needs FILE */
#include <jpeglib.h>
#include <libexif/exif-data.h>
#include <png.h>
#include <zlib.h> /* Z_BEST_SPEED, Z_RLE */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Images over 2^30 pixels (cv2.imread's limit, CV_IO_MAX_IMAGE_PIXELS) or whose decoded bytes
 * (width × height × channels) pass 2 GiB are refused from their header, before anything is decoded
 * or allocated. */
#define MAX_PIXELS ((size_t)1 << 30)
#define MAX_BYTES ((size_t)1 << 31)

/* The header's size against the limits: NULL when it may be decoded, else why not (static text). */
static const char *too_large(size_t w, size_t h, unsigned channels, char *why, size_t size)
{
    if (w && h && w > MAX_PIXELS / h) {
        snprintf(why, size, "an image of %zu×%zu is over the 2^30 pixels clrun (like cv2.imread) reads", w, h);
        return why;
    }
    if (w * h > MAX_BYTES / channels) {
        snprintf(why, size, "an image of %zu×%zu×%u decodes to more than the 2 GiB clrun reads", w, h, channels);
        return why;
    }
    return NULL;
}

/* ---- EXIF orientation ---------------------------------------------------------------------------*/

/* The orientation (1-8) an Exif block (TIFF data after "Exif\0\0") records, through libexif; 1
 * when it records none or cannot be parsed (as OpenCV: a bad block is no orientation). */
static int exif_orientation(const unsigned char *data, size_t len)
{
    int o = 1;
    if (!data || len < 8 || len > 0xffffff) return 1;
    ExifData *ed = exif_data_new();
    if (!ed) return 1;
    exif_data_unset_option(ed, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION); /* no defaults filled in */
    exif_data_load_data(ed, data, (unsigned)len);
    ExifEntry *e = exif_data_get_entry(ed, EXIF_TAG_ORIENTATION);
    if (e && e->format == EXIF_FORMAT_SHORT && e->components >= 1 && e->data && e->size >= 2) {
        const int v = exif_get_short(e->data, exif_data_get_byte_order(ed));
        if (v >= 1 && v <= 8) o = v;
    }
    exif_data_unref(ed);
    return o;
}

/* Apply an EXIF orientation to a decoded image as cv2.imread does (ApplyExifOrientation): 2 flips
 * left-right, 3 turns 180°, 4 flips top-bottom, 5 transposes, 6 turns 90° clockwise, 7 transposes
 * across the other diagonal, 8 turns 90° counter-clockwise. Returns 0, or -1 out of memory. */
static int orient(clrun_image *img, int o)
{
    if (o <= 1 || o > 8) return 0;
    const size_t W = img->width, H = img->height, c = img->channels;
    const int swap = o >= 5;
    const size_t ow = swap ? H : W, oh = swap ? W : H;
    unsigned char *out = malloc(ow * oh * c + 1);
    if (!out) return -1;
    for (size_t y = 0; y < oh; y++)
        for (size_t x = 0; x < ow; x++) {
            size_t sx, sy; /* the source pixel: column sx, row sy */
            switch (o) {
            case 2: sx = W - 1 - x, sy = y; break;
            case 3: sx = W - 1 - x, sy = H - 1 - y; break;
            case 4: sx = x, sy = H - 1 - y; break;
            case 5: sx = y, sy = x; break;
            case 6: sx = y, sy = H - 1 - x; break;
            case 7: sx = W - 1 - y, sy = H - 1 - x; break;
            default: sx = W - 1 - y, sy = x; break; /* 8 */
            }
            memcpy(out + (y * ow + x) * c, img->data + sy * img->stride + sx * c, c);
        }
    free(img->data);
    *img = (clrun_image){ow, oh, ow * c, (unsigned)c, out};
    return 0;
}

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

static clrun_status read_png(const char *path, FILE *f, clrun_image *out, int header_only)
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
    if (too_large(w, h, channels, err.text, sizeof err.text)) png_longjmp(png, 1);
    int orientation = 1;
#ifdef PNG_eXIf_SUPPORTED
    png_bytep exif = NULL;
    png_uint_32 exif_len = 0;
    if (png_get_eXIf_1(png, info, &exif_len, &exif) && exif && exif_len) { /* TIFF data; libexif wants the JPEG block's "Exif\0\0" first */
        unsigned char *block = malloc((size_t)exif_len + 6);
        if (block) {
            memcpy(block, "Exif\0\0", 6), memcpy(block + 6, exif, exif_len);
            orientation = exif_orientation(block, (size_t)exif_len + 6);
            free(block);
        }
    }
#endif
    if (header_only) {
        const int swap = orientation >= 5;
        png_destroy_read_struct(&png, &info, NULL);
        *out = (clrun_image){swap ? h : w, swap ? w : h, (size_t)(swap ? h : w) * channels, channels, NULL};
        return CLRUN_OK;
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
    if (orient(out, orientation)) {
        clrun_image_free(out);
        return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "%s: out of memory turning the image to its EXIF orientation", path);
    }
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

static clrun_status read_pnm(const char *path, FILE *f, int kind, clrun_image *out, int header_only)
{
    long w = pnm_number(f), h = w >= 0 ? pnm_number(f) : -1, maxval = h >= 0 ? pnm_number(f) : -1;
    if (w <= 0 || h <= 0 || maxval <= 0 || maxval > 65535)
        return clrun__fail(NULL, CLRUN_FORMAT_ERROR, "%s: bad P%c header (width, height and maxval 1..65535 expected)", path, kind);
    unsigned channels = kind == '5' ? 1 : 3;
    char why[160];
    if (too_large((size_t)w, (size_t)h, channels, why, sizeof why)) return clrun__fail(NULL, CLRUN_FORMAT_ERROR, "%s: %s", path, why);
    if (header_only) {
        *out = (clrun_image){(size_t)w, (size_t)h, (size_t)w * channels, channels, NULL};
        return CLRUN_OK;
    }
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
    int strict; /* set once the header is read: a warning is then an error */
    char text[JMSG_LENGTH_MAX + 32];
};

static void jpeg_error_fn(j_common_ptr c)
{
    struct jpeg_err *e = (struct jpeg_err *)c->err;
    c->err->format_message(c, e->text);
    longjmp(e->jump, 1);
}

/* libjpeg's warnings are corrupt or missing data it would paper over (a truncated file's missing
 * rows filled in, a damaged scan resynchronised): once the header is read, each is an error that
 * names the file, and decoding stops there (a file whose header claims far more than its bytes
 * hold stops at once). Trace messages (level > 0) and header warnings are ignored, as OpenCV does. */
static void jpeg_emit_fn(j_common_ptr c, int level)
{
    struct jpeg_err *e = (struct jpeg_err *)c->err;
    if (level >= 0 || !e->strict) return;
    char msg[JMSG_LENGTH_MAX];
    c->err->format_message(c, msg);
    snprintf(e->text, sizeof e->text, "damaged or truncated: %s", msg);
    longjmp(e->jump, 1);
}

/* As cv2.imread decodes it: libjpeg's defaults (the accurate integer IDCT, fancy upsampling), gray
 * as 1 channel, YCbCr and RGB as RGB; CMYK and YCCK refused; the EXIF orientation applied. */
static clrun_status read_jpeg(const char *path, FILE *f, clrun_image *out, int header_only)
{
    struct jpeg_decompress_struct c;
    struct jpeg_err err;
    unsigned char *volatile data = NULL;
    memset(&err, 0, sizeof err);
    c.err = jpeg_std_error(&err.mgr);
    err.mgr.error_exit = jpeg_error_fn;
    err.mgr.emit_message = jpeg_emit_fn;
    if (setjmp(err.jump)) {
        free(data);
        jpeg_destroy_decompress(&c);
        return clrun__fail(NULL, CLRUN_FORMAT_ERROR, "%s: not a readable JPEG: %s", path, err.text);
    }
    jpeg_create_decompress(&c);
    jpeg_stdio_src(&c, f);
    jpeg_save_markers(&c, JPEG_APP0 + 1, 0xffff); /* Exif */
    jpeg_read_header(&c, TRUE);
    if (c.jpeg_color_space == JCS_CMYK || c.jpeg_color_space == JCS_YCCK) {
        jpeg_destroy_decompress(&c);
        return clrun__fail(NULL, CLRUN_FORMAT_ERROR, "%s: a CMYK JPEG; clrun reads gray, YCbCr and RGB ones (convert it to RGB first)",
                           path);
    }
    const unsigned channels = c.jpeg_color_space == JCS_GRAYSCALE ? 1 : 3;
    c.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    const size_t w = c.image_width, h = c.image_height;
    char why[160];
    if (too_large(w, h, channels, why, sizeof why)) {
        jpeg_destroy_decompress(&c);
        return clrun__fail(NULL, CLRUN_FORMAT_ERROR, "%s: %s", path, why);
    }
    int orientation = 1;
    for (jpeg_saved_marker_ptr m = c.marker_list; m; m = m->next)
        if (m->marker == JPEG_APP0 + 1 && m->data_length > 6 && !memcmp(m->data, "Exif\0\0", 6)) {
            orientation = exif_orientation(m->data, m->data_length);
            break;
        }
    if (header_only) {
        const int swap = orientation >= 5;
        jpeg_destroy_decompress(&c);
        *out = (clrun_image){swap ? h : w, swap ? w : h, (swap ? h : w) * channels, channels, NULL};
        return CLRUN_OK;
    }
    err.strict = 1;
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
    if (orient(out, orientation)) {
        clrun_image_free(out);
        return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "%s: out of memory turning the image to its EXIF orientation", path);
    }
    return CLRUN_OK;
}

/* Read an image, or with header_only its shape alone (data NULL). */
static clrun_status image_read(const char *path, clrun_image *out, int header_only)
{
    if (!path || !out) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_image_read: NULL argument");
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) return clrun__fail(NULL, errno == ENOENT ? CLRUN_NOT_FOUND : CLRUN_IO_ERROR, "cannot open %s: %s", path, strerror(errno));
    struct stat fsb;
    if (fstat(fileno(f), &fsb) == 0 && S_ISDIR(fsb.st_mode)) {
        fclose(f);
        return clrun__fail(NULL, CLRUN_FORMAT_ERROR, "%s is a folder, not a file (give the files in it)", path);
    }
    unsigned char sig[8] = {0};
    size_t n = fread(sig, 1, sizeof sig, f);
    clrun_status st;
    if (n == 8 && png_sig_cmp(sig, 0, 8) == 0) {
        st = read_png(path, f, out, header_only);
    } else if (n >= 3 && sig[0] == 0xFF && sig[1] == 0xD8 && sig[2] == 0xFF) {
        fseek(f, 0, SEEK_SET);
        st = read_jpeg(path, f, out, header_only);
    } else if (n >= 2 && sig[0] == 'P' && (sig[1] == '5' || sig[1] == '6')) {
        fseek(f, 2, SEEK_SET);
        st = read_pnm(path, f, sig[1], out, header_only);
    } else {
        st = clrun__fail(NULL, CLRUN_FORMAT_ERROR, "%s: not a PNG, JPEG or binary PGM/PPM (P5/P6) file", path);
    }
    fclose(f);
    return st;
}

clrun_status clrun_image_read(const char *path, clrun_image *out) { return image_read(path, out, 0); }

clrun_status clrun_image_info(const char *path, clrun_image *shape) { return image_read(path, shape, 1); }

/* ---- JPEG (write) ------------------------------------------------------------------------------*/

/* As cv2.imwrite writes a JPEG by default: libjpeg's defaults at quality 95 (4:2:0 for color). */
static clrun_status write_jpeg(const char *path, FILE *f, const clrun_image *img)
{
    struct jpeg_compress_struct c;
    struct jpeg_err err;
    memset(&err, 0, sizeof err);
    c.err = jpeg_std_error(&err.mgr);
    err.mgr.error_exit = jpeg_error_fn;
    if (setjmp(err.jump)) {
        jpeg_destroy_compress(&c);
        return clrun__fail(NULL, CLRUN_IO_ERROR, "cannot write %s: %s", path, err.text);
    }
    jpeg_create_compress(&c);
    jpeg_stdio_dest(&c, f);
    c.image_width = (JDIMENSION)img->width, c.image_height = (JDIMENSION)img->height;
    c.input_components = (int)img->channels;
    c.in_color_space = img->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 95, TRUE);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = img->data + (size_t)c.next_scanline * img->stride;
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    return CLRUN_OK;
}

struct image_out {
    const char *path;
    const clrun_image *img;
};

static int write_image(FILE *f, void *arg)
{
    const struct image_out *o = arg;
    const clrun_image *img = o->img;
    if (ends_with(o->path, ".jpg") || ends_with(o->path, ".jpeg") || ends_with(o->path, ".jpe"))
        return write_jpeg(o->path, f, img) == CLRUN_OK ? 0 : ferror(f) ? -1 : -2;
    /* a failed write (ENOSPC) is reported by its errno, not libpng's "Write Error" */
    if (!(ends_with(o->path, ".pgm") || ends_with(o->path, ".ppm") || ends_with(o->path, ".pnm")))
        return write_png(o->path, f, img) == CLRUN_OK ? 0 : ferror(f) ? -1 : -2;
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
    static const char *const others[] = {".bmp", ".dib", ".tif", ".tiff", ".webp", ".gif", ".jp2", ".exr",
                                         ".hdr", ".pic", ".ras", ".sr",   ".pbm",  ".pfm", ".avif"};
    for (size_t i = 0; i < sizeof others / sizeof *others; i++)
        if (ends_with(path, others[i]))
            return clrun__fail(NULL, CLRUN_INVALID_ARG,
                               "cannot write %s: clrun writes PNG, JPEG (.jpg, .jpeg) and PGM/PPM (.pgm, .ppm, .pnm), not %s", path,
                               others[i] + 1);
    struct image_out o = {path, img};
    if (clrun__save(path, write_image, &o, &err) != 0)
        return err == -1 ? CLRUN_IO_ERROR : clrun__fail(NULL, CLRUN_IO_ERROR, "cannot write %s: %s", path, strerror(err));
    return CLRUN_OK;
}
