/* sparse.c — 2:4 structured sparsity (cl/sparse.cl): prune, compress, decompress, and the sparse
 * GEMM with A compressed: NVIDIA's sparse tensor cores (mma.sp in cl/gemm_mma_nv.cl, chosen by a
 * probe), CPUs (cl/gemm_cpu.cl: half the FMAs of the dense kernel), other GPUs (cl/sparse.cl). The
 * layout is in clrun.h. */
#include "op.h"

#include <stdio.h>
#include <string.h>

size_t clrun_sp24_kv(size_t k) { return 2 * ((k + 3) / 4); }
size_t clrun_sp24_km(size_t k) { return (k + 31) / 32; }

clrun_status clrun_sp24_meta_check(const uint32_t *meta, size_t rows, size_t k, size_t *bad_row, size_t *bad_group)
{
    const size_t km = clrun_sp24_km(k), groups = (k + 3) / 4;
    if (!meta && rows && k) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_sp24_meta_check: meta is NULL");
    for (size_t r = 0; r < rows; r++)
        for (size_t g = 0; g < groups; g++) {
            const unsigned e = (meta[r * km + g / 8] >> (4 * (g % 8))) & 15, lo = e & 3, hi = e >> 2;
            if (lo < hi) continue;
            if (bad_row) *bad_row = r;
            if (bad_group) *bad_group = g;
            return clrun__fail(NULL, CLRUN_FORMAT_ERROR,
                               "2:4 metadata: row %zu, group %zu (columns %zu-%zu) names columns %u and %u; two distinct columns, the "
                               "lower first, are needed (metadata as clrun op sparsify or clrun_sp24_compress writes it)",
                               r, g, 4 * g, 4 * g + 3, lo, hi);
        }
    return CLRUN_OK;
}

static clrun_status check_type(clrun_ctx *ctx, const char *what, clrun_dtype t)
{
    if (clrun__float_code(t) < 0)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: element type %s: 2:4 sparsity takes f32, f16 or bf16", what, clrun_dtype_name(t));
    return CLRUN_OK;
}

/* buf holds `count` elements of `es` bytes from element off (overflow-safe). */
static int fits(clrun_buf *buf, size_t off, size_t count, size_t es)
{
    return buf && off <= SIZE_MAX / es - count && (off + count) <= clrun_buf_size(buf) / es;
}

/* The dense rows × k matrix from element off with leading dimension ld lies inside x. */
static clrun_status check_dense(clrun_ctx *ctx, const char *what, clrun_buf *x, size_t es, size_t off, size_t ld, size_t rows, size_t k)
{
    if (!x) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: the dense matrix is NULL", what);
    if (ld < k) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: leading dimension %zu is smaller than K = %zu", what, ld, k);
    if (rows > UINT32_MAX || k > UINT32_MAX || ld > UINT32_MAX)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: rows, K and the leading dimension are below 2^32", what);
    if ((rows - 1) > (SIZE_MAX - k) / ld || !fits(x, off, (rows - 1) * ld + k, es))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: the %zu×%zu matrix (ld %zu, from element %zu) runs past its buffer of %zu bytes", what,
                           rows, k, ld, off, clrun_buf_size(x));
    return CLRUN_OK;
}

static clrun_status check_compressed(clrun_ctx *ctx, const char *what, clrun_buf *values, clrun_buf *meta, size_t es, size_t rows, size_t k)
{
    const size_t kv = clrun_sp24_kv(k), km = clrun_sp24_km(k);
    if (!values || !meta) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: values or metadata buffer is NULL", what);
    if (rows > SIZE_MAX / kv / es || !fits(values, 0, rows * kv, es))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: values need %zu×%zu elements (%zu bytes); the buffer has %zu", what, rows, kv,
                           rows * kv * es, clrun_buf_size(values));
    if (!fits(meta, 0, rows * km, 4))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: metadata needs %zu×%zu words (%zu bytes); the buffer has %zu", what, rows, km,
                           rows * km * 4, clrun_buf_size(meta));
    return CLRUN_OK;
}

static clrun_status kernel(clrun_ctx *ctx, clrun_dtype t, const char *name, clrun_kernel **k)
{
    char opts[16];
    snprintf(opts, sizeof opts, "-DABT=%d", clrun__float_code(t));
    return clrun__lib_kernel(ctx, "sparse", opts, name, k);
}

