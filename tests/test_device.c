/* test_device.c — discovery, ranking, selection strings and capability probe. Meson runs it with
 * POCL_DEVICES="pthread pthread" (PoCL with two CPU devices), and as device-oclgrind with Oclgrind's
 * simulator listed beside them; checks that name PoCL's two devices skip elsewhere, saying why. */
#include "helpers.h"

/* How many devices PoCL lists (meson's runs ask for two: POCL_DEVICES='pthread pthread'). */
static unsigned pocl_devices(void)
{
    unsigned n = 0, pocl = 0;
    clrun_device_count(&n);
    for (unsigned i = 0; i < n; i++) {
        clrun_device_info in;
        clrun_device_get(i, &in);
        pocl += strstr(in.platform_name, "Portable Computing Language") != NULL;
    }
    return pocl;
}

/* The selection-string checks name PoCL's platform and its two devices: elsewhere (the GPU
 * machine) they are skipped, saying why. */
#define NEEDS_TWO_POCL_DEVICES()                                                                                                 \
    do {                                                                                                                         \
        if (pocl_devices() < 2) {                                                                                                \
            print_message("skipped: needs PoCL with two devices (POCL_DEVICES='pthread pthread'); %u listed\n", pocl_devices()); \
            skip();                                                                                                              \
        }                                                                                                                        \
    } while (0)

static void lists_devices(void **state)
{
    (void)state;
    unsigned n = 0;
    CHECK_OK(NULL, clrun_device_count(&n));
    assert_true(n >= 1);
    unsigned pocl = 0;
    for (unsigned i = 0; i < n; i++) {
        clrun_device_info in;
        CHECK_OK(NULL, clrun_device_get(i, &in));
        assert_int_equal(in.index, i);
        assert_true(in.name[0] != 0);
        assert_true(in.global_mem > 0);
        assert_true(in.max_alloc > 0 && in.max_alloc <= in.global_mem);
        assert_true(in.compute_units > 0);
        assert_true(in.max_work_group > 0);
        assert_true(in.preferred_multiple > 0);
        assert_true(in.c_version_major >= 1);
        assert_true(strstr(in.version, "OpenCL") != NULL);
        assert_true(in.driver_version[0] != 0);
        if (strstr(in.platform_name, "Portable Computing Language")) {
            pocl++;
            assert_int_equal(in.type, CLRUN_DEVICE_CPU);
            assert_int_equal(in.fp16, 0); /* PoCL's CPU device exposes no cl_khr_fp16 */
        }
    }
    assert_int_equal(pocl, pocl_devices());
    clrun_device_info in;
    CHECK_FAIL(NULL, clrun_device_get(n, &in), CLRUN_NO_DEVICE, "out of range");
}

/* Index of the n-th device (0-based) of the PoCL platform. */
static unsigned pocl_dev(unsigned which, unsigned *plat)
{
    unsigned n = 0, seen = 0;
    clrun_device_count(&n);
    for (unsigned i = 0; i < n; i++) {
        clrun_device_info in;
        clrun_device_get(i, &in);
        if (strstr(in.platform_name, "Portable") && seen++ == which) {
            *plat = in.platform_index;
            return i;
        }
    }
    fail_msg("no PoCL device %u", which);
    return 0;
}

