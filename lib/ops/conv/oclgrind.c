/* oclgrind.c — the convolution kernels under Oclgrind's checkers: the three passes with stride,
 * padding, dilation and groups in both layouts, f16 storage, a split backward-weights depth. */
#include "oclgrind_ops.h"

static void conv_ops(void)
{
    const clrun_conv2d_desc descs[] = {
        {.x = {CLRUN_NCHW, CLRUN_F32, 2, 4, 7, 6},
         .k = 6,
         .r = 3,
         .s = 2,
         .stride_h = 2,
         .pad_h = 1,
         .pad_w = 1,
         .dilation_w = 2,
         .groups = 2},
        {.x = {CLRUN_NHWC, CLRUN_F16, 1, 3, 5, 5}, .k = 3, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1, .groups = 3},
        {.x = {CLRUN_NCHW, CLRUN_F32, 8, 2, 16, 16}, .k = 3, .r = 3, .s = 3, .pad_h = 1, .pad_w = 1},
    };
    for (size_t i = 0; i < sizeof descs / sizeof *descs; i++) {
        const clrun_conv2d_desc *d = &descs[i];
        clrun_tensor4 y;
        TRY(clrun_conv2d_shape(ctx, d, &y));
        const clrun_dtype t = d->x.type;
        const size_t nx = (size_t)d->x.n * d->x.c * d->x.h * d->x.w, ny = (size_t)y.n * y.c * y.h * y.w,
                     nw = (size_t)d->k * (d->x.c / (d->groups ? d->groups : 1)) * d->r * d->s;
        clrun_buf *x = make(t, nx), *w = make(t, nw), *b = make(t, (size_t)d->k), *yb = make(t, ny), *dx = make(t, nx), *dw = make(t, nw),
                  *db = make(t, (size_t)d->k);
        TRY(clrun_conv2d_forward(ctx, d, x, w, b, yb));
        TRY(clrun_conv2d_backward_data(ctx, d, yb, w, dx));
        TRY(clrun_conv2d_backward_weights(ctx, d, x, yb, dw, db));
        TRY(clrun_finish(ctx));
        clrun_buf_free(x), clrun_buf_free(w), clrun_buf_free(b), clrun_buf_free(yb), clrun_buf_free(dx), clrun_buf_free(dw),
            clrun_buf_free(db);
    }
}

const struct og_family og_families_conv[] = {{"conv", conv_ops}, {0}};
