/* twice.c — clrun_twice: y = 2x on the device (the recipe's example op, docs/DEVELOPING.md). */
#include "opkit.h"

clrun_status clrun_twice(clrun_ctx *ctx, clrun_buf *x, clrun_buf *y, size_t n)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_twice: ctx is NULL");
    CLRUN__SERIAL(ctx);
    if (!x || !y) return clrun__fail(ctx, CLRUN_INVALID_ARG, "twice: x or y is NULL");
    if (clrun_buf_size(x) < n * 4 || clrun_buf_size(y) < n * 4) return clrun__fail(ctx, CLRUN_INVALID_ARG, "twice: buffers under n floats");
    if (!n) return CLRUN_OK;
    clrun_kernel *k;
    clrun_status st;
    if ((st = clrun__lib_kernel(ctx, "twice", NULL, "clrun_twice_f32", &k))) return st;
    return CLRUN__RUN(k, CLRUN__GRID1(n), ARG_BUF(x), ARG_BUF(y), ARG_U64(n));
}
