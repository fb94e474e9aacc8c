/* test_gemm.c — f32 GEMM against an fp64 reference: both kernels (and CLBlast when built with it),
 * shapes of 0, 1, primes and non-multiples of every tile, all transposes, alpha/beta (beta = 0 must
 * ignore NaNs in C), leading dimensions larger than the matrix, offsets, strided batches; the error
 * is no worse than a plain f32 loop's; bad descriptors are refused. */
#include "helpers.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

struct problem {
    clrun_gemm_desc d;
    float *a, *b, *c; /* host copies (c: before the product) */
    size_t na, nb, nc;
};

/* Make a random problem; buffers sized exactly to what the descriptor needs plus a guard. */
static void make(clrun_ctx *ctx, struct problem *p, int ta, int tb, size_t m, size_t n, size_t k, size_t batch, uint64_t *s, int pad)
{
    memset(p, 0, sizeof *p);
    clrun_gemm_desc *d = &p->d;
    d->trans_a = ta, d->trans_b = tb, d->m = m, d->n = n, d->k = k, d->batch = batch;
    d->alpha = rng_float(s) * 2, d->beta = (rng_next(s) % 3 == 0) ? 0.0f : rng_float(s);
    size_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    d->lda = ac + (pad ? rng_next(s) % 5 : 0), d->ldb = bc + (pad ? rng_next(s) % 5 : 0), d->ldc = n + (pad ? rng_next(s) % 5 : 0);
    if (d->lda == 0) d->lda = 1;
    if (d->ldb == 0) d->ldb = 1;
    if (d->ldc == 0) d->ldc = 1;
    d->a_off = pad ? rng_next(s) % 7 : 0, d->b_off = pad ? rng_next(s) % 7 : 0, d->c_off = pad ? rng_next(s) % 7 : 0;
    d->stride_a = ar * d->lda + (pad ? 3 : 0), d->stride_b = br * d->ldb + (pad ? 1 : 0), d->stride_c = m * d->ldc + (pad ? 2 : 0);
    p->na = d->a_off + batch * d->stride_a + 8, p->nb = d->b_off + batch * d->stride_b + 8, p->nc = d->c_off + batch * d->stride_c + 8;
    p->a = malloc(p->na * 4), p->b = malloc(p->nb * 4), p->c = malloc(p->nc * 4);
    for (size_t i = 0; i < p->na; i++) p->a[i] = rng_float(s);
    for (size_t i = 0; i < p->nb; i++) p->b[i] = rng_float(s);
    for (size_t i = 0; i < p->nc; i++) p->c[i] = d->beta == 0.0f ? NAN : rng_float(s); /* beta 0: NaNs must vanish */
    CHECK_OK(ctx, clrun_buf_new(ctx, p->na * 4, 0, &d->a));
    CHECK_OK(ctx, clrun_buf_new(ctx, p->nb * 4, 0, &d->b));
    CHECK_OK(ctx, clrun_buf_new(ctx, p->nc * 4, 0, &d->c));
    CHECK_OK(ctx, clrun_upload(d->a, 0, p->a, p->na * 4));
    CHECK_OK(ctx, clrun_upload(d->b, 0, p->b, p->nb * 4));
}

static void drop(struct problem *p)
{
    clrun_buf_free(p->d.a), clrun_buf_free(p->d.b), clrun_buf_free(p->d.c);
    free(p->a), free(p->b), free(p->c);
}

#define A_(p, bt, i, q) (p)->a[(p)->d.a_off + (bt) * (p)->d.stride_a + ((p)->d.trans_a ? (q) * (p)->d.lda + (i) : (i) * (p)->d.lda + (q))]
#define B_(p, bt, q, j) (p)->b[(p)->d.b_off + (bt) * (p)->d.stride_b + ((p)->d.trans_b ? (j) * (p)->d.ldb + (q) : (q) * (p)->d.ldb + (j))]

/* Run with a backend and check every element of C (inside and outside the matrices). Returns the
 * largest error relative to the element's magnitude bound, and the plain f32 loop's (naive). */
