/* demo.c — `clrun demo`: the seed examples on the default device, each checked against the CPU. */
#include "cli.h"
#include "mlp.h" /* examples/mlp: mixed-precision training of a small MLP */

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* What each part found, for --json (the printed lines say the same in words). ok: -1 not run. */
static struct demo_rec {
    int multiply_ok;
    double multiply_kernel_ms, multiply_total_ms;
    int matmul_ok;
    size_t matmul_n;
    double matmul_err, matmul_ms, matmul_gflops;
    const char *matmul_backend;
    int canny_ok;
    size_t canny_edges;
    double canny_ms;
    int mlp_ok;
    int group_ok;
    unsigned group_devices;
    double group_alone_ms, group_ms, group_loss_diff;
} rec;

/* The seed's PyCUDA kernel, as a string like its SourceModule. */
static const char multiply_src[] = "__kernel void multiply_them(__global float *dest, __global const float *a, __global const float *b)\n"
                                   "{ const size_t i = get_global_id(0); dest[i] = a[i] * b[i]; }\n";

static int demo_multiply(clrun_ctx *ctx)
{
    enum { N = 400 };
    float a[N], b[N], d[N];
    clrun_prog *p = NULL;
    clrun_kernel *k = NULL;
    clrun_buf *bd = NULL, *ba = NULL, *bb = NULL;
    clrun_event *ev = NULL;
    clrun_status st;
    int rc = EXIT_OK;
    srand((unsigned)time(NULL));
    for (int i = 0; i < N; i++)
        a[i] = (float)(rand() / (RAND_MAX + 1.0) - 0.5), b[i] = (float)(rand() / (RAND_MAX + 1.0) - 0.5), d[i] = NAN;
    double t0 = cli_now();
    size_t g = N, l = N, bytes = sizeof a;
    if ((st = clrun_prog_source(ctx, multiply_src, "multiply", NULL, &p)) || (st = clrun_kernel_new(p, "multiply_them", &k)) ||
        (st = clrun_buf_new(ctx, bytes, 0, &bd)) || (st = clrun_buf_new(ctx, bytes, 0, &ba)) || (st = clrun_buf_new(ctx, bytes, 0, &bb)) ||
        (st = clrun_upload(ba, 0, a, bytes)) || (st = clrun_upload(bb, 0, b, bytes)) || (st = clrun_arg_buf(k, 0, bd)) ||
        (st = clrun_arg_buf(k, 1, ba)) || (st = clrun_arg_buf(k, 2, bb)) || (st = clrun_launch_ev(k, 1, &g, &l, &ev)) ||
        (st = clrun_download(bd, 0, d, bytes))) {
        rc = cli_fail("demo", ctx, st);
        goto done;
    }
    double total = (cli_now() - t0) * 1e3;
    int bad = 0;
    for (int i = 0; i < N; i++) bad += d[i] != a[i] * b[i];
    rec.multiply_ok = !bad, rec.multiply_kernel_ms = clrun_event_ms(ev), rec.multiply_total_ms = total;
    printf("multiply   dest = a * b, 400 floats (the seed's PyCUDA example): %s; kernel %.3f ms, "
           "build + transfers + launch %.1f ms%s\n",
           bad ? "MISMATCH" : "matches the CPU", clrun_event_ms(ev), total, clrun_prog_from_cache(p) ? " (cached binary)" : "");
    if (bad) rc = EXIT_RUNTIME;
done:
    clrun_event_free(ev);
    clrun_buf_free(bd);
    clrun_buf_free(ba);
    clrun_buf_free(bb);
    clrun_kernel_free(k);
    clrun_prog_free(p);
    return rc;
}

