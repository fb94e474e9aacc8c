/* test_group.c — device groups (clrun_group_*) on the test platform's devices (PoCL: two): group
 * specs, the deterministic row split (uneven weights, a device given nothing, more devices than
 * blocks), GEMM over the group bit-identical to one device's on fresh random products of awkward
 * shapes (transposes, beta, f16, the fast mode), a device failing mid-job, the weights measured, and
 * one binary cache filled by two devices' threads at once. */
#include "helpers.h"
#include "opkit.h" /* clrun__group_fail (the static library) */

#include <math.h>

static unsigned ndev(void)
{
    unsigned n = 0;
    CHECK_OK(NULL, clrun_device_count(&n));
    return n;
}

static void specs(void **state)
{
    (void)state;
    clrun_group *g = NULL;
    const unsigned n = ndev();
    unsetenv("CLRUN_DEVICES");
    CHECK_OK(NULL, clrun_group_open(&g, "all"));
    assert_int_equal(clrun_group_size(g), n);
    for (unsigned i = 0; i < n; i++) assert_non_null(clrun_group_ctx(g, i));
    assert_null(clrun_group_ctx(g, n));
    clrun_group_close(g);
    CHECK_OK(NULL, clrun_group_open(&g, NULL)); /* the default device alone */
    assert_int_equal(clrun_group_size(g), 1);
    clrun_group_close(g);
    CHECK_OK(NULL, clrun_group_open(&g, "0"));
    assert_int_equal(clrun_group_size(g), 1);
    clrun_group_close(g);
    CHECK_FAIL(NULL, clrun_group_open(&g, "0,0"), CLRUN_INVALID_ARG, "named twice");
    assert_null(g);
    CHECK_FAIL(NULL, clrun_group_open(&g, "0,,1"), CLRUN_INVALID_ARG, "empty");
    CHECK_FAIL(NULL, clrun_group_open(&g, "nosuchdevice"), CLRUN_NO_DEVICE, "nosuchdevice");
    CHECK_FAIL(NULL, clrun_group_open(NULL, "0"), CLRUN_INVALID_ARG, "NULL");
    if (n >= 2) {
        setenv("CLRUN_DEVICES", "1,0", 1);
        CHECK_OK(NULL, clrun_group_open(&g, ""));
        assert_int_equal(clrun_group_size(g), 2);
        clrun_device_info d1, d0;
        CHECK_OK(NULL, clrun_device_get(1, &d1));
        CHECK_OK(NULL, clrun_device_get(0, &d0));
        assert_string_equal(clrun_ctx_device(clrun_group_ctx(g, 0))->name, d1.name); /* in the order named */
        assert_string_equal(clrun_ctx_device(clrun_group_ctx(g, 1))->name, d0.name);
        clrun_group_close(g);
        unsetenv("CLRUN_DEVICES");
    }
    int types = 0; /* a type word takes every device of the type, and none is an error */
    for (unsigned i = 0; i < n; i++) {
        clrun_device_info in;
        CHECK_OK(NULL, clrun_device_get(i, &in));
        types |= 1 << in.type;
    }
    if (!(types & (1 << CLRUN_DEVICE_GPU))) CHECK_FAIL(NULL, clrun_group_open(&g, "gpu"), CLRUN_NO_DEVICE, "no such device");
    if (types & (1 << CLRUN_DEVICE_CPU)) {
        CHECK_OK(NULL, clrun_group_open(&g, "cpu"));
        assert_true(clrun_group_size(g) >= 1);
        clrun_group_close(g);
    }
}

