/* cpu.c — the backend "cpu-kernel" (lib/ops/gemm/cpu/gemm_cpu.cl): no local memory, wide vectors, large register
 * blocks, operands packed into panels in the context's scratch buffer first. Float products, INT8
 * (s8 widened to f32 exactly, summed in exact f32 blocks, added in int32) and 2:4 sparse A (half the
 * FMAs of the dense kernel). */
#include "../gemm.h"

#include <string.h>

static const char vw_key = 0; /* the device's float vector width, asked once per context */

/* Steps of K each work-item of the CPU packing kernels copies (PK in lib/ops/gemm/cpu/gemm_cpu.cl). */
#define CPU_PACK_STEPS 16

static const char *check(const clrun_device_info *in, const clrun__gemm_plan *p, const unsigned *v)
{
    (void)in, (void)p;
    return (v[0] == 4 || v[0] == 8 || v[0] == 16) && v[1] >= 1 && v[1] <= 32 ? NULL
                                                                             : "the vector width VW is 4, 8 or 16 and the rows per "
                                                                               "work-item RM 1 to 32";
}

/* Tuned per kind: f32, f16 (and bf16), s8, sp (2:4). */
static const char *key(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    (void)ctx;
    return p->kind == CLRUN__GEMM_SP ? "sp" : p->kind == CLRUN__GEMM_S8 ? "s8" : p->d.type == CLRUN_F32 ? "f32" : "f16";
}

static const clrun__gemm_tune_point points[] = {{"f32", CLRUN__GEMM_FLOAT, CLRUN_F32, 0, 0}, {"f16", CLRUN__GEMM_FLOAT, CLRUN_F16, 0, 0}};

/* The device's width with 4 to 14 rows, then the other widths with 6; quick: the first three. */
static size_t space(const clrun_device_info *in, const clrun__gemm_tune_point *pt, int quick, unsigned (*out)[CLRUN__GEMM_TILE_MAX],
                    size_t max)
{
    static const unsigned c[][2] = {{16, 6}, {8, 6}, {16, 4}, {16, 8}, {8, 4}, {8, 8}, {16, 14}, {4, 6}, {4, 12}};
    size_t nc = 0;
    (void)in, (void)pt;
    for (size_t i = 0; i < (quick ? 3u : sizeof c / sizeof *c) && nc < max; i++) memcpy(out[nc++], c[i], sizeof c[i]);
    return nc;
}

static const clrun__gemm_tiles tiles = {
    .count = 2,
    .names = {"VW", "RM"},
    .min = 2,
    .key = key,
    .check = check,
    .points = points,
    .npoints = sizeof points / sizeof *points,
    .space = space,
};

/* The CPU kernel's vector width (the device's native float width: 16 with AVX-512, 8 with AVX2)
 * and rows per work-item: 6, measured fastest on AVX-512 among 4, 6, 8 and 14 (docs/BENCHMARKS.md)
 * and the most that fit AVX2's 16 registers. The tuning file's and $CLRUN_GEMM_TILES's
 * ("cpu-kernel:VW,RM") over them. */
static clrun_status cpu_params(clrun_ctx *ctx, const clrun__gemm_plan *p, unsigned *vw, unsigned *rm)
{
    unsigned *width = clrun__op_state(ctx, &vw_key, sizeof *width, NULL);
    if (!width) return CLRUN_HOST_OUT_OF_MEMORY;
    if (!*width) {
        cl_uint w = 0;
        clGetDeviceInfo(clrun_ctx_cl_device(ctx), CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, sizeof w, &w, NULL);
        *width = w >= 16 ? 16 : w >= 8 ? 8 : 4;
    }
    unsigned v[CLRUN__GEMM_TILE_MAX] = {*width, 6};
    clrun_status st = clrun__gemm_tiles_for(ctx, &clrun__gemm_cpu, p, v, NULL);
    *vw = v[0], *rm = v[1];
    return st;
}

