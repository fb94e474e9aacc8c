/* cli.c — `clrun op rand --seed S --shape N[,M...] --dist D [--dtype T] [...] -o OUT.npy`. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *rand_help =
    "usage: clrun op rand --seed S --shape N[,M...] [--dist uniform|normal|integers|bernoulli|bits] [--dtype T]\n"
    "                     [--low A --high B] [--mean M --std S] [--p P] [--subsequence U] [--offset W]\n"
    "                     -o OUT.npy [--json] [-d SPEC]\n\n"
    "Random numbers on the device from Philox4x32-10 (Random123), laid out as cuRAND's Philox4_32_10:\n"
    "the same seed, subsequence and offset give the same values on every OpenCL implementation (the\n"
    "normal distribution within a few ulps: it uses the device's log, sin, cos).\n\n"
    "  --seed S         the key, 0 to 2^64 - 1 (required)\n"
    "  --shape N,M...   the output's shape (required)\n"
    "  --dist D         uniform (default; [low, high), default [0, 1)), normal (--mean, --std; default 0, 1),\n"
    "                   integers ([low, high); default [0, 2^31)), bernoulli (--p; default 0.5), bits (uint32 words)\n"
    "  --dtype T        float32 (default for uniform and normal), float16, bfloat16 (stored as uint16), float64;\n"
    "                   int64 (default for integers), int32, uint32, uint64; uint8 or bool (bernoulli)\n"
    "  --subsequence U  an independent stream of the seed (default 0)\n"
    "  --offset W       the first word of the stream to use (default 0)\n"
    "  --json           the record {\"op\", \"output\", \"dtype\", \"shape\", \"next_offset\"} instead of the \"wrote\" line\n\n"
    "Exit codes: 0; 1 runtime failure; 2 bad command line; 3 no device; 4 kernel build failure; 6 timeout.\n";

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-') return 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno || *end) return 0;
    *v = (uint64_t)x;
    return 1;
}

static int parse_f64(const char *s, double *v)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || *end || end == s || !isfinite(x)) return 0;
    *v = x;
    return 1;
}

static int parse_i64(const char *s, int64_t *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 0);
    if (errno || *end || end == s) return 0;
    *v = (int64_t)x;
    return 1;
}

/* N[,M...] into shape; 0 when malformed */
static int parse_shape(const char *s, clrun_array *a)
{
    unsigned nd = 0;
    size_t count = 1;
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        if (*p == '-' || nd == CLRUN_MAX_DIMS) return 0;
        unsigned long long d = strtoull(p, &end, 10);
        if (errno || end == p || (*end && *end != ',') || d > ((size_t)1 << 40)) return 0;
        if (d && count > ((size_t)1 << 40) / d) return 0;
        a->shape[nd++] = (size_t)d, count *= (size_t)d;
        p = *end ? end + 1 : end;
        if (*end == ',' && !*p) return 0;
    }
    a->ndim = nd;
    return nd > 0;
}

