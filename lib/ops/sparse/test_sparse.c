/* test_sparse.c — 2:4 structured sparsity: prune, compress and decompress against the rule written
 * out on the host (ties, NaN, partial groups, every element type), and the sparse GEMM on every
 * kernel against a float64 reference on the decompressed A, and bit for bit against the dense
 * CPU kernel's single running sum where the order is the same. */
#include "helpers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const clrun_dtype types[] = {CLRUN_F32, CLRUN_F16, CLRUN_BF16};

/* element i of raw data of type t as f32 */
static float get(clrun_dtype t, const void *p, size_t i)
{
    if (t == CLRUN_F32) return ((const float *)p)[i];
    const uint16_t h = ((const uint16_t *)p)[i];
    return t == CLRUN_F16 ? clrun_f16_to_f32(h) : clrun_bf16_to_f32(h);
}

static void put(clrun_dtype t, void *p, size_t i, float v)
{
    if (t == CLRUN_F32) ((float *)p)[i] = v;
    else ((uint16_t *)p)[i] = t == CLRUN_F16 ? clrun_f32_to_f16(v) : clrun_f32_to_bf16(v);
}

static float mag(float x) { return isnan(x) ? INFINITY : fabsf(x); }

/* the rule: the two largest magnitudes of the group (n real elements), the first of equals */
static void keep2(clrun_dtype t, const void *row, size_t g, size_t n, int *lo, int *hi)
{
    float m[4];
    for (size_t c = 0; c < 4; c++) m[c] = c < n ? mag(get(t, row, 4 * g + c)) : 0.0f;
    int a = 0, b = -1;
    for (int c = 1; c < 4; c++)
        if (m[c] > m[a]) a = c;
    for (int c = 0; c < 4; c++)
        if (c != a && (b < 0 || m[c] > m[b])) b = c;
    *lo = a < b ? a : b, *hi = a < b ? b : a;
}

/* values drawn to make ties, zeros, signs and (for floats) NaN and infinities common */
static float draw(uint64_t *rng, int specials)
{
    const uint64_t r = rng_next(rng) % 16;
    if (specials && r == 0) return NAN;
    if (specials && r == 1) return -INFINITY;
    if (r < 5) return 0.0f;
    if (r < 9) return (r & 1 ? -1.0f : 1.0f) * (float)(1 + rng_next(rng) % 3);
    return rng_float(rng) * 8;
}

