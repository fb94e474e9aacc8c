/* tuning.c — the tuning file `clrun tune gemm` writes (one per device, in the cache folder), the
 * shape classes it is keyed by, and the resolution of a backend's tiles: built-in, tuned, then
 * $CLRUN_GEMM_TILES. */
#include "gemm.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *clrun_gemm_tuning_path(const clrun_ctx *ctx, char *buf, size_t size)
{
    if (!ctx) return NULL;
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

static const char *const class_names[] = {"small", "large", "small-fast", "large-fast"};

const char *clrun__gemm_class_name(int cls) { return cls >= 0 && cls < 4 ? class_names[cls] : "?"; }

struct tuning_state {
    int read; /* 0 not yet, 1 read (found or not) */
    clrun__gemm_tuning t;
    char override[128]; /* a tuner's "ROW:SET" in place of $CLRUN_GEMM_TILES; "" none */
};
static const char tuning_key = 0;

/* Up to max plain decimals below 2^31 separated by commas, the whole of s; how many, or 0 when s is
 * not that. */
static unsigned parse_uints(const char *s, unsigned *v, unsigned max)
{
    unsigned n = 0;
    for (const char *p = s;; p++) {
        char *end;
        if (!isdigit((unsigned char)*p) || n == max) return 0;
        errno = 0;
        const unsigned long x = strtoul(p, &end, 10);
        if (errno || x > 0x7fffffffUL) return 0;
        v[n++] = (unsigned)x;
        p = end;
        if (!*p) return n;
        if (*p != ',') return 0;
    }
}

/* A row's tuned set into t: the row by name, with tiles and a full set; else nothing. */
static void add_tiles(clrun__gemm_tuning *t, const char *row, const char *key, const char *values)
{
    clrun_gemm_backend id;
    unsigned v[CLRUN__GEMM_TILE_MAX] = {0};
    if (clrun_gemm_backend_parse(row, &id) != CLRUN_OK) return;
    const clrun__gemm_backend *b = clrun__gemm_row(id);
    if (!b || !b->tiles || parse_uints(values, v, CLRUN__GEMM_TILE_MAX) != b->tiles->count || strlen(key) >= sizeof t->tiles[0].key ||
        t->ntiles == CLRUN__GEMM_TUNED_MAX)
        return;
    t->tiles[t->ntiles].row = id;
    snprintf(t->tiles[t->ntiles].key, sizeof t->tiles[0].key, "%s", key);
    memcpy(t->tiles[t->ntiles++].v, v, sizeof v);
}

/* Read the file. Its lines: "ROW KEY V,V,..." a row's tiles for a key (clrun__gemm_tiles), "auto
 * CLASS ROW" the fastest backend for f32 products of a shape class. The lines of earlier versions
 * are read as what they meant: "CLASS TM,TN,TK,WM,WN,VEC,DB [ROW]" (gpu-kernel's tiles and the
 * class's backend) and "wgmma[-s8|-sp][-large] BM,...,WS" (wgmma's tiles for f16, s8 or sp). The
 * sets are checked by their rows when used; lines it does not understand are skipped. */
static void read_file(clrun_ctx *ctx, clrun__gemm_tuning *t)
{
    char path[4200], line[256];
    FILE *f = clrun_gemm_tuning_path(ctx, path, sizeof path) ? fopen(path, "r") : NULL;
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        char w[3][64] = {"", "", ""};
        const int n = sscanf(line, "%63s %63s %63s", w[0], w[1], w[2]);
        int cls = -1;
        for (int i = 0; i < 4 && n >= 2; i++)
            if (!strcmp(w[0], class_names[i])) cls = i;
        clrun_gemm_backend id;
        unsigned v[CLRUN__GEMM_TILE_MAX];
        if (cls >= 0) { /* the earlier form of gpu-kernel's lines, whole or skipped */
            if (parse_uints(w[1], v, CLRUN__GEMM_TILE_MAX) != 7) continue;
            add_tiles(t, "gpu-kernel", w[0], w[1]);
            if (n == 3 && clrun_gemm_backend_parse(w[2], &id) == CLRUN_OK && clrun__gemm_row(id)) t->backend[cls] = id;
        } else if (n == 2 && !strncmp(w[0], "wgmma", 5)) {  /* the earlier form of wgmma's */
            const char *rest = w[0] + 5 + (w[0][5] == '-'); /* "", "large", "s8", "s8-large", "sp", "sp-large" */
            const int f16 = !*rest || !strcmp(rest, "large");
            char key[32];
            snprintf(key, sizeof key, "%s%s%s", f16 ? "f16" : "", f16 && *rest ? "-" : "", rest);
            add_tiles(t, "wgmma", key, w[1]);
        } else if (n == 3 && !strcmp(w[0], "auto")) {
            for (int i = 0; i < 4; i++)
                if (!strcmp(w[1], class_names[i]) && clrun_gemm_backend_parse(w[2], &id) == CLRUN_OK && clrun__gemm_row(id))
                    t->backend[i] = id;
        } else if (n == 3) add_tiles(t, w[0], w[1], w[2]);
    }
    fclose(f);
}

