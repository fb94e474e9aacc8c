/* run.c — `clrun run`: run any kernel with arguments from files, generated data or scalars, or an
 * Oclgrind .sim file; time it; save outputs to .npy; check them against expected files. */
#include "cli.h"
#include "sim.h"
#include "values.h"

#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CHECKS 16

/* R_BYTES: a by-value vector or struct, its elements in `a`, passed as bytes. */
enum rkind { R_BUF, R_SCALAR, R_BYTES, R_LOCAL, R_NULL, R_BARE };

struct rarg {
    enum rkind kind;
    clrun_array a;    /* buffer contents, the scalar (count 1) or a by-value aggregate's elements */
    const char *bare; /* untyped scalar text, typed from the kernel's signature */
    size_t local;     /* __local bytes */
    const char *save; /* .npy path written after the run */
    int like;         /* out:like=N: index of the model argument, else -1 */
    int like_type_set;
    clrun_dtype like_type;
    int dump, hex; /* .sim: print after the run (in hexadecimal) */
    int noinit;    /* .sim: the buffer is not written before the run */
    unsigned flags;
    const char *spec; /* the text it came from */
    clrun_buf *buf;
};

struct check {
    const char *target; /* argument name or index */
    const char *path;
};

struct run_opts {
    const char *file, *kernel, *spec, *sim, *build_opts;
    char defines[4096];
    size_t global[3], local[3];
    unsigned dims, ldims;
    int repeat, json, seed_set;
    double bytes, rtol, atol, timeout; /* timeout: seconds per launch, 0 none */
    int timing;                        /* --sim: print the launch line and time too */
    int atol_set;
    struct check checks[MAX_CHECKS];
    int nchecks;
};

static const char *run_help = "usage: clrun run FILE.cl -k KERNEL -g X[,Y[,Z]] [options] ARG...\n"
                              "       clrun run --sim FILE.sim [options]\n\n"
                              "Builds FILE.cl, binds one ARG per kernel argument in order, launches, and saves outputs.\n\n"
                              "ARG forms (TYPE: f16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool, or float, int, uint, ...;\n"
                              "SHAPE: a count like 400 or dimensions like 20x20):\n"
                              "  FILE.npy                       input buffer from a NumPy file (type and shape from its header)\n"
                              "  raw:TYPE:FILE                  input buffer from a raw little-endian file of TYPE elements\n"
                              "  zeros:TYPE:SHAPE               buffer of zeros\n"
                              "  fill:TYPE:SHAPE:VALUE          buffer of one repeated value\n"
                              "  range:TYPE:SHAPE[:START[:STEP]]  START, START+STEP, ... (default 0 and 1)\n"
                              "  rand:TYPE:SHAPE[:SEED[:LO:HI]]   uniform random numbers in [LO, HI) (default seed 1, [0, 1))\n"
                              "  out:TYPE:SHAPE                 output buffer (zeroed before the run)\n"
                              "  out:like=N[:TYPE]              output buffer with the shape (and type) of argument N\n"
                              "  BUFFER@OUT.npy                 any buffer form above, saved to OUT.npy after the run (in-out)\n"
                              "  null                           a NULL buffer pointer\n"
                              "  TYPE:VALUE                     a scalar of that type (i32:400, f32:2.5, u64:0x10, f16:1.5)\n"
                              "  VALUE                          a scalar typed from the kernel's signature (400, 2.5; a negative\n"
                              "                                 one after --, or as TYPE:VALUE)\n"
                              "  TYPE:V,V,...  or  V,V,...      a by-value vector or struct: its elements in order, packed with no\n"
                              "                                 gaps (TYPE the element type: f32:1,2,3,4 for a float4, f32:42,3,18\n"
                              "                                 for struct {float a, b, c;}); a bare list takes a vector's element\n"
                              "                                 type (7,42,0,-1 for an int4; a float3 takes 3 or 4 values)\n"
                              "  local:BYTES                    __local memory\n\n"
                              "Options:\n"
                              "  -k, --kernel NAME       kernel to run (required without --sim)\n"
                              "  -g, --global X[,Y[,Z]]  global work size, 1-3 dimensions (required without --sim)\n"
                              "  -l, --local X[,Y[,Z]]   work-group size (default: the driver chooses; the global size is exact)\n"
                              "  -D NAME[=VAL]           preprocessor definition, repeatable\n"
                              "  -O, --options OPTS      more build options, e.g. \"-cl-fast-relaxed-math\" (also --build-options,\n"
                              "                          as oclgrind-kernel names it; repeated, all are kept in order)\n"
                              "  -d, --device SPEC       device (default: $CLRUN_DEVICE, else the best)\n"
                              "  --repeat N              N timed launches after a warm-up launch: min / median / max kernel time\n"
                              "                          (outputs are those of the last launch; in-out buffers see every launch)\n"
                              "  --bytes B               bytes the kernel moves per launch: also print GB/s\n"
                              "  --check ARG=EXPECTED.npy  compare argument ARG (its name or index) after the run; repeatable\n"
                              "  --rtol R, --atol A      tolerance |got - expected| <= A + R*|expected| (default 1e-5 and 1e-8 for\n"
                              "                          floating-point data; integers must match exactly unless --atol is given)\n"
                              "  --sim FILE.sim          run an Oclgrind simulation file (program, kernel, NDRange, work-group\n"
                              "                          size, one <size=... > header per argument); 'dump' arguments are printed\n"
                              "                          as oclgrind-kernel prints them, and nothing else\n"
                              "  --timing                with --sim: also the launch line (kernel, device, NDRange, time)\n"
                              "  --timeout S             a launch that runs past S seconds ends the process (exit 6), naming the\n"
                              "                          kernel (default: no limit)\n"
                              "  --json                  one JSON object on stdout\n"
                              "  --help                  this text\n\n"
                              "Exit codes: 0 success; 1 runtime failure; 2 bad command line or input file; 3 no device;\n"
                              "4 kernel build failure; 5 --check mismatch; 6 a kernel ran past --timeout.\n"
                              "A kernel that crashes the process (out of bounds on a CPU device) is named on stderr; run it\n"
                              "under oclgrind to find the access.\n\n"
                              "Example (the seed's PyCUDA multiply):\n"
                              "  clrun run examples/multiply.cl -k multiply_them -g 400 out:f32:400@dest.npy \\\n"
                              "      rand:f32:400:1 rand:f32:400:2\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "clrun run: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    return EXIT_USAGE;
}

static int parse_sizes(const char *s, size_t out[3], unsigned *dims, const char *what)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s);
    *dims = 0;
    out[0] = out[1] = out[2] = 1;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(t, &end, 10);
        if (*end || end == t || t[0] == '-' || v == 0 || errno || *dims >= 3)
            return usage_error("%s '%s': want 1 to 3 positive integers separated by commas", what, s);
        out[(*dims)++] = (size_t)v;
    }
    if (*dims == 0) return usage_error("%s is empty", what);
    return 0;
}

