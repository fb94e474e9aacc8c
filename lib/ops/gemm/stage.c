/* stage.c — GEMM's one staging step (operands copied into the layout a backend reads: rows on 16
 * bytes, INT8's A M×K and B N×K), slices of K for backends whose work-items walk all of K, and the
 * probes' products run on one backend. */
#include "gemm.h"

#include <stdlib.h>
#include <string.h>

/* GEMM's products deeper than this run as slices of K on backends that ask for it (CLRUN__GEMM_SLICE_K):
 * their work-items walk K, and Mesa's llvmpipe stops a work-item after 65,535 loop iterations,
 * silently (results were wrong from K = 8192 on the CPU-shaped kernel and 12,000 on the GPU-shaped
 * one; CLRUN__MAX_TRIPS in op.h). The cost is one more read and write of C per 4096 of K. */
#define K_SLICE 4096

/* ---- the staging step --------------------------------------------------------------------------- */

/* Rows, offset and batch stride multiples of epc elements. */
static int rows_ok(size_t ld, size_t off, size_t stride, size_t batch, size_t epc)
{
    return ld % epc == 0 && off % epc == 0 && (batch == 1 || stride % epc == 0);
}

/* Copy rows × cols 16-bit elements of each batch from src (element off, rows ld apart, batches
 * stride apart) into dst from element dst_off, rows ldd apart, batches rows·ldd apart
 * (lib/ops/convert/convert.cl). Wider elements are copied as pairs of them. */
clrun_status clrun__gemm_copy_rows16(clrun_ctx *ctx, clrun_buf *src, size_t off, size_t ld, size_t stride, size_t rows, size_t cols,
                                     size_t batch, clrun_buf *dst, size_t dst_off, size_t ldd)
{
    clrun_status st;
    clrun_kernel *k;
    if (!rows || !cols || !batch) return CLRUN_OK;
    if (ld > UINT32_MAX || ldd > UINT32_MAX) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm: rows too long to stage (over 2^32 halves)");
    if ((st = clrun__lib_kernel(ctx, "convert", NULL, "clrun_copy_rows16", &k))) return st;
    return CLRUN__RUN(k, ((clrun__grid){3, {cols, rows, batch}, {0}}), ARG_BUF(src), ARG_U64(off), ARG_U32(ld), ARG_U64(stride),
                      ARG_U32(rows), ARG_U32(cols), ARG_BUF(dst), ARG_U64(dst_off), ARG_U32(ldd));
}

/* Copy op(S) (rows × cols, TR: S stored transposed) of every batch into dst from byte d_off, rows
 * of ldd bytes, zeros past cols (lib/ops/gemm/portable/gemm_s8.cl). */
static clrun_status pack_s8(clrun_ctx *ctx, clrun_buf *src, size_t off, size_t ld, size_t stride, int tr, size_t rows, size_t cols,
                            size_t ldd, size_t batch, clrun_buf *dst, size_t d_off)
{
    clrun_kernel *k;
    clrun_status st;
    if ((st = clrun__lib_kernel(ctx, "gemm_s8", tr ? "-DTR=1" : "-DTR=0", "clrun_s8_pack", &k))) return st;
    const clrun__grid g = {3, {(ldd + 63) / 64 * 64, (rows + 63) / 64 * 4, batch}, {64, 4, 1}};
    return CLRUN__RUN(k, g, ARG_U32(rows), ARG_U32(cols), ARG_U32(ldd), ARG_BUF(src), ARG_U64(off), ARG_U32(ld ? ld : 1), ARG_U64(stride),
                      ARG_BUF(dst), ARG_U64(d_off), ARG_U64(rows * ldd));
}

/* 1 when p is already in the layout `need` (CLRUN__GEMM_ROWS16, _NT) asks for. */
int clrun__gemm_in_layout(const clrun__gemm_plan *p, unsigned need)
{
    const clrun_gemm_desc *d = &p->d;
    const size_t epc = 16 / clrun_dtype_size(d->type);
    if (!(need & (CLRUN__GEMM_ROWS16 | CLRUN__GEMM_NT)) || !d->k) return 1;
    if ((need & CLRUN__GEMM_NT) && (d->trans_a || !d->trans_b)) return 0;
    return rows_ok(d->lda, d->a_off, d->stride_a, d->batch, epc) && rows_ok(d->ldb, d->b_off, d->stride_b, d->batch, epc);
}

/* *out = p with A and B where a backend that reads `need` can read them: each operand not in that
 * layout copied into the context's scratch buffer (one pass over it, against the product's M·N·K).
 * Rows on 16 bytes: rows padded to a multiple of 16 bytes, transposes kept. NT (s8): op(A) stored
 * M×K and op(B) stored N×K, rows padded to 16 bytes with zeros. */
