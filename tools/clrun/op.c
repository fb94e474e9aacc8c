/* op.c — `clrun op VERB ...`: the kernel library's ops from the shell. The verbs come from the op
 * folders (lib/ops/ops.def names them; lib/ops/NAME/cli.c lists an op's verbs); this file lists them,
 * dispatches, and runs the verbs on .npy files that share the options below. */
#include "cli.h"

#ifdef CLRUN_HAVE_MPI
#include <clrun_mpi.h>
#endif

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define CLRUN_OP(name, summary) extern const struct cli_cmd cli_verbs_##name[];
#include "../../lib/ops/ops.def"
#undef CLRUN_OP

/* Every op's verbs, in the order of ops.def. */
static const struct cli_cmd *const families[] = {
#define CLRUN_OP(name, summary) cli_verbs_##name,
#include "../../lib/ops/ops.def"
#undef CLRUN_OP
};
#define NFAMILIES (sizeof families / sizeof *families)

static const struct cli_cmd *find_verb(const char *name)
{
    for (size_t f = 0; f < NFAMILIES; f++)
        for (const struct cli_cmd *v = families[f]; v->name; v++)
            if (strcmp(v->name, name) == 0) return v;
    return NULL;
}

void cli_op_wrote(const struct cli_npy *c, const char *op, const clrun_array *r, const char *note)
{
    FILE *f = cli_notes(c->out);
    if (c->json) cli_json_emit(f, cli_json_wrote(op, c->out, r));
    else fprintf(f, "wrote %s (%s)\n", c->out, note);
}

int cli_op_fail(const char *name, clrun_ctx *ctx, clrun_status st)
{
    if (st == CLRUN_INVALID_ARG) return fprintf(stderr, "clrun op %s: %s\n", name, clrun_last_error(ctx)), EXIT_USAGE;
    return cli_fail("op", ctx, st);
}

int cli_op_floats(const struct cli_npy *c)
{
    const clrun_array *in = c->in;
    const clrun_dtype t = in[0].dtype;
    for (int i = 0; i < c->v->nin; i++) {
        if (in[i].dtype != CLRUN_F32 && in[i].dtype != CLRUN_F16) {
            fprintf(stderr, "clrun op %s: input %d is %s; ops take float32 or float16 arrays\n", c->v->name, i + 1,
                    clrun_dtype_name(in[i].dtype));
            return EXIT_USAGE;
        }
        if (in[i].dtype != t) {
            fprintf(stderr, "clrun op %s: the inputs mix %s and %s\n", c->v->name, clrun_dtype_name(t), clrun_dtype_name(in[i].dtype));
            return EXIT_USAGE;
        }
        if (in[0].ndim != in[i].ndim || memcmp(in[0].shape, in[i].shape, sizeof in[0].shape) != 0) {
            fprintf(stderr, "clrun op %s: the inputs' shapes differ (%zu and %zu elements)\n", c->v->name, in[0].count, in[i].count);
            return EXIT_USAGE;
        }
    }
    return EXIT_OK;
}

static void list_ops(FILE *f)
{
    fprintf(f, "ops (float32 or float16 .npy inputs; element-wise ops write -o OUT.npy of the same type and\n"
               "shape, reductions print their value; f16 data is computed in f32):\n");
    for (size_t i = 0; i < NFAMILIES; i++)
        for (const struct cli_cmd *v = families[i]; v->name; v++) fprintf(f, "  %-8s %s\n", v->name, v->what);
}

