/* cli.c — `clrun op conv2d X.npy W.npy -o Y.npy`: torch.nn.functional.conv2d of .npy files. */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char *conv2d_help =
    "usage: clrun op conv2d X.npy W.npy -o Y.npy [-b BIAS.npy] [--stride S[,S]] [--padding P[,P]] [--dilation D[,D]]\n"
    "                       [--groups G] [--nhwc] [--json] [-d SPEC]\n\n"
    "torch.nn.functional.conv2d on the device: X is N×C×H×W (with --nhwc N×H×W×C), W is K×C/G×R×S (with --nhwc\n"
    "K×R×S×C/G), BIAS has K elements; Y is N×K×P×Q (N×P×Q×K). float32 or float16 arrays, all of one type; float16\n"
    "is computed with float32 accumulation and rounded once.\n\n"
    "  -o, --output Y      the result\n"
    "  -b, --bias B        the bias (K elements)\n"
    "  --stride S[,S]      rows, columns (default 1)\n"
    "  --padding P[,P]     zeros added on each side (default 0)\n"
    "  --dilation D[,D]    the filter's spacing (default 1)\n"
    "  --groups G          channel groups (default 1; G = C = K: depthwise)\n"
    "  --nhwc              channels-last tensors\n"
    "  --json              the record {\"op\", \"output\", \"dtype\", \"shape\"} instead of the \"wrote\" line\n\n"
    "Exit codes: 0; 1 runtime failure; 2 bad command line or input (shapes that do not agree, a window larger\n"
    "than the padded input); 3 no device.\n";

/* "A" or "A,B" of non-negative ints into v[0], v[1] */
static int pair(const char *s, int v[2], int min)
{
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (end == s) return -1;
    if (*end == ',') {
        const char *t = end + 1;
        b = strtol(t, &end, 10);
        if (end == t) return -1;
    }
    if (*end || a < min || b < min || a > 1 << 20 || b > 1 << 20) return -1;
    v[0] = (int)a, v[1] = (int)b;
    return 0;
}

static clrun_status run(clrun_ctx *ctx, const clrun_conv2d_desc *d, const clrun_array *x, const clrun_array *w, const clrun_array *b,
                        clrun_array *y)
{
    clrun_buf *bx = NULL, *bw = NULL, *bb = NULL, *by = NULL;
    clrun_status st;
    if (!(st = clrun_buf_new_from(ctx, x->data, x->bytes, 0, &bx)) && !(st = clrun_buf_new_from(ctx, w->data, w->bytes, 0, &bw)) &&
        (!b || !(st = clrun_buf_new_from(ctx, b->data, b->bytes, 0, &bb))) && !(st = clrun_buf_new(ctx, y->bytes, 0, &by)) &&
        !(st = clrun_conv2d_forward(ctx, d, bx, bw, bb, by)))
        st = clrun_download(by, 0, y->data, y->bytes);
    clrun_buf_free(bx), clrun_buf_free(bw), clrun_buf_free(bb), clrun_buf_free(by);
    return st;
}

