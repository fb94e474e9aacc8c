/* program.c — programs from files, strings or the embedded kernel set (their includes resolved by
 * source.c); builds through the binary cache; build hooks; build logs. */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file and line that physical line `line` of src stands for after its `#line N "FILE"`
 * directives, into file (n bytes); 0 where no directive comes before it. */
static unsigned presumed_line(const char *src, size_t len, unsigned line, char *file, size_t n)
{
    unsigned at = 1, dir_at = 0, dir_val = 0; /* the last directive's physical line, and the line it names next */
    for (size_t i = 0; i < len && at < line; at++) {
        const char *l = src + i, *e = memchr(l, '\n', len - i);
        const char *end = e ? e : src + len, *p = l;
        i = (size_t)(end - src) + (e ? 1 : 0);
        while (p < end && (*p == ' ' || *p == '\t')) p++;
        if (p == end || *p != '#') continue;
        for (p++; p < end && (*p == ' ' || *p == '\t');) p++;
        if (end - p < 6 || strncmp(p, "line", 4) || (p[4] != ' ' && p[4] != '\t')) continue;
        char *q = NULL;
        const unsigned long v = strtoul(p + 5, &q, 10);
        while (q < end && *q == ' ') q++;
        if (q == p + 5 || q >= end || *q != '"' || v == 0 || v > 0x7fffffff) continue;
        size_t w = 0;
        for (q++; q < end && *q != '"' && w + 1 < n; q++) file[w++] = (*q == '\\' && q + 1 < end) ? *++q : *q;
        file[w] = 0;
        dir_at = at, dir_val = (unsigned)v;
    }
    return dir_at ? dir_val + (line - dir_at - 1) : 0;
}

/* log with NVIDIA's "<kernel>:LINE:" (its compiler names no file and ignores #line) given as the
 * file and line src's #line directives say, malloc'd; NULL when out of memory. */
char *clrun__map_kernel_lines(const char *log, const char *src, size_t len)
{
    static const char tag[] = "<kernel>:";
    struct clrun__sbuf out = {0};
    const char *p = log, *q;
    while (src && (q = strstr(p, tag)) != NULL) {
        char *e = NULL, file[512];
        const unsigned long v = strtoul(q + sizeof tag - 1, &e, 10);
        const unsigned m =
            e > q + sizeof tag - 1 && *e == ':' && v < 0x7fffffff ? presumed_line(src, len, (unsigned)v, file, sizeof file) : 0;
        clrun__sb_add(&out, p, (size_t)(q - p));
        if (m) clrun__sb_printf(&out, "%s:%u", file, m), p = e;
        else clrun__sb_add(&out, q, sizeof tag - 1), p = q + sizeof tag - 1;
    }
    clrun__sb_add(&out, p, strlen(p));
    if (out.oom) {
        free(out.p);
        return NULL;
    }
    return out.p;
}

/* The build log (CUDA kernel text's lines and headers named, clrun__map_kernel_lines) after the
 * error in ctx's message. */
void clrun__build_log(clrun_ctx *ctx, cl_program program, const char *src, size_t len)
{
    size_t n = 0;
    if (clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS || n == 0) return;
    char *log = malloc(n + 1);
    if (!log) return;
    if (clGetProgramBuildInfo(program, ctx->device, CL_PROGRAM_BUILD_LOG, n, log, NULL) == CL_SUCCESS) {
        log[n] = 0;
        char *mapped = clrun__map_kernel_lines(log, src, len);
        clrun__append(ctx, "\n--- build log ---\n");
        clrun__append(ctx, mapped ? mapped : log);
        clrun__append(ctx, "\n--- end of build log ---");
        free(mapped);
    }
    free(log);
}

/* Binary of a built program, malloc'd; NULL when the driver gives none. */
unsigned char *clrun__program_binary(clrun_ctx *ctx, cl_program program, size_t *len)
{
    size_t size = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS || size == 0) return NULL;
    unsigned char *bin = malloc(size);
    if (!bin) return NULL;
    if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) != CL_SUCCESS) {
        free(bin);
        return NULL;
    }
    (void)ctx;
    *len = size;
    return bin;
}

