/* cli.c — `clrun op gemm A.npy B.npy -o C.npy`: float products (f32, f16, bf16), INT8 products
 * (int32, or f32 through the scales), 2:4 sparse A (--meta); on one device, a group or MPI ranks. */
#include "cli.h"

#ifdef CLRUN_HAVE_MPI
#include <clrun_mpi.h>
#endif

#include <stdlib.h>
#include <string.h>

/* gemm on int8 arrays: int32 out (clrun_gemm_s8), or f32 scaled by --scale-a/--scale-b. */
static int op_gemm_s8(const struct cli_npy *g)
{
    clrun_ctx *ctx = g->ctx;
    const clrun_array *A = &g->in[0], *B = &g->in[1];
    clrun_array R = {0}, S[2] = {{0}};
    clrun_buf *ba = NULL, *bb = NULL, *bc = NULL, *bs[2] = {NULL, NULL};
    clrun_status st = CLRUN_OK;
    int rc = 0;
    if (A->dtype != CLRUN_I8 || B->dtype != CLRUN_I8)
        return fprintf(stderr, "clrun op gemm: int8 products take both A and B as int8 (they are %s and %s)\n", clrun_dtype_name(A->dtype),
                       clrun_dtype_name(B->dtype)),
               EXIT_USAGE;
    if (A->ndim < 2 || A->ndim > 3 || B->ndim != A->ndim || (A->ndim == 3 && A->shape[0] != B->shape[0]))
        return fprintf(stderr, "clrun op gemm: A and B must both be 2-D matrices or both batches of as many\n"), EXIT_USAGE;
    if (g->alpha != 1.0f || g->beta != 0.0f || g->c0 || g->fast || g->bf16)
        return fprintf(stderr,
                       "clrun op gemm: int8 products take no --alpha, --beta, -c, --fast or --bf16 (scale with --scale-a/--scale-b)\n"),
               EXIT_USAGE;
    const size_t o3 = A->ndim == 3, batch = o3 ? A->shape[0] : 1, ar = A->shape[o3], ac = A->shape[o3 + 1], br = B->shape[o3],
                 bcn = B->shape[o3 + 1];
    const size_t M = g->ta ? ac : ar, K = g->ta ? ar : ac, KB = g->tb ? bcn : br, N = g->tb ? br : bcn;
    if (K != KB)
        return fprintf(stderr, "clrun op gemm: op(A) is %zu×%zu but op(B) is %zu×%zu: the inner dimensions differ\n", M, K, KB, N),
               EXIT_USAGE;
    const char *sf[2] = {g->scale_a, g->scale_b};
    const size_t want[2] = {M, N};
    for (int i = 0; i < 2; i++) {
        if (!sf[i]) continue;
        if (clrun_npy_read(sf[i], &S[i])) {
            rc = (fprintf(stderr, "clrun op gemm: %s\n", clrun_last_error(NULL)), EXIT_USAGE);
            goto done;
        }
        if (S[i].dtype != CLRUN_F32 || S[i].count != want[i]) {
            rc = (fprintf(stderr, "clrun op gemm: %s must hold %zu float32 scales (one per %s)\n", sf[i], want[i],
                          i ? "column of op(B)" : "row of op(A)"),
                  EXIT_USAGE);
            goto done;
        }
    }
    const int epi = sf[0] || sf[1];
    size_t shape[3] = {batch, M, N};
    if (clrun_array_new(&R, epi ? CLRUN_F32 : CLRUN_I32, A->ndim, o3 ? shape : shape + 1)) {
        rc = cli_fail("op", NULL, CLRUN_HOST_OUT_OF_MEMORY);
        goto done;
    }
    clrun_gemm_desc d;
    clrun_gemm_desc_init(&d, CLRUN_I8, batch, M, N, K, g->ta, g->tb);
    d.backend = g->backend;
    if (R.count) {
        if ((A->count && ((st = clrun_buf_new(ctx, A->bytes, 0, &ba)) || (st = clrun_upload(ba, 0, A->data, A->bytes)))) ||
            (B->count && ((st = clrun_buf_new(ctx, B->bytes, 0, &bb)) || (st = clrun_upload(bb, 0, B->data, B->bytes)))) ||
            (st = clrun_buf_new(ctx, R.bytes, 0, &bc)))
            goto fail;
        for (int i = 0; i < 2; i++)
            if (S[i].count && ((st = clrun_buf_new(ctx, S[i].bytes, 0, &bs[i])) || (st = clrun_upload(bs[i], 0, S[i].data, S[i].bytes))))
                goto fail;
        d.a = ba, d.b = bb, d.c = bc;
        const clrun_s8_epilogue e = {bs[0], bs[1], NULL, 0};
        if ((st = clrun_gemm_s8(ctx, &d, epi ? &e : NULL)) || (st = clrun_download(bc, 0, R.data, R.bytes))) goto fail;
    }
    if (clrun_npy_write(g->out, &R)) rc = cli_fail("op", NULL, CLRUN_IO_ERROR);
    else {
        char note[128];
        snprintf(note, sizeof note, "%s, %s%zu×%zu, from int8 inputs", epi ? "f32" : "int32", o3 ? "batch × " : "", M, N);
        cli_op_wrote(g, "gemm", &R, note);
    }
    goto done;
fail:
    rc = st == CLRUN_INVALID_ARG ? (fprintf(stderr, "clrun op gemm: %s\n", clrun_last_error(ctx)), EXIT_USAGE) : cli_fail("op", ctx, st);
done:
    clrun_buf_free(ba), clrun_buf_free(bb), clrun_buf_free(bc), clrun_buf_free(bs[0]), clrun_buf_free(bs[1]);
    clrun_array_free(&R), clrun_array_free(&S[0]), clrun_array_free(&S[1]);
    return rc;
}

