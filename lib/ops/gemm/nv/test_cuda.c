/* test_cuda.c — memory shared with the CUDA driver (lib/cuda.c) and the wgmma kernel launched through it
 * (lib/ops/gemm/nv/wgmma_nv.c).
 *
 * Everywhere: clrun_buf_cuda_address and clrun_buf_copy_from_cuda refuse what they cannot do, with
 * the reason. On an NVIDIA GPU with the CUDA driver and the extensions: large buffers are shared,
 * views carry their offset, CUDA-side copies land where OpenCL reads them; and every GEMM kind the
 * wgmma kernel takes (f16 and bf16 in the four layouts, batched, s8 with its epilogue, 2:4 sparse) run
 * once on shared buffers — through the driver — and once on a context opened without CLRUN_CUDA=1 —
 * OpenCL's kernels — give the same bits, and agree with the host. Where the device has no such
 * memory, the tests that need it are reported skipped, saying why. */
#include "helpers.h"

#include <math.h>

#define SHARED_MIN ((size_t)4 << 20) /* buffers from this size are shared (lib/cuda.c) */

static uint64_t rng;
static uint32_t next(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 33);
}

/* Whether ctx shares memory with CUDA: a buffer of SHARED_MIN bytes gets an address. */
static int shared_here(clrun_ctx *ctx, char *why, size_t n)
{
    clrun_buf *b = NULL;
    uint64_t addr = 0;
    CHECK_OK(ctx, clrun_buf_new(ctx, SHARED_MIN, 0, &b));
    const int ok = clrun_buf_cuda_address(b, &addr, NULL) == CLRUN_OK;
    if (!ok) snprintf(why, n, "%s", clrun_last_error(ctx));
    clrun_buf_free(b);
    return ok;
}

static void refusals(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_buf *small = NULL, *big = NULL;
    uint64_t addr = 1;
    int dev = -1;
    CHECK_FAIL(NULL, clrun_buf_cuda_address(NULL, &addr, &dev), CLRUN_INVALID_ARG, "b is NULL");
    CHECK_OK(ctx, clrun_buf_new(ctx, 4096, 0, &small));
    CHECK_FAIL(ctx, clrun_buf_cuda_address(small, NULL, &dev), CLRUN_INVALID_ARG, "address is NULL");
    /* a small buffer is never shared, on any device */
    CHECK_FAIL(ctx, clrun_buf_cuda_address(small, &addr, &dev), CLRUN_UNSUPPORTED, "OpenCL's alone");
    assert_int_equal(addr, 0);
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const int nvidia = strstr(in->platform_vendor, "NVIDIA") && in->type == CLRUN_DEVICE_GPU;
    if (!nvidia) /* elsewhere no CUDA memory can be read (on NVIDIA, see shared_buffers) */
        CHECK_FAIL(ctx, clrun_buf_copy_from_cuda(small, 0, 0x1000, 16), CLRUN_UNSUPPORTED, "NVIDIA GPUs only");
    CHECK_FAIL(NULL, clrun_buf_copy_from_cuda(NULL, 0, 0x1000, 16), CLRUN_INVALID_ARG, "dst is NULL");
    CHECK_FAIL(ctx, clrun_buf_copy_from_cuda(small, 4000, 0x1000, 200), CLRUN_INVALID_ARG, "outside the buffer");
    CHECK_FAIL(ctx, clrun_buf_copy_from_cuda(small, 0, 0, 16), CLRUN_INVALID_ARG, "src is 0");
    CHECK_OK(ctx, clrun_buf_new(ctx, SHARED_MIN, 0, &big));
    CHECK_FAIL(NULL, clrun_cuda_synchronize(NULL), CLRUN_INVALID_ARG, "ctx is NULL");
    if (!nvidia) CHECK_FAIL(ctx, clrun_cuda_synchronize(ctx), CLRUN_UNSUPPORTED, "not an NVIDIA GPU");
    else CHECK_OK(ctx, clrun_cuda_synchronize(ctx));
    if (!nvidia) CHECK_FAIL(ctx, clrun_buf_cuda_address(big, &addr, &dev), CLRUN_UNSUPPORTED, "NVIDIA GPUs only");
    clrun_buf_free(small);
    clrun_buf_free(big);
}

