/* cli.h — shared by the clrun command's subcommand files. */
#ifndef CLRUN_CLI_H
#define CLRUN_CLI_H

#include <clrun.h>

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>

/* Exit codes: each means one thing. */
enum {
    EXIT_OK = 0,
    EXIT_RUNTIME = 1,  /* runtime failure */
    EXIT_USAGE = 2,    /* bad command line or input that does not parse */
    EXIT_NODEVICE = 3, /* no OpenCL platform or device */
    EXIT_BUILD = 4,    /* kernel build failure */
    EXIT_CHECK = 5,    /* --check mismatch */
    EXIT_TIMEOUT = 6   /* a kernel ran past --timeout */
};

/* The getopt_long loop every subcommand shares:
 *
 *     struct cli_opts opt = {.sub = "bench", .help = bench_help, .first = 1};
 *     while ((c = cli_next_opt(&opt, argc, argv, "d:h", opts)) != CLI_OPTS_END) {
 *         if (c == CLI_OPTS_EXIT) return opt.rc;
 *         ... the subcommand's own options ...
 *     }
 *
 * It resets getopt on the first call (options from argv[first]; 0 means 1), answers --help (-h) by
 * printing `help` (when help is NULL, 'h' goes to the caller), and reports a missing value or an
 * unknown option as a usage error: then it returns CLI_OPTS_EXIT with rc set. CLI_OPTS_END: the
 * options are done, optind is at the operands. */
struct cli_opts {
    const char *sub, *help;
    int first;
    int rc; /* exit code, with CLI_OPTS_EXIT */
    int started;
};
enum { CLI_OPTS_END = -1, CLI_OPTS_EXIT = -2 };
int cli_next_opt(struct cli_opts *p, int argc, char **argv, const char *shortopts, const struct option *longopts);

/* What is running, for the words printed if the process is killed by a signal or a timeout: the
 * kernel's name and the device (copied into static storage; NULL clears it). */
void cli_running(const char *kernel, const char *device);
/* SIGSEGV, SIGBUS, SIGILL, SIGFPE: print what was running (async-signal-safe) and die of the signal. */
void cli_crash_handlers(void);
/* From now, a kernel that runs past `seconds` (> 0) ends the process with EXIT_TIMEOUT, naming it. */
void cli_timeout_arm(double seconds);
void cli_timeout_disarm(void);
/* op, bench and demo run under a watchdog (--timeout S, taken out of their arguments by main;
 * defaults 600, 3600 and 600 s, 0 none): a step that made progress (an image done) re-arms it. */
void cli_progress(void);

/* Where a command's notes ("wrote OUT") go: stdout, or stderr when the output itself is "-" (stdout). */
FILE *cli_notes(const char *out);

