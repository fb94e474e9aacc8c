/* exec.c — `clrun run`'s launches: the geometry checked, the launches timed, the outputs saved. */
#include "run.h"
#include "../values.h"

#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int check_geometry(const struct run_opts *o, clrun_ctx *ctx, clrun_kernel *k, const struct rarg *args, int nargs)
{
    const clrun_device_info *in = clrun_ctx_device(ctx);
    cl_uint bits = 64;
    size_t kwg = 0, local_total = 0, items = 1, groups = 1, wg = 1;
    clGetDeviceInfo(clrun_ctx_cl_device(ctx), CL_DEVICE_ADDRESS_BITS, sizeof bits, &bits, NULL);
    if (clGetKernelWorkGroupInfo(clrun_kernel_cl(k), clrun_ctx_cl_device(ctx), CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg, NULL) !=
        CL_SUCCESS)
        kwg = in->max_work_group;
    for (int i = 0; i < nargs; i++) {
        if (args[i].kind != R_LOCAL) continue;
        if (args[i].local > in->local_mem || local_total > in->local_mem - args[i].local)
            return run_usage_error("the __local arguments ask for more than the %llu bytes of local memory %s has (argument %d: %zu bytes)",
                                   (unsigned long long)in->local_mem, in->name, i, args[i].local);
        local_total += args[i].local;
    }
    for (unsigned d = 0; d < o->dims; d++) {
        const size_t l = o->ldims ? o->local[d] : 1;
        if (o->ldims && in->max_work_item[d] && l > in->max_work_item[d])
            return run_usage_error("-l: %zu work-items in dimension %u; %s allows at most %zu", l, d, in->name, in->max_work_item[d]);
        if (__builtin_mul_overflow(items, o->global[d], &items) || (bits < 64 && items >> bits))
            return run_usage_error("-g: %zu work-items in all do not fit the %u-bit address space of %s", items, bits, in->name);
        wg *= l;
        groups *= (o->global[d] + l - 1) / l;
    }
    if (o->ldims && kwg && wg > kwg)
        return run_usage_error("-l: a work-group of %zu work-items; kernel %s allows at most %zu on %s", wg, clrun_kernel_name(k), kwg,
                               in->name);
    if (!o->ldims) groups = (items + (kwg ? kwg : 1) - 1) / (kwg ? kwg : 1); /* the fewest the driver can make */
    if (groups >> 32) return run_usage_error("-g/-l: %zu work-groups; at most 2^32 - 1 (give a larger -l, or split the work)", groups);
    return 0;
}

/* One element as JSON: integers exactly (a u64 past 2^63 - 1 as its decimal string), floats as
 * reals, or "nan", "inf", "-inf". */
static json_t *value_json(clrun_dtype t, const void *p)
{
    if (t == CLRUN_I64) {
        int64_t v;
        memcpy(&v, p, 8);
        return json_integer((json_int_t)v);
    }
    if (t == CLRUN_U64) {
        uint64_t v;
        memcpy(&v, p, 8);
        if (v <= (uint64_t)INT64_MAX) return json_integer((json_int_t)v);
        char text[24];
        snprintf(text, sizeof text, "%llu", (unsigned long long)v);
        return json_string(text);
    }
    const double d = value_as_double(t, p);
    if (t == CLRUN_F16 || t == CLRUN_BF16 || t == CLRUN_F32 || t == CLRUN_F64) return cli_json_num(d);
    return json_integer((json_int_t)d);
}

/* One dumped argument as oclgrind-kernel prints it: a blank line, "Argument 'NAME': N bytes", one
 * "  NAME[i] = VALUE" line per element (integers in decimal, or with `hex` as 0x and twice the
 * element's bytes in digits, negative ones as their promoted two's complement; floats as C++ streams
 * print them, 6 significant digits), and a blank line. */
