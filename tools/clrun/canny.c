/* canny.c — `clrun op canny`: Canny edges of PNG/PGM/PPM images, one file or many into a folder. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *canny_help = "usage: clrun op canny IN.png... -o OUT [--low T] [--high T] [--l2] [--aperture 3|5|7]\n"
                                "                     [--blur K[,SIGMA]] [--overwrite] [-d SPEC]\n\n"
                                "Canny edges of 8-bit images, equal byte for byte to OpenCV's cv2.Canny(img, low, high,\n"
                                "apertureSize, L2gradient) on the image cv2.imread gives (PNG of any bit depth, 16-bit and\n"
                                "alpha reduced as imread does; binary PGM/PPM). Color images use, per pixel, the channel with the\n"
                                "largest gradient. Edges are written as 8-bit gray (0 or 255): PNG, or PGM when OUT ends in .pgm.\n"
                                "With one input OUT is the output file; with several, OUT is a folder (created when missing) that\n"
                                "gets NAME.png for each input NAME.ext. Outputs that would collide (two inputs of one NAME) or\n"
                                "land on an input are refused before anything is written, unless --overwrite allows the latter.\n"
                                "OUT - writes the edges of one input to standard output (PNG).\n\n"
                                "  -o, --output OUT    output file, or folder for several inputs\n"
                                "  --overwrite         an output may replace one of the inputs\n"
                                "  --low T, --high T   hysteresis thresholds (default 50 and 100; swapped when low > high)\n"
                                "  --l2                gradient magnitude sqrt(dx²+dy²) instead of |dx|+|dy|\n"
                                "  --aperture N        Sobel aperture: 3 (default), 5 or 7\n"
                                "  --blur K[,SIGMA]    Gaussian pre-blur, as cv2.GaussianBlur(img, (K, K), SIGMA) first: K 3, 5 or 7;\n"
                                "                      SIGMA 0 (the default) is OpenCV's own kernel for K; off by default, as in OpenCV\n"
                                "  -d, --device SPEC   device (default: $CLRUN_DEVICE, else the best)\n"
                                "  --timeout S         end the command (exit 6) when an image takes more than S seconds (default 600,\n"
                                "                      0: none)\n"
                                "  --stages            after the run, the time per stage on stderr: opening the device; reading\n"
                                "                      and decoding; Canny with its transfers (and the device time of its kernels);\n"
                                "                      encoding and writing\n"
                                "  --help              this text\n\n"
                                "Exit codes: 0; 1 runtime failure; 2 bad command line or input file; 3 no device; 6 timeout.\n";

/* OUT/NAME.png for input path in */
static void out_path(char *buf, size_t size, const char *dir, const char *in)
{
    const char *base = strrchr(in, '/');
    base = base ? base + 1 : in;
    const char *dot = strrchr(base, '.');
    int len = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
    snprintf(buf, size, "%s/%.*s.png", dir, len, base);
}

/* The same file: the same path, or an existing file of the same device and inode. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (strcmp(a, b) == 0) return 1;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Refuse, before anything is written, two outputs of one name and an output that is an input. */
static int check_outputs(char (*dst)[4400], int nin, char **in, int overwrite)
{
    for (int i = 0; i < nin; i++) {
        if (strcmp(dst[i], "-") == 0) continue;
        for (int j = 0; j < i; j++)
            if (same_file(dst[i], dst[j]))
                return cli_usage_error("op canny", "%s and %s would both write %s; give them different names or run them apart", in[j],
                                       in[i], dst[i]);
        for (int j = 0; j < nin && !overwrite; j++)
            if (same_file(dst[i], in[j]))
                return cli_usage_error("op canny", "the edges of %s would replace the input %s (--overwrite allows it)", in[i], in[j]);
    }
    return 0;
}

int cmd_op_canny(int argc, char **argv)
{
    const char *spec = NULL, *out = NULL;
    clrun_canny_params p = {50.0, 100.0, 0, 3, 0, 0.0};
    int overwrite = 0, stages = 0;
    static const struct option opts[] = {
        {"overwrite", no_argument, NULL, 'W'},    {"stages", no_argument, NULL, 'S'},
        {"output", required_argument, NULL, 'o'}, {"device", required_argument, NULL, 'd'}, {"low", required_argument, NULL, 'L'},
        {"high", required_argument, NULL, 'H'},   {"l2", no_argument, NULL, '2'},           {"aperture", required_argument, NULL, 'A'},
        {"blur", required_argument, NULL, 'B'},   {"help", no_argument, NULL, 'h'},         {0}};
    int c;
    struct cli_opts opt = {.sub = "op canny", .help = canny_help, .first = 2};
    while ((c = cli_next_opt(&opt, argc, argv, "o:d:h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        char *end = NULL;
        if (c == 'o') out = optarg;
        else if (c == 'd') spec = optarg;
        else if (c == '2') p.l2 = 1;
        else if (c == 'W') overwrite = 1;
        else if (c == 'S') stages = 1;
        else if (c == 'L' || c == 'H') {
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
    clrun_ctx *ctx = NULL;
    double t[5] = {cli_now(), 0, 0, 0, 0}; /* --stages: open, read, Canny, write; t[0] the start */
    if (!rc) rc = cli_open("op canny", spec, &ctx);
    if (!rc && stages && clrun_profile_start(ctx) != CLRUN_OK) rc = cli_fail("op canny", ctx, CLRUN_CL_ERROR);
    t[1] = cli_now() - t[0];
    int done = 0;
    for (int i = 0; i < nin && !rc; i++) {
        const char *in = argv[optind + i], *dst = dsts[i];
        clrun_image img, edges;
        clrun_status st;
        cli_progress(); /* the time limit counts per image */
        double t0 = cli_now();
        if ((st = clrun_image_read(in, &img))) {
            fprintf(stderr, "clrun op canny: %s\n", clrun_last_error(NULL));
            rc = st == CLRUN_NOT_FOUND || st == CLRUN_FORMAT_ERROR ? EXIT_USAGE : cli_exit_code(st);
            break;
        }
        double t1 = cli_now();
        st = clrun_canny_image(ctx, &img, &p, &edges);
        clrun_image_free(&img);
        double t2 = cli_now();
        if (st) {
            rc = cli_fail("op canny", ctx, st);
            break;
        }
        st = clrun_image_write(dst, &edges);
        clrun_image_free(&edges);
        t[2] += t1 - t0, t[3] += t2 - t1, t[4] += cli_now() - t2, done++;
        if (st) {
            fprintf(stderr, "clrun op canny: %s\n", clrun_last_error(NULL));
            rc = cli_exit_code(st);
            break;
        }
        if (nin > 1) printf("%s -> %s\n", in, dst);
    }
    if (!rc && nin == 1) fprintf(cli_notes(out), "wrote %s\n", out);
    if (stages && ctx && done) {
        const clrun_profile_entry *e = NULL;
        size_t ne = 0;
        double dev = 0;
        if (clrun_profile_read(ctx, &e, &ne) == CLRUN_OK)
            for (size_t j = 0; j < ne; j++) dev += e[j].total_ms;
        fprintf(stderr,
                "stages over %d image%s, %.1f ms in all: open the device %.1f ms (once); per image: read and decode %.2f ms, "
                "Canny with transfers %.2f ms (kernels %.3f ms of device time), encode and write %.2f ms\n",
                done, done == 1 ? "" : "s", (cli_now() - t[0]) * 1e3, t[1] * 1e3, t[2] * 1e3 / done, t[3] * 1e3 / done, dev / done,
                t[4] * 1e3 / done);
    }
    clrun_close(ctx);
    free(dsts);
    return rc;
}
