/* consumer.c — a program outside clrun's tree that uses the installed (or subproject) libclrun: a
 * GEMM on the default device, checked on the host. tests/consumers/run.sh builds it through Meson
 * (pkg-config and a subproject wrap) and CMake (find_package). Prints "consumer: ok" and exits 0. */
#include <clrun.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    enum { M = 37, N = 29, K = 41 };
    static float a[M * K], b[K * N], c[M * N];
    clrun_ctx *ctx = NULL;
    clrun_buf *ba = NULL, *bb = NULL, *bc = NULL;
    clrun_status st;
    if (strcmp(clrun_version(), CLRUN_VERSION_STRING) != 0) {
        fprintf(stderr, "consumer: header %s, library %s\n", CLRUN_VERSION_STRING, clrun_version());
        return 1;
    }
    for (int i = 0; i < M * K; i++) a[i] = (float)(i % 7 - 3);
    for (int i = 0; i < K * N; i++) b[i] = (float)(i % 5 - 2);
    clrun_gemm_desc d = {0};
    d.m = M, d.n = N, d.k = K, d.alpha = 1, d.lda = K, d.ldb = N, d.ldc = N;
    if ((st = clrun_open(&ctx, NULL)) || (st = clrun_buf_new(ctx, sizeof a, 0, &ba)) || (st = clrun_buf_new(ctx, sizeof b, 0, &bb)) ||
        (st = clrun_buf_new(ctx, sizeof c, 0, &bc)) || (st = clrun_upload(ba, 0, a, sizeof a)) || (st = clrun_upload(bb, 0, b, sizeof b)) ||
        (d.a = ba, d.b = bb, d.c = bc, st = clrun_gemm(ctx, &d)) || (st = clrun_download(bc, 0, c, sizeof c))) {
        fprintf(stderr, "consumer: %s\n", clrun_last_error(ctx));
        return 1;
    }
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float s = 0; /* small integers: exact in any order */
            for (int p = 0; p < K; p++) s += a[i * K + p] * b[p * N + j];
            if (c[i * N + j] != s) {
                fprintf(stderr, "consumer: C[%d][%d] = %g, want %g\n", i, j, c[i * N + j], s);
                return 1;
            }
        }
    printf("consumer: ok (clrun %s, %s on %s)\n", clrun_version(), clrun_gemm_backend_name(clrun_gemm_resolve(ctx, &d)),
           clrun_ctx_device(ctx)->name);
    clrun_buf_free(ba), clrun_buf_free(bb), clrun_buf_free(bc);
    clrun_close(ctx);
    return 0;
}
