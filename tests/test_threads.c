/* test_threads.c — the threading contract (clrun.h, "Threads"): several threads on one context run
 * the library's ops and their own kernels at once and every result is exact (the context's lock
 * serialises them); one context per thread runs in parallel; the current queue is per thread
 * (threads with and without streams on one context); thousands of streams are all synchronised. */
#include "helpers.h"

#include <pthread.h>

enum { THREADS = 4, ROUNDS = 12, N = 3001, M = 24 };

static const char src[] = "__kernel void affine(__global float *y, __global const float *x, float a, float b, uint n)\n"
                          "{ size_t i = get_global_id(0); if (i < n) y[i] = a * x[i] + b; }\n";

struct job {
    clrun_ctx *ctx; /* shared or own */
    clrun_prog *prog;
    unsigned id;
    int stream; /* run on a stream of its own (clrun_queue_use in this thread only) */
    int bad;    /* wrong results seen */
    char err[512];
};

static void *work(void *arg)
{
    struct job *j = arg;
    clrun_ctx *ctx = j->ctx;
    clrun_kernel *k = NULL;
    clrun_buf *x = NULL, *y = NULL, *a = NULL, *c = NULL;
    float hx[N], hy[N], ha[M * M], hc[M * M];
    clrun_queue *mine = NULL;
    clrun_status st = CLRUN_OK;
    if (j->stream && ((st = clrun_queue_new(ctx, &mine)) || (st = clrun_queue_use(ctx, mine)))) goto done;
    for (int i = 0; i < N; i++) hx[i] = (float)((i * 7 + (int)j->id) % 13);
    for (int i = 0; i < M * M; i++) ha[i] = (float)((i + (int)j->id) % 5);
    if ((st = clrun_kernel_new(j->prog, "affine", &k)) || (st = clrun_buf_new(ctx, sizeof hx, 0, &x)) ||
        (st = clrun_buf_new(ctx, sizeof hy, 0, &y)) || (st = clrun_buf_new(ctx, sizeof ha, 0, &a)) ||
        (st = clrun_buf_new(ctx, sizeof hc, 0, &c)) || (st = clrun_upload(x, 0, hx, sizeof hx)) || (st = clrun_upload(a, 0, ha, sizeof ha)))
        goto done;
    double want_sum = 0;
    for (int i = 0; i < N; i++) want_sum += hx[i];
    for (int r = 0; r < ROUNDS && !j->bad; r++) {
        const float s = (float)(j->id + 1), b = (float)r;
        const size_t g = N;
        double sum = -1;
        if ((st = clrun_arg_buf(k, 0, y)) || (st = clrun_arg_buf(k, 1, x)) || (st = clrun_arg_f32(k, 2, s)) ||
            (st = clrun_arg_f32(k, 3, b)) || (st = clrun_arg_u32(k, 4, N)) || (st = clrun_launch(k, 1, &g, NULL)) ||
            (st = clrun_download(y, 0, hy, sizeof hy)))
            goto done;
        for (int i = 0; i < N; i++) j->bad += hy[i] != s * hx[i] + b;
        j->bad += clrun_queue_current(ctx) != (mine ? mine : clrun_ctx_queue(ctx)); /* no other thread's choice */
        if ((st = clrun_sum(ctx, CLRUN_F32, x, 0, N, &sum))) goto done;
        j->bad += sum != want_sum;
        clrun_gemm_desc d = {0};
        d.m = d.n = d.k = M, d.alpha = 1, d.a = a, d.b = a, d.c = c, d.lda = d.ldb = d.ldc = M;
        if ((st = clrun_gemm(ctx, &d)) || (st = clrun_download(c, 0, hc, sizeof hc))) goto done;
        for (int i = 0; i < M; i++)
            for (int q = 0; q < M; q++) {
                float w = 0;
                for (int t = 0; t < M; t++) w += ha[i * M + t] * ha[t * M + q];
                j->bad += hc[i * M + q] != w; /* small integers: exact in any order */
            }
    }
done:
    if (st) snprintf(j->err, sizeof j->err, "%s: %s", clrun_status_str(st), clrun_last_error(ctx));
    clrun_buf_free(x), clrun_buf_free(y), clrun_buf_free(a), clrun_buf_free(c);
    clrun_kernel_free(k);
    clrun_queue_free(mine);
    return NULL;
}

