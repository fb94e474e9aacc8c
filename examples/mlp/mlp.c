/* mlp.c — mixed-precision training in C (the library behind examples/mlp/main.c and `clrun demo`): a two-layer perceptron (32 → 64 → 8, ReLU, softmax
 * cross-entropy) learns to tell 8 Gaussian clusters apart, by full-batch gradient descent on 4096
 * generated points. The recipe of PyTorch's automatic mixed precision:
 *   - master weights in f32; each step casts them to f16 (clrun_cast);
 *   - the four GEMMs of a step take f16 inputs and accumulate in f32 (clrun_gemm with type F16:
 *     tensor cores on NVIDIA, the portable kernels elsewhere);
 *   - the loss gradient is multiplied by the loss scale before it is stored in f16, so small
 *     gradients survive; the weight gradients are unscaled and checked for inf/NaN in one launch
 *     (clrun_scaler_unscale), and a step whose gradients overflowed f16 is skipped while the scale
 *     backs off (clrun_scaler_update: GradScaler's semantics).
 * The scale grows every 10 clean steps here (PyTorch's default is 2000) so that a short run shows
 * it climbing until f16 overflows, the step being skipped and the scale halving.
 */
#include "mlp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 4096, D = 32, HID = 64, C = 8 };

static const char mlp_src[] =
    "/* Z1 += b1, ReLU: H in f32 (the mask for backpropagation) and f16 (the next GEMM's input) */\n"
    "__kernel void bias_relu(__global float *z, __global const float *b, const uint cols, __global half *h16, const uint n)\n"
    "{\n"
    "    const uint i = get_global_id(0);\n"
    "    if (i >= n) return;\n"
    "    const float v = fmax(z[i] + b[i % cols], 0.0f);\n"
    "    z[i] = v;\n"
    "    vstore_half_rte(v, i, h16);\n"
    "}\n"
    "/* per row: logits Z2 + b2, softmax, cross-entropy loss, right or wrong; the loss gradient\n"
    " * (p - onehot)/N times gscale = scale: f32 for the bias gradient, f16 for the GEMMs (where a\n"
    " * scale too large overflows to inf) */\n"
    "__kernel void softmax_xent(__global const float *z, __global const float *b, __global const int *label, const float gscale,\n"
    "                           __global float *d, __global half *d16, __global float *loss, __global float *right, const uint rows)\n"
    "{\n"
    "    const uint r = get_global_id(0);\n"
    "    if (r >= rows) return;\n"
    "    float v[8], m = -INFINITY, s = 0.0f;\n"
    "    int best = 0;\n"
    "    for (int j = 0; j < 8; j++) {\n"
    "        v[j] = z[r * 8 + j] + b[j];\n"
    "        if (v[j] > m) m = v[j], best = j;\n"
    "    }\n"
    "    for (int j = 0; j < 8; j++) s += exp(v[j] - m);\n"
    "    const int y = label[r];\n"
    "    loss[r] = log(s) + m - v[y];\n"
    "    right[r] = best == y;\n"
    "    for (int j = 0; j < 8; j++) {\n"
    "        const float g = (exp(v[j] - m) / s - (j == y)) * gscale;\n"
    "        d[r * 8 + j] = g;\n"
    "        vstore_half_rte(g, r * 8 + j, d16);\n"
    "    }\n"
    "}\n"
    "/* dZ1 = dH where H > 0: f32 for the bias gradient, f16 for the last GEMM */\n"
    "__kernel void relu_back(__global const float *dh, __global const float *h, __global float *dz, __global half *dz16, const uint n)\n"
    "{\n"
    "    const uint i = get_global_id(0);\n"
    "    if (i >= n) return;\n"
    "    const float g = h[i] > 0.0f ? dh[i] : 0.0f;\n"
    "    dz[i] = g;\n"
    "    vstore_half_rte(g, i, dz16);\n"
    "}\n"
    "/* db[j] = sum over rows of dz[row][j] */\n"
    "__kernel void colsum(__global const float *dz, const uint rows, const uint cols, __global float *db)\n"
    "{\n"
    "    const uint j = get_global_id(0);\n"
    "    if (j >= cols) return;\n"
    "    float s = 0.0f;\n"
    "    for (uint r = 0; r < rows; r++) s += dz[r * cols + j];\n"
    "    db[j] = s;\n"
    "}\n";

