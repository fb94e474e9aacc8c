/* cli.c — `clrun op sparsify`, `clrun op densify` and `clrun op gemm --meta`: 2:4 structured
 * sparsity on .npy files (clrun_sp24_*, clrun_gemm_sp; the layout is in clrun.h). */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char *sparse_help =
    "usage: clrun op sparsify A.npy -o VALUES.npy [--meta META.npy] [--pruned P.npy] [--bf16] [-d SPEC]\n"
    "       clrun op densify VALUES.npy --meta META.npy -o A.npy [--k K] [--bf16] [-d SPEC]\n"
    "       clrun op gemm VALUES.npy B.npy --meta META.npy -o C.npy [--tb] [--alpha X] [--bf16] [-d SPEC]\n\n"
    "2:4 structured sparsity along the last axis (K) of a float32 or float16 matrix (or uint16 bf16 patterns with\n"
    "--bf16; 3-D arrays are batches of rows). sparsify keeps in every group of 4 consecutive elements of a row the 2\n"
    "of largest magnitude (ties to the lower column, NaN counts as infinite) and writes them compressed: VALUES, rows\n"
    "of 2·ceil(K/4) elements of A's type, and META, rows of ceil(K/32) uint32 words, 4 bits per group (the lower kept\n"
    "column in the low 2 bits, the higher in the next 2): the operand of NVIDIA's sparse tensor cores (mma.sp).\n"
    "densify expands them back (zeros where pruned); gemm --meta multiplies the compressed A by a dense B into\n"
    "float32 C (clrun_gemm_sp: sparse tensor cores on NVIDIA, half the multiply-adds elsewhere).\n\n"
    "  -o, --output FILE   sparsify: the values; densify: the dense matrix; gemm: C\n"
    "  --meta FILE         the metadata (sparsify: default VALUES with .npy replaced by .meta.npy)\n"
    "  --pruned FILE       sparsify: also write the pruned dense matrix\n"
    "  --k K               densify: the rows' length (default: 2 × the values' columns)\n"
    "  --bf16              the matrices are uint16 arrays of bf16 patterns (as clrun op cast writes)\n"
    "  -d, --device SPEC   device (default: $CLRUN_DEVICE, else the best)\n"
    "  --json              a record per file written, {\"op\", \"output\", \"dtype\", \"shape\", \"what\"}, instead\n"
    "                      of the \"wrote\" lines (a failure: {\"error\": {\"exit\", \"meaning\", \"message\"}})\n"
    "  --help              this text\n\n"
    "Exit codes: 0; 1 runtime failure; 2 bad command line or input file; 3 no device.\n";

/* The element type of a float32 / float16 / (--bf16) uint16 array, or -1 (with a message). */
static int elem_type(const char *sub, const clrun_array *a, int bf16, clrun_dtype *t)
{
    if (bf16 ? a->dtype == CLRUN_U16 : a->dtype == CLRUN_F32 || a->dtype == CLRUN_F16) {
        *t = bf16 ? CLRUN_BF16 : a->dtype;
        return 0;
    }
    fprintf(stderr, "clrun %s: %s\n", sub,
            bf16 ? "with --bf16 the matrices are uint16 arrays of bf16 patterns"
                 : "the matrices are float32 or float16 (bf16: uint16 with --bf16)");
    return -1;
}

/* rows × cols of an array of 2 or 3 dimensions (3: batches of rows) */
static int matrix_dims(const char *sub, const char *what, const clrun_array *a, size_t *rows, size_t *cols)
{
    if (a->ndim < 2 || a->ndim > 3) return fprintf(stderr, "clrun %s: %s must be 2-D (or 3-D: batches of rows)\n", sub, what), -1;
    *cols = a->shape[a->ndim - 1], *rows = a->count / (*cols ? *cols : 1);
    if (!*cols) *rows = a->ndim == 3 ? a->shape[0] * a->shape[1] : a->shape[0];
    return 0;
}

static int fail(const char *sub, clrun_ctx *ctx, clrun_status st)
{
    if (st == CLRUN_INVALID_ARG) return fprintf(stderr, "clrun %s: %s\n", sub, clrun_last_error(ctx)), EXIT_USAGE;
    return cli_fail(sub, ctx, st);
}

