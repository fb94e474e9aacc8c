/* group_ops.c — the ops over a group (group.c): GEMM in blocks of rows, element-wise ops and
 * reductions in ranges, each share on its device's thread. */
#include "group.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- GEMM over the group --------------------------------------------------------------------- */

struct gemm_share {
    struct share h;
    const clrun_gemm_desc *d;
    const char *a, *b;
    float *c;
    size_t r0, rows;
};

/* Device `dev` computes C's rows r0 .. r0+rows. */
static void *gemm_share(void *arg)
{
    struct gemm_share *s = arg;
    const clrun_gemm_desc *d = s->d;
    clrun_ctx *ctx = s->h.g->ctx[s->h.dev];
    const size_t es = clrun_dtype_size(d->type);
    clrun_buf *ba = NULL, *bb = NULL, *bc = NULL;
    clrun_gemm_desc e = *d;
    clrun_status st = CLRUN_OK;
    if (!s->rows) return NULL;
    if ((int)s->h.dev == s->h.g->fail_dev) {
        st = clrun__fail(ctx, CLRUN_CL_ERROR, "gemm: device %u failed on purpose (tests)", s->h.dev);
        goto done;
    }
    const size_t ar = d->trans_a ? d->k : s->rows, ac = d->trans_a ? d->m : d->k; /* the part of A this block reads */
    const size_t br = d->trans_b ? d->n : d->k, bc_ = d->trans_b ? d->k : d->n;
    const size_t a_first = d->trans_a ? d->a_off : d->a_off + s->r0 * d->lda;
    const size_t a_n = d->k ? (ar - 1) * d->lda + ac : 0, b_n = d->k ? (br - 1) * d->ldb + bc_ : 0;
    const size_t c_n = (s->rows - 1) * d->ldc + d->n;
    if (a_n && ((st = clrun_buf_new(ctx, a_n * es, 0, &ba)) || (st = clrun_upload(ba, 0, s->a + a_first * es, a_n * es)))) goto done;
    if (b_n && ((st = clrun_buf_new(ctx, b_n * es, 0, &bb)) || (st = clrun_upload(bb, 0, s->b + d->b_off * es, b_n * es)))) goto done;
    if ((st = clrun_buf_new(ctx, c_n * sizeof(float), 0, &bc))) goto done;
    float *cblock = s->c + d->c_off + s->r0 * d->ldc;
    /* C is read for beta; and between rows (ldc > n) the download writes back what it uploaded */
    if ((d->beta != 0.0f || (s->rows > 1 && d->ldc > d->n)) && (st = clrun_upload(bc, 0, cblock, c_n * sizeof(float)))) goto done;
    e.m = s->rows, e.whole_m = d->m, e.a = ba, e.b = bb, e.c = bc, e.b_off = 0, e.c_off = 0, e.batch = 0;
    e.a_off = d->trans_a ? s->r0 : 0; /* transposed: the block's rows are columns r0.. of the whole A */
    if ((st = clrun_gemm(ctx, &e))) goto done;
    st = clrun_download(bc, 0, cblock, c_n * sizeof(float));
done:
    if (st) snprintf(s->h.err, sizeof s->h.err, "%s: %s", clrun_ctx_device(ctx)->name, clrun_last_error(ctx));
    clrun_buf_free(ba), clrun_buf_free(bb), clrun_buf_free(bc);
    s->h.st = st;
    return NULL;
}

clrun_status clrun_group_gemm(clrun_group *g, const clrun_gemm_desc *d, const void *a, const void *b, float *c)
{
    if (!g) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_gemm: g is NULL");
    if (!g || !d || !c) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_gemm: NULL argument");
    if (d->batch > 1) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_gemm: batches are not split; run them one by one");
    if (d->a || d->b || d->c)
        return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_gemm: the descriptor's buffers must be NULL (host arrays are given)");
    if (d->m == 0 || d->n == 0) return CLRUN_OK;
    if (d->k && (!a || !b)) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_gemm: A or B is NULL");
    if (!clrun_dtype_size(d->type) || d->ldc < d->n ||
        (d->k && (d->lda < (d->trans_a ? d->m : d->k) || d->ldb < (d->trans_b ? d->k : d->n))))
        return clrun__fail(NULL, CLRUN_INVALID_ARG,
                           "clrun_group_gemm: a leading dimension is smaller than its row, or the type is unknown");
    size_t *rows = calloc(g->n, sizeof *rows);
    struct gemm_share *s = calloc(g->n, sizeof *s);
    clrun_status st = CLRUN_OK;
    if (!rows || !s) {
        free(rows), free(s);
        return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "clrun_group_gemm: out of memory");
    }
    if (!(st = clrun_group_split_rows(g, d->m, rows))) {
        size_t r0 = 0;
        for (unsigned i = 0; i < g->n; i++) {
            s[i] = (struct gemm_share){{g, i, CLRUN_OK, {0}}, d, a, b, c, r0, rows[i]};
            r0 += rows[i];
        }
        st = clrun__group_run_shares(g, s, sizeof *s, gemm_share, "clrun_group_gemm");
    }
    free(rows), free(s);
    return st;
}