static void selection_strings(void **state)
{
    (void)state;
    NEEDS_TWO_POCL_DEVICES();
    unsigned idx = 99, plat = 0;
    const char *why = NULL;
    unsigned p0 = pocl_dev(0, &plat), p1 = pocl_dev(1, &plat);
    char spec[64];

    CHECK_OK(NULL, clrun_device_select("pocl:1", &idx, &why));
    assert_int_equal(idx, p1);
    assert_string_equal(why, "selection string");
    CHECK_OK(NULL, clrun_device_select("PoCL:", &idx, NULL)); /* case-insensitive, empty part = 0 */
    assert_int_equal(idx, p0);
    snprintf(spec, sizeof spec, "%u:1", plat);
    CHECK_OK(NULL, clrun_device_select(spec, &idx, NULL));
    assert_int_equal(idx, p1);
    snprintf(spec, sizeof spec, "%u:", plat);
    CHECK_OK(NULL, clrun_device_select(spec, &idx, NULL));
    assert_int_equal(idx, p0);
    CHECK_OK(NULL, clrun_device_select("portable computing:pthread", &idx, NULL));
    assert_int_equal(idx, p0);
    snprintf(spec, sizeof spec, "%u", p1);
    CHECK_OK(NULL, clrun_device_select(spec, &idx, NULL));
    assert_int_equal(idx, p1);
    CHECK_OK(NULL, clrun_device_select("  CPU ", &idx, NULL));
    clrun_device_info in;
    CHECK_OK(NULL, clrun_device_get(idx, &in));
    assert_int_equal(in.type, CLRUN_DEVICE_CPU);

    CHECK_FAIL(NULL, clrun_device_select("nosuchvendor:", &idx, NULL), CLRUN_NO_DEVICE, "no OpenCL device matches 'nosuchvendor:'");
    /* the error lists what exists */
    assert_non_null(strstr(clrun_last_error(NULL), "pthread"));
    CHECK_FAIL(NULL, clrun_device_select("pocl:7", &idx, NULL), CLRUN_NO_DEVICE, "Devices:");
    CHECK_FAIL(NULL, clrun_device_select("999", &idx, NULL), CLRUN_NO_DEVICE, "'999'");
    CHECK_FAIL(NULL, clrun_device_select(":nosuchdevice", &idx, NULL), CLRUN_NO_DEVICE, "nosuchdevice");
    unsigned n;
    clrun_device_count(&n);
    int have_gpu = 0;
    for (unsigned i = 0; i < n; i++) {
        clrun_device_get(i, &in);
        have_gpu |= in.type == CLRUN_DEVICE_GPU;
    }
    if (!have_gpu) CHECK_FAIL(NULL, clrun_device_select("gpu", &idx, NULL), CLRUN_NO_DEVICE, "'gpu'");
}

static void environment_and_ranking(void **state)
{
    (void)state;
    NEEDS_TWO_POCL_DEVICES();
    unsigned idx = 99, plat = 0, n = 0;
    const char *why = NULL;
    unsigned p1 = pocl_dev(1, &plat);
    clrun_device_count(&n);

    unsetenv("CLRUN_DEVICE");
    CHECK_OK(NULL, clrun_device_select(NULL, &idx, &why));
    assert_string_equal(why, "ranking");
    /* the ranked default is never beaten by another device */
    clrun_device_info best, in;
    clrun_device_get(idx, &best);
    for (unsigned i = 0; i < n; i++) {
        clrun_device_get(i, &in);
        assert_true(in.type >= best.type);
        if (in.type == best.type) assert_true(in.global_mem <= best.global_mem);
    }
    setenv("CLRUN_DEVICE", "pocl:1", 1);
    CHECK_OK(NULL, clrun_device_select(NULL, &idx, &why));
    assert_int_equal(idx, p1);
    assert_string_equal(why, "$CLRUN_DEVICE");
    CHECK_OK(NULL, clrun_device_select("", &idx, &why));
    assert_string_equal(why, "$CLRUN_DEVICE");
    CHECK_OK(NULL, clrun_device_select("pocl:0", &idx, &why)); /* an explicit string wins */
    assert_string_equal(why, "selection string");
    setenv("CLRUN_DEVICE", "bogus:9", 1);
    CHECK_FAIL(NULL, clrun_device_select(NULL, &idx, NULL), CLRUN_NO_DEVICE, "$CLRUN_DEVICE");
    clrun_ctx *ctx = (clrun_ctx *)0x1;
    CHECK_FAIL(NULL, clrun_open(&ctx, NULL), CLRUN_NO_DEVICE, "bogus:9");
    assert_null(ctx);
    unsetenv("CLRUN_DEVICE");
}

