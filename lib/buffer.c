/* buffer.c — device buffers, transfers, fill/copy, pinned host memory and the staging path. */
#include "internal.h"

#include <stdint.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STAGE_CHUNK ((size_t)32 << 20) /* bytes per staging buffer (two of them) */
#define STAGE_MIN ((size_t)16 << 20)   /* smaller transfers go straight to the driver */
#define STAGE_MAX_THREADS 8

static clrun_status check_range(clrun_buf *b, size_t offset, size_t bytes, const char *what)
{
    if (offset > b->bytes || bytes > b->bytes - offset)
        return clrun__fail(b->ctx, CLRUN_INVALID_ARG, "%s: range [%zu, %zu + %zu) is outside the buffer of %zu bytes", what, offset, offset,
                           bytes, b->bytes);
    return CLRUN_OK;
}

static void human(uint64_t bytes, char *out, size_t size)
{
    if (bytes >= ((uint64_t)1 << 30)) snprintf(out, size, "%.2f GiB", bytes / 1073741824.0);
    else if (bytes >= ((uint64_t)1 << 20)) snprintf(out, size, "%.2f MiB", bytes / 1048576.0);
    else snprintf(out, size, "%llu bytes", (unsigned long long)bytes);
}

static clrun_status too_big(clrun_ctx *ctx, size_t bytes, cl_int err)
{
    char ask[32], mem[32], alloc[32];
    human(bytes, ask, sizeof ask);
    human(ctx->info.global_mem, mem, sizeof mem);
    human(ctx->info.max_alloc, alloc, sizeof alloc);
    return clrun__fail(ctx, CLRUN_DEVICE_OUT_OF_MEMORY,
                       "cannot allocate %zu bytes (%s) on %s: the device has %s of global memory and "
                       "allows at most %s in one buffer%s%s",
                       bytes, ask, ctx->info.name, mem, alloc, err ? "; the driver said " : "", err ? clrun_cl_error_name(err) : "");
}

static clrun_status wrap(clrun_ctx *ctx, cl_mem mem, size_t bytes, clrun_buf **out)
{
    clrun_buf *b = malloc(sizeof *b);
    if (!b) {
        clReleaseMemObject(mem);
        return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "out of host memory for a buffer handle");
    }
    b->ctx = ctx;
    b->mem = mem;
    b->bytes = bytes;
    b->devaddr = 0;
    b->cu_addr = 0, b->cu_dev = 0, b->cu_share = NULL;
    *out = b;
    return CLRUN_OK;
}

/* cuda: 0 a shared allocation from CLRUN__CU_MIN bytes where the context has them (lib/cuda.c), else plain; 1 shared at any
 * size or CLRUN_UNSUPPORTED */
static clrun_status buf_new(clrun_ctx *ctx, size_t bytes, unsigned flags, const void *src, int cuda, clrun_buf **out)
{
    cl_int err = CL_SUCCESS;
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_buf_new: ctx is NULL");
    if (!out) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_buf_new: out is NULL");
    *out = NULL;
    if (bytes == 0) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_buf_new: a buffer of 0 bytes is not allowed");
    if ((flags & CLRUN_BUF_READ_ONLY) && (flags & CLRUN_BUF_WRITE_ONLY))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_buf_new: READ_ONLY and WRITE_ONLY together");
    if (bytes > ctx->info.max_alloc || bytes > ctx->info.global_mem) return too_big(ctx, bytes, 0);
    cl_mem_flags f = (flags & CLRUN_BUF_READ_ONLY)    ? CL_MEM_READ_ONLY
                     : (flags & CLRUN_BUF_WRITE_ONLY) ? CL_MEM_WRITE_ONLY
                                                      : CL_MEM_READ_WRITE;
    uint64_t cu_addr = 0;
    int cu_dev = 0;
    cl_mem mem = NULL;
    if (clrun__cu_alloc(ctx, bytes, f, cuda, &mem, &cu_addr, &cu_dev)) { /* memory shared with CUDA (lib/cuda.c) */
        struct clrun__cu_share *share = malloc(sizeof *share);
        clrun_buf *b = share ? malloc(sizeof *b) : NULL;
        if (!b) {
            free(share);
            clrun__cu_unshare(ctx, mem);
            clReleaseMemObject(mem);
            return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "out of host memory for a buffer handle");
        }
        share->root = mem;
        atomic_init(&share->holders, 1);
        *b = (clrun_buf){.ctx = ctx, .mem = mem, .bytes = bytes, .cu_addr = cu_addr, .cu_dev = cu_dev, .cu_share = share};
        *out = b;
        if (src && (err = clEnqueueWriteBuffer(ctx->own.queue, mem, CL_TRUE, 0, bytes, src, 0, NULL, NULL)) != CL_SUCCESS) {
            clrun_buf_free(*out);
            *out = NULL;
            return clrun__fail_cl(ctx, err, "clEnqueueWriteBuffer", "filling a new buffer of %zu bytes", bytes);
        }
        return CLRUN_OK;
    }
    if (cuda) return clrun__fail(ctx, CLRUN_UNSUPPORTED, "no buffer shared with CUDA can be made on %s", ctx->info.name);
    mem = clCreateBuffer(ctx->context, f | (src ? CL_MEM_COPY_HOST_PTR : 0), bytes, (void *)src, &err);
    if (!mem) {
        if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES || err == CL_INVALID_BUFFER_SIZE)
            return too_big(ctx, bytes, err);
        return clrun__fail_cl(ctx, err, "clCreateBuffer", "allocating %zu bytes", bytes);
    }
    return wrap(ctx, mem, bytes, out);
}