/* Remove the first whole-word `option` from opts, in place; 1 when it was there. */
static int strip_option(char *opts, const char *option)
{
    const size_t n = strlen(option);
    for (char *p = opts; (p = strstr(p, option)) != NULL; p += n) {
        if ((p == opts || p[-1] == ' ') && (p[n] == 0 || p[n] == ' ')) {
            const char *rest = p[n] ? p + n + 1 : p + n;
            memmove(p, rest, strlen(rest) + 1);
            return 1;
        }
    }
    return 0;
}

/* ---- kernel argument info kept with a cached binary -------------------------------------------
 * The specification promises clGetKernelArgInfo only for programs built from source, and some
 * drivers (Intel's CPU runtime) drop it from programs made from a binary. The cache entry keeps it
 * as text after the binary: per kernel a line "k NAME NARGS", then per argument a line
 * "ADDRESS_QUALIFIER TYPE_QUALIFIER TYPE\tNAME". Names and types have no tab or newline. */

/* The info text of every kernel of a program built from source, appended to out. */
static void arg_info_text(cl_program program, struct clrun__sbuf *out)
{
    cl_uint n = 0;
    if (clCreateKernelsInProgram(program, 0, NULL, &n) != CL_SUCCESS || n == 0) return;
    cl_kernel *ks = calloc(n, sizeof *ks);
    if (!ks || clCreateKernelsInProgram(program, n, ks, NULL) != CL_SUCCESS) {
        free(ks);
        return;
    }
    int complete = 1;
    for (cl_uint i = 0; i < n; i++) {
        char kname[256] = "";
        cl_uint nargs = 0;
        clGetKernelInfo(ks[i], CL_KERNEL_FUNCTION_NAME, sizeof kname - 1, kname, NULL);
        clGetKernelInfo(ks[i], CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
        clrun__sb_printf(out, "k %s %u\n", kname, nargs);
        for (cl_uint a = 0; a < nargs; a++) {
            cl_kernel_arg_address_qualifier aq = 0;
            cl_kernel_arg_type_qualifier tq = 0;
            char type[CLRUN__ARG_TEXT] = "", name[CLRUN__ARG_TEXT] = "";
            if (clGetKernelArgInfo(ks[i], a, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq, NULL) != CL_SUCCESS) complete = 0;
            clGetKernelArgInfo(ks[i], a, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq, NULL);
            clGetKernelArgInfo(ks[i], a, CL_KERNEL_ARG_TYPE_NAME, sizeof type - 1, type, NULL);
            clGetKernelArgInfo(ks[i], a, CL_KERNEL_ARG_NAME, sizeof name - 1, name, NULL);
            clrun__sb_printf(out, "%u %llu %s\t%s\n", (unsigned)aq, (unsigned long long)tq, type, name);
        }
        clReleaseKernel(ks[i]);
    }
    free(ks);
    if (!complete) out->n = 0; /* none from this driver even from source: nothing to keep */
}

/* A cache entry's payload: the binary's length (8 bytes, little-endian), the binary, the info text. */
static unsigned char *pack_entry(const unsigned char *bin, size_t blen, const struct clrun__sbuf *info, size_t *len)
{
    const size_t ilen = info->oom ? 0 : info->n;
    unsigned char *e = malloc(8 + blen + ilen);
    if (!e) return NULL;
    for (int i = 0; i < 8; i++) e[i] = (unsigned char)((uint64_t)blen >> (8 * i));
    memcpy(e + 8, bin, blen);
    if (ilen) memcpy(e + 8 + blen, info->p, ilen);
    *len = 8 + blen + ilen;
    return e;
}

/* Split a payload in place: the binary stays at *bin, its info text is returned malloc'd (NUL-
 * terminated; "" when none). -1 when the framing does not add up. */
static int unpack_entry(unsigned char *e, size_t len, const unsigned char **bin, size_t *blen, char **info)
{
    uint64_t b = 0;
    if (len < 8) return -1;
    for (int i = 0; i < 8; i++) b |= (uint64_t)e[i] << (8 * i);
    if (b == 0 || b > len - 8) return -1;
    const size_t ilen = len - 8 - (size_t)b;
    if (!(*info = malloc(ilen + 1))) return -1;
    memcpy(*info, e + 8 + b, ilen);
    (*info)[ilen] = 0;
    *bin = e + 8, *blen = (size_t)b;
    return 0;
}

/* 1 when the program lists a kernel of this name. */
static int has_kernel(cl_program program, const char *name)
{
    size_t size = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &size) != CL_SUCCESS || size == 0) return 0;
    char *names = calloc(size + 1, 1);
    int found = 0;
    if (names && clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, size, names, NULL) == CL_SUCCESS)
        for (char *save = NULL, *t = strtok_r(names, ";", &save); t && !found; t = strtok_r(NULL, ";", &save)) found = strcmp(t, name) == 0;
    free(names);
    return found;
}

