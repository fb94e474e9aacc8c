/* canny.c — `clrun bench canny`: Canny on 1080p and 4K frames, device-resident and with transfers,
 * against OpenCV's cv2.Canny on the host and on OpenCL; edges checked identical. */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double rnd(uint64_t *s) /* uniform in [0, 1) */
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* A natural-looking 8-bit frame: smooth shading, discs, lines and noise (deterministic). */
void bench_make_frame(unsigned char *img, size_t w, size_t h, uint64_t seed)
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

/* cv2.Canny timed by tools/peers/opencv_canny.py: on the host cores (*cpu, and its edges written to
 * edges_path) and, when OpenCV has OpenCL, device-resident (*ocl) and with the transfers (*oclio).
 * Returns 0 when OpenCV could not be run. */
static int opencv_canny(const char *png, const char *edges_path, int reps, double *cpu, double *ocl, double *oclio)
{
    char r[32];
    snprintf(r, sizeof r, "%d", reps);
    const char *const args[] = {png, edges_path, r, NULL}, *const keys[] = {"cpu", "ocl", "oclio", NULL};
    double v[3] = {0, 0, 0};
    if (bench_peer("opencv_canny.py", args, keys, v) < 1 || v[0] <= 0) return 0;
    *cpu = v[0];
    if (v[1] > 0) *ocl = v[1];
    if (v[2] > 0) *oclio = v[2];
    return 1;
}

static void canny_record(const struct bench_opts *o, const char *impl, size_t w, size_t h, double ms)
{
    if (o->json)
        cli_json_emit(stdout, json_pack("{s:s, s:s, s:I, s:I, s:o, s:o}", "op", "canny", "impl", impl, "width", (json_int_t)w, "height",
                                        (json_int_t)h, "median_ms", cli_json_num(ms), "mpix_s", cli_json_num((double)w * h / ms / 1e3)));
    else printf("%-44s %5zux%-5zu %10.4f %10.1f\n", impl, w, h, ms, (double)w * h / ms / 1e3);
}

int bench_canny(const struct bench_opts *o)
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
               "%-44s %11s %10s %10s\n",
               in->name, reps, WARM, "impl", "size", "median_ms", "Mpixel/s");
    int have_cv = -1;
    for (int si = 0; si < 2 && rc == 0; si++) {
        const size_t w = sizes[si][0], h = sizes[si][1], n = w * h;
        unsigned char *img = malloc(n), *edges = malloc(n);
        clrun_buf *bs = NULL, *bd = NULL;
        clrun_status st = CLRUN_OK;
        double t[64];
        clrun_canny_params p = {50, 100, 0, 3, 0, 0.0};
        if (!img || !edges) rc = (fprintf(stderr, "clrun bench: out of host memory\n"), EXIT_RUNTIME);
        if (rc == 0) bench_make_frame(img, w, h, 11 + (uint64_t)si);
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