/* C = A·B through clrun_gemm (the auto backend), checked in fp64 on sampled entries. */
static int demo_matmul(clrun_ctx *ctx)
{
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const size_t n = in->type == CLRUN_DEVICE_CPU ? 512 : 2048, samples = 256;
    float *a = malloc(n * n * 4), *b = malloc(n * n * 4), *c = malloc(n * n * 4);
    clrun_gemm_desc d;
    clrun_gemm_desc_init(&d, CLRUN_F32, 1, n, n, n, 0, 0);
    clrun_status st = CLRUN_OK;
    int rc = EXIT_OK;
    double t[3];
    if (!a || !b || !c) {
        fprintf(stderr, "clrun demo: out of host memory\n");
        rc = EXIT_RUNTIME;
        goto done;
    }
    for (size_t i = 0; i < n * n; i++) a[i] = (float)(rand() / (RAND_MAX + 1.0) - 0.5), b[i] = (float)(rand() / (RAND_MAX + 1.0) - 0.5);
    if ((st = clrun_buf_new(ctx, n * n * 4, 0, &d.a)) || (st = clrun_buf_new(ctx, n * n * 4, 0, &d.b)) ||
        (st = clrun_buf_new(ctx, n * n * 4, 0, &d.c)) || (st = clrun_upload(d.a, 0, a, n * n * 4)) ||
        (st = clrun_upload(d.b, 0, b, n * n * 4)) || (st = clrun_gemm(ctx, &d)) || (st = clrun_finish(ctx)))
        goto fail;
    for (int r = 0; r < 3; r++) {
        double t0 = cli_now();
        if ((st = clrun_gemm(ctx, &d)) || (st = clrun_finish(ctx))) goto fail;
        t[r] = cli_now() - t0;
    }
    if ((st = clrun_download(d.c, 0, c, n * n * 4))) goto fail;
    double worst = 0;
    for (size_t s = 0; s < samples; s++) { /* |error| relative to sum |a·b|, against fp64 */
        size_t i = (size_t)rand() % n, j = (size_t)rand() % n;
        double ref = 0, mag = 0;
        for (size_t q = 0; q < n; q++) ref += (double)a[i * n + q] * b[q * n + j], mag += fabs((double)a[i * n + q] * b[q * n + j]);
        double e = fabs(c[i * n + j] - ref) / (mag + 1e-30);
        if (!(e <= worst)) worst = e;
    }
    const int bad = !(worst <= 4.0 * (double)(n + 2) / 16777216.0);
    double med = cli_median(t, 3);
    rec.matmul_ok = !bad, rec.matmul_n = n, rec.matmul_err = worst, rec.matmul_ms = med * 1e3,
    rec.matmul_gflops = 2.0 * n * n * n / med / 1e9;
    rec.matmul_backend = clrun_gemm_backend_name(clrun_gemm_resolve(ctx, &d));
    printf("matmul     C = A·B, %zu×%zu f32: %s (max relative error %.1e on %zu "
           "entries against fp64); %.2f ms, %.1f GFLOP/s (%s)\n",
           n, n, bad ? "MISMATCH" : "matches fp64", worst, samples, med * 1e3, 2.0 * n * n * n / med / 1e9,
           clrun_gemm_backend_name(clrun_gemm_resolve(ctx, &d)));
    if (bad) rc = EXIT_RUNTIME;
    goto done;
fail:
    rc = cli_fail("demo", ctx, st);
done:
    clrun_buf_free(d.a), clrun_buf_free(d.b), clrun_buf_free(d.c);
    free(a), free(b), free(c);
    return rc;
}