/* ---- element-wise ops and reductions over ranges --------------------------------------------- */

enum { RANGE_UNIT = 4096 };

struct range_share {
    struct share h;
    int reduce; /* 0: clrun_vec; 1: a reduction */
    clrun_vec_op vop;
    const char *rop;
    clrun_dtype t;
    float alpha;
    char *dst;
    const char *in[3]; /* a, b, c (vec) or x, y (reduce) */
    size_t r0, count;
    double value; /* reductions: the range's result */
    size_t index; /* argmax: in the whole array */
};

static void *range_share(void *arg)
{
    struct range_share *s = arg;
    clrun_ctx *ctx = s->h.g->ctx[s->h.dev];
    const size_t es = clrun_dtype_size(s->t), bytes = s->count * es;
    clrun_buf *buf[4] = {NULL};
    clrun_status st = CLRUN_OK;
    if (!s->count) return NULL;
    if ((int)s->h.dev == s->h.g->fail_dev) {
        st = clrun__fail(ctx, CLRUN_CL_ERROR, "device %u failed on purpose (tests)", s->h.dev);
        goto done;
    }
    for (int i = 0; i < 3; i++)
        if (s->in[i] && ((st = clrun_buf_new(ctx, bytes, 0, &buf[i])) || (st = clrun_upload(buf[i], 0, s->in[i] + s->r0 * es, bytes))))
            goto done;
    if (!s->reduce) {
        if ((st = clrun_buf_new(ctx, bytes, 0, &buf[3])) ||
            (st = clrun_vec(ctx, s->vop, s->t, s->count, s->alpha, buf[3], 0, buf[0], 0, buf[1], 0, buf[2], 0)))
            goto done;
        st = clrun_download(buf[3], 0, s->dst + s->r0 * es, bytes);
    } else if (!strcmp(s->rop, "sum")) {
        st = clrun_sum(ctx, s->t, buf[0], 0, s->count, &s->value);
    } else if (!strcmp(s->rop, "dot")) {
        st = clrun_dot(ctx, s->t, buf[0], 0, buf[1], 0, s->count, &s->value);
    } else if (!strcmp(s->rop, "norm2")) { /* the range's sum of squares; the square root at the end */
        st = clrun_dot(ctx, s->t, buf[0], 0, buf[0], 0, s->count, &s->value);
    } else if (!strcmp(s->rop, "argmax")) {
        st = clrun_argmax(ctx, s->t, buf[0], 0, s->count, &s->index);
        s->index += s->r0;
    } else {
        float v = 0;
        st = (!strcmp(s->rop, "max") ? clrun_max : clrun_min)(ctx, s->t, buf[0], 0, s->count, &v);
        s->value = v;
    }
done:
    if (st) snprintf(s->h.err, sizeof s->h.err, "%s: %s", clrun_ctx_device(ctx)->name, clrun_last_error(ctx));
    for (int i = 0; i < 4; i++) clrun_buf_free(buf[i]);
    s->h.st = st;
    return NULL;
}

/* Split n elements by the weights into s[0 .. g->n) (everything else already set) and run them. */
static clrun_status run_ranges(clrun_group *g, struct range_share *s, size_t n, const char *what)
{
    size_t *units = calloc(g->n, sizeof *units);
    clrun_status st = CLRUN_OK;
    if (!units) return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "%s: out of memory", what);
    if (!g->have_w && (st = clrun_group_set_weights(g, NULL))) return free(units), st;
    clrun__group_split_units(g->w, g->n, (n + RANGE_UNIT - 1) / RANGE_UNIT, units);
    size_t r0 = 0;
    for (unsigned i = 0; i < g->n; i++) {
        size_t c = units[i] * RANGE_UNIT;
        if (r0 + c > n) c = n - r0;
        s[i].h = (struct share){g, i, CLRUN_OK, {0}}, s[i].r0 = r0, s[i].count = c;
        r0 += c;
    }
    free(units);
    return clrun__group_run_shares(g, s, sizeof *s, range_share, what);
}

