/* portable.c — the backend "gpu-kernel": OpenCL C that any GPU runs, tiles in local memory.
 * Float products on lib/ops/gemm/portable/gemm.cl (register blocks, tiles chosen per shape class), INT8 on
 * lib/ops/gemm/portable/gemm_s8.cl (16×16 tiles, int32 sums), 2:4 sparse on lib/ops/sparse/sparse.cl (one element per work-item). */
#include "../gemm.h"

#include <string.h>

/* Tiles of lib/ops/gemm/portable/gemm.cl: TM TN TK WM WN VEC DB. */
struct gpu_params {
    unsigned tm, tn, tk, wm, wn, vec, db;
};

/* Tiles the kernel and this device accept: divisibility, work-group size, local memory. */
static int params_ok(const clrun_device_info *in, const unsigned v[7])
{
    unsigned tm = v[0], tn = v[1], tk = v[2], wm = v[3], wn = v[4], vec = v[5], db = v[6];
    if (!tm || !tn || !tk || !wm || !wn || tm % wm || tn % wn || vec > 1 || db > 2) return 0;
    size_t pad = vec ? 4 : 1, nbuf = db == 2 ? 2 : 1;
    size_t nt = (size_t)(tm / wm) * (tn / wn), lmem = nbuf * tk * (tm + tn + 2 * pad) * sizeof(float);
    if (nt > in->max_work_group || (in->local_mem && lmem > in->local_mem)) return 0;
    if (vec && (wm % 4 || wn % 4)) return 0;
    if (db && (((size_t)tm * tk) % nt || ((size_t)tk * tn) % nt)) return 0;
    return 1;
}

/* The tiles' parameters by name (gemm.h); VEC and DB, when a positional set leaves them out, are 0. */
static const char *check(const clrun_device_info *in, const clrun__gemm_plan *p, const unsigned *v)
{
    (void)p;
    return params_ok(in, v) ? NULL
                            : "tiles this device cannot run (they must divide as lib/ops/gemm/portable/gemm.cl says and fit its "
                              "work-group and local memory)";
}

/* Tuned per shape class (tuning.c). */
static const char *key(clrun_ctx *ctx, const clrun__gemm_plan *p) { return clrun__gemm_class_name(clrun__gemm_class(ctx, &p->d)); }

/* `clrun tune gemm` measures f32 products of each class: N³ for the large ones, (N/4)³ for the small. */
static const clrun__gemm_tune_point points[] = {
    {"large-fast", CLRUN__GEMM_FLOAT, CLRUN_F32, 0, 1},
    {"small-fast", CLRUN__GEMM_FLOAT, CLRUN_F32, 1, 1},
    {"large", CLRUN__GEMM_FLOAT, CLRUN_F32, 0, 0},
    {"small", CLRUN__GEMM_FLOAT, CLRUN_F32, 1, 0},
};

/* The space: tiles, slice depth, work per item, float4 local reads, double buffering; those the
 * device can run. quick: a handful measured best somewhere. */
static size_t space(const clrun_device_info *in, const clrun__gemm_tune_point *pt, int quick, unsigned (*out)[CLRUN__GEMM_TILE_MAX],
                    size_t max)
{
    static const unsigned tiles[][2] = {{64, 64}, {128, 64}, {64, 128}, {128, 128}, {32, 64}};
    static const unsigned ks[] = {8, 16}, ws[][2] = {{4, 4}, {8, 4}, {4, 8}, {8, 8}};
    static const unsigned q[][7] = {{128, 128, 8, 8, 8, 1, 1}, {64, 128, 8, 8, 8, 1, 1}, {128, 128, 16, 8, 8, 1, 2},
                                    {64, 64, 8, 8, 8, 1, 1},   {64, 64, 16, 4, 4, 1, 1}, {128, 128, 8, 8, 8, 0, 1}};
    size_t nc = 0;
    (void)pt;
    for (size_t i = 0; quick && i < sizeof q / sizeof *q && nc < max; i++)
        if (params_ok(in, q[i])) memcpy(out[nc++], q[i], sizeof q[i]);
    for (size_t t = 0; !quick && t < 5; t++)
        for (size_t k = 0; k < 2; k++)
            for (size_t w = 0; w < 4; w++)
                for (unsigned vec = 0; vec < 2; vec++)
                    for (unsigned db = 0; db < 3 && nc < max; db++) {
                        const unsigned v[7] = {tiles[t][0], tiles[t][1], ks[k], ws[w][0], ws[w][1], vec, db};
                        if ((size_t)(v[0] / v[3]) * (v[1] / v[4]) >= 32 && params_ok(in, v)) memcpy(out[nc++], v, sizeof v);
                    }
    return nc;
}

