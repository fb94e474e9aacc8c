/* context.c — clrun_ctx: one OpenCL context and one in-order profiling queue on one device. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* The preferred work-group multiple of a device that does not answer it itself (before OpenCL
 * 3.0), read from a one-line kernel (cached like any other program, so a warm start pays only a
 * binary load) and kept in the device list, so that the list and every later context agree.
 * Failure keeps the vendor guess. */
static void probe_multiple(clrun_ctx *ctx)
{
    if (clrun__device_multiple_known(ctx->info.index)) return;
    static const char src[] = "__kernel void clrun_probe(__global int *p) { p[get_global_id(0)] = 0; }\n";
    clrun_prog *p = NULL;
    clrun_kernel *k = NULL;
    size_t m = 0;
    if (clrun_prog_source(ctx, src, "<probe>", NULL, &p) != CLRUN_OK) goto done;
    if (clrun_kernel_new(p, "clrun_probe", &k) != CLRUN_OK) goto done;
    if (clGetKernelWorkGroupInfo(k->kernel, ctx->device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof m, &m, NULL) == CL_SUCCESS &&
        m > 0) {
        ctx->info.preferred_multiple = m;
        clrun__device_learn_multiple(ctx->info.index, m);
    }
done:
    clrun_kernel_free(k);
    clrun_prog_free(p);
    if (ctx->err) ctx->err[0] = 0;
}

/* A zeroed context with its locks made; NULL when out of memory. */
static clrun_ctx *ctx_alloc(void)
{
    clrun_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return NULL;
    ctx->own.ctx = ctx;
    pthread_mutex_init(&ctx->pinned_lock, NULL);
    pthread_mutexattr_t ra;
    pthread_mutexattr_init(&ra);
    pthread_mutexattr_settype(&ra, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&ctx->lock, &ra);
    pthread_mutexattr_destroy(&ra);
    return ctx;
}

clrun_status clrun_open(clrun_ctx **out, const char *device_spec)
{
    clrun_status st;
    unsigned index = 0;
    cl_int err = CL_SUCCESS;
    clrun_ctx *ctx = NULL;
    if (!out) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_open: ctx is NULL");
    *out = NULL;
    if ((st = clrun__settings_check(NULL)) != CLRUN_OK) return st; /* a malformed CLRUN_* is refused up front */
    if ((st = clrun_device_select(device_spec, &index, NULL)) != CLRUN_OK) return st;
    ctx = ctx_alloc();
    if (!ctx) return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "clrun_open: out of memory");
    if ((st = clrun_device_get(index, &ctx->info)) != CLRUN_OK) goto fail;
    if ((st = clrun__device_handles(index, &ctx->platform, &ctx->device)) != CLRUN_OK) goto fail;

    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)ctx->platform, 0};
    ctx->context = clCreateContext(props, 1, &ctx->device, NULL, NULL, &err);
    if (!ctx->context) {
        st = clrun__fail_cl(NULL, err, "clCreateContext", "opening a context on %s", ctx->info.name);
        goto fail;
    }
    ctx->own.queue = clCreateCommandQueue(ctx->context, ctx->device, CL_QUEUE_PROFILING_ENABLE, &err);
    if (!ctx->own.queue) {
        st = clrun__fail_cl(NULL, err, "clCreateCommandQueue", "opening a queue on %s", ctx->info.name);
        goto fail;
    }
    probe_multiple(ctx);
    clrun__profile_env(ctx);
    *out = ctx;
    return CLRUN_OK;
fail:
    clrun_close(ctx);
    return st;
}

