/* test_mixed.c — GEMM with f16 and bf16 inputs and f32 results against an fp64 reference over the
 * widened inputs: every backend the device has (the portable kernels everywhere, the tensor-core
 * kernel where clrun_gemm_tensor_cores says so), shapes with edges in every dimension, all
 * transposes, alpha/beta, padded leading dimensions, offsets, strided batches; the opt-in 3xTF32
 * f32 GEMM no less accurate than the f32 SIMT kernel on the same data; refusals with reasons. */
#include "helpers.h"

#include <math.h>
#include <stdio.h>

struct problem {
    clrun_gemm_desc d;
    uint16_t *a, *b; /* f16 or bf16 patterns */
    float *c;        /* C before the product */
    size_t na, nb, nc;
};

static float widen(clrun_dtype t, uint16_t x) { return t == CLRUN_F16 ? clrun_f16_to_f32(x) : clrun_bf16_to_f32(x); }
static uint16_t narrow(clrun_dtype t, float x) { return t == CLRUN_F16 ? clrun_f32_to_f16(x) : clrun_f32_to_bf16(x); }

/* A random problem; align > 1 keeps leading dimensions, offsets and strides multiples of it (what
 * the tensor-core kernel needs), align 1 makes them anything. */
static void make(clrun_ctx *ctx, struct problem *p, clrun_dtype t, int ta, int tb, size_t m, size_t n, size_t k, size_t batch, size_t align,
                 uint64_t *s)
{
    memset(p, 0, sizeof *p);
    clrun_gemm_desc *d = &p->d;
    d->type = t, d->trans_a = ta, d->trans_b = tb, d->m = m, d->n = n, d->k = k, d->batch = batch;
    d->alpha = rng_float(s) * 2, d->beta = (rng_next(s) % 3 == 0) ? 0.0f : rng_float(s);
    size_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
#define RUP(x) (((x) + align - 1) / align * align)
    d->lda = RUP(ac + rng_next(s) % 9), d->ldb = RUP(bc + rng_next(s) % 9), d->ldc = n + rng_next(s) % 5;
    if (!d->lda) d->lda = align;
    if (!d->ldb) d->ldb = align;
    if (!d->ldc) d->ldc = 1;
    d->a_off = RUP(rng_next(s) % 17), d->b_off = RUP(rng_next(s) % 17), d->c_off = rng_next(s) % 7;
    d->stride_a = RUP(ar * d->lda + 3), d->stride_b = RUP(br * d->ldb + 1), d->stride_c = m * d->ldc + 2;
#undef RUP
    p->na = d->a_off + batch * d->stride_a + 8, p->nb = d->b_off + batch * d->stride_b + 8, p->nc = d->c_off + batch * d->stride_c + 8;
    p->a = malloc(p->na * 2), p->b = malloc(p->nb * 2), p->c = malloc(p->nc * 4);
    /* values over a wide range of exponents, some exactly representable products */
    for (size_t i = 0; i < p->na; i++) p->a[i] = narrow(t, rng_float(s) * ldexpf(1.0f, (int)(rng_next(s) % 7) - 3));
    for (size_t i = 0; i < p->nb; i++) p->b[i] = narrow(t, rng_float(s) * ldexpf(1.0f, (int)(rng_next(s) % 7) - 3));
    for (size_t i = 0; i < p->nc; i++) p->c[i] = d->beta == 0.0f ? NAN : rng_float(s);
    CHECK_OK(ctx, clrun_buf_new(ctx, p->na * 2, 0, &d->a));
    CHECK_OK(ctx, clrun_buf_new(ctx, p->nb * 2, 0, &d->b));
    CHECK_OK(ctx, clrun_buf_new(ctx, p->nc * 4, 0, &d->c));
    CHECK_OK(ctx, clrun_upload(d->a, 0, p->a, p->na * 2));
    CHECK_OK(ctx, clrun_upload(d->b, 0, p->b, p->nb * 2));
}

static void drop(struct problem *p)
{
    clrun_buf_free(p->d.a), clrun_buf_free(p->d.b), clrun_buf_free(p->d.c);
    free(p->a), free(p->b), free(p->c);
}

/* Run on a backend; every element of C checked against fp64 (bound: 4·(K+2) f32 ulps of the sum of
 * magnitudes, the f32 GEMM's), elements outside the matrices untouched. */
