/* gemm.c — matrix multiply (A, B in f32, f16 or bf16; C in f32): argument checks, the choice of
 * kernel, launch geometry, the tensor-core probe, CLBlast. */
#include "op.h"

#include <stdlib.h>
#include <string.h>

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

/* GEMM's state on a context (clrun__op_state): the tuning file as read, the CPU kernel's vector
 * width, the tensor-core probe's verdict. */
struct gemm_state {
    int tuned;             /* 0 not read yet, 1 read (found or not) */
    unsigned params[4][7]; /* GPU kernel tiles per class (small, large, small-fast, large-fast); [0] == 0: none */
    int backend[4];        /* backend per class; 0 (auto): none */
    unsigned vw;           /* CPU kernel's vector width (0: not asked yet) */
    int tensor;            /* tensor-core GEMM: 0 not probed yet, 1 works, -1 not here */
    int wgmma[2];          /* Hopper's wgmma kernel, [0] f16/bf16, [1] s8: 0 not probed yet, 1 works, -1 not here */
    unsigned wg[8];        /* the tuning file's wgmma tiles (struct wg_params order); [0] == 0: none */
};

static const char state_key = 0; /* names GEMM's slot */

static struct gemm_state *state(clrun_ctx *ctx) { return clrun__op_state(ctx, &state_key, sizeof(struct gemm_state), NULL); }

/* Tile parameters of the GPU kernel: TM TN TK WM WN VEC DB (see cl/gemm.cl). */
struct gpu_params {
    unsigned tm, tn, tk, wm, wn, vec, db;
};

/* Parameters the kernel and this device accept: divisibility, work-group size, local memory. */
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

const char *clrun_gemm_tuning_path(const clrun_ctx *ctx, char *buf, size_t size)
{
    char dir[4096];
    if (!clrun_cache_dir(dir, sizeof dir)) return NULL;
    unsigned long long h = 1469598103934665603ull; /* FNV-1a of what identifies the device */
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const char *parts[] = {in->platform_name, in->name, in->version, in->driver_version};
    for (int i = 0; i < 4; i++)
        for (const char *p = parts[i]; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    int n = snprintf(buf, size, "%s/tune-gemm-%016llx.txt", dir, h);
    return n > 0 && (size_t)n < size ? buf : NULL;
}

/* The one table of backend names, by clrun_gemm_backend value; then the deprecated aliases. */
static const char *const backend_names[] = {"auto", "gpu-kernel", "cpu-kernel", "clblast", "kernel", "tensor"};
static const struct {
    const char *alias;
    clrun_gemm_backend b;
} backend_aliases[] = {{"clrun", CLRUN_GEMM_KERNEL}, {"gpu", CLRUN_GEMM_GPU_KERNEL}, {"cpu", CLRUN_GEMM_CPU_KERNEL}};

const char *clrun_gemm_backend_name(clrun_gemm_backend b)
{
    return (unsigned)b < sizeof backend_names / sizeof *backend_names ? backend_names[b] : "?";
}

clrun_status clrun_gemm_backend_parse(const char *name, clrun_gemm_backend *out)
{
    if (!name || !out) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_gemm_backend_parse: NULL argument");
    for (size_t i = 0; i < sizeof backend_names / sizeof *backend_names; i++)
        if (strcmp(name, backend_names[i]) == 0) return *out = (clrun_gemm_backend)i, CLRUN_OK;
    for (size_t i = 0; i < sizeof backend_aliases / sizeof *backend_aliases; i++)
        if (strcmp(name, backend_aliases[i].alias) == 0) return *out = backend_aliases[i].b, CLRUN_OK;
    return clrun__fail(NULL, CLRUN_INVALID_ARG, "unknown GEMM backend '%s' (auto, kernel, gpu-kernel, cpu-kernel, clblast, tensor)", name);
}

static const char *const class_names[] = {"small", "large", "small-fast", "large-fast"};

/* Read the tuning file once per context: lines "CLASS TM,TN,TK,WM,WN,VEC,DB [BACKEND]", CLASS one of
 * class_names, BACKEND gpu-kernel, cpu-kernel or clblast; and "wgmma BM,BN,WG,WN,STAGES,WAIT,KB,WS"
 * (the wgmma kernel's tiles, checked when used). Lines it does not understand are skipped. */
static void read_tuning(clrun_ctx *ctx, struct gemm_state *gs)
{
    char path[4200], line[256];
    gs->tuned = 1;
    memset(gs->params, 0, sizeof gs->params);
    memset(gs->backend, 0, sizeof gs->backend);
    memset(gs->wg, 0, sizeof gs->wg);
    FILE *f = clrun_gemm_tuning_path(ctx, path, sizeof path) ? fopen(path, "r") : NULL;
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        unsigned v[8];
        if (sscanf(line, "wgmma %u,%u,%u,%u,%u,%u,%u,%u", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
            memcpy(gs->wg, v, sizeof gs->wg);
            continue;
        }
        char cls[16] = "", be[16] = ""; /* a blank line leaves them empty */
        int got = sscanf(line, "%15s %u,%u,%u,%u,%u,%u,%u %15s", cls, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], be);
        int c = -1;
        for (int i = 0; i < 4; i++)
            if (strcmp(cls, class_names[i]) == 0) c = i;
        if (got < 8 || c < 0) continue;
        if (params_ok(clrun_ctx_device(ctx), v)) memcpy(gs->params[c], v, sizeof gs->params[c]);
        for (int b = 1; b < 4 && got == 9; b++)
            if (strcmp(be, clrun_gemm_backend_name((clrun_gemm_backend)b)) == 0 && (b != CLRUN_GEMM_CLBLAST || clrun_have_clblast()))
                gs->backend[c] = b;
    }
    fclose(f);
}

/* Class of a product (index into class_names): large when it has at least two 128×128 tiles per
 * compute unit; the fast ones apart. */
static int gemm_class(const clrun_ctx *ctx, const clrun_gemm_desc *d)
{
    const size_t m = d->whole_m > d->m ? d->whole_m : d->m; /* a block of rows: the whole product's class */
    size_t tiles128 = ((m + 127) / 128) * ((d->n + 127) / 128);
    return (tiles128 >= 2 * (size_t)clrun_ctx_device(ctx)->compute_units) + 2 * (d->fast != 0);
}