static void shared_buffers(void **state)
{
    clrun_ctx *ctx = *state;
    char why[512];
    if (!shared_here(ctx, why, sizeof why)) {
        fprintf(stderr, "skipped: no memory shared with CUDA here: %s\n", why);
        skip();
    }
    const size_t bytes = SHARED_MIN + 12345, align = clrun_ctx_device(ctx)->mem_base_align;
    unsigned char *h = malloc(bytes), *back = malloc(bytes);
    assert_non_null(h);
    assert_non_null(back);
    for (size_t i = 0; i < bytes; i++) h[i] = (unsigned char)next();
    clrun_buf *a = NULL, *b = NULL, *view = NULL;
    uint64_t pa = 0, pb = 0, pv = 0;
    int da = -1, dv = -1;
    CHECK_OK(ctx, clrun_buf_new_from(ctx, h, bytes, 0, &a));
    CHECK_OK(ctx, clrun_buf_new(ctx, bytes, 0, &b));
    CHECK_OK(ctx, clrun_buf_cuda_address(a, &pa, &da));
    CHECK_OK(ctx, clrun_buf_cuda_address(b, &pb, NULL));
    assert_true(pa && pb && pa != pb && da >= 0);
    /* a view: the parent's address plus its offset */
    CHECK_OK(ctx, clrun_buf_sub(a, 3 * align, 64 * align, &view));
    CHECK_OK(ctx, clrun_buf_cuda_address(view, &pv, &dv));
    assert_int_equal(pv, pa + 3 * align);
    assert_int_equal(dv, da);
    /* what OpenCL wrote, copied by the CUDA driver (at odd offsets), read back through OpenCL */
    CHECK_OK(ctx, clrun_buf_fill(b, "\0", 1, 0, bytes));
    CHECK_OK(ctx, clrun_buf_copy_from_cuda(b, 7, pa + 11, bytes - 64));
    CHECK_OK(ctx, clrun_download(b, 0, back, bytes));
    assert_int_equal(back[0], 0);
    assert_memory_equal(back + 7, h + 11, bytes - 64);
    assert_int_equal(back[bytes - 57], 0);
    /* into a buffer OpenCL's alone (a small one): through the host, in pieces */
    clrun_buf *small = NULL;
    const size_t sn = 100003;
    unsigned char *sback = malloc(sn);
    assert_non_null(sback);
    CHECK_OK(ctx, clrun_buf_new(ctx, sn + 9, 0, &small));
    CHECK_FAIL(ctx, clrun_buf_cuda_address(small, &pv, NULL), CLRUN_UNSUPPORTED, "OpenCL's alone");
    CHECK_OK(ctx, clrun_buf_copy_from_cuda(small, 9, pa + 5, sn));
    CHECK_OK(ctx, clrun_download(small, 9, sback, sn));
    assert_memory_equal(sback, h + 5, sn);
    CHECK_FAIL(ctx, clrun_buf_copy_from_cuda(small, 0, 8, 16), CLRUN_INVALID_ARG, "reading CUDA memory");
    clrun_buf_free(small);
    free(sback);
    clrun_buf_free(view);
    clrun_buf_free(a);
    clrun_buf_free(b);
    free(h);
    free(back);
}

/* One GEMM on two contexts: one whose buffers are shared (the driver launches), one opened with
 * CLRUN_CUDA unset (OpenCL's kernels). */
struct pair {
    clrun_ctx *ctx[2];
};

static int pair_setup(void **state)
{
    struct pair *p = calloc(1, sizeof *p);
    setenv("CLRUN_CUDA", "1", 1);
    if (!p || clrun_open(&p->ctx[0], test_device()) != CLRUN_OK) return -1;
    clrun_buf *b = NULL; /* the first context's CUDA state is made now, before the variable is set */
    if (clrun_buf_new(p->ctx[0], SHARED_MIN, 0, &b) != CLRUN_OK) return -1;
    clrun_buf_free(b);
    unsetenv("CLRUN_CUDA");
    int ok = clrun_open(&p->ctx[1], test_device()) == CLRUN_OK && clrun_buf_new(p->ctx[1], SHARED_MIN, 0, &b) == CLRUN_OK;
    clrun_buf_free(b);
    *state = p;
    return ok ? 0 : -1;
}

static int pair_teardown(void **state)
{
    struct pair *p = *state;
    clrun_close(p->ctx[0]);
    clrun_close(p->ctx[1]);
    free(p);
    return 0;
}

/* A buffer of at least SHARED_MIN bytes holding bytes of host data. */
static clrun_buf *upload(clrun_ctx *ctx, const void *h, size_t bytes)
{
    clrun_buf *b = NULL;
    CHECK_OK(ctx, clrun_buf_new(ctx, bytes < SHARED_MIN ? SHARED_MIN : bytes, 0, &b));
    CHECK_OK(ctx, clrun_upload(b, 0, h, bytes));
    return b;
}

