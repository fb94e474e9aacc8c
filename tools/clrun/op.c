/* op.c — `clrun op NAME IN.npy... -o OUT.npy`: the kernel library's ops on NumPy files. */
#include "cli.h"

#ifdef CLRUN_HAVE_MPI
#include <clrun_mpi.h>
#endif

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct op {
    const char *name, *what;
    int nin;
    int kind;         /* 0 element-wise, 1 reduction */
    clrun_vec_op vop; /* element-wise */
};

struct op_opts {
    const char *out;
    float alpha;
    int json;
};

/* After OUT is written: "wrote OUT (note)" for people, or with --json one record
 * {"op", "output", "dtype", "shape"}; on stderr when OUT is standard output. */
static void wrote(const struct op_opts *o, const char *op, const clrun_array *r, const char *note)
{
    FILE *f = cli_notes(o->out);
    if (!o->json) {
        fprintf(f, "wrote %s (%s)\n", o->out, note);
        return;
    }
    fputs("{\"op\": ", f);
    cli_json_str(f, op);
    fputs(", \"output\": ", f);
    cli_json_str(f, o->out);
    fprintf(f, ", \"dtype\": \"%s\", \"shape\": [", clrun_dtype_name(r->dtype));
    for (unsigned i = 0; i < r->ndim; i++) fprintf(f, "%s%zu", i ? ", " : "", r->shape[i]);
    fputs("]}\n", f);
}

static int same_shape(const clrun_array *a, const clrun_array *b)
{
    return a->ndim == b->ndim && memcmp(a->shape, b->shape, sizeof a->shape) == 0;
}