static int op_gemm(const struct cli_npy *g)
{
    clrun_ctx *ctx = g->ctx;
    clrun_group *grp = g->grp;
    clrun_array *in = g->in;
    if (g->meta) {
        if (grp || cli_mpi_size() > 1) return fprintf(stderr, "clrun op gemm: sparse products run on one device (-d)\n"), EXIT_USAGE;
        if (g->ta || g->beta != 0.0f || g->c0 || g->fast || g->scale_a || g->scale_b)
            return fprintf(stderr, "clrun op gemm: with --meta (a 2:4 sparse A) take --tb, --alpha, --bf16 and --backend only\n"),
                   EXIT_USAGE;
        return cli_gemm_sparse(ctx, &in[0], &in[1], g->meta, g->tb, g->alpha, g->bf16, g->backend, g->out);
    }
    if (in[0].dtype == CLRUN_I8 || in[1].dtype == CLRUN_I8 || g->scale_a || g->scale_b) {
        if (grp || cli_mpi_size() > 1) return fprintf(stderr, "clrun op gemm: int8 products run on one device (-d)\n"), EXIT_USAGE;
        return op_gemm_s8(g);
    }
    const clrun_array *A = &in[0], *B = &in[1];
    clrun_array C0 = {0}, R = {0};
    clrun_buf *ba = NULL, *bb = NULL, *bc = NULL;
    clrun_status st;
    int rc = EXIT_OK;
    /* float32, float16, or bf16 patterns in uint16 with --bf16: both the same; C is float32 */
    const clrun_dtype want = g->bf16 ? CLRUN_U16 : A->dtype == CLRUN_F16 ? CLRUN_F16 : CLRUN_F32;
    const clrun_dtype type = g->bf16 ? CLRUN_BF16 : want == CLRUN_F16 ? CLRUN_F16 : CLRUN_F32;
    if (A->dtype != want || B->dtype != want) {
        if (g->bf16)
            fprintf(stderr, "clrun op gemm: with --bf16, A and B must be uint16 arrays of bf16 patterns (they are %s and %s)\n",
                    clrun_dtype_name(A->dtype), clrun_dtype_name(B->dtype));
        else
            fprintf(stderr, "clrun op gemm: A and B must both be float32 or both float16 (they are %s and %s)\n",
                    clrun_dtype_name(A->dtype), clrun_dtype_name(B->dtype));
        return EXIT_USAGE;
    }
    if (A->ndim < 2 || A->ndim > 3 || B->ndim != A->ndim) {
        fprintf(stderr, "clrun op gemm: A and B must both be 2-D matrices or both 3-D batches (they have %u and %u dimensions)\n", A->ndim,
                B->ndim);
        return EXIT_USAGE;
    }
    size_t batch = A->ndim == 3 ? A->shape[0] : 1, o3 = A->ndim == 3;
    if (o3 && B->shape[0] != batch) {
        fprintf(stderr, "clrun op gemm: A has %zu matrices, B has %zu\n", batch, B->shape[0]);
        return EXIT_USAGE;
    }
    size_t ar = A->shape[o3], ac = A->shape[o3 + 1], br = B->shape[o3], bcn = B->shape[o3 + 1];
    size_t M = g->ta ? ac : ar, K = g->ta ? ar : ac, KB = g->tb ? bcn : br, N = g->tb ? br : bcn;
    if (K != KB) {
        fprintf(stderr, "clrun op gemm: op(A) is %zu×%zu but op(B) is %zu×%zu: the inner dimensions differ\n", M, K, KB, N);
        return EXIT_USAGE;
    }
    size_t shape[3] = {batch, M, N};
    if (clrun_array_new(&R, CLRUN_F32, A->ndim, o3 ? shape : shape + 1) != CLRUN_OK) return cli_fail("op", NULL, CLRUN_HOST_OUT_OF_MEMORY);
    if (g->c0) {
        if (clrun_npy_read(g->c0, &C0) != CLRUN_OK) {
            rc = (fprintf(stderr, "clrun op gemm: %s\n", clrun_last_error(NULL)), EXIT_USAGE);
            goto done;
        }
        if (C0.dtype != CLRUN_F32 || C0.ndim != R.ndim ||
            memcmp(C0.shape, R.shape, R.ndim * sizeof *R.shape) != 0) { /* the shape, not only the count */
            rc =
                (fprintf(stderr, "clrun op gemm: -c %s must be float32 of shape %s%zu×%zu\n", g->c0, o3 ? "batch×" : "", M, N), EXIT_USAGE);
            goto done;
        }
        memcpy(R.data, C0.data, R.bytes);
    } else if (g->beta != 0.0f) {
        rc = (fprintf(stderr, "clrun op gemm: --beta needs the C to scale (-c C0.npy)\n"), EXIT_USAGE);
        goto done;
    }
    clrun_gemm_desc d;
    clrun_gemm_desc_init(&d, type, batch, M, N, K, g->ta, g->tb);
    d.alpha = g->alpha, d.beta = g->beta, d.backend = g->backend, d.fast = g->fast;
#ifdef CLRUN_HAVE_MPI
    if (R.count && cli_mpi_size() > 1) { /* under mpirun: each product over the ranks (op_gemm_follow on the others) */
        const size_t es = clrun_dtype_size(type);
        clrun_gemm_desc e = d;
        e.batch = 0;
        for (size_t i = 0; i < batch; i++) {
            cli_mpi_bcast_int(1); /* another product follows */
            if ((st = clrun_mpi_gemm(MPI_COMM_WORLD, 0, ctx, &e, (char *)A->data + i * ar * ac * es, (char *)B->data + i * br * bcn * es,
                                     (float *)R.data + i * M * N))) {
                rc = (fprintf(stderr, "clrun op gemm: the product failed on a rank (%s; its text is above)\n", clrun_status_str(st)),
                      cli_exit_code(st));
                goto done;
            }
        }
    } else
#endif
        if (R.count && grp) { /* split over the group's devices, one batch after another */
        const size_t es = clrun_dtype_size(type);
        clrun_gemm_desc e = d;
        e.batch = 0;
        for (size_t i = 0; i < batch; i++)
            if ((st = clrun_group_gemm(grp, &e, (char *)A->data + i * ar * ac * es, (char *)B->data + i * br * bcn * es,
                                       (float *)R.data + i * M * N))) {
                rc = st == CLRUN_INVALID_ARG ? (fprintf(stderr, "clrun op gemm: %s\n", clrun_last_error(NULL)), EXIT_USAGE)
                                             : cli_fail("op", NULL, st); /* a bad CLRUN_GROUP_WEIGHTS is bad input: 2 */
                goto done;
            }
    } else if (R.count) {
        if ((st = clrun_buf_new(ctx, R.bytes, 0, &bc)) || (st = clrun_upload(bc, 0, R.data, R.bytes))) goto fail;
        if (A->count && ((st = clrun_buf_new(ctx, A->bytes, 0, &ba)) || (st = clrun_upload(ba, 0, A->data, A->bytes)))) goto fail;
        if (B->count && ((st = clrun_buf_new(ctx, B->bytes, 0, &bb)) || (st = clrun_upload(bb, 0, B->data, B->bytes)))) goto fail;
        d.a = ba, d.b = bb, d.c = bc;
        if ((st = clrun_gemm(ctx, &d)) || (st = clrun_download(bc, 0, R.data, R.bytes))) goto fail;
    }
    if (clrun_npy_write(g->out, &R) != CLRUN_OK) {
        rc = cli_fail("op", NULL, CLRUN_IO_ERROR);
        goto done;
    }
    char note[128];
    snprintf(note, sizeof note, "f32, %s%zu×%zu%s", o3 ? "batch × " : "", M, N,
             type == CLRUN_F32   ? ""
             : type == CLRUN_F16 ? ", from f16 inputs"
                                 : ", from bf16 inputs");
    cli_op_wrote(g, "gemm", &R, note);
    if (grp) { /* which device took which rows */
        const unsigned nd = clrun_group_size(grp);
        size_t *rows = calloc(nd, sizeof *rows);
        if (rows && clrun_group_split_rows(grp, M, rows) == CLRUN_OK)
            for (unsigned i = 0; i < nd; i++)
                fprintf(cli_notes(g->out), "  device %u, %s: %zu of %zu rows\n", i, clrun_ctx_device(clrun_group_ctx(grp, i))->name,
                        rows[i], M);
        free(rows);
    }
    goto done;
fail:
    rc = st == CLRUN_UNSUPPORTED ? (fprintf(stderr, "clrun op gemm: %s\n", clrun_last_error(ctx)), EXIT_USAGE) : cli_fail("op", ctx, st);
done:
    clrun_buf_free(ba), clrun_buf_free(bb), clrun_buf_free(bc);
    clrun_array_free(&C0), clrun_array_free(&R);
    return rc;
}

/* Under mpirun, the ranks but 0: their rows of each product rank 0 sends, until it says the end. */
static int follow(clrun_ctx *ctx)
{
    int rc = 0;
#ifdef CLRUN_HAVE_MPI
    clrun_status st;
    for (int msg; (msg = cli_mpi_bcast_int(0)) == 1;)
        if ((st = clrun_mpi_gemm(MPI_COMM_WORLD, 0, ctx, NULL, NULL, NULL, NULL))) rc = cli_exit_code(st);
#else
    (void)ctx;
#endif
    return rc;
}

const struct cli_cmd cli_verbs_gemm[] = {
    {.name = "gemm",
     .what = "alpha * op(A) @ op(B) + beta * C0 in float32, A and B float32 or float16 (or bf16 with --bf16);\n"
             "             3-D inputs are batches (--ta --tb --beta -c)",
     .nin = 2,
     .npy = op_gemm,
     .follow = follow},
    {0},
};
