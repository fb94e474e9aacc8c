/* oclgrind.c — the vector kernels on small, awkward shapes under Oclgrind's checkers (the families
 * tests/oclgrind_ops.c runs; tests/oclgrind_check.py says how). */
#include "oclgrind_ops.h"

static void vector_ops(void)
{
    const clrun_dtype types[] = {CLRUN_F32, CLRUN_F16};
    for (int t = 0; t < 2; t++) {
        const size_t n = 77;
        clrun_buf *a = make(types[t], n), *b = make(types[t], n), *c = make(types[t], n), *d = make(types[t], n);
        for (clrun_vec_op op = CLRUN_MUL; op <= CLRUN_FMA; op++) TRY(clrun_vec(ctx, op, types[t], n - 3, 1.5f, d, 1, a, 2, b, 0, c, 3));
        TRY(clrun_finish(ctx));
        clrun_buf_free(a), clrun_buf_free(b), clrun_buf_free(c), clrun_buf_free(d);
    }
}

const struct og_family og_families_vector[] = {{"vector", vector_ops}, {0}};
