/* oclgrind.c — the random-number kernels on small, awkward shapes under Oclgrind's checkers. */
#include "oclgrind_ops.h"

static void rand_ops(void)
{
    const struct {
        clrun_rand_dist dist;
        clrun_dtype t;
    } runs[] = {{CLRUN_RAND_BITS, CLRUN_U32},     {CLRUN_RAND_UNIFORM, CLRUN_F32}, {CLRUN_RAND_UNIFORM, CLRUN_F16},
                {CLRUN_RAND_NORMAL, CLRUN_F32},   {CLRUN_RAND_NORMAL, CLRUN_BF16}, {CLRUN_RAND_INTEGERS, CLRUN_I32},
                {CLRUN_RAND_INTEGERS, CLRUN_U64}, {CLRUN_RAND_BERNOULLI, CLRUN_U8}};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        clrun_buf *o = make(CLRUN_F64, 40);
        clrun_rand_desc d;
        clrun_rand_desc_init(&d, 7, runs[r].dist, runs[r].t);
        d.offset = 3; /* not a multiple of 4: two blocks per work-item */
        TRY(clrun_rand(ctx, &d, o, 1, 37));
        TRY(clrun_finish(ctx));
        clrun_buf_free(o);
    }
}

const struct og_family og_families_rand[] = {{"rand", rand_ops}, {0}};
