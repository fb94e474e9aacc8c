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

#endif