static clrun_status stage(clrun_ctx *ctx, const clrun__gemm_plan *p, unsigned need, clrun__gemm_plan *out)
{
    const clrun_gemm_desc *d = &p->d;
    clrun_gemm_desc *t = &out->d;
    const size_t es = clrun_dtype_size(d->type), epc = 16 / es, batch = d->batch;
    clrun_status st;
    clrun_buf *s;
    *out = *p;
    need &= CLRUN__GEMM_ROWS16 | CLRUN__GEMM_NT;
    if (!need) return CLRUN_OK;
    if (!d->k) { /* nothing is read */
        t->a = t->b = NULL, t->a_off = t->b_off = t->stride_a = t->stride_b = 0, t->lda = t->ldb = epc;
        if (need & CLRUN__GEMM_NT) t->trans_a = 0, t->trans_b = 1;
        return CLRUN_OK;
    }
    const int nt = (need & CLRUN__GEMM_NT) != 0;
    const int sa = (nt && d->trans_a) || !rows_ok(d->lda, d->a_off, d->stride_a, batch, epc);
    const int sb = (nt && !d->trans_b) || !rows_ok(d->ldb, d->b_off, d->stride_b, batch, epc);
    if (!sa && !sb) return CLRUN_OK;
    if (nt) { /* s8 */
        const size_t ldk = (d->k + 15) / 16 * 16, an = sa ? d->m * ldk * batch : 0, bn = sb ? d->n * ldk * batch : 0;
        if ((st = clrun__scratch(ctx, an + bn, &s))) return st;
        if (sa) {
            if ((st = pack_s8(ctx, d->a, d->a_off, d->lda, d->stride_a, d->trans_a, d->m, d->k, ldk, batch, s, 0))) return st;
            t->a = s, t->a_off = 0, t->lda = ldk, t->stride_a = d->m * ldk, t->trans_a = 0;
        }
        if (sb) {
            if ((st = pack_s8(ctx, d->b, d->b_off, d->ldb, d->stride_b, !d->trans_b, d->n, d->k, ldk, batch, s, an))) return st;
            t->b = s, t->b_off = an, t->ldb = ldk, t->stride_b = d->n * ldk, t->trans_b = 1;
        }
        return CLRUN_OK;
    }
    if (es < 2) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: no staging of 1-byte rows without the NT layout", p->what);
    /* stored shapes (2:4: A holds K/2 values per row) */
    const size_t ak = p->kind == CLRUN__GEMM_SP ? clrun_sp24_kv(d->k) : d->k;
    const size_t ar = d->trans_a ? d->k : d->m, ac = d->trans_a ? d->m : ak, br = d->trans_b ? d->n : d->k, bc = d->trans_b ? d->k : d->n;
    const size_t h = es / 2, lda = (ac + epc - 1) / epc * epc, ldb = (bc + epc - 1) / epc * epc;
    const size_t an = sa ? batch * ar * lda : 0, bn = sb ? batch * br * ldb : 0; /* elements */
    if ((st = clrun__scratch(ctx, (an + bn) * es, &s))) return st;
    if (sa) {
        if ((st = clrun__gemm_copy_rows16(ctx, d->a, d->a_off * h, d->lda * h, d->stride_a * h, ar, ac * h, batch, s, 0, lda * h)))
            return st;
        t->a = s, t->a_off = 0, t->lda = lda, t->stride_a = ar * lda;
    }
    if (sb) {
        if ((st = clrun__gemm_copy_rows16(ctx, d->b, d->b_off * h, d->ldb * h, d->stride_b * h, br, bc * h, batch, s, an * h, ldb * h)))
            return st;
        t->b = s, t->b_off = an, t->ldb = ldb, t->stride_b = br * ldb;
    }
    return CLRUN_OK;
}

clrun_status clrun__gemm_run_on(clrun_ctx *ctx, const clrun__gemm_backend *b, const clrun__gemm_plan *p)
{
    const unsigned need = b->layout[p->kind];
    clrun_status st;
    if ((need & CLRUN__GEMM_SLICE_K) && p->d.k > K_SLICE) { /* slices of K, each adding into C (beta 1 after the first) */
        clrun__gemm_plan s = *p;
        const clrun_gemm_desc *d = &p->d;
        for (size_t k0 = 0; k0 < d->k; k0 += K_SLICE) {
            s.d.k = d->k - k0 < K_SLICE ? d->k - k0 : K_SLICE;
            s.d.a_off = d->a_off + (d->trans_a ? k0 * d->lda : k0); /* op(A)'s columns k0.. */
            s.d.b_off = d->b_off + (d->trans_b ? k0 : k0 * d->ldb); /* op(B)'s rows k0.. */
            s.d.beta = k0 ? 1.0f : d->beta;
            if ((st = clrun__gemm_run_on(ctx, b, &s))) return st;
        }
        return CLRUN_OK;
    }
    clrun__gemm_plan staged;
    if ((st = stage(ctx, p, need, &staged))) return st;
    return b->launch(ctx, &staged);
}

