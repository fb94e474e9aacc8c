/* test_kernel.c — arguments of every kind with signature checks, launches in 1-3 dimensions with
 * and without a local size, events and profiling times, the per-kernel profile. */
#include "helpers.h"

#include <math.h>

#define KDIR TEST_DATA_DIR "/kernels"

struct fixture {
    clrun_ctx *ctx;
    clrun_prog *prog;
    int fp64;
};

static int setup(void **state)
{
    static struct fixture f;
    if (clrun_open(&f.ctx, test_device()) != CLRUN_OK) {
        fprintf(stderr, "%s\n", clrun_last_error(NULL));
        return -1;
    }
    f.fp64 = clrun_ctx_device(f.ctx)->fp64;
    if (clrun_prog_file(f.ctx, KDIR "/args.cl", f.fp64 ? "-DHAVE_FP64" : NULL, &f.prog) != CLRUN_OK) {
        fprintf(stderr, "%s\n", clrun_last_error(f.ctx));
        return -1;
    }
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    clrun_prog_free(f->prog);
    clrun_close(f->ctx);
    return 0;
}

static void every_scalar_type(void **state)
{
    struct fixture *f = *state;
    clrun_ctx *ctx = f->ctx;
    clrun_kernel *k = NULL;
    clrun_buf *out = NULL;
    uint64_t res[11], s = test_seed();
    CHECK_OK(ctx, clrun_kernel_new(f->prog, "scalars", &k));
    assert_int_equal(clrun_kernel_nargs(k), f->fp64 ? 12 : 11);
    CHECK_OK(ctx, clrun_buf_new(ctx, sizeof res, 0, &out));
    uint64_t zero = 0;
    CHECK_OK(ctx, clrun_buf_fill(out, &zero, 8, 0, sizeof res));
    int8_t a = (int8_t)(rng_next(&s) | 0x80);
    uint8_t b = (uint8_t)(rng_next(&s) | 0x80);
    int16_t c = (int16_t)(rng_next(&s) | 0x8000);
    uint16_t d = (uint16_t)(rng_next(&s) | 0x8000);
    int32_t e = (int32_t)(rng_next(&s) | 0x80000000u);
    uint32_t fu = (uint32_t)(rng_next(&s) | 0x80000000u);
    int64_t g = (int64_t)(rng_next(&s) | 0x8000000000000000ull);
    uint64_t h = rng_next(&s) | 0x8000000000000000ull;
    float x = rng_float(&s) * 1e20f;
    double y = (double)rng_float(&s) * 1e300;
    float v[4] = {rng_float(&s), 1.0f, 2.0f, rng_float(&s)};
    unsigned i = 0;
    CHECK_OK(ctx, clrun_arg_buf(k, i++, out));
    CHECK_OK(ctx, clrun_arg_i8(k, i++, a));
    CHECK_OK(ctx, clrun_arg_u8(k, i++, b));
    CHECK_OK(ctx, clrun_arg_i16(k, i++, c));
    CHECK_OK(ctx, clrun_arg_u16(k, i++, d));
    CHECK_OK(ctx, clrun_arg_i32(k, i++, e));
    CHECK_OK(ctx, clrun_arg_u32(k, i++, fu));
    CHECK_OK(ctx, clrun_arg_i64(k, i++, g));
    CHECK_OK(ctx, clrun_arg_u64(k, i++, h));
    CHECK_OK(ctx, clrun_arg_f32(k, i++, x));
    if (f->fp64) CHECK_OK(ctx, clrun_arg_f64(k, i++, y));
    CHECK_OK(ctx, clrun_arg_bytes(k, i++, v, sizeof v));
    size_t one = 1;
    CHECK_OK(ctx, clrun_launch(k, 1, &one, &one));
    CHECK_OK(ctx, clrun_download(out, 0, res, sizeof res));
    assert_int_equal((int64_t)res[0], a);
    assert_int_equal(res[1], b);
    assert_int_equal((int64_t)res[2], c);
    assert_int_equal(res[3], d);
    assert_int_equal((int64_t)res[4], e);
    assert_int_equal(res[5], fu);
    assert_int_equal((int64_t)res[6], g);
    assert_int_equal(res[7], h);
    uint32_t xb;
    memcpy(&xb, &x, 4);
    assert_int_equal(res[8], xb);
    if (f->fp64) {
        uint64_t yb;
        memcpy(&yb, &y, 8);
        assert_int_equal(res[9], yb);
    }
    uint32_t v0, v3;
    memcpy(&v0, &v[0], 4);
    memcpy(&v3, &v[3], 4);
    assert_int_equal(res[10], (uint64_t)v0 ^ ((uint64_t)v3 << 32));
    clrun_buf_free(out);
    clrun_kernel_free(k);
}

