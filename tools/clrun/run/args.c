/* args.c — `clrun run`'s argument forms: FORM:... parsed into arguments (struct rarg). */
#include "run.h"
#include "../values.h"

#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int run_usage_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "clrun run: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    return EXIT_USAGE;
}

int run_parse_sizes(const char *s, size_t out[3], unsigned *dims, const char *what)
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
            return run_usage_error("%s '%s': want 1 to 3 positive integers separated by commas", what, s);
        out[(*dims)++] = (size_t)v;
    }
    if (*dims == 0) return run_usage_error("%s is empty", what);
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
            return run_usage_error("argument '%s': '%s' is not a shape (a count like 400, or 20x30)", spec, s);
        shape[nd++] = (size_t)v;
    }
    if (nd == 0) return run_usage_error("argument '%s': missing shape", spec);
    size_t count = 1;
    for (unsigned i = 0; i < nd; i++) count *= shape[i];
    if (count == 0) return run_usage_error("argument '%s': a buffer needs at least one element", spec);
    if (clrun_array_new(a, t, nd, shape) != CLRUN_OK) return fprintf(stderr, "clrun run: %s\n", clrun_last_error(NULL)), EXIT_RUNTIME;
    return 0;
}

static int parse_type(const char *s, clrun_dtype *t, const char *spec)
{
    if (clrun_dtype_parse(s, t) != CLRUN_OK) return run_usage_error("argument '%s': %s", spec, clrun_last_error(NULL));
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
        return run_usage_error("argument '%s': want local:BYTES with BYTES > 0", in->spec);
    if (r->save) return run_usage_error("argument '%s': local memory cannot be saved", in->spec);
    r->local = (size_t)v;
    return 0;
}

static int form_raw(struct rarg *r, const struct form_in *in)
{
    clrun_dtype t;
    int rc;
    const char *spec = in->spec;
    if (in->nf < 3) return run_usage_error("argument '%s': want raw:TYPE:FILE", spec);
    if ((rc = parse_type(in->f[1], &t, spec))) return rc;
    const char *path = spec + (in->f[2] - in->buf); /* the path may contain ':' */
    char pathbuf[1024];
    snprintf(pathbuf, sizeof pathbuf, "%s", path);
    if (r->save) pathbuf[strlen(pathbuf) - strlen(r->save) - 1] = 0;
    FILE *fp = fopen(pathbuf, "rb");
    if (!fp) return run_usage_error("argument '%s': cannot open %s: %s", spec, pathbuf, strerror(errno));
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    size_t es = clrun_dtype_size(t);
    if (n <= 0 || n % (long)es) {
        fclose(fp);
        return run_usage_error("argument '%s': %s has %ld bytes, not a positive multiple of %zu (%s)", spec, pathbuf, n, es,
                               clrun_dtype_name(t));
    }
    size_t shape[1] = {(size_t)n / es};
    if (clrun_array_new(&r->a, t, 1, shape) != CLRUN_OK || fread(r->a.data, 1, (size_t)n, fp) != (size_t)n) {
        fclose(fp);
        return run_usage_error("argument '%s': cannot read %s", spec, pathbuf);
    }
    fclose(fp);
    return 0;
}

static int form_zeros(struct rarg *r, const struct form_in *in)
{
    (void)r; /* clrun_array_new zeroed it */
    if (in->nf != 3) return run_usage_error("argument '%s': want %s:TYPE:SHAPE", in->spec, in->f[0]);
    return 0;
}

/* Read the TYPE:SHAPE of a typed form into r->a and in. */
static int typed(struct rarg *r, struct form_in *in)
{
    int rc;
    if (in->nf < 3) return run_usage_error("argument '%s': want %s:TYPE:SHAPE...", in->spec, in->f[0]);
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
            return run_usage_error("argument '%s': want out:like=INDEX[:TYPE]", in->spec);
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
        return run_usage_error("argument '%s': want fill:TYPE:SHAPE:VALUE with a %s value", in->spec, clrun_dtype_name(in->t));
    for (size_t i = 1; i < r->a.count; i++) memcpy(in->d + i * in->es, in->d, in->es);
    return 0;
}

static int form_range(struct rarg *r, const struct form_in *in)
{
    unsigned char v0[8], v1[8];
    double start = 0, step = 1;
    if (in->nf > 5) return run_usage_error("argument '%s': want range:TYPE:SHAPE[:START[:STEP]]", in->spec);
    if (in->nf >= 4) {
        if (parse_value(in->t, in->f[3], v0, 0)) return run_usage_error("argument '%s': bad START '%s'", in->spec, in->f[3]);
        start = value_as_double(in->t, v0);
    }
    if (in->nf >= 5) {
        if (parse_value(in->t, in->f[4], v1, 0)) return run_usage_error("argument '%s': bad STEP '%s'", in->spec, in->f[4]);
        step = value_as_double(in->t, v1);
    }
    for (size_t i = 0; i < r->a.count; i++)
        if (value_from_double(in->t, start + step * (double)i, in->d + i * in->es))
            return run_usage_error("argument '%s': element %zu, %g, does not fit %s", in->spec, i, start + step * (double)i,
                                   clrun_dtype_name(in->t));
    return 0;
}

