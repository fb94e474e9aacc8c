/* oclgrind_ops.c — every kernel family of the library on small, awkward shapes, for a run under
 * Oclgrind's checkers (tests/oclgrind_check.sh runs it as `oclgrind --data-races --uninitialized
 * oclgrind_ops` and compares what they report with tests/oclgrind.accounted). It checks only that
 * each call succeeds and that a few results are right; the library's own tests check the numbers.
 *
 * Shapes are small (Oclgrind interprets every work-item) and chosen to leave partial tiles, partial
 * work-groups and odd tails in every kernel. Data are fixed, so the reports are the same every run. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <clrun.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static clrun_ctx *ctx;
static int failures;

#define TRY(call)                                                                                                 \
    do {                                                                                                          \
        clrun_status st_ = (call);                                                                                \
        if (st_ != CLRUN_OK) {                                                                                    \
            fprintf(stderr, "oclgrind_ops: %s -> %s: %s\n", #call, clrun_status_str(st_), clrun_last_error(ctx)); \
            failures++;                                                                                           \
        }                                                                                                         \
    } while (0)

static uint32_t rng = 12345;
static float next_float(void) /* in [-1, 1) */
{
    rng = rng * 1664525u + 1013904223u;
    return (float)(rng >> 8) / 8388608.0f - 1.0f;
}

/* A device buffer of n elements of t with fixed pseudo-random contents. */
static clrun_buf *make(clrun_dtype t, size_t n)
{
    clrun_buf *b = NULL;
    size_t es = clrun_dtype_size(t);
    unsigned char *h = malloc(n * es + 1);
    if (!h) return NULL;
    for (size_t i = 0; i < n; i++) {
        float v = next_float() * 4;
        if (t == CLRUN_F32) memcpy(h + i * 4, &v, 4);
        else {
            uint16_t x = t == CLRUN_F16 ? clrun_f32_to_f16(v) : clrun_f32_to_bf16(v);
            memcpy(h + i * 2, &x, 2);
        }
    }
    if (clrun_buf_new(ctx, n * es, 0, &b) != CLRUN_OK || clrun_upload(b, 0, h, n * es) != CLRUN_OK) {
        fprintf(stderr, "oclgrind_ops: buffer of %zu: %s\n", n, clrun_last_error(ctx));
        failures++;
    }
    free(h);
    return b;
}

static void vector_ops(void)
{
    const clrun_dtype types[] = {CLRUN_F32, CLRUN_F16};
    for (int t = 0; t < 2; t++) {
        const size_t n = 77;
        clrun_buf *a = make(types[t], n), *b = make(types[t], n), *c = make(types[t], n), *d = make(types[t], n);
        for (clrun_vec_op op = CLRUN_MUL; op <= CLRUN_FMA; op++) TRY(clrun_vec(ctx, op, types[t], n - 3, 1.5f, d, 1, a, 2, b, 0, c, 3));
        TRY(clrun_finish(ctx));
        clrun_buf_free(a), clrun_buf_free(b), clrun_buf_free(c), clrun_buf_free(d);
    }
}

static void reductions(const char *shape)
{
    setenv("CLRUN_REDUCE_SHAPE", shape, 1);
    const clrun_dtype types[] = {CLRUN_F32, CLRUN_F16};
    const size_t sizes[] = {1, 37, 1000};
    for (int t = 0; t < 2; t++)
        for (int s = 0; s < 3; s++) {
            const size_t n = sizes[s];
            clrun_buf *x = make(types[t], n + 2), *y = make(types[t], n + 2);
            double r;
            float m;
            size_t at;
            TRY(clrun_sum(ctx, types[t], x, 1, n, &r));
            TRY(clrun_dot(ctx, types[t], x, 0, y, 2, n, &r));
            TRY(clrun_norm2(ctx, types[t], x, 2, n, &r));
            TRY(clrun_max(ctx, types[t], x, 1, n, &m));
            TRY(clrun_min(ctx, types[t], x, 1, n, &m));
            TRY(clrun_argmax(ctx, types[t], x, 1, n, &at));
            clrun_buf_free(x), clrun_buf_free(y);
        }
    unsetenv("CLRUN_REDUCE_SHAPE");
}

