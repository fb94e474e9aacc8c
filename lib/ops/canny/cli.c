/* cli.c — `clrun op canny`: Canny edges of PNG, JPEG and PGM/PPM images, one file or many into a folder,
 * on one device, a group (both through clrun_canny_files, batch.c) or the ranks of mpirun. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char *canny_help =
    "usage: clrun op canny IN.png... -o OUT [--low T] [--high T] [--l2] [--aperture 3|5|7]\n"
    "                     [--blur K[,SIGMA]] [--overwrite] [--json] [-d SPEC]\n\n"
    "Canny edges of 8-bit images, equal byte for byte to OpenCV's cv2.Canny(img, low, high,\n"
    "apertureSize, L2gradient) on the image cv2.imread gives (PNG of any bit depth, 16-bit and\n"
    "alpha reduced as imread does; JPEG; binary PGM/PPM). Color images use, per pixel, the channel with the\n"
    "largest gradient. Edges are written as 8-bit gray (0 or 255): PNG, or PGM when OUT ends in .pgm.\n"
    "With one input OUT is the output file; with several, OUT is a folder (created when missing) that\n"
    "gets NAME.png for each input NAME.ext. Outputs that would collide (two inputs of one NAME) or\n"
    "land on an input are refused before anything is written, unless --overwrite allows the latter.\n"
    "OUT - writes the edges of one input to standard output (PNG). Several inputs stream: images are\n"
    "read and decoded, and edges encoded and written, on --jobs threads, while the device pipeline\n"
    "(clrun_pipe_canny) uploads, runs Canny on and downloads up to 3 frames at once, in order; a file\n"
    "that fails is reported by name and the others are still done (the exit status then says the worst\n"
    "failure, after a count).\n\n"
    "  -o, --output OUT    output file, or folder for several inputs\n"
    "  --overwrite         an output may replace one of the inputs\n"
    "  --low T, --high T   hysteresis thresholds (default 50 and 100; swapped when low > high)\n"
    "  --l2                gradient magnitude sqrt(dx²+dy²) instead of |dx|+|dy|\n"
    "  --aperture N        Sobel aperture: 3 (default), 5 or 7\n"
    "  --blur K[,SIGMA]    Gaussian pre-blur, as cv2.GaussianBlur(img, (K, K), SIGMA) first: K 3, 5 or 7;\n"
    "                      SIGMA 0 (the default) is OpenCV's own kernel for K; off by default, as in OpenCV\n"
    "  -d, --device SPEC   device (default: $CLRUN_DEVICE, else the best)\n"
    "  --devices GROUP     several devices (all, gpu, cpu, or selection strings 0,2; default\n"
    "                      $CLRUN_DEVICES), a pipeline each: each image goes to the device that would\n"
    "                      finish it first by the devices' measured speeds, so a slow one takes few or\n"
    "                      none; a device that fails takes no more and its images go to the others\n"
    "  --timeout S         end the command (exit 6) when an image takes more than S seconds (default 600,\n"
    "                      0: none)\n"
    "  -j, --jobs N        threads that read, decode, encode and write images while the device works\n"
    "                      (default: the machine's cores plus one; several inputs only)\n"
    "  --json              one record per input, in order, on standard output (standard error with -o -):\n"
    "                      {\"op\": \"canny\", \"input\", \"output\"}, a failure adding \"error\" and \"exit\"\n"
    "  -q, --quiet         no \"IN -> OUT\" lines and no progress line (shown on a terminal for batches\n"
    "                      that run longer than a second: images done, images/s, time left)\n"
    "  --stages            after the run, the time per stage on stderr: finding the devices and opening\n"
    "                      one (the first image also loads the kernels); reading\n"
    "                      and decoding (summed over threads); the main thread's time in the device\n"
    "                      pipeline (sending frames, waiting for edges) and the device time of the\n"
    "                      kernels; encoding and writing (summed over threads)\n"
    "  --help              this text\n\n"
    "Exit codes: 0; 1 runtime failure; 2 bad command line or input file; 3 no device; 4 kernel build failure; 6 timeout.\n";

/* OUT/NAME.png for input path in */
static void out_path(char *buf, size_t size, const char *dir, const char *in)
{
    const char *base = strrchr(in, '/');
    base = base ? base + 1 : in;
    const char *dot = strrchr(base, '.');
    int len = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
    snprintf(buf, size, "%s/%.*s.png", dir, len, base);
}

