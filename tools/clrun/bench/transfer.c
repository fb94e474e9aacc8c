/* transfer.c — `clrun bench transfer`: host<->device from pinned and ordinary memory, against the
 * plain driver path. */
#include "bench.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { H2D, D2H };

/* Median wall time (ms) of a blocking transfer of `bytes` between host and buf. */
static double time_transfer(clrun_ctx *ctx, clrun_buf *buf, void *host, size_t bytes, int dir, int repeat, clrun_status *st)
{
    double t[64];
    if (repeat > 64) repeat = 64;
    for (int i = -1; i < repeat; i++) { /* i = -1: warm-up */
        double t0 = cli_now();
        *st = dir == H2D ? clrun_upload(buf, 0, host, bytes) : clrun_download(buf, 0, host, bytes);
        if (*st != CLRUN_OK) return -1;
        if (i >= 0) t[i] = (cli_now() - t0) * 1e3;
    }
    (void)ctx;
    return cli_median(t, repeat);
}

/* --devices: every device of the group copying at once, a thread each (does the host's memory or
 * PCIe saturate?): each thread times `reps` blocking transfers after a common start. */
struct copier {
    clrun_ctx *ctx;
    clrun_buf *buf;
    void *pinned;
    char *plain;
    size_t bytes;
    int reps, dir, pinned_case;
    pthread_barrier_t *start;
    double secs;
    clrun_status st;
};

static void *copier(void *arg)
{
    struct copier *c = arg;
    void *host = c->pinned_case ? c->pinned : c->plain;
    c->st = c->dir == H2D ? clrun_upload(c->buf, 0, host, c->bytes) : clrun_download(c->buf, 0, host, c->bytes); /* warm-up */
    pthread_barrier_wait(c->start);
    const double t0 = cli_now();
    for (int r = 0; r < c->reps && !c->st; r++)
        c->st = c->dir == H2D ? clrun_upload(c->buf, 0, host, c->bytes) : clrun_download(c->buf, 0, host, c->bytes);
    c->secs = cli_now() - t0;
    return NULL;
}

static int group_transfer(const struct bench_opts *o, double mib)
{
    clrun_group *g = NULL;
    clrun_status st = clrun_group_open(&g, o->devices);
    if (st) return st == CLRUN_INVALID_ARG ? cli_usage_error("bench", "%s", clrun_last_error(NULL)) : cli_fail("bench", NULL, st);
    const unsigned nd = clrun_group_size(g);
    struct copier *c = calloc(nd, sizeof *c);
    pthread_t *th = calloc(nd, sizeof *th);
    pthread_barrier_t start;
    int rc = !c || !th ? (fprintf(stderr, "clrun bench: out of memory\n"), EXIT_RUNTIME) : 0;
    for (unsigned i = 0; !rc && i < nd; i++) {
        const clrun_device_info *in = clrun_ctx_device(clrun_group_ctx(g, i));
        size_t bytes = (size_t)(mib * 1048576.0);
        if (bytes > in->max_alloc) bytes = (size_t)in->max_alloc / 4096 * 4096;
        c[i] = (struct copier){clrun_group_ctx(g, i), NULL, NULL, malloc(bytes), bytes, o->repeat, 0, 0, &start, 0, CLRUN_OK};
        if (!c[i].plain || (st = clrun_buf_new(c[i].ctx, bytes, 0, &c[i].buf)) || (st = clrun_host_alloc(c[i].ctx, bytes, &c[i].pinned)))
            rc = cli_fail("bench", c[i].plain ? c[i].ctx : NULL, c[i].plain ? st : CLRUN_HOST_OUT_OF_MEMORY);
        else memset(c[i].plain, 1, bytes), memset(c[i].pinned, 2, bytes);
    }
    if (!rc && !o->json) printf("all %u devices of the group copying at once, a thread each:\n", nd);
    for (int dir = H2D; !rc && dir <= D2H; dir++)
        for (int pc = 1; !rc && pc >= 0; pc--) {
            pthread_barrier_init(&start, NULL, nd);
            unsigned started = 0;
            for (unsigned i = 0; i < nd; i++) {
                c[i].dir = dir, c[i].pinned_case = pc, c[i].st = CLRUN_OK;
                if (pthread_create(&th[i], NULL, copier, &c[i])) break;
                started++;
            }
            if (started < nd) { /* the barrier would never open: give up (threads are few, this does not happen) */
                fprintf(stderr, "clrun bench: cannot start the copying threads\n");
                exit(EXIT_RUNTIME);
            }
            double slowest = 0, total = 0;
            for (unsigned i = 0; i < nd; i++) {
                pthread_join(th[i], NULL);
                if (c[i].st && !rc) rc = cli_fail("bench", c[i].ctx, c[i].st);
                if (c[i].secs > slowest) slowest = c[i].secs;
                total += (double)c[i].bytes * c[i].reps;
            }
            pthread_barrier_destroy(&start);
            if (rc) break;
            char impl[64];
            snprintf(impl, sizeof impl, "%s, %u devices at once", pc ? "pinned" : "pageable, clrun", nd);
            record(o, dir == H2D ? "h2d" : "d2h", impl, (size_t)total, slowest * 1e3, total / slowest / 1e9, NULL);
            for (unsigned i = 0; i < nd && !o->json; i++)
                printf("    device %u: %.1f GB/s\n", i, (double)c[i].bytes * c[i].reps / c[i].secs / 1e9);
        }
    for (unsigned i = 0; c && i < nd; i++) {
        free(c[i].plain);
        if (c[i].pinned) clrun_host_free(c[i].ctx, c[i].pinned);
        clrun_buf_free(c[i].buf);
    }
    free(c), free(th);
    clrun_group_close(g);
    return rc;
}

