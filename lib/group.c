/* group.c — clrun_group: one context per device, work split over them on host threads (the
 * splitters of each op in group_ops.c).
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

#include "group.h"

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
void clrun__group_split_units(const double *w, unsigned n, size_t units, size_t *out)
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
    clrun__group_split_units(g->w, g->n, (m + ROW_BLOCK - 1) / ROW_BLOCK, rows);
    size_t start = 0;
    for (unsigned i = 0; i < g->n; i++) { /* blocks to rows; the last block of the product may be short */
        size_t r = rows[i] * ROW_BLOCK;
        if (start + r > m) r = m - start;
        rows[i] = r, start += r;
    }
    return CLRUN_OK;
}

/* ---- shares on threads ------------------------------------------------------------------------ */

/* Run n shares (each `size` bytes, a struct share first) with fn, a thread each, then each failed
 * share again, in turn, on the first device that did not fail (one context, one thread), its
 * results copied back. The call fails only when a share failed everywhere it ran. */
clrun_status clrun__group_run_shares(clrun_group *g, void *shares, size_t size, void *(*fn)(void *), const char *what)
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
