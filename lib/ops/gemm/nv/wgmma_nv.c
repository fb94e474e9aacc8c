/* wgmma_nv.c — the backend "wgmma": Hopper's asynchronous warpgroup MMA (lib/ops/gemm/nv/gemm_wgmma_nv.cl). NVIDIA's
 * OpenCL compiles for sm_90, where wgmma does not assemble; the kernel is built with
 * -clrun-ptx-rewrite (lib/program.c), which retargets the compiled PTX to sm_90a and loads it as a
 * program binary. f16/bf16 with f32 sums in all four layouts; s8 with int32 sums and the fused
 * epilogue (A M×K, B N×K); 2:4 sparse f16/bf16 (wgmma.mma_async.sp, A compressed M×K, B either way).
 * Rows on 16 bytes. Large f16/bf16 products load through the TMA unit where tensor maps can be made
 * (tmap_nv.c: the CUDA driver, loaded on first use) and the TMA kernel's probe passed; s8 products
 * and smaller ones with cp.async, unless tuned tiles say WS 1; the 2:4 kernel through TMA only (where
 * there is none, 2:4 products run on mma.sync's mma.sp). */
#include "nv.h"

#include <stdlib.h>
#include <string.h>

/* Tiles of the wgmma kernel (lib/ops/gemm/nv/gemm_wgmma_nv.cl): BM BN WG WN STAGES WAIT KB WS. The built-in ones
 * measured best on the H200 (docs/BENCHMARKS.md); the tuning file's (`clrun tune gemm`) over them,
 * $CLRUN_GEMM_TILES's ("wgmma:...") over both. */
struct wg_params {
    unsigned bm, bn, wg, wn, stages, wait, kb, ws;
};

/* The dynamic shared memory a block launched through the CUDA driver may take on Hopper (227 KiB),
 * less the 1 KiB the kernel rounds its start up by. */
#define CUDA_SMEM (227u * 1024 - 1024)

/* cuda: tiles for a launch through the CUDA driver (TMA loads, up to CUDA_SMEM of stages) */
static int wg_ok(const clrun_device_info *in, const struct wg_params *p, int sp, int cuda)
{
    if (!p->wg || p->bm % (64 * p->wg) || (p->wn != 64 && p->wn != 128 && p->wn != 256) || !p->bn || p->bn % p->wn || p->stages < 2 ||
        p->stages > (cuda ? 16u : 8u) || p->wait > 1 || p->stages < 2 + p->wait || (p->kb != 64 && p->kb != 32) || p->ws > 2 ||
        (cuda && p->ws != 1))
        return 0;
    /* warp-specialised: a producer warpgroup more, and two 8-byte mbarriers per stage */
    const size_t threads = (size_t)(p->wg + (p->ws != 0)) * 128,
                 lmem = (size_t)p->stages * ((p->bm / (1 + (sp != 0)) + p->bn) * p->kb + 16 * (p->ws != 0));
    if (sp && (p->kb != 64 || p->ws != 1)) return 0; /* the 2:4 kernel: slices of 32 of K, loaded by TMA */
    if (cuda) return threads <= 1024 && lmem <= CUDA_SMEM;
    return threads <= in->max_work_group && (!in->local_mem || lmem <= in->local_mem);
}

/* Per context: whether f16/bf16 products (tma[0]) and s8 ones (tma[1]) load through TMA (1), not (-1),
 * or not yet probed (0); the 2:4 kernel's metadata form (SPMETA), found by its probe. */
struct wg_state {
    int tma[2];
    int probing; /* a TMA probe runs: its small products take the TMA tiles */
    int sp_form;
    int cuda[3];      /* per kind (f16/bf16, s8, 2:4): launches through the CUDA driver probed and right (1), wrong (-1), not yet (0) */
    int cuda_probing; /* such a probe runs: its product is launched through the driver */
};
static const char wg_key = 0;

static struct wg_state *state(clrun_ctx *ctx) { return clrun__op_state(ctx, &wg_key, sizeof(struct wg_state), NULL); }

/* The TMA kernel's built-in tiles: a producer thread, two consumer warpgroups of 64 rows × 256, 32-byte
 * slices in 3 stages, each slice's products done before the next (the fastest of nine sets at 8192³ on
 * the H200, docs/BENCHMARKS.md). */
