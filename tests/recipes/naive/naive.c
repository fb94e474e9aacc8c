/* naive.c — the backend "naive" (the recipe's example, docs/DEVELOPING.md): f32 products of A and
 * B as stored, one element of C per work-item. */
#include "../gemm.h"

static const char *refuses(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    (void)ctx;
    return p->d.type != CLRUN_F32 || p->d.trans_a || p->d.trans_b ? "the naive backend takes f32 A and B as stored" : NULL;
}

static clrun_status launch(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    clrun_kernel *k;
    clrun_status st;
    if ((st = clrun__lib_kernel(ctx, "gemm_naive", NULL, "clrun_gemm_naive", &k))) return st;
    const clrun__grid g = {3, {p->d.n, p->d.m, p->d.batch}, {0, 0, 0}};
    return clrun__gemm_launch_shaped(k, g, &p->d, 1);
}

const clrun__gemm_backend clrun__gemm_naive = {
    .id = (clrun_gemm_backend)100,
    .name = "naive",
    .needs = "",
    .kinds = CLRUN__GEMM_KIND_BIT(CLRUN__GEMM_FLOAT),
    .refuses = refuses,
    .launch = launch,
};