int bench_transfer(const struct bench_opts *o)
{
    clrun_ctx *ctx = NULL;
    clrun_buf *buf = NULL, *buf2 = NULL;
    void *pinned = NULL;
    char *plain = NULL;
    clrun_status st = CLRUN_OK;
    int rc = cli_open("bench", o->spec, &ctx);
    if (rc) return rc;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    double mib = o->size_mib > 0 ? o->size_mib : in->type == CLRUN_DEVICE_GPU ? 1024 : 256;
    size_t bytes = (size_t)(mib * 1048576.0);
    if (bytes > in->max_alloc) bytes = (size_t)in->max_alloc / 4096 * 4096;
    if ((st = clrun_buf_new(ctx, bytes, 0, &buf)) || (st = clrun_buf_new(ctx, bytes, 0, &buf2)) ||
        (st = clrun_host_alloc(ctx, bytes, &pinned))) {
        rc = cli_fail("bench", ctx, st);
        goto done;
    }
    plain = malloc(bytes);
    if (!plain) {
        fprintf(stderr, "clrun bench: cannot allocate %zu bytes of host memory\n", bytes);
        rc = EXIT_RUNTIME;
        goto done;
    }
    memset(plain, 1, bytes); /* fault the pages in before timing */
    memset(pinned, 2, bytes);
    if (!o->json) {
        printf("transfer benchmark on %s; %zu bytes, median of %d after a warm-up\n", in->name, bytes, o->repeat);
        printf("%-10s %-28s %12s %12s %10s\n", "op", "impl", "bytes", "median_ms", "GB/s");
    }
    const char *saved = getenv("CLRUN_STAGING");
    char *saved_copy = saved ? strdup(saved) : NULL;
    struct {
        const char *impl;
        void *host;
        const char *staging; /* value of CLRUN_STAGING, NULL: unset (clrun decides) */
    } cases[] = {
        {"pinned (clrun_host_alloc)", pinned, NULL},
        {"pageable, driver (baseline)", plain, "0"},
        {"pageable, clrun", plain, NULL},
    };
    for (int dir = H2D; dir <= D2H && rc == 0; dir++) {
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            if (cases[c].staging) setenv("CLRUN_STAGING", cases[c].staging, 1);
            else unsetenv("CLRUN_STAGING");
            double ms = time_transfer(ctx, buf, cases[c].host, bytes, dir, o->repeat, &st);
            if (st != CLRUN_OK) {
                rc = cli_fail("bench", ctx, st);
                break;
            }
            record(o, dir == H2D ? "h2d" : "d2h", cases[c].impl, bytes, ms, bytes / ms / 1e6, NULL);
        }
    }
    if (saved_copy) setenv("CLRUN_STAGING", saved_copy, 1);
    else unsetenv("CLRUN_STAGING");
    free(saved_copy);
    if (rc == 0) { /* device-to-device copy: the memory system's reference */
        double t[64];
        int n = o->repeat > 64 ? 64 : o->repeat;
        for (int i = -1; i < n && st == CLRUN_OK; i++) {
            double t0 = cli_now();
            if ((st = clrun_buf_copy(buf2, 0, buf, 0, bytes)) == CLRUN_OK) st = clrun_finish(ctx);
            if (i >= 0) t[i] = (cli_now() - t0) * 1e3;
        }
        if (st != CLRUN_OK) rc = cli_fail("bench", ctx, st);
        else {
            double ms = cli_median(t, n);
            record(o, "d2d", "clEnqueueCopyBuffer", bytes, ms, 2.0 * bytes / ms / 1e6, NULL);
        }
    }
done:
    free(plain);
    clrun_host_free(ctx, pinned);
    clrun_buf_free(buf);
    clrun_buf_free(buf2);
    clrun_close(ctx);
    if (rc == 0 && o->devices) rc = group_transfer(o, mib); /* after this context is gone: its driver threads would compete */
    return rc;
}
