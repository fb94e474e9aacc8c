/** @file clrun_mpi.h
 * clrun_mpi.h — the MPI layer of clrun (libclrun_mpi, built with -Dmpi=auto when an MPI is found):
 * one process per device across processes and nodes, the transport being MPI's own.
 *
 * Every call here is collective over its communicator unless it says otherwise: every rank calls it,
 * in the same order. A failure on one rank fails the call on every rank with the same status (the
 * failing rank's text says what happened; the others' name the rank), so no rank is left waiting.
 */
#ifndef CLRUN_MPI_H
#define CLRUN_MPI_H

#include <clrun.h>
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Open this rank's device: among the devices `spec` names (a group spec as clrun_group_open takes
 *  it; NULL or "": the GPUs when there are any, else every device), the one at this rank's local
 *  rank (its index among the ranks on its node, from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED))
 *  modulo their count. Not collective across nodes beyond the split itself. */
clrun_status clrun_mpi_open(MPI_Comm comm, const char *spec, clrun_ctx **ctx);

/** GEMM over the ranks: root holds d (the product as clrun_group_gemm takes it: buffers NULL, no
 *  batches, leading dimensions equal to the rows' lengths) and the host arrays a, b and c; the
 *  other ranks pass NULL for all four. Row blocks of 128 are dealt evenly in rank order; A's rows
 *  are scattered (all of A is broadcast when trans_a), B broadcast, C's rows scattered when beta is
 *  not 0, and C's rows gathered to root. Each block is computed with the whole product's kernel
 *  configuration (clrun_gemm_desc.whole_m), so on devices of one kind the result equals one
 *  device's bit for bit. */
clrun_status clrun_mpi_gemm(MPI_Comm comm, int root, clrun_ctx *ctx, const clrun_gemm_desc *d, const void *a, const void *b, float *c);

/** A counter held by root from which ranks take work dynamically: clrun_mpi_counter_take returns
 *  the counter's value and adds `step` to it, atomically across ranks (MPI_Fetch_and_op); not
 *  collective. new and free are collective. */
typedef struct clrun_mpi_counter clrun_mpi_counter;
/** Make the counter, starting at 0, held by root (collective). */
clrun_status clrun_mpi_counter_new(MPI_Comm comm, int root, clrun_mpi_counter **out);
/** The counter's value before adding step to it (not collective). */
long clrun_mpi_counter_take(clrun_mpi_counter *c, long step);
/** Free the counter (collective). NULL is ignored. */
void clrun_mpi_counter_free(clrun_mpi_counter *c);

/** Agree on a status: every rank passes its own and gets the largest (collective). */
clrun_status clrun_mpi_agree(MPI_Comm comm, clrun_status st);

#ifdef __cplusplus
}
#endif
#endif /* CLRUN_MPI_H */
