/* front.c — GEMM's front end: the table of backends, the three public calls (clrun_gemm,
 * clrun_gemm_s8, clrun_gemm_sp) checked in one place, the choice of backend, and the queries
 * (resolve, names, matrix units); the staging step and slices of K are in stage.c. gemm.h says how
 * the parts fit. */
#include "gemm.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Every backend, in the order CLRUN_GEMM_TENSOR tries its kernels (backends.def). */
static const clrun__gemm_backend *const table[] = {
#define CLRUN_GEMM_BACKEND(family, row) &clrun__gemm_##row,
#include "backends.def"
#undef CLRUN_GEMM_BACKEND
};
#define NROWS (sizeof table / sizeof *table)

/* The values of clrun_gemm_backend that choose among the rows rather than name one. */
static const struct {
    clrun_gemm_backend id;
    const char *name;
} choices[] = {{CLRUN_GEMM_AUTO, "auto"}, {CLRUN_GEMM_KERNEL, "kernel"}, {CLRUN_GEMM_TENSOR, "tensor"}};
#define NCHOICES (sizeof choices / sizeof *choices)

static const char *const kind_words[CLRUN__GEMM_KINDS] = {"f32, f16 or bf16 products", "INT8 products", "2:4 sparse products"};

/* ---- names -------------------------------------------------------------------------------------- */

const char *clrun_gemm_backend_name(clrun_gemm_backend b)
{
    for (size_t i = 0; i < NCHOICES; i++)
        if (choices[i].id == b) return choices[i].name;
    for (size_t i = 0; i < NROWS; i++)
        if (table[i]->id == b) return table[i]->name;
    return "?";
}

clrun_status clrun_gemm_backend_parse(const char *name, clrun_gemm_backend *out)
{
    if (!name || !out) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_gemm_backend_parse: NULL argument");
    char all[160] = "";
    for (size_t i = 0; i < NCHOICES + NROWS; i++) {
        const char *n = i < NCHOICES ? choices[i].name : table[i - NCHOICES]->name;
        if (strcmp(name, n) == 0) return *out = i < NCHOICES ? choices[i].id : table[i - NCHOICES]->id, CLRUN_OK;
        snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", i ? ", " : "", n);
    }
    return clrun__fail(NULL, CLRUN_INVALID_ARG, "unknown GEMM backend '%s' (%s)", name, all);
}

/* ---- which backends are here -------------------------------------------------------------------- */

struct front_state {
    signed char here[NROWS][CLRUN__GEMM_KINDS]; /* 0 not asked yet, 1 runs here, -1 not here (or being probed) */
};
static const char state_key = 0;

static size_t row_index(const clrun__gemm_backend *b)
{
    size_t i = 0;
    while (i < NROWS && table[i] != b) i++;
    return i;
}

const clrun__gemm_backend *clrun__gemm_row_at(size_t i) { return i < NROWS ? table[i] : NULL; }

const clrun__gemm_backend *clrun__gemm_row(clrun_gemm_backend id)
{
    for (size_t i = 0; i < NROWS; i++)
        if (table[i]->id == id) return table[i];
    return NULL;
}

/* 1 when backend b multiplies products of this kind on this context (its probe, once). */
static int here(clrun_ctx *ctx, const clrun__gemm_backend *b, enum clrun__gemm_kind kind)
{
    if (!(b->kinds & CLRUN__GEMM_KIND_BIT(kind))) return 0;
    if (!b->probe) return 1;
    struct front_state *s = clrun__op_state(ctx, &state_key, sizeof *s, NULL);
    const size_t i = row_index(b);
    if (!s || i == NROWS) return 0;
    if (!s->here[i][kind]) {
        s->here[i][kind] = -1; /* a probe's own products never ask again */
        s->here[i][kind] = b->probe(ctx, kind) ? 1 : -1;
    }
    return s->here[i][kind] == 1;
}

/* The first matrix-unit backend, in table order, that is here and takes p; NULL if none. */
static const clrun__gemm_backend *first_tensor(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    const clrun__gemm_backend *deferred = NULL; /* taken where no later one takes the plan */
    for (size_t i = 0; i < NROWS; i++)
        if (table[i]->tensor && here(ctx, table[i], p->kind) && !(table[i]->refuses && table[i]->refuses(ctx, p))) {
            if (!(table[i]->defers && table[i]->defers(ctx, p))) return table[i];
            if (!deferred) deferred = table[i];
        }
    return deferred;
}

