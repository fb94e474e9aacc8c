/* source.c — kernel sources: the embedded set, files found in a tree, and #include "x" resolved by
 * clrun before the driver sees the text; the growing string the program code builds with. */
#include "internal.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_INCLUDE_DEPTH 16

void clrun__sb_add(struct clrun__sbuf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

void clrun__sb_printf(struct clrun__sbuf *b, const char *fmt, ...)
{
    char tmp[4400];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) clrun__sb_add(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

const struct clrun__embedded *clrun__find_embedded(const char *name)
{
    for (size_t i = 0; i < clrun__embedded_count; i++)
        if (strcmp(clrun__embedded_files[i].name, name) == 0) return &clrun__embedded_files[i];
    return NULL;
}

/* Is this line `#include "name"`? Copies the name into out. */
static int include_line(const char *line, size_t len, char *out, size_t size)
{
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
    if (i >= len || line[i] != '#') return 0;
    i++;
    while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
    if (len - i < 7 || strncmp(line + i, "include", 7) != 0) return 0;
    i += 7;
    while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
    if (i >= len || line[i] != '"') return 0;
    size_t s = ++i;
    while (i < len && line[i] != '"') i++;
    if (i >= len || i - s == 0 || i - s >= size) return 0;
    memcpy(out, line + s, i - s);
    out[i - s] = 0;
    return 1;
}

/* The file `name` in folder root, else in its subfolders (depth levels deep, the first found): the
 * kernel library's sources live in one folder per op (lib/ops/NAME/), and include each other by base
 * name. 1 with the path in out when found. */
int clrun__find_in_tree(const char *root, const char *name, int depth, char *out, size_t size)
{
    int n = snprintf(out, size, "%s/%s", root, name);
    if (n > 0 && (size_t)n < size && access(out, R_OK) == 0) return 1;
    DIR *d = depth > 0 ? opendir(root) : NULL;
    if (!d) return 0;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char sub[4096];
        struct stat sb;
        int n = snprintf(sub, sizeof sub, "%s/%s", root, e->d_name);
        if (n > 0 && (size_t)n < sizeof sub && stat(sub, &sb) == 0 && S_ISDIR(sb.st_mode))
            found = clrun__find_in_tree(sub, name, depth - 1, out, size);
    }
    closedir(d);
    return found;
}

/* Append `text` (from `label`, in folder `dir`; dir NULL means the embedded set) to out, replacing
 * each #include "x" line by the resolved file; with root (CLRUN_KERNEL_DIR), a name not beside the
 * including file is looked for in root's tree. */
clrun_status clrun__resolve(clrun_ctx *ctx, const char *text, size_t len, const char *label, const char *dir, const char *root, int depth,
                            struct clrun__sbuf *out)
{
    if (depth > MAX_INCLUDE_DEPTH)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: includes nest deeper than %d levels (an include cycle?)", label, MAX_INCLUDE_DEPTH);
    size_t pos = 0;
    unsigned lineno = 0;
    while (pos < len) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - line) : len - pos;
        char name[1024];
        lineno++;
        if (include_line(line, ll, name, sizeof name)) {
            char path[4096];
            char *data = NULL;
            size_t dlen = 0;
            clrun_status st;
            if (!dir) {
                const struct clrun__embedded *e = clrun__find_embedded(name);
                if (!e)
                    return clrun__fail(ctx, CLRUN_IO_ERROR, "%s:%u: included file \"%s\" is not among the embedded kernel sources", label,
                                       lineno, name);
                clrun__sb_printf(out, "#line 1 \"%s\"\n", name);
                st = clrun__resolve(ctx, e->data, e->len, name, NULL, NULL, depth + 1, out);
            } else {
                if (name[0] == '/') snprintf(path, sizeof path, "%s", name);
                else snprintf(path, sizeof path, "%s/%s", dir, name);
                if (root && name[0] != '/' && access(path, R_OK) != 0)
                    clrun__find_in_tree(root, name, CLRUN__KERNEL_TREE_DEPTH, path, sizeof path);
                int rc = clrun__read_file(path, &data, &dlen, CLRUN__SOURCE_MAX);
                if (rc)
                    return clrun__fail(ctx, CLRUN_IO_ERROR, "%s:%u: cannot open included file %s: %s", label, lineno, path, strerror(rc));
                char sub[4096];
                snprintf(sub, sizeof sub, "%s", path);
                char *slash = strrchr(sub, '/');
                if (slash) *slash = 0;
                clrun__sb_printf(out, "#line 1 \"%s\"\n", path);
                st = clrun__resolve(ctx, data, dlen, path, slash ? sub : ".", root, depth + 1, out);
                free(data);
            }
            if (st != CLRUN_OK) return st;
            clrun__sb_printf(out, "\n#line %u \"%s\"\n", lineno + 1, label);
        } else {
            clrun__sb_add(out, line, ll);
            clrun__sb_add(out, "\n", 1);
        }
        pos += ll + (nl ? 1 : 0);
    }
    if (out->oom) return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "%s: out of memory resolving includes", label);
    return CLRUN_OK;
}