/* The split, from weights set by hand: blocks of 128 rows by largest remainders, ties low. */
static void split(void **state)
{
    (void)state;
    clrun_group *g = NULL;
    CHECK_OK(NULL, clrun_group_open(&g, ndev() >= 2 ? "0,1" : "0"));
    if (clrun_group_size(g) < 2) {
        clrun_group_close(g);
        fail_msg("the group tests need two devices (PoCL with POCL_DEVICES=\"pthread pthread\")");
    }
    size_t r[2];
    CHECK_OK(NULL, clrun_group_set_weights(g, (double[]){1, 1}));
    CHECK_OK(NULL, clrun_group_split_rows(g, 1000, r)); /* 8 blocks: 4 + 4, the last one short */
    assert_int_equal(r[0], 512), assert_int_equal(r[1], 488);
    CHECK_OK(NULL, clrun_group_set_weights(g, (double[]){3, 1}));
    CHECK_OK(NULL, clrun_group_split_rows(g, 1280, r)); /* 7.5 + 2.5: the tie to device 0 */
    assert_int_equal(r[0], 1024), assert_int_equal(r[1], 256);
    CHECK_OK(NULL, clrun_group_set_weights(g, (double[]){1, 0.0005}));
    CHECK_OK(NULL, clrun_group_split_rows(g, 1280, r)); /* under one block: nothing */
    assert_int_equal(r[0], 1280), assert_int_equal(r[1], 0);
    CHECK_OK(NULL, clrun_group_set_weights(g, (double[]){1, 1}));
    CHECK_OK(NULL, clrun_group_split_rows(g, 100, r)); /* more devices than blocks */
    assert_int_equal(r[0], 100), assert_int_equal(r[1], 0);
    CHECK_OK(NULL, clrun_group_set_weights(g, (double[]){0, 2}));
    CHECK_OK(NULL, clrun_group_split_rows(g, 300, r));
    assert_int_equal(r[0], 0), assert_int_equal(r[1], 300);
    CHECK_FAIL(NULL, clrun_group_set_weights(g, (double[]){0, 0}), CLRUN_INVALID_ARG, "every weight");
    CHECK_FAIL(NULL, clrun_group_set_weights(g, (double[]){-1, 1}), CLRUN_INVALID_ARG, "weight 0");
    CHECK_FAIL(NULL, clrun_group_set_weights(g, (double[]){NAN, 1}), CLRUN_INVALID_ARG, "weight 0");
    double w[2];
    CHECK_OK(NULL, clrun_group_set_weights(g, NULL)); /* measured: both devices run GEMM */
    CHECK_OK(NULL, clrun_group_weights(g, w));
    assert_true(w[0] > 0 && w[1] > 0);
    fprintf(stderr, "measured weights (GFLOP/s): %.2f, %.2f\n", w[0], w[1]);
    setenv("CLRUN_GROUP_WEIGHTS", "3,1", 1); /* the user's weights, not measured */
    CHECK_OK(NULL, clrun_group_set_weights(g, NULL));
    CHECK_OK(NULL, clrun_group_weights(g, w));
    assert_true(w[0] == 3 && w[1] == 1);
    setenv("CLRUN_GROUP_WEIGHTS", "1", 1);
    CHECK_FAIL(NULL, clrun_group_set_weights(g, NULL), CLRUN_INVALID_ARG, "one weight per device");
    unsetenv("CLRUN_GROUP_WEIGHTS");
    clrun_group_close(g);
}

/* A bad CLRUN_GROUP_WEIGHTS (wrong count, all 0) is refused by every call that splits work, on a
 * group that has no weights yet: never ignored, never a division by zero or an unwritten result. */
static void bad_weights_refused_everywhere(void **state)
{
    (void)state;
    const unsigned n = ndev() >= 3 ? 3 : ndev() >= 2 ? 2 : 1; /* three or more once wrote an all-zero C */
    const char *spec = n == 3 ? "0,1,2" : n == 2 ? "0,1" : "0";
    /* for this group: wrong counts and all zeros */
    static const char *const bad3[] = {"0,0,0", "1,2", "1,2,3,4", "5"}, *const bad2[] = {"0,0", "1,2,3", "5"}, *const bad1[] = {"0", "1,2"};
    const char *const *bad = n == 3 ? bad3 : n == 2 ? bad2 : bad1;
    const size_t nbad = n == 3 ? 4 : n == 2 ? 3 : 2;
    float a[64 * 64], c[64 * 64];
    for (size_t i = 0; i < 64 * 64; i++) a[i] = (float)(i % 7), c[i] = -1.0f;
    for (size_t b = 0; b < nbad; b++) {
        const char *one = bad[b];
        setenv("CLRUN_GROUP_WEIGHTS", one, 1);
        clrun_group *g = NULL;
        CHECK_OK(NULL, clrun_group_open(&g, spec));
        size_t rows[3];
        CHECK_FAIL(NULL, clrun_group_split_rows(g, 300, rows), CLRUN_INVALID_ARG, "CLRUN_GROUP_WEIGHTS");
        clrun_gemm_desc d = {0};
        d.m = d.n = d.k = 64, d.alpha = 1, d.lda = d.ldb = d.ldc = 64;
        CHECK_FAIL(NULL, clrun_group_gemm(g, &d, a, a, c), CLRUN_INVALID_ARG, "CLRUN_GROUP_WEIGHTS");
        for (size_t i = 0; i < 64 * 64; i++) assert_true(c[i] == -1.0f); /* nothing written */
        CHECK_FAIL(NULL, clrun_group_vec(g, CLRUN_ADD, CLRUN_F32, 64 * 64, 1, c, a, a, NULL), CLRUN_INVALID_ARG, "CLRUN_GROUP_WEIGHTS");
        double v;
        CHECK_FAIL(NULL, clrun_group_reduce(g, "sum", CLRUN_F32, a, NULL, 64 * 64, &v, NULL), CLRUN_INVALID_ARG, "CLRUN_GROUP_WEIGHTS");
        double w[3];
        CHECK_FAIL(NULL, clrun_group_weights(g, w), CLRUN_INVALID_ARG, "one weight per device");
        clrun_group_close(g);
    }
    unsetenv("CLRUN_GROUP_WEIGHTS");
}