static double run_check(clrun_ctx *ctx, struct problem *p, clrun_gemm_backend be, double *naive_err)
{
    clrun_gemm_desc d = p->d;
    d.backend = be;
    CHECK_OK(ctx, clrun_upload(d.c, 0, p->c, p->nc * 4));
    CHECK_OK(ctx, clrun_gemm(ctx, &d));
    float *got = malloc(p->nc * 4);
    CHECK_OK(ctx, clrun_download(d.c, 0, got, p->nc * 4));
    char *inside = calloc(p->nc, 1);
    double worst = 0, worst_naive = 0;
    size_t batch = d.batch ? d.batch : 1;
    for (size_t bt = 0; bt < batch; bt++)
        for (size_t i = 0; i < d.m; i++)
            for (size_t j = 0; j < d.n; j++) {
                double ref = 0, mag = 0;
                float plain = 0;
                for (size_t q = 0; q < d.k; q++) {
                    double x = A_(p, bt, i, q), y = B_(p, bt, q, j);
                    ref += x * y, mag += fabs(x * y);
                    plain += (float)x * (float)y;
                }
                size_t ci = d.c_off + bt * d.stride_c + i * d.ldc + j;
                inside[ci] = 1;
                double c0 = d.beta == 0.0f ? 0.0 : p->c[ci];
                double want = d.alpha * ref + (d.beta == 0.0f ? 0.0 : d.beta * c0);
                double scale = fabs(d.alpha) * mag + fabs(d.beta * c0) + 1e-30;
                double err = fabs(got[ci] - want) / scale;
                double plain_c = d.beta == 0.0f ? d.alpha * plain : d.alpha * plain + d.beta * c0;
                double nerr = fabs(plain_c - want) / scale;
                if (!(err <= 4.0 * (d.k + 2) / 16777216.0))
                    fail_msg("backend %d %s%s %zux%zux%zu batch %zu: C[%zu][%zu] of batch %zu = %.9g, want %.9g", be, d.trans_a ? "T" : "N",
                             d.trans_b ? "T" : "N", d.m, d.n, d.k, batch, i, j, bt, got[ci], want);
                if (err > worst) worst = err;
                if (nerr > worst_naive) worst_naive = nerr;
            }
    for (size_t ci = 0; ci < p->nc; ci++) /* nothing outside the matrices changed */
        if (!inside[ci] && !(memcmp(&got[ci], &p->c[ci], 4) == 0))
            fail_msg("backend %d: C buffer element %zu outside the matrices was written", be, ci);
    free(inside);
    free(got);
    if (naive_err) *naive_err = worst_naive;
    return worst;
}

static void shapes_transposes_kernels(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    const size_t dims[][3] = {{1, 1, 1},     {1, 7, 3},     {5, 1, 9},      {3, 4, 0},  {0, 5, 3},   {4, 0, 2},   {17, 13, 31},
                              {67, 129, 17}, {128, 64, 16}, {130, 131, 33}, {6, 16, 5}, {7, 17, 64}, {193, 61, 2}};
    const clrun_gemm_backend backs[] = {CLRUN_GEMM_GPU_KERNEL, CLRUN_GEMM_CPU_KERNEL, CLRUN_GEMM_AUTO};
    for (size_t t = 0; t < sizeof dims / sizeof *dims; t++)
        for (int tr = 0; tr < 4; tr++) {
            struct problem p;
            make(ctx, &p, tr & 1, (tr >> 1) & 1, dims[t][0], dims[t][1], dims[t][2], 1, &s, (int)(t % 2));
            p.d.fast = t % 3 == 1; /* both accumulation modes */
            for (size_t bi = 0; bi < sizeof backs / sizeof *backs; bi++) run_check(ctx, &p, backs[bi], NULL);
            drop(&p);
        }
}

/* K deeper than one slice (4096): the product runs as slices of K, each adding into C, with every
 * transpose, padding, offsets and batches; beta (0 with NaNs in C, or not) applies once. */
static void deep_k_in_slices(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    const size_t dims[][4] = {{5, 7, 2 * 4096 + 9, 1}, {3, 33, 4096 + 1, 2}, {9, 4, 3 * 4096, 1}};
    const clrun_gemm_backend backs[] = {CLRUN_GEMM_GPU_KERNEL, CLRUN_GEMM_CPU_KERNEL};
    for (size_t t = 0; t < sizeof dims / sizeof *dims; t++)
        for (int tr = 0; tr < 4; tr++) {
            struct problem p;
            make(ctx, &p, tr & 1, (tr >> 1) & 1, dims[t][0], dims[t][1], dims[t][2], dims[t][3], &s, (int)((t + tr) % 2));
            for (size_t bi = 0; bi < sizeof backs / sizeof *backs; bi++) run_check(ctx, &p, backs[bi], NULL);
            drop(&p);
        }
}