static struct tuning_state *state(clrun_ctx *ctx)
{
    struct tuning_state *s = clrun__op_state(ctx, &tuning_key, sizeof *s, NULL);
    if (s && !s->read) {
        s->read = 1;
        read_file(ctx, &s->t);
    }
    return s;
}

const clrun__gemm_tuning *clrun__gemm_tuned(clrun_ctx *ctx)
{
    struct tuning_state *s = state(ctx);
    return s ? &s->t : NULL;
}

clrun_status clrun__gemm_tiles_override(clrun_ctx *ctx, const char *spec)
{
    struct tuning_state *s = state(ctx);
    if (!s) return CLRUN_HOST_OUT_OF_MEMORY;
    if (spec && strlen(spec) >= sizeof s->override) return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm: tiles '%s' too long", spec);
    snprintf(s->override, sizeof s->override, "%s", spec ? spec : "");
    return CLRUN_OK;
}

clrun_status clrun__gemm_tuned_set(clrun_ctx *ctx, clrun_gemm_backend row, const char *key, const unsigned *v)
{
    struct tuning_state *s = state(ctx);
    if (!s) return CLRUN_HOST_OUT_OF_MEMORY;
    clrun__gemm_tuning *t = &s->t;
    size_t i = 0;
    while (i < t->ntiles && !(t->tiles[i].row == row && !strcmp(t->tiles[i].key, key))) i++;
    if (i == CLRUN__GEMM_TUNED_MAX || strlen(key) >= sizeof t->tiles[0].key)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "gemm: too many tuned sets");
    if (i == t->ntiles) t->ntiles++;
    t->tiles[i].row = row;
    snprintf(t->tiles[i].key, sizeof t->tiles[i].key, "%s", key);
    memcpy(t->tiles[i].v, v, sizeof t->tiles[i].v);
    return CLRUN_OK;
}

/* Large when the product has at least two 128×128 tiles per compute unit; the fast ones apart. */
int clrun__gemm_class(const clrun_ctx *ctx, const clrun_gemm_desc *d)
{
    const size_t m = d->whole_m > d->m ? d->whole_m : d->m; /* a block of rows: the whole product's class */
    size_t tiles128 = ((m + 127) / 128) * ((d->n + 127) / 128);
    return (tiles128 >= 2 * (size_t)clrun_ctx_device(ctx)->compute_units) + 2 * (d->fast != 0);
}

/* ---- $CLRUN_GEMM_TILES: "ROW:SET[;ROW:SET...]", SET positional "V,V,..." or named "NAME=V,..." ---- */

static clrun_status bad_var(clrun_ctx *ctx, const char *fmt, const char *a, const char *b)
{
    char text[512];
    snprintf(text, sizeof text, fmt, a, b);
    return clrun__setting_refuse(ctx, CLRUN__SET_GEMM_TILES, text);
}

/* "TM,TN,..." */
static const char *names_of(const clrun__gemm_tiles *t, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < t->count && n < size; i++) n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? "," : "", t->names[i]);
    return buf;
}

/* One "NAME=V" or "V" item of a set. */
static int parse_value(const char *p, size_t len, unsigned *x)
{
    char buf[16];
    if (len == 0 || len >= sizeof buf) return 0;
    memcpy(buf, p, len), buf[len] = 0;
    return parse_uints(buf, x, 1) == 1;
}

/* Apply the set text [s, e) for row b over v: positional (at least tiles->min values, the rest from
 * tiles->tail) or named. */
