/* gemm.c — `clrun bench gemm`: f32 GEMM against CLBlast and, on CPUs, OpenBLAS; the shape list and
 * the timing shared with `clrun bench mixed`. */
#include "bench.h"

#include <pthread.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef CLRUN_HAVE_OPENBLAS
#include <cblas.h>
#endif

void gemm_record(const struct bench_opts *o, const char *impl, size_t m, size_t n, size_t k, double ms)
{
    double gf = 2.0 * m * n * k / ms / 1e6;
    if (o->json)
        cli_json_emit(stdout, json_pack("{s:s, s:s, s:I, s:I, s:I, s:o, s:o}", "op", "gemm", "impl", impl, "m", (json_int_t)m, "n",
                                        (json_int_t)n, "k", (json_int_t)k, "median_ms", cli_json_num(ms), "gflops", cli_json_num(gf)));
    else printf("%-30s %6zu %6zu %6zu %12.4f %10.1f\n", impl, m, n, k, ms, gf);
}

/* "MxNxK[,MxNxK...]" into at most 16 shapes; 0 when the list is malformed or has a zero. */
int parse_shapes(const char *list, size_t shapes[16][3], size_t *ns)
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
clrun_status time_gemm(clrun_ctx *ctx, clrun_gemm_desc *d, clrun_gemm_backend be, int reps, double *ms)
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

/* Device-resident over the group: each device holds its block of A's rows, all of B and its block
 * of C (as clrun_group_gemm would split them) and multiplies, all at once, a thread each; the time
 * is the slowest device's, from a common start. */
struct resident {
    clrun_ctx *ctx;
    clrun_gemm_desc d;
    pthread_barrier_t *start;
    int reps;
    double ms[64];
    clrun_status st;
};

static void *resident_run(void *arg)
{
    struct resident *r = arg;
    r->st = r->d.m ? clrun_gemm(r->ctx, &r->d) : CLRUN_OK; /* warm-up */
    if (!r->st) r->st = clrun_finish(r->ctx);
    for (int i = 0; i < r->reps; i++) {
        pthread_barrier_wait(r->start);
        const double t0 = cli_now();
        if (!r->st && r->d.m && !(r->st = clrun_gemm(r->ctx, &r->d))) r->st = clrun_finish(r->ctx);
        r->ms[i] = (cli_now() - t0) * 1e3;
    }
    return NULL;
}

static int group_resident(const struct bench_opts *o, clrun_group *grp, size_t m, size_t n, size_t k, int reps, clrun_dtype type,
                          const char *who)
{
    const unsigned nd = clrun_group_size(grp);
    size_t *rows = calloc(nd, sizeof *rows);
    struct resident *r = calloc(nd, sizeof *r);
    pthread_t *th = calloc(nd, sizeof *th);
    pthread_barrier_t start;
    const size_t es = clrun_dtype_size(type);
    clrun_status st = rows && r && th ? clrun_group_split_rows(grp, m, rows) : CLRUN_HOST_OUT_OF_MEMORY;
    int rc = st ? cli_fail("bench", NULL, st) : 0;
    for (unsigned i = 0; !rc && i < nd; i++) {
        clrun_ctx *ctx = clrun_group_ctx(grp, i);
        clrun_gemm_desc d;
        clrun_gemm_desc_init(&d, type, 1, rows[i], n, k, 0, 0);
        d.whole_m = m;
        if (rows[i] && ((st = clrun_buf_new(ctx, rows[i] * k * es, 0, &d.a)) || (st = clrun_buf_new(ctx, k * n * es, 0, &d.b)) ||
                        (st = clrun_buf_new(ctx, rows[i] * n * 4, 0, &d.c)) ||
                        (st = clrun_buf_fill(d.a, &(uint16_t){0x3c00}, 2, 0, rows[i] * k * es)) ||
                        (st = clrun_buf_fill(d.b, &(uint16_t){0x3c00}, 2, 0, k * n * es))))
            rc = cli_fail("bench", ctx, st);
        r[i] = (struct resident){ctx, d, &start, reps, {0}, CLRUN_OK};
    }
    if (!rc) {
        pthread_barrier_init(&start, NULL, nd);
        for (unsigned i = 0; i < nd; i++)
            if (pthread_create(&th[i], NULL, resident_run, &r[i]))
                exit((fprintf(stderr, "clrun bench: cannot start a thread\n"), EXIT_RUNTIME));
        for (unsigned i = 0; i < nd; i++) pthread_join(th[i], NULL);
        pthread_barrier_destroy(&start);
        double t[64];
        for (int j = 0; j < reps; j++) {
            t[j] = 0;
            for (unsigned i = 0; i < nd; i++) t[j] = r[i].ms[j] > t[j] ? r[i].ms[j] : t[j];
        }
        for (unsigned i = 0; i < nd && !rc; i++)
            if (r[i].st) rc = cli_fail("bench", r[i].ctx, r[i].st);
        char impl[64];
        snprintf(impl, sizeof impl, "%s, resident%s", who, type == CLRUN_F16 ? ", f16" : "");
        if (!rc) gemm_record(o, impl, m, n, k, cli_median(t, reps));
    }
    for (unsigned i = 0; r && i < nd; i++) clrun_buf_free(r[i].d.a), clrun_buf_free(r[i].d.b), clrun_buf_free(r[i].d.c);
    free(rows), free(r), free(th);
    return rc;
}

