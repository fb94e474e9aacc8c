/* cli.c — `clrun op bincount X.npy -o OUT.npy [--weights W.npy] [--minlength N]`. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char *bincount_help =
    "usage: clrun op bincount X.npy -o OUT.npy [--weights W.npy] [--minlength N] [--json] [-d SPEC]\n\n"
    "np.bincount of a 1-D array of non-negative integers (or bools): OUT[b] counts the elements equal to b\n"
    "(int64), or with --weights sums their weights (float64, added in the elements' order, NumPy's bits).\n"
    "OUT has max(X) + 1 bins, or --minlength if that is more.\n\n"
    "  -o, --output OUT    the counts or sums\n"
    "  --weights W.npy     weights, one per element (float32, float64, an integer type or bool)\n"
    "  --minlength N       at least N bins\n"
    "  --json              the record {\"op\", \"output\", \"dtype\", \"shape\"} instead of the \"wrote\" line\n\n"
    "Exit codes: 0; 1 runtime failure; 2 bad command line or input (a negative element); 3 no device;\n"
    "4 kernel build failure.\n";

/* element i of a as a signed 64-bit number (unsigned ones above 2^63 - 1: *big set) */
static int64_t element(const clrun_array *a, size_t i, int *big)
{
    const void *p = a->data;
    switch (a->dtype) {
    case CLRUN_I8: return ((const int8_t *)p)[i];
    case CLRUN_I16: return ((const int16_t *)p)[i];
    case CLRUN_I32: return ((const int32_t *)p)[i];
    case CLRUN_I64: return ((const int64_t *)p)[i];
    case CLRUN_U8:
    case CLRUN_BOOL: return ((const uint8_t *)p)[i];
    case CLRUN_U16: return ((const uint16_t *)p)[i];
    case CLRUN_U32: return ((const uint32_t *)p)[i];
    default: {
        const uint64_t v = ((const uint64_t *)p)[i];
        if (v > INT64_MAX) *big = 1;
        return (int64_t)v;
    }
    }
}

static int cmd_op_bincount(int argc, char **argv)
{
    const char *spec = NULL, *out = NULL, *wpath = NULL, *ml = NULL;
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"device", required_argument, NULL, 'd'},
                                         {"weights", required_argument, NULL, 'w'},
                                         {"minlength", required_argument, NULL, 'm'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    struct cli_opts opt = {.sub = "op bincount", .help = bincount_help, .first = 2};
    int c;
    while ((c = cli_next_opt(&opt, argc, argv, "o:d:h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        if (c == 'o') out = optarg;
        else if (c == 'd') spec = optarg;
        else if (c == 'w') wpath = optarg;
        else if (c == 'm') ml = optarg;
    }
    if (argc - optind != 1) return cli_usage_error("op bincount", "bincount takes one input file (X.npy)");
    if (!out) return cli_usage_error("op bincount", "no output file (-o OUT.npy)");
    size_t minlength = 0;
    if (ml) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(ml, &end, 10);
        if (errno || end == ml || *end || *ml == '-' || v >= (1ull << 31))
            return cli_usage_error("op bincount", "--minlength wants a count below 2^31, not '%s'", ml);
        minlength = (size_t)v;
    }
    clrun_array x = {0}, w = {0}, r = {0};
    clrun_status st = clrun_npy_read(argv[optind], &x);
    if (!st && wpath) st = clrun_npy_read(wpath, &w);
    if (st) return fprintf(stderr, "clrun op bincount: %s\n", clrun_last_error(NULL)), cli_exit_code(st);
    int rc = 0;
    size_t nbins = minlength;
    if (x.ndim != 1) rc = cli_usage_error("op bincount", "X must be 1-D (it has %u dimensions)", x.ndim);
    else if (x.dtype == CLRUN_F32 || x.dtype == CLRUN_F16 || x.dtype == CLRUN_F64 || x.dtype == CLRUN_BF16)
        rc = cli_usage_error("op bincount", "X must hold integers or bools, not %s", clrun_dtype_name(x.dtype));
    else if (wpath && (w.ndim != 1 || w.count != x.count))
        rc = cli_usage_error("op bincount", "the weights must be 1-D with one per element (%zu)", x.count);
    for (size_t i = 0; !rc && i < x.count; i++) {
        int big = 0;
        const int64_t v = element(&x, i, &big);
        if (v < 0 && !big) rc = cli_usage_error("op bincount", "X holds a negative element (%lld at %zu)", (long long)v, i);
        else if (big || v >= ((int64_t)1 << 31) - 1)
            rc = cli_usage_error("op bincount", "X holds %llu at %zu: too many bins", (unsigned long long)v, i);
        else if ((size_t)v + 1 > nbins) nbins = (size_t)v + 1;
    }
    const size_t dims[1] = {nbins};
    if (!rc && (st = clrun_array_new(&r, wpath ? CLRUN_F64 : CLRUN_I64, 1, dims))) rc = cli_fail("op bincount", NULL, st);
    clrun_ctx *ctx = NULL;
    clrun_buf *bx = NULL, *bw = NULL, *bo = NULL;
    if (!rc) rc = cli_open("op bincount", spec, &ctx);
    if (!rc && nbins && !(st = clrun_buf_new(ctx, x.bytes ? x.bytes : 1, 0, &bx)) && !(st = clrun_buf_new(ctx, r.bytes, 0, &bo)) &&
        !(st = wpath ? clrun_buf_new(ctx, w.bytes ? w.bytes : 1, 0, &bw) : CLRUN_OK) &&
        !(st = x.count ? clrun_upload(bx, 0, x.data, x.bytes) : CLRUN_OK) &&
        !(st = bw && w.count ? clrun_upload(bw, 0, w.data, w.bytes) : CLRUN_OK) &&
        !(st = clrun_bincount(ctx, x.dtype, bx, 0, x.count, bw, 0, w.dtype, nbins, bo, 0)))
        st = clrun_download(bo, 0, r.data, r.bytes);
    if (!rc && st) rc = cli_op_fail("bincount", ctx, st);
    if (!rc && (st = clrun_npy_write(out, &r)))
        rc = (fprintf(stderr, "clrun op bincount: %s\n", clrun_last_error(NULL)), cli_exit_code(st));
    if (!rc) {
        if (cli_json_mode) cli_json_emit(cli_notes(out), cli_json_wrote("bincount", out, &r));
        else fprintf(cli_notes(out), "wrote %s (%zu bins%s)\n", out, nbins, wpath ? ", weighted" : "");
    }
    clrun_buf_free(bx), clrun_buf_free(bw), clrun_buf_free(bo);
    clrun_array_free(&x), clrun_array_free(&w), clrun_array_free(&r);
    clrun_close(ctx);
    return rc;
}

const struct cli_cmd cli_verbs_hist[] = {
    {.name = "bincount", .what = "np.bincount: counts (or weight sums) per non-negative integer", .run = cmd_op_bincount},
    {0},
};
