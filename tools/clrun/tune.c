/* tune.c — `clrun tune gemm`: search the GPU GEMM kernel's tile parameters on the current device
 * for a small and a large product, check every candidate's result, and store the winners where
 * clrun_gemm finds them next time (clrun_gemm_tuning_path). */
#include "cli.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *tune_help = "usage: clrun tune gemm [-d SPEC] [--size N] [--quick] [--dry-run] [--json]\n\n"
                               "Times the GPU-shaped GEMM kernel (gemm.cl) over a space of tile parameters on the device, for\n"
                               "a large square product (N, default 4096 on GPUs, 256 otherwise) and a small one (N/4), each in\n"
                               "the default and the fast mode (clrun_gemm_desc.fast), checking each candidate's result against\n"
                               "the first one's; then times the CPU-shaped kernel, CLBlast (when built with it) and, where there\n"
                               "are tensor cores, their f32 products (3xTF32, stored as mma.sync) on the same products. It\n"
                               "stores, per class, the fastest tiles and the fastest backend in the device's tuning file (its\n"
                               "path is printed): clrun_gemm uses them from then on (the backend when asked for auto).\n"
                               "A product is large when it has at least two 128×128 tiles per compute unit. $CLRUN_GEMM_PARAMS\n"
                               "still overrides the tiles. Where f16 products run on Hopper's wgmma kernel, it also times that\n"
                               "kernel's tiles — f16, s8 and, where its 2:4 kernel runs, 2:4 f16 — on an N³ product (4096³ for N\n"
                               "of 8192 and more) and on an 8192³ one, and stores the fastest of each for products under 2^39\n"
                               "flops and from there ($CLRUN_GEMM_WGMMA_PARAMS overrides them).\n\n"
                               "  -d, --device SPEC   device (default: $CLRUN_DEVICE, else the best)\n"
                               "  --size N            the large size (the small one is N/4)\n"
                               "  --quick             a handful of candidates instead of the whole space\n"
                               "  --dry-run           measure and report, but store nothing\n"
                               "  --json              the progress on standard error and, at the end, one record on standard\n"
                               "                      output: {\"tune\": \"gemm\", \"device\", \"classes\": [{\"class\", \"tiles\",\n"
                               "                      \"backend\", \"gflops\"}...], \"wgmma\": [{\"kind\", \"tiles\",\n"
                               "                      \"gflops\"}...] (kind as in the tuning file: wgmma[-s8|-sp][-large]),\n"
                               "                      \"stored\": the tuning file or null}\n"
                               "  --help              this text\n";

/* Where the progress and result lines go: standard output, or standard error under --json (whose
 * record is then the only thing on standard output). */
static FILE *tout;
/* The best figure per class, and wgmma's at index 4 + 2·kind + band (kinds f16, s8, 2:4; bands
 * under 2^39 flops and from there), for --json. */
static double best_gf[10];

struct cand {
    unsigned v[7];
};

/* What a candidate runs: clrun_gemm, clrun_gemm_s8 (results compared exactly) or clrun_gemm_sp (A
 * compressed, its metadata in meta). */
enum tune_kind { T_GEMM, T_S8, T_SP };

/* Time one candidate (tiles params in the variable var, backend d->backend) on the product in d (3
 * runs after a warm-up), GFLOP/s; 0 when it fails or its result differs from ref. */
static double try_params(clrun_ctx *ctx, clrun_gemm_desc *d, enum tune_kind kind, clrun_buf *meta, const char *var, const char *params,
                         const float *ref, float *out, size_t nc)
{
    setenv(var, params, 1); /* read by that kernel only */
    double t[3];
    clrun_status st = CLRUN_OK;
    for (int r = -1; r < 3 && st == CLRUN_OK; r++) {
        double t0 = cli_now();
        st = kind == T_S8 ? clrun_gemm_s8(ctx, d, NULL) : kind == T_SP ? clrun_gemm_sp(ctx, d, meta, 0) : clrun_gemm(ctx, d);
        if (st == CLRUN_OK) st = clrun_finish(ctx);
        if (r >= 0) t[r] = cli_now() - t0;
    }
    unsetenv(var);
    if (st != CLRUN_OK || clrun_download(d->c, 0, out, nc * 4) != CLRUN_OK) return 0;
    if (ref && kind == T_S8 && memcmp(out, ref, nc * 4) != 0) return 0;
    if (ref && kind != T_S8)
        for (size_t i = 0; i < nc; i++)
            if (!(fabsf(out[i] - ref[i]) <= 1e-3f * (1.0f + fabsf(ref[i])))) return 0;
    return 2.0 * d->m * d->n * d->k / cli_median(t, 3) / 1e9;
}