static void run_check(clrun_ctx *ctx, struct problem *p, clrun_gemm_backend be)
{
    clrun_gemm_desc d = p->d;
    d.backend = be;
    CHECK_OK(ctx, clrun_upload(d.c, 0, p->c, p->nc * 4));
    CHECK_OK(ctx, clrun_gemm(ctx, &d));
    float *got = malloc(p->nc * 4);
    char *inside = calloc(p->nc, 1);
    CHECK_OK(ctx, clrun_download(d.c, 0, got, p->nc * 4));
    size_t batch = d.batch ? d.batch : 1;
    for (size_t bt = 0; bt < batch; bt++)
        for (size_t i = 0; i < d.m; i++)
            for (size_t j = 0; j < d.n; j++) {
                double ref = 0, mag = 0;
                for (size_t q = 0; q < d.k; q++) {
                    size_t ai = d.a_off + bt * d.stride_a + (d.trans_a ? q * d.lda + i : i * d.lda + q);
                    size_t bi = d.b_off + bt * d.stride_b + (d.trans_b ? j * d.ldb + q : q * d.ldb + j);
                    double x = widen(d.type, p->a[ai]), y = widen(d.type, p->b[bi]);
                    ref += x * y, mag += fabs(x * y);
                }
                size_t ci = d.c_off + bt * d.stride_c + i * d.ldc + j;
                inside[ci] = 1;
                double c0 = d.beta == 0.0f ? 0.0 : p->c[ci];
                double want = d.alpha * ref + d.beta * c0, scale = fabs(d.alpha) * mag + fabs(d.beta * c0) + 1e-30;
                if (!(fabs(got[ci] - want) / scale <= 4.0 * (d.k + 2) / 16777216.0))
                    fail_msg("%s %s %s%s %zux%zux%zu batch %zu: C[%zu][%zu] of batch %zu = %.9g, want %.9g", clrun_gemm_backend_name(be),
                             d.type == CLRUN_F16 ? "f16" : "bf16", d.trans_a ? "T" : "N", d.trans_b ? "T" : "N", d.m, d.n, d.k, batch, i, j,
                             bt, got[ci], want);
            }
    for (size_t ci = 0; ci < p->nc; ci++)
        if (!inside[ci] && memcmp(&got[ci], &p->c[ci], 4) != 0)
            fail_msg("%s: C element %zu outside the matrices was written", clrun_gemm_backend_name(be), ci);
    free(inside);
    free(got);
}

/* the backends to try on this device */
static size_t backends(clrun_ctx *ctx, clrun_gemm_backend *out)
{
    size_t n = 0;
    out[n++] = CLRUN_GEMM_GPU_KERNEL, out[n++] = CLRUN_GEMM_CPU_KERNEL, out[n++] = CLRUN_GEMM_AUTO;
    if (clrun_gemm_tensor_cores(ctx)) out[n++] = CLRUN_GEMM_TENSOR;
    return n;
}

static void shapes_types_transposes(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    const size_t dims[][3] = {{1, 1, 1}, {3, 5, 0}, {5, 1, 9}, {17, 13, 31}, {67, 129, 17}, {130, 72, 40}, {7, 17, 64}, {200, 136, 70}};
    clrun_gemm_backend be[8];
    size_t nb = backends(ctx, be);
    for (size_t t = 0; t < sizeof dims / sizeof *dims; t++)
        for (int tr = 0; tr < 4; tr++) {
            struct problem p;
            clrun_dtype ty = (t + (size_t)tr) % 2 ? CLRUN_BF16 : CLRUN_F16;
            make(ctx, &p, ty, tr & 1, tr >> 1, dims[t][0], dims[t][1], dims[t][2], 1, 8, &s);
            p.d.fast = t % 3 == 1;
            for (size_t b = 0; b < nb; b++) run_check(ctx, &p, be[b]);
            drop(&p);
        }
}

/* Unaligned layouts: the portable kernels take any; the tensor kernels take them through the
 * staging in aligned rows (AUTO only for products of 1 GFLOP or more), every transpose, f32
 * (3xTF32) too.
 * Batches. */
static void f32_tensor_check(clrun_ctx *ctx, size_t m, size_t n, size_t k, int ta, int tb, size_t skew, uint64_t *s);