/* "400" or "20x30" */
static int parse_shape(const char *s, clrun_array *a, clrun_dtype t, const char *spec)
{
    size_t shape[CLRUN_MAX_DIMS];
    unsigned nd = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *tok = strtok_r(buf, "x", &save); tok; tok = strtok_r(NULL, "x", &save)) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(tok, &end, 10);
        if (*end || end == tok || tok[0] == '-' || errno || nd >= CLRUN_MAX_DIMS || v > ((size_t)1 << 40))
            return usage_error("argument '%s': '%s' is not a shape (a count like 400, or 20x30)", spec, s);
        shape[nd++] = (size_t)v;
    }
    if (nd == 0) return usage_error("argument '%s': missing shape", spec);
    size_t count = 1;
    for (unsigned i = 0; i < nd; i++) count *= shape[i];
    if (count == 0) return usage_error("argument '%s': a buffer needs at least one element", spec);
    if (clrun_array_new(a, t, nd, shape) != CLRUN_OK) return fprintf(stderr, "clrun run: %s\n", clrun_last_error(NULL)), EXIT_RUNTIME;
    return 0;
}

static int parse_type(const char *s, clrun_dtype *t, const char *spec)
{
    if (clrun_dtype_parse(s, t) != CLRUN_OK) return usage_error("argument '%s': %s", spec, clrun_last_error(NULL));
    return 0;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t x = *s += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Split "a:b:c" into at most n fields (in place). */
static int fields(char *s, char **f, int n)
{
    int k = 0;
    f[k++] = s;
    for (char *p = s; *p && k < n; p++)
        if (*p == ':') *p = 0, f[k++] = p + 1;
    return k;
}

/* ---- argument forms: one parser per FORM:... (the table below). Each gets the colon-separated
 * fields f[0..nf) of the argument (f[0] the form's name); a typed form's TYPE:SHAPE has been read
 * into r->a (zeroed) before its parser runs, and `in` says its type, element size and data. ---- */

struct form_in {
    char **f;
    int nf;
    const char *spec, *buf; /* the argument as given, and the copy f points into */
    clrun_dtype t;          /* typed forms */
    size_t es;
    unsigned char *d;
};

static int form_local(struct rarg *r, const struct form_in *in)
{
    char *end;
    errno = 0;
    unsigned long long v = in->nf == 2 ? strtoull(in->f[1], &end, 0) : 0;
    if (in->nf != 2 || *end || end == in->f[1] || v == 0 || errno || in->f[1][0] == '-')
        return usage_error("argument '%s': want local:BYTES with BYTES > 0", in->spec);
    if (r->save) return usage_error("argument '%s': local memory cannot be saved", in->spec);
    r->local = (size_t)v;
    return 0;
}

static int form_raw(struct rarg *r, const struct form_in *in)
{
    clrun_dtype t;
    int rc;
    const char *spec = in->spec;
    if (in->nf < 3) return usage_error("argument '%s': want raw:TYPE:FILE", spec);
    if ((rc = parse_type(in->f[1], &t, spec))) return rc;
    const char *path = spec + (in->f[2] - in->buf); /* the path may contain ':' */
    char pathbuf[1024];
    snprintf(pathbuf, sizeof pathbuf, "%s", path);
    if (r->save) pathbuf[strlen(pathbuf) - strlen(r->save) - 1] = 0;
    FILE *fp = fopen(pathbuf, "rb");
    if (!fp) return usage_error("argument '%s': cannot open %s: %s", spec, pathbuf, strerror(errno));
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    size_t es = clrun_dtype_size(t);
    if (n <= 0 || n % (long)es) {
        fclose(fp);
        return usage_error("argument '%s': %s has %ld bytes, not a positive multiple of %zu (%s)", spec, pathbuf, n, es,
                           clrun_dtype_name(t));
    }
    size_t shape[1] = {(size_t)n / es};
    if (clrun_array_new(&r->a, t, 1, shape) != CLRUN_OK || fread(r->a.data, 1, (size_t)n, fp) != (size_t)n) {
        fclose(fp);
        return usage_error("argument '%s': cannot read %s", spec, pathbuf);
    }
    fclose(fp);
    return 0;
}

static int form_zeros(struct rarg *r, const struct form_in *in)
{
    (void)r; /* clrun_array_new zeroed it */
    if (in->nf != 3) return usage_error("argument '%s': want %s:TYPE:SHAPE", in->spec, in->f[0]);
    return 0;
}

/* Read the TYPE:SHAPE of a typed form into r->a and in. */
static int typed(struct rarg *r, struct form_in *in)
{
    int rc;
    if (in->nf < 3) return usage_error("argument '%s': want %s:TYPE:SHAPE...", in->spec, in->f[0]);
    if ((rc = parse_type(in->f[1], &in->t, in->spec)) || (rc = parse_shape(in->f[2], &r->a, in->t, in->spec))) return rc;
    in->es = clrun_dtype_size(in->t), in->d = r->a.data;
    return 0;
}

/* out:like=INDEX[:TYPE], else as zeros */
static int form_out(struct rarg *r, const struct form_in *in)
{
    char **f = in->f;
    int rc;
    if (in->nf >= 2 && strncmp(f[1], "like=", 5) == 0) {
        char *end;
        long v = strtol(f[1] + 5, &end, 10);
        if (*end || end == f[1] + 5 || v < 0 || v > INT_MAX || in->nf > 3)
            return usage_error("argument '%s': want out:like=INDEX[:TYPE]", in->spec);
        r->like = (int)v;
        if (in->nf == 3) {
            if ((rc = parse_type(f[2], &r->like_type, in->spec))) return rc;
            r->like_type_set = 1;
        }
        return 0;
    }
    struct form_in t = *in;
    if ((rc = typed(r, &t))) return rc;
    return form_zeros(r, &t);
}

static int form_fill(struct rarg *r, const struct form_in *in)
{
    if (in->nf != 4 || parse_value(in->t, in->f[3], in->d, 0))
        return usage_error("argument '%s': want fill:TYPE:SHAPE:VALUE with a %s value", in->spec, clrun_dtype_name(in->t));
    for (size_t i = 1; i < r->a.count; i++) memcpy(in->d + i * in->es, in->d, in->es);
    return 0;
}

static int form_range(struct rarg *r, const struct form_in *in)
{
    unsigned char v0[8], v1[8];
    double start = 0, step = 1;
    if (in->nf > 5) return usage_error("argument '%s': want range:TYPE:SHAPE[:START[:STEP]]", in->spec);
    if (in->nf >= 4) {
        if (parse_value(in->t, in->f[3], v0, 0)) return usage_error("argument '%s': bad START '%s'", in->spec, in->f[3]);
        start = value_as_double(in->t, v0);
    }
    if (in->nf >= 5) {
        if (parse_value(in->t, in->f[4], v1, 0)) return usage_error("argument '%s': bad STEP '%s'", in->spec, in->f[4]);
        step = value_as_double(in->t, v1);
    }
    for (size_t i = 0; i < r->a.count; i++)
        if (value_from_double(in->t, start + step * (double)i, in->d + i * in->es))
            return usage_error("argument '%s': element %zu, %g, does not fit %s", in->spec, i, start + step * (double)i,
                               clrun_dtype_name(in->t));
    return 0;
}

static int form_rand(struct rarg *r, const struct form_in *in)
{
    const clrun_dtype t = in->t;
    uint64_t seed = 1;
    double lo = 0, hi = 1;
    const int integer = t != CLRUN_F16 && t != CLRUN_BF16 && t != CLRUN_F32 && t != CLRUN_F64;
    if (in->nf == 5 || in->nf > 6) return usage_error("argument '%s': want rand:TYPE:SHAPE[:SEED[:LO:HI]]", in->spec);
    if (in->nf >= 4) {
        char *end;
        seed = strtoull(in->f[3], &end, 0);
        if (*end || end == in->f[3]) return usage_error("argument '%s': bad SEED '%s'", in->spec, in->f[3]);
    }
    if (in->nf == 6) {
        char *e1, *e2;
        lo = strtod(in->f[4], &e1);
        hi = strtod(in->f[5], &e2);
        if (*e1 || *e2 || e1 == in->f[4] || e2 == in->f[5] || !(hi > lo)) return usage_error("argument '%s': want LO < HI", in->spec);
    } else if (integer) {
        lo = 0, hi = t == CLRUN_BOOL ? 2 : 100;
    }
    for (size_t i = 0; i < r->a.count; i++) {
        double u = (double)(splitmix(&seed) >> 11) * (1.0 / 9007199254740992.0);
        double v = lo + (hi - lo) * u;
        if (value_from_double(t, integer ? floor(v) : v, in->d + i * in->es))
            return usage_error("argument '%s': LO and HI must lie within %s's range", in->spec, clrun_dtype_name(t));
    }
    return 0;
}

/* A comma-separated list of TYPE values into a (count 1 for a single value); errors name `what`
 * and the type as `tname`. */
static int parse_list(clrun_dtype t, const char *text, clrun_array *a, const char *spec, const char *what, const char *tname)
{
    size_t n = 1;
    for (const char *c = text; *c; c++) n += *c == ',';
    if (n > 64) return usage_error("argument '%s': %zu values; a by-value argument takes at most 64", spec, n);
    size_t shape[1] = {n};
    if (clrun_array_new(a, t, n > 1, shape) != CLRUN_OK) return fprintf(stderr, "clrun run: %s\n", clrun_last_error(NULL)), EXIT_RUNTIME;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", text);
    size_t i = 0, es = clrun_dtype_size(t);
    for (char *p = buf, *c;; p = c + 1) {
        if ((c = strchr(p, ','))) *c = 0;
        if (parse_value(t, p, (char *)a->data + i++ * es, 0)) return usage_error("%s: '%s' is not a valid %s", what, p, tname);
        if (!c) break;
    }
    return 0;
}

/* FORM:... arguments: the form's name, the kind of argument it makes, whether TYPE:SHAPE follows
 * the name (read before the parser runs), its parser. */
static const struct form {
    const char *name;
    enum rkind kind;
    int typed;
    int (*parse)(struct rarg *r, const struct form_in *in);
} forms[] = {
    {"local", R_LOCAL, 0, form_local}, {"raw", R_BUF, 0, form_raw},     {"out", R_BUF, 0, form_out},   {"zeros", R_BUF, 1, form_zeros},
    {"fill", R_BUF, 1, form_fill},     {"range", R_BUF, 1, form_range}, {"rand", R_BUF, 1, form_rand},
};

/* One kernel argument from its text: [FORM:...|TYPE:VALUE|FILE.npy|NUMBER|null][@SAVE.npy]. */
static int parse_arg(const char *spec, struct rarg *r)
{
    char buf[1024];
    memset(r, 0, sizeof *r);
    r->like = -1;
    r->spec = spec;
    if (strlen(spec) >= sizeof buf) return usage_error("argument '%.40s...' is too long", spec);
    snprintf(buf, sizeof buf, "%s", spec);
    char *at = strrchr(buf, '@');
    if (at) {
        *at = 0;
        if (!at[1]) return usage_error("argument '%s': nothing after '@' (want @OUT.npy)", spec);
        r->save = spec + (at - buf) + 1;
    }
    const size_t len = strlen(buf);
    if (strcmp(buf, "null") == 0) {
        if (r->save) return usage_error("argument '%s': a null buffer cannot be saved", spec);
        r->kind = R_NULL;
        return 0;
    }
    if (!strchr(buf, ':') && len > 4 && strcmp(buf + len - 4, ".npy") == 0) {
        r->kind = R_BUF;
        if (clrun_npy_read(buf, &r->a) != CLRUN_OK) return usage_error("argument '%s': %s", spec, clrun_last_error(NULL));
        if (r->a.count == 0) return usage_error("argument '%s': the array is empty", spec);
        return 0;
    }
    if (!strchr(buf, ':')) {
        if (r->save) return usage_error("argument '%s': only buffers can be saved", spec);
        r->kind = R_BARE;
        r->bare = spec;
        for (char *p = buf, *end;; p = end + 1) { /* a number, or numbers separated by commas */
            strtod(p, &end);
            if ((*end && *end != ',') || end == p)
                return usage_error("argument '%s' is neither a file.npy nor a number nor one of the forms in --help", spec);
            if (!*end) break;
        }
        return 0;
    }
    char *f[6];
    const int nf = fields(buf, f, 6);
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++)
        if (strcmp(f[0], forms[i].name) == 0) {
            struct form_in in = {f, nf, spec, buf, CLRUN_F32, 0, NULL};
            int rc;
            r->kind = forms[i].kind;
            if (forms[i].typed && (rc = typed(r, &in))) return rc;
            return forms[i].parse(r, &in);
        }
    clrun_dtype t; /* TYPE:VALUE or TYPE:V,V,... */
    if (nf == 2 && clrun_dtype_parse(f[0], &t) == CLRUN_OK) {
        if (r->save) return usage_error("argument '%s': only buffers can be saved", spec);
        r->kind = strchr(f[1], ',') ? R_BYTES : R_SCALAR;
        char what[1100];
        snprintf(what, sizeof what, "argument '%s'", spec);
        return parse_list(t, f[1], &r->a, spec, what, clrun_dtype_name(t));
    }
    return usage_error("argument '%s': unknown form '%s' (see clrun run --help)", spec, f[0]);
}