static clrun_status build(clrun_ctx *ctx, const char *label, const char *source, size_t len, const char *user_options, clrun_prog **out)
{
    clrun_status st = CLRUN_OK;
    cl_int err = CL_SUCCESS;
    cl_program program = NULL;
    unsigned char key[16];
    unsigned char *bin = NULL, *entry = NULL;
    size_t blen = 0, elen = 0;
    char *arginfo = NULL;
    int cached = 0, use_cache;
    char dirbuf[4096];
    struct clrun__sbuf opts = {0}, marked = {0};
    clrun_prog *p = NULL;

    clrun__sb_printf(&opts, "-cl-kernel-arg-info%s%s", user_options && *user_options ? " " : "", user_options ? user_options : "");
    if (opts.oom) return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "out of memory");
    /* the key sees the PTX option; the driver does not */
    use_cache = clrun_cache_dir(dirbuf, sizeof dirbuf) != NULL && clrun__cache_key(ctx, source, len, opts.p, key) == CLRUN_OK;
    char *dopts = malloc(opts.n + 1);
    if (!dopts) {
        free(opts.p);
        return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "out of memory");
    }
    /* the options of the kernel library's build hooks (opkit.h): in the key, not for the driver */
    const clrun__build_hook *hooks[8];
    size_t nhooks = 0;
    strcpy(dopts, opts.p);
    for (const clrun__build_hook *const *h = clrun__build_hooks; *h && nhooks < sizeof hooks / sizeof *hooks; h++)
        if (strip_option(dopts, (*h)->option)) hooks[nhooks++] = *h;
    /* a cached program carries its key as the name of a small kernel, so that a binary the driver
     * accepts is known to be this source's (an entry whose framing checks out around another
     * program's binary is rebuilt, not run) */
    char marker[48] = "";
    if (use_cache) {
        size_t m = (size_t)snprintf(marker, sizeof marker, "%s", CLRUN__KEY_KERNEL);
        for (int i = 0; i < 16; i++) m += (size_t)snprintf(marker + m, sizeof marker - m, "%02x", key[i]);
        clrun__sb_add(&marked, source, len); /* sb_printf holds 4 KiB: the source goes in whole */
        /* never launched; not empty: NVIDIA's compiler emits PTX that ptxas refuses for an empty kernel */
        clrun__sb_printf(&marked, "\n__kernel void %s(__global int *clrun_p) { clrun_p[0] = 0; }\n", marker);
        if (marked.oom) {
            st = clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "out of memory");
            goto done;
        }
        source = marked.p, len = marked.n;
    }

    int begun = 0;
    if (use_cache && (entry = clrun__cache_load(key, &elen)) != NULL && !(begun = clrun__cache_load_begin(key))) {
        free(entry);
        entry = NULL;
    }
    if (entry) {
        const unsigned char *bp = NULL;
        cl_int bstatus = CL_SUCCESS;
        int built = 0, framed = unpack_entry(entry, elen, &bp, &blen, &arginfo) == 0;
        /* a driver that cannot load a binary must say so (CL_INVALID_BINARY); one that cannot at all
         * (no binary or a binary of size 0 from clGetProgramInfo) never had one stored */
        if (framed) program = clCreateProgramWithBinary(ctx->context, 1, &ctx->device, &blen, &bp, &bstatus, &err);
        const int ok = program && err == CL_SUCCESS && bstatus == CL_SUCCESS &&
                       clBuildProgram(program, 1, &ctx->device, dopts, NULL, NULL) == CL_SUCCESS && (built = 1) &&
                       has_kernel(program, marker);
        clrun__cache_load_end(key, begun);
        if (ok) {
            cached = 1;
        } else {
            if (clrun__verbose())
                fprintf(stderr, "clrun: the cached binary of %s %s; building from source\n", label,
                        !framed ? "is not framed as clrun stores it"
                        : built ? "is another program's (its key kernel is missing)"
                                : "was refused by the driver");
            if (program) clReleaseProgram(program);
            program = NULL;
            free(arginfo);
            arginfo = NULL;
            clrun__cache_remove(key);
        }
        free(entry);
        entry = NULL;
    }
    if (!program) {
        program = clCreateProgramWithSource(ctx->context, 1, &source, &len, &err);
        if (!program) {
            st = clrun__fail_cl(ctx, err, "clCreateProgramWithSource", "loading %s", label);
            goto done;
        }
        err = clBuildProgram(program, 1, &ctx->device, dopts, NULL, NULL);
        if (err != CL_SUCCESS) {
            clrun__fail(ctx, CLRUN_BUILD_FAILED, "building %s with options \"%s\" for %s failed (%s)", label, opts.p, ctx->info.name,
                        clrun_cl_error_name(err));
            clrun__build_log(ctx, program, source, len);
            st = CLRUN_BUILD_FAILED;
            goto done;
        }
        for (size_t h = 0; h < nhooks; h++)
            if ((st = hooks[h]->after_build(ctx, label, dopts, &program))) goto done;
        if (use_cache && (bin = clrun__program_binary(ctx, program, &blen)) != NULL) {
            struct clrun__sbuf info = {0};
            arg_info_text(program, &info);
            if ((entry = pack_entry(bin, blen, &info, &elen)) != NULL) clrun__cache_store(key, entry, elen);
            free(info.p);
        }
    }
    p = calloc(1, sizeof *p);
    if (!p || !(p->label = clrun__strdup(label))) {
        st = clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    p->ctx = ctx;
    p->program = program;
    p->from_cache = cached;
    p->arginfo = arginfo;
    arginfo = NULL;
    program = NULL;
    *out = p;
    p = NULL;
done:
    if (p) free(p->label);
    free(p);
    free(bin);
    free(entry);
    free(arginfo);
    free(opts.p);
    free(dopts);
    free(marked.p);
    if (program) clReleaseProgram(program);
    return st;
}

