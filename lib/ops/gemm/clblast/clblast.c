/* clblast.c — the backend "clblast": CLBlast's SGEMM (f32 only), where libclrun was built with it
 * (meson -Dclblast=enabled). Tuned per device by CLBlast itself; a peer in `clrun bench gemm`. */
#include "../gemm.h"

#ifdef CLRUN_HAVE_CLBLAST
#include <clblast_c.h>
#endif

int clrun_have_clblast(void)
{
#ifdef CLRUN_HAVE_CLBLAST
    return 1;
#else
    return 0;
#endif
}

static int probe(clrun_ctx *ctx, enum clrun__gemm_kind kind)
{
    (void)ctx, (void)kind;
    return clrun_have_clblast();
}

static const char *refuses(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    (void)ctx;
    return p->d.type != CLRUN_F32 ? "CLBlast has no GEMM with f16 or bf16 inputs and f32 results; use another backend" : NULL;
}

static clrun_status launch(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
#ifdef CLRUN_HAVE_CLBLAST
    const clrun_gemm_desc *d = &p->d;
    cl_command_queue q = clrun_ctx_cl_queue(ctx);
    CLBlastStatusCode s;
    CLBlastTranspose ta = d->trans_a ? CLBlastTransposeYes : CLBlastTransposeNo, tb = d->trans_b ? CLBlastTransposeYes : CLBlastTransposeNo;
    cl_mem a = clrun_buf_cl_mem(d->a ? d->a : d->c), b = clrun_buf_cl_mem(d->b ? d->b : d->c), c = clrun_buf_cl_mem(d->c);
    size_t lda = d->lda ? d->lda : 1, ldb = d->ldb ? d->ldb : 1;
    if (d->batch == 1)
        s = CLBlastSgemm(CLBlastLayoutRowMajor, ta, tb, d->m, d->n, d->k, d->alpha, a, d->a_off, lda, b, d->b_off, ldb, d->beta, c,
                         d->c_off, d->ldc, &q, NULL);
    else
        s = CLBlastSgemmStridedBatched(CLBlastLayoutRowMajor, ta, tb, d->m, d->n, d->k, d->alpha, a, d->a_off, lda, d->stride_a, b,
                                       d->b_off, ldb, d->stride_b, d->beta, c, d->c_off, d->ldc, d->stride_c, d->batch, &q, NULL);
    if (s != CLBlastSuccess)
        return clrun__fail(ctx, s <= -1000 ? CLRUN_UNSUPPORTED : CLRUN_CL_ERROR, "gemm: CLBlast failed with status %d%s%s%s", (int)s,
                           s > -1000 ? " (" : "", s > -1000 ? clrun_cl_error_name((cl_int)s) : "", s > -1000 ? ")" : "");
    return CLRUN_OK;
#else
    (void)p;
    return clrun__fail(ctx, CLRUN_UNSUPPORTED, "gemm: this libclrun was built without CLBlast (meson -Dclblast=enabled)");
#endif
}

const clrun__gemm_backend clrun__gemm_clblast = {
    .id = CLRUN_GEMM_CLBLAST,
    .name = "clblast",
    .needs = "this libclrun was built without CLBlast (meson -Dclblast=enabled)",
    .kinds = CLRUN__GEMM_KIND_BIT(CLRUN__GEMM_FLOAT),
    .probe = probe,
    .refuses = refuses,
    .launch = launch,
};