clrun_status clrun_sp24_prune(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t off, size_t ld, size_t rows, size_t k)
{
    CLRUN__SERIAL(ctx);
    clrun_status st;
    clrun_kernel *kn;
    if (!rows || !k) return CLRUN_OK;
    if ((st = check_type(ctx, "sp24 prune", t)) || (st = check_dense(ctx, "sp24 prune", x, clrun_dtype_size(t), off, ld, rows, k)) ||
        (st = kernel(ctx, t, "clrun_sp24_prune", &kn)))
        return st;
    return CLRUN__RUN(kn, ((clrun__grid){2, {(k + 3) / 4, rows, 1}, {0}}), ARG_BUF(x), ARG_U64(off), ARG_U32(ld), ARG_U32(rows), ARG_U32(k));
}

clrun_status clrun_sp24_compress(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t off, size_t ld, size_t rows, size_t k, clrun_buf *values,
                                 clrun_buf *meta)
{
    CLRUN__SERIAL(ctx);
    clrun_status st;
    clrun_kernel *kn;
    if (!rows || !k) return CLRUN_OK;
    const size_t es = clrun_dtype_size(t);
    if ((st = check_type(ctx, "sp24 compress", t)) || (st = check_dense(ctx, "sp24 compress", x, es, off, ld, rows, k)) ||
        (st = check_compressed(ctx, "sp24 compress", values, meta, es, rows, k)) || (st = kernel(ctx, t, "clrun_sp24_compress", &kn)))
        return st;
    return CLRUN__RUN(kn, ((clrun__grid){2, {clrun_sp24_km(k), rows, 1}, {0}}), ARG_BUF(x), ARG_U64(off), ARG_U32(ld), ARG_U32(rows),
                      ARG_U32(k), ARG_BUF(values), ARG_BUF(meta));
}

clrun_status clrun_sp24_decompress(clrun_ctx *ctx, clrun_dtype t, clrun_buf *values, clrun_buf *meta, size_t rows, size_t k, clrun_buf *x,
                                   size_t off, size_t ld)
{
    CLRUN__SERIAL(ctx);
    clrun_status st;
    clrun_kernel *kn;
    if (!rows || !k) return CLRUN_OK;
    const size_t es = clrun_dtype_size(t);
    if ((st = check_type(ctx, "sp24 decompress", t)) || (st = check_dense(ctx, "sp24 decompress", x, es, off, ld, rows, k)) ||
        (st = check_compressed(ctx, "sp24 decompress", values, meta, es, rows, k)) || (st = kernel(ctx, t, "clrun_sp24_decompress", &kn)))
        return st;
    return CLRUN__RUN(kn, ((clrun__grid){2, {clrun_sp24_km(k), rows, 1}, {0}}), ARG_BUF(values), ARG_BUF(meta), ARG_U32(rows), ARG_U32(k),
                      ARG_BUF(x), ARG_U64(off), ARG_U32(ld));
}

/* ---- the sparse GEMM ---------------------------------------------------------------------------- */

struct sp_state {
    int form; /* 0: not probed; -1: no sparse tensor cores; else the kernel's form (clrun__gemm_sp_tensor) */
};
static const char sp_key = 0;

static int tensor_form(clrun_ctx *ctx);

/* The tensor-core kernel's layout needs: f16/bf16, A's value rows and B's rows on 16 bytes. */
static int tensor_layout(const clrun_gemm_desc *d, size_t batch)
{
    return d->type != CLRUN_F32 && d->lda % 8 == 0 && d->a_off % 8 == 0 && d->ldb % 8 == 0 && d->b_off % 8 == 0 &&
           (batch == 1 || (d->stride_a % 8 == 0 && d->stride_b % 8 == 0));
}

static clrun_status run_portable(clrun_ctx *ctx, const clrun_gemm_desc *d, clrun_buf *meta, size_t meta_off, size_t batch)
{
    clrun_status st;
    clrun_kernel *k;
    char opts[48];
    snprintf(opts, sizeof opts, "-DABT=%d -DTB=%d", clrun__float_code(d->type), d->trans_b != 0);
    if ((st = clrun__lib_kernel(ctx, "sparse", opts, "clrun_gemm_sp", &k))) return st;
    const clrun__grid g = {3, {(d->n + 15) / 16 * 16, (d->m + 15) / 16 * 16, batch}, {16, 16, 1}};
    return CLRUN__RUN(k, g, ARG_U32(d->m), ARG_U32(d->n), ARG_U32(d->k), ARG_F32(d->alpha), ARG_F32(d->beta), ARG_BUF(d->a ? d->a : d->c),
                      ARG_U64(d->a_off), ARG_U32(d->lda ? d->lda : 1), ARG_U64(d->stride_a), ARG_BUF(meta ? meta : d->c), ARG_U64(meta_off),
                      ARG_BUF(d->b ? d->b : d->c), ARG_U64(d->b_off), ARG_U32(d->ldb ? d->ldb : 1), ARG_U64(d->stride_b), ARG_BUF(d->c),
                      ARG_U64(d->c_off), ARG_U32(d->ldc), ARG_U64(d->stride_c));
}