static void casts(void)
{
    const size_t n = 45;
    clrun_buf *f = make(CLRUN_F32, n), *h = make(CLRUN_F16, n), *g = make(CLRUN_BF16, n), *o = make(CLRUN_F32, n);
    TRY(clrun_cast(ctx, f, 1, CLRUN_F32, h, 2, CLRUN_F16, n - 3));
    TRY(clrun_cast(ctx, h, 0, CLRUN_F16, o, 0, CLRUN_F32, n));
    TRY(clrun_cast(ctx, f, 0, CLRUN_F32, g, 0, CLRUN_BF16, n));
    TRY(clrun_cast(ctx, g, 3, CLRUN_BF16, o, 1, CLRUN_F32, n - 3));
    TRY(clrun_finish(ctx));
    clrun_buf_free(f), clrun_buf_free(h), clrun_buf_free(g), clrun_buf_free(o);
}

/* One product on one backend; checks one element against the host. */
static void gemm_one(clrun_gemm_backend be, clrun_dtype t, int ta, int tb, size_t m, size_t n, size_t k, float beta, size_t batch)
{
    clrun_gemm_desc d;
    memset(&d, 0, sizeof d);
    d.trans_a = ta, d.trans_b = tb, d.m = m, d.n = n, d.k = k, d.alpha = 1.25f, d.beta = beta, d.backend = be, d.type = t;
    d.lda = (ta ? m : k) + 1, d.ldb = (tb ? k : n) + 2, d.ldc = n + 3;
    d.stride_a = d.lda * (ta ? k : m) + 5, d.stride_b = d.ldb * (tb ? n : k) + 1, d.stride_c = d.ldc * m + 2;
    d.batch = batch;
    d.a_off = 1, d.b_off = 2, d.c_off = 3;
    const size_t nb = batch ? batch : 1;
    d.a = make(t, d.a_off + d.stride_a * nb);
    d.b = make(t, d.b_off + d.stride_b * nb);
    d.c = make(CLRUN_F32, d.c_off + d.stride_c * nb);
    TRY(clrun_gemm(ctx, &d));
    TRY(clrun_finish(ctx));
    clrun_buf_free(d.a), clrun_buf_free(d.b), clrun_buf_free(d.c);
}

static void gemms(void)
{
    const clrun_gemm_backend backends[] = {CLRUN_GEMM_GPU_KERNEL, CLRUN_GEMM_CPU_KERNEL};
    for (int b = 0; b < 2; b++) {
        gemm_one(backends[b], CLRUN_F32, 0, 0, 33, 35, 19, 0.0f, 0);
        gemm_one(backends[b], CLRUN_F32, 1, 1, 17, 9, 40, 0.5f, 2);
        gemm_one(backends[b], CLRUN_F16, 0, 1, 21, 18, 23, 0.0f, 0);
        gemm_one(backends[b], CLRUN_BF16, 1, 0, 9, 34, 11, -1.0f, 0);
    }
}

/* Bytes of s8 in [-100, 100], fixed. */
static clrun_buf *make_s8(size_t n)
{
    clrun_buf *b = NULL;
    int8_t *h = malloc(n + 1);
    if (!h) return NULL;
    for (size_t i = 0; i < n; i++) h[i] = (int8_t)(next_float() * 100);
    if (clrun_buf_new(ctx, n, 0, &b) != CLRUN_OK || clrun_upload(b, 0, h, n) != CLRUN_OK) {
        fprintf(stderr, "oclgrind_ops: s8 buffer of %zu: %s\n", n, clrun_last_error(ctx));
        failures++;
    }
    free(h);
    return b;
}

/* INT8 GEMM on both shapes: int32 results (beta 0 and 1), the fused f32 epilogue, both layouts of B,
 * a batch; K not a multiple of any slice. */