/* try_params for the GPU kernel's tiles c */
static double try_cand(clrun_ctx *ctx, clrun_gemm_desc *d, const struct cand *c, const float *ref, float *out, size_t nc)
{
    char params[128];
    snprintf(params, sizeof params, "%u,%u,%u,%u,%u,%u,%u", c->v[0], c->v[1], c->v[2], c->v[3], c->v[4], c->v[5], c->v[6]);
    return try_params(ctx, d, T_GEMM, NULL, "CLRUN_GEMM_PARAMS", params, ref, out, nc);
}

/* The space: tiles, slice depth, work per item, float4 local reads, double buffering; those the
 * device can run (as clrun's params_ok checks them). --quick: a handful measured best somewhere. */
static size_t candidates(const clrun_device_info *in, int quick, struct cand cands[256])
{
    static const unsigned tiles[][2] = {{64, 64}, {128, 64}, {64, 128}, {128, 128}, {32, 64}};
    static const unsigned ks[] = {8, 16}, ws[][2] = {{4, 4}, {8, 4}, {4, 8}, {8, 8}};
    size_t nc = 0;
    if (quick) {
        static const unsigned q[][7] = {{128, 128, 8, 8, 8, 1, 1}, {64, 128, 8, 8, 8, 1, 1}, {128, 128, 16, 8, 8, 1, 2},
                                        {64, 64, 8, 8, 8, 1, 1},   {64, 64, 16, 4, 4, 1, 1}, {128, 128, 8, 8, 8, 0, 1}};
        for (size_t i = 0; i < sizeof q / sizeof *q; i++) memcpy(cands[nc++].v, q[i], sizeof q[i]);
        return nc;
    }
    for (size_t t = 0; t < 5; t++)
        for (size_t k = 0; k < 2; k++)
            for (size_t w = 0; w < 4; w++)
                for (unsigned vec = 0; vec < 2; vec++)
                    for (unsigned db = 0; db < 3 && nc < 256; db++) {
                        unsigned tm = tiles[t][0], tn = tiles[t][1], wm = ws[w][0], wn = ws[w][1];
                        size_t nt = (size_t)(tm / wm) * (tn / wn), nbuf = db == 2 ? 2 : 1, pad = vec ? 4 : 1;
                        if (tm % wm || tn % wn || nt < 32 || nt > in->max_work_group) continue;
                        if (nbuf * ks[k] * (tm + tn + 2 * pad) * 4 > in->local_mem) continue;
                        if (db && (((size_t)tm * ks[k]) % nt || ((size_t)ks[k] * tn) % nt)) continue;
                        cands[nc++] = (struct cand){{tm, tn, ks[k], wm, wn, vec, db}};
                    }
    return nc;
}

/* the classes of clrun_gemm_tuning_path: small, large, and the same with desc.fast = 1 */
static const char *const cnames[] = {"small", "large", "small-fast", "large-fast"};

/* Measure every candidate on an n³ product of class cls, then the other backends with the best
 * tiles; line gets the tuning file's line for the class. Returns an exit code. */
