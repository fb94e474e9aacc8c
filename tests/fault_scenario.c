/* fault_scenario.c — one pass over the library's entry points for tests/fault_sweep.sh, which
 * runs it once per OpenCL call with that call failing (tests/faultcl.c). Every step either works
 * or returns a status whose text says what failed; the program then frees everything it made and
 * exits 10. Exit 0: every step worked. Anything else (a crash, a sanitizer's report, a leak found by
 * LeakSanitizer, an empty error text, a wrong result after success) is a failure of the sweep.
 *
 * Usage: fault_scenario IMAGE.png OUT_DIR (OUT_DIR gets an .npy and a .png only when the steps
 * before them worked). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <clrun.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static clrun_ctx *ctx;

/* A failed step: its text must say something. */
static int failed(const char *what, clrun_status st)
{
    const char *text = clrun_last_error(ctx);
    if (!text || !*text) text = clrun_last_error(NULL);
    if (!text || !*text) {
        fprintf(stderr, "fault_scenario: %s -> %s with an empty error text\n", what, clrun_status_str(st));
        return 2;
    }
    fprintf(stderr, "fault_scenario: %s -> %s: %s\n", what, clrun_status_str(st), text);
    return 10;
}

#define STEP(call)                   \
    do {                             \
        clrun_status st_ = (call);   \
        if (st_ != CLRUN_OK) {       \
            rc = failed(#call, st_); \
            goto done;               \
        }                            \
    } while (0)

/* The pipeline's deliver: counts results, and keeps the first failure's status. */
struct got {
    int n;
    clrun_status st;
    char text[512]; /* the failure's text, valid only during the callback */
};

static void deliver(void *arg, void *tag, clrun_status st, const clrun_image *r)
{
    struct got *g = arg;
    (void)tag, (void)r;
    g->n++;
    if (st && !g->st) g->st = st, snprintf(g->text, sizeof g->text, "%s", clrun_last_error(ctx));
}

static const char src[] = "__kernel void twice(__global float *x, const float k, const uint n)\n"
                          "{ if (get_global_id(0) < n) x[get_global_id(0)] *= k; }\n";

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    int rc = 0;
    enum { N = 300 };
    float h[N], r[N];
    double sum = 0;
    size_t at = 0;
    int found = 0;
    char path[4096];
    clrun_buf *a = NULL, *b = NULL, *c = NULL, *half = NULL;
    clrun_prog *prog = NULL;
    clrun_kernel *k = NULL;
    clrun_event *ev = NULL;
    clrun_scaler sc;
    clrun_image img = {0}, edges = {0};
    clrun_array arr = {0};
    clrun_event *up = NULL, *down = NULL;
    void *pinned = NULL;
    clrun_group *grp = NULL;
    clrun_pipe *pp = NULL;
    struct got got = {0, CLRUN_OK, ""};
    float hv[N], gout[N];
    clrun_scaler_init(&sc);
    for (int i = 0; i < N; i++) h[i] = (float)(i % 17) - 8.0f;

    STEP(clrun_open(&ctx, getenv("CLRUN_DEVICE")));
    STEP(clrun_buf_new(ctx, sizeof h, 0, &a));
    STEP(clrun_buf_new(ctx, sizeof h, 0, &b));
    STEP(clrun_buf_new(ctx, 64 * 64 * sizeof(float), 0, &c));
    STEP(clrun_buf_new(ctx, N * 2, 0, &half));
    STEP(clrun_upload(a, 0, h, sizeof h));
    STEP(clrun_buf_copy(b, 0, a, 0, sizeof h));
    /* a program of the caller's, a launch with an event */
    STEP(clrun_prog_source(ctx, src, "twice", NULL, &prog));
    STEP(clrun_kernel_new(prog, "twice", &k));
    STEP(clrun_arg_buf(k, 0, a));
    STEP(clrun_arg_f32(k, 1, 2.0f));
    STEP(clrun_arg_u32(k, 2, N));
    const size_t g = N;
    STEP(clrun_launch_ev(k, 1, &g, NULL, &ev));
    STEP(clrun_event_wait(ev));
    STEP(clrun_download(a, 0, r, sizeof r));
    for (int i = 0; i < N; i++)
        if (r[i] != 2 * h[i]) return fprintf(stderr, "fault_scenario: twice gave %g at %d\n", r[i], i), 3;
    /* the kernel library */
    STEP(clrun_add(ctx, CLRUN_F32, N, b, a, b));
    STEP(clrun_sum(ctx, CLRUN_F32, b, 0, N, &sum));
    STEP(clrun_argmax(ctx, CLRUN_F32, b, 0, N, &at));
    STEP(clrun_cast(ctx, b, 0, CLRUN_F32, half, 0, CLRUN_F16, N));
    clrun_gemm_desc d;
    memset(&d, 0, sizeof d);
    d.m = d.n = 12, d.k = 20, d.alpha = 1, d.a = a, d.lda = 20, d.b = b, d.ldb = 12, d.c = c, d.ldc = 12;
    d.backend = CLRUN_GEMM_GPU_KERNEL;
    STEP(clrun_gemm(ctx, &d));
    d.backend = CLRUN_GEMM_CPU_KERNEL;
    STEP(clrun_gemm(ctx, &d));
    clrun_grad gr = {a, 0, N, CLRUN_F32};
    STEP(clrun_scaler_unscale(ctx, &sc, &gr, 1));
    STEP(clrun_scaler_update(ctx, &sc, &found));
    double dot = 0, nrm = 0;
    float mn = 0, mx = 0;
    STEP(clrun_dot(ctx, CLRUN_F32, a, 0, b, 0, N, &dot));
    STEP(clrun_norm2(ctx, CLRUN_F32, b, 0, N, &nrm));
    STEP(clrun_min(ctx, CLRUN_F32, b, 0, N, &mn));
    STEP(clrun_max(ctx, CLRUN_F32, b, 0, N, &mx));
    STEP(clrun_finish(ctx));
    /* pinned memory, asynchronous transfers, profiling */
    STEP(clrun_host_alloc(ctx, sizeof h, &pinned));
    memcpy(pinned, h, sizeof h);
    STEP(clrun_profile_start(ctx));
    STEP(clrun_upload_async(c, 0, pinned, sizeof h, &up));
    STEP(clrun_download_async(c, 0, hv, sizeof hv, &down));
    STEP(clrun_event_wait(up));
    STEP(clrun_event_wait(down));
    for (int i = 0; i < N; i++)
        if (hv[i] != h[i]) return fprintf(stderr, "fault_scenario: an asynchronous round trip gave %g at %d\n", hv[i], i), 3;
    STEP(clrun_add(ctx, CLRUN_F32, N, c, c, c));
    const clrun_profile_entry *prof = NULL;
    size_t nprof = 0;
    STEP(clrun_finish(ctx));
    STEP(clrun_profile_read(ctx, &prof, &nprof));
    clrun_profile_stop(ctx);
    /* a group of every device: element-wise, a reduction and a GEMM split over them */
    STEP(clrun_group_open(&grp, "all"));
    STEP(clrun_group_set_weights(grp, (const double[]){1, 1, 1, 1, 1, 1, 1, 1})); /* not measured: fewer calls to sweep */
    STEP(clrun_group_vec(grp, CLRUN_MUL, CLRUN_F32, N, 1, gout, h, h, NULL));
    for (int i = 0; i < N; i++)
        if (gout[i] != h[i] * h[i]) return fprintf(stderr, "fault_scenario: the group's mul gave %g at %d\n", gout[i], i), 3;
    double gsum = 0;
    STEP(clrun_group_reduce(grp, "sum", CLRUN_F32, h, NULL, N, &gsum, NULL));
    clrun_gemm_desc gd;
    memset(&gd, 0, sizeof gd);
    gd.m = gd.n = 12, gd.k = 20, gd.alpha = 1, gd.lda = 20, gd.ldb = 12, gd.ldc = 12;
    STEP(clrun_group_gemm(grp, &gd, h, h, gout));
    /* files: an .npy of a result, Canny on an image in both shapes, its edges saved */
    size_t shape[1] = {N};
    STEP(clrun_array_new(&arr, CLRUN_F32, 1, shape));
    STEP(clrun_download(b, 0, arr.data, arr.bytes));
    snprintf(path, sizeof path, "%s/sum.npy", argv[2]);
    STEP(clrun_npy_write(path, &arr));
    STEP(clrun_image_read(argv[1], &img));
    setenv("CLRUN_CANNY_SHAPE", "cpu", 1);
    const clrun_canny_params p = {50, 100, 0, 3, 0, 0};
    STEP(clrun_canny_image(ctx, &img, &p, &edges));
    clrun_image_free(&edges);
    setenv("CLRUN_CANNY_SHAPE", "gpu", 1);
    STEP(clrun_canny_image(ctx, &img, &p, &edges));
    snprintf(path, sizeof path, "%s/edges.png", argv[2]);
    STEP(clrun_image_write(path, &edges));
    /* a pipeline: three frames in flight, delivered in order (an item's failure comes through deliver) */
    STEP(clrun_pipe_canny(ctx, &p, 1, deliver, &got, &pp));
    for (int i = 0; i < 2; i++) STEP(clrun_pipe_send(pp, &img, NULL));
    STEP(clrun_pipe_flush(pp));
    if (got.n != 2) return fprintf(stderr, "fault_scenario: the pipeline delivered %d of 2 items\n", got.n), 3;
    if (got.st) {
        if (!got.text[0])
            return fprintf(stderr, "fault_scenario: a pipeline item failed with %s and no text\n", clrun_status_str(got.st)), 2;
        fprintf(stderr, "fault_scenario: a pipeline item -> %s: %s\n", clrun_status_str(got.st), got.text);
        rc = 10;
        goto done;
    }
done:
    clrun_pipe_free(pp);
    clrun_group_close(grp);
    clrun_event_free(up);
    clrun_event_free(down);
    if (pinned) clrun_host_free(ctx, pinned);
    clrun_image_free(&img);
    clrun_image_free(&edges);
    clrun_array_free(&arr);
    clrun_scaler_free(&sc);
    clrun_event_free(ev);
    clrun_kernel_free(k);
    clrun_prog_free(prog);
    clrun_buf_free(a);
    clrun_buf_free(b);
    clrun_buf_free(c);
    clrun_buf_free(half);
    clrun_close(ctx);
    return rc;
}
