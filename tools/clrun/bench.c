/* bench.c — `clrun bench`: transfer and launch benchmarks, each with its baseline in the same run.
 * Tables on stdout; with --json one record per line: op, impl, size, median_ms, gbps (and more). */
#include "cli.h"

#include <getopt.h>
#include <math.h>
#include <pthread.h>
#ifdef CLRUN_HAVE_OPENBLAS
#include <cblas.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct bench_opts {
    const char *spec;
    int json, repeat;
    double size_mib;
    const char *shapes; /* gemm: "MxNxK,..." */
};

static void record(const struct bench_opts *o, const char *op, const char *impl, size_t size, double ms, double gbps,
                   const char *extra)
{
    if (o->json)
        printf("{\"op\": \"%s\", \"impl\": \"%s\", \"size\": %zu, \"median_ms\": %.6f, \"gbps\": %.3f%s%s}\n", op, impl, size,
               ms, gbps, extra ? ", " : "", extra ? extra : "");
    else
        printf("%-10s %-28s %12zu %12.4f %10.2f\n", op, impl, size, ms, gbps);
}

enum { H2D, D2H };

/* Median wall time (ms) of a blocking transfer of `bytes` between host and buf. */
static double time_transfer(clrun_ctx *ctx, clrun_buf *buf, void *host, size_t bytes, int dir, int repeat, clrun_status *st)
{
    double t[64];
    if (repeat > 64) repeat = 64;
    for (int i = -1; i < repeat; i++) { /* i = -1: warm-up */
        double t0 = cli_now();
        *st = dir == H2D ? clrun_upload(buf, 0, host, bytes) : clrun_download(buf, 0, host, bytes);
        if (*st != CLRUN_OK) return -1;
        if (i >= 0) t[i] = (cli_now() - t0) * 1e3;
    }
    (void)ctx;
    return cli_median(t, repeat);
}

static int bench_transfer(const struct bench_opts *o)
{
    clrun_ctx *ctx = NULL;
    clrun_buf *buf = NULL, *buf2 = NULL;
    void *pinned = NULL;
    char *plain = NULL;
    clrun_status st = CLRUN_OK;
    int rc = cli_open("bench", o->spec, &ctx);
    if (rc) return rc;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    double mib = o->size_mib > 0 ? o->size_mib : in->type == CLRUN_DEVICE_GPU ? 1024 : 256;
    size_t bytes = (size_t)(mib * 1048576.0);
    if (bytes > in->max_alloc) bytes = (size_t)in->max_alloc / 4096 * 4096;
    if ((st = clrun_buf_new(ctx, bytes, 0, &buf)) || (st = clrun_buf_new(ctx, bytes, 0, &buf2)) ||
        (st = clrun_host_alloc(ctx, bytes, &pinned))) {
        rc = cli_fail("bench", ctx, st);
        goto done;
    }
    plain = malloc(bytes);
    if (!plain) {
        fprintf(stderr, "clrun bench: cannot allocate %zu bytes of host memory\n", bytes);
        rc = EXIT_RUNTIME;
        goto done;
    }
    memset(plain, 1, bytes); /* fault the pages in before timing */
    memset(pinned, 2, bytes);
    if (!o->json) {
        printf("transfer benchmark on %s; %zu bytes, median of %d after a warm-up\n", in->name, bytes, o->repeat);
        printf("%-10s %-28s %12s %12s %10s\n", "op", "impl", "bytes", "median_ms", "GB/s");
    }
    const char *saved = getenv("CLRUN_STAGING");
    char *saved_copy = saved ? strdup(saved) : NULL;
    struct {
        const char *impl;
        void *host;
        const char *staging; /* value of CLRUN_STAGING, NULL: unset (clrun decides) */
    } cases[] = {
        {"pinned (clrun_host_alloc)", pinned, NULL},
        {"pageable, driver (baseline)", plain, "0"},
        {"pageable, clrun", plain, NULL},
    };
    for (int dir = H2D; dir <= D2H && rc == 0; dir++) {
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            if (cases[c].staging) setenv("CLRUN_STAGING", cases[c].staging, 1);
            else unsetenv("CLRUN_STAGING");
            double ms = time_transfer(ctx, buf, cases[c].host, bytes, dir, o->repeat, &st);
            if (st != CLRUN_OK) {
                rc = cli_fail("bench", ctx, st);
                break;
            }
            record(o, dir == H2D ? "h2d" : "d2h", cases[c].impl, bytes, ms, bytes / ms / 1e6, NULL);
        }
    }
    if (saved_copy) setenv("CLRUN_STAGING", saved_copy, 1);
    else unsetenv("CLRUN_STAGING");
    free(saved_copy);
    if (rc == 0) { /* device-to-device copy: the memory system's reference */
        double t[64];
        int n = o->repeat > 64 ? 64 : o->repeat;
        for (int i = -1; i < n && st == CLRUN_OK; i++) {
            double t0 = cli_now();
            if ((st = clrun_buf_copy(buf2, 0, buf, 0, bytes)) == CLRUN_OK) st = clrun_finish(ctx);
            if (i >= 0) t[i] = (cli_now() - t0) * 1e3;
        }
        if (st != CLRUN_OK) rc = cli_fail("bench", ctx, st);
        else {
            double ms = cli_median(t, n);
            record(o, "d2d", "clEnqueueCopyBuffer", bytes, ms, 2.0 * bytes / ms / 1e6, NULL);
        }
    }
done:
    free(plain);
    clrun_host_free(ctx, pinned);
    clrun_buf_free(buf);
    clrun_buf_free(buf2);
    clrun_close(ctx);
    return rc;
}

static const char *launch_src = "__kernel void tiny(__global int *p, const uint n)\n"
                                "{ if (get_global_id(0) < n) p[get_global_id(0)] += 1; }\n";

static int bench_launch(const struct bench_opts *o)
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
        printf("launch + finish round trip on %s (%d batches of %d, median per launch)\n", clrun_ctx_device(ctx)->name,
               batches, iters);
        printf("%-34s %10.2f us\n%-34s %10.2f us\n%-34s %+10.2f us\n", "raw OpenCL (baseline)", r,
               "clrun_launch + clrun_finish", c, "clrun overhead", c - r);
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