enum kind { F16, BF16, S8, SP };

/* C of one product on context i: kind, layout, batch. */
static void run(clrun_ctx *ctx, int shared, enum kind kind, int ta, int tb, size_t batch, size_t m, size_t n, size_t k, const void *ha,
                size_t abytes, const void *hb, size_t bbytes, const float *rowsc, const float *colsc, const float *bias, float *out)
{
    clrun_buf *a = upload(ctx, ha, abytes), *b = upload(ctx, hb, bbytes), *c = NULL, *meta = NULL, *vals = NULL, *rs = NULL, *cs = NULL,
              *bi = NULL;
    const size_t cbytes = sizeof(float) * m * n * batch;
    CHECK_OK(ctx, clrun_buf_new(ctx, cbytes < SHARED_MIN ? SHARED_MIN : cbytes, 0, &c));
    uint64_t addr;
    assert_int_equal(clrun_buf_cuda_address(c, &addr, NULL) == CLRUN_OK, shared);
    clrun_gemm_desc d = {0};
    d.trans_a = ta, d.trans_b = tb, d.m = m, d.n = n, d.k = k, d.alpha = 1.0f, d.beta = 0.0f, d.a = a, d.b = b, d.c = c;
    d.lda = ta ? m : k, d.ldb = tb ? k : n, d.ldc = n, d.batch = batch;
    d.stride_a = m * k, d.stride_b = k * n, d.stride_c = m * n;
    d.type = kind == F16 || kind == SP ? CLRUN_F16 : kind == BF16 ? CLRUN_BF16 : CLRUN_I8;
    if (kind == S8) {
        rs = upload(ctx, rowsc, sizeof(float) * m), cs = upload(ctx, colsc, sizeof(float) * n), bi = upload(ctx, bias, sizeof(float) * n);
        const clrun_s8_epilogue e = {rs, cs, bi, 1};
        CHECK_OK(ctx, clrun_gemm_s8(ctx, &d, &e));
    } else if (kind == SP) {
        const size_t kv = clrun_sp24_kv(k), km = clrun_sp24_km(k);
        CHECK_OK(ctx, clrun_buf_new(ctx, SHARED_MIN + 2 * m * kv, 0, &vals));
        CHECK_OK(ctx, clrun_buf_new(ctx, SHARED_MIN + 4 * m * km, 0, &meta));
        CHECK_OK(ctx, clrun_sp24_compress(ctx, CLRUN_F16, a, 0, k, m, k, vals, meta));
        d.a = vals, d.lda = kv;
        CHECK_OK(ctx, clrun_gemm_sp(ctx, &d, meta, 0));
    } else {
        CHECK_OK(ctx, clrun_gemm(ctx, &d));
    }
    CHECK_OK(ctx, clrun_download(c, 0, out, cbytes));
    clrun_buf_free(a), clrun_buf_free(b), clrun_buf_free(c), clrun_buf_free(meta), clrun_buf_free(vals);
    clrun_buf_free(rs), clrun_buf_free(cs), clrun_buf_free(bi);
}

static double elem(enum kind kind, const void *h, size_t i)
{
    if (kind == S8) return ((const int8_t *)h)[i];
    const uint16_t v = ((const uint16_t *)h)[i];
    return kind == BF16 ? clrun_bf16_to_f32(v) : clrun_f16_to_f32(v);
}