static void unaligned_and_batches(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    struct problem p;
    for (int t = 0; t < 4; t++) {
        make(ctx, &p, t % 2 ? CLRUN_BF16 : CLRUN_F16, t & 1, t >> 1, 29 + t, 35, 23 + 2 * t, 3, 1, &s);
        p.d.a_off |= 1; /* odd: no 16-byte rows (the guard at the end of the buffer covers the step) */
        clrun_gemm_desc d = p.d;
        run_check(ctx, &p, CLRUN_GEMM_AUTO);
        run_check(ctx, &p, CLRUN_GEMM_KERNEL);
        if (clrun_gemm_tensor_cores(ctx)) { /* small: auto keeps the portable kernel; the tensor kernel stages */
            assert_int_not_equal(clrun_gemm_resolve(ctx, &d), CLRUN_GEMM_TENSOR);
            run_check(ctx, &p, CLRUN_GEMM_TENSOR);
        }
        drop(&p);
    }
    if (clrun_gemm_tensor_cores(ctx)) /* f32 on the tensor cores (3xTF32): A's rows staged too */
        for (int t = 0; t < 4; t++) f32_tensor_check(ctx, 37 + t, 29, 41 + 3 * t, t & 1, t >> 1, 1 + t % 3, &s);
    make(ctx, &p, CLRUN_BF16, 0, 0, 64, 40, 48, 4, 8, &s);
    clrun_gemm_backend be[8];
    size_t nb = backends(ctx, be);
    for (size_t b = 0; b < nb; b++) run_check(ctx, &p, be[b]);
    drop(&p);
}

/* Large enough to run every stage of the tensor kernel's pipeline many times, and the tiles of the
 * portable kernels; checked on a sample of rows. */
static void large_product(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const size_t n = in->type == CLRUN_DEVICE_CPU ? 256 : 1024, k = in->type == CLRUN_DEVICE_CPU ? 320 : 2056;
    struct problem p;
    make(ctx, &p, CLRUN_F16, 0, 0, n + 8, n, k, 1, 8, &s);
    p.d.beta = 0;
    clrun_gemm_desc d = p.d;
    CHECK_OK(ctx, clrun_gemm(ctx, &d));
    float *got = malloc(p.nc * 4);
    CHECK_OK(ctx, clrun_download(d.c, 0, got, p.nc * 4));
    for (size_t i = 0; i < d.m; i += 37)
        for (size_t j = 0; j < d.n; j++) {
            double ref = 0, mag = 0;
            for (size_t q = 0; q < d.k; q++) {
                double x = clrun_f16_to_f32(p.a[d.a_off + i * d.lda + q]), y = clrun_f16_to_f32(p.b[d.b_off + q * d.ldb + j]);
                ref += x * y, mag += fabs(x * y);
            }
            double err = fabs(got[d.c_off + i * d.ldc + j] - d.alpha * ref) / (fabs(d.alpha) * mag + 1e-30);
            if (!(err <= 4.0 * (d.k + 2) / 16777216.0))
                fail_msg("%s: C[%zu][%zu] off by %.3g", clrun_gemm_backend_name(clrun_gemm_resolve(ctx, &d)), i, j, err);
        }
    free(got);
    drop(&p);
}

/* 3xTF32 (CLRUN_GEMM_TENSOR on f32 inputs) where tensor cores are: max relative error against fp64
 * no worse than the f32 SIMT kernel's with one running sum (desc.fast: a plain f32 loop's accuracy,
 * which is what f32 GEMMs give); against the default partial sums, about three times more
 * accurate than that, it is level within the noise of the maximum (docs/BENCHMARKS.md), printed
 * here. Elsewhere the tensor backend is refused. */