static void argument_mismatches_name_the_argument(void **state)
{
    struct fixture *f = *state;
    clrun_ctx *ctx = f->ctx;
    clrun_kernel *k = NULL;
    clrun_buf *buf = NULL;
    CHECK_OK(ctx, clrun_kernel_new(f->prog, "group_sums", &k));
    CHECK_OK(ctx, clrun_buf_new(ctx, 64, 0, &buf));
    CHECK_FAIL(ctx, clrun_arg_buf(k, 4, buf), CLRUN_ARG_MISMATCH, "takes 4 arguments; there is no argument 4");
    CHECK_FAIL(ctx, clrun_arg_f32(k, 3, 1.0f), CLRUN_ARG_MISMATCH, "argument 3 (uint n)");
    assert_non_null(strstr(clrun_last_error(ctx), "not float"));
    CHECK_FAIL(ctx, clrun_arg_i32(k, 3, 1), CLRUN_ARG_MISMATCH, "not int");
    CHECK_FAIL(ctx, clrun_arg_u32(k, 0, 1), CLRUN_ARG_MISMATCH, "expects a __global or __constant buffer");
    CHECK_FAIL(ctx, clrun_arg_buf(k, 2, buf), CLRUN_ARG_MISMATCH, "expects __local memory");
    CHECK_FAIL(ctx, clrun_arg_local(k, 1, 64), CLRUN_ARG_MISMATCH, "argument 1 (float* in)");
    CHECK_FAIL(ctx, clrun_arg_local(k, 2, 0), CLRUN_INVALID_ARG, "0 bytes");
    CHECK_FAIL(ctx, clrun_arg_bytes(k, 0, &buf, sizeof buf), CLRUN_ARG_MISMATCH, "expects a __global");
    /* launching with an argument never set names it */
    CHECK_OK(ctx, clrun_arg_buf(k, 0, buf));
    CHECK_OK(ctx, clrun_arg_buf(k, 1, buf));
    CHECK_OK(ctx, clrun_arg_u32(k, 3, 16));
    size_t g = 16;
    CHECK_FAIL(ctx, clrun_launch(k, 1, &g, NULL), CLRUN_ARG_MISMATCH, "argument 2 (float* tmp) of kernel group_sums was never set");
    CHECK_FAIL(ctx, clrun_launch(k, 0, &g, NULL), CLRUN_INVALID_ARG, "dims");
    CHECK_FAIL(ctx, clrun_launch(k, 4, &g, NULL), CLRUN_INVALID_ARG, "dims");
    size_t zero = 0;
    CHECK_FAIL(ctx, clrun_launch(k, 1, &zero, NULL), CLRUN_INVALID_ARG, "is 0");
    clrun_kernel *none = (clrun_kernel *)0x1;
    CHECK_FAIL(ctx, clrun_kernel_new(f->prog, "nosuchkernel", &none), CLRUN_NOT_FOUND, "group_sums");
    assert_null(none);
    clrun_buf_free(buf);
    clrun_kernel_free(k);
}

/* clrun_arg_bytes checks the size of vectors (a 3-vector is the size of a 4-vector) and of structs
 * (by sizeof on the device, padding included): drivers such as PoCL take any size and the kernel
 * would read past the value. */
/* clrun_launch checks the NDRange against the device before the driver sees it (drivers trap, abort
 * or spin on ranges they cannot schedule), and a buffer of another context is refused when bound. */