/* Refuse, before anything is written, two outputs of one name and an output that is an input. */
static int check_outputs(char (*dst)[4400], int nin, char **in, int overwrite)
{
    for (int i = 0; i < nin; i++) {
        if (strcmp(dst[i], "-") == 0) continue;
        for (int j = 0; j < i; j++)
            if (cli_same_file(dst[i], dst[j]))
                return cli_usage_error("op canny", "%s and %s would both write %s; give them different names or run them apart", in[j],
                                       in[i], dst[i]);
        for (int j = 0; j < nin && !overwrite; j++)
            if (cli_same_file(dst[i], in[j]))
                return cli_usage_error("op canny", "the edges of %s would replace the input %s (--overwrite allows it)", in[i], in[j]);
    }
    return 0;
}

/* --json: one record per input, in order, on standard output (standard error when the edges go
 * there): {"op": "canny", "input", "output"}, and for a failure "error" (the text) and "exit" (its
 * exit status) too. */
static void json_record(const char *in, const char *out, const char *err, int rc)
{
    json_t *rec = json_pack("{s:s, s:s, s:s}", "op", "canny", "input", in, "output", out);
    if (err) json_object_update_new(rec, json_pack("{s:s, s:i}", "error", err, "exit", rc));
    cli_json_emit(cli_notes(out), rec);
}

/* What canny_batch prints as clrun_canny_files reports. */
struct say {
    char **in;
    char (*dst)[4400];
    int n, quiet, progress, rc, failed, *done;
    double start, shown;
    char dead[8][700]; /* the first contexts' failures, said at the end */
};

static void say_image(void *arg, size_t i, clrun_status st, int bad_input, const char *text)
{
    struct say *s = arg;
    if (s->shown > 0) fprintf(stderr, "\r%*s\r", 60, ""), s->shown = 0; /* the progress line away */
    if (!st) {
        ++*s->done;
        if (s->quiet == CANNY_JSON) json_record(s->in[i], s->dst[i], NULL, 0);
        else if (!s->quiet && s->n > 1) printf("%s -> %s\n", s->in[i], s->dst[i]);
        return;
    }
    const int rc = bad_input && (st == CLRUN_NOT_FOUND || st == CLRUN_FORMAT_ERROR) ? EXIT_USAGE : cli_exit_code(st);
    fprintf(stderr, "clrun op canny: %s\n", text), s->failed++; /* the text names the file */
    if (s->quiet == CANNY_JSON) json_record(s->in[i], s->dst[i], text, rc);
    if (rc > s->rc) s->rc = rc;
}

static void say_device(void *arg, unsigned k, const char *text)
{
    struct say *s = arg;
    if (k < sizeof s->dead / sizeof *s->dead) snprintf(s->dead[k], sizeof s->dead[k], "%s", text);
}

static void say_progress(void *arg, size_t sent, size_t n)
{
    struct say *s = arg;
    cli_progress(); /* the time limit counts per image */
    const double el = cli_now() - s->start;
    if (s->progress && el >= 1 && el - s->shown >= 0.25) { /* a progress line on a terminal, once the batch has run a second */
        s->shown = el;
        fprintf(stderr, "\r%zu/%zu images, %.1f/s, %.0f s left   ", sent, n, (double)sent / el, (double)(n - sent) * el / (double)sent);
    }
}

