/* test_twice.c — clrun_twice against the host on awkward sizes. */
#include "helpers.h"

#include <stdlib.h>

static void doubles(void **state)
{
    clrun_ctx *ctx = *state;
    const size_t sizes[] = {0, 1, 7, 1000, 65537};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        const size_t n = sizes[s];
        float *x = malloc(n * 4 + 4), *y = malloc(n * 4 + 4);
        for (size_t i = 0; i < n; i++) x[i] = (float)rand() / (float)RAND_MAX - 0.5f;
        clrun_buf *bx = NULL, *by = NULL;
        CHECK_OK(ctx, clrun_buf_new(ctx, n * 4 + 4, 0, &bx));
        CHECK_OK(ctx, clrun_buf_new(ctx, n * 4 + 4, 0, &by));
        if (n) CHECK_OK(ctx, clrun_upload(bx, 0, x, n * 4));
        CHECK_OK(ctx, clrun_twice(ctx, bx, by, n));
        if (n) CHECK_OK(ctx, clrun_download(by, 0, y, n * 4));
        for (size_t i = 0; i < n; i++) assert_true(y[i] == 2.0f * x[i]);
        CHECK_FAIL(ctx, clrun_twice(ctx, bx, by, n + 2), CLRUN_INVALID_ARG, "under n floats");
        clrun_buf_free(bx), clrun_buf_free(by);
        free(x), free(y);
    }
}

static int setup(void **state)
{
    clrun_ctx *ctx = NULL;
    if (clrun_open(&ctx, test_device()) != CLRUN_OK) return -1;
    *state = ctx;
    return 0;
}

static int teardown(void **state)
{
    clrun_close(*state);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(doubles)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