/* ---- launching ---------------------------------------------------------------------------------- */

clrun_status clrun__gemm_launch_shaped(clrun_kernel *k, clrun__grid g, const clrun_gemm_desc *d, size_t ld0)
{
    clrun_buf *a = d->a ? d->a : d->c, *b = d->b ? d->b : d->c;
    return CLRUN__RUN(k, g, ARG_U32(d->m), ARG_U32(d->n), ARG_U32(d->k), ARG_F32(d->alpha), ARG_F32(d->beta), ARG_BUF(a), ARG_U64(d->a_off),
                      ARG_U32(d->lda ? d->lda : ld0), ARG_U64(d->stride_a), ARG_BUF(b), ARG_U64(d->b_off), ARG_U32(d->ldb ? d->ldb : ld0),
                      ARG_U64(d->stride_b), ARG_BUF(d->c), ARG_U64(d->c_off), ARG_U32(d->ldc), ARG_U64(d->stride_c));
}

clrun_status clrun__gemm_launch_s8(clrun_kernel *k, clrun__grid g, const clrun_gemm_desc *d, size_t ld0, const clrun_s8_epilogue *e)
{
    clrun_buf *a = d->a ? d->a : d->c, *b = d->b ? d->b : d->c;
    return CLRUN__RUN(k, g, ARG_U32(d->m), ARG_U32(d->n), ARG_U32(d->k), ARG_F32(1.0f), ARG_F32(0.0f), ARG_BUF(a), ARG_U64(d->a_off),
                      ARG_U32(d->lda ? d->lda : ld0), ARG_U64(d->stride_a), ARG_BUF(b), ARG_U64(d->b_off), ARG_U32(d->ldb ? d->ldb : ld0),
                      ARG_U64(d->stride_b), ARG_BUF(d->c), ARG_U64(d->c_off), ARG_U32(d->ldc), ARG_U64(d->stride_c),
                      ARG_BUF(e ? e->row_scale : NULL), ARG_BUF(e ? e->col_scale : NULL), ARG_BUF(e ? e->bias : NULL),
                      ARG_I32((e && e->relu ? 1 : 0) | (d->beta == 1.0f ? 2 : 0)));
}

/* ---- the choice --------------------------------------------------------------------------------- */