static double uniform(uint64_t *s)
{
    return (double)((*s = *s * 6364136223846793005ull + 1442695040888963407ull) >> 11) / 9007199254740992.0;
}
static double gauss(uint64_t *s) { return sqrt(-2 * log(1 - uniform(s))) * cos(6.283185307179586 * uniform(s)); }

/* The run's buffers: f32 masters and gradients, f16 copies for the GEMMs. */
enum { X16, Y, W1, B1, W2, B2, W1H, W2H, Z1, H16, Z2, D2, D2H, DH, DZ1, DZ1H, GW1, GB1, GW2, GB2, LOSS, RIGHT, NBUF };

static clrun_status gemm16(clrun_ctx *ctx, int ta, int tb, size_t m, size_t n, size_t k, clrun_buf *a, size_t lda, clrun_buf *b, size_t ldb,
                           clrun_buf *c, size_t ldc)
{
    clrun_gemm_desc d = {.trans_a = ta,
                         .trans_b = tb,
                         .m = m,
                         .n = n,
                         .k = k,
                         .alpha = 1,
                         .a = a,
                         .lda = lda,
                         .b = b,
                         .ldb = ldb,
                         .c = c,
                         .ldc = ldc,
                         .type = CLRUN_F16};
    return clrun_gemm(ctx, &d);
}

/* Train for `steps` steps, printing a line every `every` steps. Returns 0 when the loss fell below a
 * quarter of its start and accuracy passed 90%, 1 otherwise or on failure (the error on stderr). */
