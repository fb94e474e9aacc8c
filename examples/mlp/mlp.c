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
#include <string.h>

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
    "/* db[mb][j] = sum over the rows of micro-batch mb (MB rows) of dz[row][j] */\n"
    "__kernel void colsum(__global const float *dz, const uint mbrows, const uint cols, __global float *db, const uint nmb)\n"
    "{\n"
    "    const uint j = get_global_id(0), mb = get_global_id(1);\n"
    "    if (j >= cols || mb >= nmb) return;\n"
    "    float s = 0.0f;\n"
    "    for (uint r = mb * mbrows; r < (mb + 1) * mbrows; r++) s += dz[r * cols + j];\n"
    "    db[mb * cols + j] = s;\n"
    "}\n";

static double uniform(uint64_t *s)
{
    return (double)((*s = *s * 6364136223846793005ull + 1442695040888963407ull) >> 11) / 9007199254740992.0;
}
static double gauss(uint64_t *s) { return sqrt(-2 * log(1 - uniform(s))) * cos(6.283185307179586 * uniform(s)); }

/* The run's buffers: f32 masters and gradients, f16 copies for the GEMMs. */
enum { X16, Y, W1, B1, W2, B2, W1H, W2H, Z1, H16, Z2, D2, D2H, DH, DZ1, DZ1H, GW1, GB1, GW2, GB2, LOSS, RIGHT, PW1, PB1, PW2, PB2, NBUF };

/* Weight gradients are sums over micro-batches of MB rows: each micro-batch's partial gradient is
 * computed apart (a batched GEMM, a column sum per micro-batch) and the partials are added on the
 * host in micro-batch order. The arithmetic of a step is then the same however the batch is split
 * over devices: a data-parallel run gives the single-device run's bits. */
enum { MB = 128 };

/* f16 GEMM, batched (stride_* elements apart); whole_m: the M whose kernel configuration a block of
 * rows uses (clrun_gemm_desc.whole_m), so a replica's rows are computed as in the whole batch. */
static clrun_status gemm16b(clrun_ctx *ctx, int ta, int tb, size_t m, size_t n, size_t k, clrun_buf *a, size_t lda, size_t sa, clrun_buf *b,
                            size_t ldb, size_t sb, clrun_buf *c, size_t ldc, size_t sc, size_t batch, size_t whole_m)
{
    clrun_gemm_desc d = {.trans_a = ta,
                         .trans_b = tb,
                         .m = m,
                         .n = n,
                         .k = k,
                         .alpha = 1,
                         .a = a,
                         .lda = lda,
                         .stride_a = sa,
                         .b = b,
                         .ldb = ldb,
                         .stride_b = sb,
                         .c = c,
                         .ldc = ldc,
                         .stride_c = sc,
                         .batch = batch,
                         .type = CLRUN_F16,
                         .whole_m = whole_m > m ? whole_m : 0};
    return clrun_gemm(ctx, &d);
}

static clrun_status gemm16(clrun_ctx *ctx, int ta, int tb, size_t m, size_t n, size_t k, clrun_buf *a, size_t lda, clrun_buf *b, size_t ldb,
                           clrun_buf *c, size_t ldc)
{
    return gemm16b(ctx, ta, tb, m, n, k, a, lda, 0, b, ldb, 0, c, ldc, 0, 1, N);
}

/* One device's share of the run: its rows of the data, its buffers, kernels and loss scaler. */
struct replica {
    clrun_ctx *ctx;
    size_t r0, n; /* its rows */
    clrun_buf *b[NBUF];
    clrun_prog *prog;
    clrun_kernel *k_relu, *k_xent, *k_back, *k_sum;
    clrun_scaler sc;
};