static void open_each_device(void **state)
{
    (void)state;
    unsigned n = 0;
    CHECK_OK(NULL, clrun_device_count(&n));
    for (unsigned d = 0; d < n; d++) { /* every device listed, whoever made it */
        char spec[32];
        snprintf(spec, sizeof spec, "%u", d);
        clrun_ctx *ctx = NULL;
        CHECK_OK(NULL, clrun_open(&ctx, spec));
        const clrun_device_info *in = clrun_ctx_device(ctx);
        assert_int_equal(in->index, d);
        assert_true(in->preferred_multiple >= 1);
        /* the list agrees with the context on what the context learnt */
        clrun_device_info listed;
        CHECK_OK(NULL, clrun_device_get(d, &listed));
        assert_int_equal(listed.preferred_multiple, in->preferred_multiple);
        assert_int_equal(listed.subgroups, in->subgroups);
        assert_int_equal(listed.fp32_denorms, in->fp32_denorms);
        assert_non_null(clrun_ctx_cl_context(ctx));
        assert_non_null(clrun_ctx_cl_queue(ctx));
        assert_non_null(clrun_ctx_cl_device(ctx));
        cl_command_queue_properties props = 0;
        clGetCommandQueueInfo(clrun_ctx_cl_queue(ctx), CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
        assert_true(props & CL_QUEUE_PROFILING_ENABLE);
        assert_false(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
        assert_string_equal(clrun_last_error(ctx), "");
        CHECK_OK(ctx, clrun_finish(ctx));
        clrun_close(ctx);
    }
    clrun_close(NULL);
}

/* A bare text that no device name contains is matched against platform and vendor names: "portable"
 * finds PoCL, whose devices are named after the processor; several matches take the best-ranked and
 * say so. */
static void bare_text_matches_platforms(void **state)
{
    (void)state;
    unsigned n = 0, idx = 99;
    const char *why = NULL;
    CHECK_OK(NULL, clrun_device_count(&n));
    for (unsigned i = 0; i < n; i++) {
        clrun_device_info in, got, other;
        CHECK_OK(NULL, clrun_device_get(i, &in));
        char word[64];
        /* the platform's first word, where no device's name holds it */
        snprintf(word, sizeof word, "%.*s", (int)strcspn(in.platform_name, " ("), in.platform_name);
        int in_names = 0, same = 0;
        for (unsigned j = 0; j < n; j++) {
            CHECK_OK(NULL, clrun_device_get(j, &other));
            in_names |= strcasestr(other.name, word) != NULL;
            same += strcasestr(other.platform_name, word) || strcasestr(other.platform_vendor, word) || strcasestr(other.vendor, word);
        }
        if (in_names || strlen(word) < 3) continue;
        CHECK_OK(NULL, clrun_device_select(word, &idx, &why));
        CHECK_OK(NULL, clrun_device_get(idx, &got));
        assert_non_null(strcasestr(got.platform_name, word)     ? got.platform_name
                        : strcasestr(got.platform_vendor, word) ? got.platform_vendor
                                                                : strcasestr(got.vendor, word));
        if (same > 1) assert_non_null(strstr(why, "several devices match"));
        else assert_string_equal(why, "selection string");
    }
}

/* A device reporting several types at once (Oclgrind's simulator: CPU | GPU | accelerator) is
 * "other": ranked after every CPU, never taken for gpu or cpu. Run with Oclgrind's ICD beside PoCL
 * (the meson test device-oclgrind); elsewhere skipped, saying why. */
static void several_types_rank_last(void **state)
{
    (void)state;
    unsigned n = 0, sim = 0, found = 0, idx = 0;
    CHECK_OK(NULL, clrun_device_count(&n));
    for (unsigned i = 0; i < n; i++) {
        clrun_device_info in;
        CHECK_OK(NULL, clrun_device_get(i, &in));
        if (strstr(in.name, "Oclgrind")) sim = i, found = 1;
    }
    if (!found) {
        print_message("skipped: no Oclgrind device listed (the device-oclgrind test lists one)\n");
        skip();
    }
    clrun_device_info in;
    CHECK_OK(NULL, clrun_device_get(sim, &in));
    assert_int_equal(in.type, CLRUN_DEVICE_OTHER);
    unsetenv("CLRUN_DEVICE");
    CHECK_OK(NULL, clrun_device_select(NULL, &idx, NULL));
    assert_int_not_equal(idx, sim);
    CHECK_OK(NULL, clrun_device_select("cpu", &idx, NULL));
    assert_int_not_equal(idx, sim);
    CHECK_FAIL(NULL, clrun_device_select("gpu", &idx, NULL), CLRUN_NO_DEVICE, "'gpu'");
    CHECK_OK(NULL, clrun_device_select("oclgrind", &idx, NULL));
    assert_int_equal(idx, sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lists_devices),    cmocka_unit_test(selection_strings),           cmocka_unit_test(environment_and_ranking),
        cmocka_unit_test(open_each_device), cmocka_unit_test(bare_text_matches_platforms), cmocka_unit_test(several_types_rank_last),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
