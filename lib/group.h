/* group.h — what group.c and group_ops.c share (not installed). */
#ifndef CLRUN_GROUP_H
#define CLRUN_GROUP_H

#include "internal.h"

struct clrun_group {
    unsigned n;
    clrun_ctx **ctx;
    double *w; /* relative speeds; valid when have_w */
    int have_w;
    int fail_dev; /* tests (clrun__group_fail): this device's shares fail; -1 none */
};

enum { ROW_BLOCK = 128 }; /* GEMM's largest tile height: blocks start where the whole product's tiles do */

/* What every kind of share starts with: its device, and how it went. */
struct share {
    clrun_group *g;
    unsigned dev;
    clrun_status st;
    char err[2048]; /* the device's name and its failure */
};

/* Run n shares (each `size` bytes, a struct share first) with fn, a thread each, then each failed
 * share again, in turn, on the first device that did not fail (one context, one thread), its
 * results copied back. The call fails only when a share failed everywhere it ran. */
clrun_status clrun__group_run_shares(clrun_group *g, void *shares, size_t size, void *(*fn)(void *), const char *what);
/* units split by the weights w of n devices into out (blocks of whole units). */
void clrun__group_split_units(const double *w, unsigned n, size_t units, size_t *out);

#endif
