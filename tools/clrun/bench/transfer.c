/* transfer.c — `clrun bench transfer`: host<->device from pinned and ordinary memory, against the
 * plain driver path. */
#include "bench.h"

#include <math.h>
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
    return rc;
}
