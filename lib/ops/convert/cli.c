/* cli.c — `clrun op cast IN.npy --to f16|bf16|f32 -o OUT.npy`. */
#include "cli.h"

#include <getopt.h>
#include <string.h>

static const char *cast_help =
    "usage: clrun op cast IN.npy --to f16|bf16|f32 -o OUT.npy [--json] [-d SPEC]\n\n"
    "Converts on the device, rounding to nearest even: float32 to float16 (IEEE binary16; |x| >= 65520\n"
    "becomes inf, NaN stays NaN) or to bfloat16 (any NaN becomes 0x7FC0, as PyTorch), and back to\n"
    "float32. NumPy has no bfloat16: bf16 data is stored as uint16 .npy (the top half of each float32\n"
    "pattern), and a uint16 input to --to f32 is read as bf16. The shape is kept.\n\n"
    "  --json    the record {\"op\", \"output\", \"dtype\", \"shape\"} instead of the \"wrote\" line (a failure:\n"
    "            {\"error\": {\"exit\", \"meaning\", \"message\"}})\n\n"
    "Exit codes: 0; 1 runtime failure; 2 bad command line or input file; 3 no device; 4 kernel build failure; 6 timeout.\n";

/* `clrun op cast`: argv[1] is "cast". */
static int cmd_op_cast(int argc, char **argv)
{
    const char *spec = NULL, *out = NULL, *to = NULL;
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'}, {"device", required_argument, NULL, 'd'},
                                         {"to", required_argument, NULL, 't'},     {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},         {0}};
    int c;
    struct cli_opts opt = {.sub = "op cast", .help = cast_help, .first = 2};
    while ((c = cli_next_opt(&opt, argc, argv, "o:d:h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        if (c == 'o') out = optarg;
        else if (c == 'd') spec = optarg;
        else if (c == 't') to = optarg;
    }
    if (argc - optind != 1) return cli_usage_error("op cast", "cast takes one input file, %d given", argc - optind);
    if (!to) return cli_usage_error("op cast", "no target type (--to f16, bf16 or f32)");
    if (!out) return cli_usage_error("op cast", "no output file (-o OUT.npy)");
    clrun_dtype tt;
    if (!strcmp(to, "f16") || !strcmp(to, "float16")) tt = CLRUN_F16;
    else if (!strcmp(to, "bf16") || !strcmp(to, "bfloat16")) tt = CLRUN_BF16;
    else if (!strcmp(to, "f32") || !strcmp(to, "float32")) tt = CLRUN_F32;
    else return cli_usage_error("op cast", "--to wants f16, bf16 or f32, not '%s'", to);
    clrun_array in = {0}, res = {0};
    if (clrun_npy_read(argv[optind], &in) != CLRUN_OK) {
        fprintf(stderr, "clrun op cast: %s\n", clrun_last_error(NULL));
        return EXIT_USAGE;
    }
    const clrun_dtype ft = in.dtype == CLRUN_U16 ? CLRUN_BF16 : in.dtype; /* .npy carries bf16 as uint16 */
    if ((in.dtype != CLRUN_F32 && in.dtype != CLRUN_F16 && in.dtype != CLRUN_U16) || (ft == CLRUN_F32) == (tt == CLRUN_F32)) {
        const clrun_dtype have = in.dtype; /* clrun_array_free clears it */
        clrun_array_free(&in);
        return cli_usage_error("op cast", "%s converts float32 to f16 or bf16, and float16 or uint16 (bf16) to f32; the input is %s",
                               argv[optind], clrun_dtype_name(have));
    }
    clrun_ctx *ctx = NULL;
    clrun_buf *a = NULL, *b = NULL;
    clrun_status st = CLRUN_OK;
    int rc = cli_open("op cast", spec, &ctx);
    if (!rc && (st = clrun_array_new(&res, tt == CLRUN_BF16 ? CLRUN_U16 : tt, in.ndim, in.shape))) rc = cli_fail("op cast", NULL, st);
    if (!rc && in.count &&
        ((st = clrun_buf_new(ctx, in.bytes, 0, &a)) || (st = clrun_buf_new(ctx, res.bytes, 0, &b)) ||
         (st = clrun_upload(a, 0, in.data, in.bytes)) || (st = clrun_cast(ctx, a, 0, ft, b, 0, tt, in.count)) ||
         (st = clrun_download(b, 0, res.data, res.bytes))))
        rc = cli_fail("op cast", ctx, st);
    if (!rc && (st = clrun_npy_write(out, &res))) rc = (fprintf(stderr, "clrun op cast: %s\n", clrun_last_error(NULL)), cli_exit_code(st));
    if (!rc && cli_json_mode) cli_json_emit(cli_notes(out), cli_json_wrote("cast", out, &res));
    else if (!rc) fprintf(cli_notes(out), "wrote %s\n", out);
    clrun_buf_free(a), clrun_buf_free(b);
    clrun_array_free(&in), clrun_array_free(&res);
    clrun_close(ctx);
    return rc;
}

const struct cli_cmd cli_verbs_convert[] = {
    {.name = "cast", .what = "float32 <-> float16 / bfloat16 (--to; clrun op cast --help; name it first)", .run = cmd_op_cast},
    {0},
};