/* ---- bench vector ------------------------------------------------------------------------- */

struct cpu_job {
    float *d;
    const float *a, *b;
    size_t lo, hi;
    int sum;
    double result;
};

static void *cpu_part(void *arg)
{
    struct cpu_job *j = arg;
    if (j->sum) { /* eight independent accumulators, so the compiler can vectorise */
        float acc[8] = {0};
        size_t i = j->lo;
        for (; i + 8 <= j->hi; i += 8)
            for (int k = 0; k < 8; k++) acc[k] += j->a[i + k];
        for (; i < j->hi; i++) acc[0] += j->a[i];
        double s = 0;
        for (int k = 0; k < 8; k++) s += acc[k];
        j->result = s;
    } else {
        for (size_t i = j->lo; i < j->hi; i++) j->d[i] = j->a[i] * j->b[i];
    }
    return NULL;
}

/* The CPU peer: a plain C loop on two threads (mul or sum). Returns ms. */
static double cpu_loop(float *d, const float *a, const float *b, size_t n, int sum)
{
    struct cpu_job j[2];
    pthread_t t;
    double t0 = cli_now();
    for (int k = 0; k < 2; k++) j[k] = (struct cpu_job){d, a, b, n * (size_t)k / 2, n * (size_t)(k + 1) / 2, sum, 0};
    pthread_create(&t, NULL, cpu_part, &j[1]);
    cpu_part(&j[0]);
    pthread_join(t, NULL);
    return (cli_now() - t0) * 1e3;
}

static const char plain_mul_src[] =
    "__kernel void plain_mul(__global float4 *d, __global const float4 *a, __global const float4 *b)\n"
    "{ size_t i = get_global_id(0); d[i] = a[i] * b[i]; }\n";

static int bench_vector(const struct bench_opts *o)
{
    clrun_ctx *ctx = NULL;
    clrun_buf *buf[4] = {NULL, NULL, NULL, NULL}, *h[4] = {NULL, NULL, NULL, NULL};
    clrun_prog *plain = NULL;
    clrun_kernel *pk = NULL;
    float *ha = NULL, *hb = NULL, *hd = NULL;
    clrun_status st = CLRUN_OK;
    int rc = cli_open("bench", o->spec, &ctx);
    if (rc) return rc;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    int gpu = in->type == CLRUN_DEVICE_GPU;
    size_t n = o->size_mib > 0 ? (size_t)(o->size_mib * 1048576.0) : gpu ? (size_t)256 << 20 : (size_t)16 << 20;
    n &= ~(size_t)3;
    int reps = o->repeat;
    if (!o->json) {
        printf("vector benchmark on %s; %zu elements, median of %d; GB/s counts bytes read + written\n", in->name, n, reps);
        printf("%-10s %-34s %12s %12s %10s\n", "op", "impl", "elements", "median_ms", "GB/s");
    }
    for (int i = 0; i < 4 && st == CLRUN_OK; i++)
        if ((st = clrun_buf_new(ctx, n * 4, 0, &buf[i])) == CLRUN_OK) st = clrun_buf_new(ctx, n * 2, 0, &h[i]);
    ha = malloc(n * 4), hb = malloc(n * 4), hd = malloc(n * 4);
    if (st != CLRUN_OK || !ha || !hb || !hd) {
        rc = st != CLRUN_OK ? cli_fail("bench", ctx, st) : (fprintf(stderr, "clrun bench: out of host memory\n"), EXIT_RUNTIME);
        goto done;
    }
    uint64_t seed = 1;
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        ha[i] = (float)((seed >> 40) * (1.0 / 16777216.0)) + 0.5f, hb[i] = 1.0f + (float)(i % 7) * 0.125f;
    }
    for (int i = 0; i < 4 && st == CLRUN_OK; i++) st = clrun_upload(buf[i], 0, i % 2 ? hb : ha, n * 4);
    if (st == CLRUN_OK) { /* f16 copies of the same data */
        uint16_t *tmp = malloc(n * 2);
        for (int i = 0; i < 4 && st == CLRUN_OK && tmp; i++) {
            const float *src = i % 2 ? hb : ha;
            for (size_t k = 0; k < n; k++) tmp[k] = clrun_f32_to_f16(src[k]);
            st = clrun_upload(h[i], 0, tmp, n * 2);
        }
        free(tmp);
    }
    if (st != CLRUN_OK) {
        rc = cli_fail("bench", ctx, st);
        goto done;
    }
    /* baselines first */
    double t[64];
    int nr = reps > 64 ? 64 : reps;
    { /* a plain float4 multiply kernel through raw OpenCL */
        if ((st = clrun_prog_source(ctx, plain_mul_src, "plain_mul", NULL, &plain)) || (st = clrun_kernel_new(plain, "plain_mul", &pk)) ||
            (st = clrun_arg_buf(pk, 0, buf[2])) || (st = clrun_arg_buf(pk, 1, buf[0])) || (st = clrun_arg_buf(pk, 2, buf[1]))) {
            rc = cli_fail("bench", ctx, st);
            goto done;
        }
        size_t g = n / 4, l = 256;
        for (int r = -1; r < nr; r++) {
            clrun_event *ev = NULL;
            if ((st = clrun_launch_ev(pk, 1, &g, g % l ? NULL : &l, &ev))) break;
            double ms = clrun_event_ms(ev);
            clrun_event_free(ev);
            if (r >= 0) t[r] = ms;
        }
        if (st) {
            rc = cli_fail("bench", ctx, st);
            goto done;
        }
        double ms = cli_median(t, nr);
        record(o, "mul", "baseline: plain float4 kernel", n, ms, 12.0 * n / ms / 1e6, NULL);
    }
    for (int r = -1; r < nr; r++) {
        double t0 = cli_now();
        if ((st = clrun_buf_copy(buf[3], 0, buf[0], 0, n * 4)) == CLRUN_OK) st = clrun_finish(ctx);
        if (r >= 0) t[r] = (cli_now() - t0) * 1e3;
    }
    record(o, "copy", "baseline: clEnqueueCopyBuffer", n, cli_median(t, nr), 8.0 * n / cli_median(t, nr) / 1e6, NULL);
    if (!gpu) {
        for (int r = -1; r < nr; r++) {
            double ms = cpu_loop(hd, ha, hb, n, 0);
            if (r >= 0) t[r] = ms;
        }
        record(o, "mul", "baseline: C loop, 2 threads", n, cli_median(t, nr), 12.0 * n / cli_median(t, nr) / 1e6, NULL);
        for (int r = -1; r < nr; r++) {
            double ms = cpu_loop(NULL, ha, NULL, n, 1);
            if (r >= 0) t[r] = ms;
        }
        record(o, "sum", "baseline: C loop, 2 threads", n, cli_median(t, nr), 4.0 * n / cli_median(t, nr) / 1e6, NULL);
    }
    /* clrun element-wise ops: each timed as a batch of launches finished together */
    static const struct { clrun_vec_op op; int reads; } ew[] = {
        {CLRUN_MUL, 2}, {CLRUN_ADD, 2}, {CLRUN_SUB, 2}, {CLRUN_DIV, 2}, {CLRUN_AXPY, 2}, {CLRUN_SCALE, 1}, {CLRUN_FMA, 3}};
    for (int ty = 0; ty < 2; ty++) {
        clrun_dtype dt = ty ? CLRUN_F16 : CLRUN_F32;
        clrun_buf **B = ty ? h : buf;
        size_t es = ty ? 2 : 4;
        for (size_t e = 0; e < sizeof ew / sizeof *ew; e++) {
            const int batch = 5;
            for (int r = -1; r < nr && st == CLRUN_OK; r++) {
                double t0 = cli_now();
                for (int k = 0; k < batch && st == CLRUN_OK; k++)
                    st = clrun_vec(ctx, ew[e].op, dt, n, 0.5f, B[3], 0, B[0], 0, B[1], 0, B[2], 0);
                if (st == CLRUN_OK) st = clrun_finish(ctx);
                if (r >= 0) t[r] = (cli_now() - t0) * 1e3 / batch;
            }
            if (st) {
                rc = cli_fail("bench", ctx, st);
                goto done;
            }
            char impl[64];
            snprintf(impl, sizeof impl, "clrun %s", clrun_dtype_name(dt));
            double ms = cli_median(t, nr);
            record(o, clrun_vec_op_name(ew[e].op), impl, n, ms, (double)(ew[e].reads + 1) * es * n / ms / 1e6, NULL);
        }
        /* reductions: blocking calls, each including the download of its partial results */
        const char *red[] = {"sum", "dot", "norm2", "max", "min", "argmax"};
        for (int q = 0; q < 6; q++) {
            for (int r = -1; r < nr && st == CLRUN_OK; r++) {
                double d;
                float f;
                size_t idx;
                double t0 = cli_now();
                switch (q) {
                case 0: st = clrun_sum(ctx, dt, B[0], 0, n, &d); break;
                case 1: st = clrun_dot(ctx, dt, B[0], 0, B[1], 0, n, &d); break;
                case 2: st = clrun_norm2(ctx, dt, B[0], 0, n, &d); break;
                case 3: st = clrun_max(ctx, dt, B[0], 0, n, &f); break;
                case 4: st = clrun_min(ctx, dt, B[0], 0, n, &f); break;
                default: st = clrun_argmax(ctx, dt, B[0], 0, n, &idx); break;
                }
                if (r >= 0) t[r] = (cli_now() - t0) * 1e3;
            }
            if (st) {
                rc = cli_fail("bench", ctx, st);
                goto done;
            }
            char impl[64];
            snprintf(impl, sizeof impl, "clrun %s", clrun_dtype_name(dt));
            double ms = cli_median(t, nr);
            record(o, red[q], impl, n, ms, (q == 1 ? 2.0 : 1.0) * es * n / ms / 1e6, NULL);
        }
    }