static void ranges_and_contexts_checked_at_launch(void **state)
{
    struct fixture *f = *state;
    clrun_ctx *ctx = f->ctx, *other = NULL;
    clrun_kernel *k = NULL;
    clrun_buf *buf = NULL, *foreign = NULL;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    CHECK_OK(ctx, clrun_kernel_new(f->prog, "group_sums", &k));
    CHECK_OK(ctx, clrun_buf_new(ctx, 64, 0, &buf));
    CHECK_OK(ctx, clrun_arg_buf(k, 0, buf));
    CHECK_OK(ctx, clrun_arg_buf(k, 1, buf));
    CHECK_OK(ctx, clrun_arg_local(k, 2, 16 * sizeof(float))); /* work-groups of 16 below */
    CHECK_OK(ctx, clrun_arg_u32(k, 3, 0));                    /* n = 0: nothing is read */
    const size_t huge[] = {(size_t)1 << 40, (size_t)1 << 62, SIZE_MAX, SIZE_MAX - 1};
    for (int i = 0; i < 4; i++) {
        CHECK_FAIL(ctx, clrun_launch(k, 1, &huge[i], NULL), CLRUN_INVALID_ARG, "launching group_sums");
        const size_t l = 64;
        CHECK_FAIL(ctx, clrun_launch(k, 1, &huge[i], &l), CLRUN_INVALID_ARG, "launching group_sums");
    }
    const size_t two[2] = {(size_t)1 << 31, (size_t)1 << 31}, three[3] = {1 << 21, 1 << 21, 1 << 21};
    CHECK_FAIL(ctx, clrun_launch(k, 2, two, NULL), CLRUN_INVALID_ARG, "work-");
    CHECK_FAIL(ctx, clrun_launch(k, 3, three, NULL), CLRUN_INVALID_ARG, "work-");
    const size_t g = 64, big_local = in->max_work_item[0] + 1, wg_local = in->max_work_group * 2;
    CHECK_FAIL(ctx, clrun_launch(k, 1, &g, &big_local), CLRUN_INVALID_ARG, "allows at most");
    const size_t g2[2] = {wg_local, 2}, l2[2] = {in->max_work_item[0], 2};
    if (l2[0] * 2 > in->max_work_group) CHECK_FAIL(ctx, clrun_launch(k, 2, g2, l2), CLRUN_INVALID_ARG, "work-group of");
    if (in->local_mem) CHECK_FAIL(ctx, clrun_arg_local(k, 2, (size_t)in->local_mem + 1), CLRUN_INVALID_ARG, "bytes of local memory");
    const size_t l16 = 16;
    CHECK_OK(ctx, clrun_launch(k, 1, &g, &l16)); /* and a sane one still runs: 4 groups of 16 into 16 floats */
    CHECK_OK(ctx, clrun_finish(ctx));
    /* a buffer of another context */
    CHECK_OK(NULL, clrun_open(&other, test_device()));
    CHECK_OK(other, clrun_buf_new(other, 64, 0, &foreign));
    CHECK_FAIL(ctx, clrun_arg_buf(k, 0, foreign), CLRUN_INVALID_ARG, "another context");
    CHECK_FAIL(ctx, clrun_sum(ctx, CLRUN_F32, foreign, 0, 16, &(double){0}), CLRUN_INVALID_ARG, "another context");
    CHECK_FAIL(ctx, clrun_buf_copy(buf, 0, foreign, 0, 16), CLRUN_INVALID_ARG, "different contexts");
    clrun_buf_free(foreign);
    clrun_close(other);
    clrun_buf_free(buf);
    clrun_kernel_free(k);
}

static void aggregates_by_value_are_checked_by_size(void **state)
{
    struct fixture *f = *state;
    clrun_ctx *ctx = f->ctx;
    clrun_kernel *k = NULL;
    clrun_buf *out = NULL;
    uint64_t s = test_seed();
    struct {
        char tag;
        int count;
        float scale;
    } p = {(char)(rng_next(&s) % 100), (int)(rng_next(&s) % 100000), rng_float(&s)};
    float v[4] = {rng_float(&s), rng_float(&s), rng_float(&s), 0}, res[4];
    CHECK_OK(ctx, clrun_kernel_new(f->prog, "aggregates", &k));
    CHECK_OK(ctx, clrun_buf_new(ctx, sizeof res, 0, &out));
    CHECK_OK(ctx, clrun_arg_buf(k, 0, out));
    CHECK_FAIL(ctx, clrun_arg_bytes(k, 1, &p, 9), CLRUN_ARG_MISMATCH, "argument 1 (padded p) of kernel aggregates is 12 bytes; 9 given");
    CHECK_FAIL(ctx, clrun_arg_bytes(k, 1, v, 16), CLRUN_ARG_MISMATCH, "is 12 bytes; 16 given");
    CHECK_FAIL(ctx, clrun_arg_bytes(k, 2, v, 12), CLRUN_ARG_MISMATCH, "argument 2 (float3 v) of kernel aggregates is 16 bytes; 12 given");
    CHECK_OK(ctx, clrun_arg_bytes(k, 1, &p, sizeof p));
    CHECK_OK(ctx, clrun_arg_bytes(k, 2, v, sizeof v));
    size_t one = 1;
    CHECK_OK(ctx, clrun_launch(k, 1, &one, &one));
    CHECK_OK(ctx, clrun_download(out, 0, res, sizeof res));
    assert_true(res[0] == p.tag && res[1] == (float)p.count && res[2] == p.scale);
    assert_true(fabsf(res[3] - (v[0] + 2 * v[1] + 4 * v[2])) <= 1e-5f * (1 + fabsf(res[3])));
    clrun_buf_free(out);
    clrun_kernel_free(k);
}