static const char *op_help =
    "usage: clrun op NAME IN.npy... [-o OUT.npy] [--alpha X] [--json] [-d SPEC | --devices GROUP]\n\n"
    "Runs one of the kernel library's ops on NumPy files.\n\n"
    "  -o, --output FILE   where an element-wise result goes (.npy)\n"
    "  --alpha X           the scalar of axpy and scale (default 1)\n"
    "  --json              reductions: print {\"op\", \"n\", \"value\"} (or \"index\"); ops that write OUT:\n"
    "                      {\"op\", \"output\", \"dtype\", \"shape\"} instead of the \"wrote\" line\n"
    "  --ta, --tb          gemm: use A, B transposed\n"
    "  --beta Y -c C0.npy  gemm: add Y times C0 (default beta 0, and then C0 is not needed)\n"
    "  --backend NAME      gemm (float, int8 and --meta products): auto (default: the tensor cores where\n"
    "                      they are, else for f32 the tuning file's fastest, see clrun tune), kernel\n"
    "                      (clrun's kernel for the device), gpu-kernel (the GPU-shaped kernels),\n"
    "                      cpu-kernel (the CPU-shaped ones), clblast (f32 only), tensor (NVIDIA tensor\n"
    "                      cores: the first of wgmma and mma.sync that runs here), wgmma (Hopper; f16,\n"
    "                      bf16, int8), mma.sync (f16, bf16, int8, 2:4, and 3xTF32 for f32)\n"
    "  --bf16              gemm: A and B are uint16 arrays of bf16 patterns (as clrun op cast writes)\n"
    "                      gemm on int8 arrays: exact int32 results (clrun_gemm_s8), or with\n"
    "  --scale-a F.npy     f32: each row i of op(A) times F[i] (M float32 scales) ...\n"
    "  --scale-b F.npy     ... and each column j of op(B) times F[j] (N scales): an INT8 linear layer\n"
    "  --meta META.npy     gemm: A is 2:4 compressed values with this metadata (clrun op sparsify)\n"
    "  --fast              gemm: one running sum per element (as a plain loop, a few % faster) instead\n"
    "                      of per-slice partial sums (about 3x more accurate)\n"
    "  -d, --device SPEC   device (default: $CLRUN_DEVICE, else the best)\n"
    "  --devices GROUP     split over a group of devices (all, gpu, cpu, or selection strings 0,2; default\n"
    "                      $CLRUN_DEVICES) by each device's measured speed: gemm in blocks of 128 rows of C\n"
    "                      (bit-identical to one device on devices of one kind); element-wise ops and\n"
    "                      reductions in ranges of 4096 elements (element-wise: bit-identical; sums:\n"
    "                      combined in double, the same error bound)\n"
    "  --timeout S         end the command (exit 6) when it runs past S seconds (default 600, 0: none)\n"
    "  --verbs             the ops' names, one per line (shell completion asks it), as the list below\n"
    "  --help              this text\n\n"
    "Exit codes: 0; 1 runtime failure; 2 bad command line or input file; 3 no device; 4 kernel build failure; 6 timeout.\n\n";

