/* pipe.c — clrun_pipe: one op over a stream of items, several in flight on one device.
 *
 * Item k goes to slot k % depth. A slot owns a device buffer for the input and one for the result,
 * and a pinned (mapped) host buffer for each; all are made on first use and grown, never made per
 * item. Sending item k: its rows are copied into the slot's pinned input, the upload is enqueued on
 * the pipeline's upload queue, the context's queue waits for it (a barrier) and gets the op's
 * launches, a marker closes them, and the download queue reads the result back after the marker.
 * Three in-order queues, joined by events, so copy-in, compute and copy-out of neighbouring items
 * overlap where the device can. Results are delivered from the oldest slot, in order, once its last
 * event has completed; a slot is free again only after delivery, which is what keeps the buffers of
 * an item from being reused while the device still touches them. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct slot {
    clrun_buf *din, *dout; /* device input and result */
    cl_mem hmem[2];        /* pinned host input [0] and result [1], mapped at hptr */
    void *hptr[2];
    size_t hbytes[2];
    cl_event done;     /* the last command on the slot's buffers, or NULL */
    clrun_image shape; /* the result's shape */
    void *tag;
    clrun_status st; /* the item's own failure, or CLRUN_OK */
    char *err;       /* its text */
};

struct clrun_pipe {
    clrun_ctx *ctx;
    clrun_pipe_op op;
    clrun_pipe_deliver deliver;
    void *arg;
    cl_command_queue up, down;
    unsigned depth, head, count; /* the oldest item's slot; items in flight */
    struct slot *slots;
    clrun_status broken; /* the pipeline's own failure, sticky */
    char *broken_err;
    int in_deliver;
    int free_pending; /* clrun_pipe_free was called from deliver: freed once deliver returns */
    void *owned;      /* freed with the pipeline (clrun__pipe_adopt) */
};

clrun_status clrun_pipe_new(clrun_ctx *ctx, const clrun_pipe_op *op, unsigned depth, clrun_pipe_deliver deliver, void *arg,
                            clrun_pipe **out)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_pipe_new: ctx is NULL");
    cl_int err = CL_SUCCESS;
    if (!out) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_pipe_new: out is NULL");
    *out = NULL;
    if (!ctx || !op || !op->shape || !op->run || !deliver)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_pipe_new: the context, the op's shape and run, and deliver are needed");
    if (depth == 0) depth = 3;
    if (depth > 64) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_pipe_new: depth %u: 1 to 64 items in flight", depth);
    clrun_pipe *pp = calloc(1, sizeof *pp);
    if (pp) pp->slots = calloc(depth, sizeof *pp->slots);
    if (!pp || !pp->slots) {
        free(pp);
        return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "clrun_pipe_new: out of memory");
    }
    *pp = (clrun_pipe){ctx, *op, deliver, arg, NULL, NULL, depth, 0, 0, pp->slots, CLRUN_OK, NULL, 0, 0, NULL};
    for (int i = 0; i < 2; i++) {
        cl_command_queue q = clCreateCommandQueue(ctx->context, ctx->device, 0, &err);
        if (!q) {
            clrun_status st = clrun__fail_cl(ctx, err, "clCreateCommandQueue", "making a pipeline's %s queue", i ? "download" : "upload");
            clrun_pipe_free(pp);
            return st;
        }
        *(i ? &pp->down : &pp->up) = q;
    }
    *out = pp;
    return CLRUN_OK;
}

void clrun__pipe_adopt(clrun_pipe *pp, void *mem) { pp->owned = mem; }

/* Keep the item's failure (the context's last error) in its slot. */
static void item_fail(clrun_pipe *pp, struct slot *s, clrun_status st)
{
    const char *text = clrun_last_error(pp->ctx);
    s->st = st;
    s->err = clrun__strdup(*text ? text : clrun_status_text(st));
}

/* The pipeline cannot go on: record why (sticky) and return st. */
static clrun_status fail_pipe(clrun_pipe *pp, clrun_status st)
{
    if (!pp->broken) {
        pp->broken = st;
        pp->broken_err = clrun__strdup(clrun_last_error(pp->ctx));
    }
    return st;
}

