/* test_noplatform.c — with the ICD loader pointed at an empty vendors folder there is no platform:
 * every entry point says so with its own status and a text that tells how to install a driver. */
#include "helpers.h"

static void no_platform(void **state)
{
    (void)state;
    unsigned n = 7;
    CHECK_FAIL(NULL, clrun_device_count(&n), CLRUN_NO_PLATFORM, "pocl-opencl-icd");
    assert_int_equal(n, 0);
    assert_non_null(strstr(clrun_last_error(NULL), "OCL_ICD_VENDORS"));
    assert_non_null(strstr(clrun_last_error(NULL), "CL_PLATFORM_NOT_FOUND_KHR"));
    clrun_ctx *ctx = NULL;
    CHECK_FAIL(NULL, clrun_open(&ctx, NULL), CLRUN_NO_PLATFORM, "no OpenCL platform found");
    assert_null(ctx);
    unsigned idx;
    CHECK_FAIL(NULL, clrun_device_select("cpu", &idx, NULL), CLRUN_NO_PLATFORM, "pocl-opencl-icd");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(no_platform)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