static const clrun__gemm_tiles tiles = {
    .count = 7,
    .names = {"TM", "TN", "TK", "WM", "WN", "VEC", "DB"},
    .min = 5,
    .key = key,
    .check = check,
    .points = points,
    .npoints = sizeof points / sizeof *points,
    .space = space,
};

/* Measured on the H200 (docs/BENCHMARKS.md), all with 8×8 per work-item as 4×4 quads read from
 * local memory in 16 bytes: on large products 128×128 tiles, in slices of 16 with two local buffers
 * (fast: slices of 8, one buffer); when the product has too few 128-tiles to fill the device,
 * 64×128 tiles (slices of 16; fast: 8). Devices with less local memory or smaller work-groups get
 * 64×64 tiles of 4×4. The tuning file's and $CLRUN_GEMM_TILES's over these (clrun__gemm_tiles_for). */
static clrun_status gpu_params(clrun_ctx *ctx, const clrun__gemm_plan *p, struct gpu_params *g)
{
    static const unsigned builtin[4][7] = {
        {64, 128, 16, 8, 8, 1, 1}, {128, 128, 16, 8, 8, 1, 2}, {64, 128, 8, 8, 8, 1, 1}, {128, 128, 8, 8, 8, 1, 1}};
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const int cls = clrun__gemm_class(ctx, &p->d);
    unsigned v[CLRUN__GEMM_TILE_MAX] = {64, 64, 16, 4, 4, 1, 1};
    if (in->type != CLRUN_DEVICE_CPU && params_ok(in, builtin[cls])) memcpy(v, builtin[cls], sizeof builtin[cls]);
    clrun_status st = clrun__gemm_tiles_for(ctx, &clrun__gemm_portable, p, v, NULL);
    *g = (struct gpu_params){v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
    return st;
}

static clrun_status run_float(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    const clrun_gemm_desc *d = &p->d;
    clrun_status st;
    clrun_kernel *k = NULL;
    char opts[256];
    struct gpu_params g = {0};
    if ((st = gpu_params(ctx, p, &g))) return st;
    /* 16-byte global loads when every run of 4 along a stored row starts on a multiple of 4 */
    int gw4 = g.tk % 4 == 0 && g.tm % 4 == 0 && g.tn % 4 == 0 && d->lda % 4 == 0 && d->ldb % 4 == 0 && d->a_off % 4 == 0 &&
              d->b_off % 4 == 0 && d->stride_a % 4 == 0 && d->stride_b % 4 == 0 && (d->trans_a ? d->m : d->k) % 4 == 0 &&
              (d->trans_b ? d->k : d->n) % 4 == 0;
    snprintf(opts, sizeof opts, "-DTM=%u -DTN=%u -DTK=%u -DWM=%u -DWN=%u -DVEC=%u -DDB=%u -DTA=%d -DTB=%d -DGW=%d -DPSUM=%d -DABT=%d", g.tm,
             g.tn, g.tk, g.wm, g.wn, g.vec, g.db, d->trans_a != 0, d->trans_b != 0, gw4 ? 4 : 1, !d->fast, clrun__float_code(d->type));
    if ((st = clrun__lib_kernel(ctx, "gemm", opts, "clrun_gemm", &k))) return st;
    const size_t lx = g.tn / g.wn, ly = g.tm / g.wm;
    const clrun__grid grid = {3, {(d->n + g.tn - 1) / g.tn * lx, (d->m + g.tm - 1) / g.tm * ly, d->batch}, {lx, ly, 1}};
    return clrun__gemm_launch_shaped(k, grid, d, 1);
}

/* INT8: tiles of C in local memory, exact int32 sums (lib/ops/gemm/portable/gemm_s8.cl). */
static clrun_status run_s8(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    const clrun_gemm_desc *d = &p->d;
    char opts[64];
    snprintf(opts, sizeof opts, "-DTA=%d -DTB=%d -DEPI=%d", d->trans_a != 0, d->trans_b != 0, p->e != NULL);
    clrun_kernel *k;
    clrun_status st;
    if ((st = clrun__lib_kernel(ctx, "gemm_s8", opts, "clrun_gemm_s8", &k))) return st;
    const clrun__grid g = {3, {(d->n + 15) / 16 * 16, (d->m + 15) / 16 * 16, d->batch}, {16, 16, 1}};
    clrun_buf *a = d->a ? d->a : d->c, *b = d->b ? d->b : d->c; /* K = 0: never read */
    const clrun_s8_epilogue *e = p->e;
    return CLRUN__RUN(k, g, ARG_U32(d->m), ARG_U32(d->n), ARG_U32(d->k), ARG_BUF(a), ARG_U64(d->a_off), ARG_U32(d->lda ? d->lda : 1),
                      ARG_U64(d->stride_a), ARG_BUF(b), ARG_U64(d->b_off), ARG_U32(d->ldb ? d->ldb : 1), ARG_U64(d->stride_b),
                      ARG_BUF(d->c), ARG_U64(d->c_off), ARG_U32(d->ldc), ARG_U64(d->stride_c), ARG_BUF(e ? e->row_scale : NULL),
                      ARG_BUF(e ? e->col_scale : NULL), ARG_BUF(e ? e->bias : NULL),
                      ARG_I32((e && e->relu ? 1 : 0) | (d->beta == 1.0f ? 2 : 0)));
}

/* 2:4 sparse A: one element of C per work-item, the kept terms summed in the order of K. */
static clrun_status run_sp(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    const clrun_gemm_desc *d = &p->d;
    clrun_status st;
    clrun_kernel *k;
    char opts[48];
    snprintf(opts, sizeof opts, "-DABT=%d -DTB=%d", clrun__float_code(d->type), d->trans_b != 0);
    if ((st = clrun__lib_kernel(ctx, "sparse", opts, "clrun_gemm_sp", &k))) return st;
    const clrun__grid g = {3, {(d->n + 15) / 16 * 16, (d->m + 15) / 16 * 16, d->batch}, {16, 16, 1}};
    return CLRUN__RUN(k, g, ARG_U32(d->m), ARG_U32(d->n), ARG_U32(d->k), ARG_F32(d->alpha), ARG_F32(d->beta), ARG_BUF(d->a ? d->a : d->c),
                      ARG_U64(d->a_off), ARG_U32(d->lda ? d->lda : 1), ARG_U64(d->stride_a), ARG_BUF(p->meta ? p->meta : d->c),
                      ARG_U64(p->meta_off), ARG_BUF(d->b ? d->b : d->c), ARG_U64(d->b_off), ARG_U32(d->ldb ? d->ldb : 1),
                      ARG_U64(d->stride_b), ARG_BUF(d->c), ARG_U64(d->c_off), ARG_U32(d->ldc), ARG_U64(d->stride_c));
}

static clrun_status launch(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    switch (p->kind) {
    case CLRUN__GEMM_S8: return run_s8(ctx, p);
    case CLRUN__GEMM_SP: return run_sp(ctx, p);
    default: return run_float(ctx, p);
    }
}

const clrun__gemm_backend clrun__gemm_portable = {
    .id = CLRUN_GEMM_GPU_KERNEL,
    .name = "gpu-kernel",
    .needs = "",
    .kinds = CLRUN__GEMM_KIND_BIT(CLRUN__GEMM_FLOAT) | CLRUN__GEMM_KIND_BIT(CLRUN__GEMM_S8) | CLRUN__GEMM_KIND_BIT(CLRUN__GEMM_SP),
    .layout = {[CLRUN__GEMM_FLOAT] = CLRUN__GEMM_SLICE_K},
    .launch = launch,
    .tiles = &tiles,
};
