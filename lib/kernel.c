/* kernel.c — kernels and argument setting with signature checks (launch.c launches them, event.c
 * times them). */
#include "internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The argument info of kernel `name` (nargs arguments) into args: from the driver, else from the
 * program's cache entry (program.c, arg_info_text). 0 when neither has it. */
static int read_args(cl_kernel kern, const clrun_prog *p, const char *name, unsigned nargs, struct clrun__arginfo *args)
{
    unsigned i = 0;
    for (; i < nargs; i++) {
        struct clrun__arginfo *a = &args[i];
        if (clGetKernelArgInfo(kern, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof a->aq, &a->aq, NULL) != CL_SUCCESS) break;
        clGetKernelArgInfo(kern, i, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof a->tq, &a->tq, NULL);
        clGetKernelArgInfo(kern, i, CL_KERNEL_ARG_TYPE_NAME, sizeof a->type - 1, a->type, NULL);
        clGetKernelArgInfo(kern, i, CL_KERNEL_ARG_NAME, sizeof a->name - 1, a->name, NULL);
    }
    if (i == nargs) return 1;
    const char *t = p->arginfo;
    const size_t nlen = strlen(name);
    while (t && *t) { /* "k NAME NARGS" lines, each followed by its arguments' lines */
        const char *eol = strchr(t, '\n');
        if (!eol) return 0;
        if (t[0] == 'k' && t[1] == ' ' && strncmp(t + 2, name, nlen) == 0 && t[2 + nlen] == ' ' &&
            strtoul(t + 3 + nlen, NULL, 10) == nargs) {
            for (i = 0, t = eol + 1; i < nargs; i++, t = eol + 1) {
                struct clrun__arginfo *a = &args[i];
                char *end;
                if (!(eol = strchr(t, '\n'))) return 0;
                a->aq = (cl_kernel_arg_address_qualifier)strtoul(t, &end, 10);
                a->tq = (cl_kernel_arg_type_qualifier)strtoull(end, &end, 10);
                const char *tab = memchr(end, '\t', (size_t)(eol - end));
                if (*end != ' ' || !tab || (size_t)(tab - end - 1) >= sizeof a->type || (size_t)(eol - tab - 1) >= sizeof a->name) return 0;
                memcpy(a->type, end + 1, (size_t)(tab - end - 1));
                a->type[tab - end - 1] = 0;
                memcpy(a->name, tab + 1, (size_t)(eol - tab - 1));
                a->name[eol - tab - 1] = 0;
            }
            return 1;
        }
        t = eol + 1;
    }
    return 0;
}

/* C++ name text in one spelling: spaces only where they separate two words (`k< float,2 >` → `k<float,2>`). */
static void cxx_norm(const char *s, size_t n, char *out, size_t cap)
{
    size_t w = 0;
    for (size_t i = 0; i < n && w + 1 < cap; i++) {
        if (isspace((unsigned char)s[i])) {
            size_t j = i;
            while (j < n && isspace((unsigned char)s[j])) j++;
            if (w && j < n && (isalnum((unsigned char)out[w - 1]) || out[w - 1] == '_') && (isalnum((unsigned char)s[j]) || s[j] == '_'))
                out[w++] = ' ';
            i = j - 1;
            continue;
        }
        out[w++] = s[i];
    }
    out[w] = 0;
}

/* A kernel of a program translated from CUDA, named as CUDA names it: the notes ahead of its code
 * (`// clrun: kernel reduce<float, 256> is reduce_clrun_t0`) give the OpenCL C name, into buf. NULL
 * where none names it. */
