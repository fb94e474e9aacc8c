/* test_pipe.c — pipelines (clrun_pipe_*): results in order and equal to one-at-a-time Canny on
 * fresh random frames of changing sizes, strides and channels; bounded items in flight; a failing
 * item mid-stream; cancellation; a user's own op; calls from inside the callback; every device of
 * the test platform at once, a thread and a context each. */
#include "helpers.h"

#include <pthread.h>

/* A random image of noise with some blocks, so Canny has strong and weak edges. */
static void random_image(uint64_t *rng, clrun_image *img, size_t w, size_t h, unsigned c, size_t pad)
{
    img->width = w, img->height = h, img->channels = c, img->stride = w * c + pad;
    img->data = malloc(img->stride * (h ? h : 1) + 1);
    assert_non_null(img->data);
    const unsigned base = (unsigned)(rng_next(rng) & 255);
    for (size_t y = 0; y < h; y++)
        for (size_t x = 0; x < img->stride; x++) {
            unsigned v = ((x / 7 + y / 5) & 1) ? base : 255 - base;
            img->data[y * img->stride + x] = (unsigned char)(v + (rng_next(rng) & 63));
        }
}

/* What the callback saw. Checks record the first problem in `bad` rather than asserting: the
 * callback also runs in threads of every_device_at_once, where cmocka cannot fail a test. */
struct seen {
    clrun_ctx *ctx;
    int n, max_pending;
    clrun_pipe *pp;
    clrun_image *want; /* per tag: the edges one-at-a-time Canny gives */
    clrun_status st[64];
    char text[64][256];
    int order[64];
    int reenter; /* 1: the callback tries clrun_pipe_send, _flush and _cancel */
    char bad[512];
};

static void bad_(struct seen *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad_(struct seen *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!s->bad[0]) vsnprintf(s->bad, sizeof s->bad, fmt, ap);
    va_end(ap);
}
#define BAD bad_

static void got(void *arg, void *tag, clrun_status st, const clrun_image *r)
{
    struct seen *s = arg;
    const int i = (int)(intptr_t)tag;
    if (s->n >= 64) return BAD(s, "more than 64 deliveries");
    s->order[s->n] = i, s->st[s->n] = st;
    snprintf(s->text[s->n], sizeof s->text[0], "%s", clrun_last_error(s->ctx));
    s->n++;
    if (s->pp && (int)clrun_pipe_pending(s->pp) > s->max_pending) s->max_pending = (int)clrun_pipe_pending(s->pp);
    if (s->reenter) {
        clrun_image one = {1, 1, 1, 1, (unsigned char[]){0}};
        if (clrun_pipe_send(s->pp, &one, NULL) != CLRUN_INVALID_ARG || !strstr(clrun_last_error(s->ctx), "deliver callback"))
            BAD(s, "clrun_pipe_send from the callback: %s", clrun_last_error(s->ctx));
        if (clrun_pipe_flush(s->pp) != CLRUN_INVALID_ARG) BAD(s, "clrun_pipe_flush from the callback was not refused");
        if (clrun_pipe_cancel(s->pp) != 0 || clrun_pipe_poll(s->pp) != 0) BAD(s, "cancel or poll from the callback did something");
    }
    if (st) {
        if (r) BAD(s, "item %d failed and has a result", i);
        return;
    }
    if (!r) return BAD(s, "item %d has no result", i);
    const clrun_image *w = &s->want[i];
    if (r->width != w->width || r->height != w->height || r->channels != 1 || r->stride != r->width)
        return BAD(s, "item %d: result %zux%zu, %u channels, stride %zu; want %zux%zu", i, r->width, r->height, r->channels, r->stride,
                   w->width, w->height);
    for (size_t y = 0; y < r->height; y++)
        if (memcmp(r->data + y * r->stride, w->data + y * w->stride, r->width))
            return BAD(s, "item %d (%zux%zu): row %zu differs from one-at-a-time Canny", i, r->width, r->height, y);
}

