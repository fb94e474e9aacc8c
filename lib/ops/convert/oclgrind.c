/* oclgrind.c — the convert kernels on small, awkward shapes under Oclgrind's checkers (the families
 * tests/oclgrind_ops.c runs; tests/oclgrind_check.py says how). */
#include "oclgrind_ops.h"

static void casts(void)
{
    const size_t n = 45;
    clrun_buf *f = make(CLRUN_F32, n), *h = make(CLRUN_F16, n), *g = make(CLRUN_BF16, n), *o = make(CLRUN_F32, n);
    TRY(clrun_cast(ctx, f, 1, CLRUN_F32, h, 2, CLRUN_F16, n - 3));
    TRY(clrun_cast(ctx, h, 0, CLRUN_F16, o, 0, CLRUN_F32, n));
    TRY(clrun_cast(ctx, f, 0, CLRUN_F32, g, 0, CLRUN_BF16, n));
    TRY(clrun_cast(ctx, g, 3, CLRUN_BF16, o, 1, CLRUN_F32, n - 3));
    TRY(clrun_finish(ctx));
    clrun_buf_free(f), clrun_buf_free(h), clrun_buf_free(g), clrun_buf_free(o);
}

const struct og_family og_families_convert[] = {{"cast", casts}, {0}};
