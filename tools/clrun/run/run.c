/* run.c — `clrun run`: run any kernel with arguments from files, generated data or scalars, or an
 * Oclgrind .sim file; time it; save outputs to .npy; check them against expected files. The jobs
 * are split by file (run.h). */
#include "run.h"
#include "../sim.h"
#include "../values.h"

#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *run_help = "usage: clrun run FILE.cl -k KERNEL -g X[,Y[,Z]] [options] ARG...\n"
                              "       clrun run --sim FILE.sim [options]\n\n"
                              "Builds FILE.cl, binds one ARG per kernel argument in order, launches, and saves outputs.\n\n"
                              "ARG forms (TYPE: f16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool, or float, int, uint, ...;\n"
                              "SHAPE: a count like 400 or dimensions like 20x20):\n"
                              "  FILE.npy                       input buffer from a NumPy file (type and shape from its header)\n"
                              "  raw:TYPE:FILE                  input buffer from a raw little-endian file of TYPE elements\n"
                              "  zeros:TYPE:SHAPE               buffer of zeros\n"
                              "  fill:TYPE:SHAPE:VALUE          buffer of one repeated value\n"
                              "  range:TYPE:SHAPE[:START[:STEP]]  START, START+STEP, ... (default 0 and 1)\n"
                              "  rand:TYPE:SHAPE[:SEED[:LO:HI]]   uniform random numbers in [LO, HI) (default seed 1, [0, 1))\n"
                              "  out:TYPE:SHAPE                 output buffer (zeroed before the run)\n"
                              "  out:like=N[:TYPE]              output buffer with the shape (and type) of argument N\n"
                              "  BUFFER@OUT.npy                 any buffer form above, saved to OUT.npy after the run (in-out)\n"
                              "  null                           a NULL buffer pointer\n"
                              "  TYPE:VALUE                     a scalar of that type (i32:400, f32:2.5, u64:0x10, f16:1.5)\n"
                              "  VALUE                          a scalar typed from the kernel's signature (400, 2.5; a negative\n"
                              "                                 one after --, or as TYPE:VALUE)\n"
                              "  TYPE:V,V,...  or  V,V,...      a by-value vector or struct: its elements in order, packed with no\n"
                              "                                 gaps (TYPE the element type: f32:1,2,3,4 for a float4, f32:42,3,18\n"
                              "                                 for struct {float a, b, c;}); a bare list takes a vector's element\n"
                              "                                 type (7,42,0,-1 for an int4; a float3 takes 3 or 4 values)\n"
                              "  local:BYTES                    __local memory\n\n"
                              "Options:\n"
                              "  -k, --kernel NAME       kernel to run (required without --sim)\n"
                              "  -g, --global X[,Y[,Z]]  global work size, 1-3 dimensions (required without --sim)\n"
                              "  -l, --local X[,Y[,Z]]   work-group size (default: the driver chooses; the global size is exact)\n"
                              "  --grid X[,Y[,Z]], --block X[,Y[,Z]]\n"
                              "                          CUDA's launch shape instead of -g/-l: grid blocks of block threads\n"
                              "                          (global = grid x block, local = block)\n"
                              "  --emit-cl               FILE.cu: print the OpenCL C it is translated to, and nothing else\n"
                              "  -D NAME[=VAL]           preprocessor definition, repeatable\n"
                              "  -I DIR                  a directory of included files, repeatable (FILE.cu: its own\n"
                              "                          headers are pasted in, searched beside it, then in each -I DIR)\n"
                              "  -O, --options OPTS      more build options, e.g. \"-cl-fast-relaxed-math\" (also --build-options,\n"
                              "                          as oclgrind-kernel names it; repeated, all are kept in order)\n"
                              "  -d, --device SPEC       device (default: $CLRUN_DEVICE, else the best)\n"
                              "  --repeat N              N timed launches after a warm-up launch: min / median / max kernel time\n"
                              "                          (outputs are those of the last launch; in-out buffers see every launch)\n"
                              "  --bytes B               bytes the kernel moves per launch: also print GB/s\n"
                              "  --check ARG=EXPECTED.npy  compare argument ARG (its name or index) after the run; repeatable\n"
                              "  --rtol R, --atol A      tolerance |got - expected| <= A + R*|expected| (default 1e-5 and 1e-8 for\n"
                              "                          floating-point data; integers must match exactly unless --atol is given)\n"
                              "  --sim FILE.sim          run an Oclgrind simulation file (program, kernel, NDRange, work-group\n"
                              "                          size, one <size=... > header per argument); 'dump' arguments are printed\n"
                              "                          as oclgrind-kernel prints them, and nothing else\n"
                              "  --timing                with --sim: also the launch line (kernel, device, NDRange, time)\n"
                              "  --timeout S             a launch that runs past S seconds ends the process (exit 6), naming the\n"
                              "                          kernel (default: no limit)\n"
                              "  --json                  one JSON object on stdout\n"
                              "  --help                  this text\n\n"
                              "Exit codes: 0 success; 1 runtime failure; 2 bad command line or input file; 3 no device;\n"
                              "4 kernel build failure; 5 --check mismatch; 6 a kernel ran past --timeout.\n"
                              "A kernel that crashes the process (out of bounds on a CPU device) is named on stderr; run it\n"
                              "under oclgrind to find the access.\n\n"
                              "Example (the seed's PyCUDA multiply):\n"
                              "  clrun run examples/multiply.cl -k multiply_them -g 400 out:f32:400@dest.npy \\\n"
                              "      rand:f32:400:1 rand:f32:400:2\n";

