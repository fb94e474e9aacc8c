/* gemm.h — inside GEMM (lib/ops/gemm/); not installed, included by these files only.
 *
 * Three public calls multiply: clrun_gemm (A, B in f32, f16 or bf16), clrun_gemm_s8 (s8, int32 sums,
 * an epilogue) and clrun_gemm_sp (A 2:4 compressed). front.c checks each call once and turns it into
 * a plan: the descriptor with the batch count resolved, its kind, and what the kind adds. It then
 * picks a backend from the table below (d->backend, or the rules of CLRUN_GEMM_AUTO), copies the
 * operands into the layout that backend reads when they are not in it (one staging step, the same
 * for every backend), cuts deep float products into slices of K where the backend asks for it, and
 * calls the backend's launch.
 *
 * A backend is one file and one row: a kernel family (cl/NAME.cl) with the kinds and types it
 * multiplies, a probe (is it here, and does it compute correctly), what layout it reads, and its
 * launch. Adding a vendor's kernel is a .cl file, a file here defining its row, one line in
 * front.c's table and one test row. */
#ifndef CLRUN_GEMM_H
#define CLRUN_GEMM_H

#include "opkit.h"

/* The three kinds of product, one per public call. */
enum clrun__gemm_kind { CLRUN__GEMM_FLOAT, CLRUN__GEMM_S8, CLRUN__GEMM_SP, CLRUN__GEMM_KINDS };
#define CLRUN__GEMM_KIND_BIT(k) (1u << (k))

/* A checked product. d.batch ≥ 1; operands that are never read (K = 0) may be NULL (bind C in
 * their place). */
typedef struct clrun__gemm_plan {
    clrun_gemm_desc d;
    enum clrun__gemm_kind kind;
    const char *what;           /* the call's name in messages: "gemm", "gemm s8", "gemm sp" */
    const clrun_s8_epilogue *e; /* S8: the epilogue, or NULL */
    clrun_buf *meta;            /* SP: A's metadata (packed rows of clrun_sp24_km(K) words) ... */
    size_t meta_off;            /* ... from this word */
    int cuda;                   /* probes: their buffers shared with CUDA (clrun__buf_new_cuda), for driver launches */
} clrun__gemm_plan;

/* What a backend reads directly; front.c stages other layouts into it. */
#define CLRUN__GEMM_ROWS16 1u  /* rows, offsets and batch strides of A and B on 16 bytes (A's values, for SP) */
#define CLRUN__GEMM_NT 2u      /* A stored M×K and B stored N×K (trans_a 0, trans_b 1); s8 only */
#define CLRUN__GEMM_SLICE_K 4u /* one work-item walks all of K: products deeper than 4096 run in slices */

/* ---- tiles: a backend's tile parameters as named data (tuning.c) ------------------------------------ */

#define CLRUN__GEMM_TILE_MAX 8

/* A product `clrun tune gemm` measures a row's tiles on: its kind and element type, its size (n³: 0
 * the tuner's large size N, 1 N/4, 2 N but at most 4096, 3 8192), clrun_gemm_desc.fast, and the key
 * its fastest tiles are stored under in the tuning file. */
typedef struct clrun__gemm_tune_point {
    const char *key;
    enum clrun__gemm_kind kind;
    clrun_dtype type;
    int size, fast;
} clrun__gemm_tune_point;

/* A backend's tiles: the kernel's parameters by name, in the order a set lists them. Where a set for
 * a product comes from, last wins: the row's built-in choice (its launch code, measured), the tuning
 * file's set for the row and the product's key, $CLRUN_GEMM_TILES's for the row (tuning.c,
 * clrun__gemm_tiles_for). Every set is checked against the device by `check` before use. */
typedef struct clrun__gemm_tiles {
    unsigned count;                          /* parameters in a set (≤ CLRUN__GEMM_TILE_MAX) */
    const char *names[CLRUN__GEMM_TILE_MAX]; /* their names: the kernel's macros ("TM", "TN", ...) */
    unsigned min;                            /* a positional set in $CLRUN_GEMM_TILES gives at least these many ... */
    unsigned tail[CLRUN__GEMM_TILE_MAX];     /* ... and those it leaves out take these values */
    /* the key of p's tiles in the tuning file ("large", "f16-large", ...; keys are the row's to name) */
    const char *(*key)(clrun_ctx *ctx, const struct clrun__gemm_plan *p);
    /* NULL when this device can run set v for p; else what is wrong, a phrase for the refusal */
    const char *(*check)(const clrun_device_info *in, const struct clrun__gemm_plan *p, const unsigned *v);
    /* what `clrun tune gemm` measures: the products, and per product the candidate sets (the row's
     * built-in choice first; quick: a handful) written to out (at most max); returns how many */
    const clrun__gemm_tune_point *points;
    size_t npoints;
    size_t (*space)(const clrun_device_info *in, const clrun__gemm_tune_point *pt, int quick, unsigned (*out)[CLRUN__GEMM_TILE_MAX],
                    size_t max);
} clrun__gemm_tiles;

