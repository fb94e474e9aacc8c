/* pipeline.c — `clrun bench pipeline`: Canny over N 4K frames on disk, end to end (read, decode,
 * Canny, encode, write), PNG and JPEG inputs, against OpenCV's loop in one process and its process
 * pool on all cores (tools/peers/opencv_pipeline.py), and against the floor: the same files decoded
 * and edge images encoded with no Canny, on the same threads. clrun's edges are checked pixel for
 * pixel against the loop's. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "bench.h"

#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { W = 3840, H = 2160, KEEP = 4 /* edge images the floor encodes, in turn */ };

/* Work shared by a few threads: item i of n, taken in turn. */
struct share {
    atomic_int next, failed;
    int n;
    char **in;         /* generate: the PNGs to write; floor: the files to decode */
    char (*out)[4400]; /* floor: where the edges go */
    const clrun_image *edges;
};

static void *gen_thread(void *arg)
{
    struct share *s = arg;
    unsigned char *img = malloc((size_t)W * H);
    for (int i; img && (i = atomic_fetch_add(&s->next, 1)) < s->n;) {
        bench_make_frame(img, W, H, 1000 + (uint64_t)i);
        const clrun_image f = {W, H, W, 1, img};
        if (clrun_image_write(s->in[i], &f)) atomic_store(&s->failed, 1);
    }
    if (!img) atomic_store(&s->failed, 1);
    free(img);
    return NULL;
}

static void *floor_thread(void *arg)
{
    struct share *s = arg;
    for (int i; (i = atomic_fetch_add(&s->next, 1)) < s->n;) {
        clrun_image img;
        if (clrun_image_read(s->in[i], &img) || clrun_image_write(s->out[i], &s->edges[i % KEEP])) atomic_store(&s->failed, 1);
        clrun_image_free(&img);
    }
    return NULL;
}

/* Run fn on `jobs` threads over n items; returns the seconds, or -1 when an item failed. */
static double on_threads(void *(*fn)(void *), struct share *s, int jobs)
{
    pthread_t th[256];
    int started = 0;
    const double t0 = cli_now();
    atomic_store(&s->next, 0), atomic_store(&s->failed, 0);
    while (started < jobs && started < 256 && pthread_create(&th[started], NULL, fn, s) == 0) started++;
    if (!started) fn(s);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    return atomic_load(&s->failed) ? -1 : cli_now() - t0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path), 0;
}

static void pipe_record(const struct bench_opts *o, const char *impl, const char *ext, int n, double s, double loop)
{
    if (o->json)
        cli_json_emit(stdout,
                      json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:o, s:o, s:o, s:o}", "op", "pipeline", "impl", impl, "input", ext,
                                "frames", n, "width", W, "height", H, "seconds", cli_json_num(s), "ms_per_frame", cli_json_num(s * 1e3 / n),
                                "frames_s", cli_json_num(n / s), "vs_cv2_loop", cli_json_num(loop > 0 ? loop / s : 0.0)));
    else if (loop > 0) printf("%-44s %4s %9.2f %10.1f %9.2f %7.2fx\n", impl, ext, s, s * 1e3 / n, n / s, loop / s);
    else printf("%-44s %4s %9.2f %10.1f %9.2f %8s\n", impl, ext, s, s * 1e3 / n, n / s, "-");
}

/* The edges of the files clrun wrote against the loop's (decoded: the same pixels). Returns how many
 * differ, -1 when one cannot be read. */
static int compare(char (*a)[4400], const char *dir, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        char p[6600];
        const char *base = strrchr(a[i], '/') + 1;
        snprintf(p, sizeof p, "%s/%s", dir, base);
        clrun_image x, y;
        if (clrun_image_read(a[i], &x)) return -1;
        if (clrun_image_read(p, &y)) return clrun_image_free(&x), -1;
        bad += x.width != y.width || x.height != y.height || memcmp(x.data, y.data, x.stride * x.height);
        clrun_image_free(&x), clrun_image_free(&y);
    }
    return bad;
}