clrun_status clrun_buf_new(clrun_ctx *ctx, size_t bytes, unsigned flags, clrun_buf **out)
{
    return buf_new(ctx, bytes, flags, NULL, 0, out);
}

clrun_status clrun__buf_new_cuda(clrun_ctx *ctx, size_t bytes, clrun_buf **out) { return buf_new(ctx, bytes, 0, NULL, 1, out); }

clrun_status clrun_buf_new_from(clrun_ctx *ctx, const void *src, size_t bytes, unsigned flags, clrun_buf **out)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_buf_new_from: ctx is NULL");
    CLRUN__SERIAL(ctx);
    if (!src) {
        if (out) *out = NULL;
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_buf_new_from: src is NULL");
    }
    return buf_new(ctx, bytes, flags, src, 0, out);
}

clrun_status clrun_buf_sub(clrun_buf *parent, size_t offset, size_t bytes, clrun_buf **out)
{
    if (!parent) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_buf_sub: parent is NULL");
    clrun_ctx *ctx = parent->ctx;
    cl_int err = CL_SUCCESS;
    clrun_status st;
    if (!out) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_buf_sub: out is NULL");
    *out = NULL;
    if (bytes == 0) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_buf_sub: a view of 0 bytes is not allowed");
    if ((st = check_range(parent, offset, bytes, "clrun_buf_sub")) != CLRUN_OK) return st;
    if (offset % ctx->info.mem_base_align)
        return clrun__fail(ctx, CLRUN_INVALID_ARG,
                           "clrun_buf_sub: offset %zu is not a multiple of %u bytes, the alignment %s "
                           "requires for sub-buffers",
                           offset, ctx->info.mem_base_align, ctx->info.name);
    cl_buffer_region region = {offset, bytes};
    cl_mem mem = clCreateSubBuffer(parent->mem, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    if (!mem) return clrun__fail_cl(ctx, err, "clCreateSubBuffer", "making a view [%zu, +%zu)", offset, bytes);
    if ((st = wrap(ctx, mem, bytes, out)) != CLRUN_OK) return st;
    if (parent->cu_share) {
        (*out)->cu_addr = parent->cu_addr + offset, (*out)->cu_dev = parent->cu_dev, (*out)->cu_share = parent->cu_share;
        atomic_fetch_add(&parent->cu_share->holders, 1);
    }
    return CLRUN_OK;
}

clrun_status clrun_buf_wrap(clrun_ctx *ctx, cl_mem mem, size_t offset, size_t bytes, clrun_buf **out)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_buf_wrap: ctx is NULL");
    CLRUN__SERIAL(ctx);
    cl_int err;
    if (!out) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_buf_wrap: out is NULL");
    *out = NULL;
    if (!mem) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_buf_wrap: mem is NULL");
    cl_context mc = NULL;
    cl_mem_object_type type = 0;
    size_t size = 0;
    if ((err = clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof mc, &mc, NULL)) != CL_SUCCESS ||
        (err = clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof type, &type, NULL)) != CL_SUCCESS ||
        (err = clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, NULL)) != CL_SUCCESS) {
        if (err == CL_INVALID_MEM_OBJECT) /* the driver tells: a released buffer, or a queue, context … passed as a cl_mem */
            return clrun__fail(ctx, CLRUN_INVALID_ARG,
                               "clrun_buf_wrap: the handle is not a memory object its driver knows (CL_INVALID_MEM_OBJECT): a released "
                               "buffer, or a queue, context or other object passed as a cl_mem");
        return clrun__fail_cl(ctx, err, "clGetMemObjectInfo", "clrun_buf_wrap: reading the memory object (is it a valid cl_mem?)");
    }
    if (type != CL_MEM_OBJECT_BUFFER) {
        if (type >= CL_MEM_OBJECT_IMAGE2D && type <= CL_MEM_OBJECT_IMAGE1D_BUFFER)
            return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_buf_wrap: the memory object is an image, not a buffer");
        if (type == 0x10F7) /* CL_MEM_OBJECT_PIPE (OpenCL 2.0) */
            return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_buf_wrap: the memory object is a pipe, not a buffer");
        return clrun__fail(ctx, CLRUN_INVALID_ARG,
                           "clrun_buf_wrap: the handle is not a memory object (its driver reports type 0x%x): a queue, context, "
                           "kernel or other object was passed as a cl_mem",
                           (unsigned)type);
    }
    if (mc != ctx->context)
        return clrun__fail(ctx, CLRUN_INVALID_ARG,
                           "clrun_buf_wrap: the buffer belongs to another OpenCL context (wrap that context with clrun_ctx_wrap)");
    if (offset > size || (bytes && bytes > size - offset))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_buf_wrap: %zu bytes from offset %zu run past the buffer's %zu", bytes, offset,
                           size);
    if (!bytes) bytes = size - offset;
    if (!bytes) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_buf_wrap: a view of 0 bytes is not allowed");
    clrun_buf *b = calloc(1, sizeof *b);
    if (!b) return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "clrun_buf_wrap: out of memory");
    if (offset == 0) {
        clRetainMemObject(mem); /* clrun's own reference: the owner's stays theirs */
        b->mem = mem;
    } else {
        if (offset % ctx->info.mem_base_align) {
            free(b);
            return clrun__fail(ctx, CLRUN_INVALID_ARG,
                               "clrun_buf_wrap: offset %zu is not a multiple of %u bytes, the alignment %s requires for sub-buffers "
                               "(or wrap the whole buffer and pass the offset to the op)",
                               offset, ctx->info.mem_base_align, ctx->info.name);
        }
        cl_buffer_region region = {offset, bytes};
        if (!(b->mem = clCreateSubBuffer(mem, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err))) {
            free(b);
            return clrun__fail_cl(ctx, err, "clCreateSubBuffer", "clrun_buf_wrap: a view of %zu bytes at %zu", bytes, offset);
        }
    }
    b->ctx = ctx, b->bytes = bytes;
    *out = b;
    return CLRUN_OK;
}