static void local_memory_and_explicit_local_size(void **state)
{
    struct fixture *f = *state;
    clrun_ctx *ctx = f->ctx;
    enum { N = 1000, L = 40 };
    float in[N], out[N / L];
    uint64_t s = test_seed();
    /* whole numbers, whose sums are exact in any order: Intel's CPU compiler reorders the kernel's
     * loop of additions (a vectorised reduction), PoCL's does not */
    for (int i = 0; i < N; i++) in[i] = (float)((int)(rng_float(&s) * 2048.0f) - 1024);
    clrun_kernel *k = NULL;
    clrun_buf *bi = NULL, *bo = NULL;
    CHECK_OK(ctx, clrun_kernel_new(f->prog, "group_sums", &k));
    CHECK_OK(ctx, clrun_buf_new(ctx, sizeof in, 0, &bi));
    CHECK_OK(ctx, clrun_buf_new(ctx, sizeof out, 0, &bo));
    CHECK_OK(ctx, clrun_upload(bi, 0, in, sizeof in));
    CHECK_OK(ctx, clrun_arg_buf(k, 0, bo));
    CHECK_OK(ctx, clrun_arg_buf(k, 1, bi));
    CHECK_OK(ctx, clrun_arg_local(k, 2, L * sizeof(float)));
    CHECK_OK(ctx, clrun_arg_u32(k, 3, N));
    size_t g = N, l = L;
    clrun_event *ev = NULL;
    CHECK_OK(ctx, clrun_launch_ev(k, 1, &g, &l, &ev));
    uint64_t t0 = 0, t1 = 0;
    CHECK_OK(ctx, clrun_event_times(ev, &t0, &t1));
    assert_true(t0 > 0 && t1 >= t0);
    CHECK_OK(ctx, clrun_download(bo, 0, out, sizeof out));
    for (int gi = 0; gi < N / L; gi++) {
        float want = 0.0f;
        for (int i = 0; i < L; i++) want += in[gi * L + i];
        assert_true(out[gi] == want);
    }
    size_t bad_l = 7; /* does not divide 1000 */
    CHECK_FAIL(ctx, clrun_launch(k, 1, &g, &bad_l), CLRUN_INVALID_ARG, "does not divide");
    clrun_event_free(ev);
    clrun_buf_free(bi);
    clrun_buf_free(bo);
    clrun_kernel_free(k);
}

static void launches_in_one_two_three_dims(void **state)
{
    struct fixture *f = *state;
    clrun_ctx *ctx = f->ctx;
    const size_t shapes[][3] = {{1, 1, 1}, {37, 1, 1}, {1001, 1, 1}, {13, 7, 1}, {65, 33, 1}, {5, 3, 11}, {17, 2, 9}};
    for (size_t t = 0; t < sizeof shapes / sizeof *shapes; t++) {
        const size_t *sh = shapes[t];
        unsigned dims = sh[2] > 1 ? 3 : sh[1] > 1 ? 2 : 1;
        size_t n = sh[0] * sh[1] * sh[2];
        uint32_t *out = malloc(n * 4 + 64);
        clrun_kernel *k = NULL;
        clrun_buf *b = NULL;
        CHECK_OK(ctx, clrun_kernel_new(f->prog, "ids", &k));
        CHECK_OK(ctx, clrun_buf_new(ctx, n * 4 + 64, 0, &b));
        uint32_t poison = 0xDEADBEEF;
        CHECK_OK(ctx, clrun_buf_fill(b, &poison, 4, 0, n * 4 + 64));
        CHECK_OK(ctx, clrun_arg_buf(k, 0, b));
        CHECK_OK(ctx, clrun_arg_u32(k, 1, (uint32_t)sh[0]));
        CHECK_OK(ctx, clrun_arg_u32(k, 2, (uint32_t)sh[1]));
        CHECK_OK(ctx, clrun_arg_u32(k, 3, (uint32_t)sh[2]));
        CHECK_OK(ctx, clrun_launch(k, dims, sh, NULL)); /* clrun picks local, rounds global up */
        CHECK_OK(ctx, clrun_download(b, 0, out, n * 4 + 64));
        for (size_t z = 0; z < sh[2]; z++)
            for (size_t y = 0; y < sh[1]; y++)
                for (size_t x = 0; x < sh[0]; x++) assert_int_equal(out[(z * sh[1] + y) * sh[0] + x], x + 1000 * y + 1000000 * z);
        for (size_t i = n; i < n + 16; i++) assert_int_equal(out[i], 0xDEADBEEF); /* guarded tail */
        free(out);
        clrun_buf_free(b);
        clrun_kernel_free(k);
    }
}