done:
    for (int i = 0; i < 4; i++) clrun_buf_free(buf[i]), clrun_buf_free(h[i]);
    clrun_kernel_free(pk);
    clrun_prog_free(plain);
    free(ha), free(hb), free(hd);
    clrun_close(ctx);
    return rc;
}


/* ---- bench gemm --------------------------------------------------------------------------- */

static void gemm_record(const struct bench_opts *o, const char *impl, size_t m, size_t n, size_t k, double ms)
{
    double gf = 2.0 * m * n * k / ms / 1e6;
    if (o->json)
        printf("{\"op\": \"gemm\", \"impl\": \"%s\", \"m\": %zu, \"n\": %zu, \"k\": %zu, \"median_ms\": %.6f, \"gflops\": %.3f}\n", impl, m, n,
               k, ms, gf);
    else
        printf("%-30s %6zu %6zu %6zu %12.4f %10.1f\n", impl, m, n, k, ms, gf);
}

/* "MxNxK[,MxNxK...]" into at most 16 shapes; 0 when the list is malformed or has a zero. */
static int parse_shapes(const char *list, size_t shapes[16][3], size_t *ns)
{
    *ns = 0;
    for (const char *p = list; *p && *ns < 16;) {
        unsigned long long m, n, k;
        int used = 0;
        if (sscanf(p, "%llux%llux%llu%n", &m, &n, &k, &used) != 3 || !m || !n || !k) return 0;
        shapes[*ns][0] = m, shapes[*ns][1] = n, shapes[*ns][2] = k, ++*ns;
        p += used;
        if (*p == ',') p++;
    }
    return 1;
}

/* Median wall time of clrun_gemm + clrun_finish (backend be), after one warm-up call. */
static clrun_status time_gemm(clrun_ctx *ctx, clrun_gemm_desc *d, clrun_gemm_backend be, int reps, double *ms)
{
    double t[64];
    clrun_status st = CLRUN_OK;
    d->backend = be;
    for (int r = -1; r < reps && st == CLRUN_OK; r++) {
        double t0 = cli_now();
        if ((st = clrun_gemm(ctx, d)) == CLRUN_OK) st = clrun_finish(ctx);
        if (r >= 0) t[r] = (cli_now() - t0) * 1e3;
    }
    if (st == CLRUN_OK) *ms = cli_median(t, reps);
    return st;
}

