/* tune.c — clrun_gemm_tune: every backend row with tiles (gemm.h's clrun__gemm_tiles), on each of its
 * products, over its candidate sets, each result checked against the first candidate's; then, per
 * shape class, the fastest backend for f32. Rows declare what to measure; nothing here knows a row. */
#include "gemm.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

struct tuner {
    clrun_ctx *ctx;
    const clrun_gemm_tune_opts *o;
    clrun_gemm_tuned *out;
    size_t max, n;
    char text[4096]; /* the tuning file's lines */
    size_t len;
};

static void say(const struct tuner *t, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (t->o->progress) t->o->progress(t->o->user, line);
}

/* Keep a winner: in out, and as a line of the tuning file. */
static void keep(struct tuner *t, const char *backend, const char *key, const char *value, double gflops)
{
    if (t->out && t->n < t->max) {
        clrun_gemm_tuned *w = &t->out[t->n];
        snprintf(w->backend, sizeof w->backend, "%s", backend);
        snprintf(w->key, sizeof w->key, "%s", key);
        snprintf(w->value, sizeof w->value, "%s", value);
        w->gflops = gflops;
    }
    t->n++;
    int k = snprintf(t->text + t->len, sizeof t->text - t->len, "%s %s %s\n", backend, key, value);
    if (k > 0 && (size_t)k < sizeof t->text - t->len) t->len += (size_t)k;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A product to time: n³ of a kind and element type, random operands, C f32 (int32 for s8). */
struct product {
    clrun_gemm_desc d;
    enum clrun__gemm_kind kind;
    clrun_buf *meta;
    float *ref, *out; /* the reference result (the first candidate's) and the latest */
    size_t nc;
};

static void product_free(struct product *p)
{
    clrun_buf_free(p->d.a), clrun_buf_free(p->d.b), clrun_buf_free(p->d.c), clrun_buf_free(p->meta);
    free(p->ref), free(p->out);
    memset(p, 0, sizeof *p);
}

static clrun_status product_new(clrun_ctx *ctx, enum clrun__gemm_kind kind, clrun_dtype type, size_t n, int fast, struct product *p)
{
    memset(p, 0, sizeof *p);
    const size_t es = clrun_dtype_size(type), kv = clrun_sp24_kv(n), nn = n * n;
    clrun_gemm_desc_init(&p->d, type, 1, n, n, n, 0, kind == CLRUN__GEMM_S8); /* s8: B as N×K, its kernels' layout */
    p->d.fast = fast, p->kind = kind, p->nc = nn;
    if (kind == CLRUN__GEMM_SP) p->d.lda = kv;
    unsigned char *h = malloc(nn * es);
    p->ref = malloc(nn * 4), p->out = malloc(nn * 4);
    clrun_status st = h && p->ref && p->out ? CLRUN_OK : CLRUN_HOST_OUT_OF_MEMORY;
    uint64_t seed = 99;
    for (size_t i = 0; st == CLRUN_OK && i < nn; i++) {
        seed = seed * 6364136223846793005ull + 1;
        const float x = (float)(seed >> 40) / 16777216.0f - 0.5f;
        if (type == CLRUN_F32) memcpy(h + 4 * i, &x, 4);
        else if (type == CLRUN_I8) h[i] = (unsigned char)(seed >> 56);
        else {
            const uint16_t b = type == CLRUN_BF16 ? clrun_f32_to_bf16(x) : clrun_f32_to_f16(x);
            memcpy(h + 2 * i, &b, 2);
        }
    }
    clrun_buf *dense = NULL;
    if (st == CLRUN_OK && kind == CLRUN__GEMM_SP)
        (void)((st = clrun_buf_new(ctx, nn * es, 0, &dense)) || (st = clrun_upload(dense, 0, h, nn * es)) ||
               (st = clrun_buf_new(ctx, n * kv * es, 0, &p->d.a)) || (st = clrun_buf_new(ctx, n * clrun_sp24_km(n) * 4, 0, &p->meta)) ||
               (st = clrun_sp24_compress(ctx, type, dense, 0, n, n, n, p->d.a, p->meta)));
    else if (st == CLRUN_OK) (void)((st = clrun_buf_new(ctx, nn * es, 0, &p->d.a)) || (st = clrun_upload(p->d.a, 0, h, nn * es)));
    if (st == CLRUN_OK)
        (void)((st = clrun_buf_new(ctx, nn * es, 0, &p->d.b)) || (st = clrun_upload(p->d.b, 0, h, nn * es)) ||
               (st = clrun_buf_new(ctx, nn * 4, 0, &p->d.c)));
    clrun_buf_free(dense);
    free(h);
    if (st) product_free(p);
    return st;
}

/* Time the product on backend b with the tiles "ROW:SET" (NULL: as resolved), 3 runs after a
 * warm-up: GFLOP/s; 0 when it fails or (ref) its result differs from the reference, which it
 * becomes when ref is 0. *st gets the first run's status. */
static double time_on(clrun_ctx *ctx, struct product *p, clrun_gemm_backend b, const char *tiles, int ref, clrun_status *st)
{
    double t[3];
    p->d.backend = b;
    *st = clrun__gemm_tiles_override(ctx, tiles);
    for (int r = -1; r < 3 && *st == CLRUN_OK; r++) {
        const double t0 = now();
        *st = p->kind == CLRUN__GEMM_S8   ? clrun_gemm_s8(ctx, &p->d, NULL)
              : p->kind == CLRUN__GEMM_SP ? clrun_gemm_sp(ctx, &p->d, p->meta, 0)
                                          : clrun_gemm(ctx, &p->d);
        if (*st == CLRUN_OK) *st = clrun_finish(ctx);
        if (r >= 0) t[r] = now() - t0;
    }
    clrun__gemm_tiles_override(ctx, NULL);
    float *res = ref ? p->out : p->ref;
    if (*st != CLRUN_OK || clrun_download(p->d.c, 0, res, p->nc * 4) != CLRUN_OK) return 0;
    if (ref && p->kind == CLRUN__GEMM_S8 && memcmp(p->out, p->ref, p->nc * 4) != 0) return 0;
    for (size_t i = 0; ref && p->kind != CLRUN__GEMM_S8 && i < p->nc; i++)
        if (!(fabsf(p->out[i] - p->ref[i]) <= 1e-3f * (1.0f + fabsf(p->ref[i])))) return 0;
    const double lo = fmin(t[0], t[1]), hi = fmax(t[0], t[1]), med = fmax(lo, fmin(hi, t[2]));
    return 2.0 * (double)p->d.m * (double)p->d.n * (double)p->d.k / med / 1e9;
}

static size_t point_size(size_t n, int rule) { return rule == 1 ? n / 4 : rule == 2 ? (n < 4096 ? n : 4096) : rule == 3 ? 8192 : n; }

static void format_set(const unsigned *v, unsigned count, char *buf, size_t size)
{
    size_t k = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < count && k < size; i++) k += (size_t)snprintf(buf + k, size - k, "%s%u", i ? "," : "", v[i]);
}