/* Profiling: every launch counted under its kernel's name, the library's ops included, through
 * the batched read-back (more launches than one batch); records sorted, consistent, dropped by a
 * restart and by stop. */
static void profiling_counts_every_launch(void **state)
{
    struct fixture *f = *state;
    clrun_ctx *ctx = f->ctx;
    uint64_t s = test_seed();
    const clrun_profile_entry *e = NULL;
    size_t n = 99;
    CHECK_OK(ctx, clrun_profile_read(ctx, &e, &n)); /* off: nothing */
    assert_int_equal(n, 0);
    clrun_kernel *k = NULL;
    clrun_buf *b = NULL, *x = NULL;
    CHECK_OK(ctx, clrun_kernel_new(f->prog, "ids", &k));
    CHECK_OK(ctx, clrun_buf_new(ctx, 64 * 4, 0, &b));
    CHECK_OK(ctx, clrun_buf_new(ctx, 64 * 4, 0, &x));
    float zero = 0;
    CHECK_OK(ctx, clrun_buf_fill(x, &zero, 4, 0, 64 * 4));
    CHECK_OK(ctx, clrun_arg_buf(k, 0, b));
    CHECK_OK(ctx, clrun_arg_u32(k, 1, 37));
    CHECK_OK(ctx, clrun_arg_u32(k, 2, 1));
    CHECK_OK(ctx, clrun_arg_u32(k, 3, 1));
    size_t g = 37;
    CHECK_OK(ctx, clrun_profile_start(ctx));
    const unsigned a = 1030 + (unsigned)(rng_next(&s) % 40), c = 2 + (unsigned)(rng_next(&s) % 5); /* past one batch of 1024 */
    clrun_event *ev = NULL;
    for (unsigned i = 0; i < a; i++) CHECK_OK(ctx, i == 3 ? clrun_launch_ev(k, 1, &g, NULL, &ev) : clrun_launch(k, 1, &g, NULL));
    for (unsigned i = 0; i < c; i++) CHECK_OK(ctx, clrun_add(ctx, CLRUN_F32, 64, x, x, x));
    CHECK_OK(ctx, clrun_profile_read(ctx, &e, &n));
    assert_int_equal(n, 2);
    int ids = strcmp(e[0].kernel, "ids") == 0 ? 0 : 1;
    assert_string_equal(e[ids].kernel, "ids");
    assert_int_equal(e[ids].launches, a);
    assert_int_equal(e[1 - ids].launches, c);
    assert_true(e[0].total_ms >= e[1].total_ms); /* largest first */
    for (size_t i = 0; i < n; i++) {
        const double mean = e[i].total_ms / (double)e[i].launches;
        assert_true(e[i].min_ms >= 0 && e[i].min_ms <= mean * (1 + 1e-9) && mean <= e[i].max_ms * (1 + 1e-9));
    }
    uint64_t t0 = 0, t1 = 0; /* the caller's event outlives the profile's reference */
    CHECK_OK(ctx, clrun_event_times(ev, &t0, &t1));
    assert_true(t1 >= t0);
    clrun_event_free(ev);
    CHECK_OK(ctx, clrun_launch(k, 1, &g, NULL)); /* recording goes on after a read */
    CHECK_OK(ctx, clrun_profile_read(ctx, &e, &n));
    assert_int_equal(e[strcmp(e[0].kernel, "ids") == 0 ? 0 : 1].launches, a + 1);
    CHECK_OK(ctx, clrun_profile_start(ctx)); /* a restart drops the records */
    CHECK_OK(ctx, clrun_profile_read(ctx, &e, &n));
    assert_int_equal(n, 0);
    CHECK_OK(ctx, clrun_launch(k, 1, &g, NULL));
    clrun_profile_stop(ctx); /* with a launch still pending */
    CHECK_OK(ctx, clrun_profile_read(ctx, &e, &n));
    assert_int_equal(n, 0);
    CHECK_OK(ctx, clrun_finish(ctx));
    /* transfers are recorded too, under their own names */
    float host[64] = {0};
    const unsigned ups = 1 + (unsigned)(rng_next(&s) % 4), downs = 1 + (unsigned)(rng_next(&s) % 4);
    CHECK_OK(ctx, clrun_profile_start(ctx));
    for (unsigned i = 0; i < ups; i++) CHECK_OK(ctx, clrun_upload(x, 0, host, sizeof host));
    for (unsigned i = 0; i < downs; i++) CHECK_OK(ctx, clrun_download_async(x, 0, host, sizeof host, NULL));
    CHECK_OK(ctx, clrun_profile_read(ctx, &e, &n));
    assert_int_equal(n, 2);
    const int up = strcmp(e[0].kernel, "clrun_upload") == 0 ? 0 : 1;
    assert_string_equal(e[up].kernel, "clrun_upload");
    assert_string_equal(e[1 - up].kernel, "clrun_download");
    assert_int_equal(e[up].launches, ups);
    assert_int_equal(e[1 - up].launches, downs);
    clrun_profile_stop(ctx);
    clrun_buf_free(b), clrun_buf_free(x);
    clrun_kernel_free(k);
}