static clrun_status check_type(const char *what, clrun_dtype t)
{
    if (t != CLRUN_F32 && t != CLRUN_F16)
        return clrun__fail(NULL, CLRUN_INVALID_ARG, "%s: the type is f32 or f16, not %s", what, clrun_dtype_name(t));
    return CLRUN_OK;
}

clrun_status clrun_group_vec(clrun_group *g, clrun_vec_op op, clrun_dtype t, size_t n, float alpha, void *dst, const void *a, const void *b,
                             const void *c)
{
    if (!g) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_vec: g is NULL");
    clrun_status st;
    if (!g || !dst || !a) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_vec: NULL argument");
    if ((st = check_type("clrun_group_vec", t))) return st;
    if (!clrun_vec_op_name(op)) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_vec: unknown op %d", (int)op);
    const int need_b = op != CLRUN_SCALE, need_c = op == CLRUN_FMA;
    if ((need_b && !b) || (need_c && !c))
        return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_vec: %s needs %s", clrun_vec_op_name(op), need_c && !c ? "c" : "b");
    if (n == 0) return CLRUN_OK;
    struct range_share *s = calloc(g->n, sizeof *s);
    if (!s) return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "clrun_group_vec: out of memory");
    for (unsigned i = 0; i < g->n; i++)
        s[i] = (struct range_share){.vop = op, .t = t, .alpha = alpha, .dst = dst, .in = {a, need_b ? b : NULL, need_c ? c : NULL}};
    st = run_ranges(g, s, n, "clrun_group_vec");
    free(s);
    return st;
}

clrun_status clrun_group_reduce(clrun_group *g, const char *op, clrun_dtype t, const void *x, const void *y, size_t n, double *value,
                                size_t *index)
{
    if (!g) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_reduce: g is NULL");
    clrun_status st;
    static const char *const ops[] = {"sum", "dot", "norm2", "max", "min", "argmax"};
    int k = -1;
    for (int i = 0; i < 6 && op; i++)
        if (!strcmp(op, ops[i])) k = i;
    if (!g || !x || k < 0 || (k == 1 && !y) || (k == 5 ? !index : !value))
        return clrun__fail(NULL, CLRUN_INVALID_ARG,
                           "clrun_group_reduce: a NULL argument, or op '%s' is not sum, dot, norm2, max, min or argmax",
                           op ? op : "(null)");
    if ((st = check_type("clrun_group_reduce", t))) return st;
    if (n == 0) {
        if (k >= 3) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_reduce: %s of no elements", op);
        return *value = 0, CLRUN_OK;
    }
    struct range_share *s = calloc(g->n, sizeof *s);
    if (!s) return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "clrun_group_reduce: out of memory");
    for (unsigned i = 0; i < g->n; i++) s[i] = (struct range_share){.reduce = 1, .rop = ops[k], .t = t, .in = {x, k == 1 ? y : NULL}};
    if ((st = run_ranges(g, s, n, "clrun_group_reduce"))) return free(s), st;
    if (k <= 2) { /* the devices' results in device order, a double Neumaier sum */
        double sum = 0, comp = 0;
        for (unsigned i = 0; i < g->n; i++) {
            if (!s[i].count) continue;
            const double v = s[i].value, tt = sum + v;
            comp += fabs(sum) >= fabs(v) ? (sum - tt) + v : (v - tt) + sum;
            sum = tt;
        }
        sum = isfinite(sum) ? sum + comp : sum;
        *value = k == 2 ? sqrt(sum) : sum;
    } else if (k <= 4) { /* NaN from any device, else the extreme */
        int first = 1;
        for (unsigned i = 0; i < g->n; i++) {
            if (!s[i].count) continue;
            const double v = s[i].value;
            if (first || isnan(v) || (!isnan(*value) && (k == 3 ? v > *value : v < *value))) *value = v;
            first = 0;
        }
    } else { /* the first NaN, else the first largest: devices hold ranges in order */
        const size_t es = clrun_dtype_size(t);
        int have = 0;
        double best = 0;
        for (unsigned i = 0; i < g->n; i++) {
            if (!s[i].count) continue;
            float v;
            if (t == CLRUN_F32) memcpy(&v, (const char *)x + s[i].index * es, 4);
            else {
                uint16_t h;
                memcpy(&h, (const char *)x + s[i].index * es, 2);
                v = clrun_f16_to_f32(h);
            }
            if (!have || (isnan(v) && !isnan(best)) || (!isnan(best) && v > best)) best = v, *index = s[i].index, have = 1;
        }
        if (value) *value = best;
    }
    free(s);
    return CLRUN_OK;
}
