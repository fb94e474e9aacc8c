/* demo.c — `clrun demo`: the seed examples on the default device, each checked against the CPU. */
#include "cli.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The seed's PyCUDA kernel, as a string like its SourceModule. */
static const char multiply_src[] =
    "__kernel void multiply_them(__global float *dest, __global const float *a, __global const float *b)\n"
    "{ const size_t i = get_global_id(0); dest[i] = a[i] * b[i]; }\n";

static int demo_multiply(clrun_ctx *ctx)
{
    enum { N = 400 };
    float a[N], b[N], d[N];
    clrun_prog *p = NULL;
    clrun_kernel *k = NULL;
    clrun_buf *bd = NULL, *ba = NULL, *bb = NULL;
    clrun_event *ev = NULL;
    clrun_status st;
    int rc = EXIT_OK;
    srand((unsigned)time(NULL));
    for (int i = 0; i < N; i++) a[i] = (float)(rand() / (RAND_MAX + 1.0) - 0.5), b[i] = (float)(rand() / (RAND_MAX + 1.0) - 0.5), d[i] = NAN;
    double t0 = cli_now();
    size_t g = N, l = N, bytes = sizeof a;
    if ((st = clrun_prog_source(ctx, multiply_src, "multiply", NULL, &p)) || (st = clrun_kernel_new(p, "multiply_them", &k)) ||
        (st = clrun_buf_new(ctx, bytes, 0, &bd)) || (st = clrun_buf_new(ctx, bytes, 0, &ba)) ||
        (st = clrun_buf_new(ctx, bytes, 0, &bb)) || (st = clrun_upload(ba, 0, a, bytes)) || (st = clrun_upload(bb, 0, b, bytes)) ||
        (st = clrun_arg_buf(k, 0, bd)) || (st = clrun_arg_buf(k, 1, ba)) || (st = clrun_arg_buf(k, 2, bb)) ||
        (st = clrun_launch_ev(k, 1, &g, &l, &ev)) || (st = clrun_download(bd, 0, d, bytes))) {
        rc = cli_fail("demo", ctx, st);
        goto done;
    }
    double total = (cli_now() - t0) * 1e3;
    int bad = 0;
    for (int i = 0; i < N; i++) bad += d[i] != a[i] * b[i];
    printf("multiply   dest = a * b, 400 floats (the seed's PyCUDA example): %s; kernel %.3f ms, "
           "build + transfers + launch %.1f ms%s\n",
           bad ? "MISMATCH" : "matches the CPU", clrun_event_ms(ev), total, clrun_prog_from_cache(p) ? " (cached binary)" : "");
    if (bad) rc = EXIT_RUNTIME;
done:
    clrun_event_free(ev);
    clrun_buf_free(bd);
    clrun_buf_free(ba);
    clrun_buf_free(bb);
    clrun_kernel_free(k);
    clrun_prog_free(p);
    return rc;
}

static const char *demo_help =
    "usage: clrun demo [-d SPEC]\n\n"
    "Shows the device and runs the seed examples on it, each checked against a CPU reference, with\n"
    "timings: the PyCUDA-style vector multiply.\n\n"
    "  -d, --device SPEC   device (default: $CLRUN_DEVICE, else the best)\n"
    "  --help              this text\n\n"
    "Exit codes: 0 all examples match; 1 a mismatch or runtime failure; 3 no device; 4 build failure.\n";

int cmd_demo(int argc, char **argv)
{
    const char *spec = NULL;
    static const struct option opts[] = {{"device", required_argument, NULL, 'd'}, {"help", no_argument, NULL, 'h'}, {0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "d:h", opts, NULL)) != -1) {
        if (c == 'd') spec = optarg;
        else if (c == 'h') return fputs(demo_help, stdout), EXIT_OK;
        else if (optopt) return cli_usage_error("demo", "option -%c needs a value", optopt);
        else return cli_usage_error("demo", "unknown option '%s'", argv[optind - 1]);
    }
    if (optind < argc) return cli_usage_error("demo", "unexpected argument '%s'", argv[optind]);
    clrun_ctx *ctx = NULL;
    int rc = cli_open("demo", spec, &ctx);
    if (rc) return rc;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    printf("device     %u:%u %s (%s, %s)\n", in->platform_index, in->device_index, in->name, cli_type_name(in->type), in->platform_name);
    rc = demo_multiply(ctx);
    clrun_close(ctx);
    return rc;
}