/* --devices: each shape from host arrays on the group's first device alone and on the whole group
 * (clrun_group_gemm, its measured weights), the results compared bit for bit; then device-resident
 * over the group, f32 and f16 (the tensor cores where there are some), for the multi-GPU speed-up
 * against one device's resident rows above. */
static int group_rows(const struct bench_opts *o, clrun_group *grp, size_t shapes[16][3], size_t ns, int reps)
{
    const unsigned nd = clrun_group_size(grp);
    int rc = 0;
    for (size_t si = 0; si < ns && rc == 0; si++) {
        const size_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
        double *w = calloc(nd, sizeof *w), *alone = calloc(nd, sizeof *alone), t1[64], t2[64];
        float *ha = malloc(m * k * 4), *hb = malloc(k * n * 4), *hc = malloc(m * n * 4), *hc2 = malloc(m * n * 4);
        clrun_gemm_desc e;
        clrun_status st = CLRUN_OK;
        clrun_gemm_desc_init(&e, CLRUN_F32, 1, m, n, k, 0, 0);
        uint64_t seed = 7 + si;
        if (!w || !alone || !ha || !hb || !hc || !hc2 || clrun_group_weights(grp, w))
            rc = (fprintf(stderr, "clrun bench: out of host memory\n"), EXIT_RUNTIME);
        for (size_t i = 0; rc == 0 && i < m * k; i++)
            ha[i] = (float)((seed = seed * 6364136223846793005ull + 1) >> 40) / 16777216.0f - 0.5f;
        for (size_t i = 0; rc == 0 && i < k * n; i++)
            hb[i] = (float)((seed = seed * 6364136223846793005ull + 1) >> 40) / 16777216.0f - 0.5f;
        if (alone) alone[0] = 1;
        for (int r = -1; rc == 0 && r < reps; r++) {
            double t0 = cli_now();
            if ((st = clrun_group_set_weights(grp, alone)) || (st = clrun_group_gemm(grp, &e, ha, hb, hc))) break;
            const double t1x = cli_now();
            if ((st = clrun_group_set_weights(grp, w)) || (st = clrun_group_gemm(grp, &e, ha, hb, hc2))) break;
            if (r >= 0) t1[r] = (t1x - t0) * 1e3, t2[r] = (cli_now() - t1x) * 1e3;
        }
        if (st) rc = cli_fail("bench", NULL, st);
        if (rc == 0) {
            char impl[64];
            gemm_record(o, "device 0 alone, host arrays", m, n, k, cli_median(t1, reps));
            snprintf(impl, sizeof impl, "group of %u, host arrays", nd);
            gemm_record(o, impl, m, n, k, cli_median(t2, reps));
            const int same = !memcmp(hc, hc2, m * n * 4);
            if (!o->json) printf("  the group's C is %s device 0's\n", same ? "bit-identical to" : "DIFFERENT from");
            if (!same) rc = EXIT_RUNTIME;
        }
        char who[32];
        snprintf(who, sizeof who, "group of %u", nd);
        for (int ty = 0; ty < 2 && rc == 0; ty++) { /* f32, then f16: device 0 alone, then the group */
            const clrun_dtype type = ty ? CLRUN_F16 : CLRUN_F32;
            if ((rc = clrun_group_set_weights(grp, alone) ? cli_fail("bench", NULL, CLRUN_INVALID_ARG) : 0) ||
                (rc = group_resident(o, grp, m, n, k, reps, type, "device 0 alone")))
                break;
            if ((rc = clrun_group_set_weights(grp, w) ? cli_fail("bench", NULL, CLRUN_INVALID_ARG) : 0) ||
                (rc = group_resident(o, grp, m, n, k, reps, type, who)))
                break;
        }
        free(w), free(alone), free(ha), free(hb), free(hc), free(hc2);
    }
    return rc;
}

