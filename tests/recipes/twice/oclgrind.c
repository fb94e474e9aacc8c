/* oclgrind.c — the twice kernel under Oclgrind's checkers. */
#include "oclgrind_ops.h"

static void twice(void)
{
    clrun_buf *x = make(CLRUN_F32, 37), *y = make(CLRUN_F32, 37);
    TRY(clrun_twice(ctx, x, y, 37));
    TRY(clrun_finish(ctx));
    clrun_buf_free(x), clrun_buf_free(y);
}

const struct og_family og_families_twice[] = {{"twice", twice}, {0}};
