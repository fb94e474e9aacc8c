/* test_queue.c — streams: more queues on a context (clrun_queue_*). Order across queues holds
 * only through events, and holds through them: a chain of steps that alternates between queues,
 * each waiting on the step before, gives the sequential result; ops on two queues at once (GEMMs
 * with their packing in scratch memory) do not disturb each other; clrun_finish waits for every
 * queue; a blocking upload is in the buffer when it returns, for every queue; what is refused. Run
 * on PoCL and on Oclgrind's simulator (queue-oclgrind). */
#include "helpers.h"

#include <stdlib.h>
#include <string.h>

/* 40 steps over three queues, each waiting on the step before: even steps x ← (x + 1)·0.5, odd
 * ones x ← x·0.5 + 1, so steps out of order, or two at once, give other bits. */
static void chain_across_queues(void **state)
{
    clrun_ctx *ctx = *state;
    enum { N = 1 << 16, STEPS = 40 };
    clrun_queue *q[3] = {clrun_ctx_queue(ctx), NULL, NULL};
    CHECK_OK(ctx, clrun_queue_new(ctx, &q[1]));
    CHECK_OK(ctx, clrun_queue_new(ctx, &q[2]));
    assert_ptr_equal(clrun_queue_current(ctx), q[0]);
    float *x = malloc(N * sizeof *x), *want = malloc(N * sizeof *want), *got = malloc(N * sizeof *got);
    uint64_t rng = test_seed();
    for (int i = 0; i < N; i++) x[i] = want[i] = rng_float(&rng) * 8.0f;
    for (int s = 0; s < STEPS; s++)
        for (int i = 0; i < N; i++) {
            volatile float t = s % 2 ? want[i] * 0.5f : want[i] + 1.0f; /* each operation rounded, as the kernels do */
            want[i] = s % 2 ? t + 1.0f : t * 0.5f;
        }
    clrun_buf *bx, *half, *one;
    CHECK_OK(ctx, clrun_buf_new(ctx, N * 4, 0, &bx));
    CHECK_OK(ctx, clrun_buf_new(ctx, N * 4, 0, &half));
    CHECK_OK(ctx, clrun_buf_new(ctx, N * 4, 0, &one));
    float *h = malloc(N * 4), *o = malloc(N * 4);
    for (int i = 0; i < N; i++) h[i] = 0.5f, o[i] = 1.0f;
    CHECK_OK(ctx, clrun_upload(half, 0, h, N * 4));
    CHECK_OK(ctx, clrun_upload(one, 0, o, N * 4));
    clrun_event *prev = NULL;
    CHECK_OK(ctx, clrun_queue_use(ctx, q[1]));
    CHECK_OK(ctx, clrun_upload_async(bx, 0, x, N * 4, NULL)); /* the upload on a stream */
    CHECK_OK(ctx, clrun_queue_marker(q[1], &prev));
    for (int s = 0; s < STEPS; s++) {
        clrun_queue *on = q[(s + 2) % 3];
        CHECK_OK(ctx, clrun_queue_use(ctx, on));
        CHECK_OK(ctx, clrun_queue_wait(on, &prev, 1));
        clrun_event_free(prev);
        if (s % 2) {
            CHECK_OK(ctx, clrun_mul(ctx, CLRUN_F32, N, bx, bx, half));
            CHECK_OK(ctx, clrun_add(ctx, CLRUN_F32, N, bx, bx, one));
        } else {
            CHECK_OK(ctx, clrun_add(ctx, CLRUN_F32, N, bx, bx, one));
            CHECK_OK(ctx, clrun_mul(ctx, CLRUN_F32, N, bx, bx, half));
        }
        CHECK_OK(ctx, clrun_queue_marker(on, &prev));
    }
    CHECK_OK(ctx, clrun_queue_use(ctx, NULL));
    CHECK_OK(ctx, clrun_queue_wait(q[0], &prev, 1));
    clrun_event_free(prev);
    CHECK_OK(ctx, clrun_download(bx, 0, got, N * 4));
    for (int i = 0; i < N; i++)
        if (memcmp(&got[i], &want[i], 4)) fail_msg("x[%d] = %.9g after %d steps, want %.9g", i, got[i], STEPS, want[i]);
    clrun_queue_free(q[1]), clrun_queue_free(q[2]);
    clrun_buf_free(bx), clrun_buf_free(half), clrun_buf_free(one);
    free(x), free(want), free(got), free(h), free(o);
}