static const struct wg_params tma_tiles = {128, 256, 2, 256, 3, 0, 32, 1};
/* s8 products keep the cp.async tiles: on the H200 every TMA tile set of eleven ran slower at 8192³
 * (707–716 TOPS at best, against 830; docs/BENCHMARKS.md). The TMA tiles run only the s8 TMA probe,
 * and tiles from the tuning file or the environment with WS 1 load s8 through TMA. */
/* The 2:4 kernel's (TMA only, 64-byte slices of B): three consumer warpgroups of 64 rows × 128 in three
 * stages for products of 2^39 flops and more, two of 64 × 256 in two stages below (the fastest of
 * eleven sets at 8192³ and 4096³ on the H200). */
static const struct wg_params sp_tiles_large = {192, 128, 3, 128, 3, 0, 64, 1}, sp_tiles = {128, 256, 2, 256, 2, 0, 64, 1};
/* Launched through the CUDA driver (227 KiB of shared memory): the same tile shapes with deeper
 * pipelines of 64-byte slices (docs/BENCHMARKS.md); $CLRUN_WGMMA_CUDA_TILES over them. */
static const struct wg_params cuda_tiles[3] = {
    {128, 256, 2, 256, 8, 0, 64, 1}, {128, 256, 2, 256, 8, 0, 64, 1}, {128, 256, 2, 256, 6, 0, 64, 1}};

static const char *check(const clrun_device_info *in, const clrun__gemm_plan *p, const unsigned *v)
{
    const struct wg_params e = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
    return wg_ok(in, &e, p->kind == CLRUN__GEMM_SP, 0)
               ? NULL
               : "tiles this device cannot run (see lib/ops/gemm/nv/gemm_wgmma_nv.cl: BM a multiple of 64·WG, WN 64, 128 or 256 "
                 "dividing BN, WAIT 0 or 1, STAGES ≥ 2 + WAIT, KB 64 or 32, WS 0, 1 or 2, STAGES·((BM+BN)·KB + 16·(WS > 0)) bytes of "
                 "local memory, A's half of it for 2:4 products, which take KB 64 and WS 1)";
}

static int large(const clrun_gemm_desc *d) { return 2.0 * (double)d->m * (double)d->n * (double)d->k * (double)d->batch >= 0x1p39; }

/* Tuned per kind (f16 for f16 and bf16, s8, sp for 2:4) and band: "-large" from 2^39 flops. */
static const char *key(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    static const char *const keys[3][2] = {{"f16", "f16-large"}, {"s8", "s8-large"}, {"sp", "sp-large"}};
    (void)ctx;
    return keys[p->kind == CLRUN__GEMM_SP ? 2 : p->kind == CLRUN__GEMM_S8][large(&p->d)];
}

/* Each kind at the large size (at most 4096³, under 2^39 flops) and at 8192³ (from 2^39 flops, where
 * the built-in tiles change). */
static const clrun__gemm_tune_point points[] = {
    {"f16", CLRUN__GEMM_FLOAT, CLRUN_F16, 2, 0},  {"s8", CLRUN__GEMM_S8, CLRUN_I8, 2, 0},
    {"sp", CLRUN__GEMM_SP, CLRUN_F16, 2, 0},      {"f16-large", CLRUN__GEMM_FLOAT, CLRUN_F16, 3, 0},
    {"s8-large", CLRUN__GEMM_S8, CLRUN_I8, 3, 0}, {"sp-large", CLRUN__GEMM_SP, CLRUN_F16, 3, 0},
};

/* The shapes measured on the H200 (docs/BENCHMARKS.md) per kind, the built-in default first; quick:
 * the first three. */