/* GEMM's state with the tuning file read; NULL when out of memory (the context's error says so). */
static struct gemm_state *tuned_state(clrun_ctx *ctx)
{
    struct gemm_state *gs = state(ctx);
    if (gs && !gs->tuned) read_tuning(ctx, gs);
    return gs;
}

/* Measured on the H200 (docs/BENCHMARKS.md), all with 8×8 per work-item as 4×4 quads read from
 * local memory in 16 bytes: on large products 128×128 tiles, in slices of 16 with two local buffers
 * (fast: slices of 8, one buffer); when the product has too few 128-tiles to fill the device,
 * 64×128 tiles (slices of 16; fast: 8). Devices with less local memory or smaller work-groups get
 * 64×64 tiles of 4×4. A tuning file overrides these; $CLRUN_GEMM_PARAMS ("TM,TN,TK,WM,WN,VEC,DB")
 * overrides both, for experiments and `clrun tune`. */
static clrun_status gpu_params(clrun_ctx *ctx, const clrun_gemm_desc *d, struct gpu_params *g)
{
    static const unsigned builtin[4][7] = {
        {64, 128, 16, 8, 8, 1, 1}, {128, 128, 16, 8, 8, 1, 2}, {64, 128, 8, 8, 8, 1, 1}, {128, 128, 8, 8, 8, 1, 1}};
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const int cls = gemm_class(ctx, d);
    unsigned v[CLRUN__SETTING_MAX_UINTS] = {0}, n;
    struct gemm_state *gs = tuned_state(ctx);
    clrun_status st;
    if (!gs) return CLRUN_HOST_OUT_OF_MEMORY;
    if ((st = clrun__setting_uints(ctx, CLRUN__SET_GEMM_PARAMS, v, &n))) return st;
    if (n && !params_ok(in, v)) /* VEC and DB, when left out, are 0 */
        return clrun__setting_refuse(
            ctx, CLRUN__SET_GEMM_PARAMS,
            "tiles this device cannot run (they must divide as cl/gemm.cl says and fit its work-group and local memory)");
    *g = (struct gpu_params){64, 64, 16, 4, 4, 1, 1};
    const unsigned *t = in->type != CLRUN_DEVICE_CPU && params_ok(in, builtin[cls]) ? builtin[cls] : NULL;
    if (gs->params[cls][0]) t = gs->params[cls];
    if (n) t = v;
    if (t) *g = (struct gpu_params){t[0], t[1], t[2], t[3], t[4], t[5], t[6]};
    return CLRUN_OK;
}

/* Check that rows × cols at ld from off, for every batch, fit in the buffer. */
clrun_status clrun__check_matrix(clrun_ctx *ctx, const char *what, const char *name, clrun_buf *b, size_t esize, size_t off, size_t ld,
                                 size_t stride, size_t rows, size_t cols, size_t batch)
{
    if (rows == 0 || cols == 0) return CLRUN_OK;
    if (!b) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: matrix %s is NULL", what, name);
    if (ld < cols) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: ld%s = %zu is smaller than its %zu columns", what, name, ld, cols);
    if (rows > UINT32_MAX || cols > UINT32_MAX || ld > UINT32_MAX)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: matrix %s is larger than 2^32-1 in a dimension", what, name);
    size_t elems = clrun_buf_size(b) / esize;
    /* last element of the last batch: off + (batch-1)·stride + (rows-1)·ld + cols - 1 */
    size_t last = off, t;
    if (__builtin_mul_overflow(batch - 1, stride, &t) || __builtin_add_overflow(last, t, &last) ||
        __builtin_mul_overflow(rows - 1, ld, &t) || __builtin_add_overflow(last, t, &last) ||
        __builtin_add_overflow(last, cols - 1, &last) || last >= elems)
        return clrun__fail(ctx, CLRUN_INVALID_ARG,
                           "%s: matrix %s (%zu×%zu, ld %zu, offset %zu, %zu batch%s of stride %zu) runs past its buffer of %zu "
                           "elements",
                           what, name, rows, cols, ld, off, batch, batch == 1 ? "" : "es", stride, elems);
    return CLRUN_OK;
}

/* Steps of K each work-item of the CPU packing kernels copies (PK in cl/gemm_cpu.cl). */
#define CPU_PACK_STEPS 16

/* The CPU kernel's vector width (the device's native float width: 16 with AVX-512, 8 with AVX2)
 * and rows per work-item: 6, measured fastest on AVX-512 among 4, 6, 8 and 14 (docs/BENCHMARKS.md)
 * and the most that fit AVX2's 16 registers. $CLRUN_GEMM_CPU_PARAMS ("VW,RM") overrides them. */
static clrun_status cpu_params(clrun_ctx *ctx, unsigned *vw, unsigned *rm)
{
    struct gemm_state *gs = state(ctx);
    unsigned v[CLRUN__SETTING_MAX_UINTS], n;
    clrun_status st;
    if (!gs) return CLRUN_HOST_OUT_OF_MEMORY;
    if (!gs->vw) {
        cl_uint w = 0;
        clGetDeviceInfo(clrun_ctx_cl_device(ctx), CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, sizeof w, &w, NULL);
        gs->vw = w >= 16 ? 16 : w >= 8 ? 8 : 4;
    }
    *vw = gs->vw;
    *rm = 6;
    if ((st = clrun__setting_uints(ctx, CLRUN__SET_GEMM_CPU_PARAMS, v, &n))) return st;
    if (n && ((v[0] != 4 && v[0] != 8 && v[0] != 16) || v[1] < 1 || v[1] > 32))
        return clrun__setting_refuse(ctx, CLRUN__SET_GEMM_CPU_PARAMS, "the vector width is 4, 8 or 16 and the rows per work-item 1 to 32");
    if (n) *vw = v[0], *rm = v[1];
    return CLRUN_OK;
}

