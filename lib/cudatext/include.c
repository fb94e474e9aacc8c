/* include.c — a user's own headers in CUDA kernel text: `#include "x.cuh"` (and `<x.cuh>` found in
 * an -I directory) written into the text ahead of the translation, and the translation's lines
 * mapped back to the files they came from.
 *
 * The translator (translate.c) works on one file's bytes, so a header the user includes is pasted in
 * where its #include stands, as the preprocessor would: include guards then work as written, and
 * `#pragma once` is kept here (a file so marked is pasted once). A table of segments records which
 * file and line each line of the pasted text came from; afterwards every `#line N "NAME"` the
 * translation carries, and every "NAME:N:" in its messages, is rewritten to the header's own file
 * and line, so that the device compiler's errors and the translator's refusals name them.
 *
 * Search order, as nvcc's: a quoted name beside the including file (the main text: beside NAME, the
 * current directory for a bare name), then each -I directory of the options in order; an angled
 * name in the -I directories only, and never one the translator provides itself (its standard and
 * cooperative groups headers). A name not found is left as written: the translator refuses it with
 * the line. */
#include "include.h"
#include "internal.h" /* clrun__read_file */

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { MAX_DEPTH = 64, MAX_DIRS = 64 };
#define MARK "@clrun-file-"                      /* #line "@clrun-file-F@": file F of the map, written out after the translation */
static const size_t max_text = (size_t)64 << 20; /* pasted text in all */

struct sbuf {
    char *p;
    size_t n, cap;
    unsigned lines; /* newlines written */
};

struct exp {
    struct sbuf out;
    struct clrun__inc_map *map;
    const char *dirs[MAX_DIRS];
    int ndirs;
    char *once[256]; /* real paths of files that said #pragma once */
    int nonce;
    char *err;
    size_t errn;
    int failed, oom;
};

static int put(struct exp *x, const char *s, size_t n)
{
    if (x->oom || x->failed) return -1;
    if (x->out.n + n + 1 > x->out.cap) {
        size_t cap = x->out.cap ? x->out.cap : 4096;
        while (cap < x->out.n + n + 1) cap *= 2;
        if (cap > max_text + 4096) {
            x->failed = 1;
            snprintf(x->err, x->errn, "the text with its included files passes %zu MiB", max_text >> 20);
            return -1;
        }
        char *p = realloc(x->out.p, cap);
        if (!p) return x->oom = 1, -1;
        x->out.p = p, x->out.cap = cap;
    }
    memcpy(x->out.p + x->out.n, s, n);
    x->out.n += n, x->out.p[x->out.n] = 0;
    for (size_t i = 0; i < n; i++) x->out.lines += s[i] == '\n';
    return 0;
}

/* file's index in the map's names (added if new); -1 out of memory */
static int file_index(struct exp *x, const char *name)
{
    struct clrun__inc_map *m = x->map;
    for (unsigned i = 0; i < m->nfiles; i++)
        if (!strcmp(m->files[i], name)) return (int)i;
    char **f = realloc(m->files, (m->nfiles + 1) * sizeof *f);
    if (!f) return x->oom = 1, -1;
    m->files = f;
    if (!(f[m->nfiles] = strdup(name))) return x->oom = 1, -1;
    return (int)m->nfiles++;
}

/* the lines from the pasted text's next line on come from file's line `line` on */
static void segment(struct exp *x, int file, unsigned line)
{
    struct clrun__inc_map *m = x->map;
    if (x->oom || file < 0) return;
    if (m->nseg && m->seg[m->nseg - 1].out_line == x->out.lines + 1) m->nseg--; /* an empty segment replaced */
    struct clrun__inc_seg *s = realloc(m->seg, (m->nseg + 1) * sizeof *s);
    if (!s) {
        x->oom = 1;
        return;
    }
    m->seg = s;
    s[m->nseg++] = (struct clrun__inc_seg){x->out.lines + 1, line, (unsigned)file};
}

/* dir/name, or name where dir is empty; NULL when too long */
static int join(char *buf, size_t n, const char *dir, size_t dlen, const char *name)
{
    const int w = dlen ? snprintf(buf, n, "%.*s%s%s", (int)dlen, dir, dir[dlen - 1] == '/' ? "" : "/", name) : snprintf(buf, n, "%s", name);
    return w > 0 && (size_t)w < n;
}

/* a regular file (a directory of the same name does not stop the search) */
static int readable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The headers the translator itself provides: an angled include of these is never pasted. */
static int provided(const char *name)
{
    static const char *const ours[] = {
        "stdio.h",  "stdlib.h", "math.h", "cuda.h", "cuda_runtime.h", "device_launch_parameters.h", "stdint.h",          "float.h",
        "limits.h", "assert.h", "cmath",  "cstdio", "cstdint",        "math_constants.h",           "cooperative_groups"};
    for (size_t i = 0; i < sizeof ours / sizeof *ours; i++)
        if (!strncmp(name, ours[i], strlen(ours[i]))) return 1;
    return 0;
}