int mlp_train(clrun_ctx *ctx, int steps, int every)
{
    static const size_t bytes[NBUF] = {N * D * 2,   N * 4,       D * HID * 4, HID * 4,   HID * C * 4, C * 4,       D * HID * 2, HID * C * 2,
                                       N * HID * 4, N * HID * 2, N * C * 4,   N * C * 4, N * C * 2,   N * HID * 4, N * HID * 4, N * HID * 2,
                                       D * HID * 4, HID * 4,     HID * C * 4, C * 4,     N * 4,       N * 4};
    clrun_buf *b[NBUF] = {0};
    clrun_prog *prog = NULL;
    clrun_kernel *k_relu = NULL, *k_xent = NULL, *k_back = NULL, *k_sum = NULL;
    clrun_scaler sc;
    clrun_status st = CLRUN_OK;
    int rc = 1, skipped = 0;
    double first = 0, loss = 0, acc = 0;
    clrun_scaler_init(&sc);
    sc.growth_interval = 10;

    /* data: 8 cluster centres in 32 dimensions, points scattered around them */
    uint64_t seed = 2026;
    float *centre = malloc(sizeof(float) * C * D), *w1 = malloc(sizeof(float) * D * HID), *w2 = malloc(sizeof(float) * HID * C);
    uint16_t *x = malloc(2 * N * D);
    int *label = malloc(sizeof(int) * N);
    if (!centre || !w1 || !w2 || !x || !label) {
        fprintf(stderr, "mlp: out of memory\n");
        goto done;
    }
    for (int i = 0; i < C * D; i++) centre[i] = (float)(uniform(&seed) * 2 - 1);
    for (int r = 0; r < N; r++) {
        label[r] = (int)(uniform(&seed) * C) % C;
        for (int j = 0; j < D; j++) x[r * D + j] = clrun_f32_to_f16(centre[label[r] * D + j] + (float)(0.9 * gauss(&seed)));
    }
    for (int i = 0; i < D * HID; i++) w1[i] = (float)((uniform(&seed) * 2 - 1) / sqrt(D));
    for (int i = 0; i < HID * C; i++) w2[i] = (float)((uniform(&seed) * 2 - 1) / sqrt(HID));

    for (int i = 0; i < NBUF && !st; i++) st = clrun_buf_new(ctx, bytes[i], 0, &b[i]);
    const float zero = 0;
    if (st || (st = clrun_upload(b[X16], 0, x, bytes[X16])) || (st = clrun_upload(b[Y], 0, label, bytes[Y])) ||
        (st = clrun_upload(b[W1], 0, w1, bytes[W1])) || (st = clrun_upload(b[W2], 0, w2, bytes[W2])) ||
        (st = clrun_buf_fill(b[B1], &zero, 4, 0, bytes[B1])) || (st = clrun_buf_fill(b[B2], &zero, 4, 0, bytes[B2])) ||
        (st = clrun_prog_source(ctx, mlp_src, "mlp", NULL, &prog)) || (st = clrun_kernel_new(prog, "bias_relu", &k_relu)) ||
        (st = clrun_kernel_new(prog, "softmax_xent", &k_xent)) || (st = clrun_kernel_new(prog, "relu_back", &k_back)) ||
        (st = clrun_kernel_new(prog, "colsum", &k_sum)))
        goto fail;
    const float lr = 0.5f;
    printf("mlp        %d points, %d → %d → %d, f16 GEMMs on %s, f32 master weights, loss scaling\n", N, D, HID, C,
           clrun_gemm_tensor_cores(ctx) ? "tensor cores" : "the portable kernels");
    for (int step = 0; step < steps; step++) {
        const size_t nh = N * HID, nrows = N, ncols[2] = {HID, C};
        /* forward: f16 weights, Z1 = X W1, H = relu(Z1 + b1), Z2 = H W2, loss */
        if ((st = clrun_cast(ctx, b[W1], 0, CLRUN_F32, b[W1H], 0, CLRUN_F16, D * HID)) ||
            (st = clrun_cast(ctx, b[W2], 0, CLRUN_F32, b[W2H], 0, CLRUN_F16, HID * C)) ||
            (st = gemm16(ctx, 0, 0, N, HID, D, b[X16], D, b[W1H], HID, b[Z1], HID)) || (st = clrun_arg_buf(k_relu, 0, b[Z1])) ||
            (st = clrun_arg_buf(k_relu, 1, b[B1])) || (st = clrun_arg_u32(k_relu, 2, HID)) || (st = clrun_arg_buf(k_relu, 3, b[H16])) ||
            (st = clrun_arg_u32(k_relu, 4, N * HID)) || (st = clrun_launch(k_relu, 1, &nh, NULL)) ||
            (st = gemm16(ctx, 0, 0, N, C, HID, b[H16], HID, b[W2H], C, b[Z2], C)) || (st = clrun_arg_buf(k_xent, 0, b[Z2])) ||
            (st = clrun_arg_buf(k_xent, 1, b[B2])) || (st = clrun_arg_buf(k_xent, 2, b[Y])) ||
            (st = clrun_arg_f32(k_xent, 3, sc.scale / N)) || (st = clrun_arg_buf(k_xent, 4, b[D2])) ||
            (st = clrun_arg_buf(k_xent, 5, b[D2H])) || (st = clrun_arg_buf(k_xent, 6, b[LOSS])) ||
            (st = clrun_arg_buf(k_xent, 7, b[RIGHT])) || (st = clrun_arg_u32(k_xent, 8, N)) || (st = clrun_launch(k_xent, 1, &nrows, NULL)))
            goto fail;
        /* backward, on gradients multiplied by the scale: dW2 = Hᵀ dZ2, dH = dZ2 W2ᵀ, dZ1 = dH·[H > 0], dW1 = Xᵀ dZ1 */
        if ((st = gemm16(ctx, 1, 0, HID, C, N, b[H16], HID, b[D2H], C, b[GW2], C)) ||
            (st = gemm16(ctx, 0, 1, N, HID, C, b[D2H], C, b[W2H], C, b[DH], HID)) || (st = clrun_arg_buf(k_back, 0, b[DH])) ||
            (st = clrun_arg_buf(k_back, 1, b[Z1])) || (st = clrun_arg_buf(k_back, 2, b[DZ1])) || (st = clrun_arg_buf(k_back, 3, b[DZ1H])) ||
            (st = clrun_arg_u32(k_back, 4, N * HID)) || (st = clrun_launch(k_back, 1, &nh, NULL)) ||
            (st = gemm16(ctx, 1, 0, D, HID, N, b[X16], D, b[DZ1H], HID, b[GW1], HID)))
            goto fail;
        for (int l = 0; l < 2; l++)
            if ((st = clrun_arg_buf(k_sum, 0, b[l ? D2 : DZ1])) || (st = clrun_arg_u32(k_sum, 1, N)) ||
                (st = clrun_arg_u32(k_sum, 2, (cl_uint)ncols[l])) || (st = clrun_arg_buf(k_sum, 3, b[l ? GB2 : GB1])) ||
                (st = clrun_launch(k_sum, 1, &ncols[l], NULL)))
                goto fail;
        /* unscale the four gradients in one launch; skip the step when one overflowed */
        const clrun_grad g[4] = {
            {b[GW1], 0, D * HID, CLRUN_F32}, {b[GB1], 0, HID, CLRUN_F32}, {b[GW2], 0, HID * C, CLRUN_F32}, {b[GB2], 0, C, CLRUN_F32}};
        const float scale = sc.scale;
        int found = 0;
        if ((st = clrun_scaler_unscale(ctx, &sc, g, 4)) || (st = clrun_scaler_update(ctx, &sc, &found))) goto fail;
        skipped += found;
        for (int i = 0; !found && i < 4; i++)
            if ((st = clrun_axpy(ctx, CLRUN_F32, g[i].n, -lr, g[i].buf, b[W1 + i]))) goto fail; /* W1 B1 W2 B2 follow each other */
        if (step == 0 || step == steps - 1 || (every && (step + 1) % every == 0) || found) {
            if ((st = clrun_sum(ctx, CLRUN_F32, b[LOSS], 0, N, &loss)) || (st = clrun_sum(ctx, CLRUN_F32, b[RIGHT], 0, N, &acc))) goto fail;
            loss /= N, acc /= N;
            if (step == 0) first = loss;
            if (found || step == 0 || step == steps - 1 || (every && (step + 1) % every == 0))
                printf("mlp        step %4d  loss %.4f  accuracy %5.1f%%  scale %-10g%s\n", step + 1, loss, 100 * acc, (double)scale,
                       found ? "  overflow in the f16 gradients: step skipped, scale halved" : "");
        }
    }
    rc = loss < first / 4 && acc > 0.9 ? 0 : 1;
    printf("mlp        loss %.4f → %.4f, accuracy %.1f%%, %d of %d steps skipped; %s\n", first, loss, 100 * acc, skipped, steps,
           rc ? "did NOT train as expected" : "trained");
    goto done;
fail:
    fprintf(stderr, "mlp: %s\n", clrun_last_error(ctx));
    rc = 1;
done:
    clrun_kernel_free(k_relu), clrun_kernel_free(k_xent), clrun_kernel_free(k_back), clrun_kernel_free(k_sum);
    clrun_prog_free(prog);
    for (int i = 0; i < NBUF; i++) clrun_buf_free(b[i]);
    clrun_scaler_free(&sc);
    free(centre), free(w1), free(w2), free(x), free(label);
    return rc;
}