/* The tile variants the host can pick (and $CLRUN_GEMM_TILES can force), on awkward shapes. */
static void tile_variants(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    /* each variant compiles a program per transpose pair on PoCL (seconds each): NN and TT cover
     * both index paths of A and B; the shapes test covers all four pairs with the default tiles */
    const char *params[] = {"gpu-kernel:64,64,16,4,4,1,0", "gpu-kernel:64,128,16,8,8,0,2", "gpu-kernel:128,128,8,8,8,1,2",
                            "gpu-kernel:TM=32,TN=64,TK=8,WM=4,WN=8,VEC=1,DB=1"};
    for (size_t v = 0; v < sizeof params / sizeof *params; v++) {
        setenv("CLRUN_GEMM_TILES", params[v], 1);
        for (int tr = 0; tr < 4; tr += 3) {
            struct problem p;
            make(ctx, &p, tr & 1, tr >> 1, 131 + (size_t)(rng_next(&s) % 7), 67 + (size_t)(rng_next(&s) % 5), 37, 1, &s, 1);
            run_check(ctx, &p, CLRUN_GEMM_GPU_KERNEL, NULL);
            drop(&p);
        }
        /* dimensions and leading dimensions multiples of 4 but not of the tiles: 16-byte loads,
         * with a last slice that crosses K and runs clamped at the M and N edges */
        for (int tr = 0; tr < 4 && v > 0 && v < 3; tr += v == 2 ? 1 : 3) {
            struct problem p;
            make(ctx, &p, tr & 1, tr >> 1, 132 + 4 * (size_t)(rng_next(&s) % 3), 68 + 4 * (size_t)(rng_next(&s) % 3), 36, 1, &s, 0);
            run_check(ctx, &p, CLRUN_GEMM_GPU_KERNEL, NULL);
            drop(&p);
        }
    }
    unsetenv("CLRUN_GEMM_TILES");
}

static void batches(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    for (int tr = 0; tr < 4; tr++) {
        struct problem p;
        make(ctx, &p, tr & 1, tr >> 1, 19, 23, 29, 3, &s, 1);
        run_check(ctx, &p, CLRUN_GEMM_GPU_KERNEL, NULL);
        run_check(ctx, &p, CLRUN_GEMM_CPU_KERNEL, NULL);
        drop(&p);
    }
}

/* Max relative error no worse than a plain f32 loop on the same data. */
/* The default mode's max relative error against fp64 is no worse than a plain f32 loop's on the
 * same data (it sums each slice of K apart: about three times better); the fast mode is one
 * running sum with fma, a plain loop's accuracy, within the bound run_check asserts. */
static void accuracy_vs_plain_loop(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    struct problem p;
    make(ctx, &p, 0, 0, 67, 71, 2053, 1, &s, 0);
    p.d.alpha = 1.0f, p.d.beta = 0.0f;
    for (int fast = 0; fast < 2; fast++)
        for (int be = CLRUN_GEMM_GPU_KERNEL; be <= CLRUN_GEMM_CPU_KERNEL; be++) {
            p.d.fast = fast;
            double naive, err = run_check(ctx, &p, (clrun_gemm_backend)be, &naive);
            fprintf(stderr, "%s kernel%s: max relative error %.3g, plain f32 loop %.3g\n", be == CLRUN_GEMM_GPU_KERNEL ? "GPU" : "CPU",
                    fast ? " (fast)" : "", err, naive);
            if (!fast) assert_true(err <= naive);
        }
    drop(&p);
}

static void clblast_agrees(void **state)
{
    clrun_ctx *ctx = *state;
    if (!clrun_have_clblast()) {
        struct problem p;
        uint64_t s = test_seed();
        make(ctx, &p, 0, 0, 3, 3, 3, 1, &s, 0);
        p.d.backend = CLRUN_GEMM_CLBLAST;
        CHECK_FAIL(ctx, clrun_gemm(ctx, &p.d), CLRUN_UNSUPPORTED, "without CLBlast");
        drop(&p);
        return;
    }
    uint64_t s = test_seed();
    struct problem p;
    make(ctx, &p, 0, 1, 33, 47, 21, 1, &s, 1);
    run_check(ctx, &p, CLRUN_GEMM_CLBLAST, NULL);
    drop(&p);
    make(ctx, &p, 1, 0, 9, 10, 11, 2, &s, 1);
    run_check(ctx, &p, CLRUN_GEMM_CLBLAST, NULL);
    drop(&p);
}

