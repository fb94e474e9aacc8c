/* npy.c — NumPy .npy files (format versions 1.0, 2.0, 3.0) and the clrun_array they load into. */
#include "../internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
    const char *name, *cl, *npy; /* short name, OpenCL C type, NumPy kind+size */
    size_t size;
} dtypes[CLRUN_DTYPE_COUNT] = {
    [CLRUN_F16] = {"f16", "half", "f2", 2},     [CLRUN_F32] = {"f32", "float", "f4", 4},
    [CLRUN_BF16] = {"bf16", "ushort", NULL, 2}, /* stored as ushort; no NumPy dtype */
    [CLRUN_F64] = {"f64", "double", "f8", 8},   [CLRUN_I8] = {"i8", "char", "i1", 1},
    [CLRUN_I16] = {"i16", "short", "i2", 2},    [CLRUN_I32] = {"i32", "int", "i4", 4},
    [CLRUN_I64] = {"i64", "long", "i8", 8},     [CLRUN_U8] = {"u8", "uchar", "u1", 1},
    [CLRUN_U16] = {"u16", "ushort", "u2", 2},   [CLRUN_U32] = {"u32", "uint", "u4", 4},
    [CLRUN_U64] = {"u64", "ulong", "u8", 8},    [CLRUN_BOOL] = {"bool", "bool", "b1", 1},
    [CLRUN_C64] = {"c64", "float2", "c8", 8},   [CLRUN_C128] = {"c128", "double2", "c16", 16},
};

size_t clrun_dtype_size(clrun_dtype t) { return (unsigned)t < CLRUN_DTYPE_COUNT ? dtypes[t].size : 0; }
const char *clrun_dtype_name(clrun_dtype t) { return (unsigned)t < CLRUN_DTYPE_COUNT ? dtypes[t].name : "?"; }
const char *clrun_dtype_cl_name(clrun_dtype t) { return (unsigned)t < CLRUN_DTYPE_COUNT ? dtypes[t].cl : "?"; }

clrun_status clrun_dtype_parse(const char *name, clrun_dtype *out)
{
    static const struct {
        const char *alias;
        clrun_dtype t;
    } aliases[] = {{"bfloat16", CLRUN_BF16}, {"float16", CLRUN_F16},   {"float32", CLRUN_F32},    {"float64", CLRUN_F64},
                   {"int8", CLRUN_I8},       {"int16", CLRUN_I16},     {"int32", CLRUN_I32},      {"int64", CLRUN_I64},
                   {"uint8", CLRUN_U8},      {"uint16", CLRUN_U16},    {"uint32", CLRUN_U32},     {"uint64", CLRUN_U64},
                   {"bool_", CLRUN_BOOL},    {"complex64", CLRUN_C64}, {"complex128", CLRUN_C128}};
    if (!name || !out) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_dtype_parse: NULL argument");
    for (int t = 0; t < CLRUN_DTYPE_COUNT; t++)
        if (strcmp(name, dtypes[t].name) == 0 || (t != CLRUN_BF16 && t != CLRUN_C64 && t != CLRUN_C128 && strcmp(name, dtypes[t].cl) == 0))
            return *out = (clrun_dtype)t, CLRUN_OK;
    for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
        if (strcmp(name, aliases[i].alias) == 0) return *out = aliases[i].t, CLRUN_OK;
    return clrun__fail(NULL, CLRUN_INVALID_ARG,
                       "unknown type '%s' (types: f16 bf16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool c64 c128, or the NumPy "
                       "and OpenCL names of these)",
                       name);
}

clrun_status clrun_array_new(clrun_array *a, clrun_dtype t, unsigned ndim, const size_t *shape)
{
    if (!a || (unsigned)t >= CLRUN_DTYPE_COUNT || ndim > CLRUN_MAX_DIMS || (ndim && !shape))
        return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_array_new: bad type or shape");
    memset(a, 0, sizeof *a);
    size_t count = 1, esize = dtypes[t].size;
    for (unsigned i = 0; i < ndim; i++) {
        if (shape[i] && count > SIZE_MAX / shape[i]) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_array_new: the shape overflows");
        count *= shape[i];
        a->shape[i] = shape[i];
    }
    if (count > SIZE_MAX / esize) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_array_new: the shape overflows");
    a->data = calloc(count ? count * esize : 1, 1);
    if (!a->data) return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "out of memory for an array of %zu bytes", count * esize);
    a->dtype = t;
    a->ndim = ndim;
    a->count = count;
    a->bytes = count * esize;
    return CLRUN_OK;
}

void clrun_array_free(clrun_array *a)
{
    if (!a) return;
    if (a->map_base) munmap(a->map_base, a->map_len);
    else free(a->data);
    memset(a, 0, sizeof *a);
}

