/* main.c — the mlp example: mixed-precision training of a small perceptron (examples/mlp/mlp.c).
 *
 *   usage: mlp [STEPS]          (default 300)
 *   exit:  0 when the loss fell to below a quarter of its start and accuracy passed 90%; 1 when
 *          it did not or on a runtime failure; 3 with no device. */
#include "mlp.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 300;
    if (steps < 1) {
        fprintf(stderr, "usage: mlp [STEPS]   (STEPS ≥ 1, default 300)\n");
        return 1;
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