/* The CPU kernel: pack op(B) into panels in the context's scratch buffer (widening f16/bf16 to f32);
 * for f16/bf16 pack op(A) there too, in panels of RM rows, then multiply in f32. INT8 (d->type
 * CLRUN_I8, from clrun_gemm_s8) runs the same way: s8 is widened to f32 exactly, the multiply sums
 * blocks of K in f32 exactly and adds them in int32, and e (or NULL) is C's epilogue. */
static clrun_status run_cpu_e(clrun_ctx *ctx, const clrun_gemm_desc *d, size_t batch, const clrun_s8_epilogue *e)
{
    clrun_status st;
    unsigned vw, rm;
    if ((st = cpu_params(ctx, &vw, &rm))) return st;
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

static clrun_status run_cpu(clrun_ctx *ctx, const clrun_gemm_desc *d, size_t batch) { return run_cpu_e(ctx, d, batch, NULL); }

clrun_status clrun__gemm_s8_cpu(clrun_ctx *ctx, const clrun_gemm_desc *d, const clrun_s8_epilogue *e)
{
    return run_cpu_e(ctx, d, d->batch ? d->batch : 1, e);
}

/* Bind the argument list the GPU-shaped kernels share (cl/gemm.cl, cl/gemm_mma_nv.cl) and launch:
 * (M, N, K, alpha, beta, A, a_off, lda, stride_a, B, b_off, ldb, stride_b, C, c_off, ldc, stride_c).
 * An operand that is never read (K = 0) may be NULL: C is bound in its place, with leading
 * dimension ld0. */
static clrun_status launch_gpu_shaped(clrun_kernel *k, clrun__grid g, const clrun_gemm_desc *d, size_t ld0)
{
    clrun_buf *a = d->a ? d->a : d->c, *b = d->b ? d->b : d->c;
    return CLRUN__RUN(k, g, ARG_U32(d->m), ARG_U32(d->n), ARG_U32(d->k), ARG_F32(d->alpha), ARG_F32(d->beta), ARG_BUF(a), ARG_U64(d->a_off),
                      ARG_U32(d->lda ? d->lda : ld0), ARG_U64(d->stride_a), ARG_BUF(b), ARG_U64(d->b_off), ARG_U32(d->ldb ? d->ldb : ld0),
                      ARG_U64(d->stride_b), ARG_BUF(d->c), ARG_U64(d->c_off), ARG_U32(d->ldc), ARG_U64(d->stride_c));
}

/* The INT8 tensor-core kernels' argument list (cl/gemm_mma_nv.cl and cl/gemm_wgmma_nv.cl with ABT 3):
 * launch_gpu_shaped's with alpha 1 and beta 0 (unused), then the epilogue e (may be NULL). */
static clrun_status launch_s8_tensor(clrun_kernel *k, clrun__grid g, const clrun_gemm_desc *d, const clrun_s8_epilogue *e)
{
    clrun_buf *a = d->a ? d->a : d->c, *b = d->b ? d->b : d->c;
    return CLRUN__RUN(k, g, ARG_U32(d->m), ARG_U32(d->n), ARG_U32(d->k), ARG_F32(1.0f), ARG_F32(0.0f), ARG_BUF(a), ARG_U64(d->a_off),
                      ARG_U32(d->lda ? d->lda : 16), ARG_U64(d->stride_a), ARG_BUF(b), ARG_U64(d->b_off), ARG_U32(d->ldb ? d->ldb : 16),
                      ARG_U64(d->stride_b), ARG_BUF(d->c), ARG_U64(d->c_off), ARG_U32(d->ldc), ARG_U64(d->stride_c),
                      ARG_BUF(e ? e->row_scale : NULL), ARG_BUF(e ? e->col_scale : NULL), ARG_BUF(e ? e->bias : NULL),
                      ARG_I32((e && e->relu ? 1 : 0) | (d->beta == 1.0f ? 2 : 0)));
}

static clrun_status run_gpu(clrun_ctx *ctx, const clrun_gemm_desc *d, size_t batch)
{
    clrun_status st;
    clrun_kernel *k = NULL;
    char opts[256];
    struct gpu_params g = {0};
    if ((st = gpu_params(ctx, d, &g))) return st;
    /* 16-byte global loads when every run of 4 along a stored row starts on a multiple of 4 */
    int gw4 = g.tk % 4 == 0 && g.tm % 4 == 0 && g.tn % 4 == 0 && d->lda % 4 == 0 && d->ldb % 4 == 0 && d->a_off % 4 == 0 &&
              d->b_off % 4 == 0 && d->stride_a % 4 == 0 && d->stride_b % 4 == 0 && (d->trans_a ? d->m : d->k) % 4 == 0 &&
              (d->trans_b ? d->k : d->n) % 4 == 0;
    snprintf(opts, sizeof opts, "-DTM=%u -DTN=%u -DTK=%u -DWM=%u -DWN=%u -DVEC=%u -DDB=%u -DTA=%d -DTB=%d -DGW=%d -DPSUM=%d -DABT=%d", g.tm,
             g.tn, g.tk, g.wm, g.wn, g.vec, g.db, d->trans_a != 0, d->trans_b != 0, gw4 ? 4 : 1, !d->fast, clrun__float_code(d->type));
    if ((st = clrun__lib_kernel(ctx, "gemm", opts, "clrun_gemm", &k))) return st;
    const size_t lx = g.tn / g.wn, ly = g.tm / g.wm;
    const clrun__grid grid = {3, {(d->n + g.tn - 1) / g.tn * lx, (d->m + g.tm - 1) / g.tm * ly, batch}, {lx, ly, 1}};
    return launch_gpu_shaped(k, grid, d, 1);
}

/* Tiles of the tensor-core kernel (cl/gemm_mma_nv.cl): BM BN BK WTM WTN STAGES, and TFACC for 3xTF32.
 * Measured on the H200 (docs/BENCHMARKS.md): f16/bf16 128×128 tiles of four 64×64 warps, slices of
 * 32 in three stages (48 KiB, all the local memory NVIDIA's OpenCL gives a work-group) beat 128×256,
 * 256×128, 64×128, 8 warps of 64×32 and slices of 16 in 4 or 6 stages by 10–35%. 3xTF32: the same
 * tiles in slices of 16, each slice's products summed from zero on the tensor cores and then added
 * in f32 (TFACC 2: the SIMT kernel's accuracy; summing per step, TFACC 1, is 3× less accurate for
 * 5% more speed). $CLRUN_GEMM_MMA_PARAMS ("BM,BN,BK,WTM,WTN,STAGES[,TFACC]") overrides them. */
struct mma_params {
    unsigned bm, bn, bk, wtm, wtn, stages, tfacc;
};

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

static clrun_status mma_params(clrun_ctx *ctx, const clrun_gemm_desc *d, struct mma_params *p)
{
    const size_t es = clrun_dtype_size(d->type);
    unsigned v[CLRUN__SETTING_MAX_UINTS], n;
    clrun_status st;
    *p = es == 4 ? (struct mma_params){128, 128, 16, 64, 64, 3, 2} : (struct mma_params){128, 128, 32 * (2 / es), 64, 64, 3, 1};
    if ((st = clrun__setting_uints(ctx, CLRUN__SET_GEMM_MMA_PARAMS, v, &n)) || !n) return st;
    const struct mma_params e = {v[0], v[1], v[2], v[3], v[4], v[5], n == 7 ? v[6] : 1};
    if ((e.tfacc != 1 && e.tfacc != 2) || !mma_ok(clrun_ctx_device(ctx), &e, es))
        return clrun__setting_refuse(ctx, CLRUN__SET_GEMM_MMA_PARAMS,
                                     "tiles this device cannot run for this element type (see cl/gemm_mma_nv.cl; TFACC is 1 or 2)");
    *p = e;
    return CLRUN_OK;
}

/* cp.async copies 16 bytes from 16-byte aligned addresses: every row of A and B must start on one */
static int mma_aligned(const clrun_gemm_desc *d, size_t batch)
{
    const size_t epc = 16 / clrun_dtype_size(d->type);
    return d->lda % epc == 0 && d->ldb % epc == 0 && d->a_off % epc == 0 && d->b_off % epc == 0 &&
           (batch == 1 || (d->stride_a % epc == 0 && d->stride_b % epc == 0));
}

static clrun_status run_tensor(clrun_ctx *ctx, const clrun_gemm_desc *d, size_t batch);

/* Tiles of the wgmma kernel (cl/gemm_wgmma_nv.cl): BM BN WG WN STAGES WAIT KB WS. The built-in ones
 * measured best on the H200 (docs/BENCHMARKS.md); the tuning file's (`clrun tune gemm`) over them,
 * $CLRUN_GEMM_WGMMA_PARAMS over both. */
struct wg_params {
    unsigned bm, bn, wg, wn, stages, wait, kb, ws;
};

static int wg_ok(const clrun_device_info *in, const struct wg_params *p)
{
    if (!p->wg || p->bm % (64 * p->wg) || (p->wn != 64 && p->wn != 128 && p->wn != 256) || !p->bn || p->bn % p->wn || p->stages < 2 ||
        p->stages > 8 || p->wait > 1 || p->stages < 2 + p->wait || (p->kb != 64 && p->kb != 32) || p->ws > 2)
        return 0;
    /* warp-specialised: a producer warpgroup more, and two 8-byte mbarriers per stage */
    const size_t threads = (size_t)(p->wg + (p->ws != 0)) * 128, lmem = (size_t)p->stages * ((p->bm + p->bn) * p->kb + 16 * (p->ws != 0));
    return threads <= in->max_work_group && (!in->local_mem || lmem <= in->local_mem);
}

static clrun_status wg_params(clrun_ctx *ctx, struct wg_params *p)
{
    unsigned v[CLRUN__SETTING_MAX_UINTS], n;
    clrun_status st;
    *p = (struct wg_params){128, 128, 1, 128, 3, 0, 64, 0};
    const struct gemm_state *gs = tuned_state(ctx);
    if (gs && gs->wg[0]) {
        const struct wg_params t = {gs->wg[0], gs->wg[1], gs->wg[2], gs->wg[3], gs->wg[4], gs->wg[5], gs->wg[6], gs->wg[7]};
        if (wg_ok(clrun_ctx_device(ctx), &t)) *p = t;
    }
    if ((st = clrun__setting_uints(ctx, CLRUN__SET_GEMM_WGMMA_PARAMS, v, &n)) || !n) return st;
    const struct wg_params e = {v[0], v[1], v[2], v[3], v[4], v[5], n >= 7 ? v[6] : 64, n == 8 ? v[7] : 0};
    if (!wg_ok(clrun_ctx_device(ctx), &e))
        return clrun__setting_refuse(
            ctx, CLRUN__SET_GEMM_WGMMA_PARAMS,
            "tiles this device cannot run (see cl/gemm_wgmma_nv.cl: BM a multiple of 64·WG, WN 64, 128 or 256 "
            "dividing BN, WAIT 0 or 1, STAGES ≥ 2 + WAIT, KB 64 or 32, WS 0, 1 or 2, STAGES·((BM+BN)·KB + 16·(WS > 0)) bytes of "
            "local memory)");
    *p = e;
    return CLRUN_OK;
}

/* The wgmma kernel on a checked, 16-byte-aligned d: f16/bf16 (e unused), or s8 (A M×K, B N×K) with
 * its epilogue e (may be NULL). */
static clrun_status run_wgmma(clrun_ctx *ctx, const clrun_gemm_desc *d, size_t batch, int s8, const clrun_s8_epilogue *e)
{
    clrun_status st;
    clrun_kernel *k = NULL;
    struct wg_params p;
    char opts[200];
    if ((st = wg_params(ctx, &p))) return st;
    const int c2 = d->c_off % 2 == 0 && d->ldc % 2 == 0 && (batch == 1 || d->stride_c % 2 == 0);
    snprintf(opts, sizeof opts,
             "-clrun-ptx-rewrite -DABT=%d -DBM=%u -DBN=%u -DWG=%u -DWN=%u -DSTAGES=%u -DWAIT=%u -DKB=%u -DWS=%u -DTA=%d -DTB=%d -DC2=%d "
             "-DEPI=%d",
             s8 ? 3 : clrun__float_code(d->type), p.bm, p.bn, p.wg, p.wn, p.stages, p.wait, p.kb, p.ws, d->trans_a != 0, d->trans_b != 0,
             c2, e != NULL);
    if ((st = clrun__lib_kernel(ctx, "gemm_wgmma_nv", opts, "clrun_gemm_wgmma", &k))) return st;
    const size_t threads = (size_t)(p.wg + (p.ws != 0)) * 128, tiles = ((d->m + p.bm - 1) / p.bm) * ((d->n + p.bn - 1) / p.bn);
    const clrun__grid g = {2, {tiles * threads, batch, 1}, {threads, 1, 1}};
    return s8 ? launch_s8_tensor(k, g, d, e) : launch_gpu_shaped(k, g, d, 8);
}

static clrun_status wg_probe_run(clrun_ctx *ctx, const clrun_gemm_desc *d, void *arg) { return run_wgmma(ctx, d, 1, arg != NULL, NULL); }

/* The wgmma probe: small integers (exact in f32 and int32) on shapes with edges in M, N and K — kind
 * 0: f16 in all four layouts and bf16; 1: s8 with A M×K and B N×K — against the host. */
static int wgmma_probe(clrun_ctx *ctx, int kind)
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
        clrun_gemm_desc d = {0};
        d.m = PM, d.n = PN, d.k = PK, d.alpha = 1, d.trans_a = ta, d.trans_b = tb, d.lda = ta ? PM : PK, d.ldb = tb ? PK : PN, d.ldc = PN;
        d.type = abt == 1 ? CLRUN_F16 : abt == 2 ? CLRUN_BF16 : CLRUN_I8;
        const size_t es = abt == 3 ? 1 : 2;
        ok = clrun__probe_gemm(ctx, &d, ha, es * PM * PK, hb, es * PK * PN, want, sizeof *want * PM * PN, wg_probe_run,
                               abt == 3 ? ctx : NULL, NULL);
        if (!ok && clrun__setting_on(CLRUN__SET_VERBOSE))
            fprintf(stderr, "clrun: the wgmma probe failed for %s with A%s and B%s: %s\n",
                    abt == 1   ? "f16"
                    : abt == 2 ? "bf16"
                               : "s8",
                    ta ? " transposed" : "", tb ? " transposed" : "", clrun_last_error(ctx));
    }
    free(ha), free(hb), free(want);
    return ok;
}