/* The CPU kernel: pack op(B) into panels in the context's scratch buffer (widening f16/bf16 to f32);
 * for f16/bf16 pack op(A) there too, in panels of RM rows, then multiply in f32. INT8 (d->type
 * CLRUN_I8, from clrun_gemm_s8) runs the same way: s8 is widened to f32 exactly, the multiply sums
 * blocks of K in f32 exactly and adds them in int32, and e (or NULL) is C's epilogue. */
static clrun_status run_dense(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    const clrun_gemm_desc *d = &p->d;
    const clrun_s8_epilogue *e = p->e;
    const size_t batch = d->batch;
    clrun_status st;
    unsigned vw, rm;
    if ((st = cpu_params(ctx, p, &vw, &rm))) return st;
    clrun_kernel *pack = NULL, *packa = NULL, *k = NULL;
    char opts[112], mopts[128];
    const size_t nr = 2 * (size_t)vw, panels = (d->n + nr - 1) / nr, apanels = (d->m + rm - 1) / rm;
    /* A packed too for f16/bf16 (it needs a pass to be widened anyway); for f32 packing A measured no
     * faster on AVX-512 (within this machine's noise), so f32 reads A in place */
    /* INT8 packs op(A) as f32 too when the product is large enough for the extra pass to pay (the
     * multiply then broadcasts floats instead of converting bytes: 5-10% at 1024³; at 256³ the
     * pass costs more than it saves) */
    const int s8 = d->type == CLRUN_I8, code = s8 ? 3 : clrun__float_code(d->type);
    const int pa = d->k && d->type != CLRUN_F32 && (!s8 || (double)d->m * d->n * d->k >= 0x1p27);
    size_t stride_p = 0, bytes = 0, stride_pa = 0, abytes = 0;
    if (d->k &&
        (__builtin_mul_overflow(panels * nr, d->k, &stride_p) || __builtin_mul_overflow(stride_p, batch * sizeof(float), &bytes) ||
         (pa && (__builtin_mul_overflow(apanels * rm, d->k, &stride_pa) ||
                 __builtin_mul_overflow(stride_pa, batch * sizeof(float), &abytes) || __builtin_add_overflow(bytes, abytes, &abytes)))))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm: the packed panels of %zu×%zu×%zu in %zu batches overflow the address space", d->m,
                           d->n, d->k, batch);
    snprintf(opts, sizeof opts, "-DVW=%u -DRM=%u -DTA=%d -DTB=%d -DPSUM=%d -DABT=%d", vw, rm, d->trans_a != 0, d->trans_b != 0, !d->fast,
             code);
    snprintf(mopts, sizeof mopts, "-DVW=%u -DRM=%u -DTA=%d -DTB=%d -DPSUM=%d -DABT=%d -DPA=%d -DS8=%d -DEPI=%d", vw, rm, d->trans_a != 0,
             d->trans_b != 0, !d->fast, pa ? 0 : code, pa, s8, e != NULL);
    if ((st = clrun__lib_kernel(ctx, "gemm_cpu", mopts, "clrun_gemm_cpu", &k))) return st;
    clrun_buf *packed = d->c, *a = d->a ? d->a : d->c; /* K = 0: nothing is packed or read */
    size_t a_off = d->a_off, lda = d->lda ? d->lda : 1, stride_a = d->stride_a;
    if (d->k) {
        const clrun__grid gb = {3, {(d->k + CPU_PACK_STEPS - 1) / CPU_PACK_STEPS, panels, batch}, {0}};
        if ((st = clrun__lib_kernel(ctx, "gemm_cpu", opts, "clrun_gemm_pack_b", &pack)) ||
            (st = clrun__scratch(ctx, pa ? abytes : bytes, &packed)) ||
            (st = CLRUN__RUN(pack, gb, ARG_U32(d->n), ARG_U32(d->k), ARG_BUF(d->b), ARG_U64(d->b_off), ARG_U32(d->ldb),
                             ARG_U64(d->stride_b), ARG_BUF(packed), ARG_U64(stride_p))))
            return st;
        if (pa) { /* op(A) in panels of RM rows after B's panels */
            const clrun__grid ga = {3, {(d->k + CPU_PACK_STEPS - 1) / CPU_PACK_STEPS, apanels, batch}, {0}};
            a = packed, a_off = bytes / sizeof(float), stride_a = stride_pa;
            if ((st = clrun__lib_kernel(ctx, "gemm_cpu", opts, "clrun_gemm_pack_a", &packa)) ||
                (st = CLRUN__RUN(packa, ga, ARG_U32(d->m), ARG_U32(d->k), ARG_BUF(d->a), ARG_U64(d->a_off), ARG_U32(d->lda),
                                 ARG_U64(d->stride_a), ARG_BUF(packed), ARG_U64(a_off), ARG_U64(stride_a))))
                return st;
        }
    }
    const clrun__grid grid = {3, {((d->m + rm - 1) / rm + 7) / 8 * 8, panels, batch}, {8, 1, 1}};
    if (s8)
        return CLRUN__RUN(k, grid, ARG_U32(d->m), ARG_U32(d->n), ARG_U32(d->k), ARG_F32(d->alpha), ARG_F32(d->beta), ARG_BUF(a),
                          ARG_U64(a_off), ARG_U32(lda), ARG_U64(stride_a), ARG_BUF(packed), ARG_U64(stride_p), ARG_BUF(d->c),
                          ARG_U64(d->c_off), ARG_U32(d->ldc), ARG_U64(d->stride_c), ARG_BUF(e ? e->row_scale : NULL),
                          ARG_BUF(e ? e->col_scale : NULL), ARG_BUF(e ? e->bias : NULL),
                          ARG_I32((e && e->relu ? 1 : 0) | (d->beta == 1.0f ? 2 : 0)));
    return CLRUN__RUN(k, grid, ARG_U32(d->m), ARG_U32(d->n), ARG_U32(d->k), ARG_F32(d->alpha), ARG_F32(d->beta), ARG_BUF(a), ARG_U64(a_off),
                      ARG_U32(lda), ARG_U64(stride_a), ARG_BUF(packed), ARG_U64(stride_p), ARG_BUF(d->c), ARG_U64(d->c_off),
                      ARG_U32(d->ldc), ARG_U64(d->stride_c));
}

