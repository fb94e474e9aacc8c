/* ptx.c — NVIDIA's PTX rewrite, a build hook of the core (opkit.h): with -clrun-ptx-rewrite among a
 * program's options (clrun.h, clrun_prog_file), the program built from OpenCL C is replaced by its
 * PTX text rewritten for the architecture-specific target (sm_90a: wgmma, setmaxnreg) and built as
 * a binary. The core strips the option before the driver sees it and keeps it in the cache key. */
#include "opkit.h"

#include <stdlib.h>
#include <string.h>

#define PTX_OPTION "-clrun-ptx-rewrite"

/* (opkit.h) PTX text of an OpenCL C build rewritten for the architecture-specific target: every line
 * whose first non-blank characters are "//@@" loses them (instructions written in inline asm behind
 * a comment, so that the compiler's own PTX still assembles for the plain target, with the asm
 * operands already replaced by registers), and ".target sm_NN" becomes ".target sm_NNa". */
char *clrun__ptx_rewrite(const unsigned char *bin, size_t len, size_t *out_len)
{
    const char *s = (const char *)bin, *end = s + len;
    while (end > s && end[-1] == 0) end--;           /* the driver counts the terminating NUL */
    char *o = malloc((size_t)(end - s) + 2), *w = o; /* the text, one 'a' more, a NUL */
    if (!o) return NULL;
    int target = 0;
    for (const char *p = s; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl + 1 : end, *q = p;
        while (q < le && (*q == ' ' || *q == '\t')) q++;
        if ((size_t)(le - q) >= 4 && memcmp(q, "//@@", 4) == 0) {
            memcpy(w, p, (size_t)(q - p)), w += q - p;
            memcpy(w, q + 4, (size_t)(le - q - 4)), w += le - q - 4;
        } else if (!target && (size_t)(le - q) > 11 && memcmp(q, ".target sm_", 11) == 0) {
            const char *t = q + 11;
            while (t < le && *t >= '0' && *t <= '9') t++;
            memcpy(w, p, (size_t)(t - p)), w += t - p;
            if (t < le && *t != 'a') *w++ = 'a';
            memcpy(w, t, (size_t)(le - t)), w += le - t;
            target = 1;
        } else {
            memcpy(w, p, (size_t)(le - p)), w += le - p;
        }
        p = le;
    }
    if (!target) {
        free(o);
        return NULL;
    }
    *w = 0;
    *out_len = (size_t)(w - o) + 1; /* with its NUL, as the driver handed it */
    return o;
}

/* Replace *program (built from OpenCL C) by its PTX rewritten and built as a binary. */
static clrun_status rebuild(clrun_ctx *ctx, const char *label, const char *opts, cl_program *program)
{
    size_t blen = 0, plen = 0;
    unsigned char *bin = clrun__program_binary(ctx, *program, &blen);
    char *ptx = bin ? clrun__ptx_rewrite(bin, blen, &plen) : NULL;
    free(bin);
    const char *dev = clrun_ctx_device(ctx)->name;
    if (!ptx)
        return clrun__fail(ctx, CLRUN_UNSUPPORTED,
                           "%s: " PTX_OPTION " needs NVIDIA's OpenCL, whose program binaries are PTX text; those of %s are not", label,
                           dev);
    cl_int err = CL_SUCCESS, bstatus = CL_SUCCESS;
    const unsigned char *pp = (const unsigned char *)ptx;
    cl_device_id device = clrun_ctx_cl_device(ctx);
    cl_program q = clCreateProgramWithBinary(clrun_ctx_cl_context(ctx), 1, &device, &plen, &pp, &bstatus, &err);
    free(ptx);
    if (!q || err != CL_SUCCESS || bstatus != CL_SUCCESS) {
        if (q) clReleaseProgram(q);
        return clrun__fail_cl(ctx, err != CL_SUCCESS ? err : bstatus, "clCreateProgramWithBinary", "loading the rewritten PTX of %s",
                              label);
    }
    if ((err = clBuildProgram(q, 1, &device, opts, NULL, NULL)) != CL_SUCCESS) {
        clrun__fail(ctx, CLRUN_BUILD_FAILED, "building the rewritten PTX of %s for %s failed (%s)", label, dev, clrun_cl_error_name(err));
        clrun__build_log(ctx, q, NULL, 0);
        clReleaseProgram(q);
        return CLRUN_BUILD_FAILED;
    }
    clReleaseProgram(*program);
    *program = q;
    return CLRUN_OK;
}

const clrun__build_hook clrun__nv_ptx_hook = {PTX_OPTION, rebuild};
