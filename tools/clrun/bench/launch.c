/* launch.c — `clrun bench launch`: the enqueue + finish round trip of a tiny kernel, raw OpenCL
 * against clrun. */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *launch_src = "__kernel void tiny(__global int *p, const uint n)\n"
                                "{ if (get_global_id(0) < n) p[get_global_id(0)] += 1; }\n";

int bench_launch(const struct bench_opts *o)
{
    clrun_ctx *ctx = NULL;
    clrun_prog *prog = NULL;
    clrun_kernel *k = NULL;
    clrun_buf *buf = NULL;
    clrun_status st;
    int rc = cli_open("bench", o->spec, &ctx);
    if (rc) return rc;
    if ((st = clrun_prog_source(ctx, launch_src, "launch-bench", NULL, &prog)) || (st = clrun_kernel_new(prog, "tiny", &k)) ||
        (st = clrun_buf_new(ctx, 4096, 0, &buf)) || (st = clrun_arg_buf(k, 0, buf)) || (st = clrun_arg_u32(k, 1, 32))) {
        rc = cli_fail("bench", ctx, st);
        goto done;
    }
    const int iters = 200, batches = o->repeat < 3 ? 3 : o->repeat > 64 ? 64 : o->repeat;
    double raw[64], lib[64];
    size_t g = 32, l = 32;
    cl_command_queue q = clrun_ctx_cl_queue(ctx);
    cl_kernel ck = NULL;
    /* the raw baseline uses its own cl_kernel made from the same program */
    cl_int err;
    ck = clCreateKernel(clrun_prog_cl_program(prog), "tiny", &err);
    cl_mem m = clrun_buf_cl_mem(buf);
    cl_uint n32 = 32;
    clSetKernelArg(ck, 0, sizeof m, &m);
    clSetKernelArg(ck, 1, sizeof n32, &n32);
    for (int b = -1; b < batches; b++) { /* interleaved, b = -1 warms both up */
        double t0 = cli_now();
        for (int i = 0; i < iters; i++) {
            clEnqueueNDRangeKernel(q, ck, 1, NULL, &g, &l, 0, NULL, NULL);
            clFinish(q);
        }
        double t1 = cli_now();
        for (int i = 0; i < iters && st == CLRUN_OK; i++)
            if ((st = clrun_launch(k, 1, &g, &l)) == CLRUN_OK) st = clrun_finish(ctx);
        double t2 = cli_now();
        if (b >= 0) raw[b] = (t1 - t0) * 1e6 / iters, lib[b] = (t2 - t1) * 1e6 / iters;
    }
    clReleaseKernel(ck);
    if (st != CLRUN_OK) {
        rc = cli_fail("bench", ctx, st);
        goto done;
    }
    double r = cli_median(raw, batches), c = cli_median(lib, batches);
    if (!o->json) {
        printf("launch + finish round trip on %s (%d batches of %d, median per launch)\n", clrun_ctx_device(ctx)->name, batches, iters);
        printf("%-34s %10.2f us\n%-34s %10.2f us\n%-34s %+10.2f us\n", "raw OpenCL (baseline)", r, "clrun_launch + clrun_finish", c,
               "clrun overhead", c - r);
    } else {
        char extra[64];
        snprintf(extra, sizeof extra, "\"median_us\": %.3f", r);
        record(o, "launch", "raw OpenCL", 0, r / 1e3, 0, extra);
        snprintf(extra, sizeof extra, "\"median_us\": %.3f", c);
        record(o, "launch", "clrun", 0, c / 1e3, 0, extra);
    }
done:
    clrun_buf_free(buf);
    clrun_kernel_free(k);
    clrun_prog_free(prog);
    clrun_close(ctx);
    return rc;
}