/* Upload the inputs, run the op, write or print the result. */
static int op_run(clrun_ctx *ctx, clrun_group *grp, const struct op *op, clrun_array *in, int nin, const struct op_opts *o)
{
    clrun_buf *b[4] = {NULL, NULL, NULL, NULL};
    clrun_array r = {0};
    clrun_status st = CLRUN_OK;
    int rc = EXIT_OK;
    clrun_dtype t = in[0].dtype;
    for (int i = 0; i < nin; i++) {
        if (in[i].dtype != CLRUN_F32 && in[i].dtype != CLRUN_F16) {
            fprintf(stderr, "clrun op %s: input %d is %s; ops take float32 or float16 arrays\n", op->name, i + 1,
                    clrun_dtype_name(in[i].dtype));
            return EXIT_USAGE;
        }
        if (in[i].dtype != t) {
            fprintf(stderr, "clrun op %s: the inputs mix %s and %s\n", op->name, clrun_dtype_name(t), clrun_dtype_name(in[i].dtype));
            return EXIT_USAGE;
        }
        if (!same_shape(&in[0], &in[i])) {
            fprintf(stderr, "clrun op %s: the inputs' shapes differ (%zu and %zu elements)\n", op->name, in[0].count, in[i].count);
            return EXIT_USAGE;
        }
    }
    size_t n = in[0].count, bytes = in[0].bytes ? in[0].bytes : 4;
    double d = 0;
    float f = 0;
    size_t idx = 0;
    const char *name = op->name;
    if (grp) { /* ranges over the group's devices */
        if (op->kind == 0) {
            if (clrun_array_new(&r, t, in[0].ndim, in[0].shape) != CLRUN_OK) return cli_fail("op", NULL, CLRUN_HOST_OUT_OF_MEMORY);
            if ((st = clrun_group_vec(grp, op->vop, t, n, o->alpha, r.data, in[0].data, nin > 1 ? in[1].data : NULL,
                                      nin > 2 ? in[2].data : NULL)))
                rc = st == CLRUN_INVALID_ARG ? (fprintf(stderr, "clrun op %s: %s\n", name, clrun_last_error(NULL)), EXIT_USAGE)
                                             : cli_fail("op", NULL, st); /* a bad CLRUN_GROUP_WEIGHTS is bad input: 2 */
            else if (clrun_npy_write(o->out, &r) != CLRUN_OK) rc = cli_fail("op", NULL, CLRUN_IO_ERROR);
            else {
                char note[96];
                snprintf(note, sizeof note, "%s, %zu elements", clrun_dtype_name(t), n);
                wrote(o, name, &r, note);
            }
            clrun_array_free(&r);
            return rc;
        }
        if ((st = clrun_group_reduce(grp, name, t, in[0].data, nin > 1 ? in[1].data : NULL, n, &d, &idx)))
            return st == CLRUN_INVALID_ARG ? (fprintf(stderr, "clrun op %s: %s\n", name, clrun_last_error(NULL)), EXIT_USAGE)
                                           : cli_fail("op", NULL, st);
        goto print;
    }
    for (int i = 0; i < nin && st == CLRUN_OK; i++)
        if ((st = clrun_buf_new(ctx, bytes, 0, &b[i])) == CLRUN_OK && n) st = clrun_upload(b[i], 0, in[i].data, in[i].bytes);
    if (st == CLRUN_OK && op->kind == 0) st = clrun_buf_new(ctx, bytes, 0, &b[3]);
    if (st != CLRUN_OK) {
        rc = cli_fail("op", ctx, st);
        goto done;
    }
    if (op->kind == 0) {
        if (clrun_array_new(&r, t, in[0].ndim, in[0].shape) != CLRUN_OK) {
            rc = cli_fail("op", NULL, CLRUN_HOST_OUT_OF_MEMORY);
            goto done;
        }
        if ((st = clrun_vec(ctx, op->vop, t, n, o->alpha, b[3], 0, b[0], 0, b[1] ? b[1] : b[0], 0, b[2] ? b[2] : b[0], 0)) ||
            (n && (st = clrun_download(b[3], 0, r.data, r.bytes)))) {
            rc = cli_fail("op", ctx, st);
            goto done;
        }
        if (clrun_npy_write(o->out, &r) != CLRUN_OK) {
            rc = cli_fail("op", NULL, CLRUN_IO_ERROR);
            goto done;
        }
        char note[96];
        snprintf(note, sizeof note, "%s, %zu elements", clrun_dtype_name(t), n);
        wrote(o, name, &r, note);
        goto done;
    }
    if (!strcmp(name, "sum")) st = clrun_sum(ctx, t, b[0], 0, n, &d);
    else if (!strcmp(name, "dot")) st = clrun_dot(ctx, t, b[0], 0, b[1], 0, n, &d);
    else if (!strcmp(name, "norm2")) st = clrun_norm2(ctx, t, b[0], 0, n, &d);
    else if (!strcmp(name, "max")) st = clrun_max(ctx, t, b[0], 0, n, &f), d = f;
    else if (!strcmp(name, "min")) st = clrun_min(ctx, t, b[0], 0, n, &f), d = f;
    else st = clrun_argmax(ctx, t, b[0], 0, n, &idx);
    if (st != CLRUN_OK) {
        rc = st == CLRUN_INVALID_ARG ? (fprintf(stderr, "clrun op %s: %s\n", name, clrun_last_error(ctx)), EXIT_USAGE)
                                     : cli_fail("op", ctx, st);
        goto done;
    }
print:
    if (!strcmp(name, "argmax")) {
        if (o->json) printf("{\"op\": \"argmax\", \"n\": %zu, \"index\": %zu}\n", n, idx);
        else printf("%zu\n", idx);
    } else if (o->json) {
        printf("{\"op\": \"%s\", \"n\": %zu, \"value\": ", name, n);
        if (isfinite(d)) printf("%.17g}\n", d);
        else printf("\"%s\"}\n", isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
    } else {
        printf("%.17g\n", d);
    }
done:
    for (int i = 0; i < 4; i++) clrun_buf_free(b[i]);
    clrun_array_free(&r);
    return rc;
}

/* gemm: A (M×K, or K×M with --ta; a leading batch dimension makes it a batch), B likewise. */
struct gemm_opts {
    int ta, tb;
    float alpha, beta;
    const char *c0;
    clrun_gemm_backend backend;
    int fast, bf16;
    const char *scale_a, *scale_b; /* int8: f32 .npy of op(A)'s row and op(B)'s column scales */
    const char *meta;              /* 2:4 sparse A: its metadata .npy (A holds the compressed values) */
};

/* gemm on int8 arrays: int32 out (clrun_gemm_s8), or f32 scaled by --scale-a/--scale-b. */
static int op_gemm_s8(clrun_ctx *ctx, clrun_array *A, clrun_array *B, const struct op_opts *o, const struct gemm_opts *g)
{
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
    if (o->alpha != 1.0f || g->beta != 0.0f || g->c0 || g->fast || g->bf16)
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
    clrun_gemm_desc d = {0};
    d.trans_a = g->ta, d.trans_b = g->tb, d.m = M, d.n = N, d.k = K, d.alpha = 1, d.type = CLRUN_I8, d.batch = batch,
    d.backend = g->backend;
    d.lda = ac, d.stride_a = ar * ac, d.ldb = bcn, d.stride_b = br * bcn, d.ldc = N, d.stride_c = M * N;
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
    if (clrun_npy_write(o->out, &R)) rc = cli_fail("op", NULL, CLRUN_IO_ERROR);
    else {
        char note[128];
        snprintf(note, sizeof note, "%s, %s%zu×%zu, from int8 inputs", epi ? "f32" : "int32", o3 ? "batch × " : "", M, N);
        wrote(o, "gemm", &R, note);
    }
    goto done;
fail:
    rc = st == CLRUN_INVALID_ARG ? (fprintf(stderr, "clrun op gemm: %s\n", clrun_last_error(ctx)), EXIT_USAGE) : cli_fail("op", ctx, st);
done:
    clrun_buf_free(ba), clrun_buf_free(bb), clrun_buf_free(bc), clrun_buf_free(bs[0]), clrun_buf_free(bs[1]);
    clrun_array_free(&R), clrun_array_free(&S[0]), clrun_array_free(&S[1]);
    return rc;
}

static int op_gemm(clrun_ctx *ctx, clrun_group *grp, clrun_array *in, const struct op_opts *o, const struct gemm_opts *g)
{
    if (g->meta) {
        if (grp || cli_mpi_size() > 1) return fprintf(stderr, "clrun op gemm: sparse products run on one device (-d)\n"), EXIT_USAGE;
        if (g->ta || g->beta != 0.0f || g->c0 || g->fast || g->scale_a || g->scale_b)
            return fprintf(stderr, "clrun op gemm: with --meta (a 2:4 sparse A) take --tb, --alpha, --bf16 and --backend only\n"),
                   EXIT_USAGE;
        return cli_gemm_sparse(ctx, &in[0], &in[1], g->meta, g->tb, g->alpha, g->bf16, g->backend, o->out);
    }
    if (in[0].dtype == CLRUN_I8 || in[1].dtype == CLRUN_I8 || g->scale_a || g->scale_b) {
        if (grp || cli_mpi_size() > 1) return fprintf(stderr, "clrun op gemm: int8 products run on one device (-d)\n"), EXIT_USAGE;
        return op_gemm_s8(ctx, &in[0], &in[1], o, g);
    }
    clrun_array *A = &in[0], *B = &in[1], C0 = {0}, R = {0};
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
    clrun_gemm_desc d = {g->ta, g->tb, M,        N,    K, g->alpha, g->beta, NULL,  0,          ac,      ar * ac, NULL,
                         0,     bcn,   br * bcn, NULL, 0, N,        M * N,   batch, g->backend, g->fast, type,    0};
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
    if (clrun_npy_write(o->out, &R) != CLRUN_OK) {
        rc = cli_fail("op", NULL, CLRUN_IO_ERROR);
        goto done;
    }
    char note[128];
    snprintf(note, sizeof note, "f32, %s%zu×%zu%s", o3 ? "batch × " : "", M, N,
             type == CLRUN_F32   ? ""
             : type == CLRUN_F16 ? ", from f16 inputs"
                                 : ", from bf16 inputs");
    wrote(o, "gemm", &R, note);
    if (grp) { /* which device took which rows */
        const unsigned nd = clrun_group_size(grp);
        size_t *rows = calloc(nd, sizeof *rows);
        if (rows && clrun_group_split_rows(grp, M, rows) == CLRUN_OK)
            for (unsigned i = 0; i < nd; i++)
                fprintf(cli_notes(o->out), "  device %u, %s: %zu of %zu rows\n", i, clrun_ctx_device(clrun_group_ctx(grp, i))->name,
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

static const struct op ops[] = {
    {"mul", "a * b, element-wise", 2, 0, CLRUN_MUL},
    {"add", "a + b", 2, 0, CLRUN_ADD},
    {"sub", "a - b", 2, 0, CLRUN_SUB},
    {"div", "a / b", 2, 0, CLRUN_DIV},
    {"axpy", "alpha * x + y (--alpha)", 2, 0, CLRUN_AXPY},
    {"scale", "alpha * x (--alpha)", 1, 0, CLRUN_SCALE},
    {"fma", "a * b + c, one rounding", 3, 0, CLRUN_FMA},
    {"sum", "sum of the elements (printed)", 1, 1, CLRUN_MUL},
    {"dot", "sum of a * b (printed)", 2, 1, CLRUN_MUL},
    {"norm2", "Euclidean norm (printed)", 1, 1, CLRUN_MUL},
    {"max", "largest element; NaN if any is NaN (printed)", 1, 1, CLRUN_MUL},
    {"min", "smallest element; NaN if any is NaN (printed)", 1, 1, CLRUN_MUL},
    {"argmax", "index of the first largest element, or of the first NaN (printed)", 1, 1, CLRUN_MUL},
    {"gemm",
     "alpha * op(A) @ op(B) + beta * C0 in float32, A and B float32 or float16 (or bf16 with --bf16);\n"
     "             3-D inputs are batches (--ta --tb --beta -c)",
     2, 2, CLRUN_MUL},
};

static void list_ops(FILE *f)
{
    fprintf(f, "ops (float32 or float16 .npy inputs; element-wise ops write -o OUT.npy of the same type and\n"
               "shape, reductions print their value; f16 data is computed in f32):\n");
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) fprintf(f, "  %-8s %s\n", ops[i].name, ops[i].what);
    fprintf(f, "  %-8s Canny edges of PNG, JPEG and PGM/PPM images, as cv2.Canny (clrun op canny --help; name it first)\n", "canny");
    fprintf(f, "  %-8s float32 <-> float16 / bfloat16 (--to; clrun op cast --help; name it first)\n", "cast");
    fprintf(f, "  %-8s float32 -> int8, PyTorch's qint8 (clrun op quantize --help)\n", "quantize");
    fprintf(f, "  %-8s int8 -> float32 (clrun op dequantize --help)\n", "dequantize");
    fprintf(f, "  %-8s prune to 2:4 and compress: values + metadata (clrun op sparsify --help)\n", "sparsify");
    fprintf(f, "  %-8s 2:4 values + metadata back to the dense matrix (clrun op sparsify --help)\n", "densify");
}

static const char *op_help =
    "usage: clrun op NAME IN.npy... [-o OUT.npy] [--alpha X] [--json] [-d SPEC | --devices GROUP]\n\n"
    "Runs one of the kernel library's ops on NumPy files.\n\n"
    "  -o, --output FILE   where an element-wise result goes (.npy)\n"
    "  --alpha X           the scalar of axpy and scale (default 1)\n"
    "  --json              reductions: print {\"op\", \"n\", \"value\"} (or \"index\"); ops that write OUT:\n"
    "                      {\"op\", \"output\", \"dtype\", \"shape\"} instead of the \"wrote\" line\n"
    "  --ta, --tb          gemm: use A, B transposed\n"
    "  --beta Y -c C0.npy  gemm: add Y times C0 (default beta 0, and then C0 is not needed)\n"
    "  --backend NAME      gemm (float, int8 and --meta products): auto (default: the tensor cores where\n"
    "                      they are, else for f32 the tuning file's fastest, see clrun tune), kernel\n"
    "                      (clrun's kernel for the device), gpu-kernel (the GPU-shaped kernels),\n"
    "                      cpu-kernel (the CPU-shaped ones), clblast (f32 only), tensor (NVIDIA tensor\n"
    "                      cores: the first of wgmma and mma.sync that runs here), wgmma (Hopper; f16,\n"
    "                      bf16, int8), mma.sync (f16, bf16, int8, 2:4, and 3xTF32 for f32)\n"
    "  --bf16              gemm: A and B are uint16 arrays of bf16 patterns (as clrun op cast writes)\n"
    "                      gemm on int8 arrays: exact int32 results (clrun_gemm_s8), or with\n"
    "  --scale-a F.npy     f32: each row i of op(A) times F[i] (M float32 scales) ...\n"
    "  --scale-b F.npy     ... and each column j of op(B) times F[j] (N scales): an INT8 linear layer\n"
    "  --meta META.npy     gemm: A is 2:4 compressed values with this metadata (clrun op sparsify)\n"
    "  --fast              gemm: one running sum per element (as a plain loop, a few % faster) instead\n"
    "                      of per-slice partial sums (about 3x more accurate)\n"
    "  -d, --device SPEC   device (default: $CLRUN_DEVICE, else the best)\n"
    "  --devices GROUP     split over a group of devices (all, gpu, cpu, or selection strings 0,2; default\n"
    "                      $CLRUN_DEVICES) by each device's measured speed: gemm in blocks of 128 rows of C\n"
    "                      (bit-identical to one device on devices of one kind); element-wise ops and\n"
    "                      reductions in ranges of 4096 elements (element-wise: bit-identical; sums:\n"
    "                      combined in double, the same error bound)\n"
    "  --timeout S         end the command (exit 6) when it runs past S seconds (default 600, 0: none)\n"
    "  --help              this text\n\n"
    "Exit codes: 0; 1 runtime failure; 2 bad command line or input file; 3 no device; 4 kernel build failure; 6 timeout.\n\n";

static const char *cast_help =
    "usage: clrun op cast IN.npy --to f16|bf16|f32 -o OUT.npy [-d SPEC]\n\n"
    "Converts on the device, rounding to nearest even: float32 to float16 (IEEE binary16; |x| >= 65520\n"
    "becomes inf, NaN stays NaN) or to bfloat16 (any NaN becomes 0x7FC0, as PyTorch), and back to\n"
    "float32. NumPy has no bfloat16: bf16 data is stored as uint16 .npy (the top half of each float32\n"
    "pattern), and a uint16 input to --to f32 is read as bf16. The shape is kept.\n\n"
    "Exit codes: 0; 1 runtime failure; 2 bad command line or input file; 3 no device; 4 kernel build failure; 6 timeout.\n";

/* `clrun op cast`: argv[1] is "cast". */
static int cmd_op_cast(int argc, char **argv)
{
    const char *spec = NULL, *out = NULL, *to = NULL;
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"device", required_argument, NULL, 'd'},
                                         {"to", required_argument, NULL, 't'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    int c;
    struct cli_opts opt = {.sub = "op cast", .help = cast_help, .first = 2};
    while ((c = cli_next_opt(&opt, argc, argv, "o:d:h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        if (c == 'o') out = optarg;
        else if (c == 'd') spec = optarg;
        else if (c == 't') to = optarg;
    }
    if (argc - optind != 1) return cli_usage_error("op cast", "cast takes one input file, %d given", argc - optind);
    if (!to) return cli_usage_error("op cast", "no target type (--to f16, bf16 or f32)");
    if (!out) return cli_usage_error("op cast", "no output file (-o OUT.npy)");
    clrun_dtype tt;
    if (!strcmp(to, "f16") || !strcmp(to, "float16")) tt = CLRUN_F16;
    else if (!strcmp(to, "bf16") || !strcmp(to, "bfloat16")) tt = CLRUN_BF16;
    else if (!strcmp(to, "f32") || !strcmp(to, "float32")) tt = CLRUN_F32;
    else return cli_usage_error("op cast", "--to wants f16, bf16 or f32, not '%s'", to);
    clrun_array in = {0}, res = {0};
    if (clrun_npy_read(argv[optind], &in) != CLRUN_OK) {
        fprintf(stderr, "clrun op cast: %s\n", clrun_last_error(NULL));
        return EXIT_USAGE;
    }
    const clrun_dtype ft = in.dtype == CLRUN_U16 ? CLRUN_BF16 : in.dtype; /* .npy carries bf16 as uint16 */
    if ((in.dtype != CLRUN_F32 && in.dtype != CLRUN_F16 && in.dtype != CLRUN_U16) || (ft == CLRUN_F32) == (tt == CLRUN_F32)) {
        const clrun_dtype have = in.dtype; /* clrun_array_free clears it */
        clrun_array_free(&in);
        return cli_usage_error("op cast", "%s converts float32 to f16 or bf16, and float16 or uint16 (bf16) to f32; the input is %s",
                               argv[optind], clrun_dtype_name(have));
    }
    clrun_ctx *ctx = NULL;
    clrun_buf *a = NULL, *b = NULL;
    clrun_status st = CLRUN_OK;
    int rc = cli_open("op cast", spec, &ctx);
    if (!rc && (st = clrun_array_new(&res, tt == CLRUN_BF16 ? CLRUN_U16 : tt, in.ndim, in.shape))) rc = cli_fail("op cast", NULL, st);
    if (!rc && in.count &&
        ((st = clrun_buf_new(ctx, in.bytes, 0, &a)) || (st = clrun_buf_new(ctx, res.bytes, 0, &b)) ||
         (st = clrun_upload(a, 0, in.data, in.bytes)) || (st = clrun_cast(ctx, a, 0, ft, b, 0, tt, in.count)) ||
         (st = clrun_download(b, 0, res.data, res.bytes))))
        rc = cli_fail("op cast", ctx, st);
    if (!rc && (st = clrun_npy_write(out, &res))) rc = (fprintf(stderr, "clrun op cast: %s\n", clrun_last_error(NULL)), cli_exit_code(st));
    if (!rc) fprintf(cli_notes(out), "wrote %s\n", out);
    clrun_buf_free(a), clrun_buf_free(b);
    clrun_array_free(&in), clrun_array_free(&res);
    clrun_close(ctx);
    return rc;
}

int cmd_op(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "canny") == 0) return cmd_op_canny(argc, argv); /* images, not .npy */
    if (argc > 1 && strcmp(argv[1], "cast") == 0) return cmd_op_cast(argc, argv);
    if (argc > 1 && (strcmp(argv[1], "quantize") == 0 || strcmp(argv[1], "dequantize") == 0))
        return cmd_op_quant(argc, argv, argv[1][0] == 'q');
    if (argc > 1 && (strcmp(argv[1], "sparsify") == 0 || strcmp(argv[1], "densify") == 0)) return cmd_op_sparse(argc, argv);
    const char *spec = NULL, *devices = NULL;
    struct op_opts o = {NULL, 1.0f, 0};
    struct gemm_opts g = {0, 0, 1.0f, 0.0f, NULL, CLRUN_GEMM_AUTO, 0, 0, NULL, NULL, NULL};
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"device", required_argument, NULL, 'd'},
                                         {"alpha", required_argument, NULL, 'a'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"ta", no_argument, NULL, 'T'},
                                         {"tb", no_argument, NULL, 'U'},
                                         {"beta", required_argument, NULL, 'B'},
                                         {"backend", required_argument, NULL, 'K'},
                                         {"fast", no_argument, NULL, 'F'},
                                         {"bf16", no_argument, NULL, 'H'},
                                         {"devices", required_argument, NULL, 'G'},
                                         {"scale-a", required_argument, NULL, 'X'},
                                         {"scale-b", required_argument, NULL, 'Y'},
                                         {"meta", required_argument, NULL, 'M'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    int c;
    struct cli_opts opt = {.sub = "op", .help = NULL, .first = 1};
    while ((c = cli_next_opt(&opt, argc, argv, "o:d:c:h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        char *end = NULL;
        if (c == 'o') o.out = optarg;
        else if (c == 'j') o.json = 1;
        else if (c == 'T') g.ta = 1;
        else if (c == 'U') g.tb = 1;
        else if (c == 'c') g.c0 = optarg;
        else if (c == 'F') g.fast = 1;
        else if (c == 'H') g.bf16 = 1;
        else if (c == 'B') {
            g.beta = strtof(optarg, &end);
            if (!*optarg || *end) return cli_usage_error("op", "--beta wants a number, not '%s'", optarg);
        } else if (c == 'K') {
            if (clrun_gemm_backend_parse(optarg, &g.backend) != CLRUN_OK)
                return cli_usage_error("op", "--backend wants one of the names in --help, not '%s' (%s)", optarg, clrun_last_error(NULL));
        } else if (c == 'a') {
            o.alpha = strtof(optarg, &end);
            if (!*optarg || *end) return cli_usage_error("op", "--alpha wants a number, not '%s'", optarg);
        } else if (c == 'd') spec = optarg;
        else if (c == 'G') devices = optarg;
        else if (c == 'X') g.scale_a = optarg;
        else if (c == 'Y') g.scale_b = optarg;
        else if (c == 'M') g.meta = optarg;
        else if (c == 'h') {
            fputs(op_help, stdout);
            list_ops(stdout);
            return EXIT_OK;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "clrun op: which op?\n");
        list_ops(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[optind++];
    const struct op *op = NULL;
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (strcmp(ops[i].name, name) == 0) op = &ops[i];
    if (!op) {
        fprintf(stderr, "clrun op: unknown op '%s'\n", name);
        list_ops(stderr);
        return EXIT_USAGE;
    }
    int nin = argc - optind;
    if (nin != op->nin) return cli_usage_error("op", "%s takes %d input file%s, %d given", name, op->nin, op->nin == 1 ? "" : "s", nin);
    if (op->kind != 1 && !o.out) return cli_usage_error("op", "no output file (-o OUT.npy)");
    if (op->kind == 1 && o.out) return cli_usage_error("op", "%s prints its result; -o is for element-wise ops", name);
    clrun_array in[4];
    memset(in, 0, sizeof in);
    int rc = 0;
    for (int i = 0; i < nin && !rc && cli_mpi_rank() == 0; i++)
        if (clrun_npy_read(argv[optind + i], &in[i]) != CLRUN_OK)
            rc = (fprintf(stderr, "clrun op %s: %s\n", name, clrun_last_error(NULL)), EXIT_USAGE);
#ifdef CLRUN_HAVE_MPI
    if (cli_mpi_size() > 1) { /* under mpirun: rank 0 reads, writes and leads; the others compute their rows */
        if (op->kind != 2 || devices) {
            if (cli_mpi_rank() == 0)
                cli_usage_error("op", "under mpirun, gemm (and canny) split over the ranks: not %s%s", name, devices ? " --devices" : "");
            for (int i = 0; i < nin; i++) clrun_array_free(&in[i]);
            return EXIT_USAGE;
        }
        clrun_ctx *ctx = NULL;
        clrun_status st = clrun_mpi_open(MPI_COMM_WORLD, spec, &ctx);
        int rc2 = cli_mpi_max(st ? cli_fail("op", NULL, st) : 0);
        if (!rc2 && cli_mpi_rank() == 0) {
            g.alpha = o.alpha;
            rc2 = rc ? rc : op_gemm(ctx, NULL, in, &o, &g);
            cli_mpi_bcast_int(-rc2); /* the end */
        } else if (!rc2) {
            for (int msg; (msg = cli_mpi_bcast_int(0)) == 1;)
                if ((st = clrun_mpi_gemm(MPI_COMM_WORLD, 0, ctx, NULL, NULL, NULL, NULL))) rc2 = cli_exit_code(st);
        }
        for (int i = 0; i < nin; i++) clrun_array_free(&in[i]);
        clrun_close(ctx);
        return rc2;
    }
#endif
    clrun_ctx *ctx = NULL;
    clrun_group *grp = NULL;
    if (!rc && devices && spec) rc = cli_usage_error("op", "give -d (one device) or --devices (a group), not both");
    if (!rc && devices && g.backend != CLRUN_GEMM_AUTO)
        rc = cli_usage_error("op", "--backend applies to one device; --devices chooses per device");
    if (!rc && devices) {
        clrun_status st = clrun_group_open(&grp, devices);
        if (st == CLRUN_INVALID_ARG) rc = cli_usage_error("op", "%s", clrun_last_error(NULL));
        else if (st) rc = cli_fail("op", NULL, st);
    } else if (!rc) {
        rc = cli_open("op", spec, &ctx);
    }
    g.alpha = o.alpha;
    if (!rc) rc = op->kind == 2 ? op_gemm(ctx, grp, in, &o, &g) : op_run(ctx, grp, op, in, nin, &o);
    for (int i = 0; i < nin; i++) clrun_array_free(&in[i]);
    clrun_close(ctx);
    clrun_group_close(grp);
    return rc;
}