static int bench_gemm(const struct bench_opts *o)
{
    clrun_ctx *ctx = NULL;
    int rc = cli_open("bench", o->spec, &ctx);
    if (rc) return rc;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    int gpu = in->type == CLRUN_DEVICE_GPU;
    size_t shapes[16][3], ns = 0;
    const char *list = o->shapes ? o->shapes
                       : gpu    ? "1024x1024x1024,4096x4096x4096,8192x8192x8192,4095x4097x1000,127x8191x64,8191x127x4096"
                                : "256x256x256,512x512x512,1024x1024x1024";
    if (!parse_shapes(list, shapes, &ns)) {
        clrun_close(ctx);
        return cli_usage_error("bench", "--shapes wants MxNxK[,MxNxK...], not '%s'", list);
    }
    int reps = o->repeat > 64 ? 64 : o->repeat;
    if (!o->json) {
        printf("gemm benchmark on %s: f32 row-major NN, GFLOP/s = 2·M·N·K / time, wall clock around the call and clFinish,\n"
               "median of %d after a warm-up\n%-30s %6s %6s %6s %12s %10s\n", in->name, reps, "impl", "M", "N", "K", "median_ms", "GFLOP/s");
    }
    for (size_t si = 0; si < ns && rc == 0; si++) {
        size_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
        float *ha = malloc(m * k * 4), *hb = malloc(k * n * 4), *hc = malloc(m * n * 4);
        clrun_gemm_desc d = {0, 0, m, n, k, 1.0f, 0.0f, NULL, 0, k, 0, NULL, 0, n, 0, NULL, 0, n, 0, 1, CLRUN_GEMM_AUTO, 0, CLRUN_F32};
        clrun_status st = CLRUN_OK;
        uint64_t seed = 7 + si;
        if (!ha || !hb || !hc) rc = (fprintf(stderr, "clrun bench: out of host memory\n"), EXIT_RUNTIME);
        for (size_t i = 0; rc == 0 && i < m * k; i++) ha[i] = (float)((seed = seed * 6364136223846793005ull + 1) >> 40) / 16777216.0f - 0.5f;
        for (size_t i = 0; rc == 0 && i < k * n; i++) hb[i] = (float)((seed = seed * 6364136223846793005ull + 1) >> 40) / 16777216.0f - 0.5f;
        if (rc == 0 && ((st = clrun_buf_new(ctx, m * k * 4, 0, &d.a)) || (st = clrun_buf_new(ctx, k * n * 4, 0, &d.b)) ||
                        (st = clrun_buf_new(ctx, m * n * 4, 0, &d.c)) || (st = clrun_upload(d.a, 0, ha, m * k * 4)) ||
                        (st = clrun_upload(d.b, 0, hb, k * n * 4))))
            rc = cli_fail("bench", ctx, st);
        double ms = 0;
        if (rc == 0) {
            if ((st = time_gemm(ctx, &d, CLRUN_GEMM_KERNEL, reps, &ms))) rc = cli_fail("bench", ctx, st);
            else gemm_record(o, "clrun", m, n, k, ms);
        }
        if (rc == 0) { /* one running sum per element: a plain loop's accuracy */
            d.fast = 1;
            if ((st = time_gemm(ctx, &d, CLRUN_GEMM_KERNEL, reps, &ms))) rc = cli_fail("bench", ctx, st);
            else gemm_record(o, "clrun fast", m, n, k, ms);
            d.fast = 0;
        }
        if (rc == 0 && clrun_have_clblast()) {
            if ((st = time_gemm(ctx, &d, CLRUN_GEMM_CLBLAST, reps, &ms))) fprintf(stderr, "clrun bench: CLBlast: %s\n", clrun_last_error(ctx));
            else gemm_record(o, "CLBlast", m, n, k, ms);
        }
        clrun_buf_free(d.a), clrun_buf_free(d.b), clrun_buf_free(d.c);
        free(ha), free(hb), free(hc);
    }
#ifdef CLRUN_HAVE_OPENBLAS
    /* the CPU peer, on the host's cores, after every device measurement: OpenBLAS's threads keep
     * spinning for a while after a call and would slow PoCL down */
    for (size_t si = 0; si < ns && rc == 0 && !gpu; si++) {
        size_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
        float *ha = calloc(m * k, 4), *hb = calloc(k * n, 4), *hc = calloc(m * n, 4);
        double t[64];
        for (size_t i = 0; ha && i < m * k; i++) ha[i] = (float)(i % 17) * 0.25f - 2.0f;
        for (size_t i = 0; hb && i < k * n; i++) hb[i] = (float)(i % 13) * 0.5f - 3.0f;
        for (int r = -1; ha && hb && hc && r < reps; r++) {
            double t0 = cli_now();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, ha, (int)k, hb, (int)n, 0.0f, hc, (int)n);
            if (r >= 0) t[r] = (cli_now() - t0) * 1e3;
        }
        if (ha && hb && hc) gemm_record(o, "OpenBLAS cblas_sgemm (host)", m, n, k, cli_median(t, reps));
        free(ha), free(hb), free(hc);
    }
#endif
    clrun_close(ctx);
    return rc;
}

/* ---- bench mixed --------------------------------------------------------------------------- */

/* PyTorch's matmul on CUDA (cuBLAS) in f16 and f32, when python3 has torch with a GPU: "f16 MS" and
 * "f32 MS" lines, median of reps after a warm-up, timed with CUDA events. 0 when it cannot run. */
static int torch_gemm(size_t m, size_t n, size_t k, int reps, double *f16, double *f32)
{
    static const char *script = "import sys, statistics\n"
                                "import torch\n"
                                "assert torch.cuda.is_available()\n"
                                "m, n, k, reps = map(int, sys.argv[1:5])\n"
                                "for dt, name in ((torch.float16, 'f16'), (torch.float32, 'f32')):\n"
                                "    a = torch.randn(m, k, device='cuda', dtype=dt); b = torch.randn(k, n, device='cuda', dtype=dt)\n"
                                "    torch.matmul(a, b); torch.cuda.synchronize(); t = []\n"
                                "    for _ in range(reps):\n"
                                "        e0 = torch.cuda.Event(enable_timing=True); e1 = torch.cuda.Event(enable_timing=True)\n"
                                "        e0.record(); torch.matmul(a, b); e1.record(); torch.cuda.synchronize(); t.append(e0.elapsed_time(e1))\n"
                                "    print(name, statistics.median(t))\n";
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "python3 - %zu %zu %zu %d 2>/dev/null <<'CLRUN_EOF'\n%sCLRUN_EOF\n", m, n, k, reps, script);
    FILE *f = popen(cmd, "r");
    if (!f) return 0;
    char line[256];
    int got = 0;
    while (fgets(line, sizeof line, f)) {
        double v;
        if (sscanf(line, "f16 %lf", &v) == 1) *f16 = v, got |= 1;
        else if (sscanf(line, "f32 %lf", &v) == 1) *f32 = v, got |= 2;
    }
    return pclose(f) == 0 && got == 3;
}

