/* overlap.c — `clrun bench overlap`: uploads overlapped with GEMMs through two queues (streams).
 * Chunks of --size MiB go from pinned host memory to the device, each followed by a GEMM that reads
 * the chunk as its A; once on the context's own queue (serial: each upload waits for the GEMM
 * before it), once alternating between two streams (the upload of one chunk runs while the GEMM of
 * the other does). The GEMM's size is chosen so that it takes about as long as the upload, the
 * case where overlap can save the most: at best the streams take half the serial time. */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { CHUNKS = 16 }; /* the bound of perfect overlap, (16·max + min) / (16·(upload + GEMM)), is near ½ */

struct job {
    clrun_ctx *ctx;
    void *host[2];
    clrun_buf *dev[2], *b, *c[2];
    size_t bytes, n;
};

/* Queue CHUNKS chunks: upload then GEMM, on the context's own queue (streams NULL) or alternating
 * between streams[0] and [1]; then wait for all. */
static clrun_status run(struct job *j, clrun_queue *const *streams, double *ms)
{
    clrun_status st = CLRUN_OK;
    const double t0 = cli_now();
    for (int i = 0; i < CHUNKS && !st; i++) {
        const int s = i % 2;
        clrun_gemm_desc d;
        clrun_gemm_desc_init(&d, CLRUN_F32, 1, j->n, j->n, j->n, 0, 0);
        d.a = j->dev[s], d.b = j->b, d.c = j->c[s];
        if ((st = clrun_queue_use(j->ctx, streams ? streams[s] : NULL)) ||
            (st = clrun_upload_async(j->dev[s], 0, j->host[s], j->bytes, NULL)) || (st = clrun_gemm(j->ctx, &d)) ||
            (st = clrun_queue_flush(clrun_queue_current(j->ctx))))
            break;
    }
    if (!st) st = clrun_queue_use(j->ctx, NULL);
    if (!st) st = clrun_finish(j->ctx);
    *ms = (cli_now() - t0) * 1e3;
    return st;
}