/* One launch rule: a launch runs exactly the work-items asked for, never more (a kernel without a
 * bounds check must be safe). An atomic counter over every global size 1…1025, primes up to 10^6,
 * and 2-D and 3-D ranges of awkward extents, with a NULL local size, counts exactly the range. */
static void launch_runs_exactly_the_global_size(void **state)
{
    clrun_ctx *ctx = ((struct fixture *)*state)->ctx;
    static const char count_src[] = "__kernel void count(__global uint *c) { atomic_inc(c); }\n";
    clrun_prog *p = NULL;
    clrun_kernel *k = NULL;
    clrun_buf *c = NULL;
    CHECK_OK(ctx, clrun_prog_source(ctx, count_src, "count.cl", NULL, &p));
    CHECK_OK(ctx, clrun_kernel_new(p, "count", &k));
    CHECK_OK(ctx, clrun_buf_new(ctx, 4, 0, &c));
    CHECK_OK(ctx, clrun_arg_buf(k, 0, c));
    static const size_t primes[] = {1031, 4099, 65521, 131071, 524287, 999983};
    const size_t nsizes = 1025 + sizeof primes / sizeof *primes;
    for (size_t i = 0; i < nsizes; i++) {
        const size_t g = i < 1025 ? i + 1 : primes[i - 1025];
        const unsigned zero = 0;
        unsigned got = 0;
        CHECK_OK(ctx, clrun_buf_fill(c, &zero, 4, 0, 4));
        CHECK_OK(ctx, clrun_launch(k, 1, &g, NULL));
        CHECK_OK(ctx, clrun_download(c, 0, &got, 4));
        if (got != g) fail_msg("global size %zu with a NULL local size ran %u work-items", g, got);
    }
    static const size_t shapes[][3] = {{7, 13, 1}, {1023, 3, 1}, {1, 257, 1}, {17, 1, 1}, {5, 7, 11}, {31, 2, 129}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        const unsigned dims = shapes[i][2] > 1 ? 3 : 2, zero = 0;
        unsigned got = 0;
        CHECK_OK(ctx, clrun_buf_fill(c, &zero, 4, 0, 4));
        clrun_event *ev = NULL;
        CHECK_OK(ctx, clrun_launch_ev(k, dims, shapes[i], NULL, &ev));
        CHECK_OK(ctx, clrun_event_wait(ev));
        clrun_event_free(ev);
        CHECK_OK(ctx, clrun_download(c, 0, &got, 4));
        const size_t want = shapes[i][0] * shapes[i][1] * (dims == 3 ? shapes[i][2] : 1);
        if (got != want) fail_msg("range %zu×%zu×%zu ran %u work-items", shapes[i][0], shapes[i][1], shapes[i][2], got);
    }
    clrun_buf_free(c);
    clrun_kernel_free(k);
    clrun_prog_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(launch_runs_exactly_the_global_size),     cmocka_unit_test(every_scalar_type),
        cmocka_unit_test(argument_mismatches_name_the_argument),   cmocka_unit_test(ranges_and_contexts_checked_at_launch),
        cmocka_unit_test(aggregates_by_value_are_checked_by_size), cmocka_unit_test(local_memory_and_explicit_local_size),
        cmocka_unit_test(launches_in_one_two_three_dims),          cmocka_unit_test(profiling_counts_every_launch),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