static size_t space(const clrun_device_info *in, const clrun__gemm_tune_point *pt, int quick, unsigned (*out)[CLRUN__GEMM_TILE_MAX],
                    size_t max)
{
    static const unsigned c[3][9][8] = {
        {{128, 128, 1, 128, 3, 0, 64, 0},
         {128, 128, 2, 128, 3, 0, 64, 0},
         {128, 256, 2, 256, 3, 0, 32, 1},
         {64, 128, 1, 128, 4, 0, 64, 0},
         {128, 128, 2, 64, 3, 0, 64, 0},
         {64, 256, 1, 256, 2, 0, 64, 0},
         {128, 128, 1, 128, 6, 0, 32, 0},
         {128, 256, 2, 256, 3, 1, 32, 1},
         {64, 128, 1, 128, 6, 1, 32, 1}},
        {{128, 128, 1, 128, 3, 0, 64, 0},
         {128, 128, 2, 128, 3, 0, 64, 0},
         {128, 256, 2, 128, 3, 0, 32, 1},
         {64, 128, 1, 128, 4, 0, 64, 0},
         {128, 256, 2, 256, 3, 0, 32, 1},
         {256, 128, 2, 128, 3, 0, 32, 1}},
        {{192, 128, 3, 128, 3, 0, 64, 1},
         {128, 256, 2, 256, 2, 0, 64, 1},
         {128, 256, 2, 128, 2, 0, 64, 1},
         {192, 192, 3, 64, 2, 0, 64, 1},
         {256, 128, 4, 128, 2, 0, 64, 1},
         {128, 128, 2, 128, 3, 0, 64, 1}},
    };
    const int kind = pt->kind == CLRUN__GEMM_SP ? 2 : pt->kind == CLRUN__GEMM_S8;
    size_t nc = 0;
    for (size_t i = 0; i < (quick ? 3u : kind == 0 ? 9u : 6u) && nc < max; i++) {
        const unsigned *v = c[kind][i];
        const struct wg_params e = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
        if (wg_ok(in, &e, kind == 2, 0)) memcpy(out[nc++], v, sizeof c[kind][i]);
    }
    return nc;
}

static const clrun__gemm_tiles tiles = {
    .count = 8,
    .names = {"BM", "BN", "WG", "WN", "STAGES", "WAIT", "KB", "WS"},
    .min = 6,
    .tail = {[6] = 64, [7] = 0},
    .key = key,
    .check = check,
    .points = points,
    .npoints = sizeof points / sizeof *points,
    .space = space,
};

/* The tiles of plan pl: built-in by band (big, of 2^39 flops or more) and loads (tma, whether it may
 * load through TMA), then the tuning file's and $CLRUN_GEMM_TILES's (clrun__gemm_tiles_for). A TMA
 * probe runs the built-in TMA tiles. */