static void expand(struct exp *x, const char *text, size_t len, int file, const char *dir, size_t dlen, const char *fname, int depth);

/* `#include` at p (after the '#' and its spaces): the header pasted if found; 1 when handled */
static int include_line(struct exp *x, const char *p, const char *eol, int file, unsigned line, const char *dir, size_t dlen,
                        const char *fname, int depth)
{
    if (strncmp(p, "include", 7)) return 0;
    p += 7;
    while (p < eol && (*p == ' ' || *p == '\t')) p++;
    if (p >= eol || (*p != '"' && *p != '<')) return 0;
    const char close = *p == '"' ? '"' : '>';
    const char *s = ++p;
    while (p < eol && *p != close) p++;
    if (p >= eol || p == s || p - s >= PATH_MAX) return 0;
    char name[PATH_MAX], path[PATH_MAX];
    memcpy(name, s, (size_t)(p - s)), name[p - s] = 0;
    if (close == '>' && provided(name)) return 0;
    int found = 0;
    if (name[0] == '/') found = readable(name) && snprintf(path, sizeof path, "%s", name) > 0;
    else {
        if (close == '"') found = join(path, sizeof path, dir, dlen, name) && readable(path);
        for (int i = 0; !found && i < x->ndirs; i++)
            found = join(path, sizeof path, x->dirs[i], strlen(x->dirs[i]), name) && readable(path);
    }
    if (!found) return 0;
    char real[PATH_MAX];
    if (!realpath(path, real)) snprintf(real, sizeof real, "%s", path);
    for (int i = 0; i < x->nonce; i++)
        if (!strcmp(x->once[i], real)) return put(x, "\n", 1), 1; /* #pragma once: pasted already */
    if (depth >= MAX_DEPTH) {
        x->failed = 1;
        snprintf(x->err, x->errn, "%s:%u:1: error: #include \"%s\": included files nest more than %d deep (does a file include itself?)",
                 fname, line, name, MAX_DEPTH);
        return 1;
    }
    size_t n = 0;
    char *text = NULL;
    if (clrun__read_file(path, &text, &n, CLRUN__SOURCE_MAX)) return 0; /* unreadable: left for the translator to refuse by name */
    if (memchr(text, 0, n)) {
        x->failed = 1;
        snprintf(x->err, x->errn, "%s:%u:1: error: #include \"%s\": %s is not text (it holds a NUL byte)", fname, line, name, path);
        free(text);
        return 1;
    }
    const int hf = file_index(x, path);
    char mark[64];
    snprintf(mark, sizeof mark, "#line 1 \"" MARK "%d@\"\n", hf);
    put(x, mark, strlen(mark));
    segment(x, hf, 1);
    const char *slash = strrchr(path, '/');
    expand(x, text, n, hf, path, slash ? (size_t)(slash - path) + 1 : 0, x->map->files[hf >= 0 ? hf : 0], depth + 1);
    if (n && text[n - 1] != '\n') put(x, "\n", 1);
    free(text);
    snprintf(mark, sizeof mark, "#line %u \"" MARK "%d@\"\n", line + 1, file);
    put(x, mark, strlen(mark));
    segment(x, file, line + 1);
    return 1;
}

/* `#pragma once` at p (after the '#'): the file noted, the line left out; 1 when it is one */
static int pragma_once(struct exp *x, const char *p, const char *eol, const char *path)
{
    if (strncmp(p, "pragma", 6)) return 0;
    p += 6;
    while (p < eol && (*p == ' ' || *p == '\t')) p++;
    if (strncmp(p, "once", 4)) return 0;
    for (p += 4; p < eol && isspace((unsigned char)*p);) p++;
    if (p < eol && !(p[0] == '/' && p + 1 < eol && (p[1] == '/' || p[1] == '*'))) return 0;
    if (!path) return 1; /* the main text: said of itself, nothing to do */
    char real[PATH_MAX];
    if (!realpath(path, real)) snprintf(real, sizeof real, "%s", path);
    if (x->nonce < (int)(sizeof x->once / sizeof *x->once)) {
        if (!(x->once[x->nonce] = strdup(real))) x->oom = 1;
        else x->nonce++;
    }
    return 1;
}

