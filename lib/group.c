/* group.c — clrun_group: one context per device, work split over them on host threads.
 *
 * A group never makes a multi-device OpenCL context: each device has its own clrun_ctx (queue,
 * library kernels, scratch), so nothing a context caches is shared across devices, and the binary
 * cache keys entries by device anyway. A group call splits its work deterministically from the
 * devices' weights, runs each share on a thread of its own (one context per thread, the context
 * rule), and joins them. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct clrun_group {
    unsigned n;
    clrun_ctx **ctx;
    double *w; /* relative speeds; valid when have_w */
    int have_w;
    int fail_dev; /* tests (clrun__group_fail): this device's shares fail; -1 none */
};

enum { ROW_BLOCK = 128 }; /* GEMM's largest tile height: blocks start where the whole product's tiles do */

void clrun_group_close(clrun_group *g)
{
    if (!g) return;
    for (unsigned i = 0; i < g->n; i++) clrun_close(g->ctx[i]);
    free(g->ctx);
    free(g->w);
    free(g);
}

unsigned clrun_group_size(const clrun_group *g) { return g ? g->n : 0; }
clrun_ctx *clrun_group_ctx(const clrun_group *g, unsigned i) { return g && i < g->n ? g->ctx[i] : NULL; }
void clrun__group_fail(clrun_group *g, int dev) { g->fail_dev = dev; }

/* The device indices a spec names, into idx (at most cap); returns the count or -1 (text recorded). */
static int parse_spec(const char *spec, unsigned *idx, unsigned cap, clrun_status *st)
{
    unsigned total = 0;
    int n = 0;
    if ((*st = clrun_device_count(&total))) return -1;
    static const char *const types[] = {"gpu", "accelerator", "cpu"};
    static const clrun_device_type tv[] = {CLRUN_DEVICE_GPU, CLRUN_DEVICE_ACCELERATOR, CLRUN_DEVICE_CPU};
    for (int t = -1; t < 3; t++) {
        if (t < 0 ? strcmp(spec, "all") != 0 : strcmp(spec, types[t]) != 0) continue;
        for (unsigned i = 0; i < total && (unsigned)n < cap; i++) {
            clrun_device_info in;
            if ((*st = clrun_device_get(i, &in))) return -1;
            if (t < 0 || in.type == tv[t]) idx[n++] = i;
        }
        if (!n) *st = clrun__fail(NULL, CLRUN_NO_DEVICE, "device group '%s': no such device here (clrun devices lists them)", spec);
        return n ? n : -1;
    }
    const char *p = spec;
    for (;;) {
        const char *comma = strchr(p, ',');
        const size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[256];
        if (len == 0 || len >= sizeof item) {
            *st = clrun__fail(NULL, CLRUN_INVALID_ARG,
                              "device group '%s': an empty or overlong item (a group is all, gpu, cpu, "
                              "accelerator, or selection strings separated by commas)",
                              spec);
            return -1;
        }
        memcpy(item, p, len);
        item[len] = 0;
        unsigned i;
        if ((*st = clrun_device_select(item, &i, NULL))) return -1;
        for (int j = 0; j < n; j++)
            if (idx[j] == i) {
                *st = clrun__fail(NULL, CLRUN_INVALID_ARG, "device group '%s': device %u is named twice", spec, i);
                return -1;
            }
        if ((unsigned)n == cap) {
            *st = clrun__fail(NULL, CLRUN_INVALID_ARG, "device group '%s': more than %u devices", spec, cap);
            return -1;
        }
        idx[n++] = i;
        if (!comma) return n;
        p = comma + 1;
    }
}

clrun_status clrun_group_open(clrun_group **out, const char *spec)
{
    clrun_status st = CLRUN_OK;
    unsigned *idx = NULL, total = 0;
    int n;
    if (!out) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_open: out is NULL");
    *out = NULL;
    if ((st = clrun__settings_check(NULL))) return st;
    if ((st = clrun_device_count(&total))) return st;
    /* a group names each device at most once: as many entries as there are devices */
    if (!(idx = malloc((total ? total : 1) * sizeof *idx)))
        return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "clrun_group_open: out of memory");
    if (!spec || !*spec) spec = clrun__setting_text(CLRUN__SET_DEVICES);
    if (!spec || !*spec) { /* the device clrun_open would choose, alone */
        if ((st = clrun_device_select(NULL, &idx[0], NULL))) {
            free(idx);
            return st;
        }
        n = 1;
    } else if ((n = parse_spec(spec, idx, total ? total : 1, &st)) < 0) {
        free(idx);
        return st;
    }
    clrun_group *g = calloc(1, sizeof *g);
    if (g) g->ctx = calloc((size_t)n, sizeof *g->ctx), g->w = calloc((size_t)n, sizeof *g->w);
    if (!g || !g->ctx || !g->w) {
        free(idx);
        clrun_group_close(g);
        return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "clrun_group_open: out of memory");
    }
    g->fail_dev = -1;
    for (int i = 0; i < n; i++) {
        char one[16];
        snprintf(one, sizeof one, "%u", idx[i]);
        if ((st = clrun_open(&g->ctx[i], one))) {
            free(idx);
            clrun_group_close(g);
            return st;
        }
        g->n++;
    }
    free(idx);
    *out = g;
    return CLRUN_OK;
}