typedef struct clrun__gemm_backend {
    clrun_gemm_backend id;              /* the public value (clrun.h) */
    const char *name;                   /* clrun_gemm_backend_name's, the tuning file's and the CLI's name */
    const char *needs;                  /* why it may not be here, for the refusal ("it needs NVIDIA's OpenCL and ...") */
    unsigned kinds;                     /* CLRUN__GEMM_KIND_BIT of each kind it multiplies */
    int tensor;                         /* 1: one of CLRUN_GEMM_TENSOR's kernels (tried in table order) */
    unsigned layout[CLRUN__GEMM_KINDS]; /* per kind: CLRUN__GEMM_ROWS16 | NT | SLICE_K */
    /* 1 when it runs here for this kind: NULL, always; else asked once per context and kind (front.c
     * keeps the answer), by building and checking a small product; on a wrong result the context's
     * error says why. */
    int (*probe)(clrun_ctx *ctx, enum clrun__gemm_kind kind);
    /* NULL when it takes this plan (of a kind it multiplies); else why not, a sentence that follows
     * "gemm: " ("CLBlast has no GEMM with f16 ..."). NULL function: it takes every plan of its kinds. */
    const char *(*refuses)(clrun_ctx *ctx, const clrun__gemm_plan *p);
    /* NULL, or 1 when, among the tensor-core kernels (auto, CLRUN_GEMM_TENSOR), the next one that takes
     * this plan should run it instead: measured faster there. Named explicitly, it still runs it. */
    int (*defers)(clrun_ctx *ctx, const clrun__gemm_plan *p);
    /* Queue the product; the plan is in the layout `layout` asks for, with K ≤ 4096 when it asks for
     * slices. */
    clrun_status (*launch)(clrun_ctx *ctx, const clrun__gemm_plan *p);
    const clrun__gemm_tiles *tiles; /* NULL: no tile parameters */
} clrun__gemm_backend;

/* The rows, one per line of backends.def, each defined in its family's folder. */
#define CLRUN_GEMM_BACKEND(family, row) extern const clrun__gemm_backend clrun__gemm_##row;
#include "backends.def"
#undef CLRUN_GEMM_BACKEND

/* The row of the backend with public value id; NULL for the choices (auto, kernel, tensor) and
 * unknown values. */
const clrun__gemm_backend *clrun__gemm_row(clrun_gemm_backend id);

/* The i-th row of backends.def; NULL past the last. */
const clrun__gemm_backend *clrun__gemm_row_at(size_t i);

/* 1 when p's operands are already in the layout `need` asks for (CLRUN__GEMM_ROWS16, NT) (stage.c). */
int clrun__gemm_in_layout(const clrun__gemm_plan *p, unsigned need);
/* Copy rows × cols 16-bit elements of each batch from src (element off, rows ld apart, batches
 * stride apart) into dst from element dst_off, rows ldd apart, batches rows·ldd apart (stage.c). */
clrun_status clrun__gemm_copy_rows16(clrun_ctx *ctx, clrun_buf *src, size_t off, size_t ld, size_t stride, size_t rows, size_t cols,
                                     size_t batch, clrun_buf *dst, size_t dst_off, size_t ldd);

/* ---- front.c and stage.c: services for the backends ------------------------------------------------------- */

/* Run p on backend b as clrun_gemm would once b is chosen: stage the operands into b's layout,
 * slice K, launch. For probes. */
clrun_status clrun__gemm_run_on(clrun_ctx *ctx, const clrun__gemm_backend *b, const clrun__gemm_plan *p);

/* A probe's product: a and b uploaded to fresh buffers bound to p (C of cbytes), run on backend be,
 * C read back; 1 when it equals want. */
int clrun__gemm_probe(clrun_ctx *ctx, const clrun__gemm_backend *be, clrun__gemm_plan *p, const void *a, size_t abytes, const void *b,
                      size_t bbytes, const void *want, size_t cbytes);

/* The 2:4 probe: a 40×24×80 f16 product (A compressed, edges in every dimension; B K×N, or N×K with
 * tb) on backend be; 1 when exact. */
int clrun__gemm_probe_sp(clrun_ctx *ctx, const clrun__gemm_backend *be, int tb, int cuda);

/* ---- nv/tmap_nv.c: tensor maps for Hopper's TMA, from the CUDA driver (loaded on first use) ------- */