static void tf32x3_accuracy(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    const size_t m = 192, n = 160, k = 1536;
    float *a = malloc(m * k * 4), *b = malloc(k * n * 4), *c = malloc(m * n * 4);
    double *ref = malloc(m * n * sizeof(double));
    for (size_t i = 0; i < m * k; i++) a[i] = rng_float(&s);
    for (size_t i = 0; i < k * n; i++) b[i] = rng_float(&s);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double r = 0;
            for (size_t q = 0; q < k; q++) r += (double)a[i * k + q] * b[q * n + j];
            ref[i * n + j] = r;
        }
    clrun_buf *ba, *bb, *bc;
    CHECK_OK(ctx, clrun_buf_new(ctx, m * k * 4, 0, &ba));
    CHECK_OK(ctx, clrun_buf_new(ctx, k * n * 4, 0, &bb));
    CHECK_OK(ctx, clrun_buf_new(ctx, m * n * 4, 0, &bc));
    CHECK_OK(ctx, clrun_upload(ba, 0, a, m * k * 4));
    CHECK_OK(ctx, clrun_upload(bb, 0, b, k * n * 4));
    clrun_gemm_desc d = {.m = m, .n = n, .k = k, .alpha = 1, .a = ba, .lda = k, .b = bb, .ldb = n, .c = bc, .ldc = n};
    double worst[3] = {0, 0, 0}; /* SIMT one running sum, SIMT partial sums, 3xTF32 */
    const int tc = clrun_gemm_tensor_cores(ctx);
    for (int v = 0; v < 3; v++) {
        d.backend = v == 2 ? CLRUN_GEMM_TENSOR : CLRUN_GEMM_KERNEL, d.fast = v == 0;
        if (v == 2 && !tc) {
            CHECK_FAIL(ctx, clrun_gemm(ctx, &d), CLRUN_UNSUPPORTED, "no matrix-unit kernel");
            break;
        }
        CHECK_OK(ctx, clrun_gemm(ctx, &d));
        CHECK_OK(ctx, clrun_download(bc, 0, c, m * n * 4));
        for (size_t i = 0; i < m * n; i++) {
            double e = fabs(c[i] - ref[i]) / fabs(ref[i]);
            if (fabs(ref[i]) > 1e-3 && e > worst[v]) worst[v] = e;
        }
    }
    if (tc) {
        print_message("max relative error: f32 SIMT kernel %.3g (one running sum), %.3g (partial sums); 3xTF32 %.3g\n", worst[0], worst[1],
                      worst[2]);
        if (!(worst[2] <= worst[0])) fail_msg("3xTF32 error %.3g is worse than the f32 SIMT kernel's %.3g", worst[2], worst[0]);
    }
    clrun_buf_free(ba), clrun_buf_free(bb), clrun_buf_free(bc);
    free(a), free(b), free(c), free(ref);
}

/* f32 on the tensor cores (3xTF32), a random layout, against fp64 within the f32 GEMM's bound. */
static void f32_tensor_check(clrun_ctx *ctx, size_t m, size_t n, size_t k, int ta, int tb, size_t skew, uint64_t *s)
{
    /* rows padded to 16 bytes, as the f32 tensor-core kernel reads them; skew 1-3 puts A's rows off
     * them (staged first) */
    const size_t lda = ((ta ? m : k) + 7) / 4 * 4 + skew, ldb = ((tb ? k : n) + 11) / 4 * 4, na = (ta ? k : m) * lda,
                 nb = (tb ? n : k) * ldb;
    float *a = malloc(na * 4), *b = malloc(nb * 4), *c = malloc(m * n * 4);
    for (size_t i = 0; i < na; i++) a[i] = rng_float(s) - 0.5f;
    for (size_t i = 0; i < nb; i++) b[i] = ldexpf(rng_float(s), (int)(rng_next(s) % 9) - 4);
    clrun_buf *ba, *bb, *bc;
    CHECK_OK(ctx, clrun_buf_new(ctx, na * 4, 0, &ba));
    CHECK_OK(ctx, clrun_buf_new(ctx, nb * 4, 0, &bb));
    CHECK_OK(ctx, clrun_buf_new(ctx, m * n * 4, 0, &bc));
    CHECK_OK(ctx, clrun_upload(ba, 0, a, na * 4));
    CHECK_OK(ctx, clrun_upload(bb, 0, b, nb * 4));
    clrun_gemm_desc d = {.m = m, .n = n, .k = k, .alpha = 1, .a = ba, .lda = lda, .b = bb, .ldb = ldb, .c = bc, .ldc = n};
    d.trans_a = ta, d.trans_b = tb, d.backend = CLRUN_GEMM_TENSOR, d.type = CLRUN_F32;
    CHECK_OK(ctx, clrun_gemm(ctx, &d));
    CHECK_OK(ctx, clrun_download(bc, 0, c, m * n * 4));
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double r = 0, mag = 0;
            for (size_t q = 0; q < k; q++) {
                const double x = a[ta ? q * lda + i : i * lda + q], y = b[tb ? j * ldb + q : q * ldb + j];
                r += x * y, mag += fabs(x * y);
            }
            if (!(fabs(c[i * n + j] - r) <= 4.0 * (k + 2) / 16777216.0 * mag + 1e-30))
                fail_msg("3xTF32 %s%s %zux%zux%zu: C[%zu][%zu] = %.9g, want %.9g", ta ? "T" : "N", tb ? "T" : "N", m, n, k, i, j,
                         c[i * n + j], r);
        }
    clrun_buf_free(ba), clrun_buf_free(bb), clrun_buf_free(bc);
    free(a), free(b), free(c);
}