static void prune_compress_decompress(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t rng = test_seed() + 11;
    const size_t shapes[][2] = {{1, 1}, {3, 4}, {5, 7}, {9, 30}, {17, 33}, {4, 64}, {6, 129}, {33, 250}};
    for (size_t ti = 0; ti < 3; ti++)
        for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
            const clrun_dtype t = types[ti];
            const size_t es = clrun_dtype_size(t), rows = shapes[si][0], k = shapes[si][1], ld = k + rng_next(&rng) % 5,
                         off = rng_next(&rng) % 7;
            const size_t n = off + rows * ld, kv = clrun_sp24_kv(k), km = clrun_sp24_km(k);
            char *x = malloc(n * es), *want = malloc(n * es), *got = malloc(n * es), *vals = malloc(rows * kv * es), *dec = malloc(n * es);
            uint32_t *meta = malloc(rows * km * 4);
            for (size_t i = 0; i < n; i++) put(t, x, i, draw(&rng, 1));
            /* the host's answer */
            memcpy(want, x, n * es);
            char *wvals = calloc(rows * kv, es);
            uint32_t *wmeta = calloc(rows * km, 4);
            for (size_t r = 0; r < rows; r++) {
                char *row = want + (off + r * ld) * es;
                for (size_t g = 0; 4 * g < k; g++) {
                    const size_t cnt = k - 4 * g < 4 ? k - 4 * g : 4;
                    int lo, hi;
                    keep2(t, row, g, cnt, &lo, &hi);
                    if ((size_t)lo < cnt) memcpy(wvals + (r * kv + 2 * g) * es, row + (4 * g + lo) * es, es);
                    if ((size_t)hi < cnt) memcpy(wvals + (r * kv + 2 * g + 1) * es, row + (4 * g + hi) * es, es);
                    wmeta[r * km + g / 8] |= (uint32_t)(lo | hi << 2) << (4 * (g % 8));
                    for (size_t c = 0; c < cnt; c++)
                        if ((int)c != lo && (int)c != hi) memset(row + (4 * g + c) * es, 0, es);
                }
                for (size_t g = (k + 3) / 4; g < km * 8; g++) wmeta[r * km + g / 8] |= 0x4u << (4 * (g % 8));
            }
            clrun_buf *bx, *bv, *bm, *bd;
            CHECK_OK(ctx, clrun_buf_new(ctx, n * es, 0, &bx));
            CHECK_OK(ctx, clrun_buf_new(ctx, rows * kv * es, 0, &bv));
            CHECK_OK(ctx, clrun_buf_new(ctx, rows * km * 4, 0, &bm));
            CHECK_OK(ctx, clrun_buf_new(ctx, n * es, 0, &bd));
            CHECK_OK(ctx, clrun_upload(bx, 0, x, n * es));
            CHECK_OK(ctx, clrun_buf_fill(bv, &(char){0}, 1, 0, rows * kv * es));
            CHECK_OK(ctx, clrun_sp24_compress(ctx, t, bx, off, ld, rows, k, bv, bm));
            CHECK_OK(ctx, clrun_download(bv, 0, vals, rows * kv * es));
            CHECK_OK(ctx, clrun_download(bm, 0, meta, rows * km * 4));
            for (size_t i = 0; i < rows * km; i++)
                if (meta[i] != wmeta[i])
                    fail_msg("%s %zux%zu: metadata word %zu is %08x, the rule gives %08x", clrun_dtype_name(t), rows, k, i, meta[i],
                             wmeta[i]);
            if (memcmp(vals, wvals, rows * kv * es))
                fail_msg("%s %zux%zu: compressed values differ from the rule's", clrun_dtype_name(t), rows, k);
            /* decompress into a copy of x: pruned rows replace the matrix, elements past K and
             * between rows are left alone */
            CHECK_OK(ctx, clrun_upload(bd, 0, x, n * es));
            CHECK_OK(ctx, clrun_sp24_decompress(ctx, t, bv, bm, rows, k, bd, off, ld));
            CHECK_OK(ctx, clrun_download(bd, 0, dec, n * es));
            CHECK_OK(ctx, clrun_sp24_prune(ctx, t, bx, off, ld, rows, k));
            CHECK_OK(ctx, clrun_download(bx, 0, got, n * es));
            if (memcmp(got, want, n * es)) fail_msg("%s %zux%zu: pruning differs from the rule", clrun_dtype_name(t), rows, k);
            if (memcmp(dec, want, n * es))
                fail_msg("%s %zux%zu: decompress(compress(x)) differs from prune(x)", clrun_dtype_name(t), rows, k);
            clrun_buf_free(bx), clrun_buf_free(bv), clrun_buf_free(bm), clrun_buf_free(bd);
            free(x), free(want), free(got), free(vals), free(dec), free(meta), free(wvals), free(wmeta);
        }
}

/* One sparse product on backend be: A drawn, pruned and compressed on the
 * device, checked against float64 on the decompressed A within the f32 bound, and on the CPU kernel
 * against the dense CPU kernel's single running sum (fast) bit for bit. */
