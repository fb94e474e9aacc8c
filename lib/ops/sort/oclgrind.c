/* oclgrind.c — the sort kernels under Oclgrind's checkers: several work-groups (the scan of the
 * counts), rows (the row passes), argsort at an offset, pairs and top-k. */
#include "oclgrind_ops.h"

static void sort_ops(void)
{
    const size_t n = 700; /* over two blocks of 16 · 8 on the simulator's GPU shape, rows of 233 */
    clrun_buf *a = make(CLRUN_F32, n + 3), *b = make(CLRUN_F32, n + 3), *i = make(CLRUN_I64, n + 5), *v = make(CLRUN_I32, n);
    TRY(clrun_sort(ctx, CLRUN_F32, 0, a, 1, b, 2, 1, n));
    TRY(clrun_sort(ctx, CLRUN_F32, CLRUN_SORT_DESCENDING, b, 0, b, 0, 3, 233));
    TRY(clrun_argsort(ctx, CLRUN_F32, 0, a, 0, i, 5, 4, 175));
    TRY(clrun_sort_pairs(ctx, CLRUN_F32, 0, a, 0, v, 0, CLRUN_I32, 2, 350));
    TRY(clrun_topk(ctx, CLRUN_F32, CLRUN_SORT_DESCENDING, b, 0, 7, 100, 9, a, 0, i, 0));
    TRY(clrun_finish(ctx));
    clrun_buf_free(a), clrun_buf_free(b), clrun_buf_free(i), clrun_buf_free(v);
}

const struct og_family og_families_sort[] = {{"sort", sort_ops}, {0}};