static int tune_class(clrun_ctx *ctx, int cls, size_t n, const struct cand *cands, size_t nc, char line[96])
{
    clrun_gemm_desc d;
    clrun_gemm_desc_init(&d, CLRUN_F32, 1, n, n, n, 0, 0);
    d.backend = CLRUN_GEMM_GPU_KERNEL, d.fast = cls >> 1;
    float *h = malloc(n * n * 4), *ref = malloc(n * n * 4), *out = malloc(n * n * 4);
    clrun_status st = CLRUN_OK;
    int rc = 0;
    uint64_t seed = 99;
    for (size_t i = 0; h && i < n * n; i++) h[i] = (float)((seed = seed * 6364136223846793005ull + 1) >> 40) / 16777216.0f - 0.5f;
    if (!h || !ref || !out || (st = clrun_buf_new(ctx, n * n * 4, 0, &d.a)) || (st = clrun_buf_new(ctx, n * n * 4, 0, &d.b)) ||
        (st = clrun_buf_new(ctx, n * n * 4, 0, &d.c)) || (st = clrun_upload(d.a, 0, h, n * n * 4)) ||
        (st = clrun_upload(d.b, 0, h, n * n * 4)))
        rc = h && ref && out ? cli_fail("tune", ctx, st) : EXIT_RUNTIME;
    double best = 0;
    size_t bi = 0;
    for (size_t i = 0; i < nc && rc == 0; i++) {
        double gf = try_cand(ctx, &d, &cands[i], i ? ref : NULL, i ? out : ref, n * n);
        const unsigned *v = cands[i].v;
        char params[64];
        snprintf(params, sizeof params, "%u,%u,%u,%u,%u,%u,%u", v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
        if (gf > 0) fprintf(tout, "[%zu/%zu] %s %-22s %10.1f GFLOP/s\n", i + 1, nc, cnames[cls], params, gf);
        else fprintf(tout, "[%zu/%zu] %s %-22s %s\n", i + 1, nc, cnames[cls], params, i == 0 ? "failed" : "failed or wrong result");
        fflush(tout);
        if (i == 0 && gf == 0) {
            fprintf(stderr, "clrun tune: the first candidate failed: %s\n", clrun_last_error(ctx));
            rc = EXIT_RUNTIME;
        }
        if (gf > best) best = gf, bi = i;
    }
    if (rc == 0) {
        /* then the other backends on the same product; the fastest is what auto will use */
        /* (the tensor cores' f32 products, 3xTF32, where there are tensor cores: stored as the row
         * that ran them, mma.sync) */
        clrun_gemm_backend others[] = {CLRUN_GEMM_CPU_KERNEL, CLRUN_GEMM_CLBLAST, CLRUN_GEMM_TENSOR};
        clrun_gemm_backend winner = CLRUN_GEMM_GPU_KERNEL;
        double best_all = best;
        for (int o = 0; o < 3; o++) {
            if (others[o] == CLRUN_GEMM_CLBLAST && !clrun_have_clblast()) continue;
            if (others[o] == CLRUN_GEMM_TENSOR && !clrun_gemm_tensor_cores(ctx)) continue;
            d.backend = others[o];
            if (others[o] == CLRUN_GEMM_TENSOR) others[o] = d.backend = clrun_gemm_resolve(ctx, &d);
            double gf = try_cand(ctx, &d, &cands[bi], ref, out, n * n);
            fprintf(tout, "       %s %-22s %10.1f GFLOP/s%s\n", cnames[cls], clrun_gemm_backend_name(others[o]), gf,
                    gf ? "" : " (failed or wrong result)");
            if (gf > best_all) best_all = gf, winner = others[o];
        }
        const unsigned *v = cands[bi].v;
        snprintf(line, 96, "%s %u,%u,%u,%u,%u,%u,%u %s", cnames[cls], v[0], v[1], v[2], v[3], v[4], v[5], v[6],
                 clrun_gemm_backend_name(winner));
        fprintf(tout, "best %s: %s (%.1f GFLOP/s)\n", cnames[cls], line + strlen(cnames[cls]) + 1, best_all);
        best_gf[cls] = best_all;
    }
    clrun_buf_free(d.a), clrun_buf_free(d.b), clrun_buf_free(d.c);
    free(h), free(ref), free(out);
    return rc;
}

/* Tiles of Hopper's wgmma kernel (BM,BN,WG,WN,STAGES,WAIT,KB,WS; lib/ops/gemm/nv/gemm_wgmma_nv.cl) per kind
 * (f16, s8, 2:4 f16), the shapes measured on the H200 (docs/BENCHMARKS.md), the built-in default
 * first; --quick takes the first three. */
static const unsigned wg_cands[3][9][8] = {
    {{128, 128, 1, 128, 3, 0, 64, 0},
     {128, 128, 2, 128, 3, 0, 64, 0},
     {128, 256, 2, 256, 3, 0, 32, 1},
     {64, 128, 1, 128, 4, 0, 64, 0},
     {128, 128, 2, 64, 3, 0, 64, 0},
     {64, 256, 1, 256, 2, 0, 64, 0},
     {128, 128, 1, 128, 6, 0, 32, 0},
     {128, 256, 2, 256, 3, 1, 32, 1},
     {64, 128, 1, 128, 6, 1, 32, 1}},
    {{128, 128, 1, 128, 3, 0, 64, 0},
     {128, 128, 2, 128, 3, 0, 64, 0},
     {128, 256, 2, 128, 3, 0, 32, 1},
     {64, 128, 1, 128, 4, 0, 64, 0},
     {128, 256, 2, 256, 3, 0, 32, 1},
     {256, 128, 2, 128, 3, 0, 32, 1}},
    {{192, 128, 3, 128, 3, 0, 64, 1},
     {128, 256, 2, 256, 2, 0, 64, 1},
     {128, 256, 2, 128, 2, 0, 64, 1},
     {192, 192, 3, 64, 2, 0, 64, 1},
     {256, 128, 4, 128, 2, 0, 64, 1},
     {128, 128, 2, 128, 3, 0, 64, 1}},
};
static const char *const wg_names[3] = {"wgmma", "wgmma-s8", "wgmma-sp"}, *const wg_what[3] = {"f16", "s8", "2:4 f16"};

/* Time the wgmma kernel's tiles for a kind on an n³ product (results checked against the first
 * candidate's); line gets the tuning file's line of the fastest: "wgmma TILES", "wgmma-s8 …",
 * "wgmma-sp …", with "-large" after the kind where n³ is in the band from 2^39 flops. Returns an
 * exit code. */
static int tune_wgmma(clrun_ctx *ctx, size_t n, int quick, enum tune_kind kind, char line[96])
{
    const int band = 2.0 * (double)n * (double)n * (double)n >= 0x1p39;
    clrun_gemm_desc d = {0};
    const size_t kv = clrun_sp24_kv(n), km = clrun_sp24_km(n), es = kind == T_S8 ? 1 : 2;
    d.m = d.n = d.k = n, d.alpha = 1.0f, d.lda = d.ldb = d.ldc = n, d.batch = 1, d.backend = CLRUN_GEMM_TENSOR;
    d.type = kind == T_S8 ? CLRUN_I8 : CLRUN_F16;
    if (kind == T_S8) d.trans_b = 1; /* B as N×K: the s8 kernel's own layout */
    if (kind == T_SP) d.backend = CLRUN_GEMM_WGMMA, d.lda = kv;
    uint16_t *h = malloc(n * n * 2);
    float *ref = malloc(n * n * 4), *out = malloc(n * n * 4);
    clrun_buf *dense = NULL, *meta = NULL;
    clrun_status st = CLRUN_OK;
    int rc = 0, nc_skip = 0;
    uint64_t seed = 7;
    for (size_t i = 0; h && i < n * n; i++) {
        seed = seed * 6364136223846793005ull + 1;
        if (kind == T_S8) ((unsigned char *)h)[i] = (unsigned char)(seed >> 56);
        else h[i] = clrun_f32_to_f16((float)(seed >> 40) / 16777216.0f - 0.5f);
    }
    if (!h || !ref || !out) rc = EXIT_RUNTIME;
    else if ((st = clrun_buf_new(ctx, n * n * es, 0, &d.b)) || (st = clrun_buf_new(ctx, n * n * 4, 0, &d.c)) ||
             (st = clrun_upload(d.b, 0, h, n * n * es)))
        rc = cli_fail("tune", ctx, st);
    else if (kind != T_SP && ((st = clrun_buf_new(ctx, n * n * es, 0, &d.a)) || (st = clrun_upload(d.a, 0, h, n * n * es))))
        rc = cli_fail("tune", ctx, st);
    else if (kind == T_SP && ((st = clrun_buf_new(ctx, n * n * 2, 0, &dense)) || (st = clrun_buf_new(ctx, n * kv * 2, 0, &d.a)) ||
                              (st = clrun_buf_new(ctx, n * km * 4, 0, &meta)) || (st = clrun_upload(dense, 0, h, n * n * 2)) ||
                              (st = clrun_sp24_compress(ctx, CLRUN_F16, dense, 0, n, n, n, d.a, meta))))
        rc = cli_fail("tune", ctx, st);
    if (rc == 0 && kind == T_SP && (st = clrun_gemm_sp(ctx, &d, meta, 0)) == CLRUN_UNSUPPORTED) { /* no 2:4 kernel on wgmma here */
        fprintf(tout, "wgmma 2:4 f16: not tuned: %s\n", clrun_last_error(ctx));
        nc_skip = 1;
    } else if (rc == 0 && kind == T_SP && st) rc = cli_fail("tune", ctx, st);
    const size_t nc = nc_skip ? 0 : quick ? 3 : kind == T_GEMM ? 9 : 6;
    double best = 0;
    size_t bi = 0;
    for (size_t i = 0; i < nc && rc == 0; i++) {
        const unsigned *v = wg_cands[kind][i];
        char params[64];
        snprintf(params, sizeof params, "%u,%u,%u,%u,%u,%u,%u,%u", v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
        const double gf = try_params(ctx, &d, kind, meta, "CLRUN_GEMM_WGMMA_PARAMS", params, i ? ref : NULL, i ? out : ref, n * n);
        if (gf > 0) fprintf(tout, "[%zu/%zu] wgmma %-7s %5zu³ %-24s %10.1f GFLOP/s\n", i + 1, nc, wg_what[kind], n, params, gf);
        else
            fprintf(tout, "[%zu/%zu] wgmma %-7s %5zu³ %-24s %s\n", i + 1, nc, wg_what[kind], n, params,
                    i == 0 ? "failed" : "failed or wrong result");
        fflush(tout);
        if (i == 0 && gf == 0) {
            fprintf(stderr, "clrun tune: the first wgmma %s candidate failed: %s\n", wg_what[kind], clrun_last_error(ctx));
            rc = EXIT_RUNTIME;
        }
        if (gf > best) best = gf, bi = i;
    }
    if (rc == 0 && !nc_skip) {
        const unsigned *v = wg_cands[kind][bi];
        snprintf(line, 96, "%s%s %u,%u,%u,%u,%u,%u,%u,%u", wg_names[kind], band ? "-large" : "", v[0], v[1], v[2], v[3], v[4], v[5], v[6],
                 v[7]);
        fprintf(tout, "best %s\n", line);
        best_gf[4 + 2 * kind + band] = best;
    }
    clrun_buf_free(d.a), clrun_buf_free(d.b), clrun_buf_free(d.c), clrun_buf_free(dense), clrun_buf_free(meta);
    free(h), free(ref), free(out);
    return rc;
}

/* Write the four classes' lines (and the wgmma ones) to the tuning file (clrun_file_write: replaced
 * whole, safely). */
static int store(clrun_ctx *ctx, char line[10][96], char path[4200])
{
    const clrun_device_info *in = clrun_ctx_device(ctx);
    char dir[4200], text[1024];
    if (!clrun_gemm_tuning_path(ctx, path, 4200)) {
        fprintf(stderr, "clrun tune: the cache is off (CLRUN_NO_CACHE), so there is nowhere to store the result\n");
        return EXIT_RUNTIME;
    }
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = 0;
    for (char *q = dir + 1; *q; q++) /* mkdir -p */
        if (*q == '/') {
            *q = 0;
            mkdir(dir, 0755);
            *q = '/';
        }
    mkdir(dir, 0755);
    int n = snprintf(text, sizeof text, "# clrun tune gemm on %s (%s)\n", in->name, in->driver_version);
    for (int i = 0; i < 10 && n >= 0 && (size_t)n < sizeof text; i++)
        if (*line[i]) n += snprintf(text + n, sizeof text - (size_t)n, "%s\n", line[i]);
    if (n < 0 || (size_t)n >= sizeof text || clrun_file_write(path, text, (size_t)n) != CLRUN_OK) {
        fprintf(stderr, "clrun tune: %s\n", n < 0 || (size_t)n >= sizeof text ? "the tuning lines are too long" : clrun_last_error(NULL));
        return EXIT_RUNTIME;
    }
    fprintf(tout, "stored in %s\n", path);
    return 0;
}

/* --json: {"tune": "gemm", "device", "classes": [{"class", "tiles", "backend", "gflops"}...],
 * "wgmma": [{"kind", "tiles", "gflops"}...] (empty where there is no wgmma kernel), "stored": the
 * tuning file or null (--dry-run)}. */
static void print_json(const clrun_device_info *in, char line[10][96], const char *path)
{
    json_t *classes = json_array(), *wg = json_array();
    for (int cls = 0; cls < 4; cls++) {
        char name[32] = "", tiles[64] = "", backend[32] = "";
        sscanf(line[cls], "%31s %63s %31s", name, tiles, backend);
        json_array_append_new(classes, json_pack("{s:s, s:s, s:s, s:o}", "class", name, "tiles", tiles, "backend", backend, "gflops",
                                                 cli_json_num(best_gf[cls])));
    }
    for (int w = 4; w < 10; w++) {
        char kind[32] = "", tiles[64] = "";
        if (!*line[w] || sscanf(line[w], "%31s %63s", kind, tiles) != 2) continue;
        json_array_append_new(wg, json_pack("{s:s, s:s, s:o}", "kind", kind, "tiles", tiles, "gflops", cli_json_num(best_gf[w])));
    }
    cli_json_emit(stdout, json_pack("{s:s, s:s, s:o, s:o, s:o}", "tune", "gemm", "device", in->name, "classes", classes, "wgmma", wg,
                                    "stored", cli_json_text(path)));
}

int cmd_tune(int argc, char **argv)
{
    const char *spec = NULL;
    int quick = 0, dry = 0, json = 0, c;
    long size = 0;
    static const struct option opts[] = {{"device", required_argument, NULL, 'd'},
                                         {"size", required_argument, NULL, 's'},
                                         {"quick", no_argument, NULL, 'q'},
                                         {"dry-run", no_argument, NULL, 'n'},
                                         {"help", no_argument, NULL, 'h'},
                                         {"json", no_argument, NULL, 'j'},
                                         {0}};
    struct cli_opts opt = {.sub = "tune", .help = tune_help, .first = 1};
    while ((c = cli_next_opt(&opt, argc, argv, "d:h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        char *end = NULL;
        if (c == 'd') spec = optarg;
        else if (c == 'q') quick = 1;
        else if (c == 'n') dry = 1;
        else if (c == 'j') json = 1;
        else if (c == 's') {
            size = strtol(optarg, &end, 10);
            if (!*optarg || *end || size < 16 || size > 65536) return cli_usage_error("tune", "--size wants 16..65536, not '%s'", optarg);
        }
    }
    if (optind >= argc) return cli_usage_error("tune", "what to tune? gemm");
    if (strcmp(argv[optind], "gemm") != 0) return cli_usage_error("tune", "unknown tuning target '%s'; there is: gemm", argv[optind]);
    if (optind + 1 < argc) return cli_usage_error("tune", "unexpected argument '%s'", argv[optind + 1]);

    tout = json ? stderr : stdout;
    memset(best_gf, 0, sizeof best_gf);
    clrun_ctx *ctx = NULL;
    int rc = cli_open("tune", spec, &ctx);
    if (rc) return rc;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    if (!size) size = in->type == CLRUN_DEVICE_GPU ? 4096 : 256;
    struct cand cands[256];
    const size_t nc = candidates(in, quick, cands);
    fprintf(tout, "tuning gemm on %s: %zu candidates, sizes %ld³ (large) and %ld³ (small)\n", in->name, nc, size, size / 4);
    char line[10][96] = {"", "", "", "", "", "", "", "", "", ""};
    for (int cls = 3; cls >= 0 && rc == 0; cls--)
        rc = tune_class(ctx, cls, cls & 1 ? (size_t)size : (size_t)size / 4, cands, nc, line[cls]);
    /* Hopper's wgmma kernel: f16, s8 and, where its 2:4 kernel runs (TMA tensor maps), 2:4 f16 */
    const char *tk = clrun_gemm_tensor_kernel(ctx, CLRUN_F16), *tk8 = clrun_gemm_tensor_kernel(ctx, CLRUN_I8);
    /* each at the large size (under 2^39 flops: 4096³ where it is larger) and at 8192³ (the band
     * from 2^39 flops, where the built-in tiles change) */
    const size_t wn[2] = {size < 8192 ? (size_t)size : 4096, 8192};
    for (int band = 0; band < 2; band++) {
        if (rc == 0 && tk && strcmp(tk, "wgmma") == 0) rc = tune_wgmma(ctx, wn[band], quick, T_GEMM, line[4 + band]);
        if (rc == 0 && tk8 && strcmp(tk8, "wgmma") == 0) rc = tune_wgmma(ctx, wn[band], quick, T_S8, line[6 + band]);
        if (rc == 0 && tk && strcmp(tk, "wgmma") == 0) rc = tune_wgmma(ctx, wn[band], quick, T_SP, line[8 + band]);
    }
    char path[4200] = "";
    if (rc == 0 && !dry) rc = store(ctx, line, path);
    if (rc == 0 && json) print_json(in, line, dry ? NULL : path);
    clrun_close(ctx);
    return rc;
}