/* Resolve includes, then build. dir NULL: embedded. */
static clrun_status load(clrun_ctx *ctx, const char *text, size_t len, const char *label, const char *dir, const char *root,
                         const char *options, clrun_prog **out)
{
    if (!out) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: out is NULL", label);
    *out = NULL;
    struct clrun__sbuf src = {0};
    clrun_status st = clrun__resolve(ctx, text, len, label, dir, root, 0, &src);
    if (st == CLRUN_OK) st = build(ctx, label, src.p ? src.p : "", src.n, options, out);
    if (st == CLRUN_OK) { /* kept for clrun_arg_bytes's size probe; without them the probe is skipped */
        (*out)->source = src.p, src.p = NULL;
        (*out)->options = options ? clrun__strdup(options) : NULL;
    }
    free(src.p);
    return st;
}

/* A program from the file at path; root as for resolve. */
static clrun_status load_file(clrun_ctx *ctx, const char *path, const char *root, const char *options, clrun_prog **out)
{
    char *data = NULL;
    size_t len = 0;
    int rc = clrun__read_file(path, &data, &len, CLRUN__SOURCE_MAX);
    if (rc)
        return clrun__fail(ctx, CLRUN_IO_ERROR, "cannot read kernel file %s: %s%s", path, strerror(rc),
                           rc == EFBIG ? " (kernel sources are read up to 16 MiB)" : "");
    const size_t pn = strlen(path);
    if (pn > 3 && !strcmp(path + pn - 3, ".cu")) { /* CUDA kernel text (lib/cudatext) */
        clrun_status st = memchr(data, 0, len) ? clrun__fail(ctx, CLRUN_FORMAT_ERROR, "kernel file %s holds a NUL byte", path)
                                               : clrun_prog_cuda(ctx, data, path, options, out);
        free(data);
        return st;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    clrun_status st = load(ctx, data, len, path, slash ? (dir[0] ? dir : "/") : ".", root, options, out);
    free(data);
    return st;
}

clrun_status clrun_prog_file(clrun_ctx *ctx, const char *path, const char *options, clrun_prog **out)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_prog_file: ctx is NULL");
    CLRUN__SERIAL(ctx);
    if (!path) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_prog_file: path is NULL");
    if (!out) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_prog_file: out is NULL");
    return load_file(ctx, path, NULL, options, out);
}