int bench_pipeline(const struct bench_opts *o)
{
    const int n = o->frames ? o->frames : 50;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const int ncores = cores > 0 ? (int)cores : 1;
    const int jobs = o->jobs ? o->jobs : ncores + 1, pool = o->jobs ? o->jobs : ncores; /* op canny's and Pool's defaults */
    const char *tmp = getenv("TMPDIR");
    char dir[2048], jobs_s[16];
    snprintf(dir, sizeof dir, "%s/clrun-pipeline-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    snprintf(jobs_s, sizeof jobs_s, "%d", pool);
    if (!mkdtemp(dir)) return fprintf(stderr, "clrun bench: cannot make a folder in %s\n", tmp && *tmp ? tmp : "/tmp"), EXIT_RUNTIME;
    char **in = calloc((size_t)n, sizeof *in), (*names)[4400] = calloc((size_t)n, sizeof *names),
         (*dst)[4400] = calloc((size_t)n, sizeof *dst), (*fl)[4400] = calloc((size_t)n, sizeof *fl);
    char sub[4][2100];
    int rc = 0;
    clrun_ctx *ctx = NULL;
    clrun_image edges[KEEP] = {{0}};
    static const char *const subs[4] = {"in", "clrun", "floor", "cv"};
    for (int i = 0; i < 4; i++) {
        snprintf(sub[i], sizeof sub[i], "%s/%s", dir, subs[i]);
        if (mkdir(sub[i], 0755)) rc = EXIT_RUNTIME;
    }
    if (!in || !names || !dst || !fl || rc) rc = (fprintf(stderr, "clrun bench: out of memory or disk\n"), EXIT_RUNTIME);
    for (int i = 0; !rc && i < n; i++) {
        snprintf(names[i], sizeof names[i], "%s/f%05d.png", sub[0], i);
        snprintf(dst[i], sizeof dst[i], "%s/f%05d.png", sub[1], i);
        snprintf(fl[i], sizeof fl[i], "%s/f%05d.png", sub[2], i);
        in[i] = names[i];
    }
    struct share s = {.n = n, .in = in, .out = fl, .edges = edges};
    if (!rc && on_threads(gen_thread, &s, jobs) < 0)
        rc = (fprintf(stderr, "clrun bench: cannot write the frames in %s\n", dir), EXIT_RUNTIME);
    const char *const jargs[] = {"jpeg", sub[0], NULL}, *const jkeys[] = {"made", NULL};
    double made = 0;
    const int have_jpeg = !rc && bench_peer("opencv_pipeline.py", jargs, jkeys, &made) == 1 && (int)made == n;
    clrun_group *grp = NULL;
    clrun_ctx *list[64];
    double w[64];
    int nctx = 1;
    if (!rc) rc = cli_open("bench", o->spec, &ctx);
    if (!rc && o->devices) { /* op canny over the group, in place of the one device */
        clrun_status gst = clrun_group_open(&grp, o->devices);
        if (!gst && clrun_group_size(grp) > 64) gst = CLRUN_INVALID_ARG;
        if (!gst) gst = clrun_group_weights(grp, w);
        if (gst) rc = cli_fail("bench", NULL, gst);
        for (int k = 0; !rc && k < (int)clrun_group_size(grp); k++) list[k] = clrun_group_ctx(grp, (unsigned)k), nctx = k + 1;
    }
    clrun_ctx *const *ctxs = grp ? list : &ctx;
    if (!rc && !o->json)
        printf("pipeline benchmark on %s: %d frames %dx%d (8-bit gray) on disk -> Canny (L1, 50/100) -> PNG files, end to end;\n"
               "clrun's host threads %d, OpenCV's pool %d processes (--jobs N sets both); OpenCV: cv2.imread, cv2.Canny, cv2.imwrite\n"
               "%-44s %4s %9s %10s %9s %8s\n",
               clrun_ctx_device(ctx)->name, n, W, H, jobs, pool, "impl", "in", "seconds", "ms/frame", "frames/s", "vs loop");
    const clrun_canny_params p = {50, 100, 0, 3, 0, 0.0};
    for (int e = 0; !rc && e < 1 + have_jpeg; e++) {
        const char *ext = e ? "jpg" : "png";
        for (int i = 0; i < n; i++) snprintf(names[i], sizeof names[i], "%s/f%05d.%s", sub[0], i, ext);
        double t[5] = {0}, tw[5] = {0};
        int done = 0, warm = 0;
        if ((rc = canny_batch(ctxs, grp ? w : NULL, nctx, &p, in, dst, 1, 1, 1, tw, &warm)))
            break; /* kernels built or loaded, device awake */
        const double t0 = cli_now();
        if ((rc = canny_batch(ctxs, grp ? w : NULL, nctx, &p, in, dst, n, jobs, 1, t, &done))) break;
        const double clrun_s = cli_now() - t0;
        for (int k = 0; k < KEEP; k++) {
            clrun_image_free(&edges[k]);
            if (clrun_image_read(dst[k % n], &edges[k])) rc = (fprintf(stderr, "clrun bench: %s\n", clrun_last_error(NULL)), EXIT_RUNTIME);
        }
        const double floor_s = rc ? -1 : on_threads(floor_thread, &s, jobs);
        if (floor_s < 0 && !rc) rc = (fprintf(stderr, "clrun bench: the decode+encode floor failed on a file\n"), EXIT_RUNTIME);
        const char *const args[] = {"run", sub[0], ext, sub[3], jobs_s, NULL}, *const keys[] = {"loop", "pool", NULL};
        double v[2] = {0, 0};
        const int have_cv = !rc && bench_peer("opencv_pipeline.py", args, keys, v) == 2;
        if (rc) break;
        char impl[64];
        if (grp) snprintf(impl, sizeof impl, "clrun op canny (%d threads + %d devices)", jobs, nctx);
        else snprintf(impl, sizeof impl, "clrun op canny (%d threads + device)", jobs);
        pipe_record(o, impl, ext, n, clrun_s, have_cv ? v[0] : 0);
        if (have_cv) {
            pipe_record(o, "OpenCV loop (1 process)", ext, n, v[0], v[0]);
            snprintf(impl, sizeof impl, "OpenCV multiprocessing.Pool (%d processes)", pool);
            pipe_record(o, impl, ext, n, v[1], v[0]);
        }
        snprintf(impl, sizeof impl, "floor: decode + encode only (%d threads)", jobs);
        pipe_record(o, impl, ext, n, floor_s, have_cv ? v[0] : 0);
        if (!o->json)
            printf("  clrun per frame, summed over threads: read+decode %.1f ms, device pipeline (main thread) %.1f ms, encode+write %.1f "
                   "ms; clrun / floor = %.2f\n",
                   t[2] * 1e3 / n, t[3] * 1e3 / n, t[4] * 1e3 / n, clrun_s / floor_s);
        if (have_cv) {
            char loopdir[2200];
            snprintf(loopdir, sizeof loopdir, "%s/loop", sub[3]);
            const int bad = compare(dst, loopdir, n);
            if (!o->json) printf("  clrun's edges %s OpenCV's (%d frames compared)\n", bad ? "DIFFER from" : "are identical to", n);
            if (bad) rc = EXIT_RUNTIME;
        }
    }
    if (!rc && !have_jpeg && !o->json) printf("  (OpenCV not measured and no JPEG frames: python3 with cv2 is not installed)\n");
    for (int k = 0; k < KEEP; k++) clrun_image_free(&edges[k]);
    clrun_close(ctx);
    clrun_group_close(grp);
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(in), free(names), free(dst), free(fl);
    return rc;
}
