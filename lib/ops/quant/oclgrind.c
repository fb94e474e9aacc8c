/* oclgrind.c — the quant kernels on small, awkward shapes under Oclgrind's checkers (the families
 * tests/oclgrind_ops.c runs; tests/oclgrind_check.py says how). */
#include "oclgrind_ops.h"

/* Quantize and dequantize, per tensor and per channel, at offsets that leave both the scalar and the
 * four-wide forms their tails. */
static void quant(void)
{
    const size_t n = 67;
    clrun_buf *x = make(CLRUN_F32, n + 5), *q = make_s8(n + 5), *y = make(CLRUN_F32, n + 5);
    const float sc[3] = {0.05f, 0.02f, 0.1f};
    const int32_t zp[3] = {0, -3, 7};
    const clrun_qparams tensor = {1, 1, sc, zp}, chan = {3, 5, sc, zp};
    TRY(clrun_quantize(ctx, x, 0, q, 0, n, &tensor));
    TRY(clrun_dequantize(ctx, q, 0, y, 0, n, &tensor));
    TRY(clrun_quantize(ctx, x, 1, q, 3, n, &chan));
    TRY(clrun_dequantize(ctx, q, 3, y, 2, n, &chan));
    TRY(clrun_finish(ctx));
    clrun_buf_free(x), clrun_buf_free(q), clrun_buf_free(y);
}

const struct og_family og_families_quant[] = {{"quant", quant}, {0}};
