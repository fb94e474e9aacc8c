/* oclgrind.c — the layer kernels under Oclgrind's checkers: activations, batch norm (training,
 * backward, evaluation), max and average pooling with padding, linear, cross-entropy, dropout and
 * the optimisers. */
#include "oclgrind_ops.h"

static void nn_ops(void)
{
    const clrun_tensor4 t = {CLRUN_NCHW, CLRUN_F16, 2, 3, 5, 6}, u = {CLRUN_NHWC, CLRUN_F32, 2, 3, 5, 6};
    const size_t n = 2 * 3 * 5 * 6;
    clrun_buf *x = make(CLRUN_F32, n), *y = make(CLRUN_F32, n), *dy = make(CLRUN_F32, n), *stats[6];
    for (int i = 0; i < 6; i++) stats[i] = make(CLRUN_F32, 3);
    for (int a = 0; a < 3; a++) {
        TRY(clrun_act_forward(ctx, (clrun_act)a, CLRUN_F16, n, x, y));
        TRY(clrun_act_backward(ctx, (clrun_act)a, CLRUN_F32, n, x, dy, y));
    }
    for (int l = 0; l < 2; l++) {
        const clrun_tensor4 *s = l ? &u : &t;
        clrun_batchnorm bn = {1, 0.1f, 1e-5f, stats[0], stats[1], stats[2], stats[3], stats[4], stats[5]};
        TRY(clrun_batchnorm_forward(ctx, s, &bn, x, y));
        TRY(clrun_batchnorm_backward(ctx, s, &bn, x, dy, y, stats[0], stats[1]));
        bn.training = 0;
        TRY(clrun_batchnorm_forward(ctx, s, &bn, x, y));
        const clrun_pool_desc pools[] = {{1, 3, 3, 2, 2, 1, 1, 0}, {0, 2, 3, 1, 2, 1, 1, 1}, {0, 5, 6, 0, 0, 0, 0, 1}};
        for (int p = 0; p < 3; p++) {
            TRY(clrun_pool_forward(ctx, s, &pools[p], x, y));
            TRY(clrun_pool_backward(ctx, s, &pools[p], x, dy, y));
        }
    }
    clrun_buf *lab = make(CLRUN_F32, 6), *pred = make(CLRUN_F32, 6), *w = make(CLRUN_F32, 40), *b = make(CLRUN_F32, 10),
              *dw = make(CLRUN_F32, 40), *mask = make(CLRUN_F32, n);
    int32_t labels[6] = {0, 9, 3, 4, 5, 1};
    TRY(clrun_upload(lab, 0, labels, sizeof labels));
    TRY(clrun_linear_forward(ctx, CLRUN_F32, 6, 4, 10, x, w, b, y));
    TRY(clrun_cross_entropy(ctx, 6, 10, y, lab, 1.0f / 6, dy, y, pred));
    TRY(clrun_linear_backward(ctx, CLRUN_F16, 6, 4, 10, x, w, y, dy, dw, b));
    clrun_rand_desc r;
    clrun_rand_desc_init(&r, 5, CLRUN_RAND_BERNOULLI, CLRUN_U8);
    TRY(clrun_dropout(ctx, CLRUN_F32, n, 0.25f, &r, x, mask, y));
    TRY(clrun_dropout_backward(ctx, CLRUN_BF16, n, 0.25f, mask, dy, y));
    const clrun_sgd sgd = {0.1f, 0.9f, 0, 1e-4f, 1};
    const clrun_adamw adam = {1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f};
    TRY(clrun_sgd_step(ctx, &sgd, 40, w, dw, x, 1));
    TRY(clrun_adamw_step(ctx, &adam, 40, w, dw, x, dy, 3));
    TRY(clrun_finish(ctx));
    clrun_buf_free(x), clrun_buf_free(y), clrun_buf_free(dy), clrun_buf_free(lab), clrun_buf_free(pred), clrun_buf_free(w),
        clrun_buf_free(b), clrun_buf_free(dw), clrun_buf_free(mask);
    for (int i = 0; i < 6; i++) clrun_buf_free(stats[i]);
}

const struct og_family og_families_nn[] = {{"nn", nn_ops}, {0}};