int cmd_op(int argc, char **argv)
{
    const struct cli_cmd *verb = argc > 1 ? find_verb(argv[1]) : NULL;
    if (verb && verb->run) return verb->run(argc, argv); /* a verb with options of its own: name it first */
    if (argc > 1 && strcmp(argv[1], "--verbs") == 0) {   /* for the shell's completion */
        for (size_t i = 0; i < NFAMILIES; i++)
            for (const struct cli_cmd *v = families[i]; v->name; v++) printf("%s\n", v->name);
        return EXIT_OK;
    }
    const char *spec = NULL, *devices = NULL;
    struct cli_npy g = {.alpha = 1.0f, .backend = CLRUN_GEMM_AUTO};
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"device", required_argument, NULL, 'd'},
                                         {"alpha", required_argument, NULL, 'a'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"ta", no_argument, NULL, 'T'},
                                         {"tb", no_argument, NULL, 'U'},
                                         {"beta", required_argument, NULL, 'B'},
                                         {"backend", required_argument, NULL, 'K'},
                                         {"fast", no_argument, NULL, 'F'},
                                         {"bf16", no_argument, NULL, 'H'},
                                         {"devices", required_argument, NULL, 'G'},
                                         {"scale-a", required_argument, NULL, 'X'},
                                         {"scale-b", required_argument, NULL, 'Y'},
                                         {"meta", required_argument, NULL, 'M'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    int c;
    struct cli_opts opt = {.sub = "op", .help = NULL, .first = 1};
    while ((c = cli_next_opt(&opt, argc, argv, "o:d:c:h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        char *end = NULL;
        if (c == 'o') g.out = optarg;
        else if (c == 'j') g.json = 1;
        else if (c == 'T') g.ta = 1;
        else if (c == 'U') g.tb = 1;
        else if (c == 'c') g.c0 = optarg;
        else if (c == 'F') g.fast = 1;
        else if (c == 'H') g.bf16 = 1;
        else if (c == 'B') {
            g.beta = strtof(optarg, &end);
            if (!*optarg || *end) return cli_usage_error("op", "--beta wants a number, not '%s'", optarg);
        } else if (c == 'K') {
            if (clrun_gemm_backend_parse(optarg, &g.backend) != CLRUN_OK)
                return cli_usage_error("op", "--backend wants one of the names in --help, not '%s' (%s)", optarg, clrun_last_error(NULL));
        } else if (c == 'a') {
            g.alpha = strtof(optarg, &end);
            if (!*optarg || *end) return cli_usage_error("op", "--alpha wants a number, not '%s'", optarg);
        } else if (c == 'd') spec = optarg;
        else if (c == 'G') devices = optarg;
        else if (c == 'X') g.scale_a = optarg;
        else if (c == 'Y') g.scale_b = optarg;
        else if (c == 'M') g.meta = optarg;
        else if (c == 'h') {
            fputs(op_help, stdout);
            list_ops(stdout);
            return EXIT_OK;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "clrun op: which op?\n");
        list_ops(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[optind++];
    const struct cli_cmd *op = find_verb(name);
    if (!op || op->run) {
        fprintf(stderr, "clrun op: unknown op '%s'\n", name);
        list_ops(stderr);
        return EXIT_USAGE;
    }
    int nin = argc - optind;
    if (nin != op->nin) return cli_usage_error("op", "%s takes %d input file%s, %d given", name, op->nin, op->nin == 1 ? "" : "s", nin);
    if (!op->prints && !g.out) return cli_usage_error("op", "no output file (-o OUT.npy)");
    if (op->prints && g.out) return cli_usage_error("op", "%s prints its result; -o is for element-wise ops", name);
    clrun_array in[4];
    memset(in, 0, sizeof in);
    int rc = 0;
    for (int i = 0; i < nin && !rc && cli_mpi_rank() == 0; i++)
        if (clrun_npy_read(argv[optind + i], &in[i]) != CLRUN_OK)
            rc = (fprintf(stderr, "clrun op %s: %s\n", name, clrun_last_error(NULL)), EXIT_USAGE);
#ifdef CLRUN_HAVE_MPI
    if (cli_mpi_size() > 1) { /* under mpirun: rank 0 reads, writes and leads; the others compute their rows */
        if (!op->follow || devices) {
            if (cli_mpi_rank() == 0)
                cli_usage_error("op", "under mpirun, gemm (and canny) split over the ranks: not %s%s", name, devices ? " --devices" : "");
            for (int i = 0; i < nin; i++) clrun_array_free(&in[i]);
            return EXIT_USAGE;
        }
        clrun_ctx *ctx = NULL;
        clrun_status st = clrun_mpi_open(MPI_COMM_WORLD, spec, &ctx);
        int rc2 = cli_mpi_max(st ? cli_fail("op", NULL, st) : 0);
        if (!rc2 && cli_mpi_rank() == 0) {
            g.ctx = ctx, g.v = op, g.in = in;
            rc2 = rc ? rc : op->npy(&g);
            cli_mpi_bcast_int(-rc2); /* the end */
        } else if (!rc2) {
            rc2 = op->follow(ctx);
        }
        for (int i = 0; i < nin; i++) clrun_array_free(&in[i]);
        clrun_close(ctx);
        return rc2;
    }
#endif
    clrun_ctx *ctx = NULL;
    clrun_group *grp = NULL;
    if (!rc && devices && spec) rc = cli_usage_error("op", "give -d (one device) or --devices (a group), not both");
    if (!rc && devices && g.backend != CLRUN_GEMM_AUTO)
        rc = cli_usage_error("op", "--backend applies to one device; --devices chooses per device");
    if (!rc && devices) {
        clrun_status st = clrun_group_open(&grp, devices);
        if (st == CLRUN_INVALID_ARG) rc = cli_usage_error("op", "%s", clrun_last_error(NULL));
        else if (st) rc = cli_fail("op", NULL, st);
    } else if (!rc) {
        rc = cli_open("op", spec, &ctx);
    }
    g.ctx = ctx, g.grp = grp, g.v = op, g.in = in;
    if (!rc) rc = op->npy(&g);
    for (int i = 0; i < nin; i++) clrun_array_free(&in[i]);
    clrun_close(ctx);
    clrun_group_close(grp);
    return rc;
}