/* Fill a matrix of count elements of type t with values in [-0.5, 0.5). */
static void *fill_matrix(clrun_dtype t, size_t count, uint64_t seed)
{
    void *p = malloc(count * (t == CLRUN_F32 ? 4 : 2));
    for (size_t i = 0; p && i < count; i++) {
        float v = (float)((seed = seed * 6364136223846793005ull + 1) >> 40) / 16777216.0f - 0.5f;
        if (t == CLRUN_F32) ((float *)p)[i] = v;
        else ((uint16_t *)p)[i] = t == CLRUN_F16 ? clrun_f32_to_f16(v) : clrun_f32_to_bf16(v);
    }
    return p;
}

static int bench_mixed(const struct bench_opts *o)
{
    clrun_ctx *ctx = NULL;
    int rc = cli_open("bench", o->spec, &ctx);
    if (rc) return rc;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const int gpu = in->type == CLRUN_DEVICE_GPU, tc = clrun_gemm_tensor_cores(ctx);
    size_t shapes[16][3], ns = 0;
    if (!tc && gpu && *clrun_last_error(ctx)) fprintf(stderr, "clrun bench: no tensor cores: %s\n", clrun_last_error(ctx));
    const char *list = o->shapes ? o->shapes : gpu ? "4096x4096x4096,8192x8192x8192,4095x4097x1000" : "512x512x512,1024x1024x1024";
    if (!parse_shapes(list, shapes, &ns)) {
        clrun_close(ctx);
        return cli_usage_error("bench", "--shapes wants MxNxK[,MxNxK...], not '%s'", list);
    }
    const int reps = o->repeat > 64 ? 64 : o->repeat;
    if (!o->json)
        printf("mixed-precision benchmark on %s: row-major NN, C in f32, GFLOP/s = 2·M·N·K / time, wall clock around the call\n"
               "and clFinish, median of %d after a warm-up; tensor cores: %s\n%-30s %6s %6s %6s %12s %10s\n",
               in->name, reps, tc ? "yes (mma.sync through inline PTX)" : "no (the portable kernels run)", "impl", "M", "N", "K", "median_ms",
               "GFLOP/s");
    static const struct {
        const char *name;
        clrun_dtype t;
        clrun_gemm_backend be;
        int need_tc;
    } rows[] = {{"clrun f32 (SIMT kernel)", CLRUN_F32, CLRUN_GEMM_KERNEL, 0}, {"clrun f16 portable", CLRUN_F16, CLRUN_GEMM_KERNEL, 0},
                {"clrun bf16 portable", CLRUN_BF16, CLRUN_GEMM_KERNEL, 0},   {"clrun f16 tensor cores", CLRUN_F16, CLRUN_GEMM_TENSOR, 1},
                {"clrun bf16 tensor cores", CLRUN_BF16, CLRUN_GEMM_TENSOR, 1}, {"clrun f32 3xTF32", CLRUN_F32, CLRUN_GEMM_TENSOR, 1}};
    for (size_t si = 0; si < ns && rc == 0; si++) {
        const size_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
        for (size_t r = 0; r < sizeof rows / sizeof *rows && rc == 0; r++) {
            if (rows[r].need_tc && !tc) continue;
            if (rows[r].need_tc && (k % 8 || n % 8)) { /* rows of A and B must start on 16 bytes */
                if (!o->json) printf("%-30s %6zu %6zu %6zu   (rows of A or B not 16-byte aligned: the tensor kernel does not take them)\n", rows[r].name, m, n, k);
                continue;
            }
            if (gpu && rows[r].be == CLRUN_GEMM_KERNEL && rows[r].t != CLRUN_F32 && tc && m * n * k > (size_t)1 << 36) continue; /* slow */
            const clrun_dtype t = rows[r].t;
            const size_t es = t == CLRUN_F32 ? 4 : 2;
            void *ha = fill_matrix(t, m * k, 7 + si), *hb = fill_matrix(t, k * n, 99 + si);
            clrun_gemm_desc d = {.m = m, .n = n, .k = k, .alpha = 1, .lda = k, .ldb = n, .ldc = n, .type = t};
            clrun_status st = CLRUN_OK;
            double ms = 0;
            if (!ha || !hb) rc = (fprintf(stderr, "clrun bench: out of host memory\n"), EXIT_RUNTIME);
            else if ((st = clrun_buf_new(ctx, m * k * es, 0, &d.a)) || (st = clrun_buf_new(ctx, k * n * es, 0, &d.b)) ||
                     (st = clrun_buf_new(ctx, m * n * 4, 0, &d.c)) || (st = clrun_upload(d.a, 0, ha, m * k * es)) ||
                     (st = clrun_upload(d.b, 0, hb, k * n * es)) || (st = time_gemm(ctx, &d, rows[r].be, reps, &ms)))
                rc = cli_fail("bench", ctx, st);
            else gemm_record(o, rows[r].name, m, n, k, ms);
            clrun_buf_free(d.a), clrun_buf_free(d.b), clrun_buf_free(d.c);
            free(ha), free(hb);
        }
        double f16 = 0, f32 = 0;
        if (rc == 0 && gpu && torch_gemm(m, n, k, reps, &f16, &f32)) {
            gemm_record(o, "PyTorch f16 matmul (cuBLAS)", m, n, k, f16);
            gemm_record(o, "PyTorch f32 matmul (cuBLAS)", m, n, k, f32);
        } else if (rc == 0 && gpu && si == 0 && !o->json) {
            printf("(PyTorch with CUDA not found: no cuBLAS rows)\n");
        }
    }
    /* conversions: bytes read + written per second */
    const size_t count = (size_t)(o->size_mib > 0 ? o->size_mib : gpu ? 256 : 16) << 20;
    clrun_buf *f = NULL, *h = NULL;
    clrun_status st;
    if (rc == 0 && ((st = clrun_buf_new(ctx, count * 4, 0, &f)) || (st = clrun_buf_new(ctx, count * 2, 0, &h)))) rc = cli_fail("bench", ctx, st);
    static const struct {
        const char *name;
        clrun_dtype from, to;
    } casts[] = {{"cast f32 -> f16", CLRUN_F32, CLRUN_F16}, {"cast f16 -> f32", CLRUN_F16, CLRUN_F32},
                 {"cast f32 -> bf16", CLRUN_F32, CLRUN_BF16}, {"cast bf16 -> f32", CLRUN_BF16, CLRUN_F32}};
    if (rc == 0 && !o->json) printf("\n%-30s %12s %12s %10s\n", "conversion", "elements", "median_ms", "GB/s");
    for (size_t c = 0; c < sizeof casts / sizeof *casts && rc == 0; c++) {
        double t[64];
        clrun_buf *src = casts[c].from == CLRUN_F32 ? f : h, *dst = src == f ? h : f;
        for (int r = -1; r < reps && rc == 0; r++) {
            double t0 = cli_now();
            if ((st = clrun_cast(ctx, src, 0, casts[c].from, dst, 0, casts[c].to, count)) || (st = clrun_finish(ctx))) rc = cli_fail("bench", ctx, st);
            if (r >= 0) t[r] = (cli_now() - t0) * 1e3;
        }
        if (rc) break;
        double ms = cli_median(t, reps);
        record(o, "cast", casts[c].name, count, ms, count * 6.0 / ms / 1e6, NULL);
    }
    clrun_buf_free(f), clrun_buf_free(h);
    clrun_close(ctx);
    return rc;
}

