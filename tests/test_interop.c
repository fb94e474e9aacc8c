/* test_interop.c — clrun over an application's own OpenCL objects (clrun_ctx_wrap, clrun_buf_wrap):
 * the application makes its context, queue and buffers with plain OpenCL, runs clrun's GEMM, Canny
 * and a reduction on them, lets clrun go, and keeps using them; clrun's references are its own.
 * Then what is refused: a device outside the context, an out-of-order queue, a queue of another
 * context, a buffer of another context, ranges past the buffer, unaligned views. */
#include "helpers.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The test device's cl_device_id, as an application would have found it. */
static cl_device_id test_cl_device(void)
{
    clrun_ctx *c = NULL;
    CHECK_OK(NULL, clrun_open(&c, test_device()));
    cl_device_id d = clrun_ctx_cl_device(c); /* a root device: valid after the context goes */
    clrun_close(c);
    return d;
}

static cl_uint refs(cl_mem m)
{
    cl_uint n = 0;
    assert_int_equal(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof n, &n, NULL), CL_SUCCESS);
    return n;
}

/* Wait (up to 2 s) for m's count to reach want, which the implementation's own deferred releases
 * may delay; then it must be want. */
static void settled_refs(cl_mem m, cl_uint want)
{
    for (int t = 0; t < 2000 && refs(m) != want; t++) nanosleep(&(struct timespec){0, 1000000}, NULL);
    assert_int_equal(refs(m), want);
}

static cl_uint ctx_refs(cl_context c)
{
    cl_uint n = 0;
    assert_int_equal(clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof n, &n, NULL), CL_SUCCESS);
    return n;
}