/* Whether the wgmma kernel runs here (probed at first use): kind 0 f16/bf16, 1 s8. f32 (3xTF32)
 * stays on mma.sync: splitting each slice in local memory for wgmma, which reads only K-major tf32
 * operands from there, ran at 30–40 TFLOP/s against mma.sync's 54 on the H200 (docs/DESIGN.md). */
static int wgmma_works(clrun_ctx *ctx, int kind)
{
    struct gemm_state *gs = state(ctx);
    if (!gs) return 0;
    if (!gs->wgmma[kind]) {
        const int candidate = clrun__nv_tensor_candidate(ctx) && !clrun__setting_on(CLRUN__SET_NO_WGMMA);
        /* wgmma is sm_90's alone: where the driver reports another compute capability
         * (cl_nv_device_attribute_query), no doomed build is tried; where it reports none, the probe decides */
        cl_uint major = 0;
        const int other = candidate &&
                          clGetDeviceInfo(clrun_ctx_cl_device(ctx), 0x4000 /* CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV */, sizeof major,
                                          &major, NULL) == CL_SUCCESS &&
                          major != 9;
        gs->wgmma[kind] = candidate && !other && wgmma_probe(ctx, kind) ? 1 : -1;
    }
    return gs->wgmma[kind] == 1;
}