static void expand(struct exp *x, const char *text, size_t len, int file, const char *dir, size_t dlen, const char *fname, int depth)
{
    int comment = 0; /* inside a block comment at the line's start */
    unsigned line = 0;
    for (size_t at = 0; at < len && !x->failed && !x->oom;) {
        const char *l = text + at, *e = memchr(l, '\n', len - at);
        const char *eol = e ? e : text + len;
        line++;
        const char *p = l;
        int handled = 0;
        if (!comment) {
            while (p < eol && (*p == ' ' || *p == '\t')) p++;
            if (p < eol && *p == '#') {
                for (p++; p < eol && (*p == ' ' || *p == '\t');) p++;
                if (include_line(x, p, eol, file, line, dir, dlen, fname, depth)) handled = 1;
                else if (pragma_once(x, p, eol, depth ? fname : NULL)) handled = 1, put(x, "\n", 1);
            }
        }
        if (!handled) put(x, l, (size_t)(eol - l) + (e ? 1 : 0));
        /* the block comment state at the next line's start (string and character literals skipped) */
        for (const char *q = l; q < eol; q++) {
            if (comment) {
                if (q[0] == '*' && q + 1 < eol && q[1] == '/') comment = 0, q++;
            } else if (q[0] == '/' && q + 1 < eol && q[1] == '*') comment = 1, q++;
            else if (q[0] == '/' && q + 1 < eol && q[1] == '/') break;
            else if (*q == '"' || *q == '\'') {
                const char c = *q;
                for (q++; q < eol && *q != c; q++)
                    if (*q == '\\') q++;
            }
        }
        at = (size_t)(eol - text) + (e ? 1 : 0);
    }
}

/* The next word of the options at *p, in place: spaces end a word except inside double quotes,
 * which are removed, as a shell would (-I"my dir"); a backslash takes the next character as is. */
static char *next_word(char **p)
{
    char *r = *p, *w;
    if (!r) return NULL;
    while (*r == ' ' || *r == '\t' || *r == '\n') r++;
    if (!*r) return *p = r, NULL;
    char *start = w = r;
    int quoted = 0;
    for (; *r && (quoted || !(*r == ' ' || *r == '\t' || *r == '\n')); r++) {
        if (*r == '"') quoted = !quoted;
        else if (*r == '\\' && r[1]) *w++ = *++r;
        else *w++ = *r;
    }
    *p = *r ? r + 1 : r;
    *w = 0;
    return start;
}

char *clrun__cuda_expand(const char *src, size_t len, const char *name, const char *options, struct clrun__inc_map *map, size_t *outlen,
                         char *err, size_t errn)
{
    memset(map, 0, sizeof *map);
    if (errn) err[0] = 0;
    struct exp x = {.map = map, .err = err, .errn = errn};
    char *opts = options ? strdup(options) : NULL, *at = opts;
    if (options && !opts) return NULL;
    for (char *w; (w = next_word(&at));) {
        const char *d = !strcmp(w, "-I") ? next_word(&at) : !strncmp(w, "-I", 2) ? w + 2 : NULL;
        if (d && *d && x.ndirs < MAX_DIRS) x.dirs[x.ndirs++] = d;
    }
    const int main_file = file_index(&x, name);
    segment(&x, main_file, 1);
    const char *slash = strrchr(name, '/');
    if (!x.oom) expand(&x, src, len, main_file, name, slash ? (size_t)(slash - name) + 1 : 0, name, 0);
    for (int i = 0; i < x.nonce; i++) free(x.once[i]);
    free(opts);
    if (x.oom || x.failed || !x.out.p) {
        free(x.out.p);
        clrun__inc_map_free(map);
        if (!x.failed && !x.out.p && !x.oom) { /* empty text */
            char *e = calloc(1, 1);
            *outlen = 0;
            return e;
        }
        return NULL;
    }
    *outlen = x.out.n;
    return x.out.p;
}

void clrun__inc_map_free(struct clrun__inc_map *map)
{
    for (unsigned i = 0; i < map->nfiles; i++) free(map->files[i]);
    free(map->files);
    free(map->seg);
    memset(map, 0, sizeof *map);
}

/* file and line of the pasted text's line `line` */
static void where(const struct clrun__inc_map *m, unsigned line, const char **file, unsigned *fline)
{
    const struct clrun__inc_seg *s = &m->seg[0];
    for (unsigned i = 0; i < m->nseg && m->seg[i].out_line <= line; i++) s = &m->seg[i];
    *file = m->files[s->file], *fline = s->line + (line - s->out_line);
}

static size_t quoted_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++) n += 1 + (*s == '"' || *s == '\\');
    return n;
}

char *clrun__put_quoted(char *w, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') *w++ = '\\';
        *w++ = *s;
    }
    return w;
}