static clrun_status apply_set(clrun_ctx *ctx, const clrun__gemm_backend *b, const char *s, const char *e, unsigned *v)
{
    const clrun__gemm_tiles *t = b->tiles;
    unsigned w[CLRUN__GEMM_TILE_MAX];
    char names[96];
    memcpy(w, v, sizeof w);
    const int named = s < e && !isdigit((unsigned char)*s);
    unsigned n = 0;
    for (const char *p = s; p <= e; n++) {
        const char *q = memchr(p, ',', (size_t)(e - p));
        if (!q) q = e;
        const char *eq = named ? memchr(p, '=', (size_t)(q - p)) : NULL;
        unsigned x, at = n;
        if (named) {
            at = t->count;
            for (unsigned i = 0; eq && i < t->count; i++)
                if (strlen(t->names[i]) == (size_t)(eq - p) && !strncasecmp(p, t->names[i], (size_t)(eq - p))) at = i;
        }
        if (at >= t->count || !parse_value(named ? eq + 1 : p, (size_t)(q - (named ? eq + 1 : p)), &x))
            return bad_var(ctx, "expected %s:%s (positional, plain decimals) or NAME=V items with those names", b->name,
                           names_of(t, names, sizeof names));
        w[at] = x;
        p = q + 1;
    }
    if (!named && n < t->min) {
        char what[96];
        snprintf(what, sizeof what, "at least %u values: %s", t->min, names_of(t, names, sizeof names));
        return bad_var(ctx, "%s takes %s", b->name, what);
    }
    for (unsigned i = n; !named && i < t->count; i++) w[i] = t->tail[i];
    memcpy(v, w, sizeof w);
    return CLRUN_OK;
}

/* The variable's set for row b over v (*given 1), after checking that every item names a row with
 * tiles. */
static clrun_status from_var(clrun_ctx *ctx, const clrun__gemm_backend *b, unsigned *v, int *given)
{
    const struct tuning_state *ts = state(ctx);
    const char *s = ts && *ts->override ? ts->override : clrun__setting_text(CLRUN__SET_GEMM_TILES);
    *given = 0;
    for (const char *p = s; p && *p;) {
        const char *end = strchr(p, ';'), *colon = strchr(p, ':');
        if (!end) end = p + strlen(p);
        if (!colon || colon > end) return bad_var(ctx, "each item is ROW:SET, such as %s:%s", b->name, "...");
        char row[32];
        clrun_gemm_backend id;
        const clrun__gemm_backend *r = NULL;
        snprintf(row, sizeof row, "%.*s", (int)(colon - p < 31 ? colon - p : 31), p);
        if (clrun_gemm_backend_parse(row, &id) == CLRUN_OK) r = clrun__gemm_row(id);
        if (!r || !r->tiles)
            return bad_var(ctx, "'%s' is no backend with tiles (those with tiles: gpu-kernel, mma.sync, wgmma)%s", row, "");
        if (r == b) {
            clrun_status st = apply_set(ctx, b, colon + 1, end, v);
            if (st) return st;
            *given = 1;
        }
        p = *end ? end + 1 : end;
    }
    return CLRUN_OK;
}

clrun_status clrun__gemm_tiles_for(clrun_ctx *ctx, const clrun__gemm_backend *b, const clrun__gemm_plan *p,
                                   unsigned v[CLRUN__GEMM_TILE_MAX], int *from)
{
    const clrun__gemm_tiles *t = b->tiles;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    if (from) *from = 0;
    const clrun__gemm_tuning *tu = clrun__gemm_tuned(ctx);
    if (!tu) return CLRUN_HOST_OUT_OF_MEMORY;
    const char *key = t->key(ctx, p);
    for (size_t i = 0; i < tu->ntiles; i++)
        if (tu->tiles[i].row == b->id && !strcmp(tu->tiles[i].key, key) && !t->check(in, p, tu->tiles[i].v)) {
            memcpy(v, tu->tiles[i].v, sizeof tu->tiles[i].v);
            if (from) *from = 1;
        }
    unsigned w[CLRUN__GEMM_TILE_MAX];
    int given;
    memcpy(w, v, sizeof w);
    clrun_status st = from_var(ctx, b, w, &given);
    if (st || !given) return st;
    const char *why = t->check(in, p, w);
    if (why) return clrun__setting_refuse(ctx, CLRUN__SET_GEMM_TILES, why);
    memcpy(v, w, sizeof w);
    if (from) *from = 2;
    return CLRUN_OK;
}
