/* tune.c — `clrun tune gemm`: clrun_gemm_tune on the device, its progress as it goes, its winners
 * stored where clrun_gemm finds them next time (clrun_gemm_tuning_path). */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char *tune_help = "usage: clrun tune gemm [-d SPEC] [--size N] [--quick] [--dry-run] [--json]\n\n"
                               "Times GEMM's tiles on the device: for every backend with tile parameters that runs there\n"
                               "(gpu-kernel; cpu-kernel; on NVIDIA mma.sync and, on Hopper, wgmma), on each product the\n"
                               "backend is tuned on (per shape class for gpu-kernel: f32 N³ and (N/4)³, each in the default\n"
                               "and the fast mode; per element type for the others; wgmma also at 8192³), every candidate\n"
                               "set, each checked against the first one's result. Then, per shape class, it times every\n"
                               "backend on f32 with its best tiles. It stores the winners in the device's tuning file (its\n"
                               "path is printed): clrun_gemm uses them from then on (the backends when asked for auto).\n"
                               "A product is large when it has at least two 128×128 tiles per compute unit.\n"
                               "$CLRUN_GEMM_TILES still overrides the tiles.\n\n"
                               "  -d, --device SPEC   device (default: $CLRUN_DEVICE, else the best)\n"
                               "  --size N            the large size (default 4096 on GPUs, 256 elsewhere; the small one is N/4)\n"
                               "  --quick             a handful of candidates instead of the whole space\n"
                               "  --dry-run           measure and report, but store nothing\n"
                               "  --json              the progress on standard error and, at the end, one record on standard\n"
                               "                      output: {\"tune\": \"gemm\", \"device\", \"tiles\": [{\"backend\", \"key\",\n"
                               "                      \"tiles\", \"gflops\"}...], \"classes\": [{\"class\", \"backend\",\n"
                               "                      \"gflops\"}...], \"stored\": the tuning file or null}\n"
                               "  --help              this text\n";

static void progress(void *user, const char *line)
{
    fprintf(user, "%s\n", line);
    fflush(user);
}

/* --json: the record of the winners (gemm.h's order: the rows' sets, then the classes'). */
static void print_json(const clrun_device_info *in, const clrun_gemm_tuned *w, size_t n, const char *path)
{
    json_t *tiles = json_array(), *classes = json_array();
    for (size_t i = 0; i < n; i++) {
        if (strcmp(w[i].backend, "auto") == 0)
            json_array_append_new(
                classes, json_pack("{s:s, s:s, s:o}", "class", w[i].key, "backend", w[i].value, "gflops", cli_json_num(w[i].gflops)));
        else
            json_array_append_new(tiles, json_pack("{s:s, s:s, s:s, s:o}", "backend", w[i].backend, "key", w[i].key, "tiles", w[i].value,
                                                   "gflops", cli_json_num(w[i].gflops)));
    }
    cli_json_emit(stdout, json_pack("{s:s, s:s, s:o, s:o, s:o}", "tune", "gemm", "device", in->name, "tiles", tiles, "classes", classes,
                                    "stored", cli_json_text(path)));
}

int cmd_tune(int argc, char **argv)
{
    const char *spec = NULL;
    int json = 0, c;
    clrun_gemm_tune_opts o = {.store = 1, .progress = progress};
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
        else if (c == 'q') o.quick = 1;
        else if (c == 'n') o.store = 0;
        else if (c == 'j') json = 1;
        else if (c == 's') {
            const long size = strtol(optarg, &end, 10);
            if (!*optarg || *end || size < 16 || size > 65536) return cli_usage_error("tune", "--size wants 16..65536, not '%s'", optarg);
            o.size = (size_t)size;
        }
    }
    if (optind >= argc) return cli_usage_error("tune", "what to tune? gemm");
    if (strcmp(argv[optind], "gemm") != 0) return cli_usage_error("tune", "unknown tuning target '%s'; there is: gemm", argv[optind]);
    if (optind + 1 < argc) return cli_usage_error("tune", "unexpected argument '%s'", argv[optind + 1]);

    o.user = json ? stderr : stdout;
    clrun_ctx *ctx = NULL;
    int rc = cli_open("tune", spec, &ctx);
    if (rc) return rc;
    clrun_gemm_tuned w[64];
    size_t n = 0;
    char path[4200];
    clrun_status st = clrun_gemm_tune(ctx, &o, w, sizeof w / sizeof *w, &n);
    if (st) rc = cli_fail("tune", ctx, st);
    else if (json) print_json(clrun_ctx_device(ctx), w, n < 64 ? n : 64, o.store ? clrun_gemm_tuning_path(ctx, path, sizeof path) : NULL);
    clrun_close(ctx);
    return rc;
}