static const char *cuda_alias(const clrun_prog *p, const char *name, char *buf, size_t cap)
{
    static const char head[] = "// clrun: kernel ";
    if (!p->source || strncmp(p->source, "/* translated from CUDA by clrun */", 35)) return NULL;
    char want[512], have[512];
    cxx_norm(name, strlen(name), want, sizeof want);
    const char *end = strstr(p->source, "\n#line "); /* the notes come before the user's code */
    for (const char *q = strstr(p->source, head); q && (!end || q < end); q = strstr(q + 1, head)) {
        const char *a = q + sizeof head - 1, *eol = strchr(a, '\n'), *is = NULL;
        if (!eol) break;
        for (const char *r = a; r + 4 <= eol; r++)
            if (!strncmp(r, " is ", 4)) is = r; /* the last " is ": the name may hold none */
        const char *takes = strstr(a, " takes after ");
        if (!is || (takes && takes < eol)) continue;
        cxx_norm(a, (size_t)(is - a), have, sizeof have);
        if (strcmp(have, want)) continue;
        const char *c = is + 4;
        size_t n = 0;
        while (c + n < eol && (isalnum((unsigned char)c[n]) || c[n] == '_') && n + 1 < cap) n++;
        memcpy(buf, c, n), buf[n] = 0;
        return n ? buf : NULL;
    }
    return NULL;
}

clrun_status clrun_kernel_new(clrun_prog *p, const char *name, clrun_kernel **out)
{
    if (!p) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_kernel_new: p is NULL");
    clrun_ctx *ctx = p->ctx;
    cl_int err = CL_SUCCESS;
    clrun_kernel *k = NULL;
    cl_uint nargs = 0;
    clrun_status st = CLRUN_OK;
    if (!out || !name) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_kernel_new: name and out must not be NULL");
    *out = NULL;
    char alias[256];
    const char *cl_name = cuda_alias(p, name, alias, sizeof alias);
    cl_kernel kern = clCreateKernel(p->program, cl_name ? cl_name : name, &err);
    if (!kern) {
        char names[2048] = "";
        clGetProgramInfo(p->program, CL_PROGRAM_KERNEL_NAMES, sizeof names - 1, names, NULL);
        char *key = strstr(names, CLRUN__KEY_KERNEL); /* the cache's key kernel is clrun's, not the program's */
        if (key) {
            char *end = strchr(key, ';');
            if (end) memmove(key, end + 1, strlen(end + 1) + 1);
            else key[key > names ? -1 : 0] = 0;
        }
        if (err == CL_INVALID_KERNEL_NAME)
            return clrun__fail(ctx, CLRUN_NOT_FOUND, "%s has no kernel named \"%s\"; its kernels: %s", p->label, name,
                               names[0] ? names : "(none)");
        return clrun__fail_cl(ctx, err, "clCreateKernel", "making kernel %s of %s", name, p->label);
    }
    clGetKernelInfo(kern, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
    k = calloc(1, sizeof *k);
    if (!k || !(k->name = clrun__strdup(name)) || !(k->set = calloc(nargs ? nargs : 1, 1)) ||
        !(k->size = calloc(nargs ? nargs : 1, sizeof *k->size)) || !(k->local = calloc(nargs ? nargs : 1, sizeof *k->local))) {
        st = clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "out of memory making kernel %s", name);
        goto fail;
    }
    k->prog = p;
    k->kernel = kern;
    k->nargs = nargs;
    if (nargs > 0) {
        if (!(k->args = calloc(nargs, sizeof *k->args))) {
            st = clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "out of memory making kernel %s", name);
            goto fail;
        }
        if (!read_args(kern, p, name, nargs, k->args)) {
            free(k->args);
            k->args = NULL;
            if (clrun__verbose())
                fprintf(stderr, "clrun: %s: no argument info for kernel %s; its arguments are not checked\n", p->label, name);
        }
    }
    *out = k;
    return CLRUN_OK;
fail:
    if (k) {
        free(k->name);
        free(k->set);
        free(k->size);
        free(k->local);
        free(k->args);
        free(k);
    }
    clReleaseKernel(kern);
    return st;
}

void clrun_kernel_free(clrun_kernel *k)
{
    if (!k) return;
    clReleaseKernel(k->kernel);
    free(k->name);
    free(k->set);
    free(k->size);
    free(k->local);
    free(k->args);
    free(k);
}

unsigned clrun_kernel_nargs(const clrun_kernel *k) { return k ? k->nargs : 0; }
const char *clrun_kernel_name(const clrun_kernel *k) { return k ? k->name : NULL; }
cl_kernel clrun_kernel_cl(const clrun_kernel *k) { return k ? k->kernel : NULL; }