static clrun_status replica_init(struct replica *r, const uint16_t *x, const int *label, const float *w1, const float *w2)
{
    const size_t n = r->n;
    const size_t nmb = n / MB;
    const size_t bytes[NBUF] = {
        n * D * 2,   n * 4,     D * HID * 4, HID * 4,   HID * C * 4,       C * 4,         D * HID * 2,       HID * C * 2, n * HID * 4,
        n * HID * 2, n * C * 4, n * C * 4,   n * C * 2, n * HID * 4,       n * HID * 4,   n * HID * 2,       D * HID * 4, HID * 4,
        HID * C * 4, C * 4,     n * 4,       n * 4,     nmb * D * HID * 4, nmb * HID * 4, nmb * HID * C * 4, nmb * C * 4};
    clrun_status st = CLRUN_OK;
    const float zero = 0;
    clrun_scaler_init(&r->sc);
    r->sc.growth_interval = 10;
    for (int i = 0; i < NBUF && !st; i++) st = clrun_buf_new(r->ctx, bytes[i], 0, &r->b[i]);
    if (st || (st = clrun_upload(r->b[X16], 0, x + r->r0 * D, bytes[X16])) || (st = clrun_upload(r->b[Y], 0, label + r->r0, bytes[Y])) ||
        (st = clrun_upload(r->b[W1], 0, w1, bytes[W1])) || (st = clrun_upload(r->b[W2], 0, w2, bytes[W2])) ||
        (st = clrun_buf_fill(r->b[B1], &zero, 4, 0, bytes[B1])) || (st = clrun_buf_fill(r->b[B2], &zero, 4, 0, bytes[B2])) ||
        (st = clrun_prog_source(r->ctx, mlp_src, "mlp", NULL, &r->prog)) || (st = clrun_kernel_new(r->prog, "bias_relu", &r->k_relu)) ||
        (st = clrun_kernel_new(r->prog, "softmax_xent", &r->k_xent)) || (st = clrun_kernel_new(r->prog, "relu_back", &r->k_back)) ||
        (st = clrun_kernel_new(r->prog, "colsum", &r->k_sum)))
        return st;
    return CLRUN_OK;
}

static void replica_free(struct replica *r)
{
    clrun_kernel_free(r->k_relu), clrun_kernel_free(r->k_xent), clrun_kernel_free(r->k_back), clrun_kernel_free(r->k_sum);
    clrun_prog_free(r->prog);
    for (int i = 0; i < NBUF; i++) clrun_buf_free(r->b[i]);
    clrun_scaler_free(&r->sc);
}

/* Forward and backward on the replica's rows (queued): its share of the loss gradient is
 * (p - onehot)/N_total · scale, so the replicas' weight gradients add up to the whole batch's. */