clrun_status clrun_ctx_wrap(clrun_ctx **out, cl_context context, cl_device_id device, cl_command_queue queue)
{
    clrun_status st;
    cl_int err;
    if (!out) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_ctx_wrap: out is NULL");
    *out = NULL;
    if (!context || !device) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_ctx_wrap: the context and the device are needed");
    if ((st = clrun__settings_check(NULL)) != CLRUN_OK) return st;
    /* the device must be one of the context's */
    size_t got = 0;
    if ((err = clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, NULL, &got)) != CL_SUCCESS) {
        if (err == CL_INVALID_CONTEXT)
            return clrun__fail(NULL, CLRUN_INVALID_ARG,
                               "clrun_ctx_wrap: the handle is not a context its driver knows (CL_INVALID_CONTEXT): a released context, or "
                               "a queue, buffer or other object passed as a cl_context");
        return clrun__fail_cl(NULL, err, "clGetContextInfo", "clrun_ctx_wrap: reading the context's devices (is it a valid cl_context?)");
    }
    cl_device_id *devs = malloc(got ? got : sizeof *devs);
    if (!devs) return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "clrun_ctx_wrap: out of memory");
    if ((err = clGetContextInfo(context, CL_CONTEXT_DEVICES, got, devs, &got)) != CL_SUCCESS) {
        free(devs);
        return clrun__fail_cl(NULL, err, "clGetContextInfo", "clrun_ctx_wrap: reading the context's devices (is it a valid cl_context?)");
    }
    int in_ctx = 0;
    for (size_t i = 0; i < got / sizeof *devs; i++) in_ctx |= devs[i] == device;
    free(devs);
    if (!in_ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_ctx_wrap: the device is not one of the context's devices");
    /* and one clrun lists (its facts come from there) */
    unsigned n = 0, index = 0;
    cl_platform_id platform = NULL;
    cl_device_id d = NULL;
    if ((st = clrun_device_count(&n)) != CLRUN_OK) return st;
    while (index < n && (clrun__device_handles(index, &platform, &d) != CLRUN_OK || d != device)) index++;
    if (index == n)
        return clrun__fail(NULL, CLRUN_UNSUPPORTED,
                           "clrun_ctx_wrap: the device is not among the devices clrun lists (a sub-device, or a platform "
                           "the ICD loader does not show: see clrun devices)");
    if (queue) { /* in order, on this context and device */
        cl_context qc = NULL;
        cl_device_id qd = NULL;
        cl_command_queue_properties props = 0;
        if ((err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof qc, &qc, NULL)) != CL_SUCCESS ||
            (err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof qd, &qd, NULL)) != CL_SUCCESS ||
            (err = clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL)) != CL_SUCCESS)
            return err == CL_INVALID_COMMAND_QUEUE
                       ? clrun__fail(NULL, CLRUN_INVALID_ARG,
                                     "clrun_ctx_wrap: the handle is not a queue its driver knows (CL_INVALID_COMMAND_QUEUE): a released "
                                     "queue, or a context, buffer or other object passed as a cl_command_queue")
                       : clrun__fail_cl(NULL, err, "clGetCommandQueueInfo",
                                        "clrun_ctx_wrap: reading the queue (is it a valid cl_command_queue?)");
        if (qc != context || qd != device)
            return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_ctx_wrap: the queue belongs to another context or device");
        if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
            return clrun__fail(NULL, CLRUN_INVALID_ARG,
                               "clrun_ctx_wrap: the queue runs out of order; clrun's ops need an in-order queue (or pass NULL for one of "
                               "clrun's own)");
    }
    clrun_ctx *ctx = ctx_alloc();
    if (!ctx) return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "clrun_ctx_wrap: out of memory");
    if ((st = clrun_device_get(index, &ctx->info)) != CLRUN_OK) {
        clrun_close(ctx);
        return st;
    }
    ctx->platform = platform, ctx->device = device;
    clRetainContext(context); /* clrun's own references: the owner's stay theirs */
    ctx->context = context;
    if (queue) {
        clRetainCommandQueue(queue);
        ctx->own.queue = queue;
    } else if (!(ctx->own.queue = clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &err))) {
        clrun_close(ctx);
        return clrun__fail_cl(NULL, err, "clCreateCommandQueue", "clrun_ctx_wrap: opening a queue on %s", ctx->info.name);
    }
    probe_multiple(ctx);
    clrun__profile_env(ctx);
    *out = ctx;
    return CLRUN_OK;
}