/* The scalar element type of a signature type ("float*" -> float, "uint4*" -> uint); 0 if unknown. */
static int base_type(const char *type, char *out, size_t size)
{
    static const char *const names[] = {"uchar", "char",  "ushort", "short", "uint", "int", "ulong",
                                        "long",  "float", "double", "half",  "bool", NULL};
    const char *s = type;
    if (strncmp(s, "unsigned ", 9) == 0) {
        snprintf(out, size, "u%s", s + 9);
    } else snprintf(out, size, "%s", s);
    size_t n = strlen(out);
    while (n > 0 && (out[n - 1] == '*' || out[n - 1] == ' ')) out[--n] = 0;
    while (n > 0 && out[n - 1] >= '0' && out[n - 1] <= '9') out[--n] = 0; /* vector width */
    for (int i = 0; names[i]; i++)
        if (strcmp(out, names[i]) == 0) return 1;
    return 0;
}

/* The width of a vector type name ("float4" -> 4, "uint16" -> 16), 0 for anything else. */
static unsigned vector_width(const char *type)
{
    char base[64];
    size_t n = strlen(type), m = n;
    while (m > 0 && type[m - 1] >= '0' && type[m - 1] <= '9') m--;
    if (m == n || m == 0 || !base_type(type, base, sizeof base) || strchr(type, '*')) return 0;
    unsigned w = (unsigned)atoi(type + m);
    return w == 2 || w == 3 || w == 4 || w == 8 || w == 16 ? w : 0;
}