/* The tensor-core kernel on a layout it cannot read directly: A's values and B copied into rows of a
 * multiple of 8 elements in the context's scratch buffer first (one pass over them). */
static clrun_status run_staged(clrun_ctx *ctx, const clrun_gemm_desc *d, clrun_buf *meta, size_t meta_off, size_t batch)
{
    clrun_status st;
    const size_t es = 2, kv = clrun_sp24_kv(d->k), br = d->trans_b ? d->n : d->k, bc = d->trans_b ? d->k : d->n;
    const size_t lda = (kv + 7) / 8 * 8, ldb = (bc + 7) / 8 * 8, abytes = batch * d->m * lda * es, bbytes = batch * br * ldb * es;
    clrun_buf *s;
    if ((st = clrun__scratch(ctx, abytes + bbytes, &s)) ||
        (st = clrun__copy_rows16(ctx, d->a, d->a_off, d->lda, d->stride_a, d->m, kv, batch, s, 0, lda)) ||
        (st = clrun__copy_rows16(ctx, d->b, d->b_off, d->ldb, d->stride_b, br, bc, batch, s, abytes / es, ldb)))
        return st;
    clrun_gemm_desc t = *d;
    t.a = s, t.a_off = 0, t.lda = lda, t.stride_a = d->m * lda, t.b = s, t.b_off = abytes / es, t.ldb = ldb, t.stride_b = br * ldb;
    return clrun__gemm_sp_tensor(ctx, &t, meta, meta_off, tensor_form(ctx));
}

clrun_status clrun_gemm_sp(clrun_ctx *ctx, const clrun_gemm_desc *d, clrun_buf *meta, size_t meta_off)
{
    CLRUN__SERIAL(ctx);
    clrun_status st;
    if (!d) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm sp: descriptor is NULL");
    if ((st = check_type(ctx, "gemm sp", d->type))) return st;
    if (d->trans_a) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm sp: A is compressed along K, row by row: trans_a must be 0");
    const size_t batch = d->batch ? d->batch : 1, es = clrun_dtype_size(d->type);
    if (d->m == 0 || d->n == 0) return CLRUN_OK;
    if (!d->c) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm sp: matrix C is NULL");
    if (d->m > UINT32_MAX || d->n > UINT32_MAX || d->k > UINT32_MAX) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm sp: M, N and K are below 2^32");
    if (batch > 65535) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm sp: at most 65535 batches");
    if (batch > 1 && d->stride_c < d->m * d->ldc)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm sp: stride_c %zu makes the batches' C matrices overlap (or is 0)", d->stride_c);
    const size_t kv = clrun_sp24_kv(d->k), km = clrun_sp24_km(d->k), br = d->trans_b ? d->n : d->k, bc = d->trans_b ? d->k : d->n;
    if ((st = clrun__check_matrix(ctx, "gemm sp", "A", d->a, es, d->a_off, d->lda, d->stride_a, d->m, kv, batch)) ||
        (st = clrun__check_matrix(ctx, "gemm sp", "B", d->b, es, d->b_off, d->ldb, d->stride_b, br, bc, batch)) ||
        (st = clrun__check_matrix(ctx, "gemm sp", "C", d->c, 4, d->c_off, d->ldc, d->stride_c, d->m, d->n, batch)))
        return st;
    if (d->k && (!meta || !fits(meta, meta_off, batch * d->m * km, 4)))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm sp: the metadata needs %zu words (%zu batches × %zu rows × %zu) from word %zu; the buffer has %zu bytes",
                           batch * d->m * km, batch, d->m, km, meta_off, meta ? clrun_buf_size(meta) : 0);
    if (!d->k) { /* C = beta·C: the portable kernel reads neither A nor B */
        clrun_gemm_desc z = *d;
        z.a = z.b = NULL, z.lda = z.ldb = 1;
        return run_portable(ctx, &z, NULL, 0, batch);
    }
    int forced;
    if ((st = clrun__setting_choice(ctx, CLRUN__SET_GEMM_SP_SHAPE, &forced))) return st;
    const int kind = forced >= 0                                              ? forced
                     : clrun_ctx_device(ctx)->type == CLRUN_DEVICE_CPU      ? 1
                     : d->type != CLRUN_F32 && tensor_form(ctx) > 0         ? 2
                                                                              : 0;
    if (kind == 1) return clrun__gemm_sp_cpu(ctx, d, meta, meta_off);
    if (kind == 2) {
        if (tensor_form(ctx) <= 0)
            return clrun__fail(ctx, CLRUN_UNSUPPORTED, "gemm sp: no sparse tensor-core kernel on %s (NVIDIA's OpenCL and mma.sp are needed)",
                               clrun_ctx_device(ctx)->name);
        if (d->type == CLRUN_F32) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm sp: the sparse tensor cores take f16 or bf16");
        if (!tensor_layout(d, batch)) return run_staged(ctx, d, meta, meta_off, batch);
        return clrun__gemm_sp_tensor(ctx, d, meta, meta_off, tensor_form(ctx));
    }
    return run_portable(ctx, d, meta, meta_off, batch);
}