/* Row b on one of its products: every candidate; the fastest kept. */
static clrun_status tune_point(struct tuner *t, const clrun__gemm_backend *b, const clrun__gemm_tune_point *pt, size_t n)
{
    clrun_ctx *ctx = t->ctx;
    const clrun__gemm_tiles *tl = b->tiles;
    unsigned(*cands)[CLRUN__GEMM_TILE_MAX] = calloc(256, sizeof *cands);
    struct product p;
    clrun_status st;
    if (!cands) return CLRUN_HOST_OUT_OF_MEMORY;
    const size_t nc = tl->space(clrun_ctx_device(ctx), pt, t->o->quick, cands, 256);
    if ((st = product_new(ctx, pt->kind, pt->type, n, pt->fast, &p))) {
        free(cands);
        return st;
    }
    double best = 0;
    size_t bi = 0;
    for (size_t i = 0; i < nc; i++) {
        char set[96], spec[128];
        format_set(cands[i], tl->count, set, sizeof set);
        snprintf(spec, sizeof spec, "%s:%s", b->name, set);
        const double gf = time_on(ctx, &p, b->id, spec, i > 0, &st);
        if (i == 0 && gf == 0) {
            if (st == CLRUN_UNSUPPORTED || st == CLRUN_INVALID_ARG) { /* the row does not take this product here */
                say(t, "%s %s: not tuned here: %s", b->name, pt->key, clrun_last_error(ctx));
                st = CLRUN_OK;
            } else if (st == CLRUN_OK)
                st = clrun__fail(ctx, CLRUN_BUILD_FAILED, "gemm tune: %s %s: the first candidate's result could not be read", b->name,
                                 pt->key);
            break;
        }
        st = CLRUN_OK;
        if (gf > 0) say(t, "[%zu/%zu] %s %s %zu³ %-26s %10.1f GFLOP/s", i + 1, nc, b->name, pt->key, n, set, gf);
        else say(t, "[%zu/%zu] %s %s %zu³ %-26s failed or wrong result", i + 1, nc, b->name, pt->key, n, set);
        if (gf > best) best = gf, bi = i;
    }
    if (st == CLRUN_OK && best > 0) {
        char set[96];
        format_set(cands[bi], tl->count, set, sizeof set);
        say(t, "best %s %s: %s (%.1f GFLOP/s)", b->name, pt->key, set, best);
        keep(t, b->name, pt->key, set, best);
        st = clrun__gemm_tuned_set(ctx, b->id, pt->key, cands[bi]); /* the backends' pass below uses it */
    }
    product_free(&p);
    free(cands);
    return st;
}

