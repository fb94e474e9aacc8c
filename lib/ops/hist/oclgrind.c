/* oclgrind.c — the histogram kernels under Oclgrind's checkers: counts in local memory and in global
 * memory (many bins), weighted sums, histogram bins. */
#include "oclgrind_ops.h"

#include <stdlib.h>

/* n + 2 int32 keys from -2 to 4,200: below 0, in the bins of both calls, past them */
static clrun_buf *keys(size_t n)
{
    int32_t *h = malloc((n + 2) * 4);
    clrun_buf *b = NULL;
    for (size_t i = 0; h && i < n + 2; i++) h[i] = (int32_t)(i * 2654435761u % 4203u) - 2;
    if (!h || clrun_buf_new(ctx, (n + 2) * 4, 0, &b) || clrun_upload(b, 0, h, (n + 2) * 4)) failures++;
    free(h);
    return b;
}

static void hist_ops(void)
{
    const size_t n = 500;
    clrun_buf *k = keys(n), *w = make(CLRUN_F32, n), *o = make(CLRUN_F64, 5000), *e = make(CLRUN_F32, 11);
    TRY(clrun_bincount(ctx, CLRUN_I32, k, 2, n, NULL, 0, CLRUN_F32, 100, o, 0));
    TRY(clrun_bincount(ctx, CLRUN_I32, k, 0, n, NULL, 0, CLRUN_F32, 4000, o, 1));
    TRY(clrun_bincount(ctx, CLRUN_I32, k, 0, n, w, 0, CLRUN_F32, 50, o, 0));
    TRY(clrun_finish(ctx));
    float edges[11];
    clrun_histogram_edges(-1, 1, 10, 0, edges);
    TRY(clrun_upload(e, 0, edges, sizeof edges));
    TRY(clrun_histogram(ctx, CLRUN_F32, w, 0, n, w, 0, CLRUN_F32, 10, e, 5.0, 0, o, 0));
    TRY(clrun_finish(ctx));
    clrun_buf_free(k), clrun_buf_free(w), clrun_buf_free(o), clrun_buf_free(e);
}

const struct og_family og_families_hist[] = {{"hist", hist_ops}, {0}};
