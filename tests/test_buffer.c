/* test_buffer.c — buffers, transfers (blocking, async, staged), fill, copy, sub-buffers, pinned
 * host memory, and their error paths. */
#include "helpers.h"

static void round_trip(clrun_ctx *ctx, size_t n)
{
    uint64_t s = test_seed() + n;
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    for (size_t i = 0; i < n; i++) a[i] = rng_float(&s), b[i] = -7.0f;
    clrun_buf *buf = NULL;
    CHECK_OK(ctx, clrun_buf_new(ctx, n * sizeof *a, 0, &buf));
    assert_int_equal(clrun_buf_size(buf), n * sizeof *a);
    assert_non_null(clrun_buf_cl_mem(buf));
    CHECK_OK(ctx, clrun_upload(buf, 0, a, n * sizeof *a));
    CHECK_OK(ctx, clrun_download(buf, 0, b, n * sizeof *b));
    assert_memory_equal(a, b, n * sizeof *a);
    clrun_buf_free(buf);
    free(a);
    free(b);
}

static void blocking_round_trips(void **state)
{
    size_t sizes[] = {1, 2, 3, 17, 1000, 4099, 65537};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) round_trip(*state, sizes[i]);
}

/* The staging path (several threads through pinned memory) is what discrete GPUs use for large
 * transfers from ordinary memory; force it here so it runs on PoCL too, over several chunks and an
 * odd tail, at offsets. */
static void staged_round_trip(void **state)
{
    clrun_ctx *ctx = *state;
    size_t bytes = ((size_t)70 << 20) + 12345, off = 4096 + 3;
    unsigned char *a = malloc(bytes), *b = malloc(bytes);
    uint64_t s = test_seed();
    for (size_t i = 0; i < bytes; i += 8) {
        uint64_t v = rng_next(&s);
        memcpy(a + i, &v, bytes - i < 8 ? bytes - i : 8);
    }
    memset(b, 0xEE, bytes);
    clrun_buf *buf = NULL;
    CHECK_OK(ctx, clrun_buf_new(ctx, bytes + off, 0, &buf));
    setenv("CLRUN_STAGING", "force", 1);
    CHECK_OK(ctx, clrun_upload(buf, off, a, bytes));
    CHECK_OK(ctx, clrun_download(buf, off, b, bytes));
    setenv("CLRUN_STAGING", "0", 1);
    assert_memory_equal(a, b, bytes);
    /* and the plain path reads what the staged path wrote */
    memset(b, 0, 4096);
    CHECK_OK(ctx, clrun_download(buf, off + bytes - 4096, b, 4096));
    assert_memory_equal(a + bytes - 4096, b, 4096);
    unsetenv("CLRUN_STAGING");
    clrun_buf_free(buf);
    free(a);
    free(b);
}

static void async_transfers_with_events(void **state)
{
    clrun_ctx *ctx = *state;
    enum { N = 100003 };
    static int a[N], b[N];
    for (int i = 0; i < N; i++) a[i] = i * 7 - 3, b[i] = 0;
    clrun_buf *buf = NULL;
    clrun_event *e1 = NULL, *e2 = NULL, *e0 = NULL;
    CHECK_OK(ctx, clrun_buf_new(ctx, sizeof a, 0, &buf));
    CHECK_OK(ctx, clrun_upload_async(buf, 0, a, sizeof a, &e1));
    CHECK_OK(ctx, clrun_download_async(buf, 0, b, sizeof b, &e2));
    CHECK_OK(ctx, clrun_event_wait(e2));
    assert_memory_equal(a, b, sizeof a);
    uint64_t s0 = 0, s1 = 0;
    CHECK_OK(ctx, clrun_event_times(e1, &s0, &s1));
    assert_true(s1 >= s0);
    assert_true(clrun_event_ms(e2) >= 0.0);
    assert_non_null(clrun_event_cl(e1));
    /* zero bytes still gives a completed event */
    CHECK_OK(ctx, clrun_upload_async(buf, 0, a, 0, &e0));
    CHECK_OK(ctx, clrun_event_wait(e0));
    /* and an async call without an event, finished by clrun_finish */
    b[5] = -1;
    CHECK_OK(ctx, clrun_download_async(buf, 0, b, sizeof b, NULL));
    CHECK_OK(ctx, clrun_finish(ctx));
    assert_int_equal(b[5], a[5]);
    clrun_event_free(e0);
    clrun_event_free(e1);
    clrun_event_free(e2);
    clrun_event_free(NULL);
    clrun_buf_free(buf);
}