/* ---- canny --------------------------------------------------------------------------------------*/

static double rnd(uint64_t *s) /* uniform in [0, 1) */
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* A natural-looking 8-bit frame: smooth shading, discs, lines and noise (deterministic). */
static void make_frame(unsigned char *img, size_t w, size_t h, uint64_t seed)
{
    float *f = malloc(w * h * sizeof *f);
    if (!f) return;
    const size_t gx = w / 64 + 2, gy = h / 64 + 2;
    double grid[64][64];
    for (size_t y = 0; y < gy && y < 64; y++)
        for (size_t x = 0; x < gx && x < 64; x++) grid[y][x] = 50 + 140 * rnd(&seed);
    for (size_t y = 0; y < h; y++)
        for (size_t x = 0; x < w; x++) { /* bilinear shading between grid points 64 pixels apart */
            double fx = (double)x / 64, fy = (double)y / 64;
            size_t ix = (size_t)fx, iy = (size_t)fy;
            if (ix > 62) ix = 62;
            if (iy > 62) iy = 62;
            double ax = fx - ix, ay = fy - iy;
            f[y * w + x] = (float)((grid[iy][ix] * (1 - ax) + grid[iy][ix + 1] * ax) * (1 - ay) +
                                   (grid[iy + 1][ix] * (1 - ax) + grid[iy + 1][ix + 1] * ax) * ay);
        }
    for (size_t n = 0; n < w * h / 40000 + 4; n++) { /* discs */
        double cx = rnd(&seed) * w, cy = rnd(&seed) * h, r = 3 + rnd(&seed) * (double)(w < h ? w : h) / 8, v = rnd(&seed) * 255;
        for (size_t y = cy > r ? (size_t)(cy - r) : 0; y < h && y <= cy + r; y++)
            for (size_t x = cx > r ? (size_t)(cx - r) : 0; x < w && x <= cx + r; x++)
                if ((x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r) f[y * w + x] = (float)v;
    }
    for (size_t n = 0; n < w * h / 80000 + 4; n++) { /* straight lines */
        double x0 = rnd(&seed) * w, y0 = rnd(&seed) * h, x1 = rnd(&seed) * w, y1 = rnd(&seed) * h, v = rnd(&seed) * 255;
        size_t steps = (size_t)(fabs(x1 - x0) + fabs(y1 - y0)) + 1;
        for (size_t t = 0; t <= steps; t++) {
            size_t x = (size_t)(x0 + (x1 - x0) * t / steps), y = (size_t)(y0 + (y1 - y0) * t / steps);
            if (x < w && y < h) f[y * w + x] = (float)v;
        }
    }
    for (size_t i = 0; i < w * h; i++) { /* sensor noise, then 8 bits */
        double v = f[i] + (rnd(&seed) + rnd(&seed) + rnd(&seed) - 1.5) * 8;
        img[i] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v + 0.5);
    }
    free(f);
}

/* cv2.Canny timed by Python when python3-opencv is there: writes "cpu MS" and, when OpenCV has
 * OpenCL, "ocl MS" (device-resident, UMat) and "oclio MS" (upload + Canny + download); the CPU
 * edges go to edges_path. Returns 0 when OpenCV could not be run. */
static int opencv_canny(const char *png, const char *edges_path, int reps, double *cpu, double *ocl, double *oclio)
{
    static const char *script =
        "import sys, time, statistics\n"
        "import cv2\n"
        "img = cv2.imread(sys.argv[1], cv2.IMREAD_GRAYSCALE); reps = int(sys.argv[3])\n"
        "def med(f):\n"
        "    f(); t = []\n"
        "    for _ in range(reps):\n"
        "        t0 = time.perf_counter(); f(); t.append((time.perf_counter() - t0) * 1e3)\n"
        "    return statistics.median(t)\n"
        "cv2.ocl.setUseOpenCL(False)\n"
        "print('cpu', med(lambda: cv2.Canny(img, 50, 100)))\n"
        "cv2.imwrite(sys.argv[2], cv2.Canny(img, 50, 100))\n"
        "if cv2.ocl.haveOpenCL():\n"
        "    cv2.ocl.setUseOpenCL(True); u = cv2.UMat(img)\n"
        "    def dev():\n"
        "        e = cv2.Canny(u, 50, 100); cv2.ocl.finish()\n"
        "    print('ocl', med(dev))\n"
        "    print('oclio', med(lambda: cv2.Canny(cv2.UMat(img), 50, 100).get()))\n";
    const char *pythons[] = {"python3", "/usr/bin/python3"};
    for (int p = 0; p < 2; p++) {
        char cmd[8192];
        snprintf(cmd, sizeof cmd, "%s - '%s' '%s' %d 2>/dev/null <<'CLRUN_EOF'\n%sCLRUN_EOF\n", pythons[p], png, edges_path, reps, script);
        FILE *f = popen(cmd, "r");
        if (!f) continue;
        char line[256];
        int got = 0;
        while (fgets(line, sizeof line, f)) {
            double v;
            if (sscanf(line, "cpu %lf", &v) == 1) *cpu = v, got = 1;
            else if (sscanf(line, "ocl %lf", &v) == 1) *ocl = v;
            else if (sscanf(line, "oclio %lf", &v) == 1) *oclio = v;
        }
        if (pclose(f) == 0 && got) return 1;
    }
    return 0;
}

