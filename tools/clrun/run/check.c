/* check.c — `clrun run --check` against expected files, and the dumps of .sim files. */
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

int run_check(const struct run_opts *o, const struct check *c, const struct rarg *r, int index, json_t *js)
{
    clrun_array e;
    if (clrun_npy_read(c->path, &e) != CLRUN_OK) return run_usage_error("--check %s: %s", c->target, clrun_last_error(NULL));
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
        json_t *r = json_pack("{s:s, s:s, s:I, s:I}", "arg", c->target, "expected", c->path, "mismatches", (json_int_t)bad, "count",
                              (json_int_t)e.count);
        if (bad)
            json_object_update_new(
                r, json_pack("{s:I, s:o, s:o}", "worst_index", (json_int_t)worst, "got", cli_json_num(g), "want", cli_json_num(x)));
        json_array_append_new(js, r);
    }
    clrun_array_free(&e);
    return rc;
}

int run_find_arg(clrun_kernel *k, int nargs, const char *target)
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
void run_dump(FILE *f, const char *name, const clrun_array *a, int hex)
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