/* f16/bf16 operands whose rows do not start on 16 bytes: A and B copied into rows of a multiple of
 * 8 elements in the context's scratch buffer (one pass over each, against the GEMM's M·N·K), then
 * the tensor-core kernel. */
static clrun_status run_tensor_staged(clrun_ctx *ctx, const clrun_gemm_desc *d, size_t batch)
{
    clrun_status st;
    clrun_gemm_desc t = *d;
    if (!d->k) { /* nothing is read */
        t.a = t.b = NULL, t.a_off = t.b_off = t.stride_a = t.stride_b = 0, t.lda = t.ldb = 8;
        return run_tensor(ctx, &t, batch);
    }
    const size_t ar = d->trans_a ? d->k : d->m, ac = d->trans_a ? d->m : d->k, br = d->trans_b ? d->n : d->k, bc = d->trans_b ? d->k : d->n;
    const size_t lda = (ac + 7) / 8 * 8, ldb = (bc + 7) / 8 * 8, an = batch * ar * lda, bn = batch * br * ldb;
    clrun_buf *s;
    if ((st = clrun__scratch(ctx, (an + bn) * 2, &s)) ||
        (st = clrun__copy_rows16(ctx, d->a, d->a_off, d->lda, d->stride_a, ar, ac, batch, s, 0, lda)) ||
        (st = clrun__copy_rows16(ctx, d->b, d->b_off, d->ldb, d->stride_b, br, bc, batch, s, an, ldb)))
        return st;
    t.a = s, t.a_off = 0, t.lda = lda, t.stride_a = ar * lda, t.b = s, t.b_off = an, t.ldb = ldb, t.stride_b = br * ldb;
    return run_tensor(ctx, &t, batch);
}

