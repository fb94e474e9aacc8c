/* settings.c — the CLRUN_* environment variables: one table (settings.h), one typed getter per kind,
 * validation apart from use. */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum kind { TEXT, FLAG, CHOICE, UINTS, RETIRED };

static const struct setting {
    const char *name;
    enum kind kind;
    unsigned lo, hi;
    const char *form, *effect;
} table[CLRUN__SET_COUNT] = {
#define ROW(id, kind, lo, hi, form, effect) [CLRUN__SET_##id] = {"CLRUN_" #id, kind, lo, hi, form, effect},
    CLRUN__SETTINGS(ROW)
#undef ROW
};

const char *clrun__setting_name(clrun__setting id) { return table[id].name; }
const char *clrun__setting_form(clrun__setting id) { return table[id].form; }
const char *clrun__setting_effect(clrun__setting id) { return table[id].effect; }

/* The value, or NULL when unset or empty. */
static const char *value(clrun__setting id)
{
    const char *v = getenv(table[id].name);
    return v && *v ? v : NULL;
}

const char *clrun__setting_text(clrun__setting id) { return value(id); }

static clrun_status malformed(clrun_ctx *ctx, clrun__setting id, const char *v)
{
    /* the form without its markdown backticks */
    char form[128];
    size_t n = 0;
    for (const char *p = table[id].form; *p && n + 1 < sizeof form; p++)
        if (*p != '`') form[n++] = *p;
    form[n] = 0;
    return clrun__fail(ctx, CLRUN_INVALID_ARG, "environment variable %s=%s: expected %s (or unset)", table[id].name, v, form);
}

/* 1, 0 or -1 (neither) for a flag's word. */
static int flag_word(const char *v)
{
    static const char *const on[] = {"1", "yes", "true", "on"}, *const off[] = {"0", "no", "false", "off"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(v, on[i]) == 0) return 1;
        if (strcasecmp(v, off[i]) == 0) return 0;
    }
    return -1;
}

clrun_status clrun__setting_flag(clrun_ctx *ctx, clrun__setting id, int *on)
{
    const char *v = value(id);
    *on = 0;
    if (!v) return CLRUN_OK;
    const int f = flag_word(v);
    if (f < 0) return malformed(ctx, id, v);
    *on = f;
    return CLRUN_OK;
}

int clrun__setting_on(clrun__setting id)
{
    const char *v = value(id);
    return v && flag_word(v) == 1;
}

/* Index of v among the form's backticked words, or -1. */
static int choice_index(clrun__setting id, const char *v)
{
    int i = 0;
    for (const char *p = strchr(table[id].form, '`'); p; i++) {
        const char *e = strchr(p + 1, '`');
        if (!e) break;
        if ((size_t)(e - p - 1) == strlen(v) && strncmp(p + 1, v, strlen(v)) == 0) return i;
        p = strchr(e + 1, '`');
    }
    return -1;
}

clrun_status clrun__setting_choice(clrun_ctx *ctx, clrun__setting id, int *choice)
{
    const char *v = value(id);
    *choice = -1;
    if (!v) return CLRUN_OK;
    const int c = choice_index(id, v);
    if (c < 0) return malformed(ctx, id, v);
    *choice = c;
    return CLRUN_OK;
}

/* The separator of a UINTS form: the first character after its first name. */
static char separator(clrun__setting id)
{
    const char *p = table[id].form;
    while (*p && !isupper((unsigned char)*p)) p++;
    while (isupper((unsigned char)*p) || isdigit((unsigned char)*p)) p++;
    return *p == 'x' ? 'x' : ',';
}

clrun_status clrun__setting_uints(clrun_ctx *ctx, clrun__setting id, unsigned *v, unsigned *count)
{
    const char *s = value(id);
    const struct setting *t = &table[id];
    const char sep = separator(id);
    unsigned n = 0;
    *count = 0;
    if (!s) return CLRUN_OK;
    for (const char *p = s;; p++) {
        /* each a plain decimal: digits only (no sign, no space, no base prefix), below 2^31 */
        char *end;
        if (!isdigit((unsigned char)*p) || n == t->hi) return malformed(ctx, id, s);
        errno = 0;
        unsigned long x = strtoul(p, &end, 10);
        if (errno || x > 0x7fffffffUL) return malformed(ctx, id, s);
        v[n++] = (unsigned)x;
        p = end;
        if (!*p) break;
        if (*p != sep) return malformed(ctx, id, s);
    }
    if (n < t->lo) return malformed(ctx, id, s);
    *count = n;
    return CLRUN_OK;
}

clrun_status clrun__setting_refuse(clrun_ctx *ctx, clrun__setting id, const char *why)
{
    const char *v = value(id);
    return clrun__fail(ctx, CLRUN_INVALID_ARG, "environment variable %s=%s: %s", table[id].name, v ? v : "", why);
}

clrun_status clrun__settings_check(clrun_ctx *ctx)
{
    clrun_status st = CLRUN_OK;
    for (int i = 0; i < CLRUN__SET_COUNT && st == CLRUN_OK; i++) {
        int x;
        unsigned v[CLRUN__SETTING_MAX_UINTS], n;
        switch (table[i].kind) {
        case TEXT: break;
        case FLAG: st = clrun__setting_flag(ctx, (clrun__setting)i, &x); break;
        case CHOICE: st = clrun__setting_choice(ctx, (clrun__setting)i, &x); break;
        case UINTS: st = clrun__setting_uints(ctx, (clrun__setting)i, v, &n); break;
        case RETIRED:
            if (value((clrun__setting)i)) {
                char form[256];
                size_t k = 0; /* the replacement, without its markdown backticks */
                for (const char *p = table[i].form; *p && k + 1 < sizeof form; p++)
                    if (*p != '`') form[k++] = *p;
                form[k] = 0;
                st = clrun__fail(ctx, CLRUN_INVALID_ARG, "environment variable %s is no longer read: set %s instead", table[i].name, form);
            }
            break;
        }
    }
    return st;
}