static void ops_on_the_applications_objects(void **state)
{
    (void)state;
    enum { M = 45, N = 38, K = 67, W = 131, H = 77 };
    uint64_t rng = test_seed();
    cl_int err;
    cl_device_id dev = test_cl_device();
    cl_context cc = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    assert_non_null(cc);
    cl_command_queue q = clCreateCommandQueue(cc, dev, 0, &err); /* in order, no profiling */
    assert_non_null(q);
    /* the application's data: A and B in one buffer (B after A), C apart; an 8-bit image */
    float *ab = malloc((M * K + K * N) * sizeof *ab), *c = malloc(M * N * sizeof *c);
    unsigned char *img = malloc(W * H), *edges = malloc(W * H), *want = malloc(W * H);
    for (int i = 0; i < M * K + K * N; i++) ab[i] = (float)((int)(rng_next(&rng) % 9) - 4);
    for (int i = 0; i < W * H; i++)
        img[i] = (unsigned char)(((i % W) / 9 + (i / W) / 7) % 2 ? 200 : 30) + (unsigned char)(rng_next(&rng) % 20);
    cl_mem mab = clCreateBuffer(cc, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, (M * K + K * N) * sizeof *ab, ab, &err);
    cl_mem mc = clCreateBuffer(cc, CL_MEM_READ_WRITE, M * N * sizeof *c, NULL, &err);
    cl_mem mimg = clCreateBuffer(cc, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, W * H, img, &err);
    cl_mem medge = clCreateBuffer(cc, CL_MEM_READ_WRITE, W * H, NULL, &err);
    assert_true(mab && mc && mimg && medge);

    /* the buffer's reference count as the application holds it: clrun adds its own and gives it
     * back. (Not the context's: implementations hold references of their own for a while, Rusticl
     * five more just after a context's kernels and events go, and the spec calls the count stale.) */
    const cl_uint mab0 = refs(mab);
    clrun_ctx *ctx = NULL;
    CHECK_OK(NULL, clrun_ctx_wrap(&ctx, cc, dev, q));
    assert_ptr_equal(clrun_ctx_cl_context(ctx), cc);
    assert_ptr_equal(clrun_ctx_cl_queue(ctx), q);
    clrun_buf *ba, *bc, *bi, *be;
    CHECK_OK(ctx, clrun_buf_wrap(ctx, mab, 0, 0, &ba));
    CHECK_OK(ctx, clrun_buf_wrap(ctx, mc, 0, 0, &bc));
    CHECK_OK(ctx, clrun_buf_wrap(ctx, mimg, 0, 0, &bi));
    CHECK_OK(ctx, clrun_buf_wrap(ctx, medge, 0, 0, &be));
    assert_int_equal(clrun_buf_size(ba), (M * K + K * N) * sizeof *ab);
    assert_int_equal(refs(mab), mab0 + 1);
    /* GEMM: A at element 0, B after it in the same buffer */
    clrun_gemm_desc d = {0};
    d.m = M, d.n = N, d.k = K, d.alpha = 1, d.a = ba, d.lda = K, d.b = ba, d.b_off = M * K, d.ldb = N, d.c = bc, d.ldc = N;
    CHECK_OK(ctx, clrun_gemm(ctx, &d));
    /* a reduction over B */
    double sum = 0, want_sum = 0;
    CHECK_OK(ctx, clrun_sum(ctx, CLRUN_F32, ba, M * K, K * N, &sum));
    for (int i = 0; i < K * N; i++) want_sum += ab[M * K + i];
    assert_true(sum == want_sum);
    /* Canny on the application's image */
    clrun_canny_params p = {50, 100, 0, 3, 0, 0};
    CHECK_OK(ctx, clrun_canny(ctx, bi, 0, W, W, H, 1, be, 0, W, &p));
    CHECK_OK(ctx, clrun_finish(ctx));
    clrun_buf_free(ba), clrun_buf_free(bc), clrun_buf_free(bi), clrun_buf_free(be);
    clrun_close(ctx);
    assert_int_equal(refs(mab), mab0);
    assert_true(ctx_refs(cc) >= 1); /* still a valid context */
    /* the application's objects are still its own: read the results through its queue */
    assert_int_equal(clEnqueueReadBuffer(q, mc, CL_TRUE, 0, M * N * sizeof *c, c, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(clEnqueueReadBuffer(q, medge, CL_TRUE, 0, W * H, edges, 0, NULL, NULL), CL_SUCCESS);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float s = 0; /* small integers: exact */
            for (int k = 0; k < K; k++) s += ab[i * K + k] * ab[M * K + k * N + j];
            if (c[i * N + j] != s) fail_msg("C[%d][%d] = %g, want %g", i, j, c[i * N + j], s);
        }
    /* the same edges as clrun's own context computes from the same image */
    clrun_ctx *own = NULL;
    clrun_buf *oi, *oe;
    CHECK_OK(NULL, clrun_open(&own, test_device()));
    CHECK_OK(own, clrun_buf_new_from(own, img, W * H, 0, &oi));
    CHECK_OK(own, clrun_buf_new(own, W * H, 0, &oe));
    CHECK_OK(own, clrun_canny(own, oi, 0, W, W, H, 1, oe, 0, W, &p));
    CHECK_OK(own, clrun_download(oe, 0, want, W * H));
    assert_memory_equal(edges, want, W * H);
    size_t strong = 0;
    for (int i = 0; i < W * H; i++) strong += edges[i] == 255;
    assert_true(strong > 0);
    clrun_buf_free(oi), clrun_buf_free(oe);
    clrun_close(own);
    /* and a clrun context of its own queue on the same context, a view at an aligned offset */
    CHECK_OK(NULL, clrun_ctx_wrap(&ctx, cc, dev, NULL));
    assert_ptr_not_equal(clrun_ctx_cl_queue(ctx), q);
    const size_t align = clrun_ctx_device(ctx)->mem_base_align, off = align * ((K * N * sizeof(float) / 2) / align);
    clrun_buf *view;
    CHECK_OK(ctx, clrun_buf_wrap(ctx, mab, off, 64, &view));
    assert_int_equal(clrun_buf_size(view), 64);
    float got[16];
    CHECK_OK(ctx, clrun_download(view, 0, got, sizeof got));
    assert_memory_equal(got, (const char *)ab + off, sizeof got);
    clrun_buf_free(view);
    clrun_close(ctx);
    /* (not the context's count here: PoCL 3.1 keeps one of its own after any sub-buffer is read,
     * from plain OpenCL too; Rusticl drops a released sub-buffer's reference to its parent a moment
     * later, on a thread of its own: a reference clrun kept would never go, so the count may take
     * up to 2 s to settle) */
    settled_refs(mab, mab0);
    clReleaseMemObject(mab), clReleaseMemObject(mc), clReleaseMemObject(mimg), clReleaseMemObject(medge);
    clReleaseCommandQueue(q);
    clReleaseContext(cc);
    free(ab), free(c), free(img), free(edges), free(want);
}

static void refusals(void **state)
{
    (void)state;
    cl_int err;
    cl_device_id dev = test_cl_device();
    cl_context cc = clCreateContext(NULL, 1, &dev, NULL, NULL, &err), other = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    assert_true(cc && other);
    clrun_ctx *ctx = (clrun_ctx *)1;
    CHECK_FAIL(NULL, clrun_ctx_wrap(&ctx, NULL, dev, NULL), CLRUN_INVALID_ARG, "the context and the device are needed");
    assert_null(ctx);
    cl_command_queue qo = clCreateCommandQueue(other, dev, 0, &err);
    CHECK_FAIL(NULL, clrun_ctx_wrap(&ctx, cc, dev, qo), CLRUN_INVALID_ARG, "another context or device");
    cl_command_queue ooo = clCreateCommandQueue(cc, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
    if (ooo) { /* where the device takes out-of-order queues at all */
        CHECK_FAIL(NULL, clrun_ctx_wrap(&ctx, cc, dev, ooo), CLRUN_INVALID_ARG, "out of order");
        clReleaseCommandQueue(ooo);
    }
    /* a device of another platform or another device, not in the context */
    unsigned n = 0;
    CHECK_OK(NULL, clrun_device_count(&n));
    for (unsigned i = 0; i < n; i++) {
        clrun_ctx *c = NULL;
        char spec[32];
        clrun_device_info in;
        CHECK_OK(NULL, clrun_device_get(i, &in));
        snprintf(spec, sizeof spec, "%u:%u", in.platform_index, in.device_index);
        if (clrun_open(&c, spec) != CLRUN_OK) continue;
        cl_device_id od = clrun_ctx_cl_device(c);
        clrun_close(c);
        if (od != dev) {
            CHECK_FAIL(NULL, clrun_ctx_wrap(&ctx, cc, od, NULL), CLRUN_INVALID_ARG, "not one of the context's devices");
            break;
        }
    }
    CHECK_OK(NULL, clrun_ctx_wrap(&ctx, cc, dev, NULL));
    cl_mem mine = clCreateBuffer(cc, CL_MEM_READ_WRITE, 4096, NULL, &err),
           theirs = clCreateBuffer(other, CL_MEM_READ_WRITE, 64, NULL, &err);
    clrun_buf *b = (clrun_buf *)1;
    CHECK_FAIL(ctx, clrun_buf_wrap(ctx, theirs, 0, 0, &b), CLRUN_INVALID_ARG, "another OpenCL context");
    assert_null(b);
    CHECK_FAIL(ctx, clrun_buf_wrap(ctx, mine, 4000, 200, &b), CLRUN_INVALID_ARG, "run past");
    CHECK_FAIL(ctx, clrun_buf_wrap(ctx, mine, 5000, 0, &b), CLRUN_INVALID_ARG, "run past");
    CHECK_FAIL(ctx, clrun_buf_wrap(ctx, mine, 4096, 0, &b), CLRUN_INVALID_ARG, "0 bytes");
    if (clrun_ctx_device(ctx)->mem_base_align > 1) CHECK_FAIL(ctx, clrun_buf_wrap(ctx, mine, 1, 16, &b), CLRUN_INVALID_ARG, "alignment");
    CHECK_FAIL(ctx, clrun_buf_wrap(ctx, NULL, 0, 0, &b), CLRUN_INVALID_ARG, "mem is NULL");
    /* a queue passed as a cl_mem is named as such, whether the driver refuses the handle or answers
     * with a type that is no memory object's */
    CHECK_FAIL(ctx, clrun_buf_wrap(ctx, (cl_mem)clrun_ctx_cl_queue(ctx), 0, 0, &b), CLRUN_INVALID_ARG, "passed as a cl_mem");
    assert_int_equal(refs(mine), 1); /* nothing kept from the refusals */
    clReleaseMemObject(mine), clReleaseMemObject(theirs);
    clrun_close(ctx);
    assert_true(ctx_refs(cc) >= 1);
    clReleaseCommandQueue(qo);
    clReleaseContext(cc), clReleaseContext(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ops_on_the_applications_objects),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