static void both_ways(void **state, const enum kind want)
{
    struct pair *p = *state;
    char why[512];
    if (!shared_here(p->ctx[0], why, sizeof why)) {
        fprintf(stderr, "skipped: no memory shared with CUDA here: %s\n", why);
        skip();
    }
    static const struct {
        enum kind kind;
        int ta, tb;
        size_t batch;
    } cases[] = {{F16, 0, 0, 1},  {F16, 1, 0, 1}, {F16, 0, 1, 2}, {F16, 1, 1, 1}, {BF16, 0, 0, 1},
                 {BF16, 1, 1, 2}, {S8, 0, 1, 1},  {SP, 0, 0, 1},  {SP, 0, 1, 1}};
    const size_t m = 1000 + 8 * (next() % 40), n = 1096 + 8 * (next() % 40), k = 528 + 32 * (next() % 16);
    fprintf(stderr, "M %zu N %zu K %zu\n", m, n, k);
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        const enum kind kind = cases[ci].kind;
        if (kind != want) continue;
        const int ta = cases[ci].ta, tb = cases[ci].tb;
        const size_t batch = cases[ci].batch, es = kind == S8 ? 1 : 2, abytes = es * m * k * batch, bbytes = es * k * n * batch;
        unsigned char *ha = malloc(abytes), *hb = malloc(bbytes);
        float *c0 = malloc(sizeof(float) * m * n * batch), *c1 = malloc(sizeof(float) * m * n * batch);
        float *rowsc = malloc(sizeof(float) * m), *colsc = malloc(sizeof(float) * n), *bias = malloc(sizeof(float) * n);
        assert_true(ha && hb && c0 && c1 && rowsc && colsc && bias);
        for (size_t i = 0; i < m * k * batch; i++) {
            const float v = (float)((int)(next() % 17) - 8) / 4.0f;
            if (kind == S8) ha[i] = (unsigned char)(int8_t)((int)(next() % 255) - 127);
            else ((uint16_t *)ha)[i] = kind == BF16 ? clrun_f32_to_bf16(v) : clrun_f32_to_f16(v);
        }
        for (size_t i = 0; i < k * n * batch; i++) {
            const float v = (float)((int)(next() % 17) - 8) / 8.0f;
            if (kind == S8) hb[i] = (unsigned char)(int8_t)((int)(next() % 255) - 127);
            else ((uint16_t *)hb)[i] = kind == BF16 ? clrun_f32_to_bf16(v) : clrun_f32_to_f16(v);
        }
        for (size_t i = 0; i < m; i++) rowsc[i] = 0.001f * (float)(1 + next() % 7);
        for (size_t j = 0; j < n; j++) colsc[j] = 0.01f * (float)(1 + next() % 5), bias[j] = (float)((int)(next() % 11) - 5);
        run(p->ctx[0], 1, kind, ta, tb, batch, m, n, k, ha, abytes, hb, bbytes, rowsc, colsc, bias, c0);
        run(p->ctx[1], 0, kind, ta, tb, batch, m, n, k, ha, abytes, hb, bbytes, rowsc, colsc, bias, c1);
        if (memcmp(c0, c1, sizeof(float) * m * n * batch)) {
            size_t i = 0;
            while (c0[i] == c1[i] || (isnan(c0[i]) && isnan(c1[i]))) i++;
            fail_msg("case %zu (kind %d, ta %d, tb %d, batch %zu): through the CUDA driver C[%zu] = %g, through OpenCL %g", ci, kind, ta,
                     tb, batch, i, c0[i], c1[i]);
        }
        /* and the host, at sampled elements (2:4: the product of the pruned A, checked in test_gemm; here dense kinds) */
        for (int t = 0; kind != SP && t < 200; t++) {
            const size_t z = next() % batch, i = next() % m, j = next() % n;
            double s = 0;
            for (size_t q = 0; q < k; q++)
                s += elem(kind, ha, z * m * k + (ta ? q * m + i : i * k + q)) * elem(kind, hb, z * k * n + (tb ? j * k + q : q * n + j));
            if (kind == S8) s = fmax(s * rowsc[i] * colsc[j] + bias[j], 0.0);
            const double got = c0[z * m * n + i * n + j];
            if (fabs(got - s) > 1e-3 * (1 + fabs(s)))
                fail_msg("case %zu: C[%zu][%zu][%zu] = %.6g, the host says %.6g", ci, z, i, j, got, s);
        }
        free(ha), free(hb), free(c0), free(c1), free(rowsc), free(colsc), free(bias);
    }
}

static void both_ways_f16(void **state) { both_ways(state, F16); }
static void both_ways_bf16(void **state) { both_ways(state, BF16); }
static void both_ways_s8(void **state) { both_ways(state, S8); }
static void both_ways_sp(void **state) { both_ways(state, SP); }

int main(void)
{
    setenv("CLRUN_CUDA", "1", 1); /* the first group's context shares memory where it can */
    if (getenv("CLRUN_TEST_FILTER")) cmocka_set_test_filter(getenv("CLRUN_TEST_FILTER"));
    rng = test_seed();
    const struct CMUnitTest one[] = {
        cmocka_unit_test(refusals),
        cmocka_unit_test(shared_buffers),
    };
    const struct CMUnitTest two[] = {
        cmocka_unit_test(both_ways_f16),
        cmocka_unit_test(both_ways_bf16),
        cmocka_unit_test(both_ways_s8),
        cmocka_unit_test(both_ways_sp),
    };
    return cmocka_run_group_tests_name("one context", one, ctx_setup, ctx_teardown) |
           cmocka_run_group_tests_name("CUDA and OpenCL", two, pair_setup, pair_teardown);
}
