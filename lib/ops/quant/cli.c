/* cli.c — `clrun op quantize` and `clrun op dequantize`: float32 .npy <-> int8 .npy with PyTorch's
 * qint8 arithmetic (clrun_quantize, clrun_dequantize), per tensor or per channel. */
#include "cli.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *quant_help =
    "usage: clrun op quantize X.npy -o Q.npy (--scale S[,S...] [--zero-point Z[,Z...]] | --calibrate [--symmetric]\n"
    "                         [--percentile P]) [--axis A] [-d SPEC]\n"
    "       clrun op dequantize Q.npy -o X.npy --scale S[,S...] [--zero-point Z[,Z...]] [--axis A] [-d SPEC]\n\n"
    "float32 to int8 as torch.quantize_per_tensor / quantize_per_channel compute qint8: q = clamp(Z + rint(x · (1/S)),\n"
    "-128, 127), ties to even, in f32; and back, x = (q - Z) · S, as torch.dequantize. With --axis A, one scale and zero\n"
    "point per index along axis A (per channel); else one for the whole array. --calibrate takes them from the data as\n"
    "torch.ao.quantization's MinMaxObserver does (affine by default, --symmetric for zero point 0), clipping to the\n"
    "P-th percentile when given (default 100: the whole range); quantize prints the parameters it used.\n\n"
    "  -o, --output FILE     the result (.npy: int8 from quantize, float32 from dequantize)\n"
    "  --scale S[,S...]      the scale(s): one, or one per channel with --axis\n"
    "  --zero-point Z[,...]  the zero point(s), -128 to 127 (default 0)\n"
    "  --axis A              the channel axis (0 .. ndim-1)\n"
    "  --calibrate           quantize: scales and zero points from the data\n"
    "  --symmetric           with --calibrate: symmetric (zero point 0)\n"
    "  --percentile P        with --calibrate: clip the range to the P-th percentile (0 < P <= 100)\n"
    "  -d, --device SPEC     device (default: $CLRUN_DEVICE, else the best)\n"
    "  --json                the record {\"op\", \"output\", \"dtype\", \"shape\"} (quantize: and \"scale\",\n"
    "                        \"zero_point\", \"axis\") instead of the \"wrote\" line (a failure: {\"error\": ...})\n"
    "  --help                this text\n\n"
    "Exit codes: 0; 1 runtime failure; 2 bad command line or input file; 3 no device.\n";

/* A comma list of numbers into v (at most cap); returns the count, -1 when malformed. */
static long list(const char *s, double *v, long cap)
{
    long n = 0;
    while (*s && n < cap) {
        char *end;
        v[n++] = strtod(s, &end);
        if (end == s || (*end && *end != ',')) return -1;
        s = *end ? end + 1 : end;
    }
    return *s ? -1 : n;
}