int bench_gemm(const struct bench_opts *o)
{
    clrun_ctx *ctx = NULL;
    int rc = cli_open("bench", o->spec, &ctx);
    if (rc) return rc;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    int gpu = in->type == CLRUN_DEVICE_GPU;
    size_t shapes[16][3], ns = 0;
    const char *list = o->shapes ? o->shapes
                       : gpu     ? "1024x1024x1024,4096x4096x4096,8192x8192x8192,4095x4097x1000,127x8191x64,8191x127x4096"
                                 : "256x256x256,512x512x512,1024x1024x1024";
    if (!parse_shapes(list, shapes, &ns)) {
        clrun_close(ctx);
        return cli_usage_error("bench", "--shapes wants MxNxK[,MxNxK...], not '%s'", list);
    }
    int reps = o->repeat > 64 ? 64 : o->repeat;
    clrun_group *grp = NULL;
    if (o->devices) {
        clrun_status gst = clrun_group_open(&grp, o->devices);
        if (gst) {
            clrun_close(ctx);
            return gst == CLRUN_INVALID_ARG ? cli_usage_error("bench", "%s", clrun_last_error(NULL)) : cli_fail("bench", NULL, gst);
        }
    }
    if (!o->json) {
        printf("gemm benchmark on %s: f32 row-major NN, GFLOP/s = 2·M·N·K / time, wall clock around the call and clFinish,\n"
               "median of %d after a warm-up\n%-30s %6s %6s %6s %12s %10s\n",
               in->name, reps, "impl", "M", "N", "K", "median_ms", "GFLOP/s");
    }
    for (size_t si = 0; si < ns && rc == 0; si++) {
        size_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
        float *ha = malloc(m * k * 4), *hb = malloc(k * n * 4), *hc = malloc(m * n * 4);
        clrun_gemm_desc d;
        clrun_gemm_desc_init(&d, CLRUN_F32, 1, m, n, k, 0, 0);
        clrun_status st = CLRUN_OK;
        uint64_t seed = 7 + si;
        if (!ha || !hb || !hc) rc = (fprintf(stderr, "clrun bench: out of host memory\n"), EXIT_RUNTIME);
        for (size_t i = 0; rc == 0 && i < m * k; i++)
            ha[i] = (float)((seed = seed * 6364136223846793005ull + 1) >> 40) / 16777216.0f - 0.5f;
        for (size_t i = 0; rc == 0 && i < k * n; i++)
            hb[i] = (float)((seed = seed * 6364136223846793005ull + 1) >> 40) / 16777216.0f - 0.5f;
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
        if (rc == 0) { /* INT8: s8 x s8 -> s32 (clrun_gemm_s8), ops counted as FLOPs are */
            clrun_gemm_desc e;
            clrun_gemm_desc_init(&e, CLRUN_I8, 1, m, n, k, 0, 0);
            double t8[64];
            if (!(st = clrun_buf_new(ctx, m * k, 0, &e.a)) && !(st = clrun_buf_new(ctx, k * n, 0, &e.b)) &&
                !(st = clrun_buf_new(ctx, m * n * 4, 0, &e.c)) && !(st = clrun_buf_fill(e.a, &(char){3}, 1, 0, m * k)) &&
                !(st = clrun_buf_fill(e.b, &(char){-5}, 1, 0, k * n)))
                for (int r = -1; r < reps && !st; r++) {
                    const double t0 = cli_now();
                    if (!(st = clrun_gemm_s8(ctx, &e, NULL))) st = clrun_finish(ctx);
                    if (r >= 0) t8[r] = (cli_now() - t0) * 1e3;
                }
            if (st) rc = cli_fail("bench", ctx, st);
            else gemm_record(o, "clrun int8 (s8 x s8 -> s32; GOP/s)", m, n, k, cli_median(t8, reps));
            clrun_buf_free(e.a), clrun_buf_free(e.b), clrun_buf_free(e.c);
        }
        if (rc == 0 && clrun_have_clblast()) {
            if ((st = time_gemm(ctx, &d, CLRUN_GEMM_CLBLAST, reps, &ms)))
                fprintf(stderr, "clrun bench: CLBlast: %s\n", clrun_last_error(ctx));
            else gemm_record(o, "CLBlast", m, n, k, ms);
        }
        clrun_buf_free(d.a), clrun_buf_free(d.b), clrun_buf_free(d.c);
        free(ha), free(hb), free(hc);
    }
    clrun_close(ctx); /* before the group runs: an idle context's driver threads must not compete with the group's */
    ctx = NULL;
    if (rc == 0 && grp) rc = group_rows(o, grp, shapes, ns, reps);
    clrun_group_close(grp);
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