/* A pinned host buffer of at least n bytes in slot s's buffer i, mapped for the host. */
static clrun_status host_buf(clrun_pipe *pp, struct slot *s, int i, size_t n)
{
    cl_int err = CL_SUCCESS;
    if (s->hbytes[i] >= n) return CLRUN_OK;
    if (s->hmem[i]) {
        clEnqueueUnmapMemObject(pp->up, s->hmem[i], s->hptr[i], 0, NULL, NULL);
        clFinish(pp->up);
        clReleaseMemObject(s->hmem[i]);
        s->hmem[i] = NULL, s->hptr[i] = NULL, s->hbytes[i] = 0;
    }
    s->hmem[i] = clCreateBuffer(pp->ctx->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, n, NULL, &err);
    if (!s->hmem[i]) return clrun__fail_cl(pp->ctx, err, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)", "pinned staging of %zu bytes", n);
    s->hptr[i] = clEnqueueMapBuffer(pp->up, s->hmem[i], CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, n, 0, NULL, NULL, &err);
    if (!s->hptr[i]) {
        clReleaseMemObject(s->hmem[i]);
        s->hmem[i] = NULL;
        return clrun__fail_cl(pp->ctx, err, "clEnqueueMapBuffer", "mapping pinned staging of %zu bytes", n);
    }
    s->hbytes[i] = n;
    return CLRUN_OK;
}

/* A device buffer of at least n bytes in *b (its old contents are not kept). */
static clrun_status dev_buf(clrun_ctx *ctx, clrun_buf **b, size_t n)
{
    if (*b && clrun_buf_size(*b) >= n) return CLRUN_OK;
    clrun_buf_free(*b);
    *b = NULL;
    return clrun_buf_new(ctx, n, 0, b);
}

/* Wait until ev's command has ended, done or failed, so that no command touches the slot's buffers
 * afterwards: clWaitForEvents, and when that fails (it may fail for another event's error, or
 * spuriously) the event's status polled; when even that cannot be read, the pipeline's queues are
 * finished. Returns the command's own error (< 0), or CL_SUCCESS when it completed. */
static cl_int settle(clrun_pipe *pp, cl_event ev)
{
    const cl_int err = clWaitForEvents(1, &ev);
    cl_int status = CL_QUEUED;
    for (long spins = 0;; spins++) {
        if (clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL) != CL_SUCCESS || spins > 200000) {
            clFinish(pp->up), clFinish(clrun__queue(pp->ctx)), clFinish(pp->down);
            return err != CL_SUCCESS ? err : CL_INVALID_EVENT;
        }
        if (status <= CL_COMPLETE) return status < 0 ? status : CL_SUCCESS;
        nanosleep(&(struct timespec){0, 50000}, NULL); /* the wait failed: poll every 50 µs (10 s at most) */
    }
}

static void pipe_free(clrun_pipe *pp);

/* Deliver the oldest item; with wait 0 only when it has finished. Returns 1 when delivered, 0 when
 * not yet finished, -1 when deliver freed the pipeline (clrun_pipe_free) or closed its context
 * (clrun_close): both were put off until it returned, and done then; pp is gone. */
static int deliver_one(clrun_pipe *pp, int wait)
{
    struct slot *s = &pp->slots[pp->head];
    if (s->done) {
        cl_int status = CL_QUEUED;
        if (!wait && (clGetEventInfo(s->done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL) != CL_SUCCESS ||
                      status > CL_COMPLETE))
            return 0;
        const cl_int err = settle(pp, s->done);
        if (err != CL_SUCCESS && !s->st) item_fail(pp, s, clrun__fail_cl(pp->ctx, err, "clWaitForEvents", "an item of a pipeline"));
        clReleaseEvent(s->done);
        s->done = NULL;
    }
    static unsigned char none[1];
    const clrun_image r = {s->shape.width, s->shape.height, s->shape.width * s->shape.channels, s->shape.channels,
                           s->hptr[1] ? s->hptr[1] : none};
    if (s->st) clrun__fail(pp->ctx, s->st, "%s", s->err ? s->err : clrun_status_text(s->st));
    clrun_ctx *ctx = pp->ctx;
    pp->in_deliver = 1;
    ctx->delivering++;
    pp->deliver(pp->arg, s->tag, s->st, s->st ? NULL : &r);
    ctx->delivering--;
    pp->in_deliver = 0;
    if (pp->free_pending || (ctx->close_pending && !ctx->delivering)) {
        pipe_free(pp);
        if (ctx->close_pending && !ctx->delivering) clrun_close(ctx);
        clrun__fail(NULL, CLRUN_INVALID_ARG, "the pipeline was freed (or its context closed) by its own deliver callback");
        return -1;
    }
    free(s->err);
    s->err = NULL;
    pp->head = (pp->head + 1) % pp->depth;
    pp->count--;
    return 1;
}

