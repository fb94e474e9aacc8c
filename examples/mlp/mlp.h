/* mlp.h — mixed-precision training of a small MLP on clrun (examples/mlp/mlp.c): the library that
 * the mlp example and `clrun demo` share. */
#ifndef CLRUN_EXAMPLE_MLP_H
#define CLRUN_EXAMPLE_MLP_H

#include <clrun.h>

/* Train the 32 → 64 → 8 perceptron for `steps` steps on ctx's device (f16 GEMMs, f32 master
 * weights, dynamic loss scaling), printing the loss, accuracy and loss scale every `every` steps.
 * Returns 0 when the loss fell below a quarter of its start and accuracy passed 90%, 1 when it did
 * not or on a runtime failure (the reason printed on stderr). */
int mlp_train(clrun_ctx *ctx, int steps, int every);

/* The same, data-parallel over P contexts (one per device): each takes a slice of the batch's rows
 * (multiples of 128), the weight gradients are summed over the replicas in replica order on the host
 * and given to all, one loss-scale decision for all (the OR of their found-inf), so every replica
 * holds the same weights after each step. losses (NULL or `steps` doubles) gets every step's loss.
 * P = 1 is mlp_train. */
int mlp_train_dp(clrun_ctx *const *ctxs, int P, int steps, int every, double *losses);

#endif