void clrun_close(clrun_ctx *ctx)
{
    if (!ctx) return;
    if (ctx->delivering) { /* from a pipeline's deliver callback: closed when it returns (lib/pipe.c) */
        ctx->close_pending = 1;
        return;
    }
    while (ctx->streams) clrun_queue_free(ctx->streams); /* back on the context's own queue */
    if (ctx->own.queue) clFinish(ctx->own.queue);
    clrun__profile_close(ctx);
    while (ctx->op_state) {
        struct clrun__op_slot *o = ctx->op_state;
        ctx->op_state = o->next;
        if (o->release) o->release(ctx, o->state);
        free(o->state);
        free(o);
    }
    while (ctx->pinned) clrun_host_free(ctx, ctx->pinned->ptr);
    for (int i = ctx->nkcache - 1; i >= 0; i--) {
        clrun_kernel_free(ctx->kcache[i].kernel);
        if (ctx->kcache[i].own_prog) clrun_prog_free(ctx->kcache[i].prog);
    }
    free(ctx->kcache);
    clrun_buf_free(ctx->own.scratch);
    for (int i = 0; i < 2; i++) {
        if (ctx->stage_mem[i]) {
            if (ctx->stage_ptr[i]) clEnqueueUnmapMemObject(ctx->own.queue, ctx->stage_mem[i], ctx->stage_ptr[i], 0, NULL, NULL);
            clReleaseMemObject(ctx->stage_mem[i]);
        }
    }
    if (ctx->own.queue) {
        clFinish(ctx->own.queue);
        clReleaseCommandQueue(ctx->own.queue);
    }
    free(ctx->curs);
    if (ctx->context) clReleaseContext(ctx->context);
    clrun__cu_drain(); /* the memory of its buffers shared with CUDA */
    pthread_mutex_destroy(&ctx->pinned_lock);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx->err);
    free(ctx);
}

clrun_ctx *clrun__ctx_lock(clrun_ctx *ctx)
{
    if (ctx) pthread_mutex_lock(&ctx->lock);
    return ctx;
}

void clrun__ctx_unlock(clrun_ctx **held)
{
    if (*held) pthread_mutex_unlock(&(*held)->lock);
}

const clrun_device_info *clrun_ctx_device(const clrun_ctx *ctx) { return ctx ? &ctx->info : NULL; }
cl_context clrun_ctx_cl_context(const clrun_ctx *ctx) { return ctx ? ctx->context : NULL; }
cl_command_queue clrun_ctx_cl_queue(const clrun_ctx *ctx) { return ctx ? clrun__queue((clrun_ctx *)ctx) : NULL; }
cl_device_id clrun_ctx_cl_device(const clrun_ctx *ctx) { return ctx ? ctx->device : NULL; }

clrun_status clrun_finish(clrun_ctx *ctx)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_finish: ctx is NULL");
    CLRUN__SERIAL(ctx);
    cl_int err = CL_SUCCESS;
    if (ctx->streams) {
        /* a synchronisation point between the queues through events, not clFinish alone: Mesa's
         * Rusticl (23.x) shows one queue's writes to another queue only across an event dependency
         * (a GEMM's C read as zeros on the context's own queue after clFinish of the stream that
         * wrote it). Each queue's marker; then every queue waits for the others' */
        unsigned n = 1;
        for (struct clrun_queue *s = ctx->streams; s; s = s->next) n++;
        cl_event *ev = calloc(n, sizeof *ev);
        cl_command_queue *qs = malloc(n * sizeof *qs);
        if (!ev || !qs) {
            free(ev), free(qs);
            return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "clrun_finish: out of memory for %u queues", n);
        }
        n = 0;
        qs[n++] = ctx->own.queue;
        for (struct clrun_queue *s = ctx->streams; s; s = s->next) qs[n++] = s->queue;
        unsigned made = 0;
        for (; made < n && err == CL_SUCCESS; made++)
            if ((err = clEnqueueMarkerWithWaitList(qs[made], 0, NULL, &ev[made])) == CL_SUCCESS) err = clFlush(qs[made]);
        if (err != CL_SUCCESS && made && !ev[made - 1]) made--; /* the failed one made no event */
        for (unsigned i = 0; i < n && err == CL_SUCCESS; i++) err = clEnqueueBarrierWithWaitList(qs[i], made, ev, NULL);
        for (unsigned i = 0; i < made; i++) clReleaseEvent(ev[i]);
        for (unsigned i = 0; i < n && err == CL_SUCCESS; i++) err = clFinish(qs[i]);
        free(ev), free(qs);
    } else err = clFinish(ctx->own.queue);
    if (err != CL_SUCCESS) return clrun__fail_cl(ctx, err, "clFinish", "waiting for the context's queues");
    return CLRUN_OK;
}