static void fill_copy_and_offsets(void **state)
{
    clrun_ctx *ctx = *state;
    enum { N = 1031 };
    float host[N], back[N];
    clrun_buf *a = NULL, *b = NULL;
    CHECK_OK(ctx, clrun_buf_new(ctx, sizeof host, 0, &a));
    CHECK_OK(ctx, clrun_buf_new(ctx, sizeof host, 0, &b));
    float v = 2.5f;
    CHECK_OK(ctx, clrun_buf_fill(a, &v, sizeof v, 0, sizeof host));
    float w = -1.0f;
    CHECK_OK(ctx, clrun_buf_fill(a, &w, sizeof w, 8 * sizeof(float), 5 * sizeof(float)));
    CHECK_OK(ctx, clrun_download(a, 0, back, sizeof back));
    for (int i = 0; i < N; i++) assert_true(back[i] == ((i >= 8 && i < 13) ? -1.0f : 2.5f));
    uint64_t s = test_seed();
    for (int i = 0; i < N; i++) host[i] = rng_float(&s);
    CHECK_OK(ctx, clrun_upload(a, 0, host, sizeof host));
    CHECK_OK(ctx, clrun_buf_fill(b, &w, sizeof w, 0, sizeof host));
    CHECK_OK(ctx, clrun_buf_copy(b, 100 * sizeof(float), a, 3 * sizeof(float), 500 * sizeof(float)));
    CHECK_OK(ctx, clrun_download(b, 0, back, sizeof back));
    for (int i = 0; i < N; i++) assert_true(back[i] == ((i >= 100 && i < 600) ? host[i - 97] : -1.0f));
    /* a 1-byte and a 16-byte pattern */
    unsigned char byte = 0xAB, pat16[16], bytes[64];
    for (int i = 0; i < 16; i++) pat16[i] = (unsigned char)(i * 3);
    CHECK_OK(ctx, clrun_buf_fill(b, &byte, 1, 3, 61));
    CHECK_OK(ctx, clrun_download(b, 0, bytes, 64));
    for (int i = 3; i < 64; i++) assert_int_equal(bytes[i], 0xAB);
    CHECK_OK(ctx, clrun_buf_fill(b, pat16, 16, 16, 32));
    CHECK_OK(ctx, clrun_download(b, 0, bytes, 64));
    for (int i = 16; i < 48; i++) assert_int_equal(bytes[i], pat16[i % 16]);
    /* errors */
    CHECK_FAIL(ctx, clrun_buf_fill(b, &w, 3, 0, 12), CLRUN_INVALID_ARG, "pattern size 3");
    CHECK_FAIL(ctx, clrun_buf_fill(b, &w, 4, 2, 8), CLRUN_INVALID_ARG, "multiples");
    CHECK_FAIL(ctx, clrun_buf_fill(b, &w, 4, 0, sizeof host + 4), CLRUN_INVALID_ARG, "outside the buffer");
    CHECK_FAIL(ctx, clrun_buf_copy(a, 0, a, 8, 64), CLRUN_INVALID_ARG, "overlap");
    CHECK_FAIL(ctx, clrun_buf_copy(a, 0, b, sizeof host - 4, 8), CLRUN_INVALID_ARG, "source");
    CHECK_FAIL(ctx, clrun_upload(a, sizeof host, host, 1), CLRUN_INVALID_ARG, "outside the buffer");
    CHECK_FAIL(ctx, clrun_download(a, 1, back, sizeof host), CLRUN_INVALID_ARG, "outside the buffer");
    CHECK_FAIL(ctx, clrun_upload(a, (size_t)-1, host, 2), CLRUN_INVALID_ARG, "outside the buffer");
    CHECK_FAIL(ctx, clrun_upload(a, 0, NULL, 4), CLRUN_INVALID_ARG, "NULL");
    clrun_buf_free(a);
    clrun_buf_free(b);
}

static void sub_buffers(void **state)
{
    clrun_ctx *ctx = *state;
    unsigned align = clrun_ctx_device(ctx)->mem_base_align;
    assert_true(align >= 1);
    size_t n = (size_t)align * 4;
    unsigned char *host = malloc(n), *back = malloc(n);
    for (size_t i = 0; i < n; i++) host[i] = (unsigned char)(i * 13 + 1);
    clrun_buf *parent = NULL, *view = NULL;
    CHECK_OK(ctx, clrun_buf_new(ctx, n, 0, &parent));
    CHECK_OK(ctx, clrun_upload(parent, 0, host, n));
    CHECK_OK(ctx, clrun_buf_sub(parent, align, 2 * (size_t)align, &view));
    assert_int_equal(clrun_buf_size(view), 2 * (size_t)align);
    CHECK_OK(ctx, clrun_download(view, 0, back, 2 * (size_t)align));
    assert_memory_equal(back, host + align, 2 * (size_t)align);
    /* writes through the view land in the parent; the view outlives the parent's handle */
    unsigned char z = 0;
    CHECK_OK(ctx, clrun_buf_fill(view, &z, 1, 0, 16));
    clrun_buf_free(parent);
    CHECK_OK(ctx, clrun_download(view, 0, back, 32));
    for (int i = 0; i < 16; i++) assert_int_equal(back[i], 0);
    assert_int_equal(back[16], host[align + 16]);
    clrun_buf *bad = NULL;
    if (align > 1) CHECK_FAIL(ctx, clrun_buf_sub(view, 1, 8, &bad), CLRUN_INVALID_ARG, "alignment");
    CHECK_FAIL(ctx, clrun_buf_sub(view, 0, 3 * (size_t)align, &bad), CLRUN_INVALID_ARG, "outside the buffer");
    CHECK_FAIL(ctx, clrun_buf_sub(view, 0, 0, &bad), CLRUN_INVALID_ARG, "0 bytes");
    assert_null(bad);
    clrun_buf_free(view);
    free(host);
    free(back);
}