int canny_batch(clrun_ctx *const *ctx, const double *w, int nctx, const clrun_canny_params *p, char **in, char (*dst)[4400], int n,
                int jobs, int quiet, double t[5], int *done)
{
    struct say s = {
        .in = in, .dst = dst, .n = n, .quiet = quiet, .progress = !quiet && isatty(STDERR_FILENO), .done = done, .start = cli_now()};
    const char **outs = malloc((size_t)n * sizeof *outs + 1);
    size_t *sent = calloc((size_t)nctx, sizeof *sent);
    if (!outs || !sent) {
        free(outs), free(sent);
        return fprintf(stderr, "clrun op canny: out of memory\n"), EXIT_RUNTIME;
    }
    for (int i = 0; i < n; i++) outs[i] = dst[i];
    clrun_canny_report rep = {say_image, say_device, say_progress, &s, 0, 0, 0, 0, sent};
    const clrun_status st = clrun_canny_files(ctx, w, (unsigned)nctx, p, (const char *const *)in, outs, (size_t)n, (unsigned)jobs, &rep);
    if (s.shown > 0) fprintf(stderr, "\r%*s\r", 60, "");
    t[2] += rep.read_s, t[3] += rep.device_s, t[4] += rep.write_s;
    int rc = s.rc;
    if (st && !s.failed) rc = cli_fail("op canny", NULL, st); /* nothing ran: no device could, or no thread started */
    else if (st && !rc) rc = cli_exit_code(st);
    for (int k = 0; k < nctx && nctx > 1 && k < (int)(sizeof s.dead / sizeof *s.dead); k++) /* a device that failed: said once */
        if (s.dead[k][0]) fprintf(stderr, "clrun op canny: device %d failed and took no more images: %s\n", k, s.dead[k]);
    for (int k = 0; k < nctx && nctx > 1 && !quiet; k++) /* how the frames were dealt */
        fprintf(stderr, "device %d, %s: %zu image%s sent\n", k, clrun_ctx_device(ctx[k])->name, sent[k], sent[k] == 1 ? "" : "s");
    if (n > 1 && (s.failed || *done < n))
        fprintf(stderr, "clrun op canny: %d of %d images failed%s\n", n - *done, n, *done + s.failed < n ? " or were not done" : "");
    free(outs), free(sent);
    return rc;
}

#ifdef CLRUN_HAVE_MPI
#include <clrun_mpi.h>

/* The batch over the ranks of mpirun: each rank opens the device at its local rank (-d: among
 * those SPEC names), then takes chunks of `jobs` files from a counter on rank 0 until none are left,
 * each chunk a canny_batch; rank 0 prints one summary line. A rank without a device makes every
 * rank end with its status. */
static int canny_ranks(const char *spec, const clrun_canny_params *p, char **in, char (*dst)[4400], int n, int jobs, int quiet)
{
    clrun_ctx *ctx = NULL;
    clrun_status st = clrun_mpi_open(MPI_COMM_WORLD, spec, &ctx);
    int rc = st ? cli_fail("op canny", NULL, st) : 0;
    if ((rc = cli_mpi_max(rc))) return clrun_close(ctx), rc;
    clrun_mpi_counter *counter = NULL;
    if ((st = clrun_mpi_counter_new(MPI_COMM_WORLD, 0, &counter))) return clrun_close(ctx), cli_fail("op canny", NULL, st);
    int done = 0, taken = 0;
    double t[5] = {0};
    for (;;) {
        const long start = clrun_mpi_counter_take(counter, jobs);
        if (start < 0 || start >= n) break;
        const int count = (int)(n - start < jobs ? n - start : jobs), before = done;
        const int e = canny_batch(&ctx, NULL, 1, p, in + start, dst + start, count, jobs, quiet, t, &done);
        taken += count;
        if (e > rc) rc = e;
        if (e && done - before == 0 && e != EXIT_USAGE) break; /* the device failed: take no more */
    }
    clrun_mpi_counter_free(counter);
    clrun_close(ctx);
    const int all_done = cli_mpi_sum(done), all_taken = cli_mpi_sum(taken);
    rc = cli_mpi_max(rc);
    if (cli_mpi_rank() == 0)
        fprintf(stderr, "clrun op canny: %d images on %d ranks: %d written, %d failed%s\n", n, cli_mpi_size(), all_done, n - all_done,
                all_taken < n ? " or were not done" : "");
    return rc;
}
#endif