static void canny_record(const struct bench_opts *o, const char *impl, size_t w, size_t h, double ms)
{
    if (o->json)
        printf("{\"op\": \"canny\", \"impl\": \"%s\", \"width\": %zu, \"height\": %zu, \"median_ms\": %.6f, \"mpix_s\": %.1f}\n", impl, w, h, ms,
               (double)w * h / ms / 1e3);
    else
        printf("%-44s %5zux%-5zu %10.4f %10.1f\n", impl, w, h, ms, (double)w * h / ms / 1e3);
}

static int bench_canny(const struct bench_opts *o)
{
    clrun_ctx *ctx = NULL;
    int rc = cli_open("bench", o->spec, &ctx);
    if (rc) return rc;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    static const size_t sizes[2][2] = {{1920, 1080}, {3840, 2160}};
    int reps = o->repeat > 64 ? 64 : o->repeat;
    enum { WARM = 3 }; /* untimed runs first: the first one builds or loads the kernels, the next ones wake the driver's threads */
    if (!o->json)
        printf("canny benchmark on %s: 8-bit gray frames, L1, thresholds 50/100; wall clock, median of %d after %d untimed runs\n"
               "%-44s %11s %10s %10s\n", in->name, reps, WARM, "impl", "size", "median_ms", "Mpixel/s");
    int have_cv = -1;
    for (int si = 0; si < 2 && rc == 0; si++) {
        const size_t w = sizes[si][0], h = sizes[si][1], n = w * h;
        unsigned char *img = malloc(n), *edges = malloc(n);
        clrun_buf *bs = NULL, *bd = NULL;
        clrun_status st = CLRUN_OK;
        double t[64];
        clrun_canny_params p = {50, 100, 0, 3, 0, 0.0};
        if (!img || !edges) rc = (fprintf(stderr, "clrun bench: out of host memory\n"), EXIT_RUNTIME);
        if (rc == 0) make_frame(img, w, h, 11 + (uint64_t)si);
        if (rc == 0 && ((st = clrun_buf_new(ctx, n, 0, &bs)) || (st = clrun_buf_new(ctx, n, 0, &bd)) || (st = clrun_upload(bs, 0, img, n))))
            rc = cli_fail("bench", ctx, st);
        for (int r = -WARM; rc == 0 && r < reps; r++) { /* device-resident */
            double t0 = cli_now();
            if ((st = clrun_canny(ctx, bs, 0, w, w, h, 1, bd, 0, w, &p)) || (st = clrun_finish(ctx))) rc = cli_fail("bench", ctx, st);
            else if (r >= 0) t[r] = (cli_now() - t0) * 1e3;
        }
        if (rc == 0) canny_record(o, "clrun (device-resident)", w, h, cli_median(t, reps));
        for (int r = -WARM; rc == 0 && r < reps; r++) { /* with the transfers */
            double t0 = cli_now();
            if ((st = clrun_upload(bs, 0, img, n)) || (st = clrun_canny(ctx, bs, 0, w, w, h, 1, bd, 0, w, &p)) ||
                (st = clrun_download(bd, 0, edges, n)))
                rc = cli_fail("bench", ctx, st);
            else if (r >= 0) t[r] = (cli_now() - t0) * 1e3;
        }
        if (rc == 0) canny_record(o, "clrun (upload + Canny + download)", w, h, cli_median(t, reps));
        unsigned char *pin = NULL; /* the same from pinned host memory (clrun_host_alloc) */
        if (rc == 0 && clrun_host_alloc(ctx, n, (void **)&pin) == CLRUN_OK) {
            memcpy(pin, img, n);
            for (int r = -WARM; rc == 0 && r < reps; r++) {
                double t0 = cli_now();
                if ((st = clrun_upload(bs, 0, pin, n)) || (st = clrun_canny(ctx, bs, 0, w, w, h, 1, bd, 0, w, &p)) ||
                    (st = clrun_download(bd, 0, pin, n)))
                    rc = cli_fail("bench", ctx, st);
                else if (r >= 0) t[r] = (cli_now() - t0) * 1e3;
                memcpy(pin, img, n);
            }
            if (rc == 0) canny_record(o, "clrun (same, pinned host memory)", w, h, cli_median(t, reps));
            clrun_host_free(ctx, pin);
        }
        if (rc == 0 && !o->json) { /* where the device time goes: more resident runs, profiled (not timed above) */
            const clrun_profile_entry *e = NULL;
            size_t ne = 0;
            if ((st = clrun_profile_start(ctx))) rc = cli_fail("bench", ctx, st);
            for (int r = 0; rc == 0 && r < reps; r++)
                if ((st = clrun_canny(ctx, bs, 0, w, w, h, 1, bd, 0, w, &p))) rc = cli_fail("bench", ctx, st);
            if (rc == 0 && (st = clrun_profile_read(ctx, &e, &ne))) rc = cli_fail("bench", ctx, st);
            double all = 0;
            for (size_t i = 0; i < ne; i++) all += e[i].total_ms;
            if (rc == 0) printf("  device time per frame by kernel:");
            for (size_t i = 0; rc == 0 && i < ne; i++)
                printf(" %s %.4f ms (%.0f%%)%s", e[i].kernel + (strncmp(e[i].kernel, "clrun_canny_", 12) ? 0 : 12), e[i].total_ms / reps,
                       all > 0 ? 100 * e[i].total_ms / all : 0.0, i + 1 < ne ? "," : "\n");
            clrun_profile_stop(ctx);
        }
        if (rc == 0 && have_cv != 0) {
            char dir[] = "/tmp/clrun-bench-XXXXXX", png[64], out[64];
            double cpu = 0, ocl = 0, oclio = 0;
            clrun_image frame = {w, h, w, 1, img}, ref = {0};
            if (mkdtemp(dir)) {
                snprintf(png, sizeof png, "%s/frame.png", dir);
                snprintf(out, sizeof out, "%s/edges.png", dir);
                have_cv = clrun_image_write(png, &frame) == CLRUN_OK && opencv_canny(png, out, reps, &cpu, &ocl, &oclio);
                if (have_cv) {
                    canny_record(o, "OpenCV cv2.Canny (host cores)", w, h, cpu);
                    if (ocl > 0) canny_record(o, "OpenCV cv2.Canny on UMat (OpenCL, resident)", w, h, ocl);
                    if (oclio > 0) canny_record(o, "OpenCV cv2.Canny on UMat (with transfers)", w, h, oclio);
                    int same = clrun_image_read(out, &ref) == CLRUN_OK && ref.width == w && ref.height == h && !memcmp(ref.data, edges, n);
                    if (!o->json) printf("  clrun's edges %s OpenCV's\n", same ? "are identical to" : "DIFFER from");
                    if (!same) rc = EXIT_RUNTIME;
                    clrun_image_free(&ref);
                }
                unlink(png), unlink(out), rmdir(dir);
            }
            if (!have_cv && !o->json) printf("  (OpenCV not measured: python3 with cv2, e.g. Debian's python3-opencv, is not installed)\n");
        }
        clrun_buf_free(bs), clrun_buf_free(bd);
        free(img), free(edges);
    }
    clrun_close(ctx);
    return rc;
}