clrun_status clrun__lib_kernel(clrun_ctx *ctx, const char *file, const char *options, const char *name, clrun_kernel **out)
{
    char key[256], pkey[256];
    clrun_status st;
    snprintf(pkey, sizeof pkey, "%s|%s|", file, options ? options : "");
    snprintf(key, sizeof key, "%s%s", pkey, name);
    clrun_prog *prog = NULL;
    for (int i = 0; i < ctx->nkcache; i++) {
        if (strcmp(ctx->kcache[i].key, key) == 0) return *out = ctx->kcache[i].kernel, CLRUN_OK;
        if (!prog && strncmp(ctx->kcache[i].key, pkey, strlen(pkey)) == 0) prog = ctx->kcache[i].prog;
    }
    if (ctx->nkcache == ctx->capkcache) {
        int cap = ctx->capkcache ? 2 * ctx->capkcache : 32;
        struct clrun__kentry *grown = realloc(ctx->kcache, sizeof *grown * (size_t)cap);
        if (!grown) return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "out of memory for the context's kernel table");
        ctx->kcache = grown, ctx->capkcache = cap;
    }
    int own = 0;
    if (!prog) {
        if ((st = clrun_prog_builtin(ctx, file, options, &prog)) != CLRUN_OK) return st;
        own = 1;
    }
    clrun_kernel *k = NULL;
    if ((st = clrun_kernel_new(prog, name, &k)) != CLRUN_OK) {
        if (own) clrun_prog_free(prog);
        return st;
    }
    struct clrun__kentry *e = &ctx->kcache[ctx->nkcache++];
    snprintf(e->key, sizeof e->key, "%s", key);
    e->prog = prog;
    e->kernel = k;
    e->own_prog = own;
    *out = k;
    return CLRUN_OK;
}

clrun_status clrun__scratch(clrun_ctx *ctx, size_t bytes, clrun_buf **out)
{
    struct clrun_queue *q = clrun__cur(ctx); /* each queue its own: ops on two queues run at once */
    if (!q->scratch || clrun_buf_size(q->scratch) < bytes) {
        clrun_buf *b = NULL;
        size_t want = bytes < 65536 ? 65536 : bytes;
        clrun_status st = clrun_buf_new(ctx, want, 0, &b);
        if (st != CLRUN_OK) return st;
        clrun_buf_free(q->scratch); /* released once the commands queued on it have run */
        q->scratch = b;
    }
    *out = q->scratch;
    return CLRUN_OK;
}

void *clrun__op_state(clrun_ctx *ctx, const void *key, size_t size, void (*release)(clrun_ctx *ctx, void *state))
{
    for (struct clrun__op_slot *o = ctx->op_state; o; o = o->next)
        if (o->key == key) return o->state;
    struct clrun__op_slot *o = calloc(1, sizeof *o);
    void *state = calloc(1, size ? size : 1);
    if (!o || !state) {
        free(o), free(state);
        clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "out of memory for an op's state");
        return NULL;
    }
    *o = (struct clrun__op_slot){key, state, release, ctx->op_state};
    ctx->op_state = o;
    return state;
}