/* 1 where tensor maps can be made for ctx's device (the CUDA driver loaded, the device matched, its
 * primary context retained); the first call does that. */
int clrun__tmap_available(clrun_ctx *ctx);
/* A tiled tensor map of the tensor at byte byte_off of b: CUtensorMapDataType dtype, rank 2 or 3,
 * dims and box innermost first, strides[rank - 1] in bytes, swizzle 0 none / 1 32 B / 2 64 B / 3
 * 128 B, out-of-bounds elements read as zeros. It is in *slots at 128-byte slot *index, written
 * on the current queue ahead of anything queued after this call. cuda: for a kernel launched
 * through the CUDA driver — b's CUDA address, *slots shared with CUDA. */
clrun_status clrun__tmap(clrun_ctx *ctx, clrun_buf *b, size_t byte_off, int dtype, unsigned rank, const uint64_t *dims,
                         const uint64_t *strides, const uint32_t *box, int swizzle, int cuda, clrun_buf **slots, size_t *index);

/* The GPU-shaped kernels' shared argument list (lib/ops/gemm/portable/gemm.cl, lib/ops/gemm/nv/gemm_mma_nv.cl, lib/ops/gemm/nv/gemm_wgmma_nv.cl):
 * (M, N, K, alpha, beta, A, a_off, lda, stride_a, B, b_off, ldb, stride_b, C, c_off, ldc, stride_c),
 * bound and launched. An operand that is never read (NULL) is C, with leading dimension ld0. */
clrun_status clrun__gemm_launch_shaped(clrun_kernel *k, clrun__grid g, const clrun_gemm_desc *d, size_t ld0);
/* The INT8 kernels' list: clrun__gemm_launch_shaped's with alpha 1 and beta 0 (unused), then the
 * epilogue's buffers and flags (lib/ops/gemm/s8_epilogue.h); e may be NULL. */
clrun_status clrun__gemm_launch_s8(clrun_kernel *k, clrun__grid g, const clrun_gemm_desc *d, size_t ld0, const clrun_s8_epilogue *e);

/* C's rows, offset and batch stride on 8 bytes (the tensor kernels then store two floats at once). */
static inline int clrun__gemm_c2(const clrun_gemm_desc *d)
{
    return d->c_off % 2 == 0 && d->ldc % 2 == 0 && (d->batch == 1 || d->stride_c % 2 == 0);
}

/* ---- tuning.c: the tuning file and shape classes ---------------------------------------------- */

/* What `clrun tune gemm` measured on this device, read once per context. */
#define CLRUN__GEMM_TUNED_MAX 64
typedef struct clrun__gemm_tuning {
    clrun_gemm_backend backend[4]; /* the fastest backend per shape class (f32); CLRUN_GEMM_AUTO: none */
    size_t ntiles;
    struct {
        clrun_gemm_backend row; /* a row with tiles */
        char key[24];           /* its key for the product (clrun__gemm_tiles.key) */
        unsigned v[CLRUN__GEMM_TILE_MAX];
    } tiles[CLRUN__GEMM_TUNED_MAX];
} clrun__gemm_tuning;

/* The context's tuning (a zeroed one where there is no file); NULL when out of memory. */
const clrun__gemm_tuning *clrun__gemm_tuned(clrun_ctx *ctx);
/* The shape class of d (index of clrun.h's small, large, small-fast, large-fast). */
int clrun__gemm_class(const clrun_ctx *ctx, const clrun_gemm_desc *d);
/* The class's name ("small", "large", "small-fast", "large-fast"). */
const char *clrun__gemm_class_name(int cls);

/* The tiles backend b runs p with. v holds b's built-in choice on entry; the tuning file's set for b
 * and p's key replaces it where the device can run it; then $CLRUN_GEMM_TILES's for b: a positional
 * set replaces it, named values replace theirs. A malformed variable, or one whose set the device
 * cannot run, is refused (CLRUN_INVALID_ARG, naming it). *from (may be NULL): 0 built-in, 1 the
 * tuning file, 2 the variable. */
/* While a tuner measures a set: "ROW:SET" read in place of $CLRUN_GEMM_TILES on this context (NULL:
 * the variable again); and a row's tuned set for a key, in place of the tuning file's. */
clrun_status clrun__gemm_tiles_override(clrun_ctx *ctx, const char *spec);
clrun_status clrun__gemm_tuned_set(clrun_ctx *ctx, clrun_gemm_backend row, const char *key, const unsigned *v);
clrun_status clrun__gemm_tiles_for(clrun_ctx *ctx, const clrun__gemm_backend *b, const clrun__gemm_plan *p,
                                   unsigned v[CLRUN__GEMM_TILE_MAX], int *from);

#endif
