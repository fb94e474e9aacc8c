/* oclgrind.c — the reduce kernels on small, awkward shapes under Oclgrind's checkers (the families
 * tests/oclgrind_ops.c runs; tests/oclgrind_check.py says how). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "oclgrind_ops.h"

static void reductions(const char *shape)
{
    setenv("CLRUN_REDUCE_SHAPE", shape, 1);
    const clrun_dtype types[] = {CLRUN_F32, CLRUN_F16};
    const size_t sizes[] = {1, 37, 1000};
    for (int t = 0; t < 2; t++)
        for (int s = 0; s < 3; s++) {
            const size_t n = sizes[s];
            clrun_buf *x = make(types[t], n + 2), *y = make(types[t], n + 2);
            double r;
            float m;
            size_t at;
            TRY(clrun_sum(ctx, types[t], x, 1, n, &r));
            TRY(clrun_dot(ctx, types[t], x, 0, y, 2, n, &r));
            TRY(clrun_norm2(ctx, types[t], x, 2, n, &r));
            TRY(clrun_max(ctx, types[t], x, 1, n, &m));
            TRY(clrun_min(ctx, types[t], x, 1, n, &m));
            TRY(clrun_argmax(ctx, types[t], x, 1, n, &at));
            clrun_buf_free(x), clrun_buf_free(y);
        }
    unsetenv("CLRUN_REDUCE_SHAPE");
}

static void reduce_gpu(void) { reductions("gpu"); }
static void reduce_cpu(void) { reductions("cpu"); }

const struct og_family og_families_reduce[] = {{"reduce-gpu", reduce_gpu}, {"reduce-cpu", reduce_cpu}, {0}};