static int cmd_op_quant(int argc, char **argv, int quantize)
{
    const char *sub = quantize ? "op quantize" : "op dequantize", *out = NULL, *spec = NULL, *scales = NULL, *zps = NULL;
    int calibrate = 0, symmetric = 0, axis = -1;
    double percentile = 100;
    int percentile_given = 0;
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"device", required_argument, NULL, 'd'},
                                         {"scale", required_argument, NULL, 's'},
                                         {"zero-point", required_argument, NULL, 'z'},
                                         {"axis", required_argument, NULL, 'a'},
                                         {"calibrate", no_argument, NULL, 'c'},
                                         {"symmetric", no_argument, NULL, 'S'},
                                         {"percentile", required_argument, NULL, 'p'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    struct cli_opts opt = {.sub = sub, .help = quant_help, .first = 2};
    int c;
    while ((c = cli_next_opt(&opt, argc, argv, "o:d:h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        char *end = NULL;
        if (c == 'o') out = optarg;
        else if (c == 'd') spec = optarg;
        else if (c == 's') scales = optarg;
        else if (c == 'z') zps = optarg;
        else if (c == 'c') calibrate = 1;
        else if (c == 'S') symmetric = 1;
        else if (c == 'a') {
            long v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 0 || v >= CLRUN_MAX_DIMS)
                return cli_usage_error(sub, "--axis wants 0 to %d, not '%s'", CLRUN_MAX_DIMS - 1, optarg);
            axis = (int)v;
        } else if (c == 'p') {
            percentile = strtod(optarg, &end), percentile_given = 1;
            if (!*optarg || *end || !(percentile > 0 && percentile <= 100))
                return cli_usage_error(sub, "--percentile wants 0 < P <= 100, not '%s'", optarg);
        }
    }
    if (argc - optind != 1) return cli_usage_error(sub, "one input file, please (%d given)", argc - optind);
    if (!out) return cli_usage_error(sub, "no output (-o OUT.npy)");
    if (!quantize && calibrate) return cli_usage_error(sub, "--calibrate is for quantize; dequantize needs the --scale it used");
    if (calibrate == !!scales) return cli_usage_error(sub, quantize ? "give --scale or --calibrate (one of them)" : "--scale is needed");
    if (!calibrate && (symmetric || percentile_given))
        return cli_usage_error(sub, "--symmetric and --percentile shape --calibrate's range; with --scale they would be ignored");
    if (calibrate && zps) return cli_usage_error(sub, "--calibrate finds the zero points itself; --zero-point goes with --scale");
    clrun_array in = {0}, res = {0};
    if (clrun_npy_read(argv[optind], &in)) return fprintf(stderr, "clrun %s: %s\n", sub, clrun_last_error(NULL)), EXIT_USAGE;
    int rc = 0;
    const clrun_dtype want = quantize ? CLRUN_F32 : CLRUN_I8;
    if (in.dtype != want)
        rc = cli_usage_error(sub, "the input is %s; %s takes %s", clrun_dtype_name(in.dtype), sub + 3, clrun_dtype_name(want));
    if (!rc && axis >= (int)in.ndim) rc = cli_usage_error(sub, "--axis %d, but the array has %u dimensions", axis, in.ndim);
    size_t ch = 1, inner = 1;
    if (!rc && axis >= 0) {
        ch = in.shape[axis];
        for (unsigned d = (unsigned)axis + 1; d < in.ndim; d++) inner *= in.shape[d];
    }
    float *s = calloc(ch ? ch : 1, sizeof *s);
    int32_t *z = calloc(ch ? ch : 1, sizeof *z);
    double *v = calloc(ch ? ch : 1, sizeof *v);
    if (!rc && (!s || !z || !v)) rc = (fprintf(stderr, "clrun %s: out of host memory\n", sub), EXIT_RUNTIME);
    if (!rc && scales) {
        long ns = list(scales, v, (long)ch);
        if (ns != (long)ch) rc = cli_usage_error(sub, "--scale wants %zu number%s here, not '%s'", ch, ch == 1 ? "" : "s", scales);
        for (size_t i = 0; !rc && i < ch; i++) s[i] = (float)v[i];
        if (!rc && zps) {
            long nz = list(zps, v, (long)ch);
            if (nz != (long)ch) rc = cli_usage_error(sub, "--zero-point wants %zu number%s here, not '%s'", ch, ch == 1 ? "" : "s", zps);
            for (size_t i = 0; !rc && i < ch; i++) {
                if (v[i] != floor(v[i]) || v[i] < -128 || v[i] > 127)
                    rc = cli_usage_error(sub, "zero points are integers from -128 to 127");
                z[i] = (int32_t)v[i];
            }
        }
    }
    if (!rc && calibrate && !in.count)
        rc =
            cli_usage_error(sub, "%s has no elements: there is no range to calibrate from (give --scale for an empty array)", argv[optind]);
    if (!rc && calibrate && in.count) {
        clrun_status st = clrun_quant_calibrate(in.data, in.count, axis >= 0 ? ch : 1, inner, symmetric, percentile, s, z);
        if (st) rc = cli_fail(sub, NULL, st);
    }
    const clrun_qparams p = {axis >= 0 ? ch : 1, inner, s, z};
    clrun_ctx *ctx = NULL;
    clrun_buf *bi = NULL, *bo = NULL;
    clrun_status st = CLRUN_OK;
    if (!rc && clrun_array_new(&res, quantize ? CLRUN_I8 : CLRUN_F32, in.ndim, in.shape))
        rc = cli_fail(sub, NULL, CLRUN_HOST_OUT_OF_MEMORY);
    if (!rc) rc = cli_open(sub, spec, &ctx);
    if (!rc && in.count) {
        if ((st = clrun_buf_new(ctx, in.bytes, 0, &bi)) || (st = clrun_upload(bi, 0, in.data, in.bytes)) ||
            (st = clrun_buf_new(ctx, res.bytes, 0, &bo)) ||
            (st = quantize ? clrun_quantize(ctx, bi, 0, bo, 0, in.count, &p) : clrun_dequantize(ctx, bi, 0, bo, 0, in.count, &p)) ||
            (st = clrun_download(bo, 0, res.data, res.bytes)))
            rc = st == CLRUN_INVALID_ARG ? (fprintf(stderr, "clrun %s: %s\n", sub, clrun_last_error(ctx)), EXIT_USAGE)
                                         : cli_fail(sub, ctx, st);
    }
    if (!rc && clrun_npy_write(out, &res)) rc = cli_fail(sub, NULL, CLRUN_IO_ERROR);
    if (!rc && cli_json_mode) { /* {"op", "output", "dtype", "shape"}, and for quantize "scale", "zero_point", "axis" */
        json_t *rec = cli_json_wrote(quantize ? "quantize" : "dequantize", out, &res);
        if (quantize) {
            json_t *js = json_array(), *jz = json_array();
            for (size_t i = 0; i < ch; i++) json_array_append_new(js, json_real(s[i])), json_array_append_new(jz, json_integer(z[i]));
            json_object_update_new(
                rec, json_pack("{s:o, s:o, s:o}", "scale", js, "zero_point", jz, "axis", axis >= 0 ? json_integer(axis) : json_null()));
        }
        cli_json_emit(cli_notes(out), rec);
    } else if (!rc) {
        FILE *f = cli_notes(out);
        fprintf(f, "wrote %s (%s, %zu elements)", out, clrun_dtype_name(res.dtype), res.count);
        if (quantize) { /* the parameters, as dequantize takes them back */
            fprintf(f, "; --scale ");
            for (size_t i = 0; i < ch; i++) fprintf(f, "%s%.9g", i ? "," : "", (double)s[i]);
            fprintf(f, " --zero-point ");
            for (size_t i = 0; i < ch; i++) fprintf(f, "%s%d", i ? "," : "", (int)z[i]);
            if (axis >= 0) fprintf(f, " --axis %d", axis);
        }
        fprintf(f, "\n");
    }
    clrun_buf_free(bi), clrun_buf_free(bo);
    clrun_close(ctx);
    clrun_array_free(&in), clrun_array_free(&res);
    free(s), free(z), free(v);
    return rc;
}

static int quantize(int argc, char **argv) { return cmd_op_quant(argc, argv, 1); }
static int dequantize(int argc, char **argv) { return cmd_op_quant(argc, argv, 0); }

const struct cli_cmd cli_verbs_quant[] = {
    {.name = "quantize", .what = "float32 -> int8, PyTorch's qint8 (clrun op quantize --help)", .run = quantize},
    {.name = "dequantize", .what = "int8 -> float32 (clrun op dequantize --help)", .run = dequantize},
    {0},
};