char *clrun__inc_remap_lines(char *cl, const struct clrun__inc_map *m, const char *name)
{
    if (m->nfiles < 2) return cl;
    size_t longest = 0;
    for (unsigned i = 0; i < m->nfiles; i++)
        if (quoted_len(m->files[i]) > longest) longest = quoted_len(m->files[i]);
    size_t count = 0, n = strlen(cl); /* each #line grows by a file's name at most */
    for (const char *p = strstr(cl, "#line "); p; p = strstr(p + 6, "#line ")) count++;
    char *out = malloc(n + count * (longest + 16) + 1), *w = out;
    if (!out) {
        free(cl);
        return NULL;
    }
    const size_t qn = quoted_len(name);
    char *q = malloc(qn + 1);
    if (!q) {
        free(cl), free(out);
        return NULL;
    }
    *clrun__put_quoted(q, name) = 0;
    for (const char *l = cl; *l;) {
        const char *e = strchr(l, '\n');
        const size_t ll = e ? (size_t)(e - l) + 1 : strlen(l);
        char *end = NULL;
        unsigned long v = 0;
        unsigned long fi = 0;
        char *fe = NULL;
        if (!strncmp(l, "#line ", 6) && isdigit((unsigned char)l[6]) && (v = strtoul(l + 6, &end, 10), *end == ' ') && end[1] == '"' &&
            !strncmp(end + 2, MARK, sizeof MARK - 1) && (fi = strtoul(end + 1 + sizeof MARK, &fe, 10), fe[0] == '@' && fe[1] == '"') &&
            fi < m->nfiles) { /* a file's start or the return to its includer, as include_line wrote it */
            w += sprintf(w, "#line %lu \"", v);
            w = clrun__put_quoted(w, m->files[fi]);
            *w++ = '"';
            const char *rest = fe + 2;
            memcpy(w, rest, (size_t)(l + ll - rest)), w += l + ll - rest;
        } else if (!strncmp(l, "#line ", 6) && isdigit((unsigned char)l[6]) && (v = strtoul(l + 6, &end, 10), *end == ' ') &&
                   end[1] == '"' && !strncmp(end + 2, q, qn) && end[2 + qn] == '"') {
            const char *f;
            unsigned fl;
            where(m, (unsigned)v, &f, &fl);
            w += sprintf(w, "#line %u \"", fl);
            w = clrun__put_quoted(w, f);
            *w++ = '"';
            const char *rest = end + 3 + qn;
            memcpy(w, rest, (size_t)(l + ll - rest)), w += l + ll - rest;
        } else memcpy(w, l, ll), w += ll;
        l += ll;
    }
    *w = 0;
    free(q);
    free(cl);
    return out;
}

void clrun__inc_remap_message(char *err, size_t errn, const struct clrun__inc_map *m, const char *name)
{
    if (m->nfiles < 2 || !errn) return;
    char *copy = strdup(err);
    if (!copy) return;
    const size_t nn = strlen(name);
    size_t w = 0;
    for (const char *p = copy; *p && w + 1 < errn;) {
        char *end = NULL;
        if (!strncmp(p, name, nn) && p[nn] == ':' && isdigit((unsigned char)p[nn + 1])) {
            const unsigned long v = strtoul(p + nn + 1, &end, 10);
            if (*end == ':' || *end == ')' || *end == ',' || *end == ' ' || !*end) {
                const char *f;
                unsigned fl;
                where(m, (unsigned)v, &f, &fl);
                const int k = snprintf(err + w, errn - w, "%s:%u", f, fl);
                if (k < 0 || (size_t)k >= errn - w) {
                    w = errn - 1;
                    break;
                }
                w += (size_t)k, p = end;
                continue;
            }
        }
        err[w++] = *p++;
    }
    err[w < errn ? w : errn - 1] = 0;
    free(copy);
}

/* The end of the option word starting at p (spaces end it, but inside double quotes). */
static const char *word_end(const char *p)
{
    int quoted = 0;
    for (; *p && (quoted || !(*p == ' ' || *p == '\t' || *p == '\n')); p++) {
        if (*p == '\\' && p[1]) p++;
        else if (*p == '"') quoted = !quoted;
    }
    return p;
}

char *clrun__strip_includes(const char *options)
{
    if (!options) return NULL;
    char *out = malloc(strlen(options) + 1), *w = out;
    if (!out) return NULL;
    for (const char *p = options; *p;) {
        while (*p == ' ' || *p == '\t' || *p == '\n') p++;
        if (!*p) break;
        const char *e = word_end(p);
        if (e - p == 2 && !strncmp(p, "-I", 2)) { /* -I DIR: both words */
            const char *d = e;
            while (*d == ' ' || *d == '\t' || *d == '\n') d++;
            p = *d ? word_end(d) : d;
            continue;
        }
        if (strncmp(p, "-I", 2)) {
            if (w > out) *w++ = ' ';
            memcpy(w, p, (size_t)(e - p)), w += e - p;
        }
        p = e;
    }
    *w = 0;
    return out;
}
