/* run.h — `clrun run`, split along its jobs: args.c (the argument forms), bind.c (binding them to a
 * kernel's signature), exec.c (geometry, launches, timing, outputs), check.c (--check and dumps),
 * run.c (the command, its options and Oclgrind's .sim files). */
#ifndef CLRUN_RUN_H
#define CLRUN_RUN_H

#include "../cli.h"

#define MAX_CHECKS 16

/* R_BYTES: a by-value vector or struct, its elements in `a`, passed as bytes. */
enum rkind { R_BUF, R_SCALAR, R_BYTES, R_LOCAL, R_NULL, R_BARE };

struct rarg {
    enum rkind kind;
    clrun_array a;    /* buffer contents, the scalar (count 1) or a by-value aggregate's elements */
    const char *bare; /* untyped scalar text, typed from the kernel's signature */
    size_t local;     /* __local bytes */
    const char *save; /* .npy path written after the run */
    int like;         /* out:like=N: index of the model argument, else -1 */
    int like_type_set;
    clrun_dtype like_type;
    int dump, hex; /* .sim: print after the run (in hexadecimal) */
    int noinit;    /* .sim: the buffer is not written before the run */
    unsigned flags;
    const char *spec; /* the text it came from */
    clrun_buf *buf;
};

struct check {
    const char *target; /* argument name or index */
    const char *path;
};

struct run_opts {
    const char *file, *kernel, *spec, *sim;
    char defines[4096];
    size_t global[3], local[3];
    unsigned dims, ldims;
    int repeat, json, seed_set;
    double bytes, rtol, atol, timeout; /* timeout: seconds per launch, 0 none */
    int timing;                        /* --sim: print the launch line and time too */
    int emit_cl;                       /* --emit-cl: print the OpenCL C of a .cu file and stop */
    size_t grid[3], block[3];          /* --grid / --block: CUDA's launch shape */
    unsigned gdims, bdims;
    int atol_set;
    struct check checks[MAX_CHECKS];
    int nchecks;
};

/* "clrun run: " and the message on stderr; returns EXIT_USAGE. */
int run_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int run_parse_list(clrun_dtype t, const char *text, clrun_array *a, const char *spec, const char *what, const char *tname);
int run_parse_sizes(const char *s, size_t out[3], unsigned *dims, const char *what);
int run_parse_arg(const char *spec, struct rarg *r);
int run_bind_arg(clrun_ctx *ctx, clrun_kernel *k, struct rarg *args, int nargs, int i);
void run_free_args(struct rarg *args, int n);
/* --check of argument r (index) against c; with js (--json), its record appended there. */
int run_check(const struct run_opts *o, const struct check *c, const struct rarg *r, int index, json_t *js);
int run_find_arg(clrun_kernel *k, int nargs, const char *target);
void run_dump(FILE *f, const char *name, const clrun_array *a, int hex);
int run_execute(struct run_opts *o, clrun_ctx *ctx, clrun_kernel *k, struct rarg *args, int nargs);

#endif