static void run(struct job *jobs)
{
    pthread_t th[THREADS];
    for (unsigned i = 0; i < THREADS; i++) assert_int_equal(pthread_create(&th[i], NULL, work, &jobs[i]), 0);
    for (unsigned i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    for (unsigned i = 0; i < THREADS; i++) {
        if (jobs[i].err[0]) fail_msg("thread %u: %s", i, jobs[i].err);
        if (jobs[i].bad) fail_msg("thread %u: %d wrong results", i, jobs[i].bad);
    }
}

static void threads_share_one_context(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_prog *p = NULL;
    struct job jobs[THREADS];
    CHECK_OK(ctx, clrun_prog_source(ctx, src, "affine", NULL, &p));
    for (unsigned i = 0; i < THREADS; i++) jobs[i] = (struct job){ctx, p, i, 0, 0, ""};
    run(jobs);
    clrun_prog_free(p);
}

/* The current queue is per thread: half the threads on streams of their own, half on the context's
 * queue, on one context; each sees its own choice and exact results. */
static void streams_are_per_thread(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_prog *p = NULL;
    struct job jobs[THREADS];
    CHECK_OK(ctx, clrun_prog_source(ctx, src, "affine", NULL, &p));
    for (unsigned i = 0; i < THREADS; i++) jobs[i] = (struct job){ctx, p, i, (int)(i % 2), 0, ""};
    run(jobs);
    assert_ptr_equal(clrun_queue_current(ctx), clrun_ctx_queue(ctx)); /* this thread never chose */
    clrun_prog_free(p);
}

struct chooser {
    clrun_ctx *ctx;
    clrun_queue *seen;
};

static void *see_current(void *arg)
{
    struct chooser *c = arg;
    c->seen = clrun_queue_current(c->ctx);
    return NULL;
}

/* Thousands of streams: each writes its own word; clrun_finish syncs every one of them (an array
 * of 64 queues once left the rest unsynchronised), and a thread's choice is not another's. */
static void streams_by_the_thousand(void **state)
{
    clrun_ctx *ctx = *state;
    enum { S = 2000 };
    clrun_queue **q = calloc(S, sizeof *q);
    unsigned *host = malloc(S * sizeof *host), *got = malloc(S * sizeof *got);
    clrun_buf *b = NULL;
    assert_non_null(q), assert_non_null(host), assert_non_null(got);
    const unsigned zero = 0, salt = (unsigned)test_seed();
    CHECK_OK(ctx, clrun_buf_new(ctx, S * sizeof *host, 0, &b));
    CHECK_OK(ctx, clrun_buf_fill(b, &zero, 4, 0, S * sizeof *host));
    CHECK_OK(ctx, clrun_finish(ctx));
    for (unsigned i = 0; i < S; i++) {
        host[i] = salt ^ (i * 2654435761u);
        CHECK_OK(ctx, clrun_queue_new(ctx, &q[i]));
        CHECK_OK(ctx, clrun_queue_use(ctx, q[i]));
        CHECK_OK(ctx, clrun_upload_async(b, i * sizeof *host, &host[i], sizeof *host, NULL));
    }
    struct chooser c = {ctx, NULL};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, see_current, &c), 0);
    pthread_join(th, NULL);
    assert_ptr_equal(c.seen, clrun_ctx_queue(ctx)); /* another thread is on the context's own queue */
    assert_ptr_equal(clrun_queue_current(ctx), q[S - 1]);
    CHECK_OK(ctx, clrun_queue_use(ctx, NULL));
    CHECK_OK(ctx, clrun_finish(ctx));
    CHECK_OK(ctx, clrun_download(b, 0, got, S * sizeof *got));
    for (unsigned i = 0; i < S; i++)
        if (got[i] != host[i]) fail_msg("stream %u: its word reads %08x after clrun_finish, want %08x", i, got[i], host[i]);
    for (unsigned i = 0; i < S; i++) clrun_queue_free(q[i]);
    clrun_buf_free(b);
    free(q), free(host), free(got);
}

static void one_context_per_thread(void **state)
{
    (void)state;
    struct job jobs[THREADS];
    for (unsigned i = 0; i < THREADS; i++) {
        jobs[i] = (struct job){NULL, NULL, i, 0, 0, ""};
        CHECK_OK(NULL, clrun_open(&jobs[i].ctx, test_device()));
        CHECK_OK(jobs[i].ctx, clrun_prog_source(jobs[i].ctx, src, "affine", NULL, &jobs[i].prog));
    }
    run(jobs);
    for (unsigned i = 0; i < THREADS; i++) clrun_prog_free(jobs[i].prog), clrun_close(jobs[i].ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_share_one_context),
        cmocka_unit_test(one_context_per_thread),
        cmocka_unit_test(streams_are_per_thread),
        cmocka_unit_test(streams_by_the_thousand),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