void clrun_buf_free(clrun_buf *b)
{
    /* no lock: it touches no state of the context (and scratch is freed inside locked calls) */
    if (!b) return;
    if (b->cu_share && atomic_fetch_sub(&b->cu_share->holders, 1) == 1) { /* the last one on memory shared with CUDA */
        clrun__cu_unshare(b->ctx, b->cu_share->root);
        free(b->cu_share);
    }
    clReleaseMemObject(b->mem);
    free(b);
}

size_t clrun_buf_size(const clrun_buf *b) { return b ? b->bytes : 0; }
cl_mem clrun_buf_cl_mem(const clrun_buf *b) { return b ? b->mem : NULL; }
clrun_ctx *clrun_buf_context(const clrun_buf *b) { return b ? b->ctx : NULL; }

/* ---- pinned host memory -------------------------------------------------------------------- */

clrun_status clrun_host_alloc(clrun_ctx *ctx, size_t bytes, void **ptr)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_host_alloc: ctx is NULL");
    CLRUN__SERIAL(ctx);
    cl_int err = CL_SUCCESS;
    if (!ptr) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_host_alloc: ptr is NULL");
    *ptr = NULL;
    if (bytes == 0) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_host_alloc: 0 bytes");
    struct clrun__pinned *p = calloc(1, sizeof *p);
    if (!p) return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "clrun_host_alloc: out of memory");
    p->mem = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
    if (!p->mem) {
        free(p);
        return clrun__fail_cl(ctx, err, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)", "allocating %zu bytes of pinned host memory", bytes);
    }
    p->ptr = clEnqueueMapBuffer(clrun__queue(ctx), p->mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &err);
    if (!p->ptr) {
        clReleaseMemObject(p->mem);
        free(p);
        return clrun__fail_cl(ctx, err, "clEnqueueMapBuffer", "mapping %zu bytes of pinned host memory", bytes);
    }
    p->bytes = bytes;
    pthread_mutex_lock(&ctx->pinned_lock);
    p->next = ctx->pinned;
    ctx->pinned = p;
    pthread_mutex_unlock(&ctx->pinned_lock);
    *ptr = p->ptr;
    return CLRUN_OK;
}