static void product(clrun_ctx *ctx, clrun_gemm_backend be, clrun_dtype t, size_t m, size_t n, size_t k, int tb, size_t batch, float alpha,
                    float beta, int dense_too, uint64_t *rng)
{
    const size_t es = clrun_dtype_size(t), kv = clrun_sp24_kv(k), km = clrun_sp24_km(k);
    const size_t lda = kv + (t == CLRUN_F32 ? rng_next(rng) % 3 : 8 * (rng_next(rng) % 2)), ldd = k;
    const size_t br = tb ? n : k, bc = tb ? k : n, ldb = bc + (rng_next(rng) % 2) * 8, ldc = n + rng_next(rng) % 3;
    const size_t sa = m * lda + 8, sb = br * ldb + 8, sc = m * ldc + 1, ao = 8, bo = 0, co = 2;
    const size_t nd = batch * m * ldd, na = ao + batch * sa, nb = bo + batch * sb, nc = co + batch * sc;
    char *dense = malloc(nd * es), *pruned = malloc(nd * es), *b = malloc(nb * es);
    float *c0 = malloc(nc * 4), *c = malloc(nc * 4), *cd = malloc(nc * 4);
    for (size_t i = 0; i < nd; i++) put(t, dense, i, rng_float(rng));
    for (size_t i = 0; i < nb; i++) put(t, b, i, rng_float(rng));
    for (size_t i = 0; i < nc; i++) c0[i] = rng_float(rng);
    clrun_buf *bdense, *ba, *bm, *bb, *bc_;
    CHECK_OK(ctx, clrun_buf_new(ctx, nd * es, 0, &bdense));
    CHECK_OK(ctx, clrun_buf_new(ctx, na * es, 0, &ba));
    CHECK_OK(ctx, clrun_buf_new(ctx, batch * m * km * 4 + 12, 0, &bm));
    CHECK_OK(ctx, clrun_buf_new(ctx, nb * es, 0, &bb));
    CHECK_OK(ctx, clrun_buf_new(ctx, nc * 4, 0, &bc_));
    CHECK_OK(ctx, clrun_upload(bdense, 0, dense, nd * es));
    CHECK_OK(ctx, clrun_upload(bb, 0, b, nb * es));
    CHECK_OK(ctx, clrun_upload(bc_, 0, c0, nc * 4));
    /* compress each batch into its place: values at ao + z·sa with rows lda apart (through a packed
     * temporary), metadata from word 3 */
    clrun_buf *tv, *tm;
    CHECK_OK(ctx, clrun_buf_new(ctx, m * kv * es + 1, 0, &tv));
    CHECK_OK(ctx, clrun_buf_new(ctx, m * km * 4 + 1, 0, &tm));
    char *hv = malloc(m * kv * es + 1), *all = calloc(na, es);
    uint32_t *hm = malloc(m * km * 4 + 4), *allm = calloc(batch * m * km + 3, 4);
    for (size_t z = 0; z < batch; z++) {
        CHECK_OK(ctx, clrun_sp24_compress(ctx, t, bdense, z * m * ldd, ldd, m, k, tv, tm));
        CHECK_OK(ctx, clrun_download(tv, 0, hv, m * kv * es));
        CHECK_OK(ctx, clrun_download(tm, 0, hm, m * km * 4));
        for (size_t i = 0; i < m; i++) memcpy(all + (ao + z * sa + i * lda) * es, hv + i * kv * es, kv * es);
        memcpy(allm + 3 + z * m * km, hm, m * km * 4);
    }
    CHECK_OK(ctx, clrun_upload(ba, 0, all, na * es));
    CHECK_OK(ctx, clrun_upload(bm, 0, allm, (batch * m * km + 3) * 4));
    CHECK_OK(ctx, clrun_sp24_prune(ctx, t, bdense, 0, ldd, batch * m, k));
    CHECK_OK(ctx, clrun_download(bdense, 0, pruned, nd * es));
    clrun_gemm_desc d = {0};
    d.trans_b = tb, d.m = m, d.n = n, d.k = k, d.alpha = alpha, d.beta = beta, d.type = t, d.batch = batch;
    d.a = ba, d.a_off = ao, d.lda = lda, d.stride_a = sa, d.b = bb, d.b_off = bo, d.ldb = ldb, d.stride_b = sb;
    d.c = bc_, d.c_off = co, d.ldc = ldc, d.stride_c = sc, d.backend = be;
    CHECK_OK(ctx, clrun_gemm_sp(ctx, &d, bm, 3));
    CHECK_OK(ctx, clrun_download(bc_, 0, c, nc * 4));
    for (size_t z = 0; z < batch; z++)
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++) {
                double s = 0, sabs = 0;
                for (size_t q = 0; q < k; q++) {
                    const double x = get(t, pruned, z * m * ldd + i * ldd + q),
                                 y = get(t, b, bo + z * sb + (tb ? j * ldb + q : q * ldb + j));
                    s += x * y, sabs += fabs(x * y);
                }
                const size_t at = co + z * sc + i * ldc + j;
                const double want = alpha * s + beta * c0[at];
                const double bound = (k / 2.0 + 4) * ldexp(1.0, -23) * (fabs(alpha) * sabs + fabs(beta * c0[at])) + 1e-30;
                if (!(fabs(c[at] - want) <= bound))
                    fail_msg("%s %zux%zux%zu tb %d batch %zu: C[%zu][%zu][%zu] = %.9g, float64 %.9g (bound %.3g)", clrun_dtype_name(t), m,
                             n, k, tb, batch, z, i, j, c[at], want, bound);
            }
    for (size_t i = 0; i < nc; i++) { /* outside the matrices C is untouched */
        const size_t z = i < co ? 0 : (i - co) / sc, r = i < co ? 0 : (i - co) % sc;
        if ((i < co || z >= batch || r >= m * ldc || r % ldc >= n) && memcmp(&c[i], &c0[i], 4))
            fail_msg("C[%zu] outside the product changed", i);
    }
    if (dense_too) { /* the dense CPU kernel, one running sum, on the pruned A: the same bits */
        clrun_buf *bp;
        CHECK_OK(ctx, clrun_buf_new(ctx, nd * es, 0, &bp));
        CHECK_OK(ctx, clrun_upload(bp, 0, pruned, nd * es));
        CHECK_OK(ctx, clrun_upload(bc_, 0, c0, nc * 4));
        clrun_gemm_desc e = d;
        e.a = bp, e.a_off = 0, e.lda = ldd, e.stride_a = m * ldd, e.fast = 1, e.backend = CLRUN_GEMM_CPU_KERNEL;
        CHECK_OK(ctx, clrun_gemm(ctx, &e));
        CHECK_OK(ctx, clrun_download(bc_, 0, cd, nc * 4));
        if (memcmp(c, cd, nc * 4))
            fail_msg("%s %zux%zux%zu: the sparse CPU kernel differs from the dense one's running sum", clrun_dtype_name(t), m, n, k);
        clrun_buf_free(bp);
    }
    clrun_buf_free(bdense), clrun_buf_free(ba), clrun_buf_free(bm), clrun_buf_free(bb), clrun_buf_free(bc_), clrun_buf_free(tv),
        clrun_buf_free(tm);
    free(dense), free(pruned), free(b), free(c0), free(c), free(cd), free(hv), free(all), free(hm), free(allm);
}

