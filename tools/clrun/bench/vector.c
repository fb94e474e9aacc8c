/* vector.c — `clrun bench vector`: element-wise ops and reductions against a plain float4 kernel,
 * clEnqueueCopyBuffer and (on CPUs) a plain C loop on two threads. */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

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

static const char plain_mul_src[] = "__kernel void plain_mul(__global float4 *d, __global const float4 *a, __global const float4 *b)\n"
                                    "{ size_t i = get_global_id(0); d[i] = a[i] * b[i]; }\n";

int bench_vector(const struct bench_opts *o)
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
    static const struct {
        clrun_vec_op op;
        int reads;
    } ew[] = {{CLRUN_MUL, 2}, {CLRUN_ADD, 2}, {CLRUN_SUB, 2}, {CLRUN_DIV, 2}, {CLRUN_AXPY, 2}, {CLRUN_SCALE, 1}, {CLRUN_FMA, 3}};
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