static clrun_status run_tensor(clrun_ctx *ctx, const clrun_gemm_desc *d, size_t batch)
{
    clrun_status st;
    clrun_kernel *k = NULL;
    struct mma_params p = {0};
    char opts[160];
    if (!mma_aligned(d, batch) && d->type != CLRUN_F32) return run_tensor_staged(ctx, d, batch);
    if (!mma_aligned(d, batch))
        return clrun__fail(ctx, CLRUN_INVALID_ARG,
                           "gemm: the tensor-core kernel needs lda, ldb, the offsets of A and B and their batch strides to be "
                           "multiples of %d elements (16 bytes); use another backend for this layout",
                           (int)(16 / clrun_dtype_size(d->type)));
    if (d->type != CLRUN_F32 && wgmma_works(ctx, 0)) return run_wgmma(ctx, d, batch, 0, NULL);
    if ((st = mma_params(ctx, d, &p))) return st;
    const int c2 = d->c_off % 2 == 0 && d->ldc % 2 == 0 && (batch == 1 || d->stride_c % 2 == 0);
    snprintf(opts, sizeof opts, "-DABT=%d -DBM=%u -DBN=%u -DBK=%u -DWTM=%u -DWTN=%u -DSTAGES=%u -DTFACC=%u -DTA=%d -DTB=%d -DC2=%d",
             clrun__float_code(d->type), p.bm, p.bn, p.bk, p.wtm, p.wtn, p.stages, p.tfacc, d->trans_a != 0, d->trans_b != 0, c2);
    if ((st = clrun__lib_kernel(ctx, "gemm_mma_nv", opts, "clrun_gemm_mma", &k))) return st;
    const size_t threads = (size_t)(p.bm / p.wtm) * (p.bn / p.wtn) * 32;
    const size_t tiles = ((d->m + p.bm - 1) / p.bm) * ((d->n + p.bn - 1) / p.bn);
    return launch_gpu_shaped(k, (clrun__grid){2, {tiles * threads, batch, 1}, {threads, 1, 1}}, d, 8);
}

/* INT8 on the tensor cores (cl/gemm_mma_nv.cl, ABT 3) for clrun_gemm_s8, which has checked d and
 * brings A as M×K and B as N×K (trans_a 0, trans_b 1) with rows, offsets and strides on 16 bytes. */
clrun_status clrun__gemm_s8_tensor(clrun_ctx *ctx, const clrun_gemm_desc *d, const clrun_s8_epilogue *e)
{
    clrun_status st;
    clrun_kernel *k = NULL;
    struct mma_params p = {0};
    char opts[200];
    const size_t batch = d->batch ? d->batch : 1;
    if (d->trans_a || !d->trans_b || !mma_aligned(d, batch))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm s8: the tensor-core kernel reads A as M×K and B as N×K, rows on 16 bytes");
    if (wgmma_works(ctx, 1)) return run_wgmma(ctx, d, batch, 1, e);
    if ((st = mma_params(ctx, d, &p))) return st;
    snprintf(opts, sizeof opts, "-DABT=3 -DBM=%u -DBN=%u -DBK=%u -DWTM=%u -DWTN=%u -DSTAGES=%u -DTA=0 -DTB=1 -DEPI=%d", p.bm, p.bn, p.bk,
             p.wtm, p.wtn, p.stages, e != NULL);
    if ((st = clrun__lib_kernel(ctx, "gemm_mma_nv", opts, "clrun_gemm_mma", &k))) return st;
    const size_t threads = (size_t)(p.bm / p.wtm) * (p.bn / p.wtn) * 32;
    const size_t tiles = ((d->m + p.bm - 1) / p.bm) * ((d->n + p.bn - 1) / p.bn);
    return launch_s8_tensor(k, (clrun__grid){2, {tiles * threads, batch, 1}, {threads, 1, 1}}, d, e);
}

/* 2:4 sparse A on the tensor cores (cl/gemm_mma_nv.cl, SP 1) for clrun_gemm_sp, which has checked
 * d (f16/bf16, trans_a 0, rows of A's values and B on 16 bytes). form: the probe's choice, SPMETA
 * (1 or 2) + 2·SPORD (0 or 1). */
clrun_status clrun__gemm_sp_tensor(clrun_ctx *ctx, const clrun_gemm_desc *d, clrun_buf *meta, size_t meta_off, int form)
{
    clrun_status st;
    clrun_kernel *k = NULL;
    struct mma_params p = {0};
    char opts[220];
    const size_t batch = d->batch ? d->batch : 1;
    if ((st = mma_params(ctx, d, &p))) return st;
    if (p.bk % 32) return clrun__setting_refuse(ctx, CLRUN__SET_GEMM_MMA_PARAMS, "the sparse kernel takes slices of K in multiples of 32");
    const int c2 = d->c_off % 2 == 0 && d->ldc % 2 == 0 && (batch == 1 || d->stride_c % 2 == 0);
    snprintf(opts, sizeof opts,
             "-DABT=%d -DBM=%u -DBN=%u -DBK=%u -DWTM=%u -DWTN=%u -DSTAGES=%u -DTA=0 -DTB=%d -DC2=%d -DSP=1 -DSPMETA=%d -DSPORD=%d",
             clrun__float_code(d->type), p.bm, p.bn, p.bk, p.wtm, p.wtn, p.stages, d->trans_b != 0, c2, form > 2 ? form - 2 : form,
             form > 2);
    if ((st = clrun__lib_kernel(ctx, "gemm_mma_nv", opts, "clrun_gemm_mma", &k))) return st;
    const size_t threads = (size_t)(p.bm / p.wtm) * (p.bn / p.wtn) * 32;
    const size_t tiles = ((d->m + p.bm - 1) / p.bm) * ((d->n + p.bn - 1) / p.bn);
    clrun_buf *a = d->a ? d->a : d->c, *b = d->b ? d->b : d->c;
    return CLRUN__RUN(k, ((clrun__grid){2, {tiles * threads, batch, 1}, {threads, 1, 1}}), ARG_U32(d->m), ARG_U32(d->n), ARG_U32(d->k),
                      ARG_F32(d->alpha), ARG_F32(d->beta), ARG_BUF(a), ARG_U64(d->a_off), ARG_U32(d->lda ? d->lda : 8),
                      ARG_U64(d->stride_a), ARG_BUF(meta ? meta : d->c), ARG_U64(meta_off), ARG_BUF(b), ARG_U64(d->b_off),
                      ARG_U32(d->ldb ? d->ldb : 8), ARG_U64(d->stride_b), ARG_BUF(d->c), ARG_U64(d->c_off), ARG_U32(d->ldc),
                      ARG_U64(d->stride_c));
}

/* The sparse CPU kernel (cl/gemm_cpu.cl, SP): B packed as for the dense kernel, A's values (as f32)
 * and metadata packed in panels of RM rows after it, then the multiply. */