/* Exit code for a library status. */
int cli_exit_code(clrun_status st);
/* Print "clrun SUB: <text of the last error>" and return the exit code for st. */
int cli_fail(const char *sub, clrun_ctx *ctx, clrun_status st);
/* Print "clrun SUB: message" + a hint to --help, return EXIT_USAGE. */
int cli_usage_error(const char *sub, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Open a context on spec (NULL: default); on failure prints and returns the exit code (else 0). */
int cli_open(const char *sub, const char *spec, clrun_ctx **ctx);
/* Median of n values (sorts v in place). */
double cli_median(double *v, int n);
/* Monotonic wall clock in seconds. */
double cli_now(void);
/* 1 when a and b name one file: the same path, or existing files of the same device and inode. */
int cli_same_file(const char *a, const char *b);
/* ---- JSON (json.c, through jansson) ------------------------------------------------------- */

/* 1 when the command was given --json (main sets it before the command runs). */
extern int cli_json_mode;
/* Print rec on f as one line (", " and ": " between members) and release it; rec NULL: nothing. */
void cli_json_emit(FILE *f, json_t *rec);
/* As cli_json_emit, with reals to 17 digits (a double exactly) rather than 10. */
void cli_json_emit_exact(FILE *f, json_t *rec);
/* A number: a real, or the strings "nan", "inf", "-inf" (JSON has none of them). New reference. */
json_t *cli_json_num(double v);
/* A string, or null for NULL. New reference. */
json_t *cli_json_text(const char *s);
/* An array's shape as a JSON array. New reference. */
json_t *cli_json_shape(const clrun_array *a);
/* {"op", "output", "dtype", "shape"}: the record of a command that wrote an array. New reference. */
json_t *cli_json_wrote(const char *op, const char *out, const clrun_array *a);
/* Under --json: standard error is kept as it is written (it still goes to standard error), so
 * that a failure's record can carry its message. */
void cli_json_capture_stderr(void);
/* The error record of a failure with exit status rc: {"error": {"exit", "meaning", "message"}},
 * on the stream the records went to (standard output unless the command's output is there). */
void cli_json_error(int rc);
const char *cli_type_name(clrun_device_type t);

/* ---- commands and verbs --------------------------------------------------------------------- */

struct cli_cmd;
struct bench_opts; /* bench/bench.h */
/* What `clrun op` parsed for a verb on .npy files (cli_op_npy reads the options every such verb
 * shares, the inputs, and opens the device or the group). */
struct cli_npy {
    clrun_ctx *ctx;          /* one device, or NULL with a group */
    clrun_group *grp;        /* --devices, else NULL */
    const struct cli_cmd *v; /* the verb */
    clrun_array *in;         /* its inputs, v->nin of them, read */
    const char *out;         /* -o, NULL for verbs that print */
    float alpha;             /* --alpha (default 1) */
    int json;                /* --json */
    /* gemm's */
    int ta, tb, fast, bf16;
    float beta;
    const char *c0, *scale_a, *scale_b, *meta;
    clrun_gemm_backend backend;
};

/* One row of a command table, the one type at every level: the top-level commands (main.c), the
 * benchmarks, and the verbs of `clrun op`, which each op folder lists in its cli.c
 * (lib/ops/NAME/cli.c defines cli_verbs_NAME[], ended by a row with a NULL name). */
struct cli_cmd {
    const char *name, *what; /* what: its line in the help list */
    /* runs it: argv[0] is the command's name (for a verb of `clrun op`, argv[0] is "op" and argv[1]
     * the verb's); NULL for the verbs cli_op_npy runs */
    int (*run)(int argc, char **argv);
    double limit; /* top level: the default --timeout in seconds (0: none) */
    /* verbs on .npy files: how many inputs, the verb's own code (a clrun_vec_op, ...), whether it
     * prints its result (else -o writes it), and the call, with everything parsed */
    int nin, code, prints;
    int (*npy)(const struct cli_npy *call);
    /* under mpirun: what the ranks but 0 do while rank 0 runs npy (NULL: the verb runs on one rank) */
    int (*follow)(clrun_ctx *ctx);
    /* a benchmark of `clrun bench`: runs with the options its command parsed */
    int (*bench)(const struct bench_opts *o);
};

/* After OUT is written: "wrote OUT (note)" for people, or with --json one record
 * {"op", "output", "dtype", "shape"}; on stderr when OUT is standard output. */
void cli_op_wrote(const struct cli_npy *c, const char *op, const clrun_array *r, const char *note);
/* The inputs of an element-wise op or a reduction: all float32 or all float16, of one shape; else
 * says why and returns EXIT_USAGE. */
int cli_op_floats(const struct cli_npy *c);
/* A failure of verb `name`: CLRUN_INVALID_ARG (bad input, a bad CLRUN_GROUP_WEIGHTS) is printed and
 * EXIT_USAGE; anything else as cli_fail. */
int cli_op_fail(const char *name, clrun_ctx *ctx, clrun_status st);

int cmd_devices(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_op(int argc, char **argv);
/* op gemm with --meta: A is 2:4 compressed (lib/ops/sparse/cli.c) */
int cli_gemm_sparse(clrun_ctx *ctx, const clrun_array *V, const clrun_array *B, const char *meta, int tb, float alpha, int bf16,
                    clrun_gemm_backend backend, const char *out);

/* Under an MPI launcher (mpi.c; libclrun_mpi built): MPI started at entry when the launcher's
 * environment names this process a rank, finished at exit; size 1 and rank 0 otherwise. The
 * collectives are no-ops without MPI: bcast_int returns rank 0's value, max and sum reduce over
 * the ranks. */
void cli_mpi_init(void);
void cli_mpi_finalize(void);
int cli_mpi_size(void);
int cli_mpi_rank(void);
int cli_mpi_bcast_int(int v);
int cli_mpi_max(int v);
int cli_mpi_sum(int v);
/* Under mpirun: 0 when every rank was started with this command (its arguments but -d), else each
 * rank says so and EXIT_USAGE (one collective, before any other: ranks never wait on each other). */
int cli_mpi_agree(int argc, char **argv);
/* `op canny` over n inputs in[i] -> dst[i] (lib/ops/canny/cli.c): read and decode, and encode and write, on jobs
 * threads around a device pipeline (clrun_pipe_canny) on each of the nctx contexts, frames dealt by
 * the weights w (NULL: equal). Prints "IN -> OUT" lines (unless quiet or n is 1) and the failures,
 * by name and in order. Adds the summed read, device and write seconds to t[2], t[3], t[4]; *done
 * counts the frames written. Returns the exit code. */
#define CANNY_JSON 2 /* canny_batch's quiet: a JSON record per input instead of the "IN -> OUT" lines */
int canny_batch(clrun_ctx *const *ctx, const double *w, int nctx, const clrun_canny_params *p, char **in, char (*dst)[4400], int n,
                int jobs, int quiet, double t[5], int *done);
int cmd_tune(int argc, char **argv);
int cmd_demo(int argc, char **argv);

#endif
