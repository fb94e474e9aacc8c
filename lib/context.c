/* context.c — clrun_ctx: one OpenCL context and one in-order profiling queue on one device. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* The device's preferred work-group multiple, read from a one-line kernel (cached like any other
 * program, so a warm start pays only a binary load). Failure keeps the vendor guess. */
static void probe_multiple(clrun_ctx *ctx)
{
    static const char src[] = "__kernel void clrun_probe(__global int *p) { p[get_global_id(0)] = 0; }\n";
    clrun_prog *p = NULL;
    clrun_kernel *k = NULL;
    size_t m = 0;
    if (clrun_prog_source(ctx, src, "<probe>", NULL, &p) != CLRUN_OK) goto done;
    if (clrun_kernel_new(p, "clrun_probe", &k) != CLRUN_OK) goto done;
    if (clGetKernelWorkGroupInfo(k->kernel, ctx->device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                 sizeof m, &m, NULL) == CL_SUCCESS && m > 0)
        ctx->info.preferred_multiple = m;
done:
    clrun_kernel_free(k);
    clrun_prog_free(p);
    if (ctx->err) ctx->err[0] = 0;
}

clrun_status clrun_open(clrun_ctx **out, const char *device_spec)
{
    clrun_status st;
    unsigned index = 0;
    cl_int err = CL_SUCCESS;
    clrun_ctx *ctx = NULL;
    if (!out) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_open: ctx is NULL");
    *out = NULL;
    if ((st = clrun_device_select(device_spec, &index, NULL)) != CLRUN_OK) return st;
    ctx = calloc(1, sizeof *ctx);
    if (!ctx) return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "clrun_open: out of memory");
    pthread_mutex_init(&ctx->pinned_lock, NULL);
    if ((st = clrun_device_get(index, &ctx->info)) != CLRUN_OK) goto fail;
    if ((st = clrun__device_handles(index, &ctx->platform, &ctx->device)) != CLRUN_OK) goto fail;

    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)ctx->platform, 0};
    ctx->context = clCreateContext(props, 1, &ctx->device, NULL, NULL, &err);
    if (!ctx->context) {
        st = clrun__fail_cl(NULL, err, "clCreateContext", "opening a context on %s", ctx->info.name);
        goto fail;
    }
    ctx->queue = clCreateCommandQueue(ctx->context, ctx->device, CL_QUEUE_PROFILING_ENABLE, &err);
    if (!ctx->queue) {
        st = clrun__fail_cl(NULL, err, "clCreateCommandQueue", "opening a queue on %s", ctx->info.name);
        goto fail;
    }
    probe_multiple(ctx);
    *out = ctx;
    return CLRUN_OK;
fail:
    clrun_close(ctx);
    return st;
}

void clrun_close(clrun_ctx *ctx)
{
    if (!ctx) return;
    if (ctx->queue) clFinish(ctx->queue);
    while (ctx->pinned) clrun_host_free(ctx, ctx->pinned->ptr);
    for (int i = 0; i < 2; i++) {
        if (ctx->stage_mem[i]) {
            if (ctx->stage_ptr[i])
                clEnqueueUnmapMemObject(ctx->queue, ctx->stage_mem[i], ctx->stage_ptr[i], 0, NULL, NULL);
            clReleaseMemObject(ctx->stage_mem[i]);
        }
    }
    if (ctx->queue) {
        clFinish(ctx->queue);
        clReleaseCommandQueue(ctx->queue);
    }
    if (ctx->context) clReleaseContext(ctx->context);
    pthread_mutex_destroy(&ctx->pinned_lock);
    free(ctx->err);
    free(ctx);
}

const clrun_device_info *clrun_ctx_device(const clrun_ctx *ctx) { return &ctx->info; }
cl_context clrun_ctx_cl_context(const clrun_ctx *ctx) { return ctx->context; }
cl_command_queue clrun_ctx_cl_queue(const clrun_ctx *ctx) { return ctx->queue; }
cl_device_id clrun_ctx_cl_device(const clrun_ctx *ctx) { return ctx->device; }

clrun_status clrun_finish(clrun_ctx *ctx)
{
    cl_int err = clFinish(ctx->queue);
    if (err != CL_SUCCESS) return clrun__fail_cl(ctx, err, "clFinish", "waiting for the queue");
    return CLRUN_OK;
}