static int cmd_op_rand(int argc, char **argv)
{
    const char *spec = NULL, *out = NULL, *dist = "uniform", *dtype = NULL, *shape = NULL;
    const char *seed_s = NULL, *sub_s = NULL, *off_s = NULL, *low_s = NULL, *high_s = NULL, *mean_s = NULL, *std_s = NULL, *p_s = NULL;
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'}, {"device", required_argument, NULL, 'd'},
                                         {"seed", required_argument, NULL, 's'},   {"shape", required_argument, NULL, 'S'},
                                         {"dist", required_argument, NULL, 'D'},   {"dtype", required_argument, NULL, 't'},
                                         {"low", required_argument, NULL, 'l'},    {"high", required_argument, NULL, 'H'},
                                         {"mean", required_argument, NULL, 'm'},   {"std", required_argument, NULL, 'v'},
                                         {"p", required_argument, NULL, 'p'},      {"subsequence", required_argument, NULL, 'u'},
                                         {"offset", required_argument, NULL, 'w'}, {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},         {0}};
    int c;
    struct cli_opts opt = {.sub = "op rand", .help = rand_help, .first = 2};
    while ((c = cli_next_opt(&opt, argc, argv, "o:d:h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        switch (c) {
        case 'o': out = optarg; break;
        case 'd': spec = optarg; break;
        case 's': seed_s = optarg; break;
        case 'S': shape = optarg; break;
        case 'D': dist = optarg; break;
        case 't': dtype = optarg; break;
        case 'l': low_s = optarg; break;
        case 'H': high_s = optarg; break;
        case 'm': mean_s = optarg; break;
        case 'v': std_s = optarg; break;
        case 'p': p_s = optarg; break;
        case 'u': sub_s = optarg; break;
        case 'w': off_s = optarg; break;
        default: break;
        }
    }
    if (argc - optind != 0) return cli_usage_error("op rand", "rand takes no input files ('%s' given)", argv[optind]);
    if (!out) return cli_usage_error("op rand", "no output file (-o OUT.npy)");
    uint64_t seed = 0, sub = 0, off = 0;
    if (!seed_s) return cli_usage_error("op rand", "no seed (--seed S, 0 to 2^64 - 1)");
    if (!parse_u64(seed_s, &seed)) return cli_usage_error("op rand", "--seed wants an integer from 0 to 2^64 - 1, not '%s'", seed_s);
    if (sub_s && !parse_u64(sub_s, &sub))
        return cli_usage_error("op rand", "--subsequence wants an integer from 0 to 2^64 - 1, not '%s'", sub_s);
    if (off_s && !parse_u64(off_s, &off))
        return cli_usage_error("op rand", "--offset wants an integer from 0 to 2^64 - 1, not '%s'", off_s);
    clrun_array res = {0};
    if (!shape) return cli_usage_error("op rand", "no shape (--shape N[,M...])");
    if (!parse_shape(shape, &res))
        return cli_usage_error("op rand", "--shape wants sizes like 3,4 (at most %d, each below 2^40), not '%s'", CLRUN_MAX_DIMS, shape);
    clrun_rand_dist dd;
    if (!strcmp(dist, "uniform")) dd = CLRUN_RAND_UNIFORM;
    else if (!strcmp(dist, "normal")) dd = CLRUN_RAND_NORMAL;
    else if (!strcmp(dist, "integers")) dd = CLRUN_RAND_INTEGERS;
    else if (!strcmp(dist, "bernoulli")) dd = CLRUN_RAND_BERNOULLI;
    else if (!strcmp(dist, "bits")) dd = CLRUN_RAND_BITS;
    else return cli_usage_error("op rand", "--dist wants uniform, normal, integers, bernoulli or bits, not '%s'", dist);
    clrun_dtype t = dd == CLRUN_RAND_INTEGERS    ? CLRUN_I64
                    : dd == CLRUN_RAND_BERNOULLI ? CLRUN_U8
                    : dd == CLRUN_RAND_BITS      ? CLRUN_U32
                                                 : CLRUN_F32;
    if (dtype && !strcmp(dtype, "bfloat16")) t = CLRUN_BF16;
    else if (dtype && clrun_dtype_parse(dtype, &t) != CLRUN_OK) return cli_usage_error("op rand", "--dtype: unknown type '%s'", dtype);
    clrun_rand_desc d;
    clrun_rand_desc_init(&d, seed, dd, t);
    d.subsequence = sub, d.offset = off;
    if (dd == CLRUN_RAND_UNIFORM && ((low_s && !parse_f64(low_s, &d.a)) || (high_s && !parse_f64(high_s, &d.b))))
        return cli_usage_error("op rand", "--low and --high want finite numbers");
    if (dd == CLRUN_RAND_INTEGERS && ((low_s && !parse_i64(low_s, &d.low)) || (high_s && !parse_i64(high_s, &d.high))))
        return cli_usage_error("op rand", "--low and --high want integers (64-bit) for --dist integers");
    if (dd == CLRUN_RAND_NORMAL && ((mean_s && !parse_f64(mean_s, &d.a)) || (std_s && !parse_f64(std_s, &d.b))))
        return cli_usage_error("op rand", "--mean and --std want finite numbers");
    if (dd == CLRUN_RAND_BERNOULLI && p_s && !parse_f64(p_s, &d.a)) return cli_usage_error("op rand", "--p wants a number from 0 to 1");
    if ((low_s || high_s) && dd != CLRUN_RAND_UNIFORM && dd != CLRUN_RAND_INTEGERS)
        return cli_usage_error("op rand", "--low and --high are for --dist uniform and integers");
    if ((mean_s || std_s) && dd != CLRUN_RAND_NORMAL) return cli_usage_error("op rand", "--mean and --std are for --dist normal");
    if (p_s && dd != CLRUN_RAND_BERNOULLI) return cli_usage_error("op rand", "--p is for --dist bernoulli");
    const clrun_dtype store = t == CLRUN_BF16 ? CLRUN_U16 : t; /* .npy carries bf16 as uint16 */
    size_t dims[CLRUN_MAX_DIMS];
    memcpy(dims, res.shape, sizeof dims); /* clrun_array_new clears res first */
    clrun_status st = clrun_array_new(&res, store, res.ndim, dims);
    if (st) return cli_fail("op rand", NULL, st);
    clrun_ctx *ctx = NULL;
    clrun_buf *b = NULL;
    int rc = cli_open("op rand", spec, &ctx);
    if (!rc && (st = clrun_buf_new(ctx, res.bytes ? res.bytes : 1, 0, &b))) rc = cli_fail("op rand", ctx, st);
    if (!rc && (st = clrun_rand(ctx, &d, b, 0, res.count)))
        rc = st == CLRUN_INVALID_ARG ? cli_usage_error("op rand", "%s", clrun_last_error(ctx)) : cli_fail("op rand", ctx, st);
    if (!rc && res.count && (st = clrun_download(b, 0, res.data, res.bytes))) rc = cli_fail("op rand", ctx, st);
    if (!rc && (st = clrun_npy_write(out, &res))) rc = (fprintf(stderr, "clrun op rand: %s\n", clrun_last_error(NULL)), cli_exit_code(st));
    if (!rc && cli_json_mode) {
        json_t *rec = cli_json_wrote("rand", out, &res);
        json_object_set_new(rec, "next_offset", json_integer((json_int_t)d.offset));
        cli_json_emit(cli_notes(out), rec);
    } else if (!rc) {
        fprintf(cli_notes(out), "wrote %s (%s %s, next offset %llu)\n", out, clrun_dtype_name(t), dist, (unsigned long long)d.offset);
    }
    clrun_buf_free(b);
    clrun_array_free(&res);
    clrun_close(ctx);
    return rc;
}

const struct cli_cmd cli_verbs_rand[] = {
    {.name = "rand", .what = "random numbers, Philox4x32-10 (--seed, --shape, --dist; clrun op rand --help)", .run = cmd_op_rand},
    {0},
};