/* Fill n elements of type t with small random values (f16 patterns for CLRUN_F16). */
static void *fill(uint64_t *rng, size_t n, clrun_dtype t)
{
    const size_t es = clrun_dtype_size(t);
    unsigned char *p = malloc(n * es + 1);
    for (size_t i = 0; i < n; i++) {
        const float v = rng_float(rng);
        if (t == CLRUN_F32) memcpy(p + i * 4, &v, 4);
        else {
            const uint16_t h = clrun_f32_to_f16(v);
            memcpy(p + i * 2, &h, 2);
        }
    }
    return p;
}

struct shape {
    size_t m, n, k;
    int ta, tb, fast;
    float beta;
    clrun_dtype t;
};

/* One product over the group at several weights (and with a device failing) against device 0 alone:
 * the same bits. */
static void product(clrun_group *one, clrun_group *two, struct shape s, uint64_t *rng)
{
    const size_t ar = s.ta ? s.k : s.m, ac = s.ta ? s.m : s.k, br = s.tb ? s.n : s.k, bc = s.tb ? s.k : s.n;
    const size_t lda = ac + rng_next(rng) % 3, ldb = bc + rng_next(rng) % 3, ldc = s.n + rng_next(rng) % 3;
    void *a = fill(rng, ar * lda, s.t), *b = fill(rng, br * ldb, s.t);
    float *c0 = fill(rng, s.m * ldc, CLRUN_F32), *want = malloc(s.m * ldc * 4), *got = malloc(s.m * ldc * 4);
    clrun_gemm_desc d = {0};
    d.trans_a = s.ta, d.trans_b = s.tb, d.m = s.m, d.n = s.n, d.k = s.k, d.alpha = 0.75f, d.beta = s.beta;
    d.lda = lda, d.ldb = ldb, d.ldc = ldc, d.fast = s.fast, d.type = s.t;
    memcpy(want, c0, s.m * ldc * 4);
    CHECK_OK(NULL, clrun_group_gemm(one, &d, a, b, want));
    static const double weights[][2] = {{1, 1}, {1, 3}, {5, 1}, {1, 0}, {0, 1}};
    for (int w = 0; w < 6; w++) {
        memcpy(got, c0, s.m * ldc * 4);
        if (w < 5) CHECK_OK(NULL, clrun_group_set_weights(two, weights[w]));
        else clrun__group_fail(two, 1); /* device 1 fails: its rows are computed again on device 0 */
        CHECK_OK(NULL, clrun_group_gemm(two, &d, a, b, got));
        clrun__group_fail(two, -1);
        for (size_t i = 0; i < s.m * ldc; i++)
            if (memcmp(&got[i], &want[i], 4))
                fail_msg("%zux%zux%zu (ta %d tb %d fast %d beta %g %s), %s: C[%zu][%zu] is %a, one device gives %a", s.m, s.n, s.k, s.ta,
                         s.tb, s.fast, s.beta, clrun_dtype_name(s.t), w < 5 ? "weights" : "device 1 failing", i / ldc, i % ldc, got[i],
                         want[i]);
    }
    free(a), free(b), free(c0), free(want), free(got);
}

