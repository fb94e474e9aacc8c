/* cnn_mpi.c — the CNN's data-parallel run over MPI ranks (built when an MPI is found): each rank
 * holds its share of every step's micro-batches on its device (clrun_mpi_open); the gradient sum
 * passes from rank to rank in micro-batch order (MPI_Send/MPI_Recv) and the last rank's sum is
 * broadcast, so the run gives the bits of the one-device run. A rank that fails ends the job
 * (MPI_Abort), so no rank waits for it forever. */
#include "cnn.h"

#include <clrun_mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct link {
    MPI_Comm comm;
    int rank, size;
};

static int chain_recv(void *arg, float *buf, size_t n)
{
    struct link *l = arg;
    return MPI_Recv(buf, (int)n, MPI_FLOAT, l->rank - 1, 1, l->comm, MPI_STATUS_IGNORE) != MPI_SUCCESS;
}

static int chain_send(void *arg, const float *buf, size_t n)
{
    struct link *l = arg;
    return MPI_Send(buf, (int)n, MPI_FLOAT, l->rank + 1, 1, l->comm) != MPI_SUCCESS;
}

static int bcast_last(void *arg, float *buf, size_t n)
{
    struct link *l = arg;
    return MPI_Bcast(buf, (int)n, MPI_FLOAT, l->size - 1, l->comm) != MPI_SUCCESS;
}

/* every rank's rows gathered to all in rank order, then summed in row order */
static int rows(void *arg, const float *loss, const float *right, int n, double *loss_sum, double *right_sum)
{
    struct link *l = arg;
    int *counts = calloc((size_t)l->size, sizeof *counts), *firsts = calloc((size_t)l->size, sizeof *firsts), rc = 1;
    float *all = NULL;
    if (counts && firsts && MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, l->comm) == MPI_SUCCESS) {
        int total = 0;
        for (int r = 0; r < l->size; r++) firsts[r] = total, total += counts[r];
        if ((all = malloc(sizeof(float) * (size_t)(total > 0 ? total : 1))) &&
            MPI_Allgatherv(loss, n, MPI_FLOAT, all, counts, firsts, MPI_FLOAT, l->comm) == MPI_SUCCESS) {
            *loss_sum = 0;
            for (int i = 0; i < total; i++) *loss_sum += all[i];
            if (MPI_Allgatherv(right, n, MPI_FLOAT, all, counts, firsts, MPI_FLOAT, l->comm) == MPI_SUCCESS) {
                *right_sum = 0;
                for (int i = 0; i < total; i++) *right_sum += all[i];
                rc = 0;
            }
        }
    }
    free(counts), free(firsts), free(all);
    return rc;
}

static int bcast0(void *arg, double *v)
{
    struct link *l = arg;
    return MPI_Bcast(v, 1, MPI_DOUBLE, 0, l->comm) != MPI_SUCCESS;
}

int cnn_mpi_main(const struct cnn_data *train, const struct cnn_data *test, const struct cnn_opts *o)
{
    MPI_Init(NULL, NULL);
    struct link l = {MPI_COMM_WORLD, 0, 1};
    MPI_Comm_rank(l.comm, &l.rank);
    MPI_Comm_size(l.comm, &l.size);
    clrun_ctx *ctx = NULL;
    clrun_status st = clrun_mpi_open(l.comm, NULL, &ctx);
    if (st) fprintf(stderr, "cnn: rank %d: %s\n", l.rank, clrun_last_error(NULL));
    int rc = clrun_mpi_agree(l.comm, st) ? 3 : 0;
    struct cnn_result one = {0}, all = {0};
    if (!rc && l.rank == 0) { /* the same run on one device, for the comparison */
        printf("rank 0 device: %s (%s); %d ranks\ncnn        on rank 0's device alone:\n", clrun_ctx_device(ctx)->name,
               clrun_ctx_device(ctx)->platform_name, l.size);
        rc = cnn_train(&ctx, 1, train, test, o, &one);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, l.comm);
    if (!rc) {
        if (l.rank == 0) printf("cnn        over the %d ranks:\n", l.size);
        const struct cnn_peers peers = {l.rank, l.size, chain_recv, chain_send, bcast_last, rows, bcast0, &l};
        if (cnn_train_peers(&ctx, 1, &peers, train, test, o, &all)) MPI_Abort(l.comm, 1); /* a rank may wait on this one */
    }
    if (!rc && l.rank == 0) {
        const int n = one.steps + one.skipped;
        int same = n == all.steps + all.skipped, first = -1;
        for (int s = 0; same && s < n; s++)
            if (memcmp(&one.losses[s], &all.losses[s], sizeof(double))) same = 0, first = s;
        printf("cnn        loss curves on 1 device and %d ranks: %s", l.size, same ? "equal bit for bit" : "DIFFERENT");
        if (first >= 0) printf(" from step %d", first + 1);
        printf("; %.0f against %.0f images/s\n", one.images_per_s, all.images_per_s);
        rc = !same;
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, l.comm);
    free(one.losses), free(all.losses);
    clrun_close(ctx);
    MPI_Finalize();
    return rc;
}
