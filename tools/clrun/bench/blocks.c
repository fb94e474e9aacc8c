/* blocks.c — `clrun bench random|scan|sort|hist`: the building blocks against the copy of the same bytes
 * (clEnqueueCopyBuffer) and their peers in the same run: PyTorch on CUDA, NumPy on the host
 * (tools/peers/blocks.py). */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

enum what { B_UNIFORM, B_NORMAL, B_SCAN, B_SORT, B_PAIRS, B_SORTF, B_BINCOUNT };
static const char *const names[] = {"uniform", "normal", "scan", "sort", "pairs", "sortf", "bincount"};
static const char *const ops[] = {"uniform f32", "normal f32", "cumsum i32", "sort u32", "sort u32+u32", "sort f32", "bincount 256"};

static clrun_status run_one(clrun_ctx *ctx, enum what w, clrun_buf *a, clrun_buf *b, size_t n, uint64_t *offset)
{
    clrun_rand_desc d;
    switch (w) {
    case B_UNIFORM:
    case B_NORMAL:
        clrun_rand_desc_init(&d, 42, w == B_UNIFORM ? CLRUN_RAND_UNIFORM : CLRUN_RAND_NORMAL, CLRUN_F32);
        d.offset = *offset;
        clrun_status st = clrun_rand(ctx, &d, a, 0, n);
        *offset = d.offset;
        return st;
    case B_SCAN: return clrun_scan(ctx, CLRUN_SCAN_SUM, 0, CLRUN_I32, a, 0, b, 0, 1, n);
    case B_SORT: return clrun_sort(ctx, CLRUN_U32, 0, a, 0, b, 0, 1, n);
    case B_PAIRS: return clrun_sort_pairs(ctx, CLRUN_U32, 0, b, 0, a, 0, CLRUN_U32, 1, n);
    case B_SORTF: return clrun_sort(ctx, CLRUN_F32, 0, a, 0, b, 0, 1, n);
    case B_BINCOUNT: return clrun_bincount(ctx, CLRUN_I32, a, 0, n, NULL, 0, CLRUN_F32, 256, b, 0);
    }
    return CLRUN_INVALID_ARG;
}

static int bench_blocks(const struct bench_opts *o, const enum what *ws, int nw)
{
    clrun_ctx *ctx = NULL;
    int rc = cli_open("bench", o->spec, &ctx);
    if (rc) return rc;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const int gpu = in->type == CLRUN_DEVICE_GPU;
    size_t n = o->size_mib > 0 ? (size_t)(o->size_mib * 1048576.0) : gpu ? (size_t)256 << 20 : (size_t)16 << 20;
    const int nr = o->repeat > 64 ? 64 : o->repeat;
    clrun_buf *a = NULL, *b = NULL;
    uint32_t *h = malloc(n * 4);
    clrun_status st = h ? clrun_buf_new(ctx, n * 4, 0, &a) : CLRUN_HOST_OUT_OF_MEMORY;
    if (!st) st = clrun_buf_new(ctx, n * 4, 0, &b);
    if (st) {
        rc = cli_fail("bench", ctx, st);
        goto done;
    }
    if (!o->json) {
        printf("%s benchmark on %s; %zu elements, median of %d; GB/s counts the bytes written (and read)\n", names[ws[0]], in->name, n, nr);
        printf("%-14s %-40s %12s %12s %10s\n", "op", "impl", "elements", "median_ms", "GB/s");
    }
    double t[64];
    for (int r = -1; r < nr && !st; r++) {
        double t0 = cli_now();
        if (!(st = clrun_buf_copy(b, 0, a, 0, n * 4))) st = clrun_finish(ctx);
        if (r >= 0) t[r] = (cli_now() - t0) * 1e3;
    }
    if (!st) record(o, "copy", "baseline: clEnqueueCopyBuffer", n, cli_median(t, nr), 8.0 * n / cli_median(t, nr) / 1e6, NULL);
    for (int i = 0; i < nw && !st; i++) {
        const enum what w = ws[i];
        uint64_t off = 0, seed = 7;
        for (int r = -1; r < nr && !st; r++) {
            if (w >= B_SCAN) { /* fresh keys each time: a sorted input would be another benchmark */
                for (size_t k = 0; k < n; k++) {
                    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                    h[k] = w == B_SCAN       ? (uint32_t)((seed >> 33) % 200) - 100
                           : w == B_BINCOUNT ? (uint32_t)(seed >> 56)
                                             : (uint32_t)(seed >> 32);
                    if (w == B_SORTF) {
                        float f = (float)(int32_t)h[k] * 1e-6f;
                        memcpy(&h[k], &f, 4);
                    }
                }
                if ((st = clrun_upload(a, 0, h, n * 4)) || (w == B_PAIRS && (st = clrun_upload(b, 0, h, n * 4)))) break;
            }
            double t0 = cli_now();
            if (!(st = run_one(ctx, w, a, b, n, &off))) st = clrun_finish(ctx);
            if (r >= 0) t[r] = (cli_now() - t0) * 1e3;
        }
        if (st) break;
        const double ms = cli_median(t, nr), bytes = w <= B_NORMAL || w == B_BINCOUNT ? 4.0 * n : w == B_PAIRS ? 16.0 * n : 8.0 * n;
        record(o, ops[w], "clrun", n, ms, bytes / ms / 1e6, NULL);
        char ns[32], rs[16];
        snprintf(ns, sizeof ns, "%zu", n), snprintf(rs, sizeof rs, "%d", nr);
        const char *args[] = {names[w], ns, rs, gpu ? "cuda" : "host", NULL}, *keys[] = {"ms", NULL};
        double v[1] = {0};
        if (bench_peer("blocks.py", args, keys, v) > 0) {
            const char *peer = gpu ? (w == B_UNIFORM    ? "PyTorch torch.rand"
                                      : w == B_NORMAL   ? "PyTorch torch.randn"
                                      : w == B_SCAN     ? "PyTorch torch.cumsum"
                                      : w == B_PAIRS    ? "PyTorch torch.sort (values, indices)"
                                      : w == B_BINCOUNT ? "PyTorch torch.bincount"
                                                        : "PyTorch torch.sort")
                                   : (w == B_UNIFORM    ? "NumPy Generator(Philox).random"
                                      : w == B_NORMAL   ? "NumPy Generator(Philox).standard_normal"
                                      : w == B_SCAN     ? "NumPy np.cumsum"
                                      : w == B_PAIRS    ? "NumPy np.argsort(kind=stable)"
                                      : w == B_BINCOUNT ? "NumPy np.bincount"
                                                        : "NumPy np.sort");
            record(o, ops[w], peer, n, v[0], bytes / v[0] / 1e6, NULL);
        } else if (!o->json) printf("(%s not measured: python3 with %s not found)\n", ops[w], gpu ? "torch and CUDA" : "NumPy");
    }
    if (st) rc = cli_fail("bench", ctx, st);
done:
    clrun_buf_free(a), clrun_buf_free(b), free(h);
    clrun_close(ctx);
    return rc;
}

int bench_random(const struct bench_opts *o) { return bench_blocks(o, (const enum what[]){B_UNIFORM, B_NORMAL}, 2); }
int bench_scan(const struct bench_opts *o) { return bench_blocks(o, (const enum what[]){B_SCAN}, 1); }
int bench_sort(const struct bench_opts *o) { return bench_blocks(o, (const enum what[]){B_SORT, B_PAIRS, B_SORTF}, 3); }
int bench_hist(const struct bench_opts *o) { return bench_blocks(o, (const enum what[]){B_BINCOUNT}, 1); }
