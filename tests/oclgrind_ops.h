/* oclgrind_ops.h — shared by tests/oclgrind_ops.c and the op folders' oclgrind.c: every kernel
 * family of the library on small, awkward shapes, for a run under Oclgrind's checkers. Data are
 * fixed, so the reports are the same every run. */
#ifndef CLRUN_OCLGRIND_OPS_H
#define CLRUN_OCLGRIND_OPS_H

#include <clrun.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern clrun_ctx *ctx;
extern int failures;

#define TRY(call)                                                                                                 \
    do {                                                                                                          \
        clrun_status st_ = (call);                                                                                \
        if (st_ != CLRUN_OK) {                                                                                    \
            fprintf(stderr, "oclgrind_ops: %s -> %s: %s\n", #call, clrun_status_str(st_), clrun_last_error(ctx)); \
            failures++;                                                                                           \
        }                                                                                                         \
    } while (0)

/* In [-1, 1), a fixed sequence. */
float next_float(void);
/* A device buffer of n elements of t (f32, f16 or bf16) with fixed pseudo-random contents. */
clrun_buf *make(clrun_dtype t, size_t n);
/* Bytes of s8 in [-100, 100], fixed. */
clrun_buf *make_s8(size_t n);

/* One family: a name for the command line and the calls. Each op folder's oclgrind.c defines
 * og_families_NAME[], ended by a row with a NULL name. */
struct og_family {
    const char *name;
    void (*run)(void);
};

#endif