/* ---- weights ---------------------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* A device's GEMM rate in GFLOP/s: f32 products from 256³ up, doubling until one takes 2 ms or
 * 2048³ is reached (a GPU is launch-bound on small ones and would look slower than it is), the
 * best of two runs after a warm-up at the last size. 0 when it fails. */
static double measure(clrun_ctx *ctx)
{
    double best = 0;
    for (size_t S = 256; S <= 2048; S *= 2) {
        clrun_buf *a = NULL, *c = NULL;
        const size_t bytes = S * S * sizeof(float);
        double took = 0;
        best = 0;
        if (clrun_buf_new(ctx, bytes, 0, &a) || clrun_buf_new(ctx, bytes, 0, &c) ||
            clrun_buf_fill(a, &(float){0}, sizeof(float), 0, bytes)) {
            clrun_buf_free(a), clrun_buf_free(c);
            break;
        }
        clrun_gemm_desc d = {0};
        d.m = d.n = d.k = S, d.alpha = 1, d.a = a, d.b = a, d.c = c, d.lda = d.ldb = d.ldc = S;
        int ok = 1;
        for (int r = 0; r < 3 && ok; r++) {
            const double t0 = now_s();
            ok = !clrun_gemm(ctx, &d) && !clrun_finish(ctx);
            took = now_s() - t0;
            const double rate = 2.0 * (double)S * S * S / took / 1e9;
            if (ok && r && rate > best) best = rate;
        }
        clrun_buf_free(a), clrun_buf_free(c);
        if (!ok || took >= 2e-3) break;
    }
    if (ctx->err) ctx->err[0] = 0;
    return best;
}

clrun_status clrun_group_set_weights(clrun_group *g, const double *w)
{
    if (!g) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_set_weights: g is NULL");
    if (!w) {
        unsigned v[CLRUN__SETTING_MAX_UINTS], nv = 0, sum = 0;
        clrun_status st = clrun__setting_uints(NULL, CLRUN__SET_GROUP_WEIGHTS, v, &nv);
        if (st) return st;
        for (unsigned i = 0; i < nv; i++) sum += v[i];
        if (nv && nv != g->n) {
            char want[96];
            snprintf(want, sizeof want, "one weight per device of the group: %u, not %u", g->n, nv);
            return clrun__setting_refuse(NULL, CLRUN__SET_GROUP_WEIGHTS, want);
        }
        if (nv && !sum) return clrun__setting_refuse(NULL, CLRUN__SET_GROUP_WEIGHTS, "one weight per device of the group, not all 0");
        if (nv) { /* set by the user: no measurement */
            for (unsigned i = 0; i < g->n; i++) g->w[i] = v[i];
            g->have_w = 1;
            return CLRUN_OK;
        }
        int any = 0;
        for (unsigned i = 0; i < g->n; i++) any |= (g->w[i] = measure(g->ctx[i])) > 0;
        if (!any)
            for (unsigned i = 0; i < g->n; i++) g->w[i] = 1; /* nothing measured: equal shares */
        g->have_w = 1;
        return CLRUN_OK;
    }
    double sum = 0;
    for (unsigned i = 0; i < g->n; i++) {
        if (!(w[i] >= 0) || !isfinite(w[i]))
            return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_set_weights: weight %u is %g", i, w[i]);
        sum += w[i];
    }
    if (!(sum > 0)) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_set_weights: every weight is 0");
    memcpy(g->w, w, g->n * sizeof *w);
    g->have_w = 1;
    return CLRUN_OK;
}

clrun_status clrun_group_weights(clrun_group *g, double *w)
{
    if (!g) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_weights: g is NULL");
    if (!g || !w) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_weights: NULL argument");
    clrun_status st;
    if (!g->have_w && (st = clrun_group_set_weights(g, NULL))) return st;
    memcpy(w, g->w, g->n * sizeof *w);
    return CLRUN_OK;
}