clrun_status clrun_host_free(clrun_ctx *ctx, void *ptr)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_host_free: ctx is NULL");
    CLRUN__SERIAL(ctx);
    if (!ptr) return CLRUN_OK;
    pthread_mutex_lock(&ctx->pinned_lock);
    struct clrun__pinned **pp = &ctx->pinned;
    while (*pp && (*pp)->ptr != ptr) pp = &(*pp)->next;
    struct clrun__pinned *p = *pp;
    if (p) *pp = p->next;
    pthread_mutex_unlock(&ctx->pinned_lock);
    if (!p) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_host_free: %p was not allocated by clrun_host_alloc on this context", ptr);
    clEnqueueUnmapMemObject(clrun__queue(ctx), p->mem, p->ptr, 0, NULL, NULL);
    clFinish(clrun__queue(ctx));
    clReleaseMemObject(p->mem);
    free(p);
    return CLRUN_OK;
}

static int is_pinned(clrun_ctx *ctx, const void *ptr, size_t bytes)
{
    int found = 0;
    uintptr_t a = (uintptr_t)ptr;
    pthread_mutex_lock(&ctx->pinned_lock);
    for (struct clrun__pinned *p = ctx->pinned; p && !found; p = p->next) {
        uintptr_t s = (uintptr_t)p->ptr;
        found = a >= s && a - s <= p->bytes && bytes <= p->bytes - (a - s);
    }
    pthread_mutex_unlock(&ctx->pinned_lock);
    return found;
}

/* ---- staging through pinned memory, copied by several threads -------------------------------- */

struct copy_part {
    char *dst;
    const char *src;
    size_t n;
};

static void *copy_thread(void *arg)
{
    struct copy_part *c = arg;
    memcpy(c->dst, c->src, c->n);
    return NULL;
}

static void parallel_copy(void *dst, const void *src, size_t n)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int t = cpus < 1 ? 1 : cpus > STAGE_MAX_THREADS ? STAGE_MAX_THREADS : (int)cpus;
    if (n < ((size_t)2 << 20)) t = 1;
    struct copy_part parts[STAGE_MAX_THREADS];
    pthread_t tid[STAGE_MAX_THREADS];
    int started[STAGE_MAX_THREADS] = {0};
    size_t per = (n / (size_t)t + 4095) & ~(size_t)4095;
    for (int i = 0; i < t; i++) {
        size_t off = per * (size_t)i;
        parts[i].dst = (char *)dst + off;
        parts[i].src = (const char *)src + off;
        parts[i].n = off >= n ? 0 : (n - off < per ? n - off : per);
    }
    for (int i = 1; i < t; i++) started[i] = parts[i].n && pthread_create(&tid[i], NULL, copy_thread, &parts[i]) == 0;
    copy_thread(&parts[0]);
    for (int i = 1; i < t; i++) {
        if (started[i]) pthread_join(tid[i], NULL);
        else if (parts[i].n) copy_thread(&parts[i]);
    }
}

