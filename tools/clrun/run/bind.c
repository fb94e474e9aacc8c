/* bind.c — `clrun run`'s arguments bound to the kernel's signature: types from its argument info,
 * buffers made and filled. */
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
            return run_usage_error("%s expects %s, not the values '%s'", desc, info->kind == CLRUN_ARG_LOCAL ? "local:BYTES" : "a buffer",
                                   r->spec);
        if (base_type(info->type, base, sizeof base)) { /* a scalar or a vector: element type and count */
            const unsigned need = w ? w : 1;
            if (strcmp(base, clrun_dtype_cl_name(r->a.dtype)) != 0)
                return run_usage_error("%s gets %s values from '%s'; the kernel wants %s", desc, clrun_dtype_name(r->a.dtype), r->spec,
                                       base);
            if (r->a.count != need && !(need == 3 && r->a.count == 4))
                return run_usage_error("%s takes %u value%s; '%s' gives %zu (%zu bytes)", desc, need, need == 1 ? "" : "s", r->spec,
                                       r->a.count, r->a.bytes);
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
    return run_usage_error("%s: the driver refuses %zu bytes from '%s' (%s); give exactly the size of %s, padding included", desc,
                           r->a.bytes, r->spec, clrun_last_error(ctx), info ? info->type : "its type");
}

void run_free_args(struct rarg *args, int n)
{
    for (int i = 0; i < n; i++) {
        clrun_array_free(&args[i].a);
        clrun_buf_free(args[i].buf);
    }
}

/* Bind argument i: resolve untyped scalars and out:like, check against the signature, make and fill
 * buffers. Returns an exit code. */
int run_bind_arg(clrun_ctx *ctx, clrun_kernel *k, struct rarg *args, int nargs, int i)
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
            return run_usage_error("%s '%s': argument %d is not a buffer with a shape of its own", desc, r->spec, r->like);
        const clrun_array *m = &args[r->like].a;
        if (clrun_array_new(&r->a, r->like_type_set ? r->like_type : m->dtype, m->ndim, m->shape) != CLRUN_OK)
            return fprintf(stderr, "clrun run: %s\n", clrun_last_error(NULL)), EXIT_RUNTIME;
        r->kind = R_BUF;
    }
    if (r->kind == R_BARE) {
        char base[64];
        clrun_dtype t;
        int rc;
        if (!have_info) return run_usage_error("%s '%s': this driver reports no argument types; write TYPE:VALUE", desc, r->spec);
        if (info.kind != CLRUN_ARG_VALUE) return run_usage_error("%s expects a buffer or local memory, not the number '%s'", desc, r->spec);
        const int scalar = base_type(info.type, base, sizeof base) && strcmp(base, info.type) == 0;
        if ((!scalar && !vector_width(info.type)) || clrun_dtype_parse(base, &t) != CLRUN_OK)
            return run_usage_error("%s: cannot infer values of type %s from '%s'; write TYPE:VALUE or TYPE:V,V,... (the members' type)",
                                   desc, info.type, r->spec);
        if ((rc = run_parse_list(t, r->bare, &r->a, r->spec, desc, base))) return rc;
        r->kind = scalar && r->a.count == 1 ? R_SCALAR : R_BYTES;
    }
    if (have_info && r->kind == R_BUF && (info.kind == CLRUN_ARG_GLOBAL || info.kind == CLRUN_ARG_CONSTANT)) {
        char base[64];
        const char *want = clrun_dtype_cl_name(r->a.dtype);
        if (r->a.dtype == CLRUN_BOOL) want = "uchar";
        if (base_type(info.type, base, sizeof base) && strcmp(base, want) != 0 && !(r->a.dtype == CLRUN_BOOL && strcmp(base, "char") == 0))
            return run_usage_error("%s gets %s data from '%s'; the kernel wants %s", desc, clrun_dtype_name(r->a.dtype), r->spec, base);
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
            return run_usage_error("%s expects %s, not the scalar '%s'", desc, info.kind == CLRUN_ARG_LOCAL ? "local:BYTES" : "a buffer",
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
