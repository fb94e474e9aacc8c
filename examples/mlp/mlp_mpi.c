/* mlp_mpi.c — the MLP's data-parallel run over MPI ranks (built when an MPI is found): each rank
 * holds the rows of its share of the batch on its device (clrun_mpi_open); partial gradients and
 * per-row losses are gathered to rank 0, added there in micro-batch and row order, and the sums
 * broadcast, so the run gives the bits of the one-device run and of the in-process group. */
#include "mlp.h"
#include "mlp_mpi.h"

#include <stdlib.h>
#include <string.h>

struct link {
    MPI_Comm comm;
    int rank, size;
    float *all; /* rank 0: every rank's partials or rows */
    size_t cap;
};

static int gather(struct link *l, const float *mine, int n, int **counts_out, int **firsts_out)
{
    int *counts = calloc((size_t)l->size, sizeof *counts), *firsts = calloc((size_t)l->size, sizeof *firsts);
    if (!counts || !firsts) return free(counts), free(firsts), -1;
    if (MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, l->comm) != MPI_SUCCESS) return free(counts), free(firsts), -1;
    size_t total = 0;
    for (int r = 0; r < l->size; r++) firsts[r] = (int)total, total += (size_t)counts[r];
    if (l->rank == 0 && total > l->cap) {
        float *grown = realloc(l->all, total * sizeof *grown + 4);
        if (!grown) return free(counts), free(firsts), -1;
        l->all = grown, l->cap = total;
    }
    if (MPI_Gatherv(mine, n, MPI_FLOAT, l->all, counts, firsts, MPI_FLOAT, 0, l->comm) != MPI_SUCCESS)
        return free(counts), free(firsts), -1;
    *counts_out = counts, *firsts_out = firsts;
    return 0;
}

static int sum_partials(void *arg, const float *part, size_t nmb, size_t len, float *sum)
{
    struct link *l = arg;
    int *counts, *firsts;
    if (gather(l, part, (int)(nmb * len), &counts, &firsts)) return -1;
    if (l->rank == 0) {
        size_t total = 0;
        for (int r = 0; r < l->size; r++) total += (size_t)counts[r];
        memset(sum, 0, len * sizeof *sum);
        for (size_t mb = 0; mb < total / len; mb++) /* micro-batch order: ranks hold them in order */
            for (size_t e = 0; e < len; e++) sum[e] += l->all[mb * len + e];
    }
    free(counts), free(firsts);
    return MPI_Bcast(sum, (int)len, MPI_FLOAT, 0, l->comm) != MPI_SUCCESS;
}

static int sum_rows(void *arg, const float *loss, const float *right, size_t n, double *loss_sum, double *right_sum)
{
    struct link *l = arg;
    double sums[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        int *counts, *firsts;
        if (gather(l, k ? right : loss, (int)n, &counts, &firsts)) return -1;
        if (l->rank == 0) {
            size_t total = 0;
            for (int r = 0; r < l->size; r++) total += (size_t)counts[r];
            for (size_t i = 0; i < total; i++) sums[k] += l->all[i];
        }
        free(counts), free(firsts);
    }
    if (MPI_Bcast(sums, 2, MPI_DOUBLE, 0, l->comm) != MPI_SUCCESS) return -1;
    *loss_sum = sums[0], *right_sum = sums[1];
    return 0;
}

static int any(void *arg, int v)
{
    struct link *l = arg;
    int all = v;
    MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_LOR, l->comm);
    return all;
}

int mlp_train_mpi(MPI_Comm comm, clrun_ctx *ctx, int steps, int every, double *losses)
{
    struct link l = {comm, 0, 1, NULL, 0};
    MPI_Comm_rank(comm, &l.rank);
    MPI_Comm_size(comm, &l.size);
    const size_t mbs = MLP_ROWS / 128, m0 = mbs * (size_t)l.rank / (size_t)l.size, m1 = mbs * (size_t)(l.rank + 1) / (size_t)l.size;
    if (m1 == m0) return 1; /* more ranks than micro-batches: the caller checks this first */
    const struct mlp_peers peers = {l.rank, l.size, m0 * 128, (m1 - m0) * 128, sum_partials, sum_rows, any, &l};
    int rc = mlp_train_peers(&ctx, 1, &peers, steps, every, losses);
    free(l.all);
    return rc;
}