int bench_overlap(const struct bench_opts *o)
{
    clrun_ctx *ctx = NULL;
    clrun_status st = clrun_open(&ctx, o->spec);
    if (st) return cli_fail("bench", NULL, st);
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const double mib = o->size_mib > 0 ? o->size_mib : in->type == CLRUN_DEVICE_GPU ? 256 : 16;
    struct job j = {ctx, {NULL, NULL}, {NULL, NULL}, NULL, {NULL, NULL}, (size_t)(mib * 1048576.0), 0};
    clrun_queue *streams[2] = {NULL, NULL};
    const float one = 1.0f;
    int rc = 0;
    double up = 0, gemm = 0, t[64], ser[64], ovl[64];
    int reps = o->repeat > 64 ? 64 : o->repeat;
    for (int s = 0; s < 2; s++)
        if ((st = clrun_host_alloc(ctx, j.bytes, &j.host[s])) || (st = clrun_buf_new(ctx, j.bytes, 0, &j.dev[s]))) goto fail;
    for (int s = 0; s < 2; s++) memset(j.host[s], 0x3c, j.bytes); /* 0x3c3c3c3c: a finite float */
    /* the upload's time, then a GEMM that takes about as long (A is the chunk's first n×n floats) */
    for (int i = -1; i < 3; i++) {
        const double t0 = cli_now();
        if ((st = clrun_upload(j.dev[0], 0, j.host[0], j.bytes))) goto fail;
        if (i >= 0) t[i] = (cli_now() - t0) * 1e3;
    }
    up = cli_median(t, 3);
    {
        size_t n0 = in->type == CLRUN_DEVICE_GPU ? 2048 : 256;
        clrun_buf *a0 = NULL, *c0 = NULL;
        clrun_gemm_desc d;
        clrun_gemm_desc_init(&d, CLRUN_F32, 1, n0, n0, n0, 0, 0);
        if ((st = clrun_buf_new(ctx, n0 * n0 * 4, 0, &a0)) || (st = clrun_buf_new(ctx, n0 * n0 * 4, 0, &c0)) ||
            (st = clrun_buf_fill(a0, &one, 4, 0, n0 * n0 * 4))) {
            clrun_buf_free(a0), clrun_buf_free(c0);
            goto fail;
        }
        d.a = d.b = a0, d.c = c0;
        st = time_gemm(ctx, &d, CLRUN_GEMM_AUTO, 3, &gemm);
        clrun_buf_free(a0), clrun_buf_free(c0);
        if (st) goto fail;
        const double rate = 2.0 * n0 * n0 * n0 / gemm; /* flop per ms */
        size_t n = (size_t)cbrt(up * rate / 2.0) / 128 * 128;
        const size_t cap = (size_t)sqrt(j.bytes / 4.0) / 128 * 128;
        j.n = n < 128 ? 128 : n > cap ? cap : n;
        if (j.n < 128) {
            st = CLRUN_INVALID_ARG;
            cli_usage_error("bench", "--size %.0f MiB holds no 128×128 matrix", mib);
            rc = 2;
            goto done;
        }
    }
    if ((st = clrun_buf_new(ctx, j.n * j.n * 4, 0, &j.b)) || (st = clrun_buf_fill(j.b, &one, 4, 0, j.n * j.n * 4))) goto fail;
    for (int s = 0; s < 2; s++)
        if ((st = clrun_buf_new(ctx, j.n * j.n * 4, 0, &j.c[s]))) goto fail;
    for (int s = 0; s < 2; s++)
        if ((st = clrun_queue_new(ctx, &streams[s]))) goto fail;
    {
        clrun_gemm_desc d;
        clrun_gemm_desc_init(&d, CLRUN_F32, 1, j.n, j.n, j.n, 0, 0);
        d.a = j.dev[0], d.b = j.b, d.c = j.c[0];
        if ((st = time_gemm(ctx, &d, CLRUN_GEMM_AUTO, 3, &gemm))) goto fail;
    }
    for (int i = -1; i < reps; i++) { /* alternately, after a warm-up of each */
        double a, b;
        if ((st = run(&j, NULL, &a)) || (st = run(&j, streams, &b))) goto fail;
        if (i >= 0) ser[i] = a, ovl[i] = b;
    }
    const double ms_ser = cli_median(ser, reps), ms_ovl = cli_median(ovl, reps);
    if (!o->json) {
        printf("%s: %d chunks of %.0f MiB from pinned memory, each followed by a %zu³ f32 GEMM (%s) reading it; median of %d\n", in->name,
               CHUNKS, mib, j.n, clrun_gemm_backend_name(clrun_gemm_resolve(ctx, &(clrun_gemm_desc){.m = j.n, .n = j.n, .k = j.n})), reps);
        printf("one upload %.3f ms (%.1f GB/s), one GEMM %.3f ms: perfect overlap would take %.2f of the serial time\n", up,
               j.bytes / up / 1e6, gemm, (CHUNKS * (up > gemm ? up : gemm) + (up < gemm ? up : gemm)) / (CHUNKS * (up + gemm)));
    }
    record(o, "overlap", "serial (one queue)", j.bytes, ms_ser, CHUNKS * j.bytes / ms_ser / 1e6, NULL);
    record(o, "overlap", "two streams", j.bytes, ms_ovl, CHUNKS * j.bytes / ms_ovl / 1e6, NULL);
    if (!o->json) printf("  -> two streams take %.2f× the serial time (target: at most 0.6 on a GPU)\n", ms_ovl / ms_ser);
    goto done;
fail:
    rc = cli_fail("bench", ctx, st);
done:
    for (int s = 0; s < 2; s++) clrun_queue_free(streams[s]);
    for (int s = 0; s < 2; s++) clrun_buf_free(j.dev[s]), clrun_buf_free(j.c[s]), clrun_host_free(ctx, j.host[s]);
    clrun_buf_free(j.b);
    clrun_close(ctx);
    return rc;
}