/* A synthetic sample image (shapes, shading, noise) and its edges, written to edges_path. */
static int demo_canny(clrun_ctx *ctx, const char *edges_path)
{
    const size_t w = 640, h = 480;
    clrun_image img, edges = {0};
    clrun_status st = clrun_image_new(&img, w, h, 1);
    if (st) return cli_fail("demo", NULL, st);
    for (size_t y = 0; y < h; y++)
        for (size_t x = 0; x < w; x++) {
            double v = 60 + 0.15 * x + 0.1 * y + (rand() % 9) - 4;                              /* shading and noise */
            if ((x - 200.0) * (x - 200.0) + (y - 220.0) * (y - 220.0) < 110.0 * 110.0) v += 90; /* a disc */
            if (x > 380 && x < 580 && y > 90 && y < 300) v -= 50;                               /* a rectangle */
            if (y > 350 && y < 440 && (x / 40) % 2 == 0) v += 70;                               /* bars */
            img.data[y * w + x] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    clrun_canny_params p = {50, 100, 0, 3, 0, 0.0};
    double t0 = cli_now();
    if ((st = clrun_canny_image(ctx, &img, &p, &edges))) {
        clrun_image_free(&img);
        return cli_fail("demo", ctx, st);
    }
    double ms = (cli_now() - t0) * 1e3;
    size_t n = 0;
    for (size_t i = 0; i < w * h; i++) n += edges.data[i] != 0;
    int rc = EXIT_OK;
    if ((st = clrun_image_write(edges_path, &edges))) {
        fprintf(stderr, "clrun demo: %s\n", clrun_last_error(NULL));
        rc = cli_exit_code(st);
    } else {
        rec.canny_ok = 1, rec.canny_edges = n, rec.canny_ms = ms;
        printf("canny      edges of a %zu×%zu sample image (cv2.Canny's rules, 50/100): %zu edge pixels, %.2f ms "
               "(build, transfers, kernels); wrote %s\n",
               w, h, n, ms, edges_path);
    }
    clrun_image_free(&img), clrun_image_free(&edges);
    return rc;
}

static const char *demo_help =
    "usage: clrun demo [-d SPEC] [--edges FILE] [--devices GROUP] [--json]\n\n"
    "Shows the device and runs the seed examples on it, each checked against a CPU reference, with\n"
    "timings: the PyCUDA-style vector multiply, and a matrix multiply through clrun_gemm (2048² on\n"
    "GPUs, 512² on CPUs) checked in fp64 on sampled entries, and Canny edges of a sample image written\n"
    "to a PNG (--edges FILE, default $TMPDIR/clrun-demo-edges.png, /tmp without TMPDIR); then the seed's mixed-precision loop: 150\n"
    "steps of training a small MLP with f16 GEMMs, f32 master weights and loss scaling (the loss falls,\n"
    "steps whose f16 gradients overflow are skipped; examples/mlp/ is the full version), and the trained model run in\n"
    "INT8 (weights quantized per output channel, two INT8 GEMMs with fused epilogues), its accuracy against f32.\n\n"
    "  --edges FILE        where the demo's edge image goes\n"
    "  --devices GROUP     then the same on a device group (all, gpu, cpu, 0,2 ...): a 1024³ GEMM split over it\n"
    "                      against its first device alone (bit-identical), and the MLP trained data-parallel\n"
    "                      against its first device alone (the same loss curve)\n"
    "  -d, --device SPEC   device (default: $CLRUN_DEVICE, else the best)\n"
    "  --json              the lines above on standard error and one record on standard output:\n"
    "                      {\"demo\", \"device\", \"multiply\": {\"ok\", \"kernel_ms\", \"total_ms\"}, \"matmul\": {\"ok\",\n"
    "                      \"n\", \"max_rel_error\", \"ms\", \"gflops\", \"backend\"}, \"canny\": {\"ok\", \"edge_pixels\",\n"
    "                      \"ms\", \"output\"}, \"mlp\": {\"ok\"}, \"group\": {\"ok\", \"devices\", \"alone_ms\",\n"
    "                      \"group_ms\", \"loss_diff\"}, \"exit\"}; a section that did not run is null, and\n"
    "                      without a device \"error\" says why\n"
    "  --timeout S         end the command (exit 6) when it runs past S seconds (default 600, 0: none)\n"
    "  --help              this text\n\n"
    "Exit codes: 0 all examples match (and the MLP trains); 1 a mismatch or runtime failure; 3 no device; 4 build failure; 6 timeout.\n";

/* --devices: the group's share of the demo: a GEMM split over it (against its first device alone,
 * the same bits) and the MLP trained data-parallel (against the first device alone, the same loss
 * curve). */
static int demo_group(const char *devices)
{
    clrun_group *g = NULL;
    clrun_status st = clrun_group_open(&g, devices);
    if (st) return st == CLRUN_INVALID_ARG ? cli_usage_error("demo", "%s", clrun_last_error(NULL)) : cli_fail("demo", NULL, st);
    const unsigned nd = clrun_group_size(g);
    rec.group_devices = nd;
    double *w = calloc(nd, sizeof *w), *alone = calloc(nd, sizeof *alone);
    clrun_ctx **ctxs = calloc(nd, sizeof *ctxs);
    size_t *rows = calloc(nd, sizeof *rows);
    int rc = 0;
    if (!w || !alone || !ctxs || !rows) st = CLRUN_HOST_OUT_OF_MEMORY, fprintf(stderr, "clrun demo: out of memory\n");
    else alone[0] = 1, st = clrun_group_weights(g, w);
    for (unsigned i = 0; !rc && !st && i < nd; i++) {
        ctxs[i] = clrun_group_ctx(g, i);
        printf("group      device %u: %s (weight %.1f)\n", i, clrun_ctx_device(ctxs[i])->name, w[i]);
    }
    const size_t n = 1024;
    float *a = malloc(n * n * 4), *c1 = malloc(n * n * 4), *c2 = malloc(n * n * 4);
    clrun_gemm_desc d;
    clrun_gemm_desc_init(&d, CLRUN_F32, 1, n, n, n, 0, 0);
    uint64_t seed = 5;
    for (size_t i = 0; a && i < n * n; i++) a[i] = (float)((seed = seed * 6364136223846793005ull + 1) >> 40) / 16777216.0f - 0.5f;
    double t0 = cli_now(), t1 = 0, t2 = 0;
    if (!rc && !st && a && c1 && c2 && !(st = clrun_group_set_weights(g, alone)) && !(st = clrun_group_gemm(g, &d, a, a, c1))) {
        t1 = cli_now() - t0, t0 = cli_now();
        if (!(st = clrun_group_set_weights(g, w)) && !(st = clrun_group_gemm(g, &d, a, a, c2))) t2 = cli_now() - t0;
    }
    if (st) rc = cli_fail("demo", NULL, st);
    else if (!rc) {
        clrun_group_split_rows(g, n, rows);
        rec.group_alone_ms = t1 * 1e3, rec.group_ms = t2 * 1e3;
        printf("group      gemm 1024³ from host arrays: %.1f ms on device 0 alone, %.1f ms on the group (rows:", t1 * 1e3, t2 * 1e3);
        for (unsigned i = 0; i < nd; i++) printf(" %zu", rows[i]);
        const int same = !memcmp(c1, c2, n * n * 4);
        printf("); %s\n", same ? "bit-identical" : "DIFFERENT");
        rc = !same;
        rec.group_ok = same ? -1 : 0; /* the MLP's half next */
    }
    free(a), free(c1), free(c2);
    double *one = calloc(150, sizeof *one), *all = calloc(150, sizeof *all);
    if (!rc && one && all) rc = mlp_train_dp(ctxs, 1, 150, 150, one) || mlp_train_dp(ctxs, (int)nd, 150, 50, all);
    if (!rc && one && all) {
        double worst = 0;
        for (int s = 0; s < 150; s++) worst = fabs(all[s] - one[s]) / fabs(one[s]) > worst ? fabs(all[s] - one[s]) / fabs(one[s]) : worst;
        printf("group      the MLP data-parallel on %u devices: loss curve within %.3g of device 0 alone\n", nd, worst);
        rc = worst > 1e-6;
        rec.group_loss_diff = worst;
        if (rec.group_ok == -1) rec.group_ok = !rc;
    }
    free(one), free(all);
    free(w), free(alone), free(ctxs), free(rows);
    clrun_group_close(g);
    return rc;
}

/* A part's record, {"ok": true|false|null, ...more}; null when the part never ran (no device, or an
 * earlier failure), never a record of zeros. */
static json_t *part(int ran, int ok, json_t *more)
{
    if (!ran) {
        json_decref(more);
        return json_null();
    }
    json_t *o = json_pack("{s:o}", "ok", ok < 0 ? json_null() : json_boolean(ok));
    if (more) json_object_update_new(o, more);
    return o;
}

/* --json: standard output back, then the record. No-op without --json (out_fd < 0). Returns rc. */
static int json_done(int out_fd, const char *device, const char *edges, int rc)
{
    if (out_fd < 0) return rc;
    fflush(stdout);
    dup2(out_fd, STDOUT_FILENO);
    close(out_fd);
    json_t *o = json_pack("{s:s, s:o}", "demo", "seed examples", "device", cli_json_text(device));
    json_object_set_new(o, "multiply",
                        part(rec.multiply_ok >= 0, rec.multiply_ok,
                             json_pack("{s:f, s:f}", "kernel_ms", rec.multiply_kernel_ms, "total_ms", rec.multiply_total_ms)));
    json_object_set_new(
        o, "matmul",
        part(rec.matmul_ok >= 0, rec.matmul_ok,
             json_pack("{s:I, s:o, s:f, s:f, s:o}", "n", (json_int_t)rec.matmul_n, "max_rel_error", cli_json_num(rec.matmul_err), "ms",
                       rec.matmul_ms, "gflops", rec.matmul_gflops, "backend", cli_json_text(rec.matmul_backend))));
    json_object_set_new(o, "canny",
                        part(rec.canny_ok >= 0, rec.canny_ok,
                             json_pack("{s:I, s:f, s:o}", "edge_pixels", (json_int_t)rec.canny_edges, "ms", rec.canny_ms, "output",
                                       cli_json_text(rec.canny_ok > 0 ? edges : NULL))));
    json_object_set_new(o, "mlp", part(rec.mlp_ok >= 0, rec.mlp_ok, NULL));
    json_object_set_new(o, "group",
                        part(rec.group_devices != 0, rec.group_ok,
                             json_pack("{s:I, s:f, s:f, s:o}", "devices", (json_int_t)rec.group_devices, "alone_ms", rec.group_alone_ms,
                                       "group_ms", rec.group_ms, "loss_diff", cli_json_num(rec.group_loss_diff))));
    if (!device && rc) /* why nothing ran: no platform, no device, a refused selection */
        json_object_set_new(o, "error", json_string(clrun_last_error(NULL)));
    json_object_set_new(o, "exit", json_integer(rc));
    cli_json_emit(stdout, o);
    return rc;
}

int cmd_demo(int argc, char **argv)
{
    const char *spec = NULL, *edges = NULL, *devices = NULL;
    int json = 0;
    char tmp_edges[4096];
    static const struct option opts[] = {{"device", required_argument, NULL, 'd'},  {"edges", required_argument, NULL, 'e'},
                                         {"devices", required_argument, NULL, 'G'}, {"help", no_argument, NULL, 'h'},
                                         {"json", no_argument, NULL, 'j'},          {0}};
    int c;
    struct cli_opts opt = {.sub = "demo", .help = demo_help, .first = 1};
    while ((c = cli_next_opt(&opt, argc, argv, "d:h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        if (c == 'd') spec = optarg;
        else if (c == 'e') edges = optarg;
        else if (c == 'G') devices = optarg;
        else if (c == 'j') json = 1;
    }
    if (optind < argc) return cli_usage_error("demo", "unexpected argument '%s'", argv[optind]);
    if (!edges) { /* not into the working folder: a temporary one, named in the output */
        const char *t = getenv("TMPDIR");
        snprintf(tmp_edges, sizeof tmp_edges, "%s/clrun-demo-edges.png", t && *t ? t : "/tmp");
        edges = tmp_edges;
    }
    memset(&rec, 0, sizeof rec);
    rec.multiply_ok = rec.matmul_ok = rec.canny_ok = rec.mlp_ok = rec.group_ok = -1;
    int out_fd = -1;
    if (json) { /* the lines (the MLP's included) to standard error; the record alone to standard output */
        fflush(stdout);
        if ((out_fd = dup(STDOUT_FILENO)) < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
            return fprintf(stderr, "clrun demo: cannot redirect standard output: %s\n", strerror(errno)), EXIT_RUNTIME;
    }
    clrun_ctx *ctx = NULL;
    int rc = cli_open("demo", spec, &ctx);
    if (rc) return json_done(out_fd, NULL, edges, rc);
    const clrun_device_info *in = clrun_ctx_device(ctx);
    char name[sizeof in->name];
    snprintf(name, sizeof name, "%s", in->name);
    printf("device     %u:%u %s (%s, %s)\n", in->platform_index, in->device_index, in->name, cli_type_name(in->type), in->platform_name);
    rc = demo_multiply(ctx);
    int rc2 = demo_matmul(ctx);
    if (!rc) rc = rc2;
    rc2 = demo_canny(ctx, edges);
    if (!rc) rc = rc2;
    rc2 = mlp_int8(ctx, 150, 50); /* the seed's AMP loop, in C, then the trained model in INT8 */
    rec.mlp_ok = !rc2;
    clrun_close(ctx);
    if (!rc) rc = rc2;
    if (devices) {
        rc2 = demo_group(devices);
        if (!rc) rc = rc2;
    }
    return json_done(out_fd, name, edges, rc);
}