/* Every tensor-core kernel and tile shape on the same problems: the wgmma kernel under several
 * $CLRUN_GEMM_TILES (one or several warpgroups, instruction widths, 32- and 64-byte slices,
 * one slice in flight, both warp-specialised forms), then a context with $CLRUN_NO_WGMMA=1 (mma.sync). Where the tensor cores
 * are not, the backend is refused and clrun_gemm_tensor_kernel says NULL. */
static void tensor_kernels_and_tiles(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    if (!clrun_gemm_tensor_cores(ctx)) {
        assert_null(clrun_gemm_tensor_kernel(ctx, CLRUN_F16));
        assert_null(clrun_gemm_tensor_kernel(ctx, CLRUN_F32));
        return;
    }
    assert_null(clrun_gemm_tensor_kernel(ctx, CLRUN_F64));
    const char *kind = clrun_gemm_tensor_kernel(ctx, CLRUN_F16);
    assert_non_null(kind);
    print_message("tensor-core kernel: f16 %s\n", kind);
    assert_string_equal(clrun_gemm_tensor_kernel(ctx, CLRUN_F32), "mma.sync");
    static const char *const tiles[] = {
        "128,128,1,128,3,0", "128,128,2,64,3,1",       "128,256,2,256,4,0,32",   "64,128,1,128,4,0,32",   "256,128,4,128,2,0,64",
        "64,64,1,64,2,0,32", "128,128,2,128,5,1,32,1", "128,128,1,128,2,0,64,2", "64,256,1,256,3,1,32,1", NULL /* defaults */};
    const size_t dims[][4] = {{67, 129, 17, 1}, {130, 72, 40, 2}, {200, 264, 136, 1}, {1, 300, 520, 1}};
    for (int leg = 0; leg < 2; leg++) {
        clrun_ctx *c = ctx;
        if (leg == 1) { /* mma.sync: a fresh context, since the probes' verdicts are kept per context */
            setenv("CLRUN_NO_WGMMA", "1", 1);
            CHECK_OK(NULL, clrun_open(&c, getenv("CLRUN_TEST_DEVICE")));
            assert_string_equal(clrun_gemm_tensor_kernel(c, CLRUN_F16), "mma.sync");
            assert_string_equal(clrun_gemm_tensor_kernel(c, CLRUN_F32), "mma.sync");
        }
        for (size_t ti = 0; ti < sizeof tiles / sizeof *tiles; ti++) {
            if (leg == 1 && tiles[ti]) continue;
            char spec[64];
            snprintf(spec, sizeof spec, "wgmma:%s", tiles[ti] ? tiles[ti] : "");
            if (tiles[ti]) setenv("CLRUN_GEMM_TILES", spec, 1);
            else unsetenv("CLRUN_GEMM_TILES");
            for (size_t t = 0; t < sizeof dims / sizeof *dims; t++) {
                struct problem p;
                const int tr = (int)((t + ti) % 4);
                make(c, &p, (t + ti) % 2 ? CLRUN_BF16 : CLRUN_F16, tr & 1, tr >> 1, dims[t][0], dims[t][1], dims[t][2], dims[t][3], 8, &s);
                run_check(c, &p, CLRUN_GEMM_TENSOR);
                drop(&p);
            }
            /* 3xTF32 runs the mma.sync kernel whatever the wgmma tiles */
            f32_tensor_check(c, 72 + ti * 31, 136 - ti * 9, 100 + ti * 17, (int)(ti & 1), (int)((ti >> 1) & 1), ti % 3 == 2, &s);
        }
        unsetenv("CLRUN_GEMM_TILES");
        if (leg == 1) {
            unsetenv("CLRUN_NO_WGMMA");
            clrun_close(c);
        }
    }
    if (strcmp(kind, "wgmma") == 0) { /* tiles the kernel cannot take are refused by name, not run */
        struct problem p;
        make(ctx, &p, CLRUN_F16, 0, 0, 64, 64, 64, 1, 8, &s);
        p.d.backend = CLRUN_GEMM_TENSOR;
        setenv("CLRUN_GEMM_TILES", "wgmma:96,128,1,128,3,0", 1);
        CHECK_FAIL(ctx, clrun_gemm(ctx, &p.d), CLRUN_INVALID_ARG, "CLRUN_GEMM_TILES=wgmma:96");
        setenv("CLRUN_GEMM_TILES", "wgmma:BM=256,BN=256,WG=1,WN=256,STAGES=4,WAIT=0,KB=64,WS=0", 1); /* 128 KiB of local memory */
        CHECK_FAIL(ctx, clrun_gemm(ctx, &p.d), CLRUN_INVALID_ARG, "local memory");
        unsetenv("CLRUN_GEMM_TILES");
        drop(&p);
    }
}