/* ---- header dictionary parser ---------------------------------------------------------------- */

struct hp {
    const char *p, *end;
};

static void skip_ws(struct hp *h)
{
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r')) h->p++;
}

static int take(struct hp *h, char c)
{
    skip_ws(h);
    if (h->p < h->end && *h->p == c) return h->p++, 1;
    return 0;
}

/* A quoted Python string into out (no escapes are needed by .npy headers). */
static int read_str(struct hp *h, char *out, size_t size)
{
    skip_ws(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) return 0;
    char q = *h->p++;
    size_t n = 0;
    while (h->p < h->end && *h->p != q) {
        if (n + 1 >= size) return 0;
        out[n++] = *h->p++;
    }
    if (h->p >= h->end) return 0;
    h->p++;
    out[n] = 0;
    return 1;
}

#define FMT(...) clrun__fail(NULL, CLRUN_FORMAT_ERROR, __VA_ARGS__)

static clrun_status parse_header(const char *text, size_t len, clrun_dtype *dtype, unsigned *ndim, size_t *shape)
{
    struct hp h = {text, text + len};
    int have_descr = 0, have_order = 0, have_shape = 0, fortran = 0;
    if (!take(&h, '{')) return FMT("header is not a Python dictionary");
    for (;;) {
        if (take(&h, '}')) break;
        char key[32], val[64];
        if (!read_str(&h, key, sizeof key)) return FMT("header: expected a quoted key");
        if (!take(&h, ':')) return FMT("header: expected ':' after '%s'", key);
        if (strcmp(key, "descr") == 0) {
            if (have_descr++) return FMT("header: 'descr' given twice");
            skip_ws(&h);
            if (h.p < h.end && *h.p == '[') return FMT("unsupported dtype: structured arrays are not supported");
            if (!read_str(&h, val, sizeof val)) return FMT("header: 'descr' is not a string");
            size_t vl = strlen(val);
            int found = 0;
            for (int t = 0; t < CLRUN_DTYPE_COUNT && !found; t++) {
                if (vl < 3 || !dtypes[t].npy || strcmp(val + 1, dtypes[t].npy) != 0) continue;
                if (val[0] == '>' && dtypes[t].size > 1)
                    return FMT("big-endian data ('%s') is not supported; convert with arr.astype(arr.dtype.newbyteorder('<'))", val);
                if (val[0] != '<' && val[0] != '|' && val[0] != '=' && val[0] != '>') return FMT("unsupported dtype '%s'", val);
                *dtype = (clrun_dtype)t;
                found = 1;
            }
            if (!found) return FMT("unsupported dtype '%s' (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1 c8 c16, little-endian)", val);
        } else if (strcmp(key, "fortran_order") == 0) {
            if (have_order++) return FMT("header: 'fortran_order' given twice");
            skip_ws(&h);
            if ((size_t)(h.end - h.p) >= 4 && strncmp(h.p, "True", 4) == 0) fortran = 1, h.p += 4;
            else if ((size_t)(h.end - h.p) >= 5 && strncmp(h.p, "False", 5) == 0) h.p += 5;
            else return FMT("header: 'fortran_order' is neither True nor False");
        } else if (strcmp(key, "shape") == 0) {
            if (have_shape++) return FMT("header: 'shape' given twice");
            if (!take(&h, '(')) return FMT("header: 'shape' is not a tuple");
            *ndim = 0;
            for (;;) {
                if (take(&h, ')')) break;
                skip_ws(&h);
                if (h.p < h.end && *h.p == '-') return FMT("shape has a negative dimension");
                if (h.p >= h.end || !isdigit((unsigned char)*h.p)) return FMT("header: 'shape' holds something other than integers");
                if (*ndim >= CLRUN_MAX_DIMS) return FMT("shape has more than %d dimensions", CLRUN_MAX_DIMS);
                size_t v = 0;
                while (h.p < h.end && isdigit((unsigned char)*h.p)) {
                    unsigned d = (unsigned)(*h.p++ - '0');
                    if (v > (SIZE_MAX - d) / 10) return FMT("shape dimension is too large");
                    v = v * 10 + d;
                }
                if (h.p < h.end && (*h.p == 'L' || *h.p == 'l')) h.p++; /* Python 2 longs */
                shape[(*ndim)++] = v;
                if (take(&h, ',')) continue;
                if (take(&h, ')')) break;
                return FMT("header: 'shape' tuple is malformed");
            }
        } else {
            return FMT("header: unknown key '%s'", key);
        }
        if (take(&h, ',')) continue;
        if (take(&h, '}')) break;
        return FMT("header: expected ',' or '}' after '%s'", key);
    }
    skip_ws(&h);
    if (h.p != h.end) return FMT("header: text after the dictionary");
    if (!have_descr || !have_order || !have_shape)
        return FMT("header lacks '%s'", !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
    if (fortran && *ndim > 1) return FMT("Fortran-ordered arrays are not supported; save with np.ascontiguousarray(arr)");
    return CLRUN_OK;
}

clrun_status clrun_npy_parse(const void *buf, size_t len, clrun_array *out)
{
    if (!buf || !out) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_npy_parse: NULL argument");
    const unsigned char *b = buf;
    clrun_dtype dtype = CLRUN_F32;
    unsigned ndim = 0;
    size_t shape[CLRUN_MAX_DIMS] = {0};
    clrun_status st;
    if (!out) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_npy_parse: out is NULL");
    memset(out, 0, sizeof *out);
    if (!buf || len < 10 || memcmp(b, "\x93NUMPY", 6) != 0) return FMT("not an .npy file (the magic string \\x93NUMPY is missing)");
    unsigned major = b[6];
    size_t start, hlen;
    if (major == 1) start = 10, hlen = (size_t)b[8] | (size_t)b[9] << 8;
    else if (major == 2 || major == 3) {
        if (len < 12) return FMT("truncated .npy header");
        start = 12, hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
    } else return FMT("unsupported .npy format version %u.%u", major, b[7]);
    if (hlen > len - start) return FMT("header length %zu runs past the end of the file (%zu bytes)", hlen, len);
    if (hlen == 0 || b[start + hlen - 1] != '\n') return FMT("header does not end with a newline (bad header length %zu?)", hlen);
    if ((st = parse_header((const char *)b + start, hlen, &dtype, &ndim, shape)) != CLRUN_OK) return st;
    size_t count = 1, esize = dtypes[dtype].size;
    for (unsigned i = 0; i < ndim; i++) {
        if (shape[i] && count > SIZE_MAX / shape[i]) return FMT("shape is too large (the element count overflows)");
        count *= shape[i];
    }
    if (count > SIZE_MAX / esize) return FMT("shape is too large (the byte count overflows)");
    size_t have = len - start - hlen;
    if (have < count * esize) return FMT("data is truncated: the shape needs %zu bytes, the file has %zu", count * esize, have);
    if (have > count * esize) return FMT("%zu bytes after the data that the shape describes", have - count * esize);
    if ((st = clrun_array_new(out, dtype, ndim, shape)) != CLRUN_OK) return st;
    memcpy(out->data, b + start + hlen, out->bytes);
    return CLRUN_OK;
}

/* The longest .npy header clrun reads: NumPy writes a few hundred bytes. */
#define NPY_HEADER_MAX ((size_t)1 << 20)

/* Large data of a regular file that ends where the data does, aligned for its type: mapped
 * privately instead of read (clrun_npy_read). Returns 1 when *out holds the mapping; 0 to read. */
#define NPY_MAP_MIN ((size_t)1 << 20)
static int map_npy(FILE *f, clrun_dtype dtype, unsigned ndim, const size_t *shape, size_t bytes, clrun_array *out)
{
    struct stat sb;
    const long off = ftell(f);
    const int fd = fileno(f);
    if (bytes < NPY_MAP_MIN || off <= 0 || fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
        (uint64_t)sb.st_size != (uint64_t)off + bytes || (size_t)off % dtypes[dtype].size)
        return 0;
    void *base = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (base == MAP_FAILED) return 0;
    memset(out, 0, sizeof *out);
    out->dtype = dtype, out->ndim = ndim, out->count = bytes / dtypes[dtype].size, out->bytes = bytes;
    memcpy(out->shape, shape, ndim * sizeof *shape);
    out->data = (char *)base + off, out->map_base = base, out->map_len = (size_t)sb.st_size;
    return 1;
}

/* Read the file as far as its header says and no further: the preamble, a header of at most
 * NPY_HEADER_MAX bytes, then exactly the data its shape needs (a FIFO or /dev/zero cannot make it
 * read more), and one byte more to find trailing data. */
static clrun_status read_npy(FILE *f, clrun_array *out)
{
    unsigned char pre[12];
    unsigned char *head = NULL;
    clrun_status st;
    size_t got = fread(pre, 1, 10, f), start = 10, hlen;
    if (got < 10 || memcmp(pre, "\x93NUMPY", 6) != 0) return FMT("not an .npy file (the magic string \\x93NUMPY is missing)");
    if (pre[6] == 2 || pre[6] == 3) {
        if (fread(pre + 10, 1, 2, f) != 2) return FMT("truncated .npy header");
        start = 12, hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    } else if (pre[6] == 1) {
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    } else {
        return FMT("unsupported .npy format version %u.%u", pre[6], pre[7]);
    }
    if (hlen > NPY_HEADER_MAX) return FMT("header of %zu bytes; clrun reads headers of up to 1 MiB", hlen);
    if (!(head = malloc(start + hlen))) return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "out of memory for an .npy header");
    memcpy(head, pre, start);
    if (fread(head + start, 1, hlen, f) != hlen) {
        free(head);
        return FMT("header length %zu runs past the end of the file", hlen);
    }
    /* the header, with clrun_npy_parse's checks; then the data its shape needs */
    clrun_dtype dtype = CLRUN_F32;
    unsigned ndim = 0;
    size_t shape[CLRUN_MAX_DIMS] = {0};
    if (hlen == 0 || head[start + hlen - 1] != '\n') st = FMT("header does not end with a newline (bad header length %zu?)", hlen);
    else st = parse_header((const char *)head + start, hlen, &dtype, &ndim, shape);
    free(head);
    if (st) return st;
    size_t count = 1, esize = dtypes[dtype].size;
    for (unsigned i = 0; i < ndim; i++) {
        if (shape[i] && count > SIZE_MAX / shape[i]) return FMT("shape is too large (the element count overflows)");
        count *= shape[i];
    }
    if (count > SIZE_MAX / esize) return FMT("shape is too large (the byte count overflows)");
    if (map_npy(f, dtype, ndim, shape, count * esize, out)) return CLRUN_OK;
    if ((st = clrun_array_new(out, dtype, ndim, shape)) != CLRUN_OK) return st;
    got = out->bytes ? fread(out->data, 1, out->bytes, f) : 0;
    if (got < out->bytes) st = FMT("data is truncated: the shape needs %zu bytes, the file has %zu", out->bytes, got);
    else if (fgetc(f) != EOF) st = FMT("bytes after the data that the shape describes");
    if (st) clrun_array_free(out);
    return st;
}

