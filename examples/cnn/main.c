/* main.c — the cnn example: a ResNet-18-style network trained on Fashion-MNIST with mixed precision
 * (examples/cnn/cnn.c), on one device, over a device group (--devices, the loss curve compared with
 * one device's bit for bit), or over MPI ranks. */
#include "cnn.h"
#ifdef CNN_HAVE_MPI
int cnn_mpi_main(const struct cnn_data *train, const struct cnn_data *test, const struct cnn_opts *o);
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *usage =
    "usage: cnn [--epochs N] [--steps N] [--width W] [--batch B] [--micro M] [--train N] [--test N] [--lr LR] [--f32]\n"
    "           [--augment] [--checkpoint | --compare-checkpoint] [--save FILE.npz] [--min-accuracy PCT] [--data DIR]\n"
    "           [-d DEVICE | --devices GROUP | --mpi]\n\n"
    "Trains a ResNet-18-style network (stages of W, 2W, 4W, 8W channels; W = 64 is ResNet-18's widths) on Fashion-MNIST\n"
    "(Debian's dataset-fashion-mnist, default DIR /usr/share/datasets/fashion-mnist) with f16 activations and f32 master\n"
    "weights, SGD with Nesterov momentum and a cosine schedule; prints loss, accuracy, images/s and the loss scale per\n"
    "epoch, and the test accuracy. --devices trains on the group and on its first device alone and compares the loss\n"
    "curves (equal bit for bit; within 1e-3 where the group mixes implementations); --compare-checkpoint trains without and with "
    "activation checkpointing and\n"
    "compares the loss curves (equal bit for bit) and the memory of the activations; under mpirun, --mpi trains over\n"
    "the ranks (one device each) and compares with rank 0's device alone. Exit 0; 1 a failure or, with --min-accuracy, a lower "
    "test accuracy;\n"
    "2 bad arguments; 3 no device.\n";

static int number(const char *s, double lo, double hi, double *v)
{
    char *end;
    *v = strtod(s, &end);
    return !*s || *end || !(*v >= lo && *v <= hi);
}