/* kind: 0 gpu-kernel, 1 cpu-kernel, 2 the tensor cores */
/* kind 0: the portable kernel, 1: the CPU one, 2: the tensor cores' first, 3: mma.sync's mma.sp,
 * 4: wgmma's wgmma.mma_async.sp */
static void products(clrun_ctx *ctx, int kind)
{
    const clrun_gemm_backend be = kind == 0   ? CLRUN_GEMM_GPU_KERNEL
                                  : kind == 1 ? CLRUN_GEMM_CPU_KERNEL
                                  : kind == 2 ? CLRUN_GEMM_TENSOR
                                  : kind == 3 ? CLRUN_GEMM_MMA_SYNC
                                              : CLRUN_GEMM_WGMMA;
    uint64_t rng = test_seed() + 23 + (uint64_t)kind;
    const size_t shapes[][3] = {{1, 1, 1}, {17, 33, 65}, {40, 7, 300}, {3, 100, 16}, {130, 136, 96}, {64, 64, 1003}};
    const int cpu = clrun_ctx_device(ctx)->type == CLRUN_DEVICE_CPU;
    for (size_t ti = 0; ti < 3; ti++)
        for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
            for (int tb = 0; tb < 2; tb++) {
                if (kind >= 2 && types[ti] == CLRUN_F32) continue; /* the tensor cores take f16 and bf16 */
                const float alpha = si % 2 ? 1.0f : -0.75f, beta = si % 3 == 1 ? 0.5f : 0.0f;
                product(ctx, be, types[ti], shapes[si][0], shapes[si][1], shapes[si][2], tb, 1 + si % 3, alpha, beta, kind == 1 && cpu,
                        &rng);
            }
}

static void gemm_sp_every_kernel(void **state)
{
    clrun_ctx *ctx = *state;
    products(ctx, 1);
    products(ctx, 0);
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const int nv = strstr(in->platform_vendor, "NVIDIA") && in->type == CLRUN_DEVICE_GPU;
    if (nv) {
        products(ctx, 2), products(ctx, 3);
        /* on Hopper with TMA loads: wgmma's 2:4 kernel (auto and CLRUN_GEMM_TENSOR take it only for
         * products of 2^30 flops and more) */
        const char *tk = clrun_gemm_tensor_kernel(ctx, CLRUN_F16), *no_tma = getenv("CLRUN_NO_TMA");
        if (tk && strcmp(tk, "wgmma") == 0 && !(no_tma && *no_tma && strcmp(no_tma, "0") != 0)) products(ctx, 4);
    } else {
        clrun_buf *b;
        CHECK_OK(ctx, clrun_buf_new(ctx, 256, 0, &b));
        clrun_gemm_desc d = {0};
        d.m = d.n = d.k = 8, d.alpha = 1, d.type = CLRUN_F16, d.a = d.b = d.c = b, d.lda = d.ldb = d.ldc = 8, d.backend = CLRUN_GEMM_TENSOR;
        CHECK_FAIL(ctx, clrun_gemm_sp(ctx, &d, b, 0), CLRUN_UNSUPPORTED, "no matrix-unit kernel for 2:4");
        clrun_buf_free(b);
    }
    { /* backends without a sparse kernel, or not for f32 */
        clrun_buf *b;
        CHECK_OK(ctx, clrun_buf_new(ctx, 256, 0, &b));
        clrun_gemm_desc d = {0};
        d.m = d.n = d.k = 8, d.alpha = 1, d.type = CLRUN_F16, d.a = d.b = d.c = b, d.lda = d.ldb = d.ldc = 8,
        d.backend = CLRUN_GEMM_CLBLAST;
        CHECK_FAIL(ctx, clrun_gemm_sp(ctx, &d, b, 0), CLRUN_UNSUPPORTED, "the clblast backend has no kernel for 2:4 sparse products");
        d.backend = CLRUN_GEMM_WGMMA;
        if (!nv) CHECK_FAIL(ctx, clrun_gemm_sp(ctx, &d, b, 0), CLRUN_UNSUPPORTED, "the wgmma backend does not run on");
        if (clrun_gemm_tensor_cores(ctx)) {
            d.type = CLRUN_F32, d.backend = CLRUN_GEMM_TENSOR;
            CHECK_FAIL(ctx, clrun_gemm_sp(ctx, &d, b, 0), CLRUN_UNSUPPORTED, "the sparse tensor cores take f16 or bf16");
        }
        clrun_buf_free(b);
    }
    uint64_t rng = test_seed() + 5; /* the device's own choice */
    product(ctx, CLRUN_GEMM_AUTO, CLRUN_F16, 70, 50, 200, 0, 2, 1.0f, 0.0f, 0, &rng);
}