clrun_status clrun_npy_read(const char *path, clrun_array *out)
{
    if (!path || !out) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_npy_read: NULL argument");
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) return clrun__fail(NULL, CLRUN_IO_ERROR, "cannot read %s: %s", path, strerror(errno));
    struct stat fsb;
    if (fstat(fileno(f), &fsb) == 0 && S_ISDIR(fsb.st_mode)) {
        fclose(f);
        return clrun__fail(NULL, CLRUN_FORMAT_ERROR, "%s is a folder, not a file (give the files in it)", path);
    }
    clrun_status st = read_npy(f, out);
    if (st == CLRUN_OK && ferror(f)) {
        clrun_array_free(out);
        st = clrun__fail(NULL, CLRUN_IO_ERROR, "cannot read %s: %s", path, strerror(errno ? errno : EIO));
    }
    fclose(f);
    if (st != CLRUN_OK && st != CLRUN_IO_ERROR) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", clrun_last_error(NULL));
        clrun__fail(NULL, st, "%s: %s", path, msg);
    }
    return st;
}

struct npy_out {
    const unsigned char *head;
    const char *dict;
    size_t n, pad;
    const clrun_array *a;
};

static int write_npy(FILE *f, void *arg)
{
    const struct npy_out *o = arg;
    int ok = fwrite(o->head, 1, 10, f) == 10 && fwrite(o->dict, 1, o->n, f) == o->n;
    for (size_t i = 0; i < o->pad && ok; i++) ok = fputc(' ', f) != EOF;
    ok = ok && fputc('\n', f) != EOF && (o->a->bytes == 0 || fwrite(o->a->data, 1, o->a->bytes, f) == o->a->bytes);
    return ok ? 0 : -1;
}