/* The backend p runs on; NULL with the context's error (and *st) saying why none. */
static const clrun__gemm_backend *choose(clrun_ctx *ctx, const clrun__gemm_plan *p, clrun_status *st)
{
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const clrun__gemm_backend *own = in->type == CLRUN_DEVICE_CPU ? &clrun__gemm_cpu : &clrun__gemm_portable;
    const clrun_gemm_backend want = p->d.backend;
    *st = CLRUN_OK;
    if (want == CLRUN_GEMM_AUTO) {
        /* the tensor cores where they take the product (f32 only on large products, below: 3xTF32 is
         * no faster than the SIMT kernel on small ones); float rows that must be staged first only when the product
         * is large enough (1 GFLOP) for the copies to pay: on the H200 127×8191×64 ran at 3.9 TFLOP/s
         * staged against 5.7 portable, 8191×127×4096 at 41 against 18. INT8 and 2:4 are staged at any
         * size: their tensor kernels read only A M×K and B N×K (INT8) or rows on 16 bytes, and the
         * portable kernels they would fall back to are the slowest of the set. */
        if (p->kind != CLRUN__GEMM_FLOAT || p->d.type != CLRUN_F32) {
            const clrun__gemm_backend *t = first_tensor(ctx, p);
            const double flops = 2.0 * (double)p->d.m * (double)p->d.n * (double)p->d.k * (double)p->d.batch;
            if (t && (p->kind != CLRUN__GEMM_FLOAT || clrun__gemm_in_layout(p, t->layout[p->kind]) || flops >= 0x1p30)) return t;
        }
        /* the tuning file's measured winner for the shape class (it measured f32 products, 3xTF32 on
         * the tensor cores among them), else clrun's kernel for the device: on the devices measured
         * it beats CLBlast in every class. A tensor-core winner under the same rule as above: operands
         * in its layout, or a product large enough for the staging copies to pay. */
        const clrun__gemm_tuning *tu = p->kind == CLRUN__GEMM_FLOAT ? clrun__gemm_tuned(ctx) : NULL;
        const clrun_gemm_backend tuned = tu ? tu->backend[clrun__gemm_class(ctx, &p->d)] : CLRUN_GEMM_AUTO;
        const double flops = 2.0 * (double)p->d.m * (double)p->d.n * (double)p->d.k * (double)p->d.batch;
        for (size_t i = 0; tuned != CLRUN_GEMM_AUTO && i < NROWS; i++)
            if (table[i]->id == tuned && here(ctx, table[i], p->kind) && !(table[i]->refuses && table[i]->refuses(ctx, p)) &&
                (!table[i]->tensor || clrun__gemm_in_layout(p, table[i]->layout[p->kind]) || flops >= 0x1p30))
                return table[i];
        /* untuned f32: the matrix units (3xTF32, as accurate as the SIMT kernel: test_mixed) from
         * 2^32 flops on, where they won every shape measured on the H200: 4096×4096×256 at 38.3
         * TFLOP/s against 29.4, 8192³ at 53.7 against 43.0 (cuBLAS 50.2); below, at 1024³, they
         * lost (16.8 against 24.5) */
        if (tuned == CLRUN_GEMM_AUTO && p->kind == CLRUN__GEMM_FLOAT && p->d.type == CLRUN_F32 && flops >= 0x1p32) {
            const clrun__gemm_backend *t = first_tensor(ctx, p);
            if (t) return t;
        }
        return own;
    }
    if (want == CLRUN_GEMM_KERNEL) return own;
    if (want == CLRUN_GEMM_TENSOR) {
        const clrun__gemm_backend *t = first_tensor(ctx, p);
        if (t) return t;
        for (size_t i = 0; i < NROWS; i++) /* here, but not for this product */
            if (table[i]->tensor && here(ctx, table[i], p->kind) && table[i]->refuses && table[i]->refuses(ctx, p)) {
                *st = clrun__fail(ctx, CLRUN_UNSUPPORTED, "%s: %s", p->what, table[i]->refuses(ctx, p));
                return NULL;
            }
        char needs[1024] = "";
        size_t n = 0;
        for (size_t i = 0; i < NROWS && n < sizeof needs; i++) /* what each matrix-unit backend needs */
            if (table[i]->tensor)
                n += (size_t)snprintf(needs + n, sizeof needs - n, "%s%s: %s", n ? "; " : "", table[i]->name, table[i]->needs);
        *st = clrun__fail(ctx, CLRUN_UNSUPPORTED, "%s: no matrix-unit kernel for %s on %s (%s)", p->what, kind_words[p->kind], in->name,
                          needs);
        return NULL;
    }
    for (size_t i = 0; i < NROWS; i++) {
        const clrun__gemm_backend *b = table[i];
        const char *why;
        if (b->id != want) continue;
        if (!(b->kinds & CLRUN__GEMM_KIND_BIT(p->kind)))
            *st = clrun__fail(ctx, CLRUN_UNSUPPORTED, "%s: the %s backend has no kernel for %s", p->what, b->name, kind_words[p->kind]);
        else if (!here(ctx, b, p->kind))
            *st = clrun__fail(ctx, CLRUN_UNSUPPORTED, "%s: the %s backend does not run on %s: %s", p->what, b->name, in->name, b->needs);
        else if (b->refuses && (why = b->refuses(ctx, p))) *st = clrun__fail(ctx, CLRUN_UNSUPPORTED, "%s: %s", p->what, why);
        return *st ? NULL : b;
    }
    *st = clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: unknown backend %d", p->what, (int)want);
    return NULL;
}

/* ---- the public calls --------------------------------------------------------------------------- */

/* rows × cols elements of esize bytes from element off, rows ld apart, batch matrices stride apart,
 * inside b (NULL only when empty); the failure names the call and the operand. */
