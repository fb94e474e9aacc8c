/* mma_nv.c — the backend "mma.sync": NVIDIA's tensor cores through inline PTX (lib/ops/gemm/nv/gemm_mma_nv.cl),
 * on any NVIDIA GPU whose OpenCL compiler takes it (sm_80 and later). f16/bf16 with f32 sums, f32 as
 * 3xTF32 (each operand split into a tf32 high part and residual, three products summed in f32), s8
 * with int32 sums and the fused epilogue, and 2:4 sparse A through mma.sp. Three tiles in flight
 * through cp.async, so rows must start on 16 bytes (front.c stages others). */
#include "nv.h"

#include <stdlib.h>
#include <string.h>

/* Tiles: BM BN BK WTM WTN STAGES, and TFACC for 3xTF32. Measured on the H200 (docs/BENCHMARKS.md):
 * f16/bf16 128×128 tiles of four 64×64 warps, slices of 32 in three stages (48 KiB, all the local
 * memory NVIDIA's OpenCL gives a work-group) beat 128×256, 256×128, 64×128, 8 warps of 64×32 and
 * slices of 16 in 4 or 6 stages by 10–35%. 3xTF32: the same tiles in slices of 16, each slice's
 * products summed from zero on the tensor cores and then added in f32 (TFACC 2: the SIMT kernel's
 * accuracy; summing per step, TFACC 1, is 3× less accurate for 5% more speed).
 * The tuning file's and $CLRUN_GEMM_TILES's ("mma.sync:BM,BN,BK,WTM,WTN,STAGES[,TFACC]") over them. */
struct mma_params {
    unsigned bm, bn, bk, wtm, wtn, stages, tfacc;
};

int clrun__gemm_nv_candidate(clrun_ctx *ctx)
{
    const clrun_device_info *in = clrun_ctx_device(ctx);
    return (strstr(in->platform_vendor, "NVIDIA") != NULL || strstr(in->vendor, "NVIDIA") != NULL) && in->type == CLRUN_DEVICE_GPU &&
           !clrun__setting_on(CLRUN__SET_NO_TENSOR);
}

static int mma_ok(const clrun_device_info *in, const struct mma_params *p, size_t esize)
{
    const unsigned epc = (unsigned)(16 / esize), ks = esize == 4 ? 8 : esize == 2 ? 16 : 32;
    if (!p->bm || !p->bn || !p->bk || !p->wtm || !p->wtn || p->stages < 2 || p->stages > 8) return 0;
    /* transposed tiles (f16, bf16, f32) store rows of BM or BN elements: 8 chunks at least */
    if (p->bm % p->wtm || p->bn % p->wtn || p->wtm % 16 || p->wtn % 16 || p->bk % ks ||
        (esize != 1 && (p->bm % (8 * epc) || p->bn % (8 * epc))) || p->bk % epc)
        return 0;
    size_t threads = (size_t)(p->bm / p->wtm) * (p->bn / p->wtn) * 32, lmem = (size_t)p->stages * (p->bm + p->bn) * p->bk * esize;
    return threads <= in->max_work_group && (!in->local_mem || lmem <= in->local_mem);
}

/* The element size of p's operands: s8 1, 2:4 and 16-bit floats 2, f32 4. */
static size_t esize(const clrun__gemm_plan *p) { return p->kind == CLRUN__GEMM_S8 ? 1 : clrun_dtype_size(p->d.type); }

