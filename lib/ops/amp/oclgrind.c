/* oclgrind.c — the amp kernels on small, awkward shapes under Oclgrind's checkers (the families
 * tests/oclgrind_ops.c runs; tests/oclgrind_check.py says how). */
#include "oclgrind_ops.h"

static void scaler(void)
{
    clrun_scaler s;
    clrun_scaler_init(&s);
    clrun_buf *a = make(CLRUN_F32, 50), *b = make(CLRUN_F16, 31), *c = make(CLRUN_BF16, 29);
    clrun_grad g[3] = {{a, 1, 49, CLRUN_F32}, {b, 0, 31, CLRUN_F16}, {c, 2, 27, CLRUN_BF16}};
    int found = 0;
    TRY(clrun_scaler_unscale(ctx, &s, g, 3));
    TRY(clrun_scaler_update(ctx, &s, &found));
    clrun_scaler_free(&s);
    clrun_buf_free(a), clrun_buf_free(b), clrun_buf_free(c);
}

const struct og_family og_families_amp[] = {{"amp", scaler}, {0}};