static int staging_wanted(clrun_ctx *ctx, const void *host, size_t bytes)
{
    int mode; /* CLRUN_STAGING: -1 unset, 0 "1" (when it pays), 1 "0" (never), 2 "force" */
    if (clrun__setting_choice(NULL, CLRUN__SET_STAGING, &mode) != CLRUN_OK) mode = -1; /* clrun_open refused it */
    if (mode == 1) return 0;
    int forced = mode == 2;
    if (bytes < STAGE_MIN && !forced) return 0;
    if (!forced && (ctx->info.host_unified || ctx->info.type == CLRUN_DEVICE_CPU)) return 0;
    return !is_pinned(ctx, host, bytes);
}

static clrun_status stage_init(clrun_ctx *ctx)
{
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < 2; i++) {
        if (ctx->stage_mem[i]) continue;
        ctx->stage_mem[i] = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, STAGE_CHUNK, NULL, &err);
        if (!ctx->stage_mem[i]) return clrun__fail_cl(ctx, err, "clCreateBuffer", "allocating the staging area");
        ctx->stage_ptr[i] = clEnqueueMapBuffer(clrun__queue(ctx), ctx->stage_mem[i], CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, STAGE_CHUNK, 0,
                                               NULL, NULL, &err);
        if (!ctx->stage_ptr[i]) {
            clReleaseMemObject(ctx->stage_mem[i]);
            ctx->stage_mem[i] = NULL;
            return clrun__fail_cl(ctx, err, "clEnqueueMapBuffer", "mapping the staging area");
        }
    }
    ctx->stage_bytes = STAGE_CHUNK;
    return CLRUN_OK;
}

/* Under profiling, a transfer's event is recorded as the kernels' are, under the name
 * "clrun_upload" or "clrun_download" (one record per command: a staged transfer is several). */
static clrun_status profiled(clrun_ctx *ctx, int up, cl_event e)
{
    return ctx->profile && e ? clrun__profile_add(ctx, up ? "clrun_upload" : "clrun_download", e) : CLRUN_OK;
}

/* Upload: copy chunk i into stage[i%2] with several threads while the DMA of chunk i-1 runs. */
static clrun_status staged_upload(clrun_buf *b, size_t offset, const char *src, size_t bytes)
{
    clrun_ctx *ctx = b->ctx;
    clrun_status st = stage_init(ctx);
    cl_event ev[2] = {NULL, NULL};
    cl_int err = CL_SUCCESS;
    if (st != CLRUN_OK) return st;
    for (size_t done = 0, i = 0; done < bytes; done += ctx->stage_bytes, i++) {
        size_t n = bytes - done < ctx->stage_bytes ? bytes - done : ctx->stage_bytes;
        int s = (int)(i & 1);
        if (ev[s]) {
            clWaitForEvents(1, &ev[s]);
            clReleaseEvent(ev[s]);
            ev[s] = NULL;
        }
        parallel_copy(ctx->stage_ptr[s], src + done, n);
        err = clEnqueueWriteBuffer(clrun__queue(ctx), b->mem, CL_FALSE, offset + done, n, ctx->stage_ptr[s], 0, NULL, &ev[s]);
        if (err != CL_SUCCESS) {
            st = clrun__fail_cl(ctx, err, "clEnqueueWriteBuffer", "uploading %zu bytes", bytes);
            break;
        }
        if ((st = profiled(ctx, 1, ev[s]))) break;
    }
    clFinish(clrun__queue(ctx));
    for (int s = 0; s < 2; s++)
        if (ev[s]) clReleaseEvent(ev[s]);
    return st;
}