static int cmd_op_conv2d(int argc, char **argv)
{
    const char *spec = NULL, *out = NULL, *bias = NULL;
    int stride[2] = {1, 1}, pad[2] = {0, 0}, dil[2] = {1, 1}, groups = 1, nhwc = 0;
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"device", required_argument, NULL, 'd'},
                                         {"bias", required_argument, NULL, 'b'},
                                         {"stride", required_argument, NULL, 'S'},
                                         {"padding", required_argument, NULL, 'P'},
                                         {"dilation", required_argument, NULL, 'D'},
                                         {"groups", required_argument, NULL, 'G'},
                                         {"nhwc", no_argument, NULL, 'n'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    struct cli_opts opt = {.sub = "op conv2d", .help = conv2d_help, .first = 2};
    int c;
    while ((c = cli_next_opt(&opt, argc, argv, "o:d:b:h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        if (c == 'o') out = optarg;
        else if (c == 'd') spec = optarg;
        else if (c == 'b') bias = optarg;
        else if (c == 'n') nhwc = 1;
        else if (c == 'S' && pair(optarg, stride, 1))
            return cli_usage_error("op conv2d", "--stride wants S or S,S (1 or more), not '%s'", optarg);
        else if (c == 'P' && pair(optarg, pad, 0))
            return cli_usage_error("op conv2d", "--padding wants P or P,P (0 or more), not '%s'", optarg);
        else if (c == 'D' && pair(optarg, dil, 1))
            return cli_usage_error("op conv2d", "--dilation wants D or D,D (1 or more), not '%s'", optarg);
        else if (c == 'G') {
            int g[2];
            if (pair(optarg, g, 1) || g[0] != g[1])
                return cli_usage_error("op conv2d", "--groups wants a count of 1 or more, not '%s'", optarg);
            groups = g[0];
        }
    }
    if (argc - optind != 2) return cli_usage_error("op conv2d", "conv2d takes two input files (X.npy W.npy)");
    if (!out) return cli_usage_error("op conv2d", "no output file (-o Y.npy)");
    clrun_array x = {0}, w = {0}, b = {0}, y = {0};
    clrun_status st = clrun_npy_read(argv[optind], &x);
    if (!st) st = clrun_npy_read(argv[optind + 1], &w);
    if (!st && bias) st = clrun_npy_read(bias, &b);
    if (st) {
        clrun_array_free(&x), clrun_array_free(&w);
        return fprintf(stderr, "clrun op conv2d: %s\n", clrun_last_error(NULL)), cli_exit_code(st);
    }
    int rc = 0;
    if (x.ndim != 4 || w.ndim != 4) rc = cli_usage_error("op conv2d", "X and W are 4-D (they have %u and %u dimensions)", x.ndim, w.ndim);
    else if ((x.dtype != CLRUN_F32 && x.dtype != CLRUN_F16) || w.dtype != x.dtype || (bias && b.dtype != x.dtype))
        rc = cli_usage_error("op conv2d", "the arrays are all float32 or all float16 (X is %s, W %s)", clrun_dtype_name(x.dtype),
                             clrun_dtype_name(w.dtype));
    else if (x.count == 0 || w.count == 0) rc = cli_usage_error("op conv2d", "X or W is empty");
    for (unsigned k = 0; !rc && k < 4; k++)
        if (x.shape[k] > 1u << 30 || w.shape[k] > 1u << 30) rc = cli_usage_error("op conv2d", "a dimension of 2^30 or more");
    clrun_conv2d_desc d = {0};
    if (!rc) {
        const size_t *xs = x.shape, *ws = w.shape;
        d = (clrun_conv2d_desc){
            .x = {nhwc ? CLRUN_NHWC : CLRUN_NCHW, x.dtype, (int)xs[0], (int)xs[nhwc ? 3 : 1], (int)xs[nhwc ? 1 : 2], (int)xs[nhwc ? 2 : 3]},
            .k = (int)ws[0],
            .r = (int)ws[nhwc ? 1 : 2],
            .s = (int)ws[nhwc ? 2 : 3],
            .stride_h = stride[0],
            .stride_w = stride[1],
            .pad_h = pad[0],
            .pad_w = pad[1],
            .dilation_h = dil[0],
            .dilation_w = dil[1],
            .groups = groups};
        const size_t wc = ws[nhwc ? 3 : 1];
        if ((size_t)d.x.c != wc * (size_t)groups)
            rc =
                cli_usage_error("op conv2d", "X has %d channels; W's %zu per group times %d groups is %zu", d.x.c, wc, groups, wc * groups);
        else if (bias && b.count != (size_t)d.k) rc = cli_usage_error("op conv2d", "BIAS has %zu elements; W has %d filters", b.count, d.k);
    }
    clrun_ctx *ctx = NULL;
    clrun_tensor4 yt;
    if (!rc && (st = clrun_conv2d_shape(NULL, &d, &yt))) rc = cli_usage_error("op conv2d", "%s", clrun_last_error(NULL));
    if (!rc) {
        const size_t shape[4] = {(size_t)yt.n, (size_t)(nhwc ? yt.h : yt.c), (size_t)(nhwc ? yt.w : yt.h), (size_t)(nhwc ? yt.c : yt.w)};
        if ((st = clrun_array_new(&y, x.dtype, 4, shape))) rc = cli_fail("op conv2d", NULL, st);
    }
    if (!rc) rc = cli_open("op conv2d", spec, &ctx);
    if (!rc && (st = run(ctx, &d, &x, &w, bias ? &b : NULL, &y))) rc = cli_op_fail("conv2d", ctx, st);
    if (!rc && (st = clrun_npy_write(out, &y))) rc = (fprintf(stderr, "clrun op conv2d: %s\n", clrun_last_error(NULL)), cli_exit_code(st));
    if (!rc) {
        if (cli_json_mode) cli_json_emit(cli_notes(out), cli_json_wrote("conv2d", out, &y));
        else fprintf(cli_notes(out), "wrote %s (%s conv2d, %dx%d filters, %d groups)\n", out, clrun_dtype_name(x.dtype), d.r, d.s, groups);
    }
    clrun_array_free(&x), clrun_array_free(&w), clrun_array_free(&b), clrun_array_free(&y);
    clrun_close(ctx);
    return rc;
}

const struct cli_cmd cli_verbs_conv[] = {
    {.name = "conv2d", .what = "torch.nn.functional.conv2d: stride, padding, dilation, groups, bias; NCHW or NHWC", .run = cmd_op_conv2d},
    {0},
};