static clrun_status wg_params(clrun_ctx *ctx, const clrun__gemm_plan *pl, int big, int tma, struct wg_params *p)
{
    const int s8 = pl->kind == CLRUN__GEMM_S8, sp = pl->kind == CLRUN__GEMM_SP;
    const struct wg_state *ws = state(ctx);
    const int probing = ws && ws->probing;
    *p = sp                                 ? (big ? sp_tiles_large : sp_tiles)
         : tma && (probing || (big && !s8)) ? tma_tiles
                                            : (struct wg_params){128, 128, 1, 128, 3, 0, 64, 0};
    if (probing) return CLRUN_OK;
    unsigned v[CLRUN__GEMM_TILE_MAX] = {p->bm, p->bn, p->wg, p->wn, p->stages, p->wait, p->kb, p->ws};
    clrun_status st = clrun__gemm_tiles_for(ctx, &clrun__gemm_wgmma, pl, v, NULL);
    *p = (struct wg_params){v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
    return st;
}

/* The tensor map of one operand: K-major (stored rows × K) in boxes of BK × `box` rows with the
 * slice's swizzle, or MN-major (stored K × rows) in boxes of 64 × BK with the 128-byte one. Rank 3:
 * the batch is the outer dimension. */
static clrun_status operand_map(clrun_ctx *ctx, clrun_buf *b, size_t off, size_t ld, size_t stride, size_t batch, size_t rows, size_t k,
                                int mn, unsigned box, size_t es, unsigned kb, int cuda, clrun_buf **slots, size_t *index)
{
    const unsigned bk = kb / (unsigned)es;
    const uint64_t dims[3] = {mn ? rows : k, mn ? k : rows, batch};
    const uint64_t inner = (uint64_t)(mn ? k : rows) * ld * es;
    const uint64_t strides[2] = {(uint64_t)ld * es, batch > 1 ? (uint64_t)stride * es : (inner + 15) / 16 * 16};
    const uint32_t boxd[3] = {mn ? 64 : bk, mn ? bk : box, 1};
    return clrun__tmap(ctx, b, off * es, es == 1 ? 0 /* CU_TENSOR_MAP_DATA_TYPE_UINT8 */ : 1 /* UINT16 */, 3, dims, strides, boxd,
                       mn         ? 3
                       : kb == 64 ? 2
                                  : 1,
                       cuda, slots, index);
}

static int probe_kind(clrun_ctx *ctx, int kind, int cuda);

/* Whether plan pl, loading through TMA, runs through the CUDA driver (lib/cuda.c): every buffer it
 * names shared with CUDA ($CLRUN_CUDA=1), and the kind's probe launched that way right (run
 * on the first such product). */
static int via_cuda(clrun_ctx *ctx, struct wg_state *ws, const clrun__gemm_plan *pl)
{
    const clrun_gemm_desc *d = &pl->d;
    const clrun_s8_epilogue *e = pl->e;
    const int kind = pl->kind == CLRUN__GEMM_SP ? 2 : pl->kind == CLRUN__GEMM_S8;
    if (!clrun__buf_cuaddr(d->a) || !clrun__buf_cuaddr(d->b) || !clrun__buf_cuaddr(d->c) || (kind == 2 && !clrun__buf_cuaddr(pl->meta)) ||
        (e && ((e->row_scale && !clrun__buf_cuaddr(e->row_scale)) || (e->col_scale && !clrun__buf_cuaddr(e->col_scale)) ||
               (e->bias && !clrun__buf_cuaddr(e->bias)))))
        return 0;
    if (ws->cuda_probing) return 1;
    if (!ws->cuda[kind]) {
        ws->cuda[kind] = -1;
        if (clrun__cu_launchable(ctx)) {
            ws->cuda_probing = 1;
            const int ok = kind == 2
                               ? clrun__gemm_probe_sp(ctx, &clrun__gemm_wgmma, 0, 1) && clrun__gemm_probe_sp(ctx, &clrun__gemm_wgmma, 1, 1)
                               : probe_kind(ctx, kind, 1);
            ws->cuda_probing = 0;
            ws->cuda[kind] = ok ? 1 : -1;
            if (clrun__setting_on(CLRUN__SET_VERBOSE))
                fprintf(stderr, "clrun: %s products on shared buffers %s\n",
                        kind == 2 ? "2:4"
                        : kind    ? "s8"
                                  : "f16/bf16",
                        ok ? "launch through the CUDA driver" : "stay on OpenCL: the probe launched through the CUDA driver failed");
        }
    }
    return ws->cuda[kind] == 1;
}

/* The tiles of a launch through the CUDA driver: built-in per kind, $CLRUN_WGMMA_CUDA_TILES over them. */
static clrun_status cuda_params(clrun_ctx *ctx, const clrun__gemm_plan *pl, struct wg_params *p)
{
    const int kind = pl->kind == CLRUN__GEMM_SP ? 2 : pl->kind == CLRUN__GEMM_S8;
    unsigned v[8], n = 0;
    *p = cuda_tiles[kind];
    clrun_status st = clrun__setting_uints(ctx, CLRUN__SET_WGMMA_CUDA_TILES, v, &n);
    if (st || n != 8) return st;
    const struct wg_params e = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
    if (!wg_ok(clrun_ctx_device(ctx), &e, kind == 2, 1))
        return clrun__setting_refuse(ctx, CLRUN__SET_WGMMA_CUDA_TILES,
                                     "tiles the kernel cannot run through the CUDA driver (WS 1; KB 64 or 32, 64 for 2:4; BM a multiple "
                                     "of 64·WG; WN 64, 128 or 256 dividing BN; 2 + WAIT ≤ STAGES ≤ 16; STAGES·((BM+BN)·KB) ≤ 226 KiB, "
                                     "A's half for 2:4)");
    *p = e;
    return CLRUN_OK;
}

/* The wgmma kernel on a plan in its layout: f16/bf16, s8 (A M×K, B N×K) with its epilogue, or 2:4
 * f16/bf16 (A's values M×kv with its metadata). Through the CUDA driver where via_cuda says so. */
static clrun_status launch(clrun_ctx *ctx, const clrun__gemm_plan *pl)
{
    const clrun_gemm_desc *d = &pl->d;
    const int s8 = pl->kind == CLRUN__GEMM_S8, sp = pl->kind == CLRUN__GEMM_SP;
    struct wg_state *ws = state(ctx);
    clrun_status st;
    clrun_kernel *k = NULL;
    struct wg_params p;
    char opts[260];
    if (!ws) return CLRUN_HOST_OUT_OF_MEMORY;
    if (sp && !ws->sp_form) return clrun__fail(ctx, CLRUN_UNSUPPORTED, "gemm sp: the 2:4 wgmma kernel was not probed on this context");
    /* The TMA tiles are the built-in ones for products of 2^39 flops and more: at 8192³ they ran 3%
     * faster than the cp.async tiles, at 4096³ 2% slower, on skinny shapes up to 23% slower
     * (docs/BENCHMARKS.md). Tiles from the tuning file or $CLRUN_GEMM_TILES with WS 1 load
     * through TMA at any size. The 2:4 kernel loads through TMA only. */
    int tma = (sp || ws->tma[s8] == 1) && d->a && d->b && d->k; /* (a product of K 0 reads no operand) */
    int cuda = tma && via_cuda(ctx, ws, pl);
    if ((st = cuda ? cuda_params(ctx, pl, &p) : wg_params(ctx, pl, large(d), tma, &p))) return st;
    tma = tma && p.ws == 1;
    const size_t es = s8 ? 1 : 2;
    clrun_buf *maps = NULL;
    size_t ia = 0, ib = 0;
    if (tma) { /* both maps in the one slot buffer; a map the driver refuses sends this product to cp.async */
        clrun_buf *ma = NULL, *mb = NULL;
        tma = operand_map(ctx, d->a, d->a_off, d->lda, d->stride_a, d->batch, d->m, sp ? clrun_sp24_kv(d->k) : d->k, d->trans_a != 0, p.bm,
                          es, sp ? p.kb / 2 : p.kb, cuda, &ma, &ia) == CLRUN_OK &&
              operand_map(ctx, d->b, d->b_off, d->ldb, d->stride_b, d->batch, d->n, d->k, d->trans_b == 0, p.bn, es, p.kb, cuda, &mb,
                          &ib) == CLRUN_OK &&
              ma == mb;
        maps = ma;
        if (!tma && sp && !cuda)
            return clrun__fail(ctx, CLRUN_UNSUPPORTED, "gemm sp: no tensor map for this product: %s", clrun_last_error(ctx));
        if (!tma && clrun__setting_on(CLRUN__SET_VERBOSE))
            fprintf(stderr, "clrun: this product loads with cp.async, not TMA: %s\n", clrun_last_error(ctx));
        if (!tma && cuda) { /* back on OpenCL's kernel */
            if (ws->cuda_probing) return clrun__fail(ctx, CLRUN_UNSUPPORTED, "gemm: no tensor map for a launch through the CUDA driver");
            cuda = 0;
            tma = sp || ws->tma[s8] == 1;
            if ((st = wg_params(ctx, pl, large(d), tma, &p))) return st;
            tma = tma && p.ws == 1 &&
                  operand_map(ctx, d->a, d->a_off, d->lda, d->stride_a, d->batch, d->m, sp ? clrun_sp24_kv(d->k) : d->k, d->trans_a != 0,
                              p.bm, es, sp ? p.kb / 2 : p.kb, 0, &ma, &ia) == CLRUN_OK &&
                  operand_map(ctx, d->b, d->b_off, d->ldb, d->stride_b, d->batch, d->n, d->k, d->trans_b == 0, p.bn, es, p.kb, 0, &mb,
                              &ib) == CLRUN_OK &&
                  ma == mb;
            maps = ma;
        }
        if (!tma && !cuda && (st = wg_params(ctx, pl, 0, 0, &p))) return st;
    }
    if (sp && !tma) return clrun__fail(ctx, CLRUN_UNSUPPORTED, "gemm sp: the 2:4 wgmma kernel loads through TMA only");
    snprintf(opts, sizeof opts,
             "-clrun-ptx-rewrite -DABT=%d -DBM=%u -DBN=%u -DWG=%u -DWN=%u -DSTAGES=%u -DWAIT=%u -DKB=%u -DWS=%u -DTA=%d -DTB=%d -DC2=%d "
             "-DEPI=%d -DTMA=%d -DSP=%d -DSPMETA=%d -DCUDA_LAUNCH=%d",
             s8 ? 3 : clrun__float_code(d->type), p.bm, p.bn, p.wg, p.wn, p.stages, p.wait, p.kb, p.ws, d->trans_a != 0, d->trans_b != 0,
             clrun__gemm_c2(d), pl->e != NULL, tma, sp, sp ? ws->sp_form : 1, cuda);
    if ((st = clrun__lib_kernel(ctx, "gemm_wgmma_nv", opts, "clrun_gemm_wgmma", &k))) return st;
    const size_t threads = (size_t)(p.wg + (p.ws != 0)) * 128, tiles = ((d->m + p.bm - 1) / p.bm) * ((d->n + p.bn - 1) / p.bn);
    const clrun__grid g = {2, {tiles * threads, d->batch, 1}, {threads, 1, 1}};
    /* the kernel's stages and the 1 KiB its start is rounded up by */
    const size_t dyn = (size_t)p.stages * ((sp ? p.bm / 2 : p.bm) + p.bn) * p.kb + 1024;
#define GO(...) (cuda ? CLRUN__RUN_CUDA(k, g, dyn, __VA_ARGS__) : CLRUN__RUN(k, g, __VA_ARGS__))
    if (s8 && !tma) return clrun__gemm_launch_s8(k, g, d, 16, pl->e);
    if (!tma) return clrun__gemm_launch_shaped(k, g, d, 8);
    if (s8) {
        const clrun_s8_epilogue *e = pl->e;
        return GO(ARG_U32(d->m), ARG_U32(d->n), ARG_U32(d->k), ARG_F32(1.0f), ARG_F32(0.0f), ARG_BUF(d->a), ARG_U64(d->a_off),
                  ARG_U32(d->lda), ARG_U64(d->stride_a), ARG_BUF(d->b), ARG_U64(d->b_off), ARG_U32(d->ldb), ARG_U64(d->stride_b),
                  ARG_BUF(d->c), ARG_U64(d->c_off), ARG_U32(d->ldc), ARG_U64(d->stride_c), ARG_BUF(e ? e->row_scale : NULL),
                  ARG_BUF(e ? e->col_scale : NULL), ARG_BUF(e ? e->bias : NULL),
                  ARG_I32((e && e->relu ? 1 : 0) | (d->beta == 1.0f ? 2 : 0)), ARG_BUF(maps), ARG_U64(ia), ARG_U64(ib));
    }
    if (sp)
        return GO(ARG_U32(d->m), ARG_U32(d->n), ARG_U32(d->k), ARG_F32(d->alpha), ARG_F32(d->beta), ARG_BUF(d->a), ARG_U64(d->a_off),
                  ARG_U32(d->lda), ARG_U64(d->stride_a), ARG_BUF(pl->meta), ARG_U64(pl->meta_off), ARG_BUF(d->b), ARG_U64(d->b_off),
                  ARG_U32(d->ldb), ARG_U64(d->stride_b), ARG_BUF(d->c), ARG_U64(d->c_off), ARG_U32(d->ldc), ARG_U64(d->stride_c),
                  ARG_BUF(maps), ARG_U64(ia), ARG_U64(ib));
    return GO(ARG_U32(d->m), ARG_U32(d->n), ARG_U32(d->k), ARG_F32(d->alpha), ARG_F32(d->beta), ARG_BUF(d->a), ARG_U64(d->a_off),
              ARG_U32(d->lda), ARG_U64(d->stride_a), ARG_BUF(d->b), ARG_U64(d->b_off), ARG_U32(d->ldb), ARG_U64(d->stride_b), ARG_BUF(d->c),
              ARG_U64(d->c_off), ARG_U32(d->ldc), ARG_U64(d->stride_c), ARG_BUF(maps), ARG_U64(ia), ARG_U64(ib));
#undef GO
}

/* The wgmma probe: small integers (exact in f32 and int32) on shapes with edges in M, N and K — kind
 * 0: f16 in all four layouts and bf16; 1: s8 with A M×K and B N×K — against the host. */
static int probe_kind(clrun_ctx *ctx, int kind, int cuda)
{
    enum { PM = 72, PN = 136, PK = 208 };
    static const int layouts[][3] = {{0, 0, 1}, {0, 1, 1}, {1, 0, 1}, {1, 1, 1}, {0, 0, 2}, {0, 1, 3}}; /* TA, TB, ABT */
    uint16_t *ha = malloc(sizeof *ha * PM * PK), *hb = malloc(sizeof *hb * PK * PN);
    float *want = malloc(sizeof *want * PM * PN);
    int ok = ha && hb && want;
    for (size_t l = 0; ok && l < sizeof layouts / sizeof layouts[0]; l++) {
        const int ta = layouts[l][0], tb = layouts[l][1], abt = layouts[l][2];
        if ((abt == 3) != kind) continue;
        int8_t *ca = (int8_t *)ha, *cb = (int8_t *)hb;
        for (int i = 0; i < PM; i++)
            for (int p = 0; p < PK; p++) {
                const int v = (i * 7 + p * 3) % 9 - 4;
                const size_t at = ta ? (size_t)p * PM + i : (size_t)i * PK + p;
                if (abt == 3) ca[at] = (int8_t)(v * 31);
                else ha[at] = abt == 1 ? clrun_f32_to_f16((float)v) : clrun_f32_to_bf16((float)v);
            }
        for (int p = 0; p < PK; p++)
            for (int j = 0; j < PN; j++) {
                const int v = (p * 5 + j * 11) % 7 - 3;
                const size_t at = tb ? (size_t)j * PK + p : (size_t)p * PN + j;
                if (abt == 3) cb[at] = (int8_t)(v * 41);
                else hb[at] = abt == 1 ? clrun_f32_to_f16((float)v) : clrun_f32_to_bf16((float)v);
            }
        for (int i = 0; i < PM; i++)
            for (int j = 0; j < PN; j++) {
                long s = 0;
                for (int p = 0; p < PK; p++) s += (long)((i * 7 + p * 3) % 9 - 4) * ((p * 5 + j * 11) % 7 - 3) * (abt == 3 ? 31 * 41 : 1);
                if (abt == 3) ((int32_t *)want)[i * PN + j] = (int32_t)s;
                else want[i * PN + j] = (float)s;
            }
        clrun__gemm_plan pl = {.kind = abt == 3 ? CLRUN__GEMM_S8 : CLRUN__GEMM_FLOAT, .what = abt == 3 ? "gemm s8" : "gemm", .cuda = cuda};
        clrun_gemm_desc *d = &pl.d;
        d->m = PM, d->n = PN, d->k = PK, d->alpha = 1, d->trans_a = ta, d->trans_b = tb, d->lda = ta ? PM : PK, d->ldb = tb ? PK : PN;
        d->ldc = PN, d->batch = 1, d->type = abt == 1 ? CLRUN_F16 : abt == 2 ? CLRUN_BF16 : CLRUN_I8;
        const size_t es = abt == 3 ? 1 : 2;
        ok = clrun__gemm_probe(ctx, &clrun__gemm_wgmma, &pl, ha, es * PM * PK, hb, es * PK * PN, want, sizeof *want * PM * PN);
        if (!ok && clrun__setting_on(CLRUN__SET_VERBOSE))
            fprintf(stderr, "clrun: the wgmma probe%s failed for %s with A%s and B%s: %s\n",
                    cuda ? " (launched through the CUDA driver)" : "",
                    abt == 1   ? "f16"
                    : abt == 2 ? "bf16"
                               : "s8",
                    ta ? " transposed" : "", tb ? " transposed" : "", clrun_last_error(ctx));
    }
    free(ha), free(hb), free(want);
    return ok;
}

/* Whether the wgmma kernel runs here: kind FLOAT f16/bf16, S8 s8. f32 (3xTF32) stays on mma.sync:
 * splitting each slice in local memory for wgmma, which reads only K-major tf32 operands from there,
 * ran at 30–40 TFLOP/s against mma.sync's 54 on the H200 (docs/DESIGN.md). */
static int probe(clrun_ctx *ctx, enum clrun__gemm_kind kind)
{
    if (!clrun__gemm_nv_candidate(ctx) || clrun__setting_on(CLRUN__SET_NO_WGMMA)) return 0;
    /* wgmma is sm_90's alone: where the driver reports another compute capability
     * (cl_nv_device_attribute_query), no doomed build is tried; where it reports none, the probe decides */
    cl_uint major = 0;
    if (clGetDeviceInfo(clrun_ctx_cl_device(ctx), 0x4000 /* CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV */, sizeof major, &major, NULL) ==
            CL_SUCCESS &&
        major != 9)
        return 0;
    struct wg_state *ws = state(ctx);
    const int s8 = kind == CLRUN__GEMM_S8;
    if (kind == CLRUN__GEMM_SP) { /* TMA loads only; each metadata form, B both ways */
        if (!ws || !clrun__tmap_available(ctx)) return 0;
        for (int form = 1; form <= 2; form++) {
            ws->sp_form = form;
            if (clrun__gemm_probe_sp(ctx, &clrun__gemm_wgmma, 0, 0) && clrun__gemm_probe_sp(ctx, &clrun__gemm_wgmma, 1, 0)) return 1;
            if (clrun__setting_on(CLRUN__SET_VERBOSE))
                fprintf(stderr, "clrun: the 2:4 wgmma kernel with metadata form %d failed its probe: %s\n", form, clrun_last_error(ctx));
        }
        ws->sp_form = 0;
        return 0;
    }
    if (ws && clrun__tmap_available(ctx)) { /* TMA loads first; cp.async where their probe fails */
        ws->tma[s8] = ws->probing = 1;
        const int ok = probe_kind(ctx, s8, 0);
        ws->probing = 0;
        if (ok) return 1;
        if (clrun__setting_on(CLRUN__SET_VERBOSE))
            fprintf(stderr, "clrun: the %s wgmma kernel with TMA loads failed its probe (%s); it loads with cp.async\n",
                    s8 ? "s8" : "f16/bf16", clrun_last_error(ctx));
        ws->tma[s8] = -1;
    }
    return probe_kind(ctx, s8, 0);
}

static const char *refuses(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    (void)ctx;
    return p->kind == CLRUN__GEMM_FLOAT && p->d.type == CLRUN_F32 ? "wgmma takes f16, bf16 and s8 (f32 products run as 3xTF32 on mma.sync)"
           : p->kind == CLRUN__GEMM_SP && p->d.type == CLRUN_F32  ? "the sparse tensor cores take f16 or bf16"
                                                                  : NULL;
}

/* 2:4 products under 2^30 flops run on mma.sync's mma.sp: at 127×8191×64 on the H200 it took 0.036 ms
 * against this kernel's 0.047; from 128×8192×1024 (2^31) up this one is faster (docs/BENCHMARKS.md). */
static int defers(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    (void)ctx;
    return p->kind == CLRUN__GEMM_SP && 2.0 * (double)p->d.m * (double)p->d.n * (double)p->d.k * (double)p->d.batch < 0x1p30;
}

const clrun__gemm_backend clrun__gemm_wgmma = {
    .id = CLRUN_GEMM_WGMMA,
    .name = "wgmma",
    .needs = "it needs NVIDIA's OpenCL on a Hopper GPU (sm_90a, through the PTX rewrite), and $CLRUN_NO_WGMMA unset",
    .kinds = CLRUN__GEMM_KIND_BIT(CLRUN__GEMM_FLOAT) | CLRUN__GEMM_KIND_BIT(CLRUN__GEMM_S8) | CLRUN__GEMM_KIND_BIT(CLRUN__GEMM_SP),
    .tensor = 1,
    .layout = {[CLRUN__GEMM_FLOAT] = CLRUN__GEMM_ROWS16,
               [CLRUN__GEMM_S8] = CLRUN__GEMM_ROWS16 | CLRUN__GEMM_NT,
               [CLRUN__GEMM_SP] = CLRUN__GEMM_ROWS16},
    .probe = probe,
    .refuses = refuses,
    .defers = defers,
    .launch = launch,
    .tiles = &tiles,
};
