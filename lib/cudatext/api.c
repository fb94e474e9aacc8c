/* api.c — CUDA kernel text as a program source: clrun_cuda_translate, clrun_prog_cuda (include/clrun.h).
 * The translation (translate.c) is built where libclang's headers were found (meson option
 * cuda_text); elsewhere these calls refuse in words. */
#include "internal.h"
#include "cudatext_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if CLRUN_HAVE_CUDA_TEXT
#include "cudatext/include.h"
#include "cudatext/translate.h"
#endif

static clrun_status translate(clrun_ctx *ctx, const char *fn, const char *source, const char *name, const char *options, char **out)
{
#if CLRUN_HAVE_CUDA_TEXT
    char err[2048];
    *out = clrun__cuda_translate(source, strlen(source), name, options, err, sizeof err);
    if (!*out) return clrun__fail(ctx, *err ? CLRUN_BUILD_FAILED : CLRUN_HOST_OUT_OF_MEMORY, "%s: %s", fn, *err ? err : "out of memory");
    return CLRUN_OK;
#else
    (void)source, (void)name, (void)options;
    *out = NULL;
    return clrun__fail(ctx, CLRUN_UNSUPPORTED,
                       "%s: this libclrun was built without CUDA kernel text (libclang's headers were not found: install "
                       "libclang-dev and rebuild)",
                       fn);
#endif
}

clrun_status clrun_cuda_translate(const char *source, const char *name, char **out)
{
    if (!out) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_cuda_translate: out is NULL");
    *out = NULL;
    if (!source) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_cuda_translate: source is NULL");
    return translate(NULL, "clrun_cuda_translate", source, name ? name : "kernel.cu", NULL, out);
}

clrun_status clrun_cuda_translate_options(const char *source, const char *name, const char *options, char **out)
{
    if (!out) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_cuda_translate_options: out is NULL");
    *out = NULL;
    if (!source) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_cuda_translate_options: source is NULL");
    return translate(NULL, "clrun_cuda_translate_options", source, name ? name : "kernel.cu", options, out);
}

void clrun_string_free(char *s) { free(s); }

clrun_status clrun_prog_cuda(clrun_ctx *ctx, const char *source, const char *name, const char *options, clrun_prog **out)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_prog_cuda: ctx is NULL");
    if (!source) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_prog_cuda: source is NULL");
    if (!out) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_prog_cuda: out is NULL");
    *out = NULL;
    char *cl = NULL;
    clrun_status st = translate(ctx, "clrun_prog_cuda", source, name ? name : "kernel.cu", options, &cl);
    if (st != CLRUN_OK) return st;
        /* the headers are in the text now: the device's build takes the options less their -I */
#if CLRUN_HAVE_CUDA_TEXT
    char *base = clrun__strip_includes(options);
    if (options && !base) {
        free(cl);
        return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "clrun_prog_cuda: out of host memory");
    }
#else
    char *base = NULL;
#endif
    /* NVIDIA's compiler takes the warp intrinsics as inline PTX (translate.c, warp_prelude) */
    const int nv = ctx->info.type == CLRUN_DEVICE_GPU && strstr(ctx->info.platform_vendor, "NVIDIA");
    char *opts = NULL;
    if (nv) {
        const size_t n = (base ? strlen(base) : 0) + 32;
        if (!(opts = malloc(n))) {
            free(cl), free(base);
            return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "clrun_prog_cuda: out of host memory");
        }
        snprintf(opts, n, "%s%s-DCLRUN_NV_PTX=1", base ? base : "", base && *base ? " " : "");
    }
    st = clrun_prog_source(ctx, cl, name ? name : "kernel.cu", nv ? opts : base, out);
    free(opts), free(base);
    free(cl);
    return st;
}