static void refusals(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    struct problem p;
    make(ctx, &p, CLRUN_F16, 0, 0, 8, 8, 8, 1, 8, &s);
    clrun_gemm_desc d = p.d;
    d.type = (clrun_dtype)7;
    CHECK_FAIL(ctx, clrun_gemm(ctx, &d), CLRUN_INVALID_ARG, "unknown element type");
    d = p.d;
    d.lda = 1u << 20; /* sizes count f16 elements: this runs past the buffer */
    CHECK_FAIL(ctx, clrun_gemm(ctx, &d), CLRUN_INVALID_ARG, "runs past its buffer");
    if (clrun_have_clblast()) {
        d = p.d;
        d.backend = CLRUN_GEMM_CLBLAST;
        CHECK_FAIL(ctx, clrun_gemm(ctx, &d), CLRUN_UNSUPPORTED, "CLBlast has no GEMM with f16");
    }
    if (clrun_gemm_tensor_cores(ctx)) { /* wgmma takes no f32 */
        d = p.d;
        d.type = CLRUN_F32, d.m = d.n = d.k = 4, d.backend = CLRUN_GEMM_WGMMA;
        clrun_status st = clrun_gemm(ctx, &d);
        assert_int_equal(st, CLRUN_UNSUPPORTED);
        assert_true(strstr(clrun_last_error(ctx), "wgmma takes f16") || strstr(clrun_last_error(ctx), "does not run on"));
    } else {
        d = p.d;
        d.backend = CLRUN_GEMM_MMA_SYNC;
        CHECK_FAIL(ctx, clrun_gemm(ctx, &d), CLRUN_UNSUPPORTED, "the mma.sync backend does not run on");
    }
    d = p.d;
    d.backend = (clrun_gemm_backend)-1;
    CHECK_FAIL(ctx, clrun_gemm(ctx, &d), CLRUN_INVALID_ARG, "unknown backend -1");
    /* every backend's name parses back to it */
    for (int b = CLRUN_GEMM_AUTO; b <= CLRUN_GEMM_WGMMA; b++) {
        clrun_gemm_backend back;
        CHECK_OK(NULL, clrun_gemm_backend_parse(clrun_gemm_backend_name((clrun_gemm_backend)b), &back));
        assert_int_equal(back, b);
    }
    assert_string_equal(clrun_gemm_backend_name(CLRUN_GEMM_TENSOR), "tensor");
    assert_string_equal(clrun_gemm_backend_name(CLRUN_GEMM_MMA_SYNC), "mma.sync");
    clrun_gemm_backend back;
    CHECK_FAIL(NULL, clrun_gemm_backend_parse("gpu", &back), CLRUN_INVALID_ARG,
               "auto, kernel, tensor, wgmma, mma.sync, gpu-kernel, cpu-kernel, clblast");
    drop(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shapes_types_transposes), cmocka_unit_test(unaligned_and_batches),    cmocka_unit_test(large_product),
        cmocka_unit_test(tf32x3_accuracy),         cmocka_unit_test(tensor_kernels_and_tiles), cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
