/* launch.c — launches: the local size when the caller gives none, the checks against the device,
 * the one launch rule, and the typed bind-and-launch of opkit.h. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* Local size when the caller gives none. The library's own kernels guard their tails, so for them
 * (round != 0) it is a multiple of the preferred multiple, about 256 items, and the global size is
 * rounded up to it. For a caller's kernel it divides the global size in every dimension, so no
 * work-item runs that the caller did not ask for (one rule for C, Python and the CLI): the largest
 * divisor within the work-group budget, a multiple of the preferred multiple where one exists. */
static void choose_local(clrun_kernel *k, unsigned dims, const size_t *global, size_t *local, int round)
{
    clrun_ctx *ctx = k->prog->ctx;
    size_t pref = 0, maxwg = 0;
    if (clGetKernelWorkGroupInfo(k->kernel, ctx->device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof pref, &pref, NULL) !=
            CL_SUCCESS ||
        pref == 0)
        pref = ctx->info.preferred_multiple ? ctx->info.preferred_multiple : 1;
    if (clGetKernelWorkGroupInfo(k->kernel, ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof maxwg, &maxwg, NULL) != CL_SUCCESS || maxwg == 0)
        maxwg = ctx->info.max_work_group ? ctx->info.max_work_group : 1;
    size_t target = maxwg < 256 ? maxwg : 256;
    if (pref > target) pref = target;
    const size_t *mi = ctx->info.max_work_item;
    for (unsigned d = 0; d < 3; d++) local[d] = 1;
    if (!round) {
        size_t budget = target;
        for (unsigned d = 0; d < dims; d++) {
            size_t cap = budget < global[d] ? budget : global[d], best = 1, best_pref = 0;
            if (mi[d] && cap > mi[d]) cap = mi[d];
            for (size_t l = cap; l >= 1; l--)
                if (global[d] % l == 0) {
                    if (best == 1) best = l;
                    if (l % pref == 0) {
                        best_pref = l;
                        break;
                    }
                }
            /* a multiple of the preferred multiple unless that costs more than half the group */
            local[d] = best_pref && best_pref * 2 >= best ? best_pref : best;
            budget /= local[d];
            if (budget == 0) budget = 1;
        }
        return;
    }
    if (dims == 1) {
        size_t l = target / pref * pref;
        size_t need = (global[0] + pref - 1) / pref * pref; /* no bigger than the rounded-up global */
        local[0] = l < need ? l : need;
    } else {
        local[0] = pref;
        size_t rest = target / pref;
        size_t need = global[1] < rest ? global[1] : rest;
        local[1] = need ? need : 1;
    }
    for (unsigned d = 0; d < dims; d++)
        if (mi[d] && local[d] > mi[d]) local[d] = mi[d];
}

/* The NDRange against the device, before the driver sees it (drivers abort the process, trap or
 * spin on sizes they cannot schedule): every size at least 1; the work-items in all within the
 * device's address space; each local size within the device's work-item sizes and their product
 * within the device's work-group size; the __local arguments within the device's local memory;
 * fewer than 2^32 work-groups in each dimension (drivers count them in 32 bits). g gets the global
 * size the driver is given (the caller's; rounded up to l only for the library's own kernels, which
 * guard their tails, when no local size was given), l the local one. */
static clrun_status check_range(clrun_kernel *k, unsigned dims, const size_t *global, const size_t *local, size_t *g, size_t *l, int round)
{
    clrun_ctx *ctx = k->prog->ctx;
    const clrun_device_info *in = &ctx->info;
    cl_uint bits = 64;
    size_t kwg = 0, items = 1, wg = 1, lbytes = 0;
    if (dims < 1 || dims > 3 || !global)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "launching %s: dims must be 1, 2 or 3 (got %u) with a global size", k->name, dims);
    clGetDeviceInfo(ctx->device, CL_DEVICE_ADDRESS_BITS, sizeof bits, &bits, NULL);
    /* the device's limit, not CL_KERNEL_WORK_GROUP_SIZE: NVIDIA reports 256 for a kernel loaded as
     * PTX text (-clrun-ptx-rewrite) that runs 384 and 512 wide; a kernel's own smaller limit is the
     * driver's to refuse (CL_INVALID_WORK_GROUP_SIZE, a clean error) */
    kwg = in->max_work_group;
    for (unsigned d = 0; d < dims; d++) {
        if (global[d] == 0) return clrun__fail(ctx, CLRUN_INVALID_ARG, "launching %s: global size %u is 0", k->name, d);
        if (__builtin_mul_overflow(items, global[d], &items) || (bits < 64 && (items >> bits)) || (items >> 62))
            return clrun__fail(ctx, CLRUN_INVALID_ARG,
                               "launching %s: a range of %zu%s work-items does not fit the %u-bit address space of %s", k->name, global[0],
                               dims > 1 ? " × …" : "", bits, in->name);
    }
    if (local) {
        for (unsigned d = 0; d < dims; d++) {
            if (local[d] == 0) return clrun__fail(ctx, CLRUN_INVALID_ARG, "launching %s: local size %u is 0", k->name, d);
            if (in->max_work_item[d] && local[d] > in->max_work_item[d])
                return clrun__fail(ctx, CLRUN_INVALID_ARG, "launching %s: local size %zu in dimension %u; %s allows at most %zu", k->name,
                                   local[d], d, in->name, in->max_work_item[d]);
            wg *= local[d];
            l[d] = local[d], g[d] = global[d];
        }
        if (kwg && wg > kwg)
            return clrun__fail(ctx, CLRUN_INVALID_ARG, "launching %s: a work-group of %zu work-items; %s allows at most %zu", k->name, wg,
                               in->name, kwg);
    } else {
        choose_local(k, dims, global, l, round);
        for (unsigned d = 0; d < dims; d++) g[d] = (global[d] + l[d] - 1) / l[d] * l[d]; /* global[d] < 2^62: no overflow */
    }
    for (unsigned d = 0; d < dims; d++)
        if (((g[d] + l[d] - 1) / l[d]) >> 32)
            return clrun__fail(ctx, CLRUN_INVALID_ARG,
                               "launching %s: %zu work-groups in dimension %u; at most 2^32 - 1 (a larger local size, "
                               "or split the work)",
                               k->name, (g[d] + l[d] - 1) / l[d], d);
    for (unsigned i = 0; i < k->nargs; i++) lbytes += k->local[i];
    if (in->local_mem && lbytes > in->local_mem)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "launching %s: its __local arguments ask for %zu bytes; %s has %llu", k->name, lbytes,
                           in->name, (unsigned long long)in->local_mem);
    return CLRUN_OK;
}