static clrun_status reentered(clrun_pipe *pp, const char *call)
{
    return clrun__fail(pp->ctx, CLRUN_INVALID_ARG, "%s: called from the pipeline's own deliver callback", call);
}

unsigned clrun_pipe_poll(clrun_pipe *pp)
{
    if (!pp) return 0;
    unsigned n = 0;
    if (!pp || pp->in_deliver) return 0;
    for (int r; pp->count && (r = deliver_one(pp, 0)) != 0;) {
        n++;
        if (r < 0) break; /* pp is gone */
    }
    return n;
}

clrun_status clrun_pipe_flush(clrun_pipe *pp)
{
    if (!pp) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_pipe_flush: pp is NULL");
    if (pp->in_deliver) return reentered(pp, "clrun_pipe_flush");
    while (pp->count)
        if (deliver_one(pp, 1) < 0) return CLRUN_OK; /* freed by deliver: nothing is left to flush */
    if (pp->broken) return clrun__fail(pp->ctx, pp->broken, "%s", pp->broken_err ? pp->broken_err : clrun_status_text(pp->broken));
    return CLRUN_OK;
}

unsigned clrun_pipe_pending(const clrun_pipe *pp) { return pp ? pp->count : 0; }

/* Enqueue the item in slot s: upload, the op, download. Returns the pipeline's own failure (the
 * item's are kept in the slot). */
static clrun_status enqueue(clrun_pipe *pp, struct slot *s, const clrun_image *in)
{
    clrun_ctx *ctx = pp->ctx;
    clrun_status st;
    const size_t row = in->width * in->channels;
    const clrun_image ish = {in->width, in->height, row, in->channels, NULL};
    s->shape = (clrun_image){0};
    if (ctx->err) ctx->err[0] = 0;
    if ((st = pp->op.shape(pp->op.arg, ctx, &ish, &s->shape))) return item_fail(pp, s, st), CLRUN_OK;
    const size_t orow = s->shape.width * s->shape.channels;
    if ((in->channels && row / in->channels != in->width) || (row && in->height > SIZE_MAX / row) ||
        (s->shape.channels && orow / s->shape.channels != s->shape.width) || (orow && s->shape.height > SIZE_MAX / orow))
        return item_fail(pp, s,
                         clrun__fail(ctx, CLRUN_INVALID_ARG, "pipeline: an item of %zu×%zu×%u is too large", in->width, in->height,
                                     in->channels)),
               CLRUN_OK;
    const size_t ib = row * in->height, ob = orow * s->shape.height;
    if (in->height > 1 && in->stride < row)
        return item_fail(
                   pp, s,
                   clrun__fail(ctx, CLRUN_INVALID_ARG, "pipeline: row stride %zu is smaller than the row (%zu bytes)", in->stride, row)),
               CLRUN_OK;
    if (!ob) return CLRUN_OK; /* nothing for the device: an empty result */
    if (!ib)
        return item_fail(pp, s, clrun__fail(ctx, CLRUN_INVALID_ARG, "pipeline: the op makes a result of %zu bytes from an empty item", ob)),
               CLRUN_OK;
    if ((st = host_buf(pp, s, 0, ib)) || (st = host_buf(pp, s, 1, ob)) || (st = dev_buf(ctx, &s->din, ib)) ||
        (st = dev_buf(ctx, &s->dout, ob)))
        return item_fail(pp, s, st), CLRUN_OK; /* too large for the device, or for pinned memory: this item fails */
    if (in->stride == row || in->height == 1) memcpy(s->hptr[0], in->data, ib);
    else
        for (size_t y = 0; y < in->height; y++) memcpy((char *)s->hptr[0] + y * row, in->data + y * in->stride, row);
    cl_event up = NULL, comp = NULL;
    cl_int err = clEnqueueWriteBuffer(pp->up, s->din->mem, CL_FALSE, 0, ib, s->hptr[0], 0, NULL, &up);
    if (err != CL_SUCCESS) return clrun__fail_cl(ctx, err, "clEnqueueWriteBuffer", "a pipeline's upload of %zu bytes", ib);
    clFlush(pp->up);
    err = clEnqueueBarrierWithWaitList(clrun__queue(ctx), 1, &up, NULL);
    clReleaseEvent(up);
    if (err != CL_SUCCESS) return clrun__fail_cl(ctx, err, "clEnqueueBarrierWithWaitList", "a pipeline's wait for an upload");
    if ((st = pp->op.run(pp->op.arg, ctx, s->din, &ish, s->dout, &s->shape))) item_fail(pp, s, st);
    /* the marker closes the op's launches, failed or not: the slot's buffers are busy until it */
    err = clEnqueueMarkerWithWaitList(clrun__queue(ctx), 0, NULL, &comp);
    if (err != CL_SUCCESS) return clrun__fail_cl(ctx, err, "clEnqueueMarkerWithWaitList", "a pipeline's end of an item");
    clFlush(clrun__queue(ctx));
    if (s->st) return s->done = comp, CLRUN_OK;
    err = clEnqueueReadBuffer(pp->down, s->dout->mem, CL_FALSE, 0, ob, s->hptr[1], 1, &comp, &s->done);
    clReleaseEvent(comp);
    if (err != CL_SUCCESS) return clrun__fail_cl(ctx, err, "clEnqueueReadBuffer", "a pipeline's download of %zu bytes", ob);
    clFlush(pp->down);
    return CLRUN_OK;
}