static void gemm_bit_identical(void **state)
{
    (void)state;
    clrun_group *one = NULL, *two = NULL;
    uint64_t rng = test_seed();
    CHECK_OK(NULL, clrun_group_open(&one, "0"));
    CHECK_OK(NULL, clrun_group_open(&two, "0,1"));
    const struct shape shapes[] = {
        {700, 300, 129, 0, 0, 0, 0, CLRUN_F32},
        {383, 257, 64, 1, 0, 0, 0.5f, CLRUN_F32},
        {300, 129, 77, 0, 1, 1, 0, CLRUN_F32},
        {513, 65, 200, 1, 1, 0, -1.0f, CLRUN_F32},
        {260, 96, 160, 0, 0, 0, 0, CLRUN_F16},
        {129, 33, 0, 0, 0, 0, 2.0f, CLRUN_F32},
        {1 + rng_next(&rng) % 600, 1 + rng_next(&rng) % 200, 1 + rng_next(&rng) % 200, (int)(rng_next(&rng) & 1), (int)(rng_next(&rng) & 1),
         0, 0.25f, CLRUN_F32},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) product(one, two, shapes[i], &rng);
    /* a group whose only device fails reports it, naming the device */
    clrun__group_fail(one, 0);
    float c = 0, x = 1;
    clrun_gemm_desc d = {0};
    d.m = d.n = d.k = 1, d.alpha = 1, d.lda = d.ldb = d.ldc = 1;
    CHECK_FAIL(NULL, clrun_group_gemm(one, &d, &x, &x, &c), CLRUN_CL_ERROR, "every device failed");
    CHECK_FAIL(NULL, clrun_group_gemm(one, &(clrun_gemm_desc){.m = 2, .n = 2, .k = 2, .lda = 1, .ldb = 2, .ldc = 2}, &x, &x, &c),
               CLRUN_INVALID_ARG, "leading dimension");
    clrun_group_close(one);
    clrun_group_close(two);
}

/* Two devices' threads build the same programs into one empty cache at once (each kind of device
 * its own entries: the test runs again on two different PoCL devices, `group-two-kinds`); a second
 * group then loads them (no build) and computes the same bits. */