int clrun__gemm_probe(clrun_ctx *ctx, const clrun__gemm_backend *be, clrun__gemm_plan *p, const void *a, size_t abytes, const void *b,
                      size_t bbytes, const void *want, size_t cbytes)
{
    clrun_buf *ba = NULL, *bb = NULL, *bc = NULL;
    void *got = malloc(cbytes);
#define NEW(bytes, out) (p->cuda ? clrun__buf_new_cuda(ctx, bytes, out) : clrun_buf_new(ctx, bytes, 0, out))
    int ok = got && NEW(abytes, &ba) == CLRUN_OK && NEW(bbytes, &bb) == CLRUN_OK && NEW(cbytes, &bc) == CLRUN_OK &&
             clrun_upload(ba, 0, a, abytes) == CLRUN_OK && clrun_upload(bb, 0, b, bbytes) == CLRUN_OK;
    if (ok) {
        p->d.a = ba, p->d.b = bb, p->d.c = bc;
        ok = clrun__gemm_run_on(ctx, be, p) == CLRUN_OK && clrun_download(bc, 0, got, cbytes) == CLRUN_OK;
        if (ok && memcmp(got, want, cbytes) != 0) {
            if (clrun__setting_on(CLRUN__SET_VERBOSE)) { /* the first wrong word, as float and as bits */
                size_t i = 0;
                while (((const uint32_t *)got)[i] == ((const uint32_t *)want)[i]) i++;
                fprintf(stderr, "clrun: %s probe of %s: word %zu of %zu is %g (0x%08x), not %g\n", p->what, be->name, i, cbytes / 4,
                        (double)((const float *)got)[i], (unsigned)((const uint32_t *)got)[i], (double)((const float *)want)[i]);
            }
            clrun__fail(ctx, CLRUN_UNSUPPORTED, "%s: the %s kernel built but its probe computed wrong results; not using it", p->what,
                        be->name);
            ok = 0;
        }
    }
#undef NEW
    clrun_buf_free(ba), clrun_buf_free(bb), clrun_buf_free(bc);
    free(got);
    return ok;
}

int clrun__gemm_probe_sp(clrun_ctx *ctx, const clrun__gemm_backend *be, int tb, int cuda)
{
    enum { PM = 40, PN = 24, PK = 80, KV = 40, KM = 3 }; /* rows of values on 16 bytes, as the kernels need */
    uint16_t dense[PM * PK], hb[PK * PN], vals[PM * KV];
    uint32_t meta[PM * KM];
    float want[PM * PN];
    for (int i = 0; i < PM * PK; i++) dense[i] = clrun_f32_to_f16((float)((i * 7) % 9 - 4));
    for (int p = 0; p < PK; p++)
        for (int j = 0; j < PN; j++) hb[tb ? j * PK + p : p * PN + j] = clrun_f32_to_f16((float)(((p * PN + j) * 5) % 7 - 3));
    /* keep columns (g + r) % 4 and (g + r + 1 + r % 2) % 4 of group g, row r */
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
            float x = 0;
            for (int p = 0; p < PK; p++) x += clrun_f16_to_f32(dense[i * PK + p]) * clrun_f16_to_f32(hb[tb ? j * PK + p : p * PN + j]);
            want[i * PN + j] = x;
        }
    clrun__gemm_plan p = {.kind = CLRUN__GEMM_SP, .what = "gemm sp"};
    p.d.m = PM, p.d.n = PN, p.d.k = PK, p.d.alpha = 1, p.d.lda = KV, p.d.ldb = tb ? PK : PN, p.d.ldc = PN, p.d.type = CLRUN_F16;
    p.d.trans_b = tb, p.d.batch = 1, p.cuda = cuda;
    const int ok = (cuda ? clrun__buf_new_cuda(ctx, sizeof meta, &p.meta) : clrun_buf_new(ctx, sizeof meta, 0, &p.meta)) == CLRUN_OK &&
                   clrun_upload(p.meta, 0, meta, sizeof meta) == CLRUN_OK &&
                   clrun__gemm_probe(ctx, be, &p, vals, sizeof vals, hb, sizeof hb, want, sizeof want);
    clrun_buf_free(p.meta);
    return ok;
}