clrun_status clrun_kernel_arg_info(clrun_kernel *k, unsigned i, clrun_arg_info *out)
{
    if (!k) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_kernel_arg_info: k is NULL");
    clrun_ctx *ctx = k->prog->ctx;
    if (!out) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_kernel_arg_info: out is NULL");
    memset(out, 0, sizeof *out);
    if (i >= k->nargs)
        return clrun__fail(ctx, CLRUN_ARG_MISMATCH, "kernel %s takes %u arguments; there is no argument %u", k->name, k->nargs, i);
    if (!k->args) return clrun__fail(ctx, CLRUN_UNSUPPORTED, "the driver reports no argument info for kernel %s", k->name);
    const cl_kernel_arg_address_qualifier aq = k->args[i].aq;
    out->kind = aq == CL_KERNEL_ARG_ADDRESS_GLOBAL     ? CLRUN_ARG_GLOBAL
                : aq == CL_KERNEL_ARG_ADDRESS_CONSTANT ? CLRUN_ARG_CONSTANT
                : aq == CL_KERNEL_ARG_ADDRESS_LOCAL    ? CLRUN_ARG_LOCAL
                                                       : CLRUN_ARG_VALUE;
    snprintf(out->type, sizeof out->type, "%.*s", (int)sizeof out->type - 1, k->args[i].type); /* longer names are cut */
    snprintf(out->name, sizeof out->name, "%.*s", (int)sizeof out->name - 1, k->args[i].name);
    return CLRUN_OK;
}

/* Describe argument i as "argument 2 ('float *b')" into buf. */
const char *clrun__arg_desc(clrun_kernel *k, unsigned i, char *buf, size_t size)
{
    if (k->args && i < k->nargs && (k->args[i].type[0] || k->args[i].name[0]))
        snprintf(buf, size, "argument %u (%s %s) of kernel %s", i, k->args[i].type, k->args[i].name, k->name);
    else snprintf(buf, size, "argument %u of kernel %s", i, k->name);
    return buf;
}

enum kind { K_GLOBAL, K_LOCAL, K_VALUE };

/* Normalise "unsigned int" to "uint" and so on; returns 1 if the result is an OpenCL scalar name. */
static int scalar_name(const char *in, char *out, size_t size)
{
    static const char *const scalars[] = {"char",  "uchar", "short",  "ushort", "int",  "uint", "long",
                                          "ulong", "float", "double", "half",   "bool", NULL};
    char t[128];
    size_t n = 0;
    while (*in == ' ') in++;
    snprintf(t, sizeof t, "%s", in);
    n = strlen(t);
    while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\0')) t[--n] = 0;
    if (strncmp(t, "unsigned ", 9) == 0) snprintf(out, size, "u%s", t + 9);
    else snprintf(out, size, "%s", t);
    if (strcmp(out, "uint") == 0 || strcmp(out, "unsigned") == 0) snprintf(out, size, "uint");
    for (int i = 0; scalars[i]; i++)
        if (strcmp(out, scalars[i]) == 0) return 1;
    return 0;
}

/* Check index, kind and (for scalars) type against the signature; `want` is the scalar name. */
static clrun_status check_arg(clrun_kernel *k, unsigned i, enum kind kind, const char *want, const char *setter)
{
    clrun_ctx *ctx = k->prog->ctx;
    char desc[400];
    if (i >= k->nargs)
        return clrun__fail(ctx, CLRUN_ARG_MISMATCH, "%s: kernel %s takes %u argument%s; there is no argument %u", setter, k->name, k->nargs,
                           k->nargs == 1 ? "" : "s", i);
    if (!k->args) return CLRUN_OK;
    const cl_kernel_arg_address_qualifier aq = k->args[i].aq;
    enum kind have = (aq == CL_KERNEL_ARG_ADDRESS_GLOBAL || aq == CL_KERNEL_ARG_ADDRESS_CONSTANT) ? K_GLOBAL
                     : aq == CL_KERNEL_ARG_ADDRESS_LOCAL                                          ? K_LOCAL
                                                                                                  : K_VALUE;
    static const char *const kinds[] = {"a __global or __constant buffer", "__local memory", "a value"};
    if (have != kind)
        return clrun__fail(ctx, CLRUN_ARG_MISMATCH, "%s: %s expects %s, not %s", setter, clrun__arg_desc(k, i, desc, sizeof desc),
                           kinds[have], kinds[kind]);
    if (kind == K_VALUE && want) {
        char norm[128];
        const char *type = k->args[i].type;
        if (scalar_name(type, norm, sizeof norm) && strcmp(norm, want) != 0)
            return clrun__fail(ctx, CLRUN_ARG_MISMATCH, "%s: %s is of type %s, not %s", setter, clrun__arg_desc(k, i, desc, sizeof desc),
                               type, want);
    }
    return CLRUN_OK;
}