static int form_rand(struct rarg *r, const struct form_in *in)
{
    const clrun_dtype t = in->t;
    uint64_t seed = 1;
    double lo = 0, hi = 1;
    const int integer = t != CLRUN_F16 && t != CLRUN_BF16 && t != CLRUN_F32 && t != CLRUN_F64;
    if (in->nf == 5 || in->nf > 6) return run_usage_error("argument '%s': want rand:TYPE:SHAPE[:SEED[:LO:HI]]", in->spec);
    if (in->nf >= 4) {
        char *end;
        seed = strtoull(in->f[3], &end, 0);
        if (*end || end == in->f[3]) return run_usage_error("argument '%s': bad SEED '%s'", in->spec, in->f[3]);
    }
    if (in->nf == 6) {
        char *e1, *e2;
        lo = strtod(in->f[4], &e1);
        hi = strtod(in->f[5], &e2);
        if (*e1 || *e2 || e1 == in->f[4] || e2 == in->f[5] || !(hi > lo)) return run_usage_error("argument '%s': want LO < HI", in->spec);
    } else if (integer) {
        lo = 0, hi = t == CLRUN_BOOL ? 2 : 100;
    }
    for (size_t i = 0; i < r->a.count; i++) {
        double u = (double)(splitmix(&seed) >> 11) * (1.0 / 9007199254740992.0);
        double v = lo + (hi - lo) * u;
        if (value_from_double(t, integer ? floor(v) : v, in->d + i * in->es))
            return run_usage_error("argument '%s': LO and HI must lie within %s's range", in->spec, clrun_dtype_name(t));
    }
    return 0;
}

/* A comma-separated list of TYPE values into a (count 1 for a single value); errors name `what`
 * and the type as `tname`. */
int run_parse_list(clrun_dtype t, const char *text, clrun_array *a, const char *spec, const char *what, const char *tname)
{
    size_t n = 1;
    for (const char *c = text; *c; c++) n += *c == ',';
    if (n > 64) return run_usage_error("argument '%s': %zu values; a by-value argument takes at most 64", spec, n);
    size_t shape[1] = {n};
    if (clrun_array_new(a, t, n > 1, shape) != CLRUN_OK) return fprintf(stderr, "clrun run: %s\n", clrun_last_error(NULL)), EXIT_RUNTIME;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", text);
    size_t i = 0, es = clrun_dtype_size(t);
    for (char *p = buf, *c;; p = c + 1) {
        if ((c = strchr(p, ','))) *c = 0;
        if (parse_value(t, p, (char *)a->data + i++ * es, 0)) return run_usage_error("%s: '%s' is not a valid %s", what, p, tname);
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
int run_parse_arg(const char *spec, struct rarg *r)
{
    char buf[1024];
    memset(r, 0, sizeof *r);
    r->like = -1;
    r->spec = spec;
    if (strlen(spec) >= sizeof buf) return run_usage_error("argument '%.40s...' is too long", spec);
    snprintf(buf, sizeof buf, "%s", spec);
    char *at = strrchr(buf, '@');
    if (at) {
        *at = 0;
        if (!at[1]) return run_usage_error("argument '%s': nothing after '@' (want @OUT.npy)", spec);
        r->save = spec + (at - buf) + 1;
    }
    const size_t len = strlen(buf);
    if (strcmp(buf, "null") == 0) {
        if (r->save) return run_usage_error("argument '%s': a null buffer cannot be saved", spec);
        r->kind = R_NULL;
        return 0;
    }
    if (!strchr(buf, ':') && len > 4 && strcmp(buf + len - 4, ".npy") == 0) {
        r->kind = R_BUF;
        if (clrun_npy_read(buf, &r->a) != CLRUN_OK) return run_usage_error("argument '%s': %s", spec, clrun_last_error(NULL));
        if (r->a.count == 0) return run_usage_error("argument '%s': the array is empty", spec);
        return 0;
    }
    if (!strchr(buf, ':')) {
        if (r->save) return run_usage_error("argument '%s': only buffers can be saved", spec);
        r->kind = R_BARE;
        r->bare = spec;
        for (char *p = buf, *end;; p = end + 1) { /* a number, or numbers separated by commas */
            strtod(p, &end);
            if ((*end && *end != ',') || end == p)
                return run_usage_error("argument '%s' is neither a file.npy nor a number nor one of the forms in --help", spec);
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
        if (r->save) return run_usage_error("argument '%s': only buffers can be saved", spec);
        r->kind = strchr(f[1], ',') ? R_BYTES : R_SCALAR;
        char what[1100];
        snprintf(what, sizeof what, "argument '%s'", spec);
        return run_parse_list(t, f[1], &r->a, spec, what, clrun_dtype_name(t));
    }
    return run_usage_error("argument '%s': unknown form '%s' (see clrun run --help)", spec, f[0]);
}

/* The scalar element type of a signature type ("float*" -> float, "uint4*" -> uint); 0 if unknown. */