static void bad_descriptors(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    struct problem p;
    make(ctx, &p, 0, 0, 8, 8, 8, 1, &s, 0);
    clrun_gemm_desc d = p.d;
    d.lda = 7;
    CHECK_FAIL(ctx, clrun_gemm(ctx, &d), CLRUN_INVALID_ARG, "ldA = 7 is smaller than its 8 columns");
    d = p.d;
    d.c_off = p.nc;
    CHECK_FAIL(ctx, clrun_gemm(ctx, &d), CLRUN_INVALID_ARG, "matrix C");
    d = p.d;
    d.batch = 2;
    CHECK_FAIL(ctx, clrun_gemm(ctx, &d), CLRUN_INVALID_ARG, "runs past its buffer");
    d = p.d;
    d.c = NULL;
    CHECK_FAIL(ctx, clrun_gemm(ctx, &d), CLRUN_INVALID_ARG, "C is NULL");
    d = p.d;
    d.backend = (clrun_gemm_backend)42;
    CHECK_FAIL(ctx, clrun_gemm(ctx, &d), CLRUN_INVALID_ARG, "unknown backend");
    CHECK_FAIL(ctx, clrun_gemm(ctx, NULL), CLRUN_INVALID_ARG, "NULL");
    drop(&p);
}

static void count_line(void *user, const char *line)
{
    assert_non_null(line);
    assert_null(strchr(line, '\n'));
    ++*(int *)user;
}

/* clrun_gemm_tune: every class of the portable kernel and of auto measured, the CPU kernel per type,
 * the winners stored where the next context reads them, and refusals. */
static void tune_measures_and_stores(void **state)
{
    (void)state;
    char save[4096] = "", dir[] = "/tmp/clrun-tune-XXXXXX", path[4300];
    const char *old = getenv("CLRUN_CACHE_DIR");
    if (old) snprintf(save, sizeof save, "%s", old);
    assert_non_null(mkdtemp(dir));
    setenv("CLRUN_CACHE_DIR", dir, 1);
    clrun_ctx *ctx = NULL;
    CHECK_OK(NULL, clrun_open(&ctx, test_device()));
    int lines = 0;
    clrun_gemm_tune_opts o = {.size = 32, .quick = 1, .store = 1, .progress = count_line, .user = &lines};
    clrun_gemm_tuned w[64];
    size_t n = 99;
    o.size = 8;
    CHECK_FAIL(ctx, clrun_gemm_tune(ctx, &o, w, 64, &n), CLRUN_INVALID_ARG, "size 8");
    assert_int_equal(n, 0);
    o.size = 32;
    CHECK_OK(ctx, clrun_gemm_tune(ctx, &o, w, 64, &n));
    assert_true(lines > 10);
    int classes = 0, portable = 0, cpu = 0;
    const char *auto_small = NULL;
    for (size_t i = 0; i < n && i < 64; i++) {
        clrun_gemm_backend b;
        assert_true(w[i].gflops > 0);
        if (!strcmp(w[i].backend, "auto")) {
            CHECK_OK(NULL, clrun_gemm_backend_parse(w[i].value, &b));
            classes++;
            if (!strcmp(w[i].key, "small")) auto_small = w[i].value;
        } else {
            CHECK_OK(NULL, clrun_gemm_backend_parse(w[i].backend, &b));
            assert_non_null(strchr(w[i].value, ','));
            portable += !strcmp(w[i].backend, "gpu-kernel");
            cpu += !strcmp(w[i].backend, "cpu-kernel");
        }
    }
    assert_int_equal(classes, 4);
    assert_int_equal(portable, 4); /* small, large and their fast forms */
    assert_int_equal(cpu, 2);      /* f32, f16 */
    assert_non_null(auto_small);
    /* stored: a fresh context's auto takes the small class's winner */
    assert_non_null(clrun_gemm_tuning_path(ctx, path, sizeof path));
    clrun_close(ctx);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char text[4096];
    text[fread(text, 1, sizeof text - 1, f)] = 0;
    fclose(f);
    assert_non_null(strstr(text, "\ngpu-kernel large-fast "));
    assert_non_null(strstr(text, "\nauto small "));
    CHECK_OK(NULL, clrun_open(&ctx, test_device()));
    clrun_gemm_desc small = {.m = 8, .n = 8, .k = 8, .backend = CLRUN_GEMM_AUTO};
    assert_string_equal(clrun_gemm_backend_name(clrun_gemm_resolve(ctx, &small)), auto_small);
    uint64_t s = test_seed();
    struct problem p; /* the tuned tiles multiply right */
    make(ctx, &p, 1, 1, 53, 31, 29, 1, &s, 1);
    run_check(ctx, &p, CLRUN_GEMM_GPU_KERNEL, NULL);
    drop(&p);
    /* opts NULL: the defaults (N 256 on a CPU), nothing stored, no progress; here only the refusal of
     * count NULL is cheap enough to ask */
    CHECK_FAIL(ctx, clrun_gemm_tune(ctx, NULL, w, 64, NULL), CLRUN_INVALID_ARG, "count");
    clrun_close(ctx);
    remove(path);
    rmdir(dir);
    if (old) setenv("CLRUN_CACHE_DIR", save, 1);
    else unsetenv("CLRUN_CACHE_DIR");
}