/* Bind a by-value vector or struct from its elements: against the signature when the driver
 * reports it (element type and count; a 3-vector takes 3 or 4 values and is passed as 4), else as
 * the bytes given, which the driver checks against the argument's size. */
static int bind_bytes(clrun_ctx *ctx, clrun_kernel *k, struct rarg *r, unsigned i, const clrun_arg_info *info, const char *desc)
{
    if (info) {
        char base[64];
        const unsigned w = vector_width(info->type);
        if (info->kind != CLRUN_ARG_VALUE)
            return usage_error("%s expects %s, not the values '%s'", desc, info->kind == CLRUN_ARG_LOCAL ? "local:BYTES" : "a buffer",
                               r->spec);
        if (base_type(info->type, base, sizeof base)) { /* a scalar or a vector: element type and count */
            const unsigned need = w ? w : 1;
            if (strcmp(base, clrun_dtype_cl_name(r->a.dtype)) != 0)
                return usage_error("%s gets %s values from '%s'; the kernel wants %s", desc, clrun_dtype_name(r->a.dtype), r->spec, base);
            if (r->a.count != need && !(need == 3 && r->a.count == 4))
                return usage_error("%s takes %u value%s; '%s' gives %zu (%zu bytes)", desc, need, need == 1 ? "" : "s", r->spec, r->a.count,
                                   r->a.bytes);
            if (need == 3 && r->a.count == 3) { /* the size of a 4-vector, the last element unused */
                clrun_array four;
                size_t shape[1] = {4};
                if (clrun_array_new(&four, r->a.dtype, 1, shape) != CLRUN_OK) return EXIT_RUNTIME;
                memcpy(four.data, r->a.data, r->a.bytes);
                clrun_array_free(&r->a);
                r->a = four;
            }
        }
    }
    clrun_status st = clrun_arg_bytes(k, i, r->a.data, r->a.bytes);
    if (st == CLRUN_OK) return 0;
    if (st == CLRUN_ARG_MISMATCH) return fprintf(stderr, "clrun run: '%s': %s\n", r->spec, clrun_last_error(ctx)), EXIT_USAGE;
    return usage_error("%s: the driver refuses %zu bytes from '%s' (%s); give exactly the size of %s, padding included", desc, r->a.bytes,
                       r->spec, clrun_last_error(ctx), info ? info->type : "its type");
}

static void free_args(struct rarg *args, int n)
{
    for (int i = 0; i < n; i++) {
        clrun_array_free(&args[i].a);
        clrun_buf_free(args[i].buf);
    }
}

/* Bind argument i: resolve untyped scalars and out:like, check against the signature, make and fill
 * buffers. Returns an exit code. */
static int bind_arg(clrun_ctx *ctx, clrun_kernel *k, struct rarg *args, int nargs, int i)
{
    struct rarg *r = &args[i];
    clrun_arg_info info;
    int have_info = clrun_kernel_arg_info(k, (unsigned)i, &info) == CLRUN_OK;
    char desc[200];
    if (have_info) snprintf(desc, sizeof desc, "argument %d (%s %s)", i, info.type, info.name);
    else snprintf(desc, sizeof desc, "argument %d", i);
    clrun_status st = CLRUN_OK;

    if (r->like >= 0) {
        if (r->like >= nargs || r->like == i || (args[r->like].kind != R_BUF) || args[r->like].like >= 0)
            return usage_error("%s '%s': argument %d is not a buffer with a shape of its own", desc, r->spec, r->like);
        const clrun_array *m = &args[r->like].a;
        if (clrun_array_new(&r->a, r->like_type_set ? r->like_type : m->dtype, m->ndim, m->shape) != CLRUN_OK)
            return fprintf(stderr, "clrun run: %s\n", clrun_last_error(NULL)), EXIT_RUNTIME;
        r->kind = R_BUF;
    }
    if (r->kind == R_BARE) {
        char base[64];
        clrun_dtype t;
        int rc;
        if (!have_info) return usage_error("%s '%s': this driver reports no argument types; write TYPE:VALUE", desc, r->spec);
        if (info.kind != CLRUN_ARG_VALUE) return usage_error("%s expects a buffer or local memory, not the number '%s'", desc, r->spec);
        const int scalar = base_type(info.type, base, sizeof base) && strcmp(base, info.type) == 0;
        if ((!scalar && !vector_width(info.type)) || clrun_dtype_parse(base, &t) != CLRUN_OK)
            return usage_error("%s: cannot infer values of type %s from '%s'; write TYPE:VALUE or TYPE:V,V,... (the members' type)", desc,
                               info.type, r->spec);
        if ((rc = parse_list(t, r->bare, &r->a, r->spec, desc, base))) return rc;
        r->kind = scalar && r->a.count == 1 ? R_SCALAR : R_BYTES;
    }
    if (have_info && r->kind == R_BUF && (info.kind == CLRUN_ARG_GLOBAL || info.kind == CLRUN_ARG_CONSTANT)) {
        char base[64];
        const char *want = clrun_dtype_cl_name(r->a.dtype);
        if (r->a.dtype == CLRUN_BOOL) want = "uchar";
        if (base_type(info.type, base, sizeof base) && strcmp(base, want) != 0 && !(r->a.dtype == CLRUN_BOOL && strcmp(base, "char") == 0))
            return usage_error("%s gets %s data from '%s'; the kernel wants %s", desc, clrun_dtype_name(r->a.dtype), r->spec, base);
    }
    switch (r->kind) {
    case R_BUF: /* an empty one (.sim size=0) gets a buffer of one byte, never read or written back */
        if ((st = clrun_buf_new(ctx, r->a.bytes ? r->a.bytes : 1, r->flags, &r->buf)) == CLRUN_OK &&
            (!r->a.bytes || r->noinit || (st = clrun_upload(r->buf, 0, r->a.data, r->a.bytes)) == CLRUN_OK))
            st = clrun_arg_buf(k, (unsigned)i, r->buf);
        break;
    case R_BYTES: return bind_bytes(ctx, k, r, (unsigned)i, have_info ? &info : NULL, desc);
    case R_NULL: st = clrun_arg_buf(k, (unsigned)i, NULL); break;
    case R_LOCAL: st = clrun_arg_local(k, (unsigned)i, r->local); break;
    case R_SCALAR: {
        char base[64];
        if (have_info && info.kind != CLRUN_ARG_VALUE)
            return usage_error("%s expects %s, not the scalar '%s'", desc, info.kind == CLRUN_ARG_LOCAL ? "local:BYTES" : "a buffer",
                               r->spec);
        if (have_info && (!base_type(info.type, base, sizeof base) || vector_width(info.type))) /* one value for a vector or struct */
            return bind_bytes(ctx, k, r, (unsigned)i, &info, desc);
        switch (r->a.dtype) { /* the typed setters check the signature */
        case CLRUN_F16: st = clrun_arg_f16(k, (unsigned)i, *(uint16_t *)r->a.data); break;
        case CLRUN_F32: st = clrun_arg_f32(k, (unsigned)i, *(float *)r->a.data); break;
        case CLRUN_F64: st = clrun_arg_f64(k, (unsigned)i, *(double *)r->a.data); break;
        case CLRUN_I8: st = clrun_arg_i8(k, (unsigned)i, *(int8_t *)r->a.data); break;
        case CLRUN_I16: st = clrun_arg_i16(k, (unsigned)i, *(int16_t *)r->a.data); break;
        case CLRUN_I32: st = clrun_arg_i32(k, (unsigned)i, *(int32_t *)r->a.data); break;
        case CLRUN_I64: st = clrun_arg_i64(k, (unsigned)i, *(int64_t *)r->a.data); break;
        case CLRUN_U8: st = clrun_arg_u8(k, (unsigned)i, *(uint8_t *)r->a.data); break;
        case CLRUN_U16: st = clrun_arg_u16(k, (unsigned)i, *(uint16_t *)r->a.data); break;
        case CLRUN_U32: st = clrun_arg_u32(k, (unsigned)i, *(uint32_t *)r->a.data); break;
        case CLRUN_U64: st = clrun_arg_u64(k, (unsigned)i, *(uint64_t *)r->a.data); break;
        case CLRUN_BOOL: st = clrun_arg_bytes(k, (unsigned)i, r->a.data, 1); break;
        default: break;
        }
        break;
    }
    default: break;
    }
    /* a mismatch, or a value the device cannot take (local memory past its size): the command line's */
    if (st == CLRUN_ARG_MISMATCH || st == CLRUN_INVALID_ARG)
        return fprintf(stderr, "clrun run: '%s': %s\n", r->spec, clrun_last_error(ctx)), EXIT_USAGE;
    if (st != CLRUN_OK) return cli_fail("run", ctx, st);
    return 0;
}