/* The largest .sim file read (its inline values included). */
#define SIM_MAX ((size_t)256 << 20)

/* A whole text file of at most SIM_MAX bytes (errno EFBIG past it, /dev/zero too), or NULL. */
static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) break;
        if (cap > SIM_MAX) {
            free(buf);
            buf = NULL;
            errno = EFBIG;
            break;
        }
        char *p = realloc(buf, cap * 2);
        if (!p) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = p;
        cap *= 2;
    }
    fclose(f);
    if (buf) *len = n;
    return buf;
}

static int run_sim(struct run_opts *o)
{
    size_t len = 0;
    char *text = read_text(o->sim, &len);
    if (!text) return run_usage_error("cannot read %s: %s", o->sim, strerror(errno));
    struct sim_parser p;
    struct sim_head h;
    struct rarg *args = NULL;
    int nargs = 0, rc = 0;
    clrun_ctx *ctx = NULL;
    clrun_prog *prog = NULL;
    clrun_kernel *k = NULL;
    if (sim_open(&p, text, len, &h)) {
        rc = run_usage_error("%s: %s", o->sim, p.err);
        goto done;
    }
    char path[2200];
    const char *slash = strrchr(o->sim, '/');
    if (h.program[0] != '/' && slash) snprintf(path, sizeof path, "%.*s/%s", (int)(slash - o->sim), o->sim, h.program);
    else snprintf(path, sizeof path, "%s", h.program);
    FILE *probe = fopen(path, "rb");
    if (!probe) snprintf(path, sizeof path, "%s", h.program); /* as Oclgrind: relative to the current folder */
    else fclose(probe);
    if ((rc = cli_open("run", o->spec, &ctx))) goto done;
    clrun_status st;
    if ((st = clrun_prog_file(ctx, path, o->defines[0] ? o->defines : NULL, &prog)) || (st = clrun_kernel_new(prog, h.kernel, &k))) {
        rc = st == CLRUN_IO_ERROR ? (fprintf(stderr, "clrun run: %s: %s\n", o->sim, clrun_last_error(ctx)), EXIT_USAGE)
                                  : cli_fail("run", ctx, st);
        goto done;
    }
    unsigned n = clrun_kernel_nargs(k);
    if (!(args = calloc(n ? n : 1, sizeof *args))) {
        rc = (fprintf(stderr, "clrun run: out of memory\n"), EXIT_RUNTIME);
        goto done;
    }
    for (unsigned i = 0; i < n; i++) {
        clrun_arg_info info;
        struct sim_arg sa;
        if (clrun_kernel_arg_info(k, i, &info) != CLRUN_OK) {
            rc = run_usage_error("%s: the driver reports no argument info for %s, which .sim files need", o->sim, h.kernel);
            goto done;
        }
        if (sim_next_arg(&p, i, &info, &sa)) {
            sim_arg_free(&sa);
            rc = run_usage_error("%s: %s", o->sim, p.err);
            goto done;
        }
        struct rarg *r = &args[nargs++];
        r->like = -1;
        r->spec = o->sim;
        r->dump = sa.dump, r->hex = sa.hex, r->noinit = sa.noinit;
        r->flags = sa.ro ? CLRUN_BUF_READ_ONLY : sa.wo ? CLRUN_BUF_WRITE_ONLY : 0;
        r->kind = sa.kind == SIM_BUFFER ? R_BUF : sa.kind == SIM_VALUE ? R_SCALAR : sa.kind == SIM_LOCAL ? R_LOCAL : R_NULL;
        if (sa.kind == SIM_VALUE && sa.size != clrun_dtype_size(sa.type)) r->kind = R_BYTES; /* a vector or a struct */
        r->local = sa.size;
        r->a = sa.data; /* ownership moves */
    }
    if (sim_finish(&p)) {
        rc = run_usage_error("%s: %s", o->sim, p.err);
        goto done;
    }
    memcpy(o->global, h.ndrange, sizeof o->global);
    memcpy(o->local, h.wgsize, sizeof o->local);
    o->dims = o->ldims = 3;
    o->kernel = h.kernel;
    rc = run_execute(o, ctx, k, args, nargs);
done:
    if (args) run_free_args(args, nargs);
    free(args);
    sim_close(&p);
    free(text);
    clrun_kernel_free(k);
    clrun_prog_free(prog);
    clrun_close(ctx);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    struct run_opts o;
    memset(&o, 0, sizeof o);
    o.rtol = -1;
    static const struct option opts[] = {{"kernel", required_argument, NULL, 'k'},
                                         {"global", required_argument, NULL, 'g'},
                                         {"local", required_argument, NULL, 'l'},
                                         {"options", required_argument, NULL, 'O'},
                                         {"build-options", required_argument, NULL, 'O'}, /* oclgrind-kernel's name */
                                         {"device", required_argument, NULL, 'd'},
                                         {"repeat", required_argument, NULL, 'r'},
                                         {"bytes", required_argument, NULL, 'b'},
                                         {"check", required_argument, NULL, 'c'},
                                         {"rtol", required_argument, NULL, 'R'},
                                         {"atol", required_argument, NULL, 'A'},
                                         {"sim", required_argument, NULL, 's'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"timeout", required_argument, NULL, 'T'},
                                         {"timing", no_argument, NULL, 'M'},
                                         {"grid", required_argument, NULL, 'G'},
                                         {"block", required_argument, NULL, 'B'},
                                         {"emit-cl", no_argument, NULL, 'E'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    int c, rc;
    size_t dlen = 0;
    struct cli_opts opt = {.sub = "run", .help = run_help, .first = 1};
    while ((c = cli_next_opt(&opt, argc, argv, "k:g:l:D:I:O:d:h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        char *end = NULL;
        switch (c) {
        case 'k': o.kernel = optarg; break;
        case 'g':
            if ((rc = run_parse_sizes(optarg, o.global, &o.dims, "-g"))) return rc;
            break;
        case 'l':
            if ((rc = run_parse_sizes(optarg, o.local, &o.ldims, "-l"))) return rc;
            break;
        case 'D':
        case 'I': /* -D NAME[=VAL], -I DIR: a word each among the build options */
            if (!*optarg || strchr(optarg, ' ') || strchr(optarg, '"'))
                return c == 'D' ? run_usage_error("-D '%s': want NAME or NAME=VALUE without spaces", optarg)
                                : run_usage_error("-I '%s': want a directory without spaces (or -O '-I\"DIR\"')", optarg);
            dlen += (size_t)snprintf(o.defines + dlen, sizeof o.defines - dlen, "%s-%c%s", dlen ? " " : "", c, optarg);
            if (dlen >= sizeof o.defines) return run_usage_error("too many -%c options", c);
            break;
        case 'O': /* given twice: both kept, in order, as compilers take repeated options */
            dlen += (size_t)snprintf(o.defines + dlen, sizeof o.defines - dlen, "%s%s", dlen ? " " : "", optarg);
            if (dlen >= sizeof o.defines) return run_usage_error("build options are too long");
            break;
        case 'd': o.spec = optarg; break;
        case 'r':
            o.repeat = (int)strtol(optarg, &end, 10);
            if (!*optarg || *end || o.repeat < 1 || o.repeat > 100000) return run_usage_error("--repeat wants 1..100000, not '%s'", optarg);
            break;
        case 'b':
            o.bytes = strtod(optarg, &end);
            if (!*optarg || *end || !(o.bytes > 0)) return run_usage_error("--bytes wants a positive number, not '%s'", optarg);
            break;
        case 'c': {
            char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || !eq[1]) return run_usage_error("--check wants ARG=EXPECTED.npy, not '%s'", optarg);
            if (o.nchecks >= MAX_CHECKS) return run_usage_error("at most %d --check options", MAX_CHECKS);
            *eq = 0;
            o.checks[o.nchecks].target = optarg;
            o.checks[o.nchecks++].path = eq + 1;
            break;
        }
        case 'R':
            o.rtol = strtod(optarg, &end);
            if (!*optarg || *end || !(o.rtol >= 0)) return run_usage_error("--rtol wants a number >= 0, not '%s'", optarg);
            break;
        case 'A':
            o.atol = strtod(optarg, &end);
            o.atol_set = 1;
            if (!*optarg || *end || !(o.atol >= 0)) return run_usage_error("--atol wants a number >= 0, not '%s'", optarg);
            break;
        case 's': o.sim = optarg; break;
        case 'M': o.timing = 1; break;
        case 'G':
            if ((rc = run_parse_sizes(optarg, o.grid, &o.gdims, "--grid"))) return rc;
            break;
        case 'B':
            if ((rc = run_parse_sizes(optarg, o.block, &o.bdims, "--block"))) return rc;
            break;
        case 'E': o.emit_cl = 1; break;
        case 'T':
            o.timeout = strtod(optarg, &end);
            if (!*optarg || *end || !(o.timeout > 0) || o.timeout > 1e6)
                return run_usage_error("--timeout wants seconds > 0, not '%s'", optarg);
            break;
        case 'j': o.json = 1; break;
        default: break;
        }
    }
    if (o.sim) {
        if (optind < argc) return run_usage_error("--sim takes no kernel file or arguments ('%s')", argv[optind]);
        if (o.kernel || o.dims) return run_usage_error("--sim gives the kernel and sizes itself; drop -k and -g");
        return run_sim(&o);
    }
    if (optind >= argc) return run_usage_error("no kernel file given (usage: clrun run FILE.cl -k KERNEL -g SIZE ARG...)");
    o.file = argv[optind++];
    if (o.emit_cl) {
        const size_t fl = strlen(o.file);
        if (fl < 4 || strcmp(o.file + fl - 3, ".cu")) return run_usage_error("--emit-cl takes a CUDA file (FILE.cu), not '%s'", o.file);
        FILE *f = fopen(o.file, "rb");
        if (!f) return run_usage_error("cannot read %s: %s", o.file, strerror(errno));
        char *src = NULL;
        size_t n = 0, cap = 0;
        for (size_t got = 1; got;) {
            if (n + 65536 + 1 > cap) {
                char *p = realloc(src, cap = 2 * cap + 65536 + 1);
                if (!p) return (free(src), fclose(f), fprintf(stderr, "clrun run: out of memory\n"), EXIT_RUNTIME);
                src = p;
            }
            n += got = fread(src + n, 1, 65536, f);
        }
        fclose(f);
        src[n] = 0;
        char *cl = NULL;
        clrun_status st = clrun_cuda_translate_options(src, o.file, o.defines[0] ? o.defines : NULL, &cl);
        free(src);
        if (st != CLRUN_OK) {
            fprintf(stderr, "clrun run: %s\n", clrun_last_error(NULL));
            return st == CLRUN_UNSUPPORTED ? EXIT_RUNTIME : EXIT_BUILD;
        }
        fputs(cl, stdout);
        clrun_string_free(cl);
        return 0;
    }
    if (o.gdims || o.bdims) { /* CUDA's shape: global = grid x block, local = block */
        if (o.dims || o.ldims) return run_usage_error("give -g/-l or --grid/--block, not both");
        if (!o.gdims || !o.bdims) return run_usage_error("--grid and --block go together");
        o.dims = o.gdims > o.bdims ? o.gdims : o.bdims;
        for (unsigned i = 0; i < 3; i++) {
            const size_t g = i < o.gdims ? o.grid[i] : 1, b = i < o.bdims ? o.block[i] : 1;
            if (b && g > SIZE_MAX / b) return run_usage_error("--grid x --block overflows");
            o.global[i] = g * b, o.local[i] = b;
        }
        o.ldims = o.dims;
    }
    if (!o.kernel) return run_usage_error("no kernel name given (-k NAME)");
    if (!o.dims) return run_usage_error("no global size given (-g X[,Y[,Z]])");
    if (o.ldims && o.ldims != o.dims) return run_usage_error("-l has %u dimensions, -g has %u", o.ldims, o.dims);
    int nargs = argc - optind; /* as many as the command line holds: the kernel says how many it takes */
    struct rarg *args = calloc(nargs ? (size_t)nargs : 1, sizeof *args);
    if (!args) return (fprintf(stderr, "clrun run: out of memory\n"), EXIT_RUNTIME);
    int parsed = 0;
    rc = 0;
    for (int i = 0; i < nargs && !rc; i++, parsed++) rc = run_parse_arg(argv[optind + i], &args[i]);
    clrun_ctx *ctx = NULL;
    clrun_prog *prog = NULL;
    clrun_kernel *k = NULL;
    if (!rc) rc = cli_open("run", o.spec, &ctx);
    if (!rc) {
        clrun_status st = clrun_prog_file(ctx, o.file, o.defines[0] ? o.defines : NULL, &prog);
        if (st == CLRUN_IO_ERROR) rc = (fprintf(stderr, "clrun run: %s\n", clrun_last_error(ctx)), EXIT_USAGE);
        else if (st != CLRUN_OK) rc = cli_fail("run", ctx, st);
        else if ((st = clrun_kernel_new(prog, o.kernel, &k)) != CLRUN_OK)
            rc = st == CLRUN_NOT_FOUND ? (fprintf(stderr, "clrun run: %s\n", clrun_last_error(ctx)), EXIT_USAGE) : cli_fail("run", ctx, st);
    }
    if (!rc) rc = run_execute(&o, ctx, k, args, nargs);
    run_free_args(args, parsed);
    free(args);
    clrun_kernel_free(k);
    clrun_prog_free(prog);
    clrun_close(ctx);
    return rc;
}