static clrun_status set(clrun_kernel *k, unsigned i, size_t size, const void *value, const char *setter)
{
    char desc[400];
    cl_int err = clSetKernelArg(k->kernel, i, size, value);
    if (err != CL_SUCCESS)
        return clrun__fail_cl(k->prog->ctx, err, "clSetKernelArg", "%s: setting %s", setter, clrun__arg_desc(k, i, desc, sizeof desc));
    k->set[i] = 1;
    return CLRUN_OK;
}

clrun_status clrun_arg_buf(clrun_kernel *k, unsigned i, clrun_buf *b)
{
    if (!k) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_arg_buf: k is NULL");
    clrun_status st = check_arg(k, i, K_GLOBAL, NULL, "clrun_arg_buf");
    if (st != CLRUN_OK) return st;
    if (!b) return set(k, i, sizeof(cl_mem), NULL, "clrun_arg_buf");
    if (b->ctx != k->prog->ctx) { /* another context's memory: drivers crash, or read another device's addresses */
        char desc[400];
        return clrun__fail(k->prog->ctx, CLRUN_INVALID_ARG,
                           "clrun_arg_buf: %s: the buffer belongs to another context (%s); a kernel takes "
                           "buffers of its own program's context only",
                           clrun__arg_desc(k, i, desc, sizeof desc), b->ctx->info.name);
    }
    return set(k, i, sizeof(cl_mem), &b->mem, "clrun_arg_buf");
}

clrun_status clrun_arg_local(clrun_kernel *k, unsigned i, size_t bytes)
{
    if (!k) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_arg_local: k is NULL");
    clrun_status st = check_arg(k, i, K_LOCAL, NULL, "clrun_arg_local");
    if (st != CLRUN_OK) return st;
    if (bytes == 0) return clrun__fail(k->prog->ctx, CLRUN_INVALID_ARG, "clrun_arg_local: argument %u: 0 bytes of local memory", i);
    const uint64_t have = k->prog->ctx->info.local_mem;
    if (have && bytes > have)
        return clrun__fail(k->prog->ctx, CLRUN_INVALID_ARG, "clrun_arg_local: argument %u: %zu bytes of local memory; %s has %llu", i,
                           bytes, k->prog->ctx->info.name, (unsigned long long)have);
    if ((st = set(k, i, bytes, NULL, "clrun_arg_local"))) return st;
    k->local[i] = bytes;
    return CLRUN_OK;
}

