/* multiply.c — the seed example through the C API: dest = a * b on 400 random floats, on the
 * default device ($CLRUN_DEVICE, else the best one), checked against the CPU.
 *
 *   usage: multiply [KERNEL.cl]     (default: the multiply.cl beside this example's source)
 *   exit:  0 when every element matches, 1 on a mismatch or a runtime failure, 3 with no device,
 *          4 when the kernel does not build. */
#include <clrun.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef MULTIPLY_CL
#define MULTIPLY_CL "multiply.cl"
#endif

#define N 400

static int exit_code(clrun_status st) { return st == CLRUN_NO_PLATFORM || st == CLRUN_NO_DEVICE ? 3 : st == CLRUN_BUILD_FAILED ? 4 : 1; }

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : MULTIPLY_CL;
    float a[N], b[N], dest[N];
    clrun_ctx *ctx = NULL;
    clrun_prog *prog = NULL;
    clrun_kernel *k = NULL;
    clrun_buf *bd = NULL, *ba = NULL, *bb = NULL;
    clrun_event *ev = NULL;
    clrun_status st;
    int rc = 1;

    srand((unsigned)time(NULL));
    for (int i = 0; i < N; i++) {
        a[i] = (float)(rand() / (RAND_MAX + 1.0) * 2.0 - 1.0);
        b[i] = (float)(rand() / (RAND_MAX + 1.0) * 2.0 - 1.0);
        dest[i] = NAN; /* poison: every element must be written */
    }
    if ((st = clrun_open(&ctx, NULL)) != CLRUN_OK) {
        fprintf(stderr, "multiply: %s\n", clrun_last_error(NULL));
        return exit_code(st);
    }
    printf("device: %s (%s)\n", clrun_ctx_device(ctx)->name, clrun_ctx_device(ctx)->platform_name);
    size_t bytes = sizeof a, global = N, local = N;
    if ((st = clrun_prog_file(ctx, path, NULL, &prog)) || (st = clrun_kernel_new(prog, "multiply_them", &k)) ||
        (st = clrun_buf_new(ctx, bytes, CLRUN_BUF_WRITE_ONLY, &bd)) || (st = clrun_buf_new(ctx, bytes, CLRUN_BUF_READ_ONLY, &ba)) ||
        (st = clrun_buf_new(ctx, bytes, CLRUN_BUF_READ_ONLY, &bb)) || (st = clrun_upload(ba, 0, a, bytes)) ||
        (st = clrun_upload(bb, 0, b, bytes)) || (st = clrun_arg_buf(k, 0, bd)) || (st = clrun_arg_buf(k, 1, ba)) ||
        (st = clrun_arg_buf(k, 2, bb)) || (st = clrun_launch_ev(k, 1, &global, &local, &ev)) || (st = clrun_download(bd, 0, dest, bytes))) {
        fprintf(stderr, "multiply: %s\n", clrun_last_error(ctx));
        rc = exit_code(st);
        goto done;
    }
    int bad = 0;
    for (int i = 0; i < N; i++)
        if (dest[i] != a[i] * b[i]) { /* one IEEE multiply: exact on every conforming device */
            if (bad++ < 5) fprintf(stderr, "multiply: dest[%d] = %.9g, expected %.9g\n", i, dest[i], a[i] * b[i]);
        }
    printf("multiply_them: %d floats, kernel %.3f ms, %s\n", N, clrun_event_ms(ev), bad ? "MISMATCH" : "matches the CPU");
    rc = bad ? 1 : 0;
done:
    clrun_event_free(ev);
    clrun_buf_free(bd);
    clrun_buf_free(ba);
    clrun_buf_free(bb);
    clrun_kernel_free(k);
    clrun_prog_free(prog);
    clrun_close(ctx);
    return rc;
}
