/* profile.c — device time per kernel name: each launch's event is kept (pending) and read back
 * when 1024 are pending, when the records are read, and when profiling stops. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PENDING_MAX = 1024 };

struct clrun__profile {
    int from_env; /* started by $CLRUN_PROFILE: clrun_close prints the table */
    clrun_profile_entry *ent;
    size_t nent, capent;
    struct pending {
        cl_event event;
        size_t entry;
    } pend[PENDING_MAX];
    size_t npend;
};

/* Read every pending event's times into its entry. Entries are never reordered while events are
 * pending (clrun_profile_read sorts only after draining). */
static clrun_status drain(clrun_ctx *ctx, struct clrun__profile *pr)
{
    clrun_status st = CLRUN_OK;
    for (size_t i = 0; i < pr->npend; i++) {
        cl_event e = pr->pend[i].event;
        cl_ulong a = 0, b = 0;
        cl_int err = clWaitForEvents(1, &e);
        if (err == CL_SUCCESS) err = clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL);
        if (err == CL_SUCCESS) err = clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL);
        clReleaseEvent(e);
        if (err != CL_SUCCESS) { /* a failed launch: not timed; the first failure is reported */
            if (st == CLRUN_OK) st = clrun__fail_cl(ctx, err, "clGetEventProfilingInfo", "profiling %s", pr->ent[pr->pend[i].entry].kernel);
            continue;
        }
        clrun_profile_entry *en = &pr->ent[pr->pend[i].entry];
        const double ms = b > a ? (double)(b - a) * 1e-6 : 0.0;
        if (en->launches == 0 || ms < en->min_ms) en->min_ms = ms;
        if (en->launches == 0 || ms > en->max_ms) en->max_ms = ms;
        en->launches++;
        en->total_ms += ms;
    }
    pr->npend = 0;
    return st;
}

static void release(clrun_ctx *ctx)
{
    struct clrun__profile *pr = ctx->profile;
    if (!pr) return;
    for (size_t i = 0; i < pr->npend; i++) clReleaseEvent(pr->pend[i].event);
    for (size_t i = 0; i < pr->nent; i++) free((char *)pr->ent[i].kernel);
    free(pr->ent);
    free(pr);
    ctx->profile = NULL;
}

clrun_status clrun_profile_start(clrun_ctx *ctx)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_profile_start: ctx is NULL");
    CLRUN__SERIAL(ctx);
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_profile_start: ctx is NULL");
    clrun_profile_stop(ctx);
    if (!(ctx->profile = calloc(1, sizeof *ctx->profile)))
        return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "profiling: out of host memory");
    return CLRUN_OK;
}

void clrun_profile_stop(clrun_ctx *ctx)
{
    CLRUN__SERIAL(ctx);
    if (!ctx || !ctx->profile) return;
    release(ctx);
}

clrun_status clrun__profile_add(clrun_ctx *ctx, const char *kernel, cl_event e)
{
    struct clrun__profile *pr = ctx->profile;
    size_t i = 0;
    while (i < pr->nent && strcmp(pr->ent[i].kernel, kernel) != 0) i++;
    if (i == pr->nent) {
        if (pr->nent == pr->capent) {
            size_t cap = pr->capent ? 2 * pr->capent : 16;
            clrun_profile_entry *n = realloc(pr->ent, cap * sizeof *n);
            if (!n) return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "profiling: out of host memory");
            pr->ent = n, pr->capent = cap;
        }
        char *name = malloc(strlen(kernel) + 1);
        if (!name) return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "profiling: out of host memory");
        strcpy(name, kernel);
        memset(&pr->ent[i], 0, sizeof pr->ent[i]);
        pr->ent[i].kernel = name;
        pr->nent++;
    }
    if (pr->npend == PENDING_MAX) {
        clrun_status st = drain(ctx, pr);
        if (st) return st;
    }
    clRetainEvent(e);
    pr->pend[pr->npend].event = e;
    pr->pend[pr->npend++].entry = i;
    return CLRUN_OK;
}

static int by_total(const void *a, const void *b)
{
    const double x = ((const clrun_profile_entry *)a)->total_ms, y = ((const clrun_profile_entry *)b)->total_ms;
    return x > y ? -1 : x < y;
}

clrun_status clrun_profile_read(clrun_ctx *ctx, const clrun_profile_entry **entries, size_t *count)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_profile_read: ctx is NULL");
    CLRUN__SERIAL(ctx);
    if (!ctx || !entries || !count) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_profile_read: NULL argument");
    *entries = NULL, *count = 0;
    struct clrun__profile *pr = ctx->profile;
    if (!pr) return CLRUN_OK;
    clrun_status st = drain(ctx, pr);
    if (pr->nent > 1) qsort(pr->ent, pr->nent, sizeof *pr->ent, by_total);
    *entries = pr->ent, *count = pr->nent;
    return st;
}

void clrun__profile_env(clrun_ctx *ctx)
{
    if (!clrun__setting_on(CLRUN__SET_PROFILE)) return;
    if (clrun_profile_start(ctx) == CLRUN_OK) ctx->profile->from_env = 1;
}

void clrun__profile_close(clrun_ctx *ctx)
{
    struct clrun__profile *pr = ctx->profile;
    if (!pr) return;
    const clrun_profile_entry *e;
    size_t n;
    if (pr->from_env && clrun_profile_read(ctx, &e, &n) == CLRUN_OK) {
        double all = 0;
        for (size_t i = 0; i < n; i++) all += e[i].total_ms;
        fprintf(stderr, "clrun profile: device time per kernel on %s\n%-36s %9s %11s %10s %10s %10s %6s\n", ctx->info.name, "kernel",
                "launches", "total ms", "mean ms", "min ms", "max ms", "share");
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, "%-36s %9llu %11.4f %10.4f %10.4f %10.4f %5.1f%%\n", e[i].kernel, (unsigned long long)e[i].launches,
                    e[i].total_ms, e[i].total_ms / (double)(e[i].launches ? e[i].launches : 1), e[i].min_ms, e[i].max_ms,
                    all > 0 ? 100 * e[i].total_ms / all : 0.0);
    }
    release(ctx);
}