static clrun_status check_matrix(clrun_ctx *ctx, const char *what, const char *name, clrun_buf *b, size_t esize, size_t off, size_t ld,
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

/* The checks every call shares, on p->d (batch already resolved): C, dimensions, batches of C, and
 * each operand inside its buffer. A's stored columns: ak (K, or K/2 values for 2:4). */
static clrun_status check_common(clrun_ctx *ctx, const clrun__gemm_plan *p, size_t ak)
{
    const clrun_gemm_desc *d = &p->d;
    const size_t batch = d->batch, es = clrun_dtype_size(d->type);
    clrun_status st;
    if (!d->c) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: matrix C is NULL", p->what);
    if (d->m > UINT32_MAX || d->n > UINT32_MAX || d->k > UINT32_MAX)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: M, N and K are limited to 2^32 - 1", p->what);
    if (batch > 1 && d->stride_c == 0) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: batches need stride_c > 0", p->what);
    if (batch > 1 && d->stride_c < d->m * d->ldc)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: stride_c %zu makes the batches' C matrices overlap", p->what, d->stride_c);
    const size_t ar = d->trans_a ? d->k : d->m, ac = d->trans_a ? d->m : ak, br = d->trans_b ? d->n : d->k, bc = d->trans_b ? d->k : d->n;
    if ((st = check_matrix(ctx, p->what, "A", d->a, es, d->a_off, d->lda, d->stride_a, ar, ac, batch)) ||
        (st = check_matrix(ctx, p->what, "B", d->b, es, d->b_off, d->ldb, d->stride_b, br, bc, batch)) ||
        (st = check_matrix(ctx, p->what, "C", d->c, 4, d->c_off, d->ldc, d->stride_c, d->m, d->n, batch)))
        return st;
    return CLRUN_OK;
}

/* Choose and run a checked plan. */
static clrun_status run(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    clrun_status st;
    const clrun__gemm_backend *b = choose(ctx, p, &st);
    return b ? clrun__gemm_run_on(ctx, b, p) : st;
}

clrun_status clrun_gemm(clrun_ctx *ctx, const clrun_gemm_desc *d)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_gemm: ctx is NULL");
    CLRUN__SERIAL(ctx);
    clrun_status st;
    if (!d) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm: descriptor is NULL");
    clrun__gemm_plan p = {.d = *d, .kind = CLRUN__GEMM_FLOAT, .what = "gemm"};
    p.d.batch = d->batch ? d->batch : 1;
    if (d->m == 0 || d->n == 0) return CLRUN_OK;
    if (clrun__float_code(d->type) < 0)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm: unknown element type %s (%d) for A and B: f32, f16 or bf16",
                           clrun_dtype_name(d->type), (int)d->type);
    if ((st = check_common(ctx, &p, d->k))) return st;
    return run(ctx, &p);
}

clrun_status clrun_gemm_s8(clrun_ctx *ctx, const clrun_gemm_desc *d, const clrun_s8_epilogue *e)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_gemm_s8: ctx is NULL");
    CLRUN__SERIAL(ctx);
    clrun_status st;
    if (!d) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm s8: descriptor is NULL");
    if (d->type != CLRUN_I8)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm s8: the descriptor's type must be CLRUN_I8 (it is %s)", clrun_dtype_name(d->type));
    if (d->alpha != 1.0f || (d->beta != 0.0f && (d->beta != 1.0f || e)))
        return clrun__fail(ctx, CLRUN_INVALID_ARG,
                           "gemm s8: alpha is 1 and beta 0 (or 1 to add into an int32 C); scale through the epilogue");
    clrun__gemm_plan p = {.d = *d, .kind = CLRUN__GEMM_S8, .what = "gemm s8", .e = e};
    p.d.batch = d->batch ? d->batch : 1;
    if (d->m == 0 || d->n == 0) return CLRUN_OK;
    if (d->k > 131072)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm s8: K = %zu: int32 sums of 128·128 products are exact only for K up to 131072",
                           d->k);
    if (p.d.batch > 65535) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm s8: at most 65535 batches");
    if ((st = check_common(ctx, &p, d->k))) return st;
    if (e && ((e->row_scale && clrun_buf_size(e->row_scale) < d->m * 4) || (e->col_scale && clrun_buf_size(e->col_scale) < d->n * 4) ||
              (e->bias && clrun_buf_size(e->bias) < d->n * 4)))
        return clrun__fail(ctx, CLRUN_INVALID_ARG,
                           "gemm s8: an epilogue buffer is shorter than its M (row scales) or N (column scales, bias) floats");
    return run(ctx, &p);
}

/* ---- 2:4 under auto: never slower than dense ---------------------------------------------------- */

/* p's sparse product as a dense one: the values and metadata packed (rows of kv and km), expanded
 * into a dense A (batch·m rows of k: clrun_sp24_decompress) and multiplied by the dense kernels
 * (auto). f16/bf16. The temporaries are released once the queued work is done (OpenCL's rule). */