/* Download: the DMA of chunk i+1 runs while several threads copy chunk i out of staging. */
static clrun_status staged_download(clrun_buf *b, size_t offset, char *dst, size_t bytes)
{
    clrun_ctx *ctx = b->ctx;
    clrun_status st = stage_init(ctx);
    cl_event ev[2] = {NULL, NULL};
    size_t chunk = ctx->stage_bytes, nchunks;
    cl_int err = CL_SUCCESS;
    if (st != CLRUN_OK) return st;
    nchunks = (bytes + chunk - 1) / chunk;
    for (size_t i = 0; i < nchunks + 1 && st == CLRUN_OK; i++) {
        if (i < nchunks) { /* queue chunk i */
            size_t off = i * chunk, n = bytes - off < chunk ? bytes - off : chunk;
            err = clEnqueueReadBuffer(clrun__queue(ctx), b->mem, CL_FALSE, offset + off, n, ctx->stage_ptr[i & 1], 0, NULL, &ev[i & 1]);
            if (err != CL_SUCCESS) st = clrun__fail_cl(ctx, err, "clEnqueueReadBuffer", "downloading %zu bytes", bytes);
            else st = profiled(ctx, 0, ev[i & 1]);
        }
        if (i > 0) { /* drain chunk i-1 */
            size_t j = i - 1, off = j * chunk, n = bytes - off < chunk ? bytes - off : chunk;
            cl_event *e = &ev[j & 1];
            err = clWaitForEvents(1, e);
            clReleaseEvent(*e);
            *e = NULL;
            if (err != CL_SUCCESS && st == CLRUN_OK) st = clrun__fail_cl(ctx, err, "clEnqueueReadBuffer", "downloading %zu bytes", bytes);
            if (st == CLRUN_OK) parallel_copy(dst + off, ctx->stage_ptr[j & 1], n);
        }
    }
    clFinish(clrun__queue(ctx));
    for (int s = 0; s < 2; s++)
        if (ev[s]) clReleaseEvent(ev[s]);
    return st;
}

uint64_t *clrun__buf_devaddr(clrun_buf *b) { return b ? &b->devaddr : NULL; }
uint64_t clrun__buf_cuaddr(const clrun_buf *b) { return b ? b->cu_addr : 0; }

/* ---- transfers ----------------------------------------------------------------------------- */

static clrun_status transfer(clrun_buf *b, size_t offset, void *host, size_t bytes, int up, int blocking, clrun_event **ev)
{
    if (!b) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_%s: the buffer is NULL", up ? "upload" : "download");
    clrun_ctx *ctx = b->ctx;
    CLRUN__SERIAL(ctx); /* the staging buffers are the context's */
    const char *what = up ? "upload" : "download";
    clrun_status st;
    cl_event e = NULL;
    cl_int err;
    if (ev) *ev = NULL;
    if ((st = check_range(b, offset, bytes, what)) != CLRUN_OK) return st;
    if (!host && bytes) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: host pointer is NULL", what);
    if (bytes == 0) { /* nothing to move; still hand back a completed event when asked */
        if (!ev) return CLRUN_OK;
        err = clEnqueueMarkerWithWaitList(clrun__queue(ctx), 0, NULL, &e);
        if (err != CL_SUCCESS) return clrun__fail_cl(ctx, err, "clEnqueueMarkerWithWaitList", "%s", what);
        return clrun__event_wrap(ctx, e, ev);
    }
    if (blocking && staging_wanted(ctx, host, bytes))
        return up ? staged_upload(b, offset, host, bytes) : staged_download(b, offset, host, bytes);
    /* A blocking write returns once OpenCL has taken the host data, not once it is in the buffer
     * (the spec allows either; Intel's CPU runtime returns early): it waits for its event, so that a
     * command later queued on another queue (a stream) reads what was written. */
    cl_event *want = ev || ctx->profile || (up && blocking) ? &e : NULL;
    if (up) err = clEnqueueWriteBuffer(clrun__queue(ctx), b->mem, blocking ? CL_TRUE : CL_FALSE, offset, bytes, host, 0, NULL, want);
    else err = clEnqueueReadBuffer(clrun__queue(ctx), b->mem, blocking ? CL_TRUE : CL_FALSE, offset, bytes, host, 0, NULL, want);
    if (err != CL_SUCCESS)
        return clrun__fail_cl(ctx, err, up ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer", "%s of %zu bytes at offset %zu", what, bytes,
                              offset);
    if (up && blocking && (err = clWaitForEvents(1, &e)) != CL_SUCCESS) {
        clReleaseEvent(e);
        return clrun__fail_cl(ctx, err, "clWaitForEvents", "upload of %zu bytes at offset %zu", bytes, offset);
    }
    if ((st = profiled(ctx, up, e))) {
        clReleaseEvent(e);
        return st;
    }
    return clrun__event_wrap(ctx, e, ev);
}

