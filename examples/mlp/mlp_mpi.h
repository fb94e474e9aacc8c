/* mlp_mpi.h — the MLP's data-parallel run over the ranks of an MPI communicator (mlp_mpi.c). */
#ifndef CLRUN_EXAMPLE_MLP_MPI_H
#define CLRUN_EXAMPLE_MLP_MPI_H

#include <clrun.h>
#include <mpi.h>

/* Collective over comm (at most 32 ranks, a micro-batch each at least): this rank trains on its
 * share of the batch's rows on ctx, the gradients summed over the ranks in micro-batch order, so
 * every rank holds the weights of the one-device run after each step; rank 0 prints. */
int mlp_train_mpi(MPI_Comm comm, clrun_ctx *ctx, int steps, int every, double *losses);

#endif