static const char *check(const clrun_device_info *in, const clrun__gemm_plan *p, const unsigned *v)
{
    const struct mma_params e = {v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
    if (p->kind == CLRUN__GEMM_SP && e.bk % 32) return "the sparse kernel takes slices of K (BK) in multiples of 32";
    return (e.tfacc == 1 || e.tfacc == 2) && mma_ok(in, &e, esize(p))
               ? NULL
               : "tiles this device cannot run for this element type (see lib/ops/gemm/nv/gemm_mma_nv.cl; TFACC is 1 or 2)";
}

/* Tuned per element type: f32 (3xTF32), f16 (and bf16), s8, sp (2:4). */
static const char *key(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    (void)ctx;
    return p->kind == CLRUN__GEMM_S8 ? "s8" : p->kind == CLRUN__GEMM_SP ? "sp" : p->d.type == CLRUN_F32 ? "f32" : "f16";
}

static const clrun__gemm_tune_point points[] = {
    {"f16", CLRUN__GEMM_FLOAT, CLRUN_F16, 2, 0},
    {"f32", CLRUN__GEMM_FLOAT, CLRUN_F32, 2, 0},
    {"s8", CLRUN__GEMM_S8, CLRUN_I8, 2, 0},
};

/* Per element size: the built-in tiles first, then shapes that fill 48 KiB of local memory otherwise. */
static size_t space(const clrun_device_info *in, const clrun__gemm_tune_point *pt, int quick, unsigned (*out)[CLRUN__GEMM_TILE_MAX],
                    size_t max)
{
    static const unsigned c[3][6][7] = {
        {{128, 128, 16, 64, 64, 3, 2},
         {128, 128, 8, 64, 64, 6, 2},
         {64, 128, 16, 32, 64, 4, 2},
         {128, 128, 16, 64, 64, 3, 1},
         {64, 64, 16, 32, 32, 4, 2},
         {128, 64, 16, 64, 32, 4, 2}},
        {{128, 128, 32, 64, 64, 3, 1},
         {128, 128, 16, 64, 64, 6, 1},
         {64, 128, 32, 32, 64, 4, 1},
         {128, 64, 32, 64, 32, 4, 1},
         {128, 128, 16, 64, 64, 4, 1},
         {64, 64, 32, 32, 32, 4, 1}},
        {{128, 128, 64, 64, 64, 3, 1},
         {128, 128, 32, 64, 64, 6, 1},
         {64, 128, 64, 32, 64, 4, 1},
         {128, 64, 64, 64, 32, 4, 1},
         {64, 64, 64, 32, 32, 4, 1},
         {128, 128, 32, 64, 64, 4, 1}},
    };
    const size_t es = pt->kind == CLRUN__GEMM_S8 ? 1 : clrun_dtype_size(pt->type), row = es == 4 ? 0 : es == 2 ? 1 : 2;
    size_t nc = 0;
    for (size_t i = 0; i < (quick ? 3u : 6u) && nc < max; i++) {
        const struct mma_params e = {c[row][i][0], c[row][i][1], c[row][i][2], c[row][i][3], c[row][i][4], c[row][i][5], c[row][i][6]};
        if (mma_ok(in, &e, es)) memcpy(out[nc++], c[row][i], sizeof c[row][i]);
    }
    return nc;
}

static const clrun__gemm_tiles tiles = {
    .count = 7,
    .names = {"BM", "BN", "BK", "WTM", "WTN", "STAGES", "TFACC"},
    .min = 6,
    .tail = {[6] = 1},
    .key = key,
    .check = check,
    .points = points,
    .npoints = sizeof points / sizeof *points,
    .space = space,
};

/* The built-in tiles (above), then the tuning file's and $CLRUN_GEMM_TILES's (clrun__gemm_tiles_for). */
static clrun_status mma_params(clrun_ctx *ctx, const clrun__gemm_plan *p, struct mma_params *t)
{
    const size_t es = esize(p);
    unsigned v[CLRUN__GEMM_TILE_MAX] = {128, 128, 16, 64, 64, 3, 2};
    if (es != 4) v[2] = 32 * (2 / (unsigned)es), v[6] = 1;
    clrun_status st = clrun__gemm_tiles_for(ctx, &clrun__gemm_mma, p, v, NULL);
    *t = (struct mma_params){v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
    return st;
}

/* The 2:4 kernel's form on this context: SPMETA (1 or 2) + 2·SPORD (0 or 1), found by the probe. */
struct mma_state {
    int sp_form;
};
static const char state_key = 0;

static struct mma_state *state(clrun_ctx *ctx) { return clrun__op_state(ctx, &state_key, sizeof(struct mma_state), NULL); }

static clrun_status launch(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    const clrun_gemm_desc *d = &p->d;
    clrun_status st;
    clrun_kernel *k = NULL;
    struct mma_params t = {0};
    char opts[240];
    if ((st = mma_params(ctx, p, &t))) return st;
    const int c2 = clrun__gemm_c2(d);
    if (p->kind == CLRUN__GEMM_S8)
        snprintf(opts, sizeof opts, "-DABT=3 -DBM=%u -DBN=%u -DBK=%u -DWTM=%u -DWTN=%u -DSTAGES=%u -DTA=0 -DTB=1 -DEPI=%d", t.bm, t.bn,
                 t.bk, t.wtm, t.wtn, t.stages, p->e != NULL);
    else if (p->kind == CLRUN__GEMM_SP) {
        const struct mma_state *s = state(ctx);
        if (!s) return CLRUN_HOST_OUT_OF_MEMORY;
        const int form = s->sp_form;
        snprintf(opts, sizeof opts,
                 "-DABT=%d -DBM=%u -DBN=%u -DBK=%u -DWTM=%u -DWTN=%u -DSTAGES=%u -DTA=0 -DTB=%d -DC2=%d -DSP=1 -DSPMETA=%d -DSPORD=%d",
                 clrun__float_code(d->type), t.bm, t.bn, t.bk, t.wtm, t.wtn, t.stages, d->trans_b != 0, c2, form > 2 ? form - 2 : form,
                 form > 2);
    } else
        snprintf(opts, sizeof opts, "-DABT=%d -DBM=%u -DBN=%u -DBK=%u -DWTM=%u -DWTN=%u -DSTAGES=%u -DTFACC=%u -DTA=%d -DTB=%d -DC2=%d",
                 clrun__float_code(d->type), t.bm, t.bn, t.bk, t.wtm, t.wtn, t.stages, t.tfacc, d->trans_a != 0, d->trans_b != 0, c2);
    if ((st = clrun__lib_kernel(ctx, "gemm_mma_nv", opts, "clrun_gemm_mma", &k))) return st;
    const size_t threads = (size_t)(t.bm / t.wtm) * (t.bn / t.wtn) * 32;
    const size_t tiles = ((d->m + t.bm - 1) / t.bm) * ((d->n + t.bn - 1) / t.bn);
    const clrun__grid g = {2, {tiles * threads, d->batch, 1}, {threads, 1, 1}};
    if (p->kind == CLRUN__GEMM_S8) return clrun__gemm_launch_s8(k, g, d, 16, p->e);
    if (p->kind == CLRUN__GEMM_FLOAT) return clrun__gemm_launch_shaped(k, g, d, 8);
    clrun_buf *a = d->a ? d->a : d->c, *b = d->b ? d->b : d->c;
    return CLRUN__RUN(k, g, ARG_U32(d->m), ARG_U32(d->n), ARG_U32(d->k), ARG_F32(d->alpha), ARG_F32(d->beta), ARG_BUF(a), ARG_U64(d->a_off),
                      ARG_U32(d->lda ? d->lda : 8), ARG_U64(d->stride_a), ARG_BUF(p->meta ? p->meta : d->c), ARG_U64(p->meta_off),
                      ARG_BUF(b), ARG_U64(d->b_off), ARG_U32(d->ldb ? d->ldb : 8), ARG_U64(d->stride_b), ARG_BUF(d->c), ARG_U64(d->c_off),
                      ARG_U32(d->ldc), ARG_U64(d->stride_c));
}

static const char *refuses(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    (void)ctx;
    return p->kind == CLRUN__GEMM_SP && p->d.type == CLRUN_F32 ? "the sparse tensor cores take f16 or bf16" : NULL;
}

/* ---- probes: small integers (exact in f32 and int32 in any order) with edges in M, N and K ----- */

static int probe_f16(clrun_ctx *ctx)
{
    enum { PM = 40, PN = 24, PK = 56 };
    uint16_t ha[PM * PK], hb[PK * PN];
    float want[PM * PN];
    for (int i = 0; i < PM * PK; i++) ha[i] = clrun_f32_to_f16((float)((i * 7) % 9 - 4));
    for (int i = 0; i < PK * PN; i++) hb[i] = clrun_f32_to_f16((float)((i * 5) % 7 - 3));
    for (int i = 0; i < PM; i++)
        for (int j = 0; j < PN; j++) {
            float s = 0;
            for (int p = 0; p < PK; p++) s += clrun_f16_to_f32(ha[i * PK + p]) * clrun_f16_to_f32(hb[p * PN + j]);
            want[i * PN + j] = s;
        }
    clrun__gemm_plan p = {.kind = CLRUN__GEMM_FLOAT, .what = "gemm"};
    p.d.m = PM, p.d.n = PN, p.d.k = PK, p.d.alpha = 1, p.d.lda = PK, p.d.ldb = PN, p.d.ldc = PN, p.d.type = CLRUN_F16, p.d.batch = 1;
    return clrun__gemm_probe(ctx, &clrun__gemm_mma, &p, ha, sizeof ha, hb, sizeof hb, want, sizeof want);
}

/* s8: an NN product (B staged into N×K), the epilogue off. */
static int probe_s8(clrun_ctx *ctx)
{
    enum { PM = 40, PN = 24, PK = 72 };
    signed char ha[PM * PK], hb[PK * PN];
    int32_t want[PM * PN];
    for (int i = 0; i < PM * PK; i++) ha[i] = (signed char)((i * 37) % 256 - 128);
    for (int i = 0; i < PK * PN; i++) hb[i] = (signed char)((i * 91) % 255 - 127);
    for (int i = 0; i < PM; i++)
        for (int j = 0; j < PN; j++) {
            int32_t s = 0;
            for (int p = 0; p < PK; p++) s += ha[i * PK + p] * hb[p * PN + j];
            want[i * PN + j] = s;
        }
    clrun__gemm_plan p = {.kind = CLRUN__GEMM_S8, .what = "gemm s8"};
    p.d.m = PM, p.d.n = PN, p.d.k = PK, p.d.alpha = 1, p.d.lda = PK, p.d.ldb = PN, p.d.ldc = PN, p.d.type = CLRUN_I8, p.d.batch = 1;
    return clrun__gemm_probe(ctx, &clrun__gemm_mma, &p, ha, sizeof ha, hb, sizeof hb, want, sizeof want);
}

/* 2:4: a pruned product through the kernel of one form, compressed on the host. */
static int probe_sp_form(clrun_ctx *ctx, struct mma_state *s, int form)
{
    s->sp_form = form;
    return clrun__gemm_probe_sp(ctx, &clrun__gemm_mma, 0, 0);
}

static int probe(clrun_ctx *ctx, enum clrun__gemm_kind kind)
{
    if (!clrun__gemm_nv_candidate(ctx)) return 0;
    if (kind == CLRUN__GEMM_FLOAT) return probe_f16(ctx);
    if (kind == CLRUN__GEMM_S8) return probe_s8(ctx);
    struct mma_state *s = state(ctx);
    if (!s) return 0;
    /* the ordered-metadata instruction first (ptxas advises it on sm_90), each thread layout */
    static const int forms[] = {3, 4, 1, 2}; /* SPMETA + 2·SPORD */
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++)
        if (probe_sp_form(ctx, s, forms[i])) return 1;
    clrun__fail(ctx, CLRUN_UNSUPPORTED, "gemm sp: no form of the sparse tensor-core kernel computed correctly here");
    return 0;
}

const clrun__gemm_backend clrun__gemm_mma = {
    .id = CLRUN_GEMM_MMA_SYNC,
    .name = "mma.sync",
    .needs = "it needs NVIDIA's OpenCL and a GPU that runs mma.sync",
    .kinds = CLRUN__GEMM_KIND_BIT(CLRUN__GEMM_FLOAT) | CLRUN__GEMM_KIND_BIT(CLRUN__GEMM_S8) | CLRUN__GEMM_KIND_BIT(CLRUN__GEMM_SP),
    .tensor = 1,
    .layout = {[CLRUN__GEMM_FLOAT] = CLRUN__GEMM_ROWS16,
               [CLRUN__GEMM_S8] = CLRUN__GEMM_ROWS16 | CLRUN__GEMM_NT,
               [CLRUN__GEMM_SP] = CLRUN__GEMM_ROWS16},
    .probe = probe,
    .refuses = refuses,
    .launch = launch,
    .tiles = &tiles,
};