/* ---- the probe ---------------------------------------------------------------------------------- */

struct probe_arg {
    clrun_buf *meta;
    int form;
};

static clrun_status probe_run(clrun_ctx *ctx, const clrun_gemm_desc *d, void *arg)
{
    const struct probe_arg *pa = arg;
    return clrun__gemm_sp_tensor(ctx, d, pa->meta, 0, pa->form);
}

/* A pruned product with edges in M, N and K on small integers (exact in f32 whatever the order),
 * through the tensor-core kernel of the given form, against the host. */
static int probe_form(clrun_ctx *ctx, int form)
{
    enum { PM = 40, PN = 24, PK = 80, KV = 40, KM = 3 }; /* rows of values on 16 bytes, as the kernel needs */
    uint16_t dense[PM * PK], hb[PK * PN], vals[PM * KV];
    uint32_t meta[PM * KM];
    float want[PM * PN];
    for (int i = 0; i < PM * PK; i++) dense[i] = clrun_f32_to_f16((float)((i * 7) % 9 - 4));
    for (int i = 0; i < PK * PN; i++) hb[i] = clrun_f32_to_f16((float)((i * 5) % 7 - 3));
    /* compress on the host: keep columns (g + r) % 4 and (g + r + 1 + r % 2) % 4 of group g, row r */
    memset(meta, 0, sizeof meta);
    for (int r = 0; r < PM; r++)
        for (int g = 0; g < PK / 4; g++) {
            int a = (g + r) % 4, b = (g + r + 1 + r % 2) % 4, lo = a < b ? a : b, hi = a < b ? b : a;
            vals[r * KV + 2 * g] = dense[r * PK + 4 * g + lo], vals[r * KV + 2 * g + 1] = dense[r * PK + 4 * g + hi];
            meta[r * KM + g / 8] |= (uint32_t)(lo | hi << 2) << (4 * (g % 8));
            for (int c = 0; c < 4; c++)
                if (c != lo && c != hi) dense[r * PK + 4 * g + c] = 0;
        }
    for (int r = 0; r < PM; r++)
        for (int g = PK / 4; g < KM * 8; g++) meta[r * KM + g / 8] |= 0x4u << (4 * (g % 8));
    for (int i = 0; i < PM; i++)
        for (int j = 0; j < PN; j++) {
            float s = 0;
            for (int p = 0; p < PK; p++) s += clrun_f16_to_f32(dense[i * PK + p]) * clrun_f16_to_f32(hb[p * PN + j]);
            want[i * PN + j] = s;
        }
    clrun_gemm_desc d = {0};
    d.m = PM, d.n = PN, d.k = PK, d.alpha = 1, d.lda = KV, d.ldb = PN, d.ldc = PN, d.type = CLRUN_F16;
    struct probe_arg pa = {NULL, form};
    const int ok = clrun_buf_new(ctx, sizeof meta, 0, &pa.meta) == CLRUN_OK && clrun_upload(pa.meta, 0, meta, sizeof meta) == CLRUN_OK &&
                   clrun__probe_gemm(ctx, &d, vals, sizeof vals, hb, sizeof hb, want, sizeof want, probe_run, &pa, NULL);
    clrun_buf_free(pa.meta);
    return ok;
}

/* The sparse tensor-core kernel's form on this context (its first use probes): > 0, or -1 none. */
static int tensor_form(clrun_ctx *ctx)
{
    struct sp_state *s = clrun__op_state(ctx, &sp_key, sizeof *s, NULL);
    if (!s) return -1;
    if (!s->form) {
        s->form = -1;
        if (clrun__nv_tensor_candidate(ctx)) {
            /* the ordered-metadata instruction first (ptxas advises it on sm_90), each thread layout */
            static const int forms[] = {3, 4, 1, 2}; /* SPMETA + 2·SPORD */
            for (size_t i = 0; i < sizeof forms / sizeof *forms && s->form < 0; i++)
                if (probe_form(ctx, forms[i])) s->form = forms[i];
            if (s->form < 0) clrun__fail(ctx, CLRUN_UNSUPPORTED, "gemm sp: no form of the sparse tensor-core kernel computed correctly here");
        }
    }
    return s->form;
}