static void zero_and_oversized(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_buf *b = (clrun_buf *)0x1;
    CHECK_FAIL(ctx, clrun_buf_new(ctx, 0, 0, &b), CLRUN_INVALID_ARG, "0 bytes");
    assert_null(b);
    const clrun_device_info *in = clrun_ctx_device(ctx);
    size_t huge = (size_t)in->global_mem * 4 + 4096;
    CHECK_FAIL(ctx, clrun_buf_new(ctx, huge, 0, &b), CLRUN_DEVICE_OUT_OF_MEMORY, "global memory");
    char want[64];
    snprintf(want, sizeof want, "%zu bytes", huge);
    assert_non_null(strstr(clrun_last_error(ctx), want));
    assert_non_null(strstr(clrun_last_error(ctx), in->name));
    CHECK_FAIL(ctx, clrun_buf_new(ctx, (size_t)in->max_alloc + 1, 0, &b), CLRUN_DEVICE_OUT_OF_MEMORY, "in one buffer");
    CHECK_FAIL(ctx, clrun_buf_new(ctx, 16, CLRUN_BUF_READ_ONLY | CLRUN_BUF_WRITE_ONLY, &b), CLRUN_INVALID_ARG, "together");
    assert_null(b);
}

/* A buffer made from host memory holds its bytes, with no command queued; bad calls refused. */
static void made_from_host(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t rng = test_seed();
    for (size_t n = 1; n < 5000; n = n * 3 + 7) {
        unsigned char *src = malloc(n), *want = malloc(n), *back = malloc(n);
        for (size_t i = 0; i < n; i++) want[i] = src[i] = (unsigned char)rng_next(&rng);
        clrun_buf *b;
        CHECK_OK(ctx, clrun_buf_new_from(ctx, src, n, n % 2 ? CLRUN_BUF_READ_ONLY : 0, &b));
        memset(src, 0, n); /* only read during the call */
        CHECK_OK(ctx, clrun_download(b, 0, back, n));
        assert_memory_equal(back, want, n);
        assert_int_equal(clrun_buf_size(b), n);
        clrun_buf_free(b);
        free(src), free(want), free(back);
    }
    unsigned char x[16] = {1, 2, 3};
    clrun_buf *b = (clrun_buf *)1;
    CHECK_FAIL(ctx, clrun_buf_new_from(ctx, NULL, 16, 0, &b), CLRUN_INVALID_ARG, "src is NULL");
    assert_null(b);
    CHECK_FAIL(ctx, clrun_buf_new_from(ctx, x, 0, 0, &b), CLRUN_INVALID_ARG, "0 bytes");
}

static void pinned_host_memory(void **state)
{
    clrun_ctx *ctx = *state;
    size_t n = (size_t)3 << 20;
    float *p = NULL, *q = NULL;
    CHECK_OK(ctx, clrun_host_alloc(ctx, n * sizeof *p, (void **)&p));
    CHECK_OK(ctx, clrun_host_alloc(ctx, n * sizeof *q, (void **)&q));
    assert_non_null(p);
    uint64_t s = test_seed();
    for (size_t i = 0; i < n; i++) p[i] = rng_float(&s), q[i] = 0;
    clrun_buf *buf = NULL;
    CHECK_OK(ctx, clrun_buf_new(ctx, n * sizeof *p, 0, &buf));
    CHECK_OK(ctx, clrun_upload(buf, 0, p, n * sizeof *p));
    CHECK_OK(ctx, clrun_download(buf, 0, q, n * sizeof *q));
    assert_memory_equal(p, q, n * sizeof *p);
    clrun_buf_free(buf);
    int local = 0;
    CHECK_FAIL(ctx, clrun_host_free(ctx, &local), CLRUN_INVALID_ARG, "not allocated by clrun_host_alloc");
    CHECK_OK(ctx, clrun_host_free(ctx, p));
    CHECK_FAIL(ctx, clrun_host_free(ctx, p), CLRUN_INVALID_ARG, "not allocated"); /* double free is caught */
    CHECK_OK(ctx, clrun_host_free(ctx, NULL));
    void *z = (void *)0x1;
    CHECK_FAIL(ctx, clrun_host_alloc(ctx, 0, &z), CLRUN_INVALID_ARG, "0 bytes");
    assert_null(z);
    (void)q; /* left allocated on purpose: clrun_close frees it (checked by the leak sanitizer) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(blocking_round_trips),  cmocka_unit_test(staged_round_trip), cmocka_unit_test(async_transfers_with_events),
        cmocka_unit_test(fill_copy_and_offsets), cmocka_unit_test(sub_buffers),       cmocka_unit_test(zero_and_oversized),
        cmocka_unit_test(pinned_host_memory),    cmocka_unit_test(made_from_host),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
