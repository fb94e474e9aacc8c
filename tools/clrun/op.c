/* op.c — `clrun op NAME IN.npy... -o OUT.npy`: the kernel library's ops on NumPy files. */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

struct op {
    const char *name, *what;
    int (*fn)(clrun_ctx *ctx, clrun_array *in, int nin, const char *out);
    int nin;
};

/* dst = a * b, element-wise, f32 (cl/vector.cl). */
static int op_mul(clrun_ctx *ctx, clrun_array *in, int nin, const char *out)
{
    (void)nin;
    clrun_array r = {0};
    clrun_prog *p = NULL;
    clrun_kernel *k = NULL;
    clrun_buf *ba = NULL, *bb = NULL, *bd = NULL;
    clrun_status st;
    int rc = EXIT_OK;
    for (int i = 0; i < 2; i++)
        if (in[i].dtype != CLRUN_F32) {
            fprintf(stderr, "clrun op mul: input %d is %s; mul takes float32 arrays\n", i + 1, clrun_dtype_name(in[i].dtype));
            return EXIT_USAGE;
        }
    if (in[0].count != in[1].count || in[0].ndim != in[1].ndim || memcmp(in[0].shape, in[1].shape, sizeof in[0].shape) != 0) {
        fprintf(stderr, "clrun op mul: the inputs' shapes differ (%zu and %zu elements)\n", in[0].count, in[1].count);
        return EXIT_USAGE;
    }
    if (clrun_array_new(&r, CLRUN_F32, in[0].ndim, in[0].shape) != CLRUN_OK) return cli_fail("op", NULL, CLRUN_HOST_OUT_OF_MEMORY);
    size_t n = in[0].count;
    if (n > 0) {
        size_t bytes = n * 4;
        if ((st = clrun_prog_builtin(ctx, "vector", NULL, &p)) || (st = clrun_kernel_new(p, "clrun_mul_f32", &k)) ||
            (st = clrun_buf_new(ctx, bytes, 0, &ba)) || (st = clrun_buf_new(ctx, bytes, 0, &bb)) ||
            (st = clrun_buf_new(ctx, bytes, 0, &bd)) || (st = clrun_upload(ba, 0, in[0].data, bytes)) ||
            (st = clrun_upload(bb, 0, in[1].data, bytes)) || (st = clrun_arg_buf(k, 0, bd)) || (st = clrun_arg_buf(k, 1, ba)) ||
            (st = clrun_arg_buf(k, 2, bb)) || (st = clrun_arg_u64(k, 3, n)) || (st = clrun_launch(k, 1, &n, NULL)) ||
            (st = clrun_download(bd, 0, r.data, bytes))) {
            rc = cli_fail("op", ctx, st);
            goto done;
        }
    }
    if (clrun_npy_write(out, &r) != CLRUN_OK) rc = cli_fail("op", NULL, CLRUN_IO_ERROR);
    else printf("wrote %s (f32, %zu elements)\n", out, n);
done:
    clrun_buf_free(ba);
    clrun_buf_free(bb);
    clrun_buf_free(bd);
    clrun_kernel_free(k);
    clrun_prog_free(p);
    clrun_array_free(&r);
    return rc;
}

static const struct op ops[] = {
    {"mul", "element-wise product of two float32 arrays of one shape", op_mul, 2},
};

static void list_ops(FILE *f)
{
    fprintf(f, "ops:\n");
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) fprintf(f, "  %-8s %s\n", ops[i].name, ops[i].what);
}

static const char *op_help =
    "usage: clrun op NAME IN.npy... -o OUT.npy [-d SPEC]\n\n"
    "Runs one of the kernel library's ops on NumPy files.\n\n"
    "  -o, --output FILE   where the result goes (.npy)\n"
    "  -d, --device SPEC   device (default: $CLRUN_DEVICE, else the best)\n"
    "  --help              this text\n\n"
    "Exit codes: 0; 1 runtime failure; 2 bad command line or input file; 3 no device.\n\n";

int cmd_op(int argc, char **argv)
{
    const char *out = NULL, *spec = NULL;
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'}, {"device", required_argument, NULL, 'd'},
                                         {"help", no_argument, NULL, 'h'}, {0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:d:h", opts, NULL)) != -1) {
        if (c == 'o') out = optarg;
        else if (c == 'd') spec = optarg;
        else if (c == 'h') {
            fputs(op_help, stdout);
            list_ops(stdout);
            return EXIT_OK;
        } else if (optopt) return cli_usage_error("op", "option -%c needs a value", optopt);
        else return cli_usage_error("op", "unknown option '%s'", argv[optind - 1]);
    }
    if (optind >= argc) {
        fprintf(stderr, "clrun op: which op?\n");
        list_ops(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[optind++];
    const struct op *op = NULL;
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (strcmp(ops[i].name, name) == 0) op = &ops[i];
    if (!op) {
        fprintf(stderr, "clrun op: unknown op '%s'\n", name);
        list_ops(stderr);
        return EXIT_USAGE;
    }
    int nin = argc - optind;
    if (nin != op->nin) return cli_usage_error("op", "%s takes %d input file%s, %d given", name, op->nin, op->nin == 1 ? "" : "s", nin);
    if (!out) return cli_usage_error("op", "no output file (-o OUT.npy)");
    clrun_array in[4];
    memset(in, 0, sizeof in);
    int rc = 0;
    for (int i = 0; i < nin && !rc; i++)
        if (clrun_npy_read(argv[optind + i], &in[i]) != CLRUN_OK) rc = (fprintf(stderr, "clrun op %s: %s\n", name, clrun_last_error(NULL)), EXIT_USAGE);
    clrun_ctx *ctx = NULL;
    if (!rc) rc = cli_open("op", spec, &ctx);
    if (!rc) rc = op->fn(ctx, in, nin, out);
    for (int i = 0; i < nin; i++) clrun_array_free(&in[i]);
    clrun_close(ctx);
    return rc;
}
