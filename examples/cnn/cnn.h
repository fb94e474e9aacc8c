/* cnn.h — training a ResNet-18-style network on Fashion-MNIST with clrun (examples/cnn/cnn.c): the
 * library behind examples/cnn/main.c. */
#ifndef CLRUN_EXAMPLE_CNN_H
#define CLRUN_EXAMPLE_CNN_H

#include <clrun.h>

/* The data set: n images of 28×28 bytes and their labels (0-9), malloc'd. */
struct cnn_data {
    int n;
    unsigned char *images, *labels;
};

/* Read Fashion-MNIST's idx files (gzip'd, as Debian's dataset-fashion-mnist installs them) from dir:
 * "train" or "t10k" as which. 0, or -1 with the reason on stderr. */
int cnn_data_read(const char *dir, const char *which, struct cnn_data *d);
void cnn_data_free(struct cnn_data *d);

/* What to train, and how. Zeroed members take the defaults in brackets. */
struct cnn_opts {
    int width;               /* channels of the first stage; the stages have 1, 2, 4, 8 times that [64: ResNet-18's] */
    int epochs;              /* passes over the training images [10] */
    int steps;               /* stop after this many steps (0: the epochs) */
    int batch;               /* images per step [256] */
    int micro;               /* images per micro-batch (divides batch; batch norm's statistics are per micro-batch) [batch] */
    int train_limit;         /* use the first N training images (0: all 60,000) */
    int test_limit;          /* evaluate on the first N test images (0: all 10,000) */
    float lr;                /* the peak learning rate of SGD with Nesterov momentum 0.9 [0.1] */
    float weight_decay;      /* [5e-4] */
    int f32;                 /* nonzero: everything in f32 (else f16 activations and kernel weights: mixed precision) */
    clrun_dtype type;        /* set by cnn_train from f32: the activations' type */
    int growth_interval;     /* the loss scaler's [2000, PyTorch's] */
    int checkpoint;          /* nonzero: recompute each residual block's activations in backward (less memory) */
    int augment;             /* nonzero: random shifts of up to 2 pixels and horizontal flips [off] */
    int quiet;               /* nonzero: no per-epoch lines */
    unsigned long long seed; /* weights, shuffling, augmentation [2026] */
    const char *save;        /* write the trained weights here (.npz) */
};

/* What a run measured. */
struct cnn_result {
    double test_accuracy; /* on the test images, in evaluation mode */
    double train_loss;    /* the mean loss of the last epoch's steps */
    double images_per_s;  /* training images per second over the run (after the first step) */
    int steps, skipped;   /* optimiser steps taken, and skipped on inf/NaN gradients */
    double activation_mb; /* device memory of activations and their gradients, per replica */
    double *losses;       /* each step's loss (malloc'd, steps of them; free it) */
};

/* Train on P contexts (one replica each; P = 1: one device). Each step's micro-batches are spread
 * over the replicas in order; the gradients are summed in micro-batch order (a chain through the
 * replicas), so the loss curve does not depend on P. 0, or 1 with the reason on stderr. */
int cnn_train(clrun_ctx *const *ctxs, int P, const struct cnn_data *train, const struct cnn_data *test, const struct cnn_opts *o,
              struct cnn_result *res);

/* Other processes holding replicas (cnn_mpi.c over MPI): the step's micro-batches are split over
 * the processes in rank order, each process's over its contexts. The gradient sum runs as one chain
 * through all replicas of all processes: recv gets the running sum from rank - 1 (not called on rank
 * 0), send hands it to rank + 1 (not called on the last rank), bcast_last gives every rank the last
 * rank's final sum. rows gives every rank the sums over all ranks' rows, in rank order, of the
 * per-row losses and right answers; bcast0 a double from rank 0 (the test accuracy, which rank 0
 * measures: its first micro-batch keeps the running statistics). Each returns 0, or non-zero on
 * failure. */
struct cnn_peers {
    int rank, size;
    int (*recv)(void *arg, float *buf, size_t n);
    int (*send)(void *arg, const float *buf, size_t n);
    int (*bcast_last)(void *arg, float *buf, size_t n);
    int (*rows)(void *arg, const float *loss, const float *right, int n, double *loss_sum, double *right_sum);
    int (*bcast0)(void *arg, double *v);
    void *arg;
};
int cnn_train_peers(clrun_ctx *const *ctxs, int P, const struct cnn_peers *peers, const struct cnn_data *train, const struct cnn_data *test,
                    const struct cnn_opts *o, struct cnn_result *res);

#endif
