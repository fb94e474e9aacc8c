/* oclgrind.c — the scan kernels under Oclgrind's checkers: one tile, several tiles (the carries),
 * exclusive and in place. */
#include "oclgrind_ops.h"

static void scan_ops(void)
{
    const clrun_dtype types[] = {CLRUN_I32, CLRUN_F32};
    for (int t = 0; t < 2; t++) {
        const size_t n = 1500; /* more than a tile of 256 · 4 */
        clrun_buf *a = make(types[t], 2 * n + 3), *b = make(types[t], 2 * n + 3);
        TRY(clrun_scan(ctx, CLRUN_SCAN_SUM, 0, types[t], a, 1, b, 2, 2, n));
        TRY(clrun_scan(ctx, CLRUN_SCAN_MAX, 1, types[t], a, 0, a, 0, 3, 77));
        TRY(clrun_finish(ctx));
        clrun_buf_free(a), clrun_buf_free(b);
    }
}

const struct og_family og_families_scan[] = {{"scan", scan_ops}, {0}};