static clrun_status sp_as_dense(clrun_ctx *ctx, const clrun__gemm_plan *p)
{
    const clrun_gemm_desc *d = &p->d;
    const size_t kv = clrun_sp24_kv(d->k), km = clrun_sp24_km(d->k), rows = d->batch * d->m;
    clrun_buf *vals = NULL, *meta = NULL, *full = NULL;
    clrun_status st;
    if (!(st = clrun_buf_new(ctx, rows * kv * 2, 0, &vals)) && !(st = clrun_buf_new(ctx, rows * km * 4, 0, &meta)) &&
        !(st = clrun_buf_new(ctx, rows * d->k * 2, 0, &full)) &&
        !(st = clrun__gemm_copy_rows16(ctx, d->a, d->a_off, d->lda, d->stride_a, d->m, kv, d->batch, vals, 0, kv)) &&
        !(st = clrun_buf_copy(meta, 0, p->meta, p->meta_off * 4, rows * km * 4)) &&
        !(st = clrun_sp24_decompress(ctx, d->type, vals, meta, rows, d->k, full, 0, d->k))) {
        clrun_gemm_desc e = *d;
        e.a = full, e.a_off = 0, e.lda = d->k, e.stride_a = d->m * d->k, e.backend = CLRUN_GEMM_AUTO;
        st = clrun_gemm(ctx, &e);
    }
    clrun_buf_free(vals), clrun_buf_free(meta), clrun_buf_free(full);
    return st;
}

/* The verdicts of the sparse-or-dense measurement, per shape, per context. */
struct sp_entry {
    size_t m, n, k, batch;
    int type, tb, dense;
};
struct sp_choice {
    size_t n;
    struct sp_entry e[32];
};
static const char sp_key = 0;

static double ms_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Under auto, where the sparse product would run on a tensor-core kernel: whether the dense
 * kernels on the decompressed A are faster for this shape. Measured the first time a shape comes
 * (each way run once to build, then timed once, into a C of its own), kept per context; said under
 * $CLRUN_VERBOSE. */
static clrun_status sparse_or_dense(clrun_ctx *ctx, const clrun__gemm_plan *p, int *dense)
{
    const clrun_gemm_desc *d = &p->d;
    *dense = 0;
    if (d->backend != CLRUN_GEMM_AUTO || d->type == CLRUN_F32 || !first_tensor(ctx, p)) return CLRUN_OK;
    struct sp_choice *c = clrun__op_state(ctx, &sp_key, sizeof *c, NULL);
    if (!c) return CLRUN_HOST_OUT_OF_MEMORY;
    for (size_t i = 0; i < c->n; i++)
        if (c->e[i].m == d->m && c->e[i].n == d->n && c->e[i].k == d->k && c->e[i].batch == d->batch && c->e[i].type == (int)d->type &&
            c->e[i].tb == d->trans_b)
            return *dense = c->e[i].dense, CLRUN_OK;
    clrun_buf *tc = NULL;
    clrun_status st = clrun_buf_new(ctx, d->batch * d->m * d->n * 4, 0, &tc);
    double t[2] = {0, 0};
    clrun__gemm_plan q = *p;
    q.d.c = tc, q.d.c_off = 0, q.d.ldc = d->n, q.d.stride_c = d->m * d->n, q.d.beta = 0;
    for (int way = 0; way < 2 && !st; way++)
        for (int r = 0; r < 2 && !st; r++) {
            if ((st = clrun_finish(ctx))) break;
            const double t0 = ms_now();
            if ((st = way ? sp_as_dense(ctx, &q) : run(ctx, &q)) || (st = clrun_finish(ctx))) break;
            t[way] = ms_now() - t0;
        }
    clrun_buf_free(tc);
    if (st) return st;
    *dense = t[1] < t[0];
    if (c->n == sizeof c->e / sizeof c->e[0]) c->n = 0; /* full: start over */
    c->e[c->n++] = (struct sp_entry){d->m, d->n, d->k, d->batch, (int)d->type, d->trans_b, *dense};
    if (clrun__setting_on(CLRUN__SET_VERBOSE))
        fprintf(stderr, "clrun: gemm sp %zux%zux%zu %s under auto: sparse %.3f ms, dense on the decompressed A %.3f ms: %s\n", d->m, d->n,
                d->k, clrun_dtype_name(d->type), t[0], t[1], *dense ? "runs dense" : "runs sparse");
    return CLRUN_OK;
}