clrun_status clrun_pipe_send(clrun_pipe *pp, const clrun_image *in, void *tag)
{
    if (!pp) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_pipe_send: pp is NULL");
    clrun_ctx *ctx = pp->ctx;
    if (pp->in_deliver) return reentered(pp, "clrun_pipe_send");
    if (!in || (!in->data && in->width && in->height))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_pipe_send: the item or its data is NULL");
    if (pp->broken)
        return clrun__fail(ctx, pp->broken, "the pipeline failed before and takes no more items: %s",
                           pp->broken_err ? pp->broken_err : clrun_status_text(pp->broken));
    /* deliver may free the pipeline: then the item is not taken */
    const unsigned before = pp->count;
    for (unsigned i = 0; i < before; i++) {
        const int r = deliver_one(pp, 0);
        if (r < 0) return CLRUN_INVALID_ARG;
        if (r == 0) break;
    }
    if (pp->count == pp->depth && deliver_one(pp, 1) < 0) return CLRUN_INVALID_ARG;
    struct slot *s = &pp->slots[(pp->head + pp->count) % pp->depth];
    s->tag = tag, s->st = CLRUN_OK, s->err = NULL, s->done = NULL;
    clrun_status st = enqueue(pp, s, in);
    if (st) { /* a queue refused work: let what was enqueued finish, and take this item back */
        clFinish(pp->up), clFinish(clrun__queue(ctx)), clFinish(pp->down);
        if (s->done) clReleaseEvent(s->done);
        s->done = NULL;
        free(s->err);
        s->err = NULL;
        return fail_pipe(pp, st);
    }
    pp->count++;
    return CLRUN_OK;
}

unsigned clrun_pipe_cancel(clrun_pipe *pp)
{
    if (!pp) return 0;
    if (!pp || pp->in_deliver) return 0;
    unsigned n = pp->count;
    for (; pp->count; pp->count--, pp->head = (pp->head + 1) % pp->depth) {
        struct slot *s = &pp->slots[pp->head];
        if (s->done) settle(pp, s->done), clReleaseEvent(s->done);
        s->done = NULL;
        free(s->err);
        s->err = NULL;
    }
    return n;
}

void clrun_pipe_free(clrun_pipe *pp)
{
    if (!pp) return;
    if (pp->in_deliver) { /* from its own deliver: done when deliver returns (deliver_one) */
        pp->free_pending = 1;
        return;
    }
    pipe_free(pp);
}

static void pipe_free(clrun_pipe *pp)
{
    pp->in_deliver = 0;
    clrun_pipe_cancel(pp);
    for (unsigned i = 0; i < pp->depth; i++) {
        struct slot *s = &pp->slots[i];
        clrun_buf_free(s->din);
        clrun_buf_free(s->dout);
        for (int j = 0; j < 2; j++)
            if (s->hmem[j]) {
                clEnqueueUnmapMemObject(pp->up, s->hmem[j], s->hptr[j], 0, NULL, NULL);
                clReleaseMemObject(s->hmem[j]);
            }
    }
    if (pp->up) clFinish(pp->up), clReleaseCommandQueue(pp->up);
    if (pp->down) clReleaseCommandQueue(pp->down);
    free(pp->slots);
    free(pp->broken_err);
    free(pp->owned);
    free(pp);
}