/* The sparse CPU kernel (lib/ops/gemm/cpu/gemm_cpu.cl, SP): B packed as for the dense kernel, A's values (as f32)
 * and metadata packed in panels of RM rows after it, then the multiply. */
static clrun_status run_sp(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    const clrun_gemm_desc *d = &p->d;
    clrun_buf *meta = p->meta;
    const size_t meta_off = p->meta_off;
    clrun_status st;
    unsigned vw, rm;
    if ((st = cpu_params(ctx, p, &vw, &rm))) return st;
    const size_t batch = d->batch, nr = 2 * (size_t)vw, panels = (d->n + nr - 1) / nr, apanels = (d->m + rm - 1) / rm;
    const size_t G = (d->k + 3) / 4, km = (d->k + 31) / 32;
    size_t stride_p = 0, bytes = 0, stride_pa = 0, abytes = 0, stride_m = 0, mbytes = 0, total = 0;
    if (__builtin_mul_overflow(panels * nr, d->k, &stride_p) || __builtin_mul_overflow(stride_p, batch * sizeof(float), &bytes) ||
        __builtin_mul_overflow(apanels * rm * 2, G, &stride_pa) || __builtin_mul_overflow(stride_pa, batch * sizeof(float), &abytes) ||
        __builtin_mul_overflow(apanels * rm, km, &stride_m) || __builtin_mul_overflow(stride_m, batch * 4, &mbytes) ||
        __builtin_add_overflow(bytes, abytes, &total) || __builtin_add_overflow(total, mbytes, &total))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm sp: the packed panels of %zu×%zu×%zu in %zu batches overflow the address space",
                           d->m, d->n, d->k, batch);
    char opts[112];
    snprintf(opts, sizeof opts, "-DVW=%u -DRM=%u -DTA=0 -DTB=%d -DPSUM=0 -DABT=%d -DSP=1", vw, rm, d->trans_b != 0,
             clrun__float_code(d->type));
    clrun_kernel *pack = NULL, *packa = NULL, *k = NULL;
    clrun_buf *s = NULL;
    if (!d->k) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm sp: K = 0 reaches the CPU kernel (the front end runs it elsewhere)");
    if ((st = clrun__lib_kernel(ctx, "gemm_cpu", opts, "clrun_gemm_sp_cpu", &k)) ||
        (st = clrun__lib_kernel(ctx, "gemm_cpu", opts, "clrun_gemm_pack_b", &pack)) ||
        (st = clrun__lib_kernel(ctx, "gemm_cpu", opts, "clrun_gemm_sp_pack_a", &packa)) || (st = clrun__scratch(ctx, total, &s)))
        return st;
    /* the scratch buffer: B's panels, then A's values, then A's metadata (4-byte elements) */
    const size_t ap = bytes / 4, mp = (bytes + abytes) / 4;
    if ((st = CLRUN__RUN(pack, ((clrun__grid){3, {(d->k + CPU_PACK_STEPS - 1) / CPU_PACK_STEPS, panels, batch}, {0}}), ARG_U32(d->n),
                         ARG_U32(d->k), ARG_BUF(d->b), ARG_U64(d->b_off), ARG_U32(d->ldb), ARG_U64(d->stride_b), ARG_BUF(s),
                         ARG_U64(stride_p))) ||
        (st = CLRUN__RUN(packa, ((clrun__grid){3, {G, apanels, batch}, {0}}), ARG_U32(d->m), ARG_U32(d->k), ARG_BUF(d->a),
                         ARG_U64(d->a_off), ARG_U32(d->lda), ARG_U64(d->stride_a), ARG_BUF(meta), ARG_U64(meta_off), ARG_BUF(s),
                         ARG_U64(ap), ARG_U64(stride_pa), ARG_BUF(s), ARG_U64(mp), ARG_U64(stride_m))))
        return st;
    return CLRUN__RUN(k, ((clrun__grid){3, {(apanels + 7) / 8 * 8, panels, batch}, {8, 1, 1}}), ARG_U32(d->m), ARG_U32(d->n), ARG_U32(d->k),
                      ARG_F32(d->alpha), ARG_F32(d->beta), ARG_BUF(s), ARG_U64(ap), ARG_U64(stride_pa), ARG_BUF(s), ARG_U64(mp),
                      ARG_U64(stride_m), ARG_BUF(s), ARG_U64(stride_p), ARG_BUF(d->c), ARG_U64(d->c_off), ARG_U32(d->ldc),
                      ARG_U64(d->stride_c));
}

static clrun_status launch(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    switch (p->kind) {
    case CLRUN__GEMM_S8: return run_dense(ctx, p);
    case CLRUN__GEMM_SP: return run_sp(ctx, p);
    default: return run_dense(ctx, p);
    }
}

const clrun__gemm_backend clrun__gemm_cpu = {
    .id = CLRUN_GEMM_CPU_KERNEL,
    .name = "cpu-kernel",
    .needs = "",
    .kinds = CLRUN__GEMM_KIND_BIT(CLRUN__GEMM_FLOAT) | CLRUN__GEMM_KIND_BIT(CLRUN__GEMM_S8) | CLRUN__GEMM_KIND_BIT(CLRUN__GEMM_SP),
    .layout = {[CLRUN__GEMM_FLOAT] = CLRUN__GEMM_SLICE_K},
    .launch = launch,
    .tiles = &tiles,
};