/* Two GEMMs on two queues at once, each packing operands in its queue's scratch memory. */
static void ops_on_two_queues_at_once(void **state)
{
    clrun_ctx *ctx = *state;
    enum { M = 96, N = 80, K = 300, R = 4 };
    clrun_queue *q[2];
    CHECK_OK(ctx, clrun_queue_new(ctx, &q[0]));
    CHECK_OK(ctx, clrun_queue_new(ctx, &q[1]));
    uint64_t rng = test_seed() + 1;
    float *a[2], *b[2], *c[2];
    clrun_buf *ba[2], *bb[2], *bc[2];
    for (int s = 0; s < 2; s++) {
        a[s] = malloc(M * K * 4), b[s] = malloc(K * N * 4), c[s] = malloc(M * N * 4);
        for (int i = 0; i < M * K; i++) a[s][i] = (float)((int)(rng_next(&rng) % 7) - 3);
        for (int i = 0; i < K * N; i++) b[s][i] = (float)((int)(rng_next(&rng) % 5) - 2);
        CHECK_OK(ctx, clrun_buf_new_from(ctx, a[s], M * K * 4, 0, &ba[s]));
        CHECK_OK(ctx, clrun_buf_new_from(ctx, b[s], K * N * 4, 0, &bb[s]));
        CHECK_OK(ctx, clrun_buf_new(ctx, M * N * 4, 0, &bc[s]));
    }
    for (int r = 0; r < R; r++) /* interleaved: several products in flight on both queues */
        for (int s = 0; s < 2; s++) {
            CHECK_OK(ctx, clrun_queue_use(ctx, q[s]));
            clrun_gemm_desc d = {0};
            d.m = M, d.n = N, d.k = K, d.alpha = 1, d.a = ba[s], d.lda = K, d.b = bb[s], d.ldb = N, d.c = bc[s], d.ldc = N;
            d.backend = r % 2 ? CLRUN_GEMM_CPU_KERNEL : CLRUN_GEMM_GPU_KERNEL;
            CHECK_OK(ctx, clrun_gemm(ctx, &d));
            CHECK_OK(ctx, clrun_queue_flush(q[s]));
        }
    CHECK_OK(ctx, clrun_finish(ctx)); /* every queue */
    CHECK_OK(ctx, clrun_queue_use(ctx, NULL));
    for (int s = 0; s < 2; s++) {
        CHECK_OK(ctx, clrun_download(bc[s], 0, c[s], M * N * 4));
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                float w = 0; /* small integers: exact */
                for (int k = 0; k < K; k++) w += a[s][i * K + k] * b[s][k * N + j];
                if (c[s][i * N + j] != w) fail_msg("queue %d: C[%d][%d] = %g, want %g", s, i, j, c[s][i * N + j], w);
            }
        clrun_buf_free(ba[s]), clrun_buf_free(bb[s]), clrun_buf_free(bc[s]);
        free(a[s]), free(b[s]), free(c[s]);
    }
    clrun_queue_free(q[0]);
    /* q[1] is left to clrun_close (the group teardown) */
}

static void refusals(void **state)
{
    clrun_ctx *ctx = *state, *other = NULL;
    CHECK_OK(NULL, clrun_open(&other, test_device()));
    clrun_queue *q = NULL, *oq = NULL;
    CHECK_OK(ctx, clrun_queue_new(ctx, &q));
    CHECK_OK(other, clrun_queue_new(other, &oq));
    CHECK_FAIL(ctx, clrun_queue_use(ctx, oq), CLRUN_INVALID_ARG, "another context");
    clrun_event *e = NULL;
    CHECK_OK(other, clrun_queue_marker(oq, &e));
    CHECK_FAIL(ctx, clrun_queue_wait(q, &e, 1), CLRUN_INVALID_ARG, "another context");
    clrun_event *none = NULL;
    CHECK_FAIL(ctx, clrun_queue_wait(q, &none, 1), CLRUN_INVALID_ARG, "event 0 is NULL");
    CHECK_OK(ctx, clrun_queue_wait(q, NULL, 0));
    CHECK_FAIL(ctx, clrun_queue_marker(q, NULL), CLRUN_INVALID_ARG, "ev is NULL");
    assert_non_null(clrun_queue_cl(q));
    assert_ptr_not_equal(clrun_queue_cl(q), clrun_queue_cl(clrun_ctx_queue(ctx)));
    /* the current queue is what clrun_ctx_cl_queue gives; freeing it goes back to the context's own */
    CHECK_OK(ctx, clrun_queue_use(ctx, q));
    assert_ptr_equal(clrun_ctx_cl_queue(ctx), clrun_queue_cl(q));
    clrun_queue_free(q);
    assert_ptr_equal(clrun_queue_current(ctx), clrun_ctx_queue(ctx));
    assert_ptr_equal(clrun_ctx_cl_queue(ctx), clrun_queue_cl(clrun_ctx_queue(ctx)));
    clrun_queue_free(clrun_ctx_queue(ctx)); /* ignored */
    clrun_queue_free(NULL);
    clrun_event_free(e);
    clrun_close(other); /* frees oq */
}

/* clrun_upload returns once the data is in the buffer, not only once OpenCL has taken the host
 * copy: a stream's copy queued right after reads it with no event between them. Intel's CPU
 * runtime returned from a blocking write earlier, and about one copy in 3,000 read the buffer's
 * old contents. Many small rounds, so that a race shows. */
static void blocking_upload_is_seen_by_a_stream(void **state)
{
    clrun_ctx *ctx = *state;
    enum { ROUNDS = 3000, WORDS = 20 };
    clrun_queue *s;
    CHECK_OK(ctx, clrun_queue_new(ctx, &s));
    uint32_t src[WORDS], got[WORDS];
    for (unsigned r = 0; r < ROUNDS; r++) {
        clrun_buf *a, *b;
        CHECK_OK(ctx, clrun_buf_new(ctx, sizeof src, 0, &a));
        CHECK_OK(ctx, clrun_buf_new(ctx, sizeof src, 0, &b));
        for (unsigned i = 0; i < WORDS; i++) src[i] = r * WORDS + i;
        CHECK_OK(ctx, clrun_upload(a, 0, src, sizeof src));
        CHECK_OK(ctx, clrun_queue_use(ctx, s));
        CHECK_OK(ctx, clrun_buf_copy(b, 0, a, 0, sizeof src));
        CHECK_OK(ctx, clrun_download(b, 0, got, sizeof got)); /* on the stream, after its copy */
        CHECK_OK(ctx, clrun_queue_use(ctx, NULL));
        for (unsigned i = 0; i < WORDS; i++)
            if (got[i] != src[i]) fail_msg("round %u: word %u copied on the stream is %#x, uploaded %#x", r, i, got[i], src[i]);
        clrun_buf_free(a);
        clrun_buf_free(b);
    }
    clrun_queue_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chain_across_queues),
        cmocka_unit_test(ops_on_two_queues_at_once),
        cmocka_unit_test(blocking_upload_is_seen_by_a_stream),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