/* CLRUN_GEMM_AUTO follows the tuning file per shape class; without one, or with lines it does not
 * understand, it runs clrun's kernel for the device; CLRUN_GEMM_KERNEL ignores the file. */
static void auto_follows_tuning(void **state)
{
    (void)state;
    char save[4096] = "", dir[] = "/tmp/clrun-tune-XXXXXX", path[4300];
    const char *old = getenv("CLRUN_CACHE_DIR");
    if (old) snprintf(save, sizeof save, "%s", old);
    assert_non_null(mkdtemp(dir));
    setenv("CLRUN_CACHE_DIR", dir, 1);
    clrun_ctx *ctx = NULL;
    CHECK_OK(NULL, clrun_open(&ctx, test_device()));
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const clrun_gemm_backend own = in->type == CLRUN_DEVICE_CPU ? CLRUN_GEMM_CPU_KERNEL : CLRUN_GEMM_GPU_KERNEL;
    const clrun_gemm_backend other = own == CLRUN_GEMM_CPU_KERNEL ? CLRUN_GEMM_GPU_KERNEL : CLRUN_GEMM_CPU_KERNEL;
    clrun_gemm_desc small = {.m = 8, .n = 8, .k = 8, .backend = CLRUN_GEMM_AUTO};
    clrun_gemm_desc large = {.m = 256 * (size_t)in->compute_units, .n = 128, .k = 8, .backend = CLRUN_GEMM_AUTO};
    assert_int_equal(clrun_gemm_resolve(ctx, &small), own);
    assert_int_equal(clrun_gemm_resolve(ctx, &large), own);
    assert_string_equal(clrun_gemm_backend_name(CLRUN_GEMM_CPU_KERNEL), "cpu-kernel"); /* the names the file uses */
    assert_string_equal(clrun_gemm_backend_name((clrun_gemm_backend)99), "?");
    assert_non_null(clrun_gemm_tuning_path(ctx, path, sizeof path));
    clrun_close(ctx);

    const clrun_gemm_backend want_small = clrun_have_clblast() ? CLRUN_GEMM_CLBLAST : other;
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    /* (the wgmma kernel's rows, one per kind, and an unknown kind, leave the class lines as they are) */
    fprintf(f,
            "# test\nwgmma 128,256,2,256,3,0,32,1\nwgmma-s8 128,128,1,128,3,0,64,0\nwgmma-sp-large 192,128,3,128,3,0,64,1\n"
            "wgmma-f64 1,2,3,4,5,6,7,8\nsmall 64,64,16,4,4,1,1 %s\nlarge 64,128,8,8,8,1,1 %s\n",
            clrun_have_clblast() ? "clblast" : "cpu-kernel", other == CLRUN_GEMM_CPU_KERNEL ? "cpu-kernel" : "gpu-kernel");
    fclose(f);
    CHECK_OK(NULL, clrun_open(&ctx, test_device()));
    assert_int_equal(clrun_gemm_resolve(ctx, &small), want_small);
    assert_int_equal(clrun_gemm_resolve(ctx, &large), other);
    small.type = CLRUN_F16; /* CLBlast takes no f16: auto keeps to clrun's kernels */
    if (!clrun_gemm_tensor_cores(ctx)) assert_int_equal(clrun_gemm_resolve(ctx, &small), clrun_have_clblast() ? own : other);
    small.type = CLRUN_F32;
    large.backend = small.backend = CLRUN_GEMM_KERNEL;
    assert_int_equal(clrun_gemm_resolve(ctx, &small), own);
    assert_int_equal(clrun_gemm_resolve(ctx, &large), own);
    large.backend = small.backend = CLRUN_GEMM_AUTO;
    uint64_t s = test_seed();
    struct problem p; /* and the product it picks is right */
    make(ctx, &p, 1, 0, 37, 29, 41, 1, &s, 1);
    run_check(ctx, &p, CLRUN_GEMM_AUTO, NULL);
    drop(&p);
    clrun_close(ctx);

    f = fopen(path, "w"); /* damaged lines are skipped */
    assert_non_null(f);
    fputs("small 64,64,16,4,4,1,1 fftw\n\n   \nlarge 1,2,3 clblast\nmedium 64,64,16,4,4,1,1 clblast\n", f); /* blank lines too */
    fclose(f);
    CHECK_OK(NULL, clrun_open(&ctx, test_device()));
    assert_int_equal(clrun_gemm_resolve(ctx, &small), own);
    assert_int_equal(clrun_gemm_resolve(ctx, &large), own);
    clrun_close(ctx);

    f = fopen(path, "w"); /* a tensor-core winner (3xTF32): taken where it runs and the rows need no staging */
    assert_non_null(f);
    fputs("small 64,64,16,4,4,1,1 mma.sync\nlarge 64,128,8,8,8,1,1 mma.sync\n", f);
    fclose(f);
    CHECK_OK(NULL, clrun_open(&ctx, test_device()));
    clrun_gemm_desc odd = {.m = 7, .n = 7, .k = 7, .lda = 7, .ldb = 7, .ldc = 7, .backend = CLRUN_GEMM_AUTO}; /* rows of 28 bytes */
    clrun_gemm_desc rows16 = large; /* rows on 16 bytes: A M×8, B 8×128, C M×128 */
    rows16.lda = 8, rows16.ldb = rows16.ldc = 128;
    assert_int_equal(clrun_gemm_resolve(ctx, &rows16), clrun_gemm_tensor_cores(ctx) ? CLRUN_GEMM_MMA_SYNC : own);
    assert_int_equal(clrun_gemm_resolve(ctx, &odd), own);
    clrun_close(ctx);
    f = fopen(path, "w"); /* today's form: a row's tiles by key, and auto's backend by class */
    assert_non_null(f);
    fprintf(f, "gpu-kernel small 64,64,16,4,4,1,1\nauto small %s\nauto large %s\ncpu-kernel f32 4,3\n",
            clrun_have_clblast() ? "clblast" : "cpu-kernel", other == CLRUN_GEMM_CPU_KERNEL ? "cpu-kernel" : "gpu-kernel");
    fclose(f);
    CHECK_OK(NULL, clrun_open(&ctx, test_device()));
    small.backend = large.backend = CLRUN_GEMM_AUTO;
    assert_int_equal(clrun_gemm_resolve(ctx, &small), want_small);
    assert_int_equal(clrun_gemm_resolve(ctx, &large), other);
    make(ctx, &p, 0, 1, 45, 33, 19, 1, &s, 0);
    run_check(ctx, &p, CLRUN_GEMM_CPU_KERNEL, NULL); /* the tuned 4,3 */
    drop(&p);
    clrun_close(ctx);
    remove(path);
    rmdir(dir);
    if (old) setenv("CLRUN_CACHE_DIR", save, 1);
    else unsetenv("CLRUN_CACHE_DIR");
}

int main(void)
{
    const char *only = getenv("CLRUN_TEST_ONLY"); /* a test's name: run that one alone */
    if (only && *only) cmocka_set_test_filter(only);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shapes_transposes_kernels),
        cmocka_unit_test(tile_variants),
        cmocka_unit_test(batches),
        cmocka_unit_test(accuracy_vs_plain_loop),
        cmocka_unit_test(clblast_agrees),
        cmocka_unit_test(bad_descriptors),
        cmocka_unit_test(auto_follows_tuning),
        cmocka_unit_test(tune_measures_and_stores),
        cmocka_unit_test(deep_k_in_slices),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
