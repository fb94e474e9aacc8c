/* sim.c — Oclgrind .sim file parser (see sim.h). */
#include "sim.h"
#include "values.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int fail(struct sim_parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct sim_parser *p, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(p->err, sizeof p->err, "line %u: ", p->line);
    va_start(ap, fmt);
    vsnprintf(p->err + n, sizeof p->err - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static void skip_ws(struct sim_parser *p)
{
    while (p->pos < p->len && isspace((unsigned char)p->text[p->pos])) {
        if (p->text[p->pos] == '\n') p->line++;
        p->pos++;
    }
}

/* Next whitespace-separated token into out; 0, or -1 at the end of the file. */
static int token(struct sim_parser *p, char *out, size_t size, const char *what)
{
    skip_ws(p);
    if (p->pos >= p->len) return fail(p, "unexpected end of file while reading %s", what);
    size_t n = 0;
    while (p->pos < p->len && !isspace((unsigned char)p->text[p->pos])) {
        if (n + 1 >= size) return fail(p, "%s is too long", what);
        out[n++] = p->text[p->pos++];
    }
    out[n] = 0;
    return 0;
}

static int size3(struct sim_parser *p, size_t v[3], const char *what)
{
    char tok[64];
    for (int i = 0; i < 3; i++) {
        if (token(p, tok, sizeof tok, what)) return -1;
        char *end;
        unsigned long long x = strtoull(tok, &end, 10);
        if (*end || tok[0] == '-' || x == 0 || x > (1ULL << 40)) return fail(p, "%s: '%s' is not a positive integer", what, tok);
        v[i] = (size_t)x;
    }
    return 0;
}

int sim_open(struct sim_parser *p, const char *text, size_t len, struct sim_head *h)
{
    memset(p, 0, sizeof *p);
    memset(h, 0, sizeof *h);
    p->line = 1;
    p->text = malloc(len + 1);
    if (!p->text) return fail(p, "out of memory");
    memcpy(p->text, text, len);
    p->text[len] = 0;
    p->len = len;
    for (size_t i = 0; i < len; i++) {
        if (p->text[i] == 0) p->text[i] = ' ';
        if (p->text[i] == '#')
            while (i < len && p->text[i] != '\n') p->text[i++] = ' ';
    }
    if (token(p, h->program, sizeof h->program, "the program file")) return -1;
    if (token(p, h->kernel, sizeof h->kernel, "the kernel name")) return -1;
    if (size3(p, h->ndrange, "the NDRange")) return -1;
    if (size3(p, h->wgsize, "the work-group size")) return -1;
    return 0; /* a work-group size that does not divide the NDRange is the device's to take or refuse (OpenCL 2.0+) */
}

/* Default type from the kernel's type name ("float*", "uint", "float4" ...). */
static int type_from_signature(const char *type, clrun_dtype *t)
{
    static const struct {
        const char *prefix;
        clrun_dtype t;
    } map[] = {{"uchar", CLRUN_U8},           {"char", CLRUN_I8},          {"ushort", CLRUN_U16},       {"short", CLRUN_I16},
               {"uint", CLRUN_U32},           {"int", CLRUN_I32},          {"ulong", CLRUN_U64},        {"long", CLRUN_I64},
               {"float", CLRUN_F32},          {"double", CLRUN_F64},       {"void*", CLRUN_U8},         {"unsigned char", CLRUN_U8},
               {"unsigned short", CLRUN_U16}, {"unsigned int", CLRUN_U32}, {"unsigned long", CLRUN_U64}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (strncmp(type, map[i].prefix, strlen(map[i].prefix)) == 0) return *t = map[i].t, 0;
    return -1;
}

int sim_next_arg(struct sim_parser *p, unsigned index, const clrun_arg_info *info, struct sim_arg *a)
{
    char header[512], fillv[128] = "", rangev[256] = "";
    int have_type = 0, hex = 0, noinit = 0, null = 0;
    long long size = -1;
    memset(a, 0, sizeof *a);
    skip_ws(p);
    if (p->pos >= p->len) return fail(p, "unexpected end of file: no header for argument %u (%s)", index, info->name);
    if (p->text[p->pos] != '<') return fail(p, "expected an argument header <...> for argument %u (%s)", index, info->name);
    size_t s = ++p->pos, e = s;
    while (e < p->len && p->text[e] != '\n' && p->text[e] != '>') e++;
    if (e >= p->len || p->text[e] != '>') return fail(p, "missing '>' at the end of the header of argument %u (%s)", index, info->name);
    if (e - s >= sizeof header) return fail(p, "the header of argument %u is too long", index);
    memcpy(header, p->text + s, e - s);
    header[e - s] = 0;
    p->pos = e + 1;
    for (char *save = NULL, *tok = strtok_r(header, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
        clrun_dtype t;
        if (strcmp(tok, "dump") == 0) a->dump = 1;
        else if (strcmp(tok, "hex") == 0) hex = a->hex = 1;
        else if (strcmp(tok, "null") == 0) null = 1;
        else if (strcmp(tok, "ro") == 0) a->ro = 1;
        else if (strcmp(tok, "wo") == 0) a->wo = 1;
        else if (strcmp(tok, "noinit") == 0) noinit = 1;
        else if (strncmp(tok, "fill=", 5) == 0 && tok[5]) snprintf(fillv, sizeof fillv, "%s", tok + 5);
        else if (strncmp(tok, "range=", 6) == 0 && tok[6]) snprintf(rangev, sizeof rangev, "%s", tok + 6);
        else if (strncmp(tok, "size=", 5) == 0) {
            char *end;
            size = strtoll(tok + 5, &end, 10);
            if (*end || end == tok + 5 || size < 0 || size > (1LL << 40)) return fail(p, "argument %u: invalid size '%s'", index, tok + 5);
        } else if (strcmp(tok, "char") && strcmp(tok, "uchar") && strcmp(tok, "short") && strcmp(tok, "ushort") && strcmp(tok, "int") &&
                   strcmp(tok, "uint") && strcmp(tok, "long") && strcmp(tok, "ulong") && strcmp(tok, "float") && strcmp(tok, "double")) {
            return fail(p, "argument %u: unrecognised header token '%s'", index, tok);
        } else {
            if (have_type++) return fail(p, "argument %u: the type is given twice", index);
            clrun_dtype_parse(tok, &t);
            a->type = t;
        }
    }
    int is_buf = info->kind == CLRUN_ARG_GLOBAL || info->kind == CLRUN_ARG_CONSTANT;
    if (null) {
        if (!is_buf) return fail(p, "argument %u (%s): 'null' is only valid for buffers", index, info->name);
        if (size != -1 || fillv[0] || rangev[0] || a->dump) return fail(p, "argument %u: 'null' goes with no other descriptor", index);
        a->kind = SIM_NULL;
        return 0;
    }
    if (size < 0) return fail(p, "argument %u (%s): size= is required", index, info->name);
    if (size == 0 && !is_buf) /* a buffer may be empty (the kernel gets a valid pointer it must not use) */
        return fail(p, "argument %u (%s): size=0 is only valid for buffers (%s needs at least one byte)", index, info->name,
                    info->kind == CLRUN_ARG_LOCAL ? "__local memory" : "a value");
    if (a->dump && !is_buf) return fail(p, "argument %u (%s): 'dump' is only valid for buffers", index, info->name);
    if (fillv[0] && rangev[0]) return fail(p, "argument %u: fill= and range= together", index);
    if (noinit && !is_buf) return fail(p, "argument %u (%s): 'noinit' is only valid for buffers", index, info->name);
    a->size = (size_t)size;
    a->noinit = noinit;
    if (info->kind == CLRUN_ARG_LOCAL) {
        a->kind = SIM_LOCAL;
        return 0;
    }
    if (!have_type && type_from_signature(info->type, &a->type))
        return fail(p, "argument %u (%s %s): give its type in the header", index, info->type, info->name);
    a->kind = is_buf ? SIM_BUFFER : SIM_VALUE;
    size_t es = clrun_dtype_size(a->type), n = a->size / es;
    if (a->size % es)
        return fail(p, "argument %u: size %zu is not a multiple of the %s size %zu", index, a->size, clrun_dtype_cl_name(a->type), es);
    if (a->size > SIM_MAX_BYTES)
        return fail(p, "argument %u: size %zu is over the %d MiB a .sim argument may hold", index, a->size, SIM_MAX_BYTES >> 20);
    if (!fillv[0] && !rangev[0] && !noinit && n > (p->len - p->pos) / 2 + 1) /* each value takes 2 characters or more */
        return fail(p, "argument %u: size %zu wants %zu values, more than the %zu bytes left in the file can hold", index, a->size, n,
                    p->len - p->pos);
    size_t shape[1] = {n};
    if (clrun_array_new(&a->data, a->type, 1, shape) != CLRUN_OK) return fail(p, "argument %u: out of memory", index);
    unsigned char *d = a->data.data;
    if (fillv[0]) {
        if (parse_value(a->type, fillv, d, (hex ? VALUE_HEX : 0) | VALUE_WRAP))
            return fail(p, "argument %u: invalid fill value '%s'", index, fillv);
        for (size_t done = 1; done < n;) { /* doubling copies: log n memcpy calls */
            size_t m = done < n - done ? done : n - done;
            memcpy(d + done * es, d, m * es);
            done += m;
        }
    } else if (rangev[0]) {
        char *c1 = strchr(rangev, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        unsigned char v[3][8];
        if (!c1 || !c2) return fail(p, "argument %u: range wants START:INC:END, not '%s'", index, rangev);
        *c1 = *c2 = 0;
        if (parse_value(a->type, rangev, v[0], (hex ? VALUE_HEX : 0) | VALUE_WRAP) ||
            parse_value(a->type, c1 + 1, v[1], (hex ? VALUE_HEX : 0) | VALUE_WRAP) ||
            parse_value(a->type, c2 + 1, v[2], (hex ? VALUE_HEX : 0) | VALUE_WRAP))
            return fail(p, "argument %u: invalid range value", index);
        double st = value_as_double(a->type, v[0]), inc = value_as_double(a->type, v[1]), en = value_as_double(a->type, v[2]);
        double num = inc != 0 ? (en - st + inc) / inc : -1;
        if (!(num >= 1) || ceil(num) != num || (size_t)num != n)
            return fail(p, "argument %u: range %g:%g:%g does not give %zu values (the size)", index, st, inc, en, n);
        for (size_t i = 0; i < n; i++)
            if (value_from_double(a->type, st + inc * (double)i, d + i * es))
                return fail(p, "argument %u: range element %zu does not fit %s", index, i, clrun_dtype_cl_name(a->type));
    } else if (!noinit) {
        char tok[128];
        for (size_t i = 0; i < n; i++) {
            if (token(p, tok, sizeof tok, "argument values")) {
                return fail(p, "unexpected end of file: argument %u wants %zu values, found %zu", index, n, i);
            }
            if (parse_value(a->type, tok, d + i * es, (hex ? VALUE_HEX : 0) | VALUE_WRAP))
                return fail(p, "argument %u: '%s' is not a valid %s", index, tok, clrun_dtype_cl_name(a->type));
        }
    }
    return 0;
}

int sim_finish(struct sim_parser *p)
{
    skip_ws(p);
    if (p->pos < p->len) {
        char tok[64];
        token(p, tok, sizeof tok, "trailing text");
        return fail(p, "unexpected '%s' after the last argument", tok);
    }
    return 0;
}

void sim_close(struct sim_parser *p)
{
    free(p->text);
    p->text = NULL;
}

void sim_arg_free(struct sim_arg *a) { clrun_array_free(&a->data); }