clrun_status clrun_upload(clrun_buf *b, size_t offset, const void *src, size_t bytes)
{
    if (!b) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_upload: b is NULL");
    CLRUN__SERIAL(b ? b->ctx : NULL);
    return transfer(b, offset, (void *)src, bytes, 1, 1, NULL);
}

clrun_status clrun_download(clrun_buf *b, size_t offset, void *dst, size_t bytes) { return transfer(b, offset, dst, bytes, 0, 1, NULL); }

clrun_status clrun_upload_async(clrun_buf *b, size_t offset, const void *src, size_t bytes, clrun_event **ev)
{
    if (!b) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_upload_async: b is NULL");
    CLRUN__SERIAL(b ? b->ctx : NULL);
    return transfer(b, offset, (void *)src, bytes, 1, 0, ev);
}

clrun_status clrun_download_async(clrun_buf *b, size_t offset, void *dst, size_t bytes, clrun_event **ev)
{
    if (!b) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_download_async: b is NULL");
    CLRUN__SERIAL(b ? b->ctx : NULL);
    return transfer(b, offset, dst, bytes, 0, 0, ev);
}

clrun_status clrun_buf_fill(clrun_buf *b, const void *pattern, size_t pattern_size, size_t offset, size_t bytes)
{
    if (!b) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_buf_fill: b is NULL");
    CLRUN__SERIAL(b ? b->ctx : NULL);
    clrun_ctx *ctx = b->ctx;
    clrun_status st;
    if (!pattern || pattern_size == 0 || pattern_size > 128 || (pattern_size & (pattern_size - 1)))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_buf_fill: pattern size %zu is not 1, 2, 4, ... 128", pattern_size);
    if (offset % pattern_size || bytes % pattern_size)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_buf_fill: offset %zu and size %zu must be multiples of the pattern size %zu",
                           offset, bytes, pattern_size);
    if ((st = check_range(b, offset, bytes, "clrun_buf_fill")) != CLRUN_OK) return st;
    if (bytes == 0) return CLRUN_OK;
    cl_int err = clEnqueueFillBuffer(clrun__queue(ctx), b->mem, pattern, pattern_size, offset, bytes, 0, NULL, NULL);
    if (err != CL_SUCCESS) return clrun__fail_cl(ctx, err, "clEnqueueFillBuffer", "filling %zu bytes", bytes);
    return CLRUN_OK;
}

clrun_status clrun__span(clrun_ctx *ctx, const char *what, const char *name, const clrun_buf *b, size_t off, size_t count, size_t es)
{
    if (!b) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: %s is NULL", what, name);
    const size_t cap = b->bytes / es;
    if (off > cap || count > cap - off)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: elements %zu..%zu past %s's %zu", what, off, off + count, name, cap);
    return CLRUN_OK;
}

clrun_status clrun_buf_copy(clrun_buf *dst, size_t dst_offset, clrun_buf *src, size_t src_offset, size_t bytes)
{
    if (!dst) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_buf_copy: dst is NULL");
    CLRUN__SERIAL(dst ? dst->ctx : NULL);
    clrun_ctx *ctx = dst->ctx;
    clrun_status st;
    if (!src) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_buf_copy: src is NULL");
    if (src->ctx != ctx) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_buf_copy: buffers belong to different contexts");
    if ((st = check_range(dst, dst_offset, bytes, "clrun_buf_copy (destination)")) != CLRUN_OK) return st;
    if ((st = check_range(src, src_offset, bytes, "clrun_buf_copy (source)")) != CLRUN_OK) return st;
    if (bytes == 0) return CLRUN_OK;
    if (src->mem == dst->mem && src_offset < dst_offset + bytes && dst_offset < src_offset + bytes)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_buf_copy: source [%zu, +%zu) and destination [%zu, +%zu) overlap", src_offset,
                           bytes, dst_offset, bytes);
    cl_int err = clEnqueueCopyBuffer(clrun__queue(ctx), src->mem, dst->mem, src_offset, dst_offset, bytes, 0, NULL, NULL);
    if (err != CL_SUCCESS) return clrun__fail_cl(ctx, err, "clEnqueueCopyBuffer", "copying %zu bytes", bytes);
    return CLRUN_OK;
}