static clrun_status replica_grads(struct replica *r, size_t total)
{
    clrun_status st;
    clrun_ctx *ctx = r->ctx;
    clrun_buf **b = r->b;
    const size_t N_ = r->n, nh = N_ * HID, nrows = N_, ncols[2] = {HID, C};
    if ((st = clrun_cast(ctx, b[W1], 0, CLRUN_F32, b[W1H], 0, CLRUN_F16, D * HID)) ||
        (st = clrun_cast(ctx, b[W2], 0, CLRUN_F32, b[W2H], 0, CLRUN_F16, HID * C)) ||
        (st = gemm16(ctx, 0, 0, N_, HID, D, b[X16], D, b[W1H], HID, b[Z1], HID)) || (st = clrun_arg_buf(r->k_relu, 0, b[Z1])) ||
        (st = clrun_arg_buf(r->k_relu, 1, b[B1])) || (st = clrun_arg_u32(r->k_relu, 2, HID)) ||
        (st = clrun_arg_buf(r->k_relu, 3, b[H16])) || (st = clrun_arg_u32(r->k_relu, 4, (cl_uint)nh)) ||
        (st = clrun_launch(r->k_relu, 1, &nh, NULL)) || (st = gemm16(ctx, 0, 0, N_, C, HID, b[H16], HID, b[W2H], C, b[Z2], C)) ||
        (st = clrun_arg_buf(r->k_xent, 0, b[Z2])) || (st = clrun_arg_buf(r->k_xent, 1, b[B2])) ||
        (st = clrun_arg_buf(r->k_xent, 2, b[Y])) || (st = clrun_arg_f32(r->k_xent, 3, r->sc.scale / (float)total)) ||
        (st = clrun_arg_buf(r->k_xent, 4, b[D2])) || (st = clrun_arg_buf(r->k_xent, 5, b[D2H])) ||
        (st = clrun_arg_buf(r->k_xent, 6, b[LOSS])) || (st = clrun_arg_buf(r->k_xent, 7, b[RIGHT])) ||
        (st = clrun_arg_u32(r->k_xent, 8, (cl_uint)N_)) || (st = clrun_launch(r->k_xent, 1, &nrows, NULL)))
        return st;
    /* backward, on gradients multiplied by the scale, per micro-batch of MB rows: dW2 = Hᵀ dZ2,
     * dH = dZ2 W2ᵀ, dZ1 = dH·[H > 0], dW1 = Xᵀ dZ1, and the bias gradients' column sums */
    const size_t nmb = N_ / MB;
    if ((st = gemm16b(ctx, 1, 0, HID, C, MB, b[H16], HID, MB * HID, b[D2H], C, MB * C, b[PW2], C, HID * C, nmb, 0)) ||
        (st = gemm16(ctx, 0, 1, N_, HID, C, b[D2H], C, b[W2H], C, b[DH], HID)) || (st = clrun_arg_buf(r->k_back, 0, b[DH])) ||
        (st = clrun_arg_buf(r->k_back, 1, b[Z1])) || (st = clrun_arg_buf(r->k_back, 2, b[DZ1])) ||
        (st = clrun_arg_buf(r->k_back, 3, b[DZ1H])) || (st = clrun_arg_u32(r->k_back, 4, (cl_uint)nh)) ||
        (st = clrun_launch(r->k_back, 1, &nh, NULL)) ||
        (st = gemm16b(ctx, 1, 0, D, HID, MB, b[X16], D, MB * D, b[DZ1H], HID, MB * HID, b[PW1], HID, D * HID, nmb, 0)))
        return st;
    for (int l = 0; l < 2; l++) {
        const size_t grid[2] = {ncols[l], nmb};
        if ((st = clrun_arg_buf(r->k_sum, 0, b[l ? D2 : DZ1])) || (st = clrun_arg_u32(r->k_sum, 1, MB)) ||
            (st = clrun_arg_u32(r->k_sum, 2, (cl_uint)ncols[l])) || (st = clrun_arg_buf(r->k_sum, 3, b[l ? PB2 : PB1])) ||
            (st = clrun_arg_u32(r->k_sum, 4, (cl_uint)nmb)) || (st = clrun_launch(r->k_sum, 2, grid, NULL)))
            return st;
    }
    (void)nrows;
    return CLRUN_OK;
}

/* The gradients' sizes in elements, in the order of the weights they update (W1 B1 W2 B2). */
static const size_t gsize[4] = {D * HID, HID, HID *C, C};

/* Train for `steps` steps, printing a line every `every` steps. Returns 0 when the loss fell below a
 * quarter of its start and accuracy passed 90%, 1 otherwise or on failure (the error on stderr). */
/* Where mlp_train_model wants the trained model (NULL otherwise). */
static struct mlp_model *model_out;

int mlp_train(clrun_ctx *ctx, int steps, int every) { return mlp_train_dp(&ctx, 1, steps, every, NULL); }

int mlp_train_model(clrun_ctx *ctx, int steps, int every, struct mlp_model *m)
{
    model_out = m;
    const int rc = mlp_train_dp(&ctx, 1, steps, every, NULL);
    model_out = NULL;
    return rc;
}

int mlp_train_dp(clrun_ctx *const *ctxs, int P, int steps, int every, double *losses)
{
    return mlp_train_peers(ctxs, P, NULL, steps, every, losses);
}