static int write_npy(const char *sub, const char *path, const clrun_array *a, const char *what)
{
    if (clrun_npy_write(path, a)) return fprintf(stderr, "clrun %s: %s\n", sub, clrun_last_error(NULL)), EXIT_RUNTIME;
    if (cli_json_mode) { /* a record per file written: {"op", "output", "dtype", "shape", "what"} */
        json_t *rec = cli_json_wrote(sub + 3, path, a);
        json_object_set_new(rec, "what", json_string(what));
        cli_json_emit(cli_notes(path), rec);
    } else {
        fprintf(cli_notes(path), "wrote %s (%s)\n", path, what);
    }
    return 0;
}

static int cmd_op_sparse(int argc, char **argv)
{
    const int densify = strcmp(argv[1], "densify") == 0;
    const char *sub = densify ? "op densify" : "op sparsify", *out = NULL, *meta = NULL, *pruned = NULL, *spec = NULL;
    int bf16 = 0;
    long long kk = -1;
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"meta", required_argument, NULL, 'm'}, {"pruned", required_argument, NULL, 'p'},
        {"k", required_argument, NULL, 'k'},      {"bf16", no_argument, NULL, 'b'},       {"device", required_argument, NULL, 'd'},
        {"json", no_argument, NULL, 'j'},         {"help", no_argument, NULL, 'h'},       {0}};
    struct cli_opts opt = {.sub = sub, .help = sparse_help, .first = 2};
    int c;
    while ((c = cli_next_opt(&opt, argc, argv, "o:d:h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        char *end = NULL;
        if (c == 'o') out = optarg;
        else if (c == 'm') meta = optarg;
        else if (c == 'p') pruned = optarg;
        else if (c == 'b') bf16 = 1;
        else if (c == 'd') spec = optarg;
        else if (c == 'k') {
            kk = strtoll(optarg, &end, 10);
            if (!*optarg || *end || kk < 1 || kk > (long long)UINT32_MAX)
                return cli_usage_error(sub, "--k wants a positive length, not '%s'", optarg);
        }
    }
    if (argc - optind != 1) return cli_usage_error(sub, "one input file, please (%d given)", argc - optind);
    if (!out) return cli_usage_error(sub, "no output (-o OUT.npy)");
    if (densify && !meta) return cli_usage_error(sub, "the metadata is needed (--meta META.npy)");
    if (densify && pruned) return cli_usage_error(sub, "--pruned is for sparsify");
    if (!densify && kk >= 0) return cli_usage_error(sub, "--k is for densify");
    char *meta_path = NULL;
    if (!meta) { /* VALUES.npy -> VALUES.meta.npy */
        const size_t n = strlen(out), cut = n > 4 && strcmp(out + n - 4, ".npy") == 0 ? n - 4 : n;
        if (!(meta_path = malloc(cut + 10))) return fprintf(stderr, "clrun %s: out of host memory\n", sub), EXIT_RUNTIME;
        memcpy(meta_path, out, cut), strcpy(meta_path + cut, ".meta.npy");
        meta = meta_path;
    }
    /* outputs of one name would overwrite each other, the values lost (exit 0 all the same) */
    const char *outs[3] = {out, densify ? NULL : meta, pruned};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < i; j++)
            if (outs[i] && outs[j] && cli_same_file(outs[i], outs[j])) {
                static const char *const what[3] = {"-o", "--meta", "--pruned"};
                free(meta_path);
                return cli_usage_error(sub, "%s and %s name one file (%s); each output needs its own", what[j], what[i], outs[i]);
            }
    clrun_array in = {0}, mt = {0}, vals = {0}, dense = {0};
    clrun_ctx *ctx = NULL;
    clrun_buf *bx = NULL, *bv = NULL, *bm = NULL;
    clrun_status st = CLRUN_OK;
    clrun_dtype t = CLRUN_F32;
    size_t rows = 0, cols = 0;
    int rc = 0;
    if (clrun_npy_read(argv[optind], &in) || (densify && clrun_npy_read(meta, &mt))) {
        rc = (fprintf(stderr, "clrun %s: %s\n", sub, clrun_last_error(NULL)), EXIT_USAGE);
        goto done;
    }
    if (elem_type(sub, &in, bf16, &t) || matrix_dims(sub, densify ? "VALUES" : "A", &in, &rows, &cols)) {
        rc = EXIT_USAGE;
        goto done;
    }
    const size_t k = densify ? (kk >= 0 ? (size_t)kk : 2 * cols) : cols, kv = clrun_sp24_kv(k), km = clrun_sp24_km(k);
    if (densify && kv != cols) {
        rc = (fprintf(stderr, "clrun %s: rows of %zu values hold K = %zu to %zu, not %zu\n", sub, cols, cols ? 2 * cols - 3 : 0, 2 * cols,
                      k),
              EXIT_USAGE);
        goto done;
    }
    if (densify && (mt.dtype != CLRUN_U32 || mt.count != rows * km || mt.shape[mt.ndim - 1] != km)) {
        rc = (fprintf(stderr, "clrun %s: %s must be uint32 with %zu rows of %zu words for K = %zu\n", sub, meta, rows, km, k), EXIT_USAGE);
        goto done;
    }
    if (densify && clrun_sp24_meta_check(mt.data, rows, k, NULL, NULL)) {
        rc = (fprintf(stderr, "clrun %s: %s: %s\n", sub, meta, clrun_last_error(NULL)), EXIT_USAGE);
        goto done;
    }
    size_t shape[3];
    memcpy(shape, in.shape, in.ndim * sizeof *shape);
    shape[in.ndim - 1] = densify ? k : kv;
    if (clrun_array_new(densify ? &dense : &vals, in.dtype, in.ndim, shape)) {
        rc = cli_fail(sub, NULL, CLRUN_HOST_OUT_OF_MEMORY);
        goto done;
    }
    if (!densify) {
        shape[in.ndim - 1] = km;
        if (clrun_array_new(&mt, CLRUN_U32, in.ndim, shape) || (pruned && clrun_array_new(&dense, in.dtype, in.ndim, in.shape))) {
            rc = cli_fail(sub, NULL, CLRUN_HOST_OUT_OF_MEMORY);
            goto done;
        }
    }
    if (rows && k) {
        if ((rc = cli_open(sub, spec, &ctx))) goto done;
        const size_t es = clrun_dtype_size(t), xbytes = rows * k * es, vbytes = rows * kv * es, mbytes = rows * km * 4;
        if ((st = clrun_buf_new(ctx, xbytes, 0, &bx)) || (st = clrun_buf_new(ctx, vbytes, 0, &bv)) ||
            (st = clrun_buf_new(ctx, mbytes, 0, &bm)))
            goto fail;
        if (densify) {
            if ((st = clrun_upload(bv, 0, in.data, vbytes)) || (st = clrun_upload(bm, 0, mt.data, mbytes)) ||
                (st = clrun_buf_fill(bx, &(char){0}, 1, 0, xbytes)) || (st = clrun_sp24_decompress(ctx, t, bv, bm, rows, k, bx, 0, k)) ||
                (st = clrun_download(bx, 0, dense.data, xbytes)))
                goto fail;
        } else {
            if ((st = clrun_upload(bx, 0, in.data, xbytes)) || (st = clrun_sp24_compress(ctx, t, bx, 0, k, rows, k, bv, bm)) ||
                (st = clrun_download(bv, 0, vals.data, vbytes)) || (st = clrun_download(bm, 0, mt.data, mbytes)))
                goto fail;
            if (pruned && ((st = clrun_sp24_prune(ctx, t, bx, 0, k, rows, k)) || (st = clrun_download(bx, 0, dense.data, xbytes))))
                goto fail;
        }
    }
    char what[96];
    if (densify) {
        snprintf(what, sizeof what, "%s, %zu rows of %zu, zeros where pruned", clrun_dtype_name(t), rows, k);
        rc = write_npy(sub, out, &dense, what);
    } else {
        snprintf(what, sizeof what, "%s, %zu rows of %zu kept values", clrun_dtype_name(t), rows, kv);
        if (!(rc = write_npy(sub, out, &vals, what))) {
            snprintf(what, sizeof what, "uint32 metadata, %zu rows of %zu words", rows, km);
            rc = write_npy(sub, meta, &mt, what);
        }
        if (!rc && pruned) rc = write_npy(sub, pruned, &dense, "the pruned dense matrix");
    }
    goto done;
fail:
    rc = fail(sub, ctx, st);
done:
    clrun_buf_free(bx), clrun_buf_free(bv), clrun_buf_free(bm);
    clrun_close(ctx);
    clrun_array_free(&in), clrun_array_free(&mt), clrun_array_free(&vals), clrun_array_free(&dense);
    free(meta_path);
    return rc;
}