static int cmd_op_canny(int argc, char **argv)
{
    const char *spec = NULL, *out = NULL, *devices = NULL;
    clrun_canny_params p = {50.0, 100.0, 0, 3, 0, 0.0};
    int overwrite = 0, stages = 0, quiet = 0;
    long jobs = sysconf(_SC_NPROCESSORS_ONLN) + 1; /* one more than the cores covers the waits on files and on the device */
    static const struct option opts[] = {
        {"overwrite", no_argument, NULL, 'W'},    {"stages", no_argument, NULL, 'S'},         {"jobs", required_argument, NULL, 'j'},
        {"quiet", no_argument, NULL, 'q'},        {"devices", required_argument, NULL, 'G'},  {"output", required_argument, NULL, 'o'},
        {"device", required_argument, NULL, 'd'}, {"low", required_argument, NULL, 'L'},      {"high", required_argument, NULL, 'H'},
        {"l2", no_argument, NULL, '2'},           {"aperture", required_argument, NULL, 'A'}, {"blur", required_argument, NULL, 'B'},
        {"help", no_argument, NULL, 'h'},         {"json", no_argument, NULL, 'J'},           {0}};
    int c;
    struct cli_opts opt = {.sub = "op canny", .help = canny_help, .first = 2};
    while ((c = cli_next_opt(&opt, argc, argv, "o:d:j:qh", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        char *end = NULL;
        if (c == 'o') out = optarg;
        else if (c == 'd') spec = optarg;
        else if (c == 'G') devices = optarg;
        else if (c == '2') p.l2 = 1;
        else if (c == 'W') overwrite = 1;
        else if (c == 'S') stages = 1;
        else if (c == 'q' && quiet != CANNY_JSON) quiet = 1;
        else if (c == 'J') quiet = CANNY_JSON;
        else if (c == 'j') {
            jobs = strtol(optarg, &end, 10);
            if (!*optarg || *end || jobs < 1 || jobs > 1024) return cli_usage_error("op canny", "--jobs wants 1 to 1024, not '%s'", optarg);
        } else if (c == 'L' || c == 'H') {
            double v = strtod(optarg, &end);
            if (!*optarg || *end || !isfinite(v))
                return cli_usage_error("op canny", "--%s wants a number, not '%s'", c == 'L' ? "low" : "high", optarg);
            *(c == 'L' ? &p.low : &p.high) = v;
        } else if (c == 'A') {
            long v = strtol(optarg, &end, 10);
            if (!*optarg || *end || (v != 3 && v != 5 && v != 7))
                return cli_usage_error("op canny", "--aperture wants 3, 5 or 7, not '%s'", optarg);
            p.aperture = (int)v;
        } else if (c == 'B') {
            long k = strtol(optarg, &end, 10);
            double sigma = 0;
            if (*end == ',') sigma = strtod(end + 1, &end);
            if (!*optarg || *end || (k != 1 && k != 3 && k != 5 && k != 7) || !(sigma >= 0))
                return cli_usage_error("op canny", "--blur wants K or K,SIGMA with K 3, 5 or 7, not '%s'", optarg);
            p.blur = (int)k, p.blur_sigma = sigma;
        }
    }
    int nin = argc - optind;
    if (nin < 1) return cli_usage_error("op canny", "no input image");
    if (!out) return cli_usage_error("op canny", "no output (-o OUT.png, or -o FOLDER for several inputs)");
    if (nin > 1 && strcmp(out, "-") == 0) return cli_usage_error("op canny", "-o - takes one input; several need a folder");
    char(*dsts)[4400] = malloc((size_t)nin * sizeof *dsts);
    if (!dsts) return (fprintf(stderr, "clrun op canny: out of memory\n"), EXIT_RUNTIME);
    for (int i = 0; i < nin; i++) {
        if (nin > 1) out_path(dsts[i], sizeof dsts[i], out, argv[optind + i]);
        else snprintf(dsts[i], sizeof dsts[i], "%s", out);
    }
    int rc = check_outputs(dsts, nin, argv + optind, overwrite);
    if (!rc && nin > 1 && mkdir(out, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "clrun op canny: cannot create folder %s: %s\n", out, strerror(errno));
        rc = EXIT_RUNTIME;
    }
#ifdef CLRUN_HAVE_MPI
    if (!rc && cli_mpi_size() > 1) { /* under mpirun: the files dealt over the ranks */
        if (devices) rc = cli_usage_error("op canny", "under mpirun each rank takes one device (-d limits the candidates); not --devices");
        if (!rc) rc = canny_ranks(spec, &p, argv + optind, dsts, nin, jobs > 1 ? (int)jobs : 1, quiet);
        free(dsts);
        return rc;
    }
#endif
    clrun_ctx *ctx = NULL, *list[64], *const *ctxs = &ctx;
    clrun_group *grp = NULL;
    double t[5] = {cli_now(), 0, 0, 0, 0}, w[64]; /* --stages: open, read, Canny, write; t[0] the start */
    int nctx = 1;
    unsigned ndev = 0;
    if (!rc && devices && spec) rc = cli_usage_error("op canny", "give -d (one device) or --devices (a group), not both");
    if (!rc && stages) clrun_device_count(&ndev); /* the platforms' start-up, timed apart (cli_open reports a failure) */
    const double found = cli_now() - t[0];
    if (!rc && devices) {
        clrun_status st = clrun_group_open(&grp, devices);
        if (st == CLRUN_INVALID_ARG) rc = cli_usage_error("op canny", "%s", clrun_last_error(NULL));
        else if (st) rc = cli_fail("op canny", NULL, st);
        else if (clrun_group_size(grp) > 64) rc = cli_usage_error("op canny", "at most 64 devices");
        else if ((st = clrun_group_weights(grp, w))) rc = cli_fail("op canny", NULL, st);
        if (!rc) {
            nctx = (int)clrun_group_size(grp);
            for (int k = 0; k < nctx; k++) list[k] = clrun_group_ctx(grp, (unsigned)k);
            ctxs = list;
        }
    } else if (!rc) {
        rc = cli_open("op canny", spec, &ctx);
    }
    for (int k = 0; k < nctx && !rc && stages; k++)
        if (clrun_profile_start(ctxs[k]) != CLRUN_OK) rc = cli_fail("op canny", ctxs[k], CLRUN_CL_ERROR);
    t[1] = cli_now() - t[0];
    int done = 0;
    if (!rc)
        rc = canny_batch(ctxs, grp ? w : NULL, nctx, &p, argv + optind, dsts, nin, nin > 1 && jobs > 1 ? (int)jobs : 1, quiet, t, &done);
    if (!rc && nin == 1 && quiet != CANNY_JSON) fprintf(cli_notes(out), "wrote %s\n", out);
    if (stages && (ctx || grp) && done) {
        double dev = 0;
        for (int k = 0; k < nctx; k++) {
            const clrun_profile_entry *e = NULL;
            size_t ne = 0;
            if (clrun_profile_read(ctxs[k], &e, &ne) == CLRUN_OK)
                for (size_t j = 0; j < ne; j++) dev += e[j].total_ms;
        }
        fprintf(stderr,
                "stages over %d image%s, %.1f ms in all: find the devices %.1f ms and open %s %.1f ms (once); per image: read and "
                "decode %.2f ms, "
                "the device pipeline %.2f ms (waits included; kernels %.3f ms of device time), encode and write %.2f ms\n",
                done, done == 1 ? "" : "s", (cli_now() - t[0]) * 1e3, found * 1e3, nctx > 1 ? "them" : "one", (t[1] - found) * 1e3,
                t[2] * 1e3 / done, t[3] * 1e3 / done, dev / done, t[4] * 1e3 / done);
    }
    clrun_group_close(grp);
    clrun_close(ctx);
    free(dsts);
    return rc;
}

const struct cli_cmd cli_verbs_canny[] = {
    {.name = "canny",
     .what = "Canny edges of PNG, JPEG and PGM/PPM images, as cv2.Canny (clrun op canny --help; name it first)",
     .run = cmd_op_canny},
    {0},
};
