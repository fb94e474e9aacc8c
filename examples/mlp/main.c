/* main.c — the mlp example: mixed-precision training of a small perceptron (examples/mlp/mlp.c).
 *
 *   usage: mlp [STEPS] [--devices GROUP]    (default 300 steps, one device)
 *   With --devices (all, gpu, cpu, 0,2 ...: as clrun_group_open takes it) the run is data-parallel
 *   over the group's devices, after the same run on the group's first device alone; the largest
 *   relative difference between the two loss curves is printed and must be at most 1e-6.
 *   exit:  0 when the loss fell to below a quarter of its start and accuracy passed 90% (and, with
 *          --devices, the curves agree); 1 when not or on a runtime failure; 3 with no device. */
#include "mlp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int steps = 300;
    const char *devices = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--devices") == 0 && i + 1 < argc) devices = argv[++i];
        else if ((steps = atoi(argv[i])) < 1) {
            fprintf(stderr, "usage: mlp [STEPS] [--devices GROUP]   (STEPS ≥ 1, default 300)\n");
            return 1;
        }
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
        int rc = !ctxs || !one || !all;
        for (int i = 0; !rc && i < P; i++) {
            ctxs[i] = clrun_group_ctx(g, (unsigned)i);
            printf("device %d: %s (%s)\n", i, clrun_ctx_device(ctxs[i])->name, clrun_ctx_device(ctxs[i])->platform_name);
        }
        if (!rc) rc = mlp_train_dp(ctxs, 1, steps, 100, one);           /* the first device alone */
        if (!rc) rc = mlp_train_dp(ctxs, P, steps, 100, all);           /* all of them */
        double worst = 0;
        int at = 0;
        for (int s = 0; !rc && s < steps; s++) {
            const double d = fabs(all[s] - one[s]) / fabs(one[s]);
            if (d > worst) worst = d, at = s + 1;
        }
        if (!rc) {
            printf("mlp        data-parallel on %d devices against one: loss curves differ by at most %.3g (relative, step %d)%s\n", P, worst,
                   at, worst <= 1e-6 ? "" : ": MORE than 1e-6");
            rc = worst > 1e-6;
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
    int rc = mlp_train(ctx, steps, 25);
    clrun_close(ctx);
    return rc;
}