/* Compare got against expected; print the outcome; returns 0 or EXIT_CHECK / EXIT_USAGE. */
static int do_check(const struct run_opts *o, const struct check *c, const struct rarg *r, int index, FILE *js)
{
    clrun_array e;
    if (clrun_npy_read(c->path, &e) != CLRUN_OK) return usage_error("--check %s: %s", c->target, clrun_last_error(NULL));
    int rc = 0;
    if (e.count != r->a.count) {
        fprintf(stderr, "clrun run: --check %s: argument %d has %zu elements, %s has %zu\n", c->target, index, r->a.count, c->path,
                e.count);
        clrun_array_free(&e);
        return EXIT_CHECK;
    }
    int is_float = e.dtype == CLRUN_F16 || e.dtype == CLRUN_F32 || e.dtype == CLRUN_F64 || r->a.dtype == CLRUN_F16 ||
                   r->a.dtype == CLRUN_F32 || r->a.dtype == CLRUN_F64;
    double rtol = o->rtol >= 0 ? o->rtol : (is_float ? 1e-5 : 0), atol = o->atol_set ? o->atol : (is_float ? 1e-8 : 0);
    size_t bad = 0, worst = 0;
    double worst_excess = -1;
    size_t ge = clrun_dtype_size(r->a.dtype), ee = clrun_dtype_size(e.dtype);
    for (size_t i = 0; i < e.count; i++) {
        double g = value_as_double(r->a.dtype, (const char *)r->a.data + i * ge),
               x = value_as_double(e.dtype, (const char *)e.data + i * ee);
        double diff = fabs(g - x), lim = atol + rtol * fabs(x);
        int ok = (isnan(g) && isnan(x)) || (isinf(x) && g == x) || diff <= lim;
        if (!ok) {
            double excess = isnan(diff) ? INFINITY : diff - lim;
            if (bad++ == 0 || excess > worst_excess) worst_excess = excess, worst = i;
        }
    }
    double g = value_as_double(r->a.dtype, (const char *)r->a.data + worst * ge),
           x = value_as_double(e.dtype, (const char *)e.data + worst * ee);
    if (bad) {
        fprintf(stderr,
                "clrun run: --check %s: %zu of %zu elements differ from %s (rtol %g, atol %g); worst at [%zu]: got %.9g, expected %.9g\n",
                c->target, bad, e.count, c->path, rtol, atol, worst, g, x);
        rc = EXIT_CHECK;
    } else if (!o->json) {
        printf("check %s: all %zu elements match %s (rtol %g, atol %g)\n", c->target, e.count, c->path, rtol, atol);
    }
    if (js) {
        fprintf(js, "{\"arg\": ");
        cli_json_str(js, c->target);
        fprintf(js, ", \"expected\": ");
        cli_json_str(js, c->path);
        fprintf(js, ", \"mismatches\": %zu, \"count\": %zu", bad, e.count);
        if (bad) fprintf(js, ", \"worst_index\": %zu, \"got\": %.9g, \"want\": %.9g", worst, g, x);
        fprintf(js, "}");
    }
    clrun_array_free(&e);
    return rc;
}

static int find_arg(clrun_kernel *k, int nargs, const char *target)
{
    char *end;
    long v = strtol(target, &end, 10);
    if (!*end && end != target) return v >= 0 && v < nargs ? (int)v : -1;
    for (int i = 0; i < nargs; i++) {
        clrun_arg_info info;
        if (clrun_kernel_arg_info(k, (unsigned)i, &info) == CLRUN_OK && strcmp(info.name, target) == 0) return i;
    }
    return -1;
}

/* The NDRange and the __local arguments against the device's limits, before the driver sees them
 * (some drivers abort the process on sizes they cannot schedule): each local size within the
 * device's work-item sizes and their product within the kernel's work-group size; the __local bytes
 * together within the device's local memory; fewer than 2^32 work-groups (drivers count them in 32
 * bits) and fewer work-items than the device's address space holds. */
static int check_geometry(const struct run_opts *o, clrun_ctx *ctx, clrun_kernel *k, const struct rarg *args, int nargs)
{
    const clrun_device_info *in = clrun_ctx_device(ctx);
    cl_uint bits = 64;
    size_t kwg = 0, local_total = 0, items = 1, groups = 1, wg = 1;
    clGetDeviceInfo(clrun_ctx_cl_device(ctx), CL_DEVICE_ADDRESS_BITS, sizeof bits, &bits, NULL);
    if (clGetKernelWorkGroupInfo(clrun_kernel_cl(k), clrun_ctx_cl_device(ctx), CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg, NULL) !=
        CL_SUCCESS)
        kwg = in->max_work_group;
    for (int i = 0; i < nargs; i++) {
        if (args[i].kind != R_LOCAL) continue;
        if (args[i].local > in->local_mem || local_total > in->local_mem - args[i].local)
            return usage_error("the __local arguments ask for more than the %llu bytes of local memory %s has (argument %d: %zu bytes)",
                               (unsigned long long)in->local_mem, in->name, i, args[i].local);
        local_total += args[i].local;
    }
    for (unsigned d = 0; d < o->dims; d++) {
        const size_t l = o->ldims ? o->local[d] : 1;
        if (o->ldims && in->max_work_item[d] && l > in->max_work_item[d])
            return usage_error("-l: %zu work-items in dimension %u; %s allows at most %zu", l, d, in->name, in->max_work_item[d]);
        if (__builtin_mul_overflow(items, o->global[d], &items) || (bits < 64 && items >> bits))
            return usage_error("-g: %zu work-items in all do not fit the %u-bit address space of %s", items, bits, in->name);
        wg *= l;
        groups *= (o->global[d] + l - 1) / l;
    }
    if (o->ldims && kwg && wg > kwg)
        return usage_error("-l: a work-group of %zu work-items; kernel %s allows at most %zu on %s", wg, clrun_kernel_name(k), kwg,
                           in->name);
    if (!o->ldims) groups = (items + (kwg ? kwg : 1) - 1) / (kwg ? kwg : 1); /* the fewest the driver can make */
    if (groups >> 32) return usage_error("-g/-l: %zu work-groups; at most 2^32 - 1 (give a larger -l, or split the work)", groups);
    return 0;
}