int main(int argc, char **argv)
{
    struct cnn_opts o = {0};
    const char *dir = "/usr/share/datasets/fashion-mnist", *devices = NULL, *device = NULL;
    double min_acc = -1, v;
    int compare_ckpt = 0, over_mpi = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return fputs(usage, stdout), 0;
        else if (!strcmp(a, "--f32")) o.f32 = 1;
        else if (!strcmp(a, "--augment")) o.augment = 1;
        else if (!strcmp(a, "--checkpoint")) o.checkpoint = 1;
        else if (!strcmp(a, "--compare-checkpoint")) compare_ckpt = 1;
        else if (!strcmp(a, "--mpi")) over_mpi = 1;
        else if (!val) bad = 1;
        else if (!strcmp(a, "--epochs")) bad = number(val, 1, 1000, &v), o.epochs = (int)v, i++;
        else if (!strcmp(a, "--steps")) bad = number(val, 1, 1e7, &v), o.steps = (int)v, i++;
        else if (!strcmp(a, "--width")) bad = number(val, 1, 512, &v), o.width = (int)v, i++;
        else if (!strcmp(a, "--batch")) bad = number(val, 2, 65536, &v), o.batch = (int)v, i++;
        else if (!strcmp(a, "--micro")) bad = number(val, 2, 65536, &v), o.micro = (int)v, i++;
        else if (!strcmp(a, "--train")) bad = number(val, 1, 1e6, &v), o.train_limit = (int)v, i++;
        else if (!strcmp(a, "--test")) bad = number(val, 1, 1e6, &v), o.test_limit = (int)v, i++;
        else if (!strcmp(a, "--lr")) bad = number(val, 1e-6, 10, &v), o.lr = (float)v, i++;
        else if (!strcmp(a, "--min-accuracy")) bad = number(val, 0, 100, &min_acc), i++;
        else if (!strcmp(a, "--save")) o.save = val, i++;
        else if (!strcmp(a, "--data")) dir = val, i++;
        else if (!strcmp(a, "--devices")) devices = val, i++;
        else if (!strcmp(a, "-d") || !strcmp(a, "--device")) device = val, i++;
        else bad = 1;
        if (bad) return fprintf(stderr, "cnn: bad argument '%s%s%s'\n%s", a, val ? " " : "", val ? val : "", usage), 2;
    }
    struct cnn_data train, test;
    if (cnn_data_read(dir, "train", &train)) return 1;
    if (cnn_data_read(dir, "t10k", &test)) return cnn_data_free(&train), 1;
    struct cnn_result r1 = {0}, rp = {0};
    int rc = 0;
    if (over_mpi) {
#ifdef CNN_HAVE_MPI
        rc = cnn_mpi_main(&train, &test, &o);
#else
        fprintf(stderr, "cnn: --mpi: this build has no MPI (configure with an MPI installed: openmpi-bin, libopenmpi-dev)\n");
        rc = 1;
#endif
        cnn_data_free(&train), cnn_data_free(&test);
        return rc;
    }
    if (devices) {
        clrun_group *g = NULL;
        clrun_status st = clrun_group_open(&g, devices);
        if (st) {
            fprintf(stderr, "cnn: %s\n", clrun_last_error(NULL));
            rc = st == CLRUN_NO_PLATFORM || st == CLRUN_NO_DEVICE ? 3 : 1;
        } else {
            const int P = (int)clrun_group_size(g);
            clrun_ctx *ctxs[64];
            int mixed = 0; /* several implementations: their compilers round differently */
            for (int i = 0; i < P && i < 64; i++) {
                ctxs[i] = clrun_group_ctx(g, (unsigned)i);
                const clrun_device_info *in = clrun_ctx_device(ctxs[i]), *first = clrun_ctx_device(ctxs[0]);
                printf("device %d: %s (%s)\n", i, in->name, in->platform_name);
                mixed |= strcmp(in->platform_name, first->platform_name) || strcmp(in->driver_version, first->driver_version);
            }
            printf("cnn        on device 0 alone:\n");
            rc = cnn_train(ctxs, 1, &train, &test, &o, &r1);
            if (!rc) printf("cnn        on all %d devices:\n", P), rc = cnn_train(ctxs, P > 64 ? 64 : P, &train, &test, &o, &rp);
            if (!rc) {
                const int n = r1.steps + r1.skipped;
                int same = r1.steps == rp.steps, first = -1;
                double worst = 0;
                for (int s = 0; s < n && r1.steps == rp.steps; s++) {
                    const double d = fabs(rp.losses[s] - r1.losses[s]) / fabs(r1.losses[s]);
                    if (d > worst) worst = d;
                    if (first < 0 && memcmp(&r1.losses[s], &rp.losses[s], sizeof(double))) same = 0, first = s;
                }
                if (mixed) /* the chain's order holds, the devices' arithmetic differs: within 1e-3 */
                    printf("cnn        loss curves on 1 and %d devices of several implementations: differ by at most %.3g (relative)%s", P,
                           worst, worst <= 1e-3 ? "" : ": MORE than 1e-3");
                else {
                    printf("cnn        loss curves on 1 and %d devices: %s", P, same ? "equal bit for bit" : "DIFFERENT");
                    if (!same && first >= 0) printf(" from step %d (%.9g against %.9g)", first + 1, r1.losses[first], rp.losses[first]);
                }
                printf("; %.0f against %.0f images/s (%.2fx)\n", r1.images_per_s, rp.images_per_s,
                       r1.images_per_s > 0 ? rp.images_per_s / r1.images_per_s : 0);
                rc = r1.steps != rp.steps || (mixed ? worst > 1e-3 : !same);
            }
            clrun_group_close(g);
        }
    } else {
        clrun_ctx *ctx = NULL;
        clrun_status st = clrun_open(&ctx, device);
        if (st) {
            fprintf(stderr, "cnn: %s\n", clrun_last_error(NULL));
            rc = st == CLRUN_NO_PLATFORM || st == CLRUN_NO_DEVICE ? 3 : 1;
        } else {
            printf("device: %s (%s)\n", clrun_ctx_device(ctx)->name, clrun_ctx_device(ctx)->platform_name);
            if (compare_ckpt) {
                struct cnn_result rc1 = {0};
                o.checkpoint = 0;
                rc = cnn_train(&ctx, 1, &train, &test, &o, &rc1);
                o.checkpoint = 1;
                if (!rc) rc = cnn_train(&ctx, 1, &train, &test, &o, &r1);
                if (!rc) {
                    const int n = r1.steps + r1.skipped,
                              same = n == rc1.steps + rc1.skipped && !memcmp(r1.losses, rc1.losses, sizeof(double) * (size_t)n);
                    printf("cnn        activation checkpointing: activations and gradients %.1f MB against %.1f MB (%.0f%% saved), "
                           "%.0f against %.0f images/s; loss curves %s\n",
                           r1.activation_mb, rc1.activation_mb, 100 * (1 - r1.activation_mb / rc1.activation_mb), r1.images_per_s,
                           rc1.images_per_s, same ? "equal bit for bit" : "DIFFERENT");
                    rc = !same;
                }
                free(rc1.losses);
            } else rc = cnn_train(&ctx, 1, &train, &test, &o, &r1);
            clrun_close(ctx);
        }
        rp = r1, r1.losses = NULL;
    }
    if (!rc && min_acc >= 0 && 100 * rp.test_accuracy < min_acc) {
        printf("cnn        test accuracy %.2f%% is below the %.2f%% asked for\n", 100 * rp.test_accuracy, min_acc);
        rc = 1;
    }
    free(r1.losses), free(rp.losses);
    cnn_data_free(&train), cnn_data_free(&test);
    return rc;
}
