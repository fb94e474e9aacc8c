/* queue.c — streams: more in-order queues on a context's device (clrun_queue), the choice of the
 * queue a context's calls enqueue to (per thread, as CUDA's current stream), waits on events across
 * queues, markers. */
#include "internal.h"

#include <stdatomic.h>
#include <stdlib.h>

/* This thread's serial number: 1, 2, … in the order threads first ask, never reused. */
static uint64_t thread_serial(void)
{
    static atomic_uint_least64_t next = 1;
    static _Thread_local uint64_t me;
    if (!me) me = atomic_fetch_add(&next, 1);
    return me;
}

struct clrun_queue *clrun__cur(clrun_ctx *ctx)
{
    CLRUN__SERIAL(ctx);
    if (ctx->ncur) {
        uint64_t me = thread_serial();
        for (size_t i = 0; i < ctx->ncur; i++)
            if (ctx->curs[i].thread == me) return ctx->curs[i].q;
    }
    return &ctx->own;
}

/* Forget every thread's choice of q (or, with only_me, the calling thread's choice). */
static void forget(clrun_ctx *ctx, struct clrun_queue *q, int only_me)
{
    uint64_t me = only_me ? thread_serial() : 0;
    size_t j = 0;
    for (size_t i = 0; i < ctx->ncur; i++)
        if (!(only_me ? ctx->curs[i].thread == me : ctx->curs[i].q == q)) ctx->curs[j++] = ctx->curs[i];
    ctx->ncur = j;
}

clrun_status clrun_queue_new(clrun_ctx *ctx, clrun_queue **out)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_queue_new: ctx is NULL");
    CLRUN__SERIAL(ctx);
    cl_int err = CL_SUCCESS;
    if (!out) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_queue_new: out is NULL");
    *out = NULL;
    struct clrun_queue *q = calloc(1, sizeof *q);
    if (!q) return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "clrun_queue_new: out of memory");
    q->queue = clCreateCommandQueue(ctx->context, ctx->device, CL_QUEUE_PROFILING_ENABLE, &err);
    if (!q->queue) {
        free(q);
        return clrun__fail_cl(ctx, err, "clCreateCommandQueue", "clrun_queue_new: a queue on %s", ctx->info.name);
    }
    q->ctx = ctx, q->next = ctx->streams;
    ctx->streams = q;
    *out = q;
    return CLRUN_OK;
}

void clrun_queue_free(clrun_queue *q)
{
    if (!q) return;
    clrun_ctx *ctx = q->ctx;
    CLRUN__SERIAL(ctx);
    if (q == &ctx->own) return; /* the context's own queue goes with clrun_close */
    forget(ctx, q, 0);          /* threads that had it current are back on the context's own */
    for (struct clrun_queue **p = &ctx->streams; *p; p = &(*p)->next)
        if (*p == q) {
            *p = q->next;
            break;
        }
    clFinish(q->queue);
    clrun_buf_free(q->scratch);
    clReleaseCommandQueue(q->queue);
    free(q);
}

clrun_queue *clrun_ctx_queue(clrun_ctx *ctx) { return ctx ? &ctx->own : NULL; }

clrun_queue *clrun_queue_current(clrun_ctx *ctx) { return ctx ? clrun__cur(ctx) : NULL; }

clrun_status clrun_queue_use(clrun_ctx *ctx, clrun_queue *q)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_queue_use: ctx is NULL");
    CLRUN__SERIAL(ctx);
    if (q && q->ctx != ctx) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_queue_use: the queue belongs to another context");
    forget(ctx, NULL, 1);
    if (!q || q == &ctx->own) return CLRUN_OK;
    if (ctx->ncur == ctx->capcur) {
        size_t cap = ctx->capcur ? 2 * ctx->capcur : 4;
        struct clrun__cur *grown = realloc(ctx->curs, cap * sizeof *grown);
        if (!grown) return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "clrun_queue_use: out of memory");
        ctx->curs = grown, ctx->capcur = cap;
    }
    ctx->curs[ctx->ncur++] = (struct clrun__cur){thread_serial(), q};
    return CLRUN_OK;
}

clrun_status clrun_queue_wait(clrun_queue *q, clrun_event *const *events, unsigned n)
{
    if (!q) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_queue_wait: q is NULL");
    CLRUN__SERIAL(q->ctx);
    if (n == 0) return CLRUN_OK;
    if (!events) return clrun__fail(q->ctx, CLRUN_INVALID_ARG, "clrun_queue_wait: events is NULL");
    cl_event stack[16], *evs = n <= 16 ? stack : malloc(n * sizeof *evs);
    if (!evs) return clrun__fail(q->ctx, CLRUN_HOST_OUT_OF_MEMORY, "clrun_queue_wait: out of memory");
    clrun_status st = CLRUN_OK;
    for (unsigned i = 0; i < n && !st; i++) {
        if (!events[i]) st = clrun__fail(q->ctx, CLRUN_INVALID_ARG, "clrun_queue_wait: event %u is NULL", i);
        else if (events[i]->ctx != q->ctx)
            st = clrun__fail(q->ctx, CLRUN_INVALID_ARG, "clrun_queue_wait: event %u is of another context", i);
        else evs[i] = events[i]->event;
    }
    if (!st) {
        cl_int err = clEnqueueBarrierWithWaitList(q->queue, n, evs, NULL);
        if (err != CL_SUCCESS) st = clrun__fail_cl(q->ctx, err, "clEnqueueBarrierWithWaitList", "clrun_queue_wait");
    }
    if (evs != stack) free(evs);
    return st;
}

clrun_status clrun_queue_marker(clrun_queue *q, clrun_event **ev)
{
    if (!q) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_queue_marker: q is NULL");
    CLRUN__SERIAL(q->ctx);
    if (!ev) return clrun__fail(q->ctx, CLRUN_INVALID_ARG, "clrun_queue_marker: ev is NULL");
    *ev = NULL;
    cl_event e = NULL;
    cl_int err = clEnqueueMarkerWithWaitList(q->queue, 0, NULL, &e);
    if (err != CL_SUCCESS) return clrun__fail_cl(q->ctx, err, "clEnqueueMarkerWithWaitList", "clrun_queue_marker");
    clFlush(q->queue); /* so that another queue waiting on it sees it submitted */
    return clrun__event_wrap(q->ctx, e, ev);
}

clrun_status clrun_queue_flush(clrun_queue *q)
{
    if (!q) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_queue_flush: q is NULL");
    cl_int err = clFlush(q->queue);
    if (err != CL_SUCCESS) return clrun__fail_cl(q->ctx, err, "clFlush", "clrun_queue_flush");
    return CLRUN_OK;
}

clrun_status clrun_queue_finish(clrun_queue *q)
{
    if (!q) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_queue_finish: q is NULL");
    cl_int err = clFinish(q->queue);
    if (err != CL_SUCCESS) return clrun__fail_cl(q->ctx, err, "clFinish", "clrun_queue_finish");
    return CLRUN_OK;
}

cl_command_queue clrun_queue_cl(const clrun_queue *q) { return q ? q->queue : NULL; }