static void one_cache_two_devices(void **state)
{
    (void)state;
    char dir[] = "/tmp/clrun-group-cache-XXXXXX", cmd[128];
    assert_non_null(mkdtemp(dir));
    const char *old = getenv("CLRUN_CACHE_DIR");
    char *saved = old ? strdup(old) : NULL;
    setenv("CLRUN_CACHE_DIR", dir, 1);
    uint64_t rng = test_seed() + 5;
    float *a = fill(&rng, 300 * 300, CLRUN_F32), *c1 = calloc(300 * 300, 4), *c2 = calloc(300 * 300, 4);
    clrun_gemm_desc d = {0};
    d.m = d.n = d.k = 300, d.alpha = 1, d.lda = d.ldb = d.ldc = 300;
    clrun_group *g0 = NULL; /* to name the devices */
    CHECK_OK(NULL, clrun_group_open(&g0, "0,1"));
    for (int run = 0; run < 2; run++) {
        clrun_group *g = NULL;
        CHECK_OK(NULL, clrun_group_open(&g, "0,1"));
        CHECK_OK(NULL, clrun_group_set_weights(g, (double[]){1, 1}));
        CHECK_OK(NULL, clrun_group_gemm(g, &d, a, a, run ? c2 : c1));
        clrun_group_close(g);
        /* the probe and the GEMM kernel at least, for each kind of device: the key holds the device */
        const int kinds = strcmp(clrun_ctx_device(clrun_group_ctx(g0, 0))->name, clrun_ctx_device(clrun_group_ctx(g0, 1))->name) ? 2 : 1;
        snprintf(cmd, sizeof cmd, "test $(ls %s | grep -c '\\.bin$') -ge %d", dir, 2 * kinds);
        assert_int_equal(system(cmd), 0);
        snprintf(cmd, sizeof cmd, "test $(ls %s | grep -vc '\\.bin$') -eq 0", dir); /* no temporary or loading mark left */
        assert_int_equal(system(cmd), 0);
    }
    assert_memory_equal(c1, c2, 300 * 300 * 4);
    clrun_group_close(g0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    if (saved) setenv("CLRUN_CACHE_DIR", saved, 1), free(saved);
    else unsetenv("CLRUN_CACHE_DIR");
    free(a), free(c1), free(c2);
}

/* Element-wise ops over the group equal one device's bit for bit (f32 and f16, ranges of 4096 split
 * unevenly, a device failing); reductions within the one-device bound; NaN and ties across ranges. */
static void vec_and_reduce(void **state)
{
    (void)state;
    clrun_group *one = NULL, *two = NULL;
    uint64_t rng = test_seed() + 9;
    CHECK_OK(NULL, clrun_group_open(&one, "0"));
    CHECK_OK(NULL, clrun_group_open(&two, "0,1"));
    const size_t n = 3 * 4096 + 1 + rng_next(&rng) % 20000;
    for (int ti = 0; ti < 2; ti++) {
        const clrun_dtype t = ti ? CLRUN_F16 : CLRUN_F32;
        const size_t es = clrun_dtype_size(t);
        void *a = fill(&rng, n, t), *b = fill(&rng, n, t), *c = fill(&rng, n, t);
        char *want = malloc(n * es), *got = malloc(n * es);
        for (clrun_vec_op op = CLRUN_MUL; op <= CLRUN_FMA; op++) {
            CHECK_OK(NULL, clrun_group_vec(one, op, t, n, 1.5f, want, a, b, c));
            for (int w = 0; w < 3; w++) {
                memset(got, 0x7f, n * es);
                CHECK_OK(NULL, clrun_group_set_weights(two, w == 0 ? (double[]){1, 1} : (double[]){1, 4}));
                if (w == 2) clrun__group_fail(two, 0);
                CHECK_OK(NULL, clrun_group_vec(two, op, t, n, 1.5f, got, a, b, c));
                clrun__group_fail(two, -1);
                if (memcmp(got, want, n * es))
                    fail_msg("%s %s (split %d): differs from one device", clrun_vec_op_name(op), clrun_dtype_name(t), w);
            }
        }
        /* reductions against a double reference */
        double ref[3] = {0, 0, 0}, S[3] = {0, 0, 0};
        for (size_t i = 0; i < n; i++) {
            float x, y;
            if (ti) {
                uint16_t h;
                memcpy(&h, (char *)a + i * 2, 2), x = clrun_f16_to_f32(h);
                memcpy(&h, (char *)b + i * 2, 2), y = clrun_f16_to_f32(h);
            } else {
                memcpy(&x, (char *)a + i * 4, 4), memcpy(&y, (char *)b + i * 4, 4);
            }
            ref[0] += x, S[0] += fabs(x), ref[1] += (double)x * y, S[1] += fabs((double)x * y), ref[2] += (double)x * x,
                S[2] += (double)x * x;
        }
        static const char *const sums[] = {"sum", "dot", "norm2"};
        for (int k = 0; k < 3; k++) {
            double v = 0;
            CHECK_OK(NULL, clrun_group_reduce(two, sums[k], t, a, b, n, &v, NULL));
            const double r = k == 2 ? sqrt(ref[2]) : ref[k],
                         bound = k == 2 ? (8 * 0x1p-24 * S[2]) / (2 * r) + 1e-30 : 8 * 0x1p-24 * S[k] + 1e-30;
            if (fabs(v - r) > bound) fail_msg("%s %s: %.17g, exact %.17g, bound %g", sums[k], clrun_dtype_name(t), v, r, bound);
        }
        free(a), free(b), free(c), free(want), free(got);
    }
    /* max, min and argmax: ties and NaN across the ranges, the first one wins */
    float *x = calloc(n, 4);
    for (size_t i = 0; i < n; i++) x[i] = rng_float(&rng);
    const size_t late = n - 5, early = 4100; /* in device 1's range and in device 0's */
    x[late] = 7, x[early] = 7;
    CHECK_OK(NULL, clrun_group_set_weights(two, (double[]){1, 1}));
    double v = 0;
    size_t idx = 0;
    CHECK_OK(NULL, clrun_group_reduce(two, "argmax", CLRUN_F32, x, NULL, n, &v, &idx));
    assert_int_equal(idx, early), assert_true(v == 7);
    CHECK_OK(NULL, clrun_group_reduce(two, "max", CLRUN_F32, x, NULL, n, &v, NULL));
    assert_true(v == 7);
    x[late] = NAN;
    CHECK_OK(NULL, clrun_group_reduce(two, "argmax", CLRUN_F32, x, NULL, n, &v, &idx));
    assert_int_equal(idx, late);
    CHECK_OK(NULL, clrun_group_reduce(two, "min", CLRUN_F32, x, NULL, n, &v, NULL));
    assert_true(isnan(v));
    CHECK_FAIL(NULL, clrun_group_reduce(two, "mean", CLRUN_F32, x, NULL, n, &v, NULL), CLRUN_INVALID_ARG, "not sum");
    CHECK_FAIL(NULL, clrun_group_reduce(two, "max", CLRUN_F32, x, NULL, 0, &v, NULL), CLRUN_INVALID_ARG, "no elements");
    CHECK_FAIL(NULL, clrun_group_vec(two, CLRUN_ADD, CLRUN_F32, n, 1, x, x, NULL, NULL), CLRUN_INVALID_ARG, "needs b");
    free(x);
    clrun_group_close(one);
    clrun_group_close(two);
}

int main(void)
{
    const char *only = getenv("CLRUN_TEST_ONLY"); /* a test's name: run that one alone */
    if (only && *only) cmocka_set_test_filter(only);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(specs),
        cmocka_unit_test(split),
        cmocka_unit_test(bad_weights_refused_everywhere),
        cmocka_unit_test(gemm_bit_identical),
        cmocka_unit_test(one_cache_two_devices),
        cmocka_unit_test(vec_and_reduce),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