#define CLRUN__SCALAR(suffix, ctype, clname)                                                     \
    clrun_status clrun_arg_##suffix(clrun_kernel *k, unsigned i, ctype v)                        \
    {                                                                                            \
        if (!k) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_arg_" #suffix ": k is NULL"); \
        clrun_status st = check_arg(k, i, K_VALUE, clname, "clrun_arg_" #suffix);                \
        return st != CLRUN_OK ? st : set(k, i, sizeof v, &v, "clrun_arg_" #suffix);              \
    }
CLRUN__SCALAR(i8, int8_t, "char")
CLRUN__SCALAR(u8, uint8_t, "uchar")
CLRUN__SCALAR(i16, int16_t, "short")
CLRUN__SCALAR(u16, uint16_t, "ushort")
CLRUN__SCALAR(i32, int32_t, "int")
CLRUN__SCALAR(u32, uint32_t, "uint")
CLRUN__SCALAR(i64, int64_t, "long")
CLRUN__SCALAR(u64, uint64_t, "ulong")
CLRUN__SCALAR(f32, float, "float")
CLRUN__SCALAR(f64, double, "double")
CLRUN__SCALAR(f16, uint16_t, "half")
#undef CLRUN__SCALAR

/* sizeof(type) on the device, from a probe kernel built from the program's own source and options
 * (through the binary cache); 0 when it cannot be had. The context's last error is kept. */
static size_t probe_size(clrun_kernel *k, const char *type)
{
    clrun_prog *p = k->prog, *probe = NULL;
    clrun_ctx *ctx = p->ctx;
    if (!p->source || !type[0] || strspn(type, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_ ") != strlen(type))
        return 0;
    static const char fmt[] = "\n__kernel void clrun_sizeof_probe(__global ulong *clrun_o) { clrun_o[0] = sizeof(%s); }\n";
    size_t n = strlen(p->source), cap = n + sizeof fmt + strlen(type);
    char *text = malloc(cap), *saved = ctx->err; /* the probe's own errors go to a fresh text, dropped after */
    const size_t saved_cap = ctx->err_cap;
    if (!text) return 0;
    ctx->err = NULL, ctx->err_cap = 0;
    memcpy(text, p->source, n);
    snprintf(text + n, cap - n, fmt, type);
    clrun_kernel *pk = NULL;
    clrun_buf *b = NULL;
    cl_ulong got = 0;
    const size_t one = 1;
    if (clrun_prog_source(ctx, text, p->label, p->options, &probe) != CLRUN_OK || clrun_kernel_new(probe, "clrun_sizeof_probe", &pk) ||
        clrun_buf_new(ctx, sizeof got, 0, &b) || clrun_arg_buf(pk, 0, b) || clrun_launch(pk, 1, &one, NULL) ||
        clrun_download(b, 0, &got, sizeof got))
        got = 0;
    clrun_buf_free(b);
    clrun_kernel_free(pk);
    clrun_prog_free(probe);
    free(text);
    free(ctx->err);
    ctx->err = saved, ctx->err_cap = saved_cap;
    return (size_t)got;
}

/* The size of by-value argument i: scalars and vectors from their type's name (a 3-vector is the
 * size of a 4-vector), structs and unions by probe; 0 when unknown. */
static size_t value_size(clrun_kernel *k, unsigned i)
{
    static const struct {
        const char *name;
        size_t size;
    } scalars[] = {{"char", 1}, {"uchar", 1}, {"short", 2}, {"ushort", 2}, {"int", 4},  {"uint", 4},
                   {"long", 8}, {"ulong", 8}, {"float", 4}, {"double", 8}, {"half", 2}, {"size_t", 0}};
    char norm[128];
    if (k->size[i] || !k->args) return k->size[i];
    const char *type = k->args[i].type;
    scalar_name(type, norm, sizeof norm);
    size_t m = strlen(norm);
    while (m > 0 && norm[m - 1] >= '0' && norm[m - 1] <= '9') m--;
    const unsigned width = norm[m] ? (unsigned)atoi(norm + m) : 1;
    for (size_t s = 0; s < sizeof scalars / sizeof *scalars; s++)
        if (strlen(scalars[s].name) == m && strncmp(norm, scalars[s].name, m) == 0 &&
            (width == 1 || width == 2 || width == 3 || width == 4 || width == 8 || width == 16))
            return k->size[i] = scalars[s].size * (width == 3 ? 4 : width);
    return k->size[i] = probe_size(k, type);
}

clrun_status clrun_arg_bytes(clrun_kernel *k, unsigned i, const void *value, size_t size)
{
    if (!k) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_arg_bytes: k is NULL");
    if (!value) return clrun__fail(k->prog->ctx, CLRUN_INVALID_ARG, "clrun_arg_bytes: value is NULL");
    char desc[400];
    clrun_status st = check_arg(k, i, K_VALUE, NULL, "clrun_arg_bytes");
    if (st != CLRUN_OK) return st;
    if (!value || size == 0) return clrun__fail(k->prog->ctx, CLRUN_INVALID_ARG, "clrun_arg_bytes: argument %u: no value", i);
    const size_t want = value_size(k, i); /* some drivers (PoCL) take any size and the kernel reads past the value */
    if (want && size != want)
        return clrun__fail(k->prog->ctx, CLRUN_ARG_MISMATCH, "clrun_arg_bytes: %s is %zu bytes; %zu given",
                           clrun__arg_desc(k, i, desc, sizeof desc), want, size);
    return set(k, i, size, value, "clrun_arg_bytes");
}