static clrun_status launch(clrun_kernel *k, unsigned dims, const size_t *global, const size_t *local, clrun_event **ev, int round)
{
    if (!k) return clrun__fail(NULL, CLRUN_INVALID_ARG, "launching: the kernel is NULL");
    clrun_ctx *ctx = k->prog->ctx;
    CLRUN__SERIAL(ctx);
    size_t g[3] = {1, 1, 1}, l[3] = {1, 1, 1};
    cl_event e = NULL;
    char desc[400];
    clrun_status st;
    if (ev) *ev = NULL;
    if ((st = check_range(k, dims, global, local, g, l, round))) return st;
    for (unsigned i = 0; i < k->nargs; i++)
        if (!k->set[i])
            return clrun__fail(ctx, CLRUN_ARG_MISMATCH, "launching %s: %s was never set (the kernel takes %u arguments)", k->name,
                               clrun__arg_desc(k, i, desc, sizeof desc), k->nargs);
    cl_int err = clEnqueueNDRangeKernel(clrun__queue(ctx), k->kernel, dims, NULL, g, l, 0, NULL, ev || ctx->profile ? &e : NULL);
    if (err != CL_SUCCESS) {
        if (err == CL_INVALID_WORK_GROUP_SIZE && local)
            return clrun__fail(ctx, CLRUN_INVALID_ARG,
                               "launching %s: local size %zu,%zu,%zu does not divide global size %zu,%zu,%zu or exceeds the "
                               "device's limit (CL_INVALID_WORK_GROUP_SIZE)",
                               k->name, l[0], l[1], l[2], g[0], g[1], g[2]);
        return clrun__fail_cl(ctx, err, "clEnqueueNDRangeKernel", "launching %s", k->name);
    }
    if (ctx->profile) {
        clrun_status st = clrun__profile_add(ctx, k->name, e);
        if (st) {
            clReleaseEvent(e);
            return st;
        }
    }
    return clrun__event_wrap(ctx, e, ev);
}

clrun_status clrun_launch_ev(clrun_kernel *k, unsigned dims, const size_t *global, const size_t *local, clrun_event **ev)
{
    if (!k) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_launch_ev: k is NULL");
    return launch(k, dims, global, local, ev, 0);
}

clrun_status clrun_launch(clrun_kernel *k, unsigned dims, const size_t *global, const size_t *local)
{
    if (!k) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_launch: k is NULL");
    return launch(k, dims, global, local, NULL, 0);
}

/* ---- typed bind and launch (lib/opkit.h) ---------------------------------------------------- */

clrun_status clrun__bind(clrun_kernel *k, const clrun__arg *args, size_t n)
{
    clrun_status st = CLRUN_OK;
    if (n != k->nargs)
        return clrun__fail(k->prog->ctx, CLRUN_ARG_MISMATCH, "kernel %s takes %u arguments; its argument list has %zu", k->name, k->nargs,
                           n);
    for (unsigned i = 0; i < n && st == CLRUN_OK; i++) {
        const clrun__arg *a = &args[i];
        switch (a->kind) {
        case CLRUN__A_BUF: st = clrun_arg_buf(k, i, a->v.buf); break;
        case CLRUN__A_LOCAL: st = clrun_arg_local(k, i, a->v.local); break;
        case CLRUN__A_I32: st = clrun_arg_i32(k, i, a->v.i32); break;
        case CLRUN__A_U32: st = clrun_arg_u32(k, i, a->v.u32); break;
        case CLRUN__A_U64: st = clrun_arg_u64(k, i, a->v.u64); break;
        case CLRUN__A_F32: st = clrun_arg_f32(k, i, a->v.f32); break;
        case CLRUN__A_F64: st = clrun_arg_f64(k, i, a->v.f64); break;
        default: st = clrun__fail(k->prog->ctx, CLRUN_INVALID_ARG, "kernel %s: argument %u has an unknown kind", k->name, i);
        }
    }
    return st;
}

clrun_status clrun__launch(clrun_kernel *k, clrun__grid g, const clrun__arg *args, size_t n)
{
    CLRUN__SERIAL(k->prog->ctx); /* bind and launch as one: a library kernel is shared by the context's callers */
    clrun_status st = clrun__bind(k, args, n);
    if (st != CLRUN_OK) return st;
    return launch(k, g.dims, g.global, g.local[0] ? g.local : NULL, NULL, 1); /* library kernels guard their tails */
}