/* One dumped argument as oclgrind-kernel prints it: a blank line, "Argument 'NAME': N bytes", one
 * "  NAME[i] = VALUE" line per element (integers in decimal, or with `hex` as 0x and twice the
 * element's bytes in digits, negative ones as their promoted two's complement; floats as C++ streams
 * print them, 6 significant digits), and a blank line. */
static void print_dump(FILE *f, const char *name, const clrun_array *a, int hex)
{
    const size_t es = clrun_dtype_size(a->dtype);
    fprintf(f, "\nArgument '%s': %zu bytes\n", name, a->bytes);
    for (size_t j = 0; j < a->count; j++) {
        const void *p = (const char *)a->data + j * es;
        char v[64];
        const clrun_dtype t = a->dtype;
        if (t == CLRUN_F16 || t == CLRUN_BF16 || t == CLRUN_F32 || t == CLRUN_F64) {
            snprintf(v, sizeof v, "%g", value_as_double(t, p));
        } else if (!hex) {
            if (t == CLRUN_I64) snprintf(v, sizeof v, "%lld", (long long)*(const int64_t *)p);
            else if (t == CLRUN_U64) snprintf(v, sizeof v, "%llu", (unsigned long long)*(const uint64_t *)p);
            else snprintf(v, sizeof v, "%.0f", value_as_double(t, p));
        } else {
            uint64_t u = 0;
            memcpy(&u, p, es);
            if ((t == CLRUN_I8 || t == CLRUN_I16 || t == CLRUN_I32) && (u >> (8 * es - 1)) & 1) /* promoted to int */
                u = (uint32_t)(int32_t)(es == 1 ? (int8_t)u : es == 2 ? (int16_t)u : (int32_t)u);
            snprintf(v, sizeof v, "%llx", (unsigned long long)u);
        }
        fprintf(f, "  %s[%zu] = %s", name, j, hex ? "0x" : "");
        for (size_t w = strlen(v); hex && w < 2 * es; w++) fputc('0', f); /* setw(2·bytes), setfill('0') */
        fprintf(f, "%s\n", v);
    }
    fprintf(f, "\n");
}

static int execute(struct run_opts *o, clrun_ctx *ctx, clrun_kernel *k, struct rarg *args, int nargs)
{
    int rc = 0;
    unsigned n = clrun_kernel_nargs(k);
    if ((unsigned)nargs != n) {
        char sig[2048] = "";
        size_t off = 0;
        for (unsigned i = 0; i < n && off < sizeof sig; i++) {
            clrun_arg_info info;
            if (clrun_kernel_arg_info(k, i, &info) == CLRUN_OK)
                off += (size_t)snprintf(sig + off, sizeof sig - off, "%s%s %s", i ? ", " : "", info.type, info.name);
        }
        return usage_error("kernel %s takes %u argument%s (%s), %d given", clrun_kernel_name(k), n, n == 1 ? "" : "s", sig, nargs);
    }
    for (int i = 0; i < nargs; i++) /* two saves into one file: the later would overwrite the earlier */
        for (int j = 0; j < i; j++)
            if (args[i].save && args[j].save && cli_same_file(args[i].save, args[j].save))
                return usage_error("arguments %d and %d are both saved to one file (%s and %s); each output needs its own", j, i,
                                   args[j].save, args[i].save);
    int check_idx[MAX_CHECKS];
    for (int c = 0; c < o->nchecks; c++)
        if ((check_idx[c] = find_arg(k, nargs, o->checks[c].target)) < 0)
            return usage_error("--check %s: no argument of kernel %s has that name or index", o->checks[c].target, clrun_kernel_name(k));
    for (int i = 0; i < nargs; i++)
        if (args[i].like < 0 && (rc = bind_arg(ctx, k, args, nargs, i))) return rc;
    for (int i = 0; i < nargs; i++) /* out:like after their models */
        if (args[i].like >= 0 && (rc = bind_arg(ctx, k, args, nargs, i))) return rc;
    for (int c = 0; c < o->nchecks; c++)
        if (args[check_idx[c]].kind != R_BUF)
            return usage_error("--check %s: argument %d is not a buffer", o->checks[c].target, check_idx[c]);

    if ((rc = check_geometry(o, ctx, k, args, nargs))) return rc;
    /* launches: raw enqueue so that without -l the driver picks the work-group size and the global
     * size stays exact (kernels like the seed's multiply_them have no tail guard) */
    cl_command_queue q = clrun_ctx_cl_queue(ctx);
    int runs = o->repeat > 0 ? o->repeat + 1 : 1;
    double *times = calloc((size_t)runs, sizeof *times);
    if (!times) return EXIT_RUNTIME;
    for (int r = 0; r < runs; r++) {
        cl_event ev = NULL;
        cli_running(clrun_kernel_name(k), clrun_ctx_device(ctx)->name);
        if (o->timeout > 0) cli_timeout_arm(o->timeout);
        cl_int err = clEnqueueNDRangeKernel(q, clrun_kernel_cl(k), o->dims, NULL, o->global, o->ldims ? o->local : NULL, 0, NULL, &ev);
        if (err == CL_SUCCESS) err = clWaitForEvents(1, &ev);
        if (o->timeout > 0) cli_timeout_disarm();
        cli_running(NULL, NULL);
        if (err != CL_SUCCESS) {
            fprintf(stderr, "clrun run: launching %s with global %zu,%zu,%zu%s failed: %s (%d)%s\n", clrun_kernel_name(k), o->global[0],
                    o->global[1], o->global[2], o->ldims ? " and the given local size" : "", clrun_cl_error_name(err), (int)err,
                    err == CL_INVALID_WORK_GROUP_SIZE ? " — the device wants a local size that fits it and divides the global size "
                                                        "(OpenCL 2.0 devices take one that does not divide it with -O -cl-std=CL2.0)"
                                                      : "");
            if (ev) clReleaseEvent(ev);
            free(times);
            return err == CL_INVALID_WORK_GROUP_SIZE || err == CL_INVALID_WORK_ITEM_SIZE ? EXIT_USAGE : EXIT_RUNTIME;
        }
        cl_ulong t0 = 0, t1 = 0;
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
        times[r] = (double)(t1 - t0) / 1e6;
        clReleaseEvent(ev);
    }
    int first = o->repeat > 0 ? 1 : 0, cnt = runs - first;
    double tmed = cli_median(times + first, cnt), tmin = times[first], tmax = times[runs - 1];
    free(times);

    /* outputs */
    for (int i = 0; i < nargs; i++) {
        struct rarg *r = &args[i];
        int wanted = r->save || r->dump;
        for (int c = 0; c < o->nchecks; c++) wanted |= check_idx[c] == i;
        if (!wanted || r->kind != R_BUF || !r->a.bytes) continue;
        clrun_status st = clrun_download(r->buf, 0, r->a.data, r->a.bytes);
        if (st != CLRUN_OK) return cli_fail("run", ctx, st);
        if (r->save && clrun_npy_write(r->save, &r->a) != CLRUN_OK)
            return fprintf(stderr, "clrun run: %s\n", clrun_last_error(NULL)), EXIT_RUNTIME;
    }
    FILE *js = o->json ? stdout : NULL;
    if (js) {
        fprintf(js, "{\"kernel\": ");
        cli_json_str(js, clrun_kernel_name(k));
        fprintf(js, ", \"device\": ");
        cli_json_str(js, clrun_ctx_device(ctx)->name);
        fprintf(js, ", \"global\": [%zu, %zu, %zu], \"dims\": %u, \"runs\": %d, \"min_ms\": %.6f, \"median_ms\": %.6f, \"max_ms\": %.6f",
                o->global[0], o->global[1], o->global[2], o->dims, cnt, tmin, tmed, tmax);
        if (o->bytes > 0) fprintf(js, ", \"gbps\": %.3f", o->bytes / tmed / 1e6);
        fprintf(js, ", \"outputs\": [");
        int first_out = 1;
        for (int i = 0; i < nargs; i++)
            if (args[i].save) {
                fprintf(js, "%s", first_out ? "" : ", ");
                cli_json_str(js, args[i].save);
                first_out = 0;
            }
        fprintf(js, "], \"dumps\": ["); /* the .sim's dump arguments, as the text form prints them */
        int first_dump = 1;
        for (int i = 0; i < nargs; i++) {
            if (!args[i].dump) continue;
            clrun_arg_info info;
            clrun_kernel_arg_info(k, (unsigned)i, &info);
            fprintf(js, "%s{\"arg\": ", first_dump ? "" : ", ");
            cli_json_str(js, info.name);
            fprintf(js, ", \"type\": \"%s\", \"values\": [", clrun_dtype_name(args[i].a.dtype));
            const size_t es = clrun_dtype_size(args[i].a.dtype);
            for (size_t j = 0; j < args[i].a.count; j++) {
                const double v = value_as_double(args[i].a.dtype, (const char *)args[i].a.data + j * es);
                if (j) fputs(", ", js);
                if (isfinite(v)) value_print(js, args[i].a.dtype, (const char *)args[i].a.data + j * es);
                else fprintf(js, "\"%s\"", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"); /* JSON has no inf or NaN */
            }
            fputs("]}", js);
            first_dump = 0;
        }
        fprintf(js, "], \"checks\": [");
    } else if (!o->sim || o->timing) {
        printf("%s on %s: global %zu", clrun_kernel_name(k), clrun_ctx_device(ctx)->name, o->global[0]);
        for (unsigned d = 1; d < o->dims; d++) printf(",%zu", o->global[d]);
        if (o->ldims) {
            printf(", local %zu", o->local[0]);
            for (unsigned d = 1; d < o->dims; d++) printf(",%zu", o->local[d]);
        }
        if (o->repeat > 0) printf("; %d launches: min %.4f ms, median %.4f ms, max %.4f ms", cnt, tmin, tmed, tmax);
        else printf("; kernel %.4f ms", tmed);
        if (o->bytes > 0) printf(", %.2f GB/s", o->bytes / tmed / 1e6);
        printf("\n");
        for (int i = 0; i < nargs; i++)
            if (args[i].save) {
                printf("wrote %s (%s, shape ", args[i].save, clrun_dtype_name(args[i].a.dtype));
                for (unsigned d = 0; d < args[i].a.ndim; d++) printf("%s%zu", d ? "x" : "", args[i].a.shape[d]);
                printf(")\n");
            }
    }
    for (int i = 0; i < nargs && !js; i++) { /* .sim dumps, exactly as oclgrind-kernel prints them */
        if (!args[i].dump) continue;
        clrun_arg_info info;
        clrun_kernel_arg_info(k, (unsigned)i, &info);
        print_dump(stdout, info.name, &args[i].a, args[i].hex);
    }
    int worst = 0;
    for (int c = 0; c < o->nchecks; c++) {
        if (js && c) fprintf(js, ", ");
        int crc = do_check(o, &o->checks[c], &args[check_idx[c]], check_idx[c], js);
        if (crc > worst) worst = crc;
    }
    if (js) fprintf(js, "]}\n");
    return worst;
}

/* The largest .sim file read (its inline values included). */
#define SIM_MAX ((size_t)256 << 20)

/* A whole text file of at most SIM_MAX bytes (errno EFBIG past it, /dev/zero too), or NULL. */
static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) break;
        if (cap > SIM_MAX) {
            free(buf);
            buf = NULL;
            errno = EFBIG;
            break;
        }
        char *p = realloc(buf, cap * 2);
        if (!p) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = p;
        cap *= 2;
    }
    fclose(f);
    if (buf) *len = n;
    return buf;
}