int run_execute(struct run_opts *o, clrun_ctx *ctx, clrun_kernel *k, struct rarg *args, int nargs)
{
    int rc = 0;
    unsigned n = clrun_kernel_nargs(k);
    if ((unsigned)nargs != n) {
        char sig[2048] = "";
        size_t off = 0;
        for (unsigned i = 0; i < n && off < sizeof sig; i++) {
            clrun_arg_info info;
            if (clrun_kernel_arg_info(k, i, &info) == CLRUN_OK)
                off += (size_t)snprintf(sig + off, sizeof sig - off, "%s%s %s", i ? ", " : "", info.type, info.name);
        }
        return run_usage_error("kernel %s takes %u argument%s (%s), %d given", clrun_kernel_name(k), n, n == 1 ? "" : "s", sig, nargs);
    }
    for (int i = 0; i < nargs; i++) /* two saves into one file: the later would overwrite the earlier */
        for (int j = 0; j < i; j++)
            if (args[i].save && args[j].save && cli_same_file(args[i].save, args[j].save))
                return run_usage_error("arguments %d and %d are both saved to one file (%s and %s); each output needs its own", j, i,
                                       args[j].save, args[i].save);
    int check_idx[MAX_CHECKS];
    for (int c = 0; c < o->nchecks; c++)
        if ((check_idx[c] = run_find_arg(k, nargs, o->checks[c].target)) < 0)
            return run_usage_error("--check %s: no argument of kernel %s has that name or index", o->checks[c].target,
                                   clrun_kernel_name(k));
    for (int i = 0; i < nargs; i++)
        if (args[i].like < 0 && (rc = run_bind_arg(ctx, k, args, nargs, i))) return rc;
    for (int i = 0; i < nargs; i++) /* out:like after their models */
        if (args[i].like >= 0 && (rc = run_bind_arg(ctx, k, args, nargs, i))) return rc;
    for (int c = 0; c < o->nchecks; c++)
        if (args[check_idx[c]].kind != R_BUF)
            return run_usage_error("--check %s: argument %d is not a buffer", o->checks[c].target, check_idx[c]);

    if ((rc = check_geometry(o, ctx, k, args, nargs))) return rc;
    /* launches: raw enqueue so that without -l the driver picks the work-group size and the global
     * size stays exact (kernels like the seed's multiply_them have no tail guard) */
    cl_command_queue q = clrun_ctx_cl_queue(ctx);
    int runs = o->repeat > 0 ? o->repeat + 1 : 1;
    double *times = calloc((size_t)runs, sizeof *times);
    if (!times) return EXIT_RUNTIME;
    for (int r = 0; r < runs; r++) {
        cl_event ev = NULL;
        cli_running(clrun_kernel_name(k), clrun_ctx_device(ctx)->name);
        if (o->timeout > 0) cli_timeout_arm(o->timeout);
        cl_int err = clEnqueueNDRangeKernel(q, clrun_kernel_cl(k), o->dims, NULL, o->global, o->ldims ? o->local : NULL, 0, NULL, &ev);
        if (err == CL_SUCCESS) err = clWaitForEvents(1, &ev);
        if (o->timeout > 0) cli_timeout_disarm();
        cli_running(NULL, NULL);
        if (err != CL_SUCCESS) {
            fprintf(stderr, "clrun run: launching %s with global %zu,%zu,%zu%s failed: %s (%d)%s\n", clrun_kernel_name(k), o->global[0],
                    o->global[1], o->global[2], o->ldims ? " and the given local size" : "", clrun_cl_error_name(err), (int)err,
                    err == CL_INVALID_WORK_GROUP_SIZE ? " — the device wants a local size that fits it and divides the global size "
                                                        "(OpenCL 2.0 devices take one that does not divide it with -O -cl-std=CL2.0)"
                                                      : "");
            if (ev) clReleaseEvent(ev);
            free(times);
            return err == CL_INVALID_WORK_GROUP_SIZE || err == CL_INVALID_WORK_ITEM_SIZE ? EXIT_USAGE : EXIT_RUNTIME;
        }
        cl_ulong t0 = 0, t1 = 0;
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
        times[r] = (double)(t1 - t0) / 1e6;
        clReleaseEvent(ev);
    }
    int first = o->repeat > 0 ? 1 : 0, cnt = runs - first;
    double tmed = cli_median(times + first, cnt), tmin = times[first], tmax = times[runs - 1];
    free(times);

    /* outputs */
    for (int i = 0; i < nargs; i++) {
        struct rarg *r = &args[i];
        int wanted = r->save || r->dump;
        for (int c = 0; c < o->nchecks; c++) wanted |= check_idx[c] == i;
        if (!wanted || r->kind != R_BUF || !r->a.bytes) continue;
        clrun_status st = clrun_download(r->buf, 0, r->a.data, r->a.bytes);
        if (st != CLRUN_OK) return cli_fail("run", ctx, st);
        if (r->save && clrun_npy_write(r->save, &r->a) != CLRUN_OK)
            return fprintf(stderr, "clrun run: %s\n", clrun_last_error(NULL)), EXIT_RUNTIME;
    }
    json_t *rec = NULL, *checks = NULL;
    if (o->json) { /* {"kernel", "device", "global", "dims", "runs", "min_ms", "median_ms", "max_ms", ["gbps"], "outputs",
                    * "dumps", "checks"} */
        rec = json_pack("{s:s, s:s, s:[I, I, I], s:I, s:i, s:f, s:f, s:f}", "kernel", clrun_kernel_name(k), "device",
                        clrun_ctx_device(ctx)->name, "global", (json_int_t)o->global[0], (json_int_t)o->global[1], (json_int_t)o->global[2],
                        "dims", (json_int_t)o->dims, "runs", cnt, "min_ms", tmin, "median_ms", tmed, "max_ms", tmax);
        if (o->bytes > 0) json_object_set_new(rec, "gbps", json_real(o->bytes / tmed / 1e6));
        json_t *outs = json_array(), *dumps = json_array();
        for (int i = 0; i < nargs; i++)
            if (args[i].save) json_array_append_new(outs, json_string(args[i].save));
        for (int i = 0; i < nargs; i++) { /* the .sim's dump arguments, as the text form prints them */
            if (!args[i].dump) continue;
            clrun_arg_info info;
            clrun_kernel_arg_info(k, (unsigned)i, &info);
            json_t *values = json_array();
            const size_t es = clrun_dtype_size(args[i].a.dtype);
            for (size_t j = 0; j < args[i].a.count; j++)
                json_array_append_new(values, value_json(args[i].a.dtype, (const char *)args[i].a.data + j * es));
            json_array_append_new(
                dumps, json_pack("{s:s, s:s, s:o}", "arg", info.name, "type", clrun_dtype_name(args[i].a.dtype), "values", values));
        }
        checks = json_array();
        json_object_set_new(rec, "outputs", outs);
        json_object_set_new(rec, "dumps", dumps);
        json_object_set_new(rec, "checks", checks); /* borrowed below */
    } else if (!o->sim || o->timing) {
        printf("%s on %s: global %zu", clrun_kernel_name(k), clrun_ctx_device(ctx)->name, o->global[0]);
        for (unsigned d = 1; d < o->dims; d++) printf(",%zu", o->global[d]);
        if (o->ldims) {
            printf(", local %zu", o->local[0]);
            for (unsigned d = 1; d < o->dims; d++) printf(",%zu", o->local[d]);
        }
        if (o->repeat > 0) printf("; %d launches: min %.4f ms, median %.4f ms, max %.4f ms", cnt, tmin, tmed, tmax);
        else printf("; kernel %.4f ms", tmed);
        if (o->bytes > 0) printf(", %.2f GB/s", o->bytes / tmed / 1e6);
        printf("\n");
        for (int i = 0; i < nargs; i++)
            if (args[i].save) {
                printf("wrote %s (%s, shape ", args[i].save, clrun_dtype_name(args[i].a.dtype));
                for (unsigned d = 0; d < args[i].a.ndim; d++) printf("%s%zu", d ? "x" : "", args[i].a.shape[d]);
                printf(")\n");
            }
    }
    for (int i = 0; i < nargs && !rec; i++) { /* .sim dumps, exactly as oclgrind-kernel prints them */
        if (!args[i].dump) continue;
        clrun_arg_info info;
        clrun_kernel_arg_info(k, (unsigned)i, &info);
        run_dump(stdout, info.name, &args[i].a, args[i].hex);
    }
    int worst = 0;
    for (int c = 0; c < o->nchecks; c++) {
        int crc = run_check(o, &o->checks[c], &args[check_idx[c]], check_idx[c], checks);
        if (crc > worst) worst = crc;
    }
    if (rec) cli_json_emit_exact(stdout, rec); /* the dumped values to 17 digits */
    return worst;
}
