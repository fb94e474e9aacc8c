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

/* Other processes holding replicas too (mlp_mpi.c over MPI): this process has rows row0 .. row0 +
 * rows of the batch (whole micro-batches of 128), the processes' rows following each other in rank
 * order. sum_partials gets this process's partial gradients (nmb micro-batches of len floats, in
 * order) and must give every process the sum over all micro-batches of all processes, added in
 * micro-batch order; sum_rows likewise the sums over all rows, in row order, of the per-row losses
 * and right answers; any the OR over the processes. Each returns 0, or non-zero on failure. */
struct mlp_peers {
    int rank, size;
    size_t row0, rows;
    int (*sum_partials)(void *arg, const float *part, size_t nmb, size_t len, float *sum);
    int (*sum_rows)(void *arg, const float *loss, const float *right, size_t n, double *loss_sum, double *right_sum);
    int (*any)(void *arg, int v);
    void *arg;
};
int mlp_train_peers(clrun_ctx *const *ctxs, int P, const struct mlp_peers *peers, int steps, int every, double *losses);

/* The batch's size in rows (a multiple of 128), and the layers. */
enum { MLP_ROWS = 4096, MLP_IN = 32, MLP_HID = 64, MLP_OUT = 8 };

/* A trained model and its data (mlp_train_model): row-major weights, x (MLP_ROWS × MLP_IN) and the
 * labels malloc'd (free them). */
struct mlp_model {
    float w1[MLP_IN * MLP_HID], b1[MLP_HID], w2[MLP_HID * MLP_OUT], b2[MLP_OUT];
    float *x;
    int *label;
};
/* mlp_train on one device, keeping the trained model in *m. */
int mlp_train_model(clrun_ctx *ctx, int steps, int every, struct mlp_model *m);

/* Train, then run the model in INT8 (int8.c): weights quantized per output channel, activations per
 * tensor, both symmetric, the two layers as clrun_gemm_s8 with the fused epilogue (scales, bias,
 * ReLU); prints f32 and INT8 accuracy. 0 when INT8 stays within one point of f32. */
int mlp_int8(clrun_ctx *ctx, int steps, int every);

#endif