int mlp_train_peers(clrun_ctx *const *ctxs, int P, const struct mlp_peers *peers, int steps, int every, double *losses)
{
    struct replica *rep = calloc((size_t)P, sizeof *rep);
    float *gsum = malloc(sizeof(float) * (D * HID + HID + HID * C + C)), *gpart = malloc(sizeof(float) * (N / MB) * D * HID),
          *rowv = malloc(sizeof(float) * 2 * N);
    clrun_status st = CLRUN_OK;
    int rc = 1, skipped = 0, failed_dev = 0;
    double first = 0, loss = 0, acc = 0;

    /* data: 8 cluster centres in 32 dimensions, points scattered around them */
    uint64_t seed = 2026;
    float *centre = malloc(sizeof(float) * C * D), *w1 = malloc(sizeof(float) * D * HID), *w2 = malloc(sizeof(float) * HID * C);
    uint16_t *x = malloc(2 * N * D);
    int *label = malloc(sizeof(int) * N);
    if (!rep || !gsum || !gpart || !rowv || !centre || !w1 || !w2 || !x || !label) {
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
    /* this process's rows (all of them, or its peers' share), in P slices of whole micro-batches */
    const size_t row0 = peers ? peers->row0 : 0, rows = peers ? peers->rows : (size_t)N, mbs = rows / MB;
    const int talk = !peers || peers->rank == 0; /* one process prints */
    for (int p = 0; p < P; p++) {
        rep[p].ctx = ctxs[p];
        rep[p].r0 = row0 + mbs * (size_t)p / (size_t)P * MB;
        rep[p].n = row0 + mbs * (size_t)(p + 1) / (size_t)P * MB - rep[p].r0;
    }
    for (int p = 0; p < P && !st; p++)
        if ((st = replica_init(&rep[p], x, label, w1, w2))) failed_dev = p;
    if (st) goto fail;
    const float lr = 0.5f;
    if (talk)
        printf("mlp        %d points, %d → %d → %d, f16 GEMMs on %s, f32 master weights, loss scaling%s\n", N, D, HID, C,
               clrun_gemm_tensor_cores(rep[0].ctx) ? "tensor cores" : "the portable kernels", P > 1 || peers ? ", data-parallel" : "");
    if (talk && (P > 1 || peers))
        printf("mlp        %d device%s in %d process%s\n", P * (peers ? peers->size : 1), P * (peers ? peers->size : 1) == 1 ? "" : "s",
               peers ? peers->size : 1, peers && peers->size > 1 ? "es" : "");
    for (int step = 0; step < steps; step++) {
        const float scale = rep[0].sc.scale;
        for (int p = 0; p < P && !st; p++)
            if ((st = replica_grads(&rep[p], N))) failed_dev = p;
        if (st) goto fail;
        /* the micro-batches' partial gradients summed on the host in micro-batch order (the same
         * f32 additions however the rows are split, over devices or processes), and the sum given
         * to every replica */
        {
            size_t off = 0;
            for (int gi = 0; gi < 4; off += gsize[gi++]) {
                size_t have = 0; /* this process's partials, in micro-batch order */
                for (int p = 0; p < P; p++) {
                    if ((st = clrun_download(rep[p].b[PW1 + gi], 0, gpart + have * gsize[gi], rep[p].n / MB * gsize[gi] * 4))) {
                        failed_dev = p;
                        goto fail;
                    }
                    have += rep[p].n / MB;
                }
                if (peers) {
                    if (peers->sum_partials(peers->arg, gpart, have, gsize[gi], gsum + off)) {
                        fprintf(stderr, "mlp: the processes could not exchange gradients\n");
                        goto done;
                    }
                } else {
                    memset(gsum + off, 0, gsize[gi] * 4);
                    for (size_t mb = 0; mb < have; mb++)
                        for (size_t e = 0; e < gsize[gi]; e++) gsum[off + e] += gpart[mb * gsize[gi] + e];
                }
                for (int p = 0; p < P; p++)
                    if ((st = clrun_upload(rep[p].b[GW1 + gi], 0, gsum + off, gsize[gi] * 4))) {
                        failed_dev = p;
                        goto fail;
                    }
            }
        }
        /* unscale on every replica (the same gradients: the same found-inf), one decision for all:
         * the OR of the replicas' found-inf, as DDP with GradScaler */
        int found_any = 0;
        for (int p = 0; p < P; p++) {
            struct replica *r = &rep[p];
            const clrun_grad g[4] = {{r->b[GW1], 0, D * HID, CLRUN_F32},
                                     {r->b[GB1], 0, HID, CLRUN_F32},
                                     {r->b[GW2], 0, HID * C, CLRUN_F32},
                                     {r->b[GB2], 0, C, CLRUN_F32}};
            int found = 0;
            if ((st = clrun_scaler_unscale(r->ctx, &r->sc, g, 4)) || (st = clrun_scaler_update(r->ctx, &r->sc, &found))) {
                failed_dev = p;
                goto fail;
            }
            found_any |= found;
        }
        if (peers) found_any = peers->any(peers->arg, found_any);
        skipped += found_any;
        for (int p = 0; p < P; p++)
            for (int i = 0; !found_any && i < 4; i++) /* W1 B1 W2 B2 follow each other */
                if ((st = clrun_axpy(rep[p].ctx, CLRUN_F32, gsize[i], -lr, rep[p].b[GW1 + i], rep[p].b[W1 + i]))) {
                    failed_dev = p;
                    goto fail;
                }
        if (losses || step == 0 || step == steps - 1 || (every && (step + 1) % every == 0) || found_any) {
            loss = acc = 0; /* per-row losses summed on the host in row order, whatever the split */
            size_t have = 0;
            for (int p = 0; p < P; p++) {
                if ((st = clrun_download(rep[p].b[LOSS], 0, rowv + have, rep[p].n * 4)) ||
                    (st = clrun_download(rep[p].b[RIGHT], 0, rowv + N + have, rep[p].n * 4))) {
                    failed_dev = p;
                    goto fail;
                }
                have += rep[p].n;
            }
            if (peers) {
                if (peers->sum_rows(peers->arg, rowv, rowv + N, have, &loss, &acc)) {
                    fprintf(stderr, "mlp: the processes could not exchange losses\n");
                    goto done;
                }
            } else {
                for (size_t i = 0; i < have; i++) loss += rowv[i], acc += rowv[N + i];
            }
            loss /= N, acc /= N;
            if (losses) losses[step] = loss;
            if (step == 0) first = loss;
            if (talk && (found_any || step == 0 || step == steps - 1 || (every && (step + 1) % every == 0)))
                printf("mlp        step %4d  loss %.4f  accuracy %5.1f%%  scale %-10g%s\n", step + 1, loss, 100 * acc, (double)scale,
                       found_any ? "  overflow in the f16 gradients: step skipped, scale halved" : "");
        }
    }
    rc = loss < first / 4 && acc > 0.9 ? 0 : 1;
    if (model_out) { /* the weights (every replica holds the same) and the data, for mlp_train_model */
        struct mlp_model *m = model_out;
        m->x = malloc(sizeof(float) * N * D), m->label = malloc(sizeof(int) * N);
        if (!m->x || !m->label || (st = clrun_download(rep[0].b[W1], 0, m->w1, sizeof m->w1)) ||
            (st = clrun_download(rep[0].b[B1], 0, m->b1, sizeof m->b1)) || (st = clrun_download(rep[0].b[W2], 0, m->w2, sizeof m->w2)) ||
            (st = clrun_download(rep[0].b[B2], 0, m->b2, sizeof m->b2)))
            goto fail;
        for (size_t i = 0; i < (size_t)N * D; i++) m->x[i] = clrun_f16_to_f32(x[i]);
        memcpy(m->label, label, sizeof(int) * N);
    }
    if (talk)
        printf("mlp        loss %.4f → %.4f, accuracy %.1f%%, %d of %d steps skipped; %s\n", first, loss, 100 * acc, skipped, steps,
               rc ? "did NOT train as expected" : "trained");
    goto done;
fail:
    fprintf(stderr, "mlp: %s\n", clrun_last_error(rep ? rep[failed_dev].ctx : NULL));
    rc = 1;
done:
    for (int p = 0; rep && p < P; p++) replica_free(&rep[p]);
    free(rep), free(gsum), free(gpart), free(rowv);
    free(centre), free(w1), free(w2), free(x), free(label);
    return rc;
}