clrun_status clrun__gemm_sp_cpu(clrun_ctx *ctx, const clrun_gemm_desc *d, clrun_buf *meta, size_t meta_off)
{
    clrun_status st;
    unsigned vw, rm;
    if ((st = cpu_params(ctx, &vw, &rm))) return st;
    const size_t batch = d->batch ? d->batch : 1, nr = 2 * (size_t)vw, panels = (d->n + nr - 1) / nr, apanels = (d->m + rm - 1) / rm;
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
    if (!d->k) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm sp: K = 0 reaches the CPU kernel (clrun_gemm_sp runs it elsewhere)");
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

int clrun__nv_tensor_candidate(clrun_ctx *ctx)
{
    const clrun_device_info *in = clrun_ctx_device(ctx);
    return (strstr(in->platform_vendor, "NVIDIA") != NULL || strstr(in->vendor, "NVIDIA") != NULL) && in->type == CLRUN_DEVICE_GPU &&
           !clrun__setting_on(CLRUN__SET_NO_TENSOR);
}

int clrun__probe_gemm(clrun_ctx *ctx, clrun_gemm_desc *d, const void *a, size_t abytes, const void *b, size_t bbytes, const void *want,
                      size_t cbytes, clrun_status (*run)(clrun_ctx *ctx, const clrun_gemm_desc *d, void *arg), void *arg, const char *what)
{
    clrun_buf *ba = NULL, *bb = NULL, *bc = NULL;
    void *got = malloc(cbytes);
    int ok = got && clrun_buf_new(ctx, abytes, 0, &ba) == CLRUN_OK && clrun_buf_new(ctx, bbytes, 0, &bb) == CLRUN_OK &&
             clrun_buf_new(ctx, cbytes, 0, &bc) == CLRUN_OK && clrun_upload(ba, 0, a, abytes) == CLRUN_OK &&
             clrun_upload(bb, 0, b, bbytes) == CLRUN_OK;
    if (ok) {
        d->a = ba, d->b = bb, d->c = bc;
        ok = run(ctx, d, arg) == CLRUN_OK && clrun_download(bc, 0, got, cbytes) == CLRUN_OK;
        if (ok && memcmp(got, want, cbytes) != 0) {
            if (what) clrun__fail(ctx, CLRUN_UNSUPPORTED, "%s: the tensor-core probe built but computed wrong results; not using it", what);
            ok = 0;
        }
    }
    clrun_buf_free(ba), clrun_buf_free(bb), clrun_buf_free(bc);
    free(got);
    return ok;
}

static clrun_status probe_run(clrun_ctx *ctx, const clrun_gemm_desc *d, void *arg)
{
    (void)arg;
    return run_tensor(ctx, d, 1);
}

/* The probe: on an NVIDIA platform, build the tensor-core kernel and multiply small integers in f16
 * (exact in f32) on a shape with edges in M, N and K; compare with the host. */
static int tensor_probe(clrun_ctx *ctx)
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
    clrun_gemm_desc d = {0};
    d.m = PM, d.n = PN, d.k = PK, d.alpha = 1, d.lda = PK, d.ldb = PN, d.ldc = PN, d.type = CLRUN_F16;
    return clrun__probe_gemm(ctx, &d, ha, sizeof ha, hb, sizeof hb, want, sizeof want, probe_run, NULL, "gemm");
}

int clrun_gemm_tensor_cores(clrun_ctx *ctx)
{
    CLRUN__SERIAL(ctx);
    struct gemm_state *gs = ctx ? state(ctx) : NULL;
    if (!gs) return 0;
    if (!gs->tensor) { gs->tensor = clrun__nv_tensor_candidate(ctx) && tensor_probe(ctx) ? 1 : -1; }
    return gs->tensor == 1;
}

const char *clrun_gemm_tensor_kernel(clrun_ctx *ctx, clrun_dtype type)
{
    const int kind = type == CLRUN_F32 ? 2 : type == CLRUN_F16 || type == CLRUN_BF16 ? 0 : type == CLRUN_I8 ? 1 : -1;
    if (kind < 0 || !clrun_gemm_tensor_cores(ctx)) return NULL;
    return kind < 2 && wgmma_works(ctx, kind) ? "wgmma" : "mma.sync";
}

static clrun_status run_clblast(clrun_ctx *ctx, const clrun_gemm_desc *d, size_t batch)
{
#ifdef CLRUN_HAVE_CLBLAST
    if (d->type != CLRUN_F32)
        return clrun__fail(ctx, CLRUN_UNSUPPORTED,
                           "gemm: CLBlast has no GEMM with f16 or bf16 inputs and f32 results; use another backend");
    cl_command_queue q = clrun_ctx_cl_queue(ctx);
    CLBlastStatusCode s;
    CLBlastTranspose ta = d->trans_a ? CLBlastTransposeYes : CLBlastTransposeNo, tb = d->trans_b ? CLBlastTransposeYes : CLBlastTransposeNo;
    cl_mem a = clrun_buf_cl_mem(d->a ? d->a : d->c), b = clrun_buf_cl_mem(d->b ? d->b : d->c), c = clrun_buf_cl_mem(d->c);
    size_t lda = d->lda ? d->lda : 1, ldb = d->ldb ? d->ldb : 1;
    if (batch == 1)
        s = CLBlastSgemm(CLBlastLayoutRowMajor, ta, tb, d->m, d->n, d->k, d->alpha, a, d->a_off, lda, b, d->b_off, ldb, d->beta, c,
                         d->c_off, d->ldc, &q, NULL);
    else
        s = CLBlastSgemmStridedBatched(CLBlastLayoutRowMajor, ta, tb, d->m, d->n, d->k, d->alpha, a, d->a_off, lda, d->stride_a, b,
                                       d->b_off, ldb, d->stride_b, d->beta, c, d->c_off, d->ldc, d->stride_c, batch, &q, NULL);
    if (s != CLBlastSuccess)
        return clrun__fail(ctx, s <= -1000 ? CLRUN_UNSUPPORTED : CLRUN_CL_ERROR, "gemm: CLBlast failed with status %d%s%s", (int)s,
                           s > -1000 ? " (" : "", s > -1000 ? clrun_cl_error_name((cl_int)s) : "");
    if (s > -1000 && s < 0) return CLRUN_CL_ERROR;
    return CLRUN_OK;
#else
    (void)d;
    (void)batch;
    return clrun__fail(ctx, CLRUN_UNSUPPORTED, "gemm: this libclrun was built without CLBlast (meson -Dclblast=enabled)");
#endif
}

