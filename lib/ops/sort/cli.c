/* cli.c — `clrun op sort|argsort|topk A.npy ... -o OUT.npy`: along the last axis. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char *sort_help =
    "usage: clrun op sort A.npy -o OUT.npy [--descending] [--json] [-d SPEC]\n"
    "       clrun op argsort A.npy -o IDX.npy [--descending] [--json] [-d SPEC]\n"
    "       clrun op topk A.npy --k K -o VALUES.npy [--indices IDX.npy] [--smallest] [--json] [-d SPEC]\n\n"
    "Stable radix sorts along the last axis, equal to NumPy's np.sort(a, kind=\"stable\") and\n"
    "np.argsort(a, kind=\"stable\") bit for bit (NaN last, -0.0 equal to 0.0). Keys: every integer\n"
    "type, bool, float16, float32, float64. argsort writes int64 positions within each row. topk\n"
    "writes the K largest of each row in order (--smallest: the K smallest) and, with --indices,\n"
    "their int64 positions, as torch.topk(a, K) (ties: the earlier position first).\n\n"
    "  -o, --output OUT   the sorted keys (sort), the positions (argsort), the values (topk)\n"
    "  --descending       largest first (NaN first); equal keys keep their order\n"
    "  --k K              topk: how many of each row (0 to the row's length)\n"
    "  --indices IDX.npy  topk: also the positions\n"
    "  --smallest         topk: the K smallest instead\n"
    "  --json             the record {\"op\", \"output\", \"dtype\", \"shape\"} instead of the \"wrote\" line\n\n"
    "Exit codes: 0; 1 runtime failure; 2 bad command line or input; 3 no device; 4 kernel build failure.\n";

static int cmd_op_sort(int argc, char **argv)
{
    const char *verb = argv[1], *spec = NULL, *out = NULL, *indices = NULL, *k_s = NULL;
    const int topk = !strcmp(verb, "topk"), arg = !strcmp(verb, "argsort");
    int desc = 0, smallest = 0;
    char sub[32];
    snprintf(sub, sizeof sub, "op %s", verb);
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"device", required_argument, NULL, 'd'},  {"descending", no_argument, NULL, 'D'},
        {"k", required_argument, NULL, 'k'},      {"indices", required_argument, NULL, 'i'}, {"smallest", no_argument, NULL, 's'},
        {"json", no_argument, NULL, 'j'},         {"help", no_argument, NULL, 'h'},          {0}};
    struct cli_opts opt = {.sub = sub, .help = sort_help, .first = 2};
    int c;
    while ((c = cli_next_opt(&opt, argc, argv, "o:d:h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        switch (c) {
        case 'o': out = optarg; break;
        case 'd': spec = optarg; break;
        case 'D': desc = 1; break;
        case 'k': k_s = optarg; break;
        case 'i': indices = optarg; break;
        case 's': smallest = 1; break;
        default: break;
        }
    }
    if (argc - optind != 1) return cli_usage_error(sub, "%s takes one input file (A.npy)", verb);
    if (!out) return cli_usage_error(sub, "no output file (-o OUT.npy)");
    if (!topk && (k_s || indices || smallest)) return cli_usage_error(sub, "--k, --indices and --smallest are topk's");
    if (topk && desc) return cli_usage_error(sub, "topk takes the largest by default (--smallest for the smallest), not --descending");
    size_t k = 0;
    if (topk) {
        char *end;
        errno = 0;
        if (!k_s) return cli_usage_error(sub, "no --k K");
        unsigned long long v = strtoull(k_s, &end, 10);
        if (errno || end == k_s || *end || *k_s == '-') return cli_usage_error(sub, "--k wants a count, not '%s'", k_s);
        k = (size_t)v;
    }
    clrun_array in = {0}, r = {0}, ri = {0};
    clrun_status st = clrun_npy_read(argv[optind], &in);
    if (st) return fprintf(stderr, "clrun %s: %s\n", sub, clrun_last_error(NULL)), cli_exit_code(st);
    const size_t n = in.ndim ? in.shape[in.ndim - 1] : 1, rows = n ? in.count / n : 0;
    int rc = 0;
    size_t dims[CLRUN_MAX_DIMS];
    memcpy(dims, in.shape, sizeof dims);
    if (topk && k > n) rc = cli_usage_error(sub, "--k %zu is more than the rows' %zu elements", k, n);
    if (!rc) {
        if (topk && in.ndim) dims[in.ndim - 1] = k;
        st = clrun_array_new(&r, arg ? CLRUN_I64 : in.dtype, in.ndim, dims);
        if (!st && topk) st = clrun_array_new(&ri, CLRUN_I64, in.ndim, dims);
        if (st) rc = cli_fail(sub, NULL, st);
    }
    clrun_ctx *ctx = NULL;
    clrun_buf *b = NULL, *o = NULL, *oi = NULL;
    if (!rc) rc = cli_open(sub, spec, &ctx);
    const unsigned flags = desc || (topk && !smallest) ? CLRUN_SORT_DESCENDING : 0;
    if (!rc && !(st = clrun_buf_new(ctx, in.bytes ? in.bytes : 1, 0, &b)) && !(st = clrun_buf_new(ctx, r.bytes ? r.bytes : 1, 0, &o)) &&
        !(st = clrun_buf_new(ctx, ri.bytes ? ri.bytes : 8, 0, &oi)) &&
        !(st = in.count ? clrun_upload(b, 0, in.data, in.bytes) : CLRUN_OK)) {
        if (topk) st = clrun_topk(ctx, in.dtype, flags, b, 0, rows, n, k, o, 0, oi, 0);
        else if (arg) st = clrun_argsort(ctx, in.dtype, flags, b, 0, o, 0, rows, n);
        else st = clrun_sort(ctx, in.dtype, flags, b, 0, o, 0, rows, n);
        if (!st && r.count) st = clrun_download(o, 0, r.data, r.bytes);
        if (!st && ri.count) st = clrun_download(oi, 0, ri.data, ri.bytes);
    }
    if (!rc && st) rc = cli_op_fail(verb, ctx, st);
    if (!rc && (st = clrun_npy_write(out, &r)) == CLRUN_OK && indices) st = clrun_npy_write(indices, &ri);
    if (!rc && st) rc = (fprintf(stderr, "clrun %s: %s\n", sub, clrun_last_error(NULL)), cli_exit_code(st));
    if (!rc) {
        char note[96];
        snprintf(note, sizeof note, "%s, %zu rows of %zu", clrun_dtype_name(in.dtype), rows, n);
        if (cli_json_mode) cli_json_emit(cli_notes(out), cli_json_wrote(verb, out, &r));
        else fprintf(cli_notes(out), "wrote %s (%s)\n", out, note);
    }
    clrun_buf_free(b), clrun_buf_free(o), clrun_buf_free(oi);
    clrun_array_free(&in), clrun_array_free(&r), clrun_array_free(&ri);
    clrun_close(ctx);
    return rc;
}

const struct cli_cmd cli_verbs_sort[] = {
    {.name = "sort", .what = "stable sort along the last axis (clrun op sort --help)", .run = cmd_op_sort},
    {.name = "argsort", .what = "stable sorting positions along the last axis, int64", .run = cmd_op_sort},
    {.name = "topk", .what = "the K largest (or smallest) of each row and their positions", .run = cmd_op_sort},
    {0},
};