#define TRY(s, ctx, call)                                                                \
    do {                                                                                 \
        clrun_status st_ = (call);                                                       \
        if (st_) {                                                                       \
            BAD(s, "%s -> %s: %s", #call, clrun_status_str(st_), clrun_last_error(ctx)); \
            goto out;                                                                    \
        }                                                                                \
    } while (0)

/* n frames of changing shapes through a pipeline of depth d on ctx; every result checked. Frames
 * whose index is a multiple of fail_every (when > 0) have 2 channels, which Canny refuses. Returns
 * the first problem (malloc'd), or NULL. */
static char *stream(clrun_ctx *ctx, int n, unsigned d, int fail_every)
{
    uint64_t rng = test_seed() ^ (uint64_t)n * 7919 ^ (uint64_t)(uintptr_t)ctx;
    clrun_image *in = calloc((size_t)n, sizeof *in), *want = calloc((size_t)n, sizeof *want);
    const clrun_canny_params p = {40, 90, (int)(rng_next(&rng) & 1), 3, 0, 0};
    struct seen s = {.ctx = ctx, .want = want};
    for (int i = 0; i < n; i++) {
        const size_t w = 1 + rng_next(&rng) % 300, h = 1 + rng_next(&rng) % 200, pad = rng_next(&rng) % 3 ? 0 : rng_next(&rng) % 17;
        const unsigned c = fail_every > 0 && i % fail_every == 0 ? 2 : rng_next(&rng) & 1 ? 3 : 1;
        random_image(&rng, &in[i], w, h, c, pad);
        if (c != 2) TRY(&s, ctx, clrun_canny_image(ctx, &in[i], &p, &want[i]));
    }
    TRY(&s, ctx, clrun_pipe_canny(ctx, &p, d, got, &s, &s.pp));
    for (int i = 0; i < n; i++) {
        TRY(&s, ctx, clrun_pipe_send(s.pp, &in[i], (void *)(intptr_t)i));
        if (clrun_pipe_pending(s.pp) > d) BAD(&s, "%u items in flight with depth %u", clrun_pipe_pending(s.pp), d);
        if (s.n + (int)clrun_pipe_pending(s.pp) != i + 1)
            BAD(&s, "after %d sends: %d delivered, %u pending", i + 1, s.n, clrun_pipe_pending(s.pp));
    }
    TRY(&s, ctx, clrun_pipe_flush(s.pp));
    if (clrun_pipe_pending(s.pp) || s.n != n) BAD(&s, "after flush: %d of %d delivered, %u pending", s.n, n, clrun_pipe_pending(s.pp));
    for (int i = 0; i < s.n; i++) {
        if (s.order[i] != i) BAD(&s, "delivery %d is item %d", i, s.order[i]);
        else if (in[i].channels == 2 && (s.st[i] != CLRUN_INVALID_ARG || !strstr(s.text[i], "1 or 3 channels")))
            BAD(&s, "item %d of 2 channels: %s, \"%s\"", i, clrun_status_str(s.st[i]), s.text[i]);
        else if (in[i].channels != 2 && s.st[i]) BAD(&s, "item %d failed: %s", i, s.text[i]);
    }
out:
    clrun_pipe_free(s.pp);
    for (int i = 0; i < n; i++) clrun_image_free(&in[i]), clrun_image_free(&want[i]);
    free(in), free(want);
    return s.bad[0] ? strdup(s.bad) : NULL;
}

static void check_stream(clrun_ctx *ctx, int n, unsigned d, int fail_every)
{
    char *bad = stream(ctx, n, d, fail_every);
    if (bad) fail_msg("%s", bad);
}

static void in_order_and_equal(void **state)
{
    check_stream(*state, 24, 3, 0);
    check_stream(*state, 9, 1, 0); /* one in flight: each send delivers the one before */
    check_stream(*state, 12, 64, 0);
}

static void failing_items_midstream(void **state) { check_stream(*state, 20, 4, 5); }

/* With depth d, the (d+1)-th send delivers the first item before it returns. */
static void bounded_in_flight(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t rng = test_seed();
    const unsigned d = 2;
    clrun_image img, want;
    random_image(&rng, &img, 64, 48, 1, 0);
    const clrun_canny_params p = {50, 100, 0, 3, 0, 0};
    CHECK_OK(ctx, clrun_canny_image(ctx, &img, &p, &want));
    clrun_image wants[8];
    for (int i = 0; i < 8; i++) wants[i] = want;
    struct seen s = {.ctx = ctx, .want = wants};
    CHECK_OK(ctx, clrun_pipe_canny(ctx, &p, d, got, &s, &s.pp));
    for (int i = 0; i < 8; i++) {
        CHECK_OK(ctx, clrun_pipe_send(s.pp, &img, (void *)(intptr_t)i));
        assert_true(s.n >= i + 1 - (int)d);
    }
    assert_true(s.max_pending <= (int)d);
    while (clrun_pipe_pending(s.pp)) clrun_pipe_poll(s.pp); /* poll delivers without waiting, in the end all of them */
    assert_int_equal(s.n, 8);
    if (s.bad[0]) fail_msg("%s", s.bad);
    clrun_pipe_free(s.pp);
    clrun_image_free(&img), clrun_image_free(&want);
}

static void cancel_drops_and_goes_on(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t rng = test_seed() + 1;
    clrun_image img[3], want[3];
    const clrun_canny_params p = {30, 60, 1, 5, 3, 0};
    for (int i = 0; i < 3; i++) {
        random_image(&rng, &img[i], 100 + 13 * (size_t)i, 70, i == 1 ? 3 : 1, 0);
        CHECK_OK(ctx, clrun_canny_image(ctx, &img[i], &p, &want[i]));
    }
    clrun_image wants[16];
    struct seen s = {.ctx = ctx, .want = wants};
    CHECK_OK(ctx, clrun_pipe_canny(ctx, &p, 8, got, &s, &s.pp));
    for (int i = 0; i < 5; i++) {
        wants[i] = want[i % 3];
        CHECK_OK(ctx, clrun_pipe_send(s.pp, &img[i % 3], (void *)(intptr_t)i));
    }
    const int delivered = s.n;
    assert_int_equal(clrun_pipe_cancel(s.pp), 5 - delivered);
    assert_int_equal(clrun_pipe_pending(s.pp), 0);
    CHECK_OK(ctx, clrun_pipe_flush(s.pp));
    assert_int_equal(s.n, delivered); /* the dropped items are never delivered */
    for (int i = 5; i < 11; i++) {
        wants[i] = want[i % 3];
        CHECK_OK(ctx, clrun_pipe_send(s.pp, &img[i % 3], (void *)(intptr_t)i));
    }
    clrun_pipe_free(s.pp); /* frees with items in flight: they are dropped */
    for (int i = 0; i < delivered; i++) assert_int_equal(s.order[i], i);
    for (int i = delivered; i < s.n; i++) assert_true(s.order[i] >= 5);
    if (s.bad[0]) fail_msg("%s", s.bad);
    for (int i = 0; i < 3; i++) clrun_image_free(&img[i]), clrun_image_free(&want[i]);
}

/* A user's op: each byte b becomes the two bytes b ^ key and 255 - b (the result is twice as wide);
 * items of odd width are refused by shape, items of height 3 fail in run. */
struct twice {
    clrun_prog *prog;
    clrun_kernel *k;
    unsigned char key;
};

static clrun_status twice_shape(void *arg, clrun_ctx *ctx, const clrun_image *in, clrun_image *out)
{
    (void)arg, (void)ctx;
    if (in->width % 2) return CLRUN_UNSUPPORTED;
    *out = (clrun_image){in->width * 2, in->height, 0, in->channels, NULL};
    return CLRUN_OK;
}

static clrun_status twice_run(void *arg, clrun_ctx *ctx, clrun_buf *in, const clrun_image *ish, clrun_buf *out, const clrun_image *osh)
{
    struct twice *t = arg;
    (void)ctx, (void)osh;
    if (ish->height == 3) return CLRUN_FORMAT_ERROR;
    const size_t n = ish->width * ish->height * ish->channels;
    const uint32_t key = t->key;
    clrun_status st;
    if ((st = clrun_arg_buf(t->k, 0, out)) || (st = clrun_arg_buf(t->k, 1, in)) || (st = clrun_arg_u32(t->k, 2, key)) ||
        (st = clrun_arg_u64(t->k, 3, n)))
        return st;
    return clrun_launch(t->k, 1, &n, NULL);
}

struct raw {
    int n;
    void *tags[32];
    clrun_status st[32];
    unsigned char *res[32];
    size_t bytes[32];
};

static void got_raw(void *arg, void *tag, clrun_status st, const clrun_image *r)
{
    struct raw *w = arg;
    w->tags[w->n] = tag, w->st[w->n] = st, w->res[w->n] = NULL, w->bytes[w->n] = 0;
    if (r) {
        w->bytes[w->n] = r->stride * r->height;
        w->res[w->n] = malloc(w->bytes[w->n] + 1);
        memcpy(w->res[w->n], r->data, w->bytes[w->n]);
    }
    w->n++;
}

static void user_op(void **state)
{
    clrun_ctx *ctx = *state;
    static const char src[] = "__kernel void twice(__global uchar *o, __global const uchar *i, uint key, ulong n) {\n"
                              "  size_t g = get_global_id(0); if (g >= n) return;\n"
                              "  o[2*g] = i[g] ^ (uchar)key; o[2*g+1] = 255 - i[g]; }\n";
    struct twice t = {.key = 0x5a};
    CHECK_OK(ctx, clrun_prog_source(ctx, src, "twice", NULL, &t.prog));
    CHECK_OK(ctx, clrun_kernel_new(t.prog, "twice", &t.k));
    const clrun_pipe_op op = {twice_shape, twice_run, &t};
    struct raw w = {0};
    clrun_pipe *pp;
    CHECK_OK(ctx, clrun_pipe_new(ctx, &op, 2, got_raw, &w, &pp));
    uint64_t rng = test_seed() + 2;
    clrun_image in[10];
    static const size_t ws[10] = {8, 7, 16, 2, 40, 6, 0, 1000, 12, 4}, hs[10] = {4, 2, 3, 1, 9, 3, 5, 1, 6, 0};
    for (int i = 0; i < 10; i++) {
        random_image(&rng, &in[i], ws[i], hs[i], 1, i % 3);
        CHECK_OK(ctx, clrun_pipe_send(pp, &in[i], &in[i]));
    }
    CHECK_OK(ctx, clrun_pipe_flush(pp));
    assert_int_equal(w.n, 10);
    for (int i = 0; i < 10; i++) {
        assert_ptr_equal(w.tags[i], &in[i]);
        const clrun_status want = ws[i] % 2 ? CLRUN_UNSUPPORTED : hs[i] == 3 ? CLRUN_FORMAT_ERROR : CLRUN_OK;
        if (w.st[i] != want) fail_msg("item %d: %s, expected %s", i, clrun_status_str(w.st[i]), clrun_status_str(want));
        if (want) continue;
        assert_int_equal(w.bytes[i], 2 * ws[i] * hs[i]);
        for (size_t y = 0; y < hs[i]; y++)
            for (size_t x = 0; x < ws[i]; x++) {
                const unsigned char b = in[i].data[y * in[i].stride + x], *o = w.res[i] + y * 2 * ws[i] + 2 * x;
                if (o[0] != (b ^ 0x5a) || o[1] != 255 - b) fail_msg("item %d: byte (%zu, %zu) is %d,%d for %d", i, x, y, o[0], o[1], b);
            }
    }
    clrun_pipe_free(pp);
    for (int i = 0; i < 10; i++) clrun_image_free(&in[i]), free(w.res[i]);
    clrun_kernel_free(t.k);
    clrun_prog_free(t.prog);
}

static void bad_calls(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_pipe *pp = (clrun_pipe *)1;
    clrun_canny_params p = {50, 100, 0, 4, 0, 0};
    CHECK_FAIL(ctx, clrun_pipe_canny(ctx, &p, 2, got, NULL, &pp), CLRUN_INVALID_ARG, "aperture 4");
    assert_null(pp);
    p.aperture = 3;
    CHECK_FAIL(ctx, clrun_pipe_canny(ctx, &p, 65, got, NULL, &pp), CLRUN_INVALID_ARG, "1 to 64");
    CHECK_FAIL(ctx, clrun_pipe_canny(ctx, &p, 2, NULL, NULL, &pp), CLRUN_INVALID_ARG, "deliver");
    const clrun_pipe_op half = {twice_shape, NULL, NULL};
    CHECK_FAIL(ctx, clrun_pipe_new(ctx, &half, 2, got_raw, NULL, &pp), CLRUN_INVALID_ARG, "run");
    CHECK_FAIL(NULL, clrun_pipe_send(NULL, NULL, NULL), CLRUN_INVALID_ARG, "NULL");
    CHECK_FAIL(NULL, clrun_pipe_flush(NULL), CLRUN_INVALID_ARG, "NULL");
    assert_int_equal(clrun_pipe_poll(NULL), 0);
    assert_int_equal(clrun_pipe_cancel(NULL), 0);
    assert_int_equal(clrun_pipe_pending(NULL), 0);
    clrun_pipe_free(NULL);
    /* the callback calling back into its pipeline is refused, the pipeline unharmed */
    uint64_t rng = test_seed() + 3;
    clrun_image img, want;
    random_image(&rng, &img, 33, 21, 3, 5);
    CHECK_OK(ctx, clrun_canny_image(ctx, &img, &p, &want));
    clrun_image wants[4] = {want, want, want, want};
    struct seen s = {.ctx = ctx, .want = wants, .reenter = 1};
    CHECK_OK(ctx, clrun_pipe_canny(ctx, &p, 2, got, &s, &s.pp));
    CHECK_FAIL(ctx, clrun_pipe_send(s.pp, NULL, NULL), CLRUN_INVALID_ARG, "NULL");
    for (int i = 0; i < 4; i++) CHECK_OK(ctx, clrun_pipe_send(s.pp, &img, (void *)(intptr_t)i));
    CHECK_OK(ctx, clrun_pipe_flush(s.pp));
    assert_int_equal(s.n, 4);
    for (int i = 0; i < 4; i++) assert_int_equal(s.st[i], CLRUN_OK);
    if (s.bad[0]) fail_msg("%s", s.bad);
    clrun_pipe_free(s.pp);
    clrun_image_free(&img), clrun_image_free(&want);
}

/* Every device of the test platform at once: a thread, a context and a pipeline each. */
/* Freeing the pipeline, or closing its context, from its own deliver callback: put off until the
 * callback returns, then done; nothing is touched after (ASan would say so), the call that was
 * delivering says the pipeline is gone. */
struct closer {
    clrun_pipe *pp;
    clrun_ctx *ctx;
    int seen, close_ctx;
};

static void got_close(void *arg, void *tag, clrun_status st, const clrun_image *r)
{
    struct closer *c = arg;
    (void)tag, (void)st, (void)r;
    if (++c->seen == 2) {
        if (c->close_ctx) clrun_close(c->ctx);
        else clrun_pipe_free(c->pp);
        clrun_pipe_free(c->pp); /* twice: still once */
    }
}

static void freed_from_its_own_callback(void **state)
{
    (void)state;
    for (int close_ctx = 0; close_ctx < 2; close_ctx++)
        for (int by_flush = 0; by_flush < 2; by_flush++) {
            struct closer c = {NULL, NULL, 0, close_ctx};
            clrun_canny_params p = {.low = 20, .high = 60, .aperture = 3};
            clrun_image img;
            uint64_t rng = 7;
            random_image(&rng, &img, 37, 23, 1, 0);
            CHECK_OK(NULL, clrun_open(&c.ctx, test_device()));
            CHECK_OK(c.ctx, clrun_pipe_canny(c.ctx, &p, 2, got_close, &c, &c.pp));
            clrun_status st = CLRUN_OK;
            int sent = 0;
            for (; sent < 8 && c.seen < 2; sent++)
                if ((st = clrun_pipe_send(c.pp, &img, NULL))) break;
            if (by_flush && c.seen < 2) st = clrun_pipe_flush(c.pp);
            assert_int_equal(c.seen, 2);
            if (st) assert_non_null(strstr(clrun_last_error(NULL), "deliver callback"));
            if (!close_ctx) clrun_close(c.ctx);
            clrun_image_free(&img);
        }
}

static void *device_thread(void *arg)
{
    const char *spec = arg;
    clrun_ctx *ctx = NULL;
    if (clrun_open(&ctx, spec) != CLRUN_OK) return strdup(clrun_last_error(NULL));
    char *bad = stream(ctx, 10, 3, 4);
    clrun_close(ctx);
    return bad;
}

static void every_device_at_once(void **state)
{
    (void)state;
    unsigned n = 0;
    CHECK_OK(NULL, clrun_device_count(&n));
    char specs[8][16];
    pthread_t th[8];
    int m = 0;
    for (unsigned i = 0; i < n && m < 8; i++) {
        snprintf(specs[m], sizeof specs[m], "%u", i);
        assert_int_equal(pthread_create(&th[m], NULL, device_thread, specs[m]), 0);
        m++;
    }
    for (int i = 0; i < m; i++) {
        void *err = NULL;
        pthread_join(th[i], &err);
        if (err) fail_msg("device %s: %s", specs[i], (char *)err);
    }
    fprintf(stderr, "pipelines ran on %d device(s) at once\n", m);
    assert_int_equal(m, n < 8 ? n : 8); /* every device, of every implementation listed */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(in_order_and_equal),
        cmocka_unit_test(failing_items_midstream),
        cmocka_unit_test(bounded_in_flight),
        cmocka_unit_test(cancel_drops_and_goes_on),
        cmocka_unit_test(user_op),
        cmocka_unit_test(bad_calls),
        cmocka_unit_test(every_device_at_once),
        cmocka_unit_test(freed_from_its_own_callback),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