static int run_sim(struct run_opts *o)
{
    size_t len = 0;
    char *text = read_text(o->sim, &len);
    if (!text) return usage_error("cannot read %s: %s", o->sim, strerror(errno));
    struct sim_parser p;
    struct sim_head h;
    struct rarg *args = NULL;
    int nargs = 0, rc = 0;
    clrun_ctx *ctx = NULL;
    clrun_prog *prog = NULL;
    clrun_kernel *k = NULL;
    if (sim_open(&p, text, len, &h)) {
        rc = usage_error("%s: %s", o->sim, p.err);
        goto done;
    }
    char path[2200];
    const char *slash = strrchr(o->sim, '/');
    if (h.program[0] != '/' && slash) snprintf(path, sizeof path, "%.*s/%s", (int)(slash - o->sim), o->sim, h.program);
    else snprintf(path, sizeof path, "%s", h.program);
    FILE *probe = fopen(path, "rb");
    if (!probe) snprintf(path, sizeof path, "%s", h.program); /* as Oclgrind: relative to the current folder */
    else fclose(probe);
    if ((rc = cli_open("run", o->spec, &ctx))) goto done;
    clrun_status st;
    if ((st = clrun_prog_file(ctx, path, o->defines[0] ? o->defines : NULL, &prog)) || (st = clrun_kernel_new(prog, h.kernel, &k))) {
        rc = st == CLRUN_IO_ERROR ? (fprintf(stderr, "clrun run: %s: %s\n", o->sim, clrun_last_error(ctx)), EXIT_USAGE)
                                  : cli_fail("run", ctx, st);
        goto done;
    }
    unsigned n = clrun_kernel_nargs(k);
    if (!(args = calloc(n ? n : 1, sizeof *args))) {
        rc = (fprintf(stderr, "clrun run: out of memory\n"), EXIT_RUNTIME);
        goto done;
    }
    for (unsigned i = 0; i < n; i++) {
        clrun_arg_info info;
        struct sim_arg sa;
        if (clrun_kernel_arg_info(k, i, &info) != CLRUN_OK) {
            rc = usage_error("%s: the driver reports no argument info for %s, which .sim files need", o->sim, h.kernel);
            goto done;
        }
        if (sim_next_arg(&p, i, &info, &sa)) {
            sim_arg_free(&sa);
            rc = usage_error("%s: %s", o->sim, p.err);
            goto done;
        }
        struct rarg *r = &args[nargs++];
        r->like = -1;
        r->spec = o->sim;
        r->dump = sa.dump, r->hex = sa.hex, r->noinit = sa.noinit;
        r->flags = sa.ro ? CLRUN_BUF_READ_ONLY : sa.wo ? CLRUN_BUF_WRITE_ONLY : 0;
        r->kind = sa.kind == SIM_BUFFER ? R_BUF : sa.kind == SIM_VALUE ? R_SCALAR : sa.kind == SIM_LOCAL ? R_LOCAL : R_NULL;
        if (sa.kind == SIM_VALUE && sa.size != clrun_dtype_size(sa.type)) r->kind = R_BYTES; /* a vector or a struct */
        r->local = sa.size;
        r->a = sa.data; /* ownership moves */
    }
    if (sim_finish(&p)) {
        rc = usage_error("%s: %s", o->sim, p.err);
        goto done;
    }
    memcpy(o->global, h.ndrange, sizeof o->global);
    memcpy(o->local, h.wgsize, sizeof o->local);
    o->dims = o->ldims = 3;
    o->kernel = h.kernel;
    rc = execute(o, ctx, k, args, nargs);
done:
    if (args) free_args(args, nargs);
    free(args);
    sim_close(&p);
    free(text);
    clrun_kernel_free(k);
    clrun_prog_free(prog);
    clrun_close(ctx);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    struct run_opts o;
    memset(&o, 0, sizeof o);
    o.rtol = -1;
    static const struct option opts[] = {{"kernel", required_argument, NULL, 'k'},
                                         {"global", required_argument, NULL, 'g'},
                                         {"local", required_argument, NULL, 'l'},
                                         {"options", required_argument, NULL, 'O'},
                                         {"build-options", required_argument, NULL, 'O'}, /* oclgrind-kernel's name */
                                         {"device", required_argument, NULL, 'd'},
                                         {"repeat", required_argument, NULL, 'r'},
                                         {"bytes", required_argument, NULL, 'b'},
                                         {"check", required_argument, NULL, 'c'},
                                         {"rtol", required_argument, NULL, 'R'},
                                         {"atol", required_argument, NULL, 'A'},
                                         {"sim", required_argument, NULL, 's'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"timeout", required_argument, NULL, 'T'},
                                         {"timing", no_argument, NULL, 'M'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    int c, rc;
    size_t dlen = 0;
    struct cli_opts opt = {.sub = "run", .help = run_help, .first = 1};
    while ((c = cli_next_opt(&opt, argc, argv, "k:g:l:D:O:d:h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        char *end = NULL;
        switch (c) {
        case 'k': o.kernel = optarg; break;
        case 'g':
            if ((rc = parse_sizes(optarg, o.global, &o.dims, "-g"))) return rc;
            break;
        case 'l':
            if ((rc = parse_sizes(optarg, o.local, &o.ldims, "-l"))) return rc;
            break;
        case 'D':
            if (!*optarg || strchr(optarg, ' ') || strchr(optarg, '"'))
                return usage_error("-D '%s': want NAME or NAME=VALUE without spaces", optarg);
            dlen += (size_t)snprintf(o.defines + dlen, sizeof o.defines - dlen, "%s-D%s", dlen ? " " : "", optarg);
            if (dlen >= sizeof o.defines) return usage_error("too many -D options");
            break;
        case 'O': /* given twice: both kept, in order, as compilers take repeated options */
            dlen += (size_t)snprintf(o.defines + dlen, sizeof o.defines - dlen, "%s%s", dlen ? " " : "", optarg);
            if (dlen >= sizeof o.defines) return usage_error("build options are too long");
            o.build_opts = optarg;
            break;
        case 'd': o.spec = optarg; break;
        case 'r':
            o.repeat = (int)strtol(optarg, &end, 10);
            if (!*optarg || *end || o.repeat < 1 || o.repeat > 100000) return usage_error("--repeat wants 1..100000, not '%s'", optarg);
            break;
        case 'b':
            o.bytes = strtod(optarg, &end);
            if (!*optarg || *end || !(o.bytes > 0)) return usage_error("--bytes wants a positive number, not '%s'", optarg);
            break;
        case 'c': {
            char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || !eq[1]) return usage_error("--check wants ARG=EXPECTED.npy, not '%s'", optarg);
            if (o.nchecks >= MAX_CHECKS) return usage_error("at most %d --check options", MAX_CHECKS);
            *eq = 0;
            o.checks[o.nchecks].target = optarg;
            o.checks[o.nchecks++].path = eq + 1;
            break;
        }
        case 'R':
            o.rtol = strtod(optarg, &end);
            if (!*optarg || *end || !(o.rtol >= 0)) return usage_error("--rtol wants a number >= 0, not '%s'", optarg);
            break;
        case 'A':
            o.atol = strtod(optarg, &end);
            o.atol_set = 1;
            if (!*optarg || *end || !(o.atol >= 0)) return usage_error("--atol wants a number >= 0, not '%s'", optarg);
            break;
        case 's': o.sim = optarg; break;
        case 'M': o.timing = 1; break;
        case 'T':
            o.timeout = strtod(optarg, &end);
            if (!*optarg || *end || !(o.timeout > 0) || o.timeout > 1e6)
                return usage_error("--timeout wants seconds > 0, not '%s'", optarg);
            break;
        case 'j': o.json = 1; break;
        default: break;
        }
    }
    if (o.sim) {
        if (optind < argc) return usage_error("--sim takes no kernel file or arguments ('%s')", argv[optind]);
        if (o.kernel || o.dims) return usage_error("--sim gives the kernel and sizes itself; drop -k and -g");
        return run_sim(&o);
    }
    if (optind >= argc) return usage_error("no kernel file given (usage: clrun run FILE.cl -k KERNEL -g SIZE ARG...)");
    o.file = argv[optind++];
    if (!o.kernel) return usage_error("no kernel name given (-k NAME)");
    if (!o.dims) return usage_error("no global size given (-g X[,Y[,Z]])");
    if (o.ldims && o.ldims != o.dims) return usage_error("-l has %u dimensions, -g has %u", o.ldims, o.dims);
    int nargs = argc - optind; /* as many as the command line holds: the kernel says how many it takes */
    struct rarg *args = calloc(nargs ? (size_t)nargs : 1, sizeof *args);
    if (!args) return (fprintf(stderr, "clrun run: out of memory\n"), EXIT_RUNTIME);
    int parsed = 0;
    rc = 0;
    for (int i = 0; i < nargs && !rc; i++, parsed++) rc = parse_arg(argv[optind + i], &args[i]);
    clrun_ctx *ctx = NULL;
    clrun_prog *prog = NULL;
    clrun_kernel *k = NULL;
    if (!rc) rc = cli_open("run", o.spec, &ctx);
    if (!rc) {
        clrun_status st = clrun_prog_file(ctx, o.file, o.defines[0] ? o.defines : NULL, &prog);
        if (st == CLRUN_IO_ERROR) rc = (fprintf(stderr, "clrun run: %s\n", clrun_last_error(ctx)), EXIT_USAGE);
        else if (st != CLRUN_OK) rc = cli_fail("run", ctx, st);
        else if ((st = clrun_kernel_new(prog, o.kernel, &k)) != CLRUN_OK)
            rc = st == CLRUN_NOT_FOUND ? (fprintf(stderr, "clrun run: %s\n", clrun_last_error(ctx)), EXIT_USAGE) : cli_fail("run", ctx, st);
    }
    if (!rc) rc = execute(&o, ctx, k, args, nargs);
    free_args(args, parsed);
    free(args);
    clrun_kernel_free(k);
    clrun_prog_free(prog);
    clrun_close(ctx);
    return rc;
}