clrun_status clrun_prog_source(clrun_ctx *ctx, const char *source, const char *name, const char *options, clrun_prog **out)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_prog_source: ctx is NULL");
    CLRUN__SERIAL(ctx);
    if (!source) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_prog_source: source is NULL");
    return load(ctx, source, strlen(source), name ? name : "<string>", ".", NULL, options, out);
}

static const char *builtin_file(const char *name, char *buf, size_t size)
{
    size_t n = strlen(name);
    if (n > 3 && (strcmp(name + n - 3, ".cl") == 0 || strcmp(name + n - 2, ".h") == 0)) snprintf(buf, size, "%s", name);
    else snprintf(buf, size, "%s.cl", name);
    return buf;
}

const char *clrun_builtin_source(const char *name, size_t *len)
{
    if (!name) return NULL;
    char file[256];
    const struct clrun__embedded *e = clrun__find_embedded(builtin_file(name, file, sizeof file));
    if (!e) return NULL;
    if (len) *len = e->len;
    return e->data;
}

const char *const *clrun_builtin_names(void) { return clrun__embedded_names; }

clrun_status clrun_prog_builtin(clrun_ctx *ctx, const char *name, const char *options, clrun_prog **out)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_prog_builtin: ctx is NULL");
    CLRUN__SERIAL(ctx);
    char file[256];
    if (!name) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_prog_builtin: name is NULL");
    builtin_file(name, file, sizeof file);
    const char *kdir = clrun__setting_text(CLRUN__SET_KERNEL_DIR);
    if (kdir) {
        char path[4096];
        if (!out) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_prog_builtin: out is NULL");
        if (!clrun__find_in_tree(kdir, file, CLRUN__KERNEL_TREE_DEPTH, path, sizeof path)) snprintf(path, sizeof path, "%s/%s", kdir, file);
        return load_file(ctx, path, kdir, options, out);
    }
    const struct clrun__embedded *e = clrun__find_embedded(file);
    if (!e) {
        struct clrun__sbuf names = {0};
        for (size_t i = 0; i < clrun__embedded_count; i++) clrun__sb_printf(&names, " %s", clrun__embedded_files[i].name);
        clrun__fail(ctx, CLRUN_NOT_FOUND, "no embedded kernel source named \"%s\"; embedded:%s", name, names.p ? names.p : " (none)");
        free(names.p);
        if (out) *out = NULL;
        return CLRUN_NOT_FOUND;
    }
    return load(ctx, e->data, e->len, e->name, NULL, NULL, options, out);
}

void clrun_prog_free(clrun_prog *p)
{
    if (!p) return;
    clReleaseProgram(p->program);
    free(p->label);
    free(p->source);
    free(p->options);
    free(p->arginfo);
    free(p);
}

int clrun_prog_from_cache(const clrun_prog *p) { return p ? p->from_cache : 0; }
cl_program clrun_prog_cl_program(const clrun_prog *p) { return p ? p->program : NULL; }
