/* conv.c — `clrun bench conv`: clrun_conv2d's three passes (forward, backward-data, backward-weights)
 * on the 3×3 and 1×1 convolutions of ResNet-50, against PyTorch (cuDNN with benchmark mode on CUDA
 * devices, its CPU kernels on the host) or, without PyTorch, NumPy's im2col and matrix product
 * (OpenBLAS where NumPy has it) in the same run (tools/peers/conv.py). */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

struct conv_case {
    int c, hw, k, r, stride;
};

static const char *const pass_names[] = {"fwd", "bwd-data", "bwd-weights"};

static clrun_status run_pass(clrun_ctx *ctx, const clrun_conv2d_desc *d, int pass, clrun_buf *x, clrun_buf *w, clrun_buf *y)
{
    if (pass == 0) return clrun_conv2d_forward(ctx, d, x, w, NULL, y);
    if (pass == 1) return clrun_conv2d_backward_data(ctx, d, y, w, x);
    return clrun_conv2d_backward_weights(ctx, d, x, y, w, NULL);
}

int bench_conv(const struct bench_opts *o)
{
    clrun_ctx *ctx = NULL;
    int rc = cli_open("bench", o->spec, &ctx);
    if (rc) return rc;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const int gpu = in->type == CLRUN_DEVICE_GPU;
    /* ResNet-50's: each stage's 3×3 and its 1×1 reduction and expansion (batch 64 on a GPU, 8 on the host) */
    static const struct conv_case cases[] = {
        {64, 56, 64, 3, 1},  {128, 28, 128, 3, 1}, {256, 14, 256, 3, 1},  {512, 7, 512, 3, 1},
        {256, 56, 64, 1, 1}, {64, 56, 256, 1, 1},  {1024, 14, 256, 1, 1}, {2048, 7, 512, 1, 1},
    };
    const int ncases = sizeof cases / sizeof cases[0], batch = gpu ? 64 : 8, nr = o->repeat > 64 ? 64 : o->repeat;
    const clrun_dtype T = gpu ? CLRUN_F16 : CLRUN_F32;
    if (!o->json) {
        printf("conv benchmark on %s; NCHW %s, batch %d, median of %d (GPU: rounds of 10 back to back); TFLOP/s counts 2 "
               "flops per multiply-add of the direct loop\n",
               in->name, T == CLRUN_F16 ? "f16 with f32 accumulation" : "f32", batch, nr);
        printf("%-34s %-30s %12s %12s %10s\n", "op", "impl", "MACs", "median_ms", "TFLOP/s");
    }
    clrun_status st = CLRUN_OK;
    const int per = gpu ? 10 : 1;
    for (int ci = 0; ci < ncases && !st; ci++) {
        const struct conv_case *cc = &cases[ci];
        const clrun_conv2d_desc d = {.x = {CLRUN_NCHW, T, batch, cc->c, cc->hw, cc->hw},
                                     .k = cc->k,
                                     .r = cc->r,
                                     .s = cc->r,
                                     .stride_h = cc->stride,
                                     .stride_w = cc->stride,
                                     .pad_h = cc->r / 2,
                                     .pad_w = cc->r / 2};
        clrun_tensor4 y;
        if ((st = clrun_conv2d_shape(ctx, &d, &y))) break;
        const size_t es = clrun_dtype_size(T), nx = (size_t)batch * cc->c * cc->hw * cc->hw, nw = (size_t)cc->k * cc->c * cc->r * cc->r,
                     ny = (size_t)y.n * y.c * y.h * y.w, macs = ny * (size_t)cc->c * cc->r * cc->r;
        clrun_buf *x = NULL, *w = NULL, *yb = NULL;
        const size_t most = nx > ny ? (nx > nw ? nx : nw) : (ny > nw ? ny : nw);
        unsigned char *h = malloc(most * es);
        uint64_t s = 7;
        for (size_t i = 0; h && i < most * es / 2; i++) /* small values, valid in f16 and f32 alike */
            s = s * 6364136223846793005ull + 1442695040888963407ull, ((uint16_t *)h)[i] = (uint16_t)(0x2C00 | ((s >> 40) & 0x3FF));
        if (!h) st = CLRUN_HOST_OUT_OF_MEMORY;
        if (!st && !(st = clrun_buf_new(ctx, nx * es, 0, &x)) && !(st = clrun_buf_new(ctx, nw * es, 0, &w)) &&
            !(st = clrun_buf_new(ctx, ny * es, 0, &yb)) && !(st = clrun_upload(x, 0, h, nx * es)) && !(st = clrun_upload(w, 0, h, nw * es)))
            st = clrun_upload(yb, 0, h, ny * es);
        for (int pass = 0; pass < 3 && !st; pass++) {
            double t[64];
            for (int r = -1; r < nr && !st; r++) {
                const double t0 = cli_now();
                for (int i = 0; i < per && !st; i++) st = run_pass(ctx, &d, pass, x, w, yb);
                if (!st) st = clrun_finish(ctx);
                if (r >= 0) t[r] = (cli_now() - t0) * 1e3 / per;
            }
            if (st) break;
            const double ms = cli_median(t, nr);
            char op[64], extra[64], args[8][16];
            snprintf(op, sizeof op, "%dx%d %d->%d %d^2 %s", cc->r, cc->r, cc->c, cc->k, cc->hw, pass_names[pass]);
            snprintf(extra, sizeof extra, "\"tflops\": %.3f", 2.0 * (double)macs / ms / 1e9);
            record(o, op, "clrun", macs, ms, 2.0 * (double)macs / ms / 1e9, extra);
            snprintf(args[0], 16, "%d", batch), snprintf(args[1], 16, "%d", cc->c), snprintf(args[2], 16, "%d", cc->hw);
            snprintf(args[3], 16, "%d", cc->k), snprintf(args[4], 16, "%d", cc->r), snprintf(args[5], 16, "%d", cc->stride);
            snprintf(args[6], 16, "%d", nr);
            const char *argv[] = {pass_names[pass],
                                  args[0],
                                  args[1],
                                  args[2],
                                  args[3],
                                  args[4],
                                  args[5],
                                  args[6],
                                  gpu ? "cuda" : "host",
                                  T == CLRUN_F16 ? "f16" : "f32",
                                  NULL},
                       *keys[] = {"ms", "impl", NULL};
            double v[2] = {0, 0};
            if (bench_peer("conv.py", argv, keys, v) > 0) {
                const char *impl = v[1] == 1 ? "PyTorch (cuDNN, benchmark)" : v[1] == 2 ? "PyTorch (CPU)" : "NumPy im2col + matmul";
                snprintf(extra, sizeof extra, "\"tflops\": %.3f", 2.0 * (double)macs / v[0] / 1e9);
                record(o, op, impl, macs, v[0], 2.0 * (double)macs / v[0] / 1e9, extra);
            } else if (!o->json) printf("(%s not measured: python3 with %s not found)\n", op, gpu ? "torch and CUDA" : "NumPy");
        }
        clrun_buf_free(x), clrun_buf_free(w), clrun_buf_free(yb), free(h);
    }
    if (st) rc = cli_fail("bench", ctx, st);
    clrun_close(ctx);
    return rc;
}