static void bad_calls(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_buf *b, *small;
    CHECK_OK(ctx, clrun_buf_new(ctx, 4096, 0, &b));
    CHECK_OK(ctx, clrun_buf_new(ctx, 16, 0, &small));
    CHECK_FAIL(ctx, clrun_sp24_prune(ctx, CLRUN_I8, b, 0, 8, 4, 8), CLRUN_INVALID_ARG, "f32, f16 or bf16");
    CHECK_FAIL(ctx, clrun_sp24_prune(ctx, CLRUN_F32, b, 0, 4, 4, 8), CLRUN_INVALID_ARG, "leading dimension");
    CHECK_FAIL(ctx, clrun_sp24_prune(ctx, CLRUN_F32, b, 1000, 8, 4, 8), CLRUN_INVALID_ARG, "runs past");
    CHECK_FAIL(ctx, clrun_sp24_compress(ctx, CLRUN_F16, b, 0, 64, 16, 64, small, b), CLRUN_INVALID_ARG, "values need");
    CHECK_FAIL(ctx, clrun_sp24_compress(ctx, CLRUN_F16, b, 0, 64, 16, 64, b, small), CLRUN_INVALID_ARG, "metadata needs");
    CHECK_FAIL(ctx, clrun_sp24_decompress(ctx, CLRUN_F16, NULL, b, 4, 8, b, 0, 8), CLRUN_INVALID_ARG, "NULL");
    clrun_gemm_desc d = {0};
    d.m = d.n = d.k = 8, d.alpha = 1, d.type = CLRUN_F16, d.a = d.b = d.c = b, d.lda = 4, d.ldb = d.ldc = 8;
    CHECK_FAIL(ctx, clrun_gemm_sp(ctx, NULL, b, 0), CLRUN_INVALID_ARG, "NULL");
    d.trans_a = 1;
    CHECK_FAIL(ctx, clrun_gemm_sp(ctx, &d, b, 0), CLRUN_INVALID_ARG, "trans_a");
    d.trans_a = 0, d.lda = 3;
    CHECK_FAIL(ctx, clrun_gemm_sp(ctx, &d, b, 0), CLRUN_INVALID_ARG, "ldA");
    d.lda = 4;
    CHECK_FAIL(ctx, clrun_gemm_sp(ctx, &d, small, 2), CLRUN_INVALID_ARG, "metadata needs");
    CHECK_FAIL(ctx, clrun_gemm_sp(ctx, &d, NULL, 0), CLRUN_INVALID_ARG, "metadata needs");
    d.type = CLRUN_I8;
    CHECK_FAIL(ctx, clrun_gemm_sp(ctx, &d, b, 0), CLRUN_INVALID_ARG, "f32, f16 or bf16");
    d.type = CLRUN_F32, d.c = small, d.ldc = 8;
    CHECK_FAIL(ctx, clrun_gemm_sp(ctx, &d, b, 0), CLRUN_INVALID_ARG, "matrix C");
    clrun_buf_free(b), clrun_buf_free(small);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(prune_compress_decompress),
        cmocka_unit_test(gemm_sp_every_kernel),
        cmocka_unit_test(bad_calls),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