/* Split `units` whole units by the weights: floors first, then the largest remainders (ties to the
 * lower index); a device whose share is under one unit gets none unless it is needed to place
 * every unit. */
static void split_units(const double *w, unsigned n, size_t units, size_t *out)
{
    double sum = 0;
    size_t given = 0;
    for (unsigned i = 0; i < n; i++) sum += w[i];
    if (!(sum > 0)) { /* never reached: weights are checked where they are set; all to the first device rather than divide by 0 */
        for (unsigned i = 0; i < n; i++) out[i] = i ? 0 : units;
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        out[i] = (size_t)floor((double)units * (w[i] / sum));
        given += out[i];
    }
    while (given < units) { /* the remaining units to the largest remainders */
        unsigned best = 0;
        double rbest = -1;
        for (unsigned i = 0; i < n; i++) {
            const double r = (double)units * (w[i] / sum) - (double)out[i];
            if (w[i] > 0 && r > rbest) best = i, rbest = r;
        }
        out[best]++, given++;
    }
}

clrun_status clrun_group_split_rows(clrun_group *g, size_t m, size_t *rows)
{
    if (!g) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_split_rows: g is NULL");
    if (!g || !rows) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_split_rows: NULL argument");
    clrun_status st;
    if (!g->have_w && (st = clrun_group_set_weights(g, NULL))) return st; /* a bad CLRUN_GROUP_WEIGHTS is refused, never ignored */
    split_units(g->w, g->n, (m + ROW_BLOCK - 1) / ROW_BLOCK, rows);
    size_t start = 0;
    for (unsigned i = 0; i < g->n; i++) { /* blocks to rows; the last block of the product may be short */
        size_t r = rows[i] * ROW_BLOCK;
        if (start + r > m) r = m - start;
        rows[i] = r, start += r;
    }
    return CLRUN_OK;
}

/* ---- shares on threads ------------------------------------------------------------------------ */

/* What every kind of share starts with: its device, and how it went. */
struct share {
    clrun_group *g;
    unsigned dev;
    clrun_status st;
    char err[2048]; /* the device's name and its failure */
};

/* Run n shares (each `size` bytes, a struct share first) with fn, a thread each, then each failed
 * share again, in turn, on the first device that did not fail (one context, one thread), its
 * results copied back. The call fails only when a share failed everywhere it ran. */
static clrun_status run_shares(clrun_group *g, void *shares, size_t size, void *(*fn)(void *), const char *what)
{
    char *base = shares;
    pthread_t *th = calloc(g->n, sizeof *th);
    void *again = malloc(size);
    clrun_status st = CLRUN_OK;
    if (!th || !again) {
        free(th), free(again);
        return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    for (unsigned i = 0; i < g->n; i++)
        if (pthread_create(&th[i], NULL, fn, base + i * size)) fn(base + i * size), th[i] = 0;
    for (unsigned i = 0; i < g->n; i++)
        if (th[i]) pthread_join(th[i], NULL);
    int ok = -1;
    for (unsigned i = 0; i < g->n && ok < 0; i++)
        if (!((struct share *)(base + i * size))->st) ok = (int)i;
    for (unsigned i = 0; i < g->n && !st; i++) {
        struct share *s = (struct share *)(base + i * size), *a = again;
        if (!s->st) continue;
        if (ok < 0) {
            st = clrun__fail(NULL, s->st, "%s: every device failed; %s", what, s->err);
            break;
        }
        memcpy(again, s, size);
        a->dev = (unsigned)ok, a->st = CLRUN_OK;
        fn(again);
        if (a->st) st = clrun__fail(NULL, a->st, "%s: %s; then %s", what, s->err, a->err);
        else memcpy(s, again, size);
    }
    free(th), free(again);
    return st;
}

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
        st = run_shares(g, s, sizeof *s, gemm_share, "clrun_group_gemm");
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
    split_units(g->w, g->n, (n + RANGE_UNIT - 1) / RANGE_UNIT, units);
    size_t r0 = 0;
    for (unsigned i = 0; i < g->n; i++) {
        size_t c = units[i] * RANGE_UNIT;
        if (r0 + c > n) c = n - r0;
        s[i].h = (struct share){g, i, CLRUN_OK, {0}}, s[i].r0 = r0, s[i].count = c;
        r0 += c;
    }
    free(units);
    return run_shares(g, s, sizeof *s, range_share, what);
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