static const char *bench_help =
    "usage: clrun bench NAME [-d SPEC] [--json] [--repeat N] [--size MIB]\n\n"
    "Benchmarks, each printing the baseline it is judged against in the same run:\n"
    "  transfer   host<->device from pinned memory (clrun_host_alloc), from ordinary memory through the\n"
    "             plain driver path (baseline) and through clrun; device-to-device copy for reference\n"
    "  launch     enqueue + finish round trip of a tiny kernel: raw OpenCL against clrun\n"
    "  vector     element-wise ops and reductions, f32 and f16 storage, against a plain float4 kernel,\n"
    "             clEnqueueCopyBuffer and (on CPUs) a plain C loop on two threads\n"
    "  gemm       f32 matrix multiply: clrun's kernel (default, per-slice partial sums) and its fast\n"
    "             mode (clrun_gemm_desc.fast) against CLBlast on the same device and, on CPUs, OpenBLAS\n"
    "             (--shapes MxNxK,... to choose the shapes)\n"
    "  mixed      GEMM with f16/bf16 inputs and f32 results: the portable kernels and, on NVIDIA, the\n"
    "             tensor-core kernel (and 3xTF32 for f32), against clrun's f32 kernel and PyTorch's cuBLAS\n"
    "             (when python3 has torch with CUDA); then f32 <-> f16/bf16 conversion bandwidth (--size Mi\n"
    "             elements, default 256 on a GPU, 16 otherwise; --shapes MxNxK,...)\n"
    "  canny      Canny edges of 1080p and 4K gray frames (L1, 50/100), device-resident and with the\n"
    "             transfers, against OpenCV's cv2.Canny on the host cores and on OpenCL (UMat) when\n"
    "             python3 with cv2 is installed; checks that the edges are identical and splits the\n"
    "             device time by kernel (clrun_profile)\n\n"
    "  -d, --device SPEC   device (default: $CLRUN_DEVICE, else the best)\n"
    "  --json              one JSON record per line: op, impl, size, median_ms, gbps\n"
    "  --repeat N          timed repetitions after a warm-up (default 5)\n"
    "  --size MIB          transfer: MiB (default 1024 on a GPU, 256 otherwise); vector: Mi elements\n"
    "                      (default 256 on a GPU, 16 otherwise)\n"
    "  --help              this text\n";

int cmd_bench(int argc, char **argv)
{
    struct bench_opts o = {NULL, 0, 5, 0, NULL};
    static const struct option opts[] = {{"device", required_argument, NULL, 'd'}, {"json", no_argument, NULL, 'j'},
                                         {"repeat", required_argument, NULL, 'r'}, {"size", required_argument, NULL, 's'},
                                         {"shapes", required_argument, NULL, 'S'},
                                         {"help", no_argument, NULL, 'h'}, {0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "d:h", opts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'd': o.spec = optarg; break;
        case 'j': o.json = 1; break;
        case 'r':
            o.repeat = (int)strtol(optarg, &end, 10);
            if (!*optarg || *end || o.repeat < 1 || o.repeat > 1000) return cli_usage_error("bench", "--repeat wants 1..1000, not '%s'", optarg);
            break;
        case 's':
            o.size_mib = strtod(optarg, &end);
            if (!*optarg || *end || !(o.size_mib > 0) || o.size_mib > 1e6) return cli_usage_error("bench", "--size wants a positive number of MiB, not '%s'", optarg);
            break;
        case 'S': o.shapes = optarg; break;
        case 'h': return fputs(bench_help, stdout), EXIT_OK;
        default:
            if (optopt) return cli_usage_error("bench", "option -%c needs a value", optopt);
            return cli_usage_error("bench", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) return cli_usage_error("bench", "which benchmark? transfer, launch, vector, gemm, mixed or canny");
    const char *name = argv[optind];
    if (optind + 1 < argc) return cli_usage_error("bench", "unexpected argument '%s'", argv[optind + 1]);
    if (strcmp(name, "transfer") == 0) return bench_transfer(&o);
    if (strcmp(name, "launch") == 0) return bench_launch(&o);
    if (strcmp(name, "vector") == 0) return bench_vector(&o);
    if (strcmp(name, "gemm") == 0) return bench_gemm(&o);
    if (strcmp(name, "canny") == 0) return bench_canny(&o);
    if (strcmp(name, "mixed") == 0) return bench_mixed(&o);
    return cli_usage_error("bench", "unknown benchmark '%s'; there are: transfer, launch, vector, gemm, mixed, canny", name);
}