/* `clrun op gemm VALUES.npy B.npy --meta META.npy`: C = alpha·A·op(B), A 2:4 compressed. */
int cli_gemm_sparse(clrun_ctx *ctx, const clrun_array *V, const clrun_array *B, const char *meta, int tb, float alpha, int bf16,
                    clrun_gemm_backend backend, const char *out)
{
    const char *sub = "op gemm";
    clrun_array mt = {0}, R = {0};
    clrun_buf *bv = NULL, *bb = NULL, *bm = NULL, *bc = NULL;
    clrun_status st = CLRUN_OK;
    clrun_dtype t = CLRUN_F32, tbt = CLRUN_F32;
    int rc = 0;
    if (clrun_npy_read(meta, &mt)) return fprintf(stderr, "clrun %s: %s\n", sub, clrun_last_error(NULL)), EXIT_USAGE;
    if (elem_type(sub, V, bf16, &t) || elem_type(sub, B, bf16, &tbt) || t != tbt) {
        if (t != tbt && V->dtype != B->dtype) fprintf(stderr, "clrun %s: the values and B must have one type\n", sub);
        rc = EXIT_USAGE;
        goto done;
    }
    if (V->ndim != 2 || B->ndim != 2) {
        rc = (fprintf(stderr, "clrun %s: with --meta, the values and B are 2-D matrices\n", sub), EXIT_USAGE);
        goto done;
    }
    const size_t M = V->shape[0], K = tb ? B->shape[1] : B->shape[0], N = tb ? B->shape[0] : B->shape[1], kv = clrun_sp24_kv(K),
                 km = clrun_sp24_km(K);
    if (V->shape[1] != kv) {
        rc = (fprintf(stderr, "clrun %s: op(B) has K = %zu rows, so the compressed rows of A hold %zu values, not %zu\n", sub, K, kv,
                      V->shape[1]),
              EXIT_USAGE);
        goto done;
    }
    if (mt.dtype != CLRUN_U32 || mt.count != M * km) {
        rc = (fprintf(stderr, "clrun %s: %s must be uint32 with %zu rows of %zu words (M = %zu, K = %zu)\n", sub, meta, M, km, M, K),
              EXIT_USAGE);
        goto done;
    }
    if (clrun_sp24_meta_check(mt.data, M, K, NULL, NULL)) {
        rc = (fprintf(stderr, "clrun %s: %s: %s\n", sub, meta, clrun_last_error(NULL)), EXIT_USAGE);
        goto done;
    }
    size_t shape[2] = {M, N};
    if (clrun_array_new(&R, CLRUN_F32, 2, shape)) {
        rc = cli_fail(sub, NULL, CLRUN_HOST_OUT_OF_MEMORY);
        goto done;
    }
    if (R.count) {
        clrun_gemm_desc d = {0};
        d.trans_b = tb, d.m = M, d.n = N, d.k = K, d.alpha = alpha, d.type = t, d.lda = kv ? kv : 1, d.ldb = B->shape[1] ? B->shape[1] : 1,
        d.ldc = N;
        d.backend = backend;
        if ((V->bytes && ((st = clrun_buf_new(ctx, V->bytes, 0, &bv)) || (st = clrun_upload(bv, 0, V->data, V->bytes)))) ||
            (B->bytes && ((st = clrun_buf_new(ctx, B->bytes, 0, &bb)) || (st = clrun_upload(bb, 0, B->data, B->bytes)))) ||
            (mt.bytes && ((st = clrun_buf_new(ctx, mt.bytes, 0, &bm)) || (st = clrun_upload(bm, 0, mt.data, mt.bytes)))) ||
            (st = clrun_buf_new(ctx, R.bytes, 0, &bc)))
            goto fail;
        d.a = bv, d.b = bb, d.c = bc;
        if ((st = clrun_gemm_sp(ctx, &d, bm, 0)) || (st = clrun_download(bc, 0, R.data, R.bytes))) goto fail;
    }
    char what[96];
    snprintf(what, sizeof what, "f32, %zu×%zu, from a 2:4 sparse %s A", M, N, clrun_dtype_name(t));
    rc = write_npy(sub, out, &R, what);
    goto done;
fail:
    rc = fail(sub, ctx, st);
done:
    clrun_buf_free(bv), clrun_buf_free(bb), clrun_buf_free(bm), clrun_buf_free(bc);
    clrun_array_free(&mt), clrun_array_free(&R);
    return rc;
}

const struct cli_cmd cli_verbs_sparse[] = {
    {.name = "sparsify", .what = "prune to 2:4 and compress: values + metadata (clrun op sparsify --help)", .run = cmd_op_sparse},
    {.name = "densify", .what = "2:4 values + metadata back to the dense matrix (clrun op sparsify --help)", .run = cmd_op_sparse},
    {0},
};