/* Per shape class, f32: every row that takes the product, with its fastest tiles; the fastest kept. */
static clrun_status tune_class(struct tuner *t, int cls, size_t n)
{
    clrun_ctx *ctx = t->ctx;
    struct product p;
    clrun_status st = product_new(ctx, CLRUN__GEMM_FLOAT, CLRUN_F32, n, cls >> 1, &p);
    const clrun__gemm_backend *win = NULL;
    double best = 0;
    int have_ref = 0;
    for (size_t i = 0; st == CLRUN_OK && clrun__gemm_row_at(i); i++) {
        const clrun__gemm_backend *b = clrun__gemm_row_at(i);
        clrun_status rs;
        const double gf = time_on(ctx, &p, b->id, NULL, have_ref, &rs);
        if (rs != CLRUN_OK) continue; /* not here, or not for this product */
        if (gf > 0) say(t, "%s f32 %zu³ on %-12s %10.1f GFLOP/s", clrun__gemm_class_name(cls), n, b->name, gf);
        else say(t, "%s f32 %zu³ on %-12s wrong result", clrun__gemm_class_name(cls), n, b->name);
        have_ref = 1;
        if (gf > best) best = gf, win = b;
    }
    if (st == CLRUN_OK && win) {
        say(t, "best %s: %s (%.1f GFLOP/s)", clrun__gemm_class_name(cls), win->name, best);
        keep(t, "auto", clrun__gemm_class_name(cls), win->name, best);
    }
    if (st == CLRUN_OK) product_free(&p);
    return st;
}

static clrun_status store(struct tuner *t)
{
    char path[4200], dir[4200], head[512];
    const clrun_device_info *in = clrun_ctx_device(t->ctx);
    if (!clrun_gemm_tuning_path(t->ctx, path, sizeof path))
        return clrun__fail(t->ctx, CLRUN_INVALID_ARG,
                           "gemm tune: the cache is off (CLRUN_NO_CACHE), so there is nowhere to store the result");
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = 0;
    for (char *q = dir + 1; *q; q++) /* mkdir -p */
        if (*q == '/') {
            *q = 0;
            mkdir(dir, 0755);
            *q = '/';
        }
    mkdir(dir, 0755);
    const int h = snprintf(head, sizeof head, "# clrun tune gemm on %s (%s)\n", in->name, in->driver_version);
    char *text = malloc((size_t)h + t->len + 1);
    if (!text) return CLRUN_HOST_OUT_OF_MEMORY;
    memcpy(text, head, (size_t)h), memcpy(text + h, t->text, t->len);
    clrun_status st = clrun_file_write(path, text, (size_t)h + t->len);
    free(text);
    if (st == CLRUN_OK) say(t, "stored in %s", path);
    return st;
}

clrun_status clrun_gemm_tune(clrun_ctx *ctx, const clrun_gemm_tune_opts *opts, clrun_gemm_tuned *out, size_t max, size_t *count)
{
    static const clrun_gemm_tune_opts none = {0};
    if (count) *count = 0;
    if (!ctx) return CLRUN_INVALID_ARG;
    if (!count || (!out && max)) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm tune: count is NULL, or out is NULL with max %zu", max);
    if (!opts) opts = &none;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const size_t n = opts->size ? opts->size : in->type == CLRUN_DEVICE_GPU ? 4096 : 256;
    if (n < 16 || n > 65536) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm tune: size %zu is outside 16..65536", n);
    struct tuner *t = calloc(1, sizeof *t);
    if (!t) return CLRUN_HOST_OUT_OF_MEMORY;
    *t = (struct tuner){.ctx = ctx, .o = opts, .out = out, .max = max};
    say(t, "tuning gemm on %s: sizes %zu³ (large) and %zu³ (small)", in->name, n, n / 4);
    clrun_status st = CLRUN_OK;
    for (size_t i = 0; st == CLRUN_OK && clrun__gemm_row_at(i); i++) {
        const clrun__gemm_backend *b = clrun__gemm_row_at(i);
        for (size_t k = 0; b->tiles && st == CLRUN_OK && k < b->tiles->npoints; k++)
            st = tune_point(t, b, &b->tiles->points[k], point_size(n, b->tiles->points[k].size));
    }
    for (int cls = 3; cls >= 0 && st == CLRUN_OK; cls--) st = tune_class(t, cls, cls & 1 ? n : n / 4);
    if (st == CLRUN_OK && opts->store) st = store(t);
    *count = t->n;
    free(t);
    return st;
}
