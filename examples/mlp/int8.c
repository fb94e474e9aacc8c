/* int8.c — the MLP in INT8 inference: train it (mlp_train_model), quantize its weights per output
 * channel and its activations per tensor (symmetric, clrun_quant_calibrate), run both layers as
 * INT8 GEMMs with the fused epilogue (clrun_gemm_s8: scales, bias, ReLU), and compare accuracy with
 * the f32 model on the same points. */
#include "mlp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = MLP_ROWS, D = MLP_IN, H = MLP_HID, C = MLP_OUT };

static double accuracy(const float *logits, const int *label)
{
    int right = 0;
    for (int r = 0; r < N; r++) {
        int best = 0;
        for (int j = 1; j < C; j++)
            if (logits[r * C + j] > logits[r * C + best]) best = j;
        right += best == label[r];
    }
    return (double)right / N;
}

/* One INT8 layer on the device: out = act(s8(in) · s8(w) · scales + bias), in per tensor, w per column. */
static clrun_status layer(clrun_ctx *ctx, const float *in, size_t rows, size_t k, const float *w, size_t cols, const float *bias, int relu,
                          float *out)
{
    clrun_status st;
    float sx, *sw = malloc(cols * sizeof *sw), *rs = malloc(rows * sizeof *rs);
    int32_t zx, *zw = calloc(cols, sizeof *zw);
    clrun_buf *bx = NULL, *bw = NULL, *qx = NULL, *qw = NULL, *bo = NULL, *brs = NULL, *bcs = NULL, *bb = NULL;
    if (!sw || !rs || !zw) return free(sw), free(rs), free(zw), CLRUN_HOST_OUT_OF_MEMORY;
    if ((st = clrun_quant_calibrate(in, rows * k, 1, 0, 1, 100, &sx, &zx)) ||
        (st = clrun_quant_calibrate(w, k * cols, cols, 1, 1, 100, sw, zw)))
        goto done;
    for (size_t r = 0; r < rows; r++) rs[r] = sx;
    const clrun_qparams px = {1, 0, &sx, &zx}, pw = {cols, 1, sw, zw};
    if ((st = clrun_buf_new(ctx, rows * k * 4, 0, &bx)) || (st = clrun_upload(bx, 0, in, rows * k * 4)) ||
        (st = clrun_buf_new(ctx, k * cols * 4, 0, &bw)) || (st = clrun_upload(bw, 0, w, k * cols * 4)) ||
        (st = clrun_buf_new(ctx, rows * k, 0, &qx)) || (st = clrun_buf_new(ctx, k * cols, 0, &qw)) ||
        (st = clrun_quantize(ctx, bx, 0, qx, 0, rows * k, &px)) || (st = clrun_quantize(ctx, bw, 0, qw, 0, k * cols, &pw)) ||
        (st = clrun_buf_new(ctx, rows * 4, 0, &brs)) || (st = clrun_upload(brs, 0, rs, rows * 4)) ||
        (st = clrun_buf_new(ctx, cols * 4, 0, &bcs)) || (st = clrun_upload(bcs, 0, sw, cols * 4)) ||
        (st = clrun_buf_new(ctx, cols * 4, 0, &bb)) || (st = clrun_upload(bb, 0, bias, cols * 4)) ||
        (st = clrun_buf_new(ctx, rows * cols * 4, 0, &bo)))
        goto done;
    clrun_gemm_desc d;
    clrun_gemm_desc_init(&d, CLRUN_I8, 1, rows, cols, k, 0, 0);
    d.a = qx, d.b = qw, d.c = bo;
    const clrun_s8_epilogue e = {brs, bcs, bb, relu};
    if (!(st = clrun_gemm_s8(ctx, &d, &e))) st = clrun_download(bo, 0, out, rows * cols * 4);
done:
    clrun_buf_free(bx), clrun_buf_free(bw), clrun_buf_free(qx), clrun_buf_free(qw), clrun_buf_free(bo), clrun_buf_free(brs),
        clrun_buf_free(bcs), clrun_buf_free(bb);
    free(sw), free(rs), free(zw);
    return st;
}

int mlp_int8(clrun_ctx *ctx, int steps, int every)
{
    struct mlp_model m = {0};
    float *h = malloc(sizeof(float) * N * H), *logits = malloc(sizeof(float) * N * C), *h8 = malloc(sizeof(float) * N * H),
          *l8 = malloc(sizeof(float) * N * C);
    int rc = !h || !logits || !h8 || !l8;
    if (!rc) rc = mlp_train_model(ctx, steps, every, &m);
    if (!rc) { /* the f32 model on the host */
        for (int r = 0; r < N; r++)
            for (int j = 0; j < H; j++) {
                float s = m.b1[j];
                for (int q = 0; q < D; q++) s += m.x[r * D + q] * m.w1[q * H + j];
                h[r * H + j] = s > 0 ? s : 0;
            }
        for (int r = 0; r < N; r++)
            for (int j = 0; j < C; j++) {
                float s = m.b2[j];
                for (int q = 0; q < H; q++) s += h[r * H + q] * m.w2[q * C + j];
                logits[r * C + j] = s;
            }
    }
    clrun_status st = CLRUN_OK;
    if (!rc && ((st = layer(ctx, m.x, N, D, m.w1, H, m.b1, 1, h8)) || (st = layer(ctx, h8, N, H, m.w2, C, m.b2, 0, l8)))) {
        fprintf(stderr, "mlp int8: %s\n", clrun_last_error(ctx));
        rc = 1;
    }
    if (!rc) {
        const double a32 = accuracy(logits, m.label), a8 = accuracy(l8, m.label), gap = 100 * (a32 - a8);
        printf("mlp int8   weights per output channel, activations per tensor (symmetric), two INT8 GEMMs with fused epilogues:\n"
               "mlp int8   accuracy f32 %.2f%%, INT8 %.2f%% (%+.2f points)%s\n",
               100 * a32, 100 * a8, -gap, gap > 1 ? ": MORE than one point lost" : "");
        rc = gap > 1;
    }
    free(m.x), free(m.label), free(h), free(logits), free(h8), free(l8);
    return rc;
}