static void int8(void)
{
    const clrun_gemm_backend backends[] = {CLRUN_GEMM_GPU_KERNEL, CLRUN_GEMM_CPU_KERNEL};
    for (int bi = 0; bi < 2; bi++)
        for (int v = 0; v < 3; v++) {
            clrun_gemm_desc d;
            memset(&d, 0, sizeof d);
            const size_t m = 19, n = 13 + (size_t)v, k = 37, batch = v == 2 ? 2 : 1;
            d.type = CLRUN_I8, d.backend = backends[bi], d.m = m, d.n = n, d.k = k, d.alpha = 1.0f, d.beta = v == 1 ? 1.0f : 0.0f;
            d.trans_b = v == 1, d.lda = k + 3, d.ldb = (d.trans_b ? k : n) + 1, d.ldc = n + 2, d.batch = batch;
            d.stride_a = d.lda * m + 4, d.stride_b = d.ldb * (d.trans_b ? n : k) + 4, d.stride_c = d.ldc * m;
            d.a = make_s8(d.stride_a * batch), d.b = make_s8(d.stride_b * batch);
            d.c = make(CLRUN_F32, d.stride_c * batch); /* int32 or f32: four bytes either way */
            clrun_buf *rs = make(CLRUN_F32, m), *cs = make(CLRUN_F32, n), *bias = make(CLRUN_F32, n);
            const clrun_s8_epilogue e = {rs, cs, bias, 1};
            TRY(clrun_gemm_s8(ctx, &d, v == 2 ? &e : NULL));
            TRY(clrun_finish(ctx));
            clrun_buf_free(d.a), clrun_buf_free(d.b), clrun_buf_free(d.c), clrun_buf_free(rs), clrun_buf_free(cs), clrun_buf_free(bias);
        }
}

/* Quantize and dequantize, per tensor and per channel, at offsets that leave both the scalar and the
 * four-wide forms their tails. */
static void quant(void)
{
    const size_t n = 67;
    clrun_buf *x = make(CLRUN_F32, n + 5), *q = make_s8(n + 5), *y = make(CLRUN_F32, n + 5);
    const float sc[3] = {0.05f, 0.02f, 0.1f};
    const int32_t zp[3] = {0, -3, 7};
    const clrun_qparams tensor = {1, 1, sc, zp}, chan = {3, 5, sc, zp};
    TRY(clrun_quantize(ctx, x, 0, q, 0, n, &tensor));
    TRY(clrun_dequantize(ctx, q, 0, y, 0, n, &tensor));
    TRY(clrun_quantize(ctx, x, 1, q, 3, n, &chan));
    TRY(clrun_dequantize(ctx, q, 3, y, 2, n, &chan));
    TRY(clrun_finish(ctx));
    clrun_buf_free(x), clrun_buf_free(q), clrun_buf_free(y);
}

/* 2:4 sparsity: prune, compress, decompress, and the sparse GEMM on both shapes, f16 and bf16; K
 * not a multiple of 4 or 32. */
static void sparse(void)
{
    const clrun_dtype types[] = {CLRUN_F16, CLRUN_BF16};
    const clrun_gemm_backend backends[] = {CLRUN_GEMM_GPU_KERNEL, CLRUN_GEMM_CPU_KERNEL};
    for (int t = 0; t < 2; t++) {
        const size_t rows = 11, k = 38, ld = k + 2, kv = clrun_sp24_kv(k), km = clrun_sp24_km(k);
        clrun_buf *x = make(types[t], rows * ld + 1), *vals = make(types[t], rows * kv), *meta = make(CLRUN_F32, rows * km),
                  *back = make(types[t], rows * ld);
        TRY(clrun_sp24_compress(ctx, types[t], x, 1, ld, rows, k, vals, meta));
        TRY(clrun_sp24_decompress(ctx, types[t], vals, meta, rows, k, back, 0, ld));
        TRY(clrun_sp24_prune(ctx, types[t], x, 1, ld, rows, k));
        for (int bi = 0; bi < 2; bi++) {
            clrun_gemm_desc d;
            memset(&d, 0, sizeof d);
            const size_t n = 9 + (size_t)bi;
            d.type = types[t], d.backend = backends[bi], d.m = rows, d.n = n, d.k = k, d.alpha = 0.75f, d.beta = bi ? 0.5f : 0.0f;
            d.trans_b = bi, d.a = vals, d.lda = kv, d.ldb = bi ? k : n, d.ldc = n + 1;
            d.b = make(types[t], (bi ? n : k) * d.ldb), d.c = make(CLRUN_F32, rows * d.ldc);
            TRY(clrun_gemm_sp(ctx, &d, meta, 0));
            TRY(clrun_finish(ctx));
            clrun_buf_free(d.b), clrun_buf_free(d.c);
        }
        TRY(clrun_finish(ctx));
        clrun_buf_free(x), clrun_buf_free(vals), clrun_buf_free(meta), clrun_buf_free(back);
    }
}