/* clrun's own kernels walk K inside one work-item. A product deeper than GEMM_K_SLICE runs as
 * slices of K, each adding to C (beta 1 after the first): no work-item then loops without bound
 * (Mesa's llvmpipe stops a work-item after 65,535 loop iterations, silently: its results were
 * wrong from K = 8192 on the CPU-shaped kernel and 12,000 on the GPU-shaped one; CLRUN__MAX_TRIPS
 * in op.h). The cost is one more read and write of C per 4096 of K. */
#define GEMM_K_SLICE 4096

static clrun_status k_sliced(clrun_ctx *ctx, const clrun_gemm_desc *d, size_t batch,
                             clrun_status (*run)(clrun_ctx *, const clrun_gemm_desc *, size_t))
{
    if (d->k <= GEMM_K_SLICE) return run(ctx, d, batch);
    clrun_gemm_desc s = *d;
    for (size_t k0 = 0; k0 < d->k; k0 += GEMM_K_SLICE) {
        s.k = d->k - k0 < GEMM_K_SLICE ? d->k - k0 : GEMM_K_SLICE;
        s.a_off = d->a_off + (d->trans_a ? k0 * d->lda : k0); /* op(A)'s columns k0.. */
        s.b_off = d->b_off + (d->trans_b ? k0 : k0 * d->ldb); /* op(B)'s rows k0.. */
        s.beta = k0 ? 1.0f : d->beta;
        clrun_status st = run(ctx, &s, batch);
        if (st) return st;
    }
    return CLRUN_OK;
}

clrun_gemm_backend clrun_gemm_resolve(clrun_ctx *ctx, const clrun_gemm_desc *d)
{
    const clrun_gemm_backend own = clrun_ctx_device(ctx)->type == CLRUN_DEVICE_CPU ? CLRUN_GEMM_CPU_KERNEL : CLRUN_GEMM_GPU_KERNEL;
    switch (d->backend) {
    case CLRUN_GEMM_AUTO: {
        /* f16/bf16 products go to the tensor cores where they are; rows not on 16 bytes are staged
         * when the product is large enough (1 GFLOP) for the copies to pay: on the H200 127×8191×64
         * ran at 3.9 TFLOP/s staged against 5.7 portable, 8191×127×4096 at 41 against 18 */
        if (d->type != CLRUN_F32 &&
            (mma_aligned(d, d->batch ? d->batch : 1) || 2.0 * d->m * d->n * d->k * (d->batch ? d->batch : 1) >= 0x1p30) &&
            clrun_gemm_tensor_cores(ctx))
            return CLRUN_GEMM_TENSOR;
        /* the tuning file's measured winner for the shape class, else clrun's kernel for the device:
         * on the devices measured (docs/BENCHMARKS.md) it beats CLBlast in every class */
        const struct gemm_state *gs = tuned_state(ctx);
        const int tuned = gs ? gs->backend[gemm_class(ctx, d)] : 0;
        /* the file measured f32 products; CLBlast takes no f16/bf16 */
        return tuned && !(tuned == CLRUN_GEMM_CLBLAST && d->type != CLRUN_F32) ? (clrun_gemm_backend)tuned : own;
    }
    case CLRUN_GEMM_KERNEL: return own;
    default: return d->backend;
    }
}

clrun_status clrun_gemm(clrun_ctx *ctx, const clrun_gemm_desc *d)
{
    CLRUN__SERIAL(ctx);
    clrun_status st;
    if (!d) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm: descriptor is NULL");
    size_t batch = d->batch ? d->batch : 1;
    size_t ar = d->trans_a ? d->k : d->m, ac = d->trans_a ? d->m : d->k;
    size_t br = d->trans_b ? d->n : d->k, bc = d->trans_b ? d->k : d->n;
    if (d->m == 0 || d->n == 0) return CLRUN_OK;
    if (!d->c) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm: matrix C is NULL");
    if (d->k > UINT32_MAX) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm: K is larger than 2^32-1");
    if (clrun__float_code(d->type) < 0)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm: unknown element type %s (%d) for A and B: f32, f16 or bf16",
                           clrun_dtype_name(d->type), (int)d->type);
    const size_t es = clrun_dtype_size(d->type);
    if ((st = clrun__check_matrix(ctx, "gemm", "A", d->a, es, d->a_off, d->lda, d->stride_a, ar, ac, batch)) ||
        (st = clrun__check_matrix(ctx, "gemm", "B", d->b, es, d->b_off, d->ldb, d->stride_b, br, bc, batch)) ||
        (st = clrun__check_matrix(ctx, "gemm", "C", d->c, 4, d->c_off, d->ldc, d->stride_c, d->m, d->n, batch)))
        return st;
    if (batch > 1 && d->stride_c < d->m * d->ldc && d->stride_c != 0)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm: stride_c %zu makes the batches' C matrices overlap", d->stride_c);
    if (batch > 1 && d->stride_c == 0) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm: batches need stride_c > 0");
    switch (clrun_gemm_resolve(ctx, d)) {
    case CLRUN_GEMM_CLBLAST: return run_clblast(ctx, d, batch);
    case CLRUN_GEMM_GPU_KERNEL: return k_sliced(ctx, d, batch, run_gpu);
    case CLRUN_GEMM_CPU_KERNEL: return k_sliced(ctx, d, batch, run_cpu);
    case CLRUN_GEMM_TENSOR:
        if (!clrun_gemm_tensor_cores(ctx))
            return clrun__fail(ctx, CLRUN_UNSUPPORTED,
                               "gemm: no tensor-core kernel on %s (it needs NVIDIA's OpenCL and a GPU that runs mma.sync)",
                               clrun_ctx_device(ctx)->name);
        return run_tensor(ctx, d, batch);
    default: return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm: unknown backend %d", (int)d->backend);
    }
}