clrun_status clrun_npy_write(const char *path, const clrun_array *a)
{
    char dict[512];
    int n, err;
    if (!path || !a || (unsigned)a->dtype >= CLRUN_DTYPE_COUNT || a->ndim > CLRUN_MAX_DIMS || (a->bytes && !a->data))
        return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_npy_write: bad arguments");
    n = snprintf(dict, sizeof dict, "{'descr': '%c%s', 'fortran_order': False, 'shape': (", dtypes[a->dtype].size == 1 ? '|' : '<',
                 dtypes[a->dtype].npy ? dtypes[a->dtype].npy : "u2"); /* bf16 as uint16 */
    for (unsigned i = 0; i < a->ndim; i++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%zu%s", a->shape[i], a->ndim == 1 ? "," : i + 1 < a->ndim ? ", " : "");
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    size_t total = 10 + (size_t)n + 1, pad = (64 - total % 64) % 64;
    size_t hlen = (size_t)n + pad + 1;
    unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xFF), (unsigned char)(hlen >> 8)};
    struct npy_out o = {head, dict, (size_t)n, pad, a};
    if (clrun__save(path, write_npy, &o, &err) != 0) return clrun__fail(NULL, CLRUN_IO_ERROR, "cannot write %s: %s", path, strerror(err));
    return CLRUN_OK;
}