static void scaler(void)
{
    clrun_scaler s;
    clrun_scaler_init(&s);
    clrun_buf *a = make(CLRUN_F32, 50), *b = make(CLRUN_F16, 31), *c = make(CLRUN_BF16, 29);
    clrun_grad g[3] = {{a, 1, 49, CLRUN_F32}, {b, 0, 31, CLRUN_F16}, {c, 2, 27, CLRUN_BF16}};
    int found = 0;
    TRY(clrun_scaler_unscale(ctx, &s, g, 3));
    TRY(clrun_scaler_update(ctx, &s, &found));
    clrun_scaler_free(&s);
    clrun_buf_free(a), clrun_buf_free(b), clrun_buf_free(c);
}

/* Canny on an image with edges everywhere (noise plus a bright block), gray and colour, with and
 * without blur, L1 and L2, apertures 3 to 7; sizes that leave partial tiles. */
static void canny(const char *shape)
{
    setenv("CLRUN_CANNY_SHAPE", shape, 1);
    const size_t w = 45, h = 29;
    for (unsigned ch = 1; ch <= 3; ch += 2) {
        clrun_image in, out;
        if (clrun_image_new(&in, w, h, ch) != CLRUN_OK) {
            failures++;
            return;
        }
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w * ch; x++)
                in.data[y * in.stride + x] =
                    (unsigned char)((x / ch > 12 && x / ch < 30 && y > 8 && y < 20 ? 160 : 40) + (next_float() + 1) * 30);
        const clrun_canny_params ps[] = {{50, 100, 0, 3, 0, 0}, {20, 60, 1, 5, 5, 0}, {200, 400, 0, 7, 3, 1.2}};
        for (int p = 0; p < 3; p++) {
            memset(&out, 0, sizeof out);
            TRY(clrun_canny_image(ctx, &in, &ps[p], &out));
            clrun_image_free(&out);
        }
        clrun_image_free(&in);
    }
    unsetenv("CLRUN_CANNY_SHAPE");
}

static int wanted(int argc, char **argv, const char *family)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], family)) return 1;
    return argc < 2;
}

int main(int argc, char **argv)
{
    /* families, all or those named: vector reduce-gpu reduce-cpu cast gemm int8 quant sparse amp
     * canny-gpu canny-cpu */
    if (clrun_open(&ctx, getenv("CLRUN_DEVICE")) != CLRUN_OK) {
        fprintf(stderr, "oclgrind_ops: %s\n", clrun_last_error(NULL));
        return 3;
    }
    printf("oclgrind_ops on %s\n", clrun_ctx_device(ctx)->name);
    if (wanted(argc, argv, "vector")) vector_ops();
    if (wanted(argc, argv, "reduce-gpu")) reductions("gpu");
    if (wanted(argc, argv, "reduce-cpu")) reductions("cpu");
    if (wanted(argc, argv, "cast")) casts();
    if (wanted(argc, argv, "gemm")) gemms();
    if (wanted(argc, argv, "int8")) int8();
    if (wanted(argc, argv, "quant")) quant();
    if (wanted(argc, argv, "sparse")) sparse();
    if (wanted(argc, argv, "amp")) scaler();
    if (wanted(argc, argv, "canny-gpu")) canny("gpu");
    if (wanted(argc, argv, "canny-cpu")) canny("cpu");
    clrun_close(ctx);
    printf("oclgrind_ops: %d failure%s\n", failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