clrun_status clrun_gemm_sp(clrun_ctx *ctx, const clrun_gemm_desc *d, clrun_buf *meta, size_t meta_off)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_gemm_sp: ctx is NULL");
    CLRUN__SERIAL(ctx);
    clrun_status st;
    if (!d) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm sp: descriptor is NULL");
    if (clrun__float_code(d->type) < 0)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm sp: element type %s: 2:4 sparsity takes f32, f16 or bf16",
                           clrun_dtype_name(d->type));
    if (d->trans_a) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm sp: A is compressed along K, row by row: trans_a must be 0");
    clrun__gemm_plan p = {.d = *d, .kind = CLRUN__GEMM_SP, .what = "gemm sp", .meta = meta, .meta_off = meta_off};
    p.d.batch = d->batch ? d->batch : 1;
    if (d->m == 0 || d->n == 0) return CLRUN_OK;
    if (p.d.batch > 65535) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm sp: at most 65535 batches");
    if ((st = check_common(ctx, &p, clrun_sp24_kv(d->k)))) return st;
    const size_t km = clrun_sp24_km(d->k), words = p.d.batch * d->m * km;
    if (d->k && (!meta || meta_off > SIZE_MAX / 4 - words || (meta_off + words) > clrun_buf_size(meta) / 4))
        return clrun__fail(ctx, CLRUN_INVALID_ARG,
                           "gemm sp: the metadata needs %zu words (%zu batches × %zu rows × %zu) from word %zu; the buffer has %zu bytes",
                           words, p.d.batch, d->m, km, meta_off, meta ? clrun_buf_size(meta) : 0);
    if (!d->k) { /* C = beta·C: the portable kernel reads neither A nor B */
        p.d.a = p.d.b = NULL, p.d.lda = p.d.ldb = 1, p.meta = NULL;
        return clrun__gemm_portable.launch(ctx, &p);
    }
    int dense = 0;
    if ((st = sparse_or_dense(ctx, &p, &dense))) return st;
    return dense ? sp_as_dense(ctx, &p) : run(ctx, &p);
}

void clrun_gemm_desc_init(clrun_gemm_desc *d, clrun_dtype type, size_t batch, size_t m, size_t n, size_t k, int trans_a, int trans_b)
{
    if (!d) return;
    memset(d, 0, sizeof *d);
    d->type = type, d->batch = batch ? batch : 1, d->m = m, d->n = n, d->k = k, d->trans_a = trans_a != 0, d->trans_b = trans_b != 0;
    d->alpha = 1.0f, d->backend = CLRUN_GEMM_AUTO;
    d->lda = trans_a ? m : k, d->ldb = trans_b ? k : n, d->ldc = n;
    d->stride_a = m * k, d->stride_b = k * n, d->stride_c = m * n;
}

/* ---- queries ------------------------------------------------------------------------------------ */

clrun_gemm_backend clrun_gemm_resolve(clrun_ctx *ctx, const clrun_gemm_desc *d)
{
    CLRUN__SERIAL(ctx);
    if (!ctx || !d) return d ? d->backend : CLRUN_GEMM_AUTO;
    clrun__gemm_plan p = {.d = *d, .kind = d->type == CLRUN_I8 ? CLRUN__GEMM_S8 : CLRUN__GEMM_FLOAT, .what = "gemm"};
    p.d.batch = d->batch ? d->batch : 1;
    clrun_status st;
    const clrun__gemm_backend *b = choose(ctx, &p, &st);
    return b ? b->id : d->backend;
}

int clrun_gemm_tensor_cores(clrun_ctx *ctx)
{
    if (!ctx) return 0;
    CLRUN__SERIAL(ctx);
    for (size_t i = 0; i < NROWS; i++)
        if (table[i]->tensor && here(ctx, table[i], CLRUN__GEMM_FLOAT)) return 1;
    return 0;
}

const char *clrun_gemm_tensor_kernel(clrun_ctx *ctx, clrun_dtype type)
{
    if (!ctx) return NULL;
    CLRUN__SERIAL(ctx);
    if (!ctx || (type != CLRUN_I8 && clrun__float_code(type) < 0)) return NULL;
    clrun__gemm_plan p = {.kind = type == CLRUN_I8 ? CLRUN__GEMM_S8 : CLRUN__GEMM_FLOAT, .what = "gemm"};
    p.d.type = type, p.d.batch = 1;
    const clrun__gemm_backend *b = first_tensor(ctx, &p);
    return b ? b->name : NULL;
}
