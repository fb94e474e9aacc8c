/* fft.c — `clrun bench fft`: clrun_fft (VkFFT) against cuFFT through torch.fft on CUDA devices or
 * numpy.fft (pocketfft) on the host, in the same run (tools/peers/fft.py): the sizes of the targets,
 * a long c2c, a 2-D r2c, a batch of c2c rows and a prime length (Bluestein). */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

struct fft_case {
    const char *op, *kind, *shape;
    clrun_fft_kind k;
    unsigned ndim;
    size_t dims[2], batch;
};

/* one transform's median time: rounds of `per` back to back (GPU: 10, as the peer), after a warm-up */
static clrun_status time_fft(clrun_ctx *ctx, clrun_fft_plan *p, clrun_buf *a, clrun_buf *b, int reps, int per, double *ms)
{
    double t[64];
    clrun_status st = CLRUN_OK;
    for (int r = -1; r < reps && !st; r++) {
        const double t0 = cli_now();
        for (int i = 0; i < per && !st; i++) st = clrun_fft_exec(p, 0, a, 0, b, 0);
        if (!st) st = clrun_finish(ctx);
        if (r >= 0) t[r] = (cli_now() - t0) * 1e3 / per;
    }
    *ms = cli_median(t, reps);
    return st;
}

int bench_fft(const struct bench_opts *o)
{
    if (!clrun_fft_available()) {
        fprintf(stderr, "clrun bench: this clrun was built without VkFFT (libvkfft-dev), so it has no FFT\n");
        return 1;
    }
    clrun_ctx *ctx = NULL;
    int rc = cli_open("bench", o->spec, &ctx);
    if (rc) return rc;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const int gpu = in->type == CLRUN_DEVICE_GPU;
    static const struct fft_case gpu_cases[] = {
        {"c2c f32 2^24", "c2c", "16777216", CLRUN_FFT_C2C, 1, {16777216}, 1},
        {"r2c f32 4096^2", "r2c", "4096x4096", CLRUN_FFT_REAL, 2, {4096, 4096}, 1},
        {"c2c f32 1024x4096", "c2c", "4096", CLRUN_FFT_C2C, 1, {4096}, 1024},
        {"c2c f32 999983", "c2c", "999983", CLRUN_FFT_C2C, 1, {999983}, 1},
    };
    static const struct fft_case cpu_cases[] = {
        {"c2c f32 2^20", "c2c", "1048576", CLRUN_FFT_C2C, 1, {1048576}, 1},
        {"r2c f32 2048^2", "r2c", "2048x2048", CLRUN_FFT_REAL, 2, {2048, 2048}, 1},
        {"c2c f32 256x4096", "c2c", "4096", CLRUN_FFT_C2C, 1, {4096}, 256},
        {"c2c f32 99991", "c2c", "99991", CLRUN_FFT_C2C, 1, {99991}, 1},
    };
    const struct fft_case *cases = gpu ? gpu_cases : cpu_cases;
    const int nr = o->repeat > 64 ? 64 : o->repeat, per = gpu ? 10 : 1;
    if (!o->json) {
        printf("fft benchmark on %s; forward transforms, median of %d (GPU: rounds of 10 back to back); GB/s counts the bytes read "
               "and written once\n",
               in->name, nr);
        printf("%-10s %-28s %12s %12s %10s\n", "op", "impl", "elements", "median_ms", "GB/s");
    }
    clrun_status st = CLRUN_OK;
    for (int c = 0; c < 4 && !st; c++) {
        const struct fft_case *fc = &cases[c];
        clrun_fft_desc d = {.kind = fc->k, .ndim = fc->ndim, .batch = fc->batch};
        memcpy(d.shape, fc->dims, sizeof fc->dims);
        clrun_fft_plan *p = NULL;
        clrun_buf *a = NULL, *b = NULL;
        clrun_fft_info info;
        if ((st = clrun_fft_plan_new(ctx, &d, &p)) || (st = clrun_fft_plan_info(p, &info))) break;
        const size_t ib = info.in_count * (fc->k == CLRUN_FFT_REAL ? 4 : 8), ob = info.out_count * 8;
        float *h = malloc(ib);
        uint64_t s = 11;
        for (size_t i = 0; h && i < ib / 4; i++)
            s = s * 6364136223846793005ull + 1442695040888963407ull, h[i] = (float)(int32_t)(s >> 32) * 1e-9f;
        if (!h) st = CLRUN_HOST_OUT_OF_MEMORY;
        if (!st && !(st = clrun_buf_new(ctx, ib, 0, &a)) && !(st = clrun_buf_new(ctx, ob, 0, &b)) && !(st = clrun_upload(a, 0, h, ib))) {
            double ms;
            if (!(st = time_fft(ctx, p, a, b, nr, per, &ms))) {
                char extra[96];
                snprintf(extra, sizeof extra, "\"plan_ms\": %.1f, \"plan\": \"%s\"", info.build_ms,
                         info.source == CLRUN_FFT_PLAN_LOADED   ? "loaded"
                         : info.source == CLRUN_FFT_PLAN_REUSED ? "reused"
                                                                : "built");
                record(o, fc->op, "clrun (VkFFT)", info.in_count, ms, (ib + ob) / ms / 1e6, extra);
                if (!o->json)
                    printf("%-10s plan: %.1f ms (%s)\n", "", info.build_ms,
                           info.source == CLRUN_FFT_PLAN_LOADED ? "kernels from the cache" : "kernels compiled");
                char bs[32], rs[16];
                snprintf(bs, sizeof bs, "%zu", fc->batch), snprintf(rs, sizeof rs, "%d", nr);
                const char *args[] = {fc->kind, fc->shape, bs, rs, gpu ? "cuda" : "host", NULL}, *keys[] = {"ms", NULL};
                double v[1] = {0};
                if (bench_peer("fft.py", args, keys, v) > 0)
                    record(o, fc->op, gpu ? "PyTorch torch.fft (cuFFT)" : "NumPy numpy.fft (pocketfft)", info.in_count, v[0],
                           (ib + ob) / v[0] / 1e6, NULL);
                else if (!o->json) printf("(%s not measured: python3 with %s not found)\n", fc->op, gpu ? "torch and CUDA" : "NumPy");
            }
        }
        clrun_buf_free(a), clrun_buf_free(b), free(h);
        clrun_fft_plan_free(p);
    }
    if (st) rc = cli_fail("bench", ctx, st);
    clrun_close(ctx);
    return rc;
}
