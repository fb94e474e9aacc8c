/* main.c — the mlp example: mixed-precision training of a small perceptron (examples/mlp/mlp.c).
 *
 *   usage: mlp [STEPS] [--devices GROUP]    (default 300 steps, one device)
 *          mlp [STEPS] --int8                 train, then run the model in INT8 (per-channel weights):
 *                                             its accuracy must stay within one point of f32
 *          mpirun -np N mlp [STEPS] --mpi     (built with MPI: data-parallel over the ranks, a
 *                                             device each; rank 0 first runs the same steps alone
 *                                             and the curves must agree as with --devices)
 *   With --devices (all, gpu, cpu, 0,2 ...: as clrun_group_open takes it) the run is data-parallel
 *   over the group's devices, after the same run on the group's first device alone; the largest
 *   relative difference between the two loss curves is printed and must be at most 1e-6 when the
 *   devices are of one implementation (one platform and driver: the same bits), 1e-3 when not (two
 *   implementations' exp and log may differ by an ulp, within the OpenCL spec, and training
 *   carries such differences on).
 *   exit:  0 when the loss fell to below a quarter of its start and accuracy passed 90% (and, with
 *          --devices, the curves agree); 1 when not or on a runtime failure; 3 with no device. */
#include "mlp.h"
#ifdef MLP_HAVE_MPI
#include "mlp_mpi.h"

#include <clrun_mpi.h>
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int steps = 300;
    const char *devices = NULL;
    int over_mpi = 0, int8 = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--devices") == 0 && i + 1 < argc) devices = argv[++i];
        else if (strcmp(argv[i], "--mpi") == 0) over_mpi = 1;
        else if (strcmp(argv[i], "--int8") == 0) int8 = 1;
        else if ((steps = atoi(argv[i])) < 1) {
            fprintf(stderr, "usage: mlp [STEPS] [--devices GROUP]   (STEPS ≥ 1, default 300)\n");
            return 1;
        }
    }
    if (over_mpi) {
#ifdef MLP_HAVE_MPI
        MPI_Init(NULL, NULL);
        int rank = 0, size = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        clrun_ctx *ctx = NULL;
        clrun_status st = clrun_mpi_open(MPI_COMM_WORLD, NULL, &ctx);
        if (st) fprintf(stderr, "mlp: rank %d: %s\n", rank, clrun_last_error(NULL));
        int rc = clrun_mpi_agree(MPI_COMM_WORLD, st) ? 3 : size > MLP_ROWS / 128 ? 1 : 0;
        double *one = calloc((size_t)steps, sizeof *one), *all = calloc((size_t)steps, sizeof *all);
        if (!rc && rank == 0) {
            printf("rank 0 device: %s (%s); %d ranks\n", clrun_ctx_device(ctx)->name, clrun_ctx_device(ctx)->platform_name, size);
            rc = mlp_train_dp(&ctx, 1, steps, 100, one); /* the same steps on one device, for the comparison */
        }
        MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!rc) rc = mlp_train_mpi(MPI_COMM_WORLD, ctx, steps, 100, all);
        if (!rc && rank == 0) {
            double worst = 0;
            for (int s = 0; s < steps; s++)
                if (fabs(all[s] - one[s]) / fabs(one[s]) > worst) worst = fabs(all[s] - one[s]) / fabs(one[s]);
            printf("mlp        data-parallel on %d ranks against one device: loss curves differ by at most %.3g (relative)%s\n", size,
                   worst, worst <= 1e-6 ? "" : ": MORE than 1e-6");
            rc = worst > 1e-6;
        }
        MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
        free(one), free(all);
        clrun_close(ctx);
        MPI_Finalize();
        return rc;
#else
        fprintf(stderr, "mlp: --mpi: this build has no MPI (configure with an MPI installed: openmpi-bin, libopenmpi-dev)\n");
        return 1;
#endif
    }
    if (devices) {
        clrun_group *g = NULL;
        clrun_status st = clrun_group_open(&g, devices);
        if (st) {
            fprintf(stderr, "mlp: %s\n", clrun_last_error(NULL));
            return st == CLRUN_NO_PLATFORM || st == CLRUN_NO_DEVICE ? 3 : 1;
        }
        const int P = (int)clrun_group_size(g);
        clrun_ctx **ctxs = malloc(sizeof *ctxs * (size_t)P);
        double *one = calloc((size_t)steps, sizeof *one), *all = calloc((size_t)steps, sizeof *all);
        int rc = !ctxs || !one || !all, mixed = 0;
        for (int i = 0; !rc && i < P; i++) {
            ctxs[i] = clrun_group_ctx(g, (unsigned)i);
            const clrun_device_info *in = clrun_ctx_device(ctxs[i]), *first = clrun_ctx_device(ctxs[0]);
            printf("device %d: %s (%s)\n", i, in->name, in->platform_name);
            mixed |= strcmp(in->platform_name, first->platform_name) || strcmp(in->driver_version, first->driver_version);
        }
        const double bound = mixed ? 1e-3 : 1e-6;
        if (!rc) rc = mlp_train_dp(ctxs, 1, steps, 100, one); /* the first device alone */
        if (!rc) rc = mlp_train_dp(ctxs, P, steps, 100, all); /* all of them */
        double worst = 0;
        int at = 0;
        for (int s = 0; !rc && s < steps; s++) {
            const double d = fabs(all[s] - one[s]) / fabs(one[s]);
            if (d > worst) worst = d, at = s + 1;
        }
        if (!rc) {
            printf("mlp        data-parallel on %d devices%s against one: loss curves differ by at most %.3g (relative, step %d)%s%s\n", P,
                   mixed ? " of several implementations" : "", worst, at, worst <= bound ? "" : ": MORE than ",
                   worst <= bound ? ""
                   : mixed        ? "1e-3"
                                  : "1e-6");
            rc = worst > bound;
        }
        free(ctxs), free(one), free(all);
        clrun_group_close(g);
        return rc;
    }
    clrun_ctx *ctx = NULL;
    clrun_status st = clrun_open(&ctx, NULL);
    if (st) {
        fprintf(stderr, "mlp: %s\n", clrun_last_error(NULL));
        return st == CLRUN_NO_PLATFORM || st == CLRUN_NO_DEVICE ? 3 : 1;
    }
    printf("device: %s (%s)\n", clrun_ctx_device(ctx)->name, clrun_ctx_device(ctx)->platform_name);
    int rc = int8 ? mlp_int8(ctx, steps, 25) : mlp_train(ctx, steps, 25);
    clrun_close(ctx);
    return rc;
}
