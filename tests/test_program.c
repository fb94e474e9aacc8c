/* test_program.c — programs from files, strings and the embedded set; includes; build failures. */
#include "helpers.h"
#include "internal.h" /* clrun__ptx_rewrite (the static library) */

#define KDIR TEST_DATA_DIR "/kernels"

/* Run scale_add on fresh data and check dst = 3*src + offset. */
static void check_scale_add(clrun_ctx *ctx, clrun_prog *p, float offset)
{
    enum { N = 777 };
    float src[N], dst[N];
    uint64_t s = test_seed();
    /* multiples of 1/64 below 16: 3x + offset is exact, fused or not */
    for (int i = 0; i < N; i++) src[i] = (float)(int)(rng_float(&s) * 1024.0f) / 64.0f, dst[i] = -99.0f;
    clrun_kernel *k = NULL;
    clrun_buf *bs = NULL, *bd = NULL;
    CHECK_OK(ctx, clrun_kernel_new(p, "scale_add", &k));
    CHECK_OK(ctx, clrun_buf_new(ctx, sizeof src, 0, &bs));
    CHECK_OK(ctx, clrun_buf_new(ctx, sizeof dst, 0, &bd));
    CHECK_OK(ctx, clrun_upload(bs, 0, src, sizeof src));
    CHECK_OK(ctx, clrun_arg_buf(k, 0, bd));
    CHECK_OK(ctx, clrun_arg_buf(k, 1, bs));
    CHECK_OK(ctx, clrun_arg_u32(k, 2, N));
    size_t g = N;
    CHECK_OK(ctx, clrun_launch(k, 1, &g, NULL));
    CHECK_OK(ctx, clrun_download(bd, 0, dst, sizeof dst));
    for (int i = 0; i < N; i++) assert_true(dst[i] == src[i] * 3.0f + offset);
    clrun_buf_free(bs);
    clrun_buf_free(bd);
    clrun_kernel_free(k);
}

static void from_file_with_includes(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_prog *p = NULL;
    CHECK_OK(ctx, clrun_prog_file(ctx, KDIR "/main.cl", NULL, &p));
    assert_non_null(clrun_prog_cl_program(p));
    check_scale_add(ctx, p, 0.5f);
    clrun_prog_free(p);
    /* options reach the compiler (and change the cache key) */
    CHECK_OK(ctx, clrun_prog_file(ctx, KDIR "/main.cl", "-DTEST_OFFSET=2.0f", &p));
    check_scale_add(ctx, p, 2.0f);
    clrun_prog_free(p);
}

static void from_string(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_prog *p = NULL;
    /* a string's relative includes resolve against the current directory */
    char src[512];
    snprintf(src, sizeof src,
             "#include \"%s/sub/scale.h\"\n"
             "__kernel void scale_add(__global float *d, __global const float *s, const uint n)\n"
             "{ size_t i = get_global_id(0); if (i < n) d[i] = TEST_SCALE(s[i]) + TEST_OFFSET; }\n",
             KDIR);
    CHECK_OK(ctx, clrun_prog_source(ctx, src, "inline", NULL, &p));
    check_scale_add(ctx, p, 0.5f);
    clrun_prog_free(p);
}

static void embedded_set(void **state)
{
    clrun_ctx *ctx = *state;
    const char *const *names = clrun_builtin_names();
    int have_vector = 0;
    for (int i = 0; names[i]; i++) have_vector |= strcmp(names[i], "vector.cl") == 0;
    assert_true(have_vector);
    size_t len = 0;
    const char *src = clrun_builtin_source("vector", &len);
    assert_non_null(src);
    assert_int_equal(len, strlen(src));
    assert_non_null(strstr(src, "CLRUN_EW(mul"));
    clrun_prog *p = NULL;
    clrun_kernel *k = NULL;
    CHECK_OK(ctx, clrun_prog_builtin(ctx, "vector", NULL, &p));
    CHECK_OK(ctx, clrun_kernel_new(p, "clrun_mul_f32", &k));
    clrun_kernel_free(k);
    clrun_prog_free(p);
    CHECK_OK(ctx, clrun_prog_builtin(ctx, "reduce", NULL, &p)); /* includes "common.h" from the set */
    clrun_prog_free(p);
    CHECK_OK(ctx, clrun_prog_builtin(ctx, "vector.cl", NULL, &p));
    clrun_prog_free(p);
    CHECK_FAIL(ctx, clrun_prog_builtin(ctx, "nosuchop", NULL, &p), CLRUN_NOT_FOUND, "vector.cl");
    assert_null(p);
    /* CLRUN_KERNEL_DIR loads from a folder instead */
    setenv("CLRUN_KERNEL_DIR", KDIR, 1);
    CHECK_OK(ctx, clrun_prog_builtin(ctx, "main", NULL, &p));
    check_scale_add(ctx, p, 0.5f);
    clrun_prog_free(p);
    CHECK_FAIL(ctx, clrun_prog_builtin(ctx, "vector", NULL, &p), CLRUN_IO_ERROR, KDIR "/vector.cl");
    /* ... or from the source tree's op folders, each source and each include found by base name
     * (reduce.cl in lib/ops/reduce/ includes lib/ops/common.h; gemm_s8.cl in lib/ops/gemm/portable/
     * includes lib/ops/gemm/s8_epilogue.h) */
    setenv("CLRUN_KERNEL_DIR", SOURCE_DIR "/lib/ops", 1);
    CHECK_OK(ctx, clrun_prog_builtin(ctx, "reduce", NULL, &p));
    clrun_prog_free(p);
    CHECK_OK(ctx, clrun_prog_builtin(ctx, "gemm_s8", NULL, &p));
    clrun_prog_free(p);
    CHECK_FAIL(ctx, clrun_prog_builtin(ctx, "nosuchop", NULL, &p), CLRUN_IO_ERROR, "/lib/ops/nosuchop.cl");
    unsetenv("CLRUN_KERNEL_DIR");
}

static void build_failure_has_log(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_prog *p = (clrun_prog *)0x1;
    CHECK_FAIL(ctx, clrun_prog_file(ctx, KDIR "/broken.cl", "-DSOMETHING=1", &p), CLRUN_BUILD_FAILED, "broken.cl");
    assert_null(p);
    const char *e = clrun_last_error(ctx);
    assert_non_null(strstr(e, "-DSOMETHING=1")); /* the options */
    assert_non_null(strstr(e, "build log"));
    assert_non_null(strstr(e, "undeclared_identifier_xyz")); /* the compiler's own words */
    CHECK_FAIL(ctx, clrun_prog_source(ctx, "__kernel void k(__global int *p) { p[0] = 1; }", "opts", "-bogus-option-zz", &p),
               CLRUN_BUILD_FAILED, "-bogus-option-zz");
}

static void missing_files_and_includes(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_prog *p = NULL;
    CHECK_FAIL(ctx, clrun_prog_file(ctx, KDIR "/nope.cl", NULL, &p), CLRUN_IO_ERROR, "nope.cl");
    assert_non_null(strstr(clrun_last_error(ctx), "No such file"));
    CHECK_FAIL(ctx, clrun_prog_file(ctx, KDIR "/missing_include.cl", NULL, &p), CLRUN_IO_ERROR, "does_not_exist.h");
    assert_non_null(strstr(clrun_last_error(ctx), "missing_include.cl:1"));
    CHECK_FAIL(ctx, clrun_prog_file(ctx, KDIR "/cycle.cl", NULL, &p), CLRUN_INVALID_ARG, "include cycle");
    assert_null(p);
    CHECK_FAIL(ctx, clrun_prog_source(ctx, NULL, NULL, NULL, &p), CLRUN_INVALID_ARG, "NULL");
}

/* The -clrun-ptx-rewrite option's text rewrite: commented instructions become instructions, the
 * target becomes architecture-specific, nothing else moves. */
static void ptx_rewrite_text(void **state)
{
    (void)state;
    static const char in[] = "//\n// Generated\n//\n.version 9.0\n.target sm_90, texmode_independent\n"
                             "\t// begin inline asm\n\t//@@wgmma.fence.sync.aligned;\n//@@{\n  //@@.reg .pred p;\n"
                             "\tmov.u32 %r1, %r2; //@@ not at the start\n.target sm_80\n//@\n";
    static const char want[] = "//\n// Generated\n//\n.version 9.0\n.target sm_90a, texmode_independent\n"
                               "\t// begin inline asm\n\twgmma.fence.sync.aligned;\n{\n  .reg .pred p;\n"
                               "\tmov.u32 %r1, %r2; //@@ not at the start\n.target sm_80\n//@\n";
    size_t n = 0;
    char *out = clrun__ptx_rewrite((const unsigned char *)in, sizeof in, &n); /* with the NUL, as drivers hand binaries */
    assert_non_null(out);
    assert_string_equal(out, want);
    assert_int_equal(n, sizeof want);
    free(out);
    /* already architecture-specific: kept; without the NUL: the same text */
    static const char in2[] = ".target sm_90a\n//@@x;";
    out = clrun__ptx_rewrite((const unsigned char *)in2, sizeof in2 - 1, &n);
    assert_non_null(out);
    assert_string_equal(out, ".target sm_90a\nx;");
    assert_int_equal(n, strlen(out) + 1);
    free(out);
    /* not PTX (no target line: a CPU driver's binary) */
    static const unsigned char elf[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, '/', '/', '@', '@'};
    assert_null(clrun__ptx_rewrite(elf, sizeof elf, &n));
    assert_null(clrun__ptx_rewrite((const unsigned char *)"", 0, &n));
}

/* The option itself: never handed to the driver (which would refuse it); where binaries are not PTX
 * the build is refused in words; elsewhere (NVIDIA) a kernel built with it runs. */
static void ptx_rewrite_option(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_prog *p = NULL;
    const char *src = "__kernel void scale_add(__global float *d, __global const float *s, uint n)\n"
                      "{ uint i = get_global_id(0); if (i < n) d[i] = 3.0f * s[i] + 0.5f; }\n";
    clrun_status st = clrun_prog_source(ctx, src, "ptx", "-DX=1 -clrun-ptx-rewrite", &p);
    const clrun_device_info *in = clrun_ctx_device(ctx);
    if (strstr(in->platform_vendor, "NVIDIA")) {
        CHECK_OK(ctx, st);
        check_scale_add(ctx, p, 0.5f);
        clrun_prog_free(p);
    } else {
        assert_int_equal(st, CLRUN_UNSUPPORTED);
        assert_null(p);
        assert_non_null(strstr(clrun_last_error(ctx), "-clrun-ptx-rewrite"));
        assert_non_null(strstr(clrun_last_error(ctx), "PTX"));
    }
    /* a word that only contains the option is the driver's to judge */
    CHECK_FAIL(ctx, clrun_prog_source(ctx, src, "ptx", "-clrun-ptx-rewrite-not", &p), CLRUN_BUILD_FAILED, "-clrun-ptx-rewrite-not");
}

/* NVIDIA's compiler ignores #line and calls the source "<kernel>": its log's lines are given as the
 * file and line the source's #line directives say (CUDA kernel text, its headers); lines before any
 * directive, and logs of other forms, are left as they are. */
static void build_log_lines_mapped(void **state)
{
    (void)state;
    static const char src[] = "/* prelude */\n"                   /* 1 */
                              "int a;\n"                          /* 2 */
                              "#line 1 \"k.cu\"\n"                /* 3 */
                              "__kernel void k() {}\n"            /* 4: k.cu:1 */
                              "# line 40 \"my dir/h\\\"q.cuh\"\n" /* 5 */
                              "x\n"                               /* 6: my dir/h"q.cuh:40 */
                              "y\n"                               /* 7: :41 */
                              "#line 3 \"k.cu\"\n"                /* 8 */
                              "z\n";                              /* 9: k.cu:3 */
    static const char log[] = "<kernel>:2:5: error: a\n<kernel>:4:1: error: b\n<kernel>:7:9: note: c\n<kernel>:9:1: d <kernel>:x "
                              "<kernel>:99999999999:1: e\nother.cl:6:1: f\n";
    char *m = clrun__map_kernel_lines(log, src, sizeof src - 1);
    assert_non_null(m);
    assert_string_equal(m, "<kernel>:2:5: error: a\nk.cu:1:1: error: b\nmy dir/h\"q.cuh:41:9: note: c\nk.cu:3:1: d <kernel>:x "
                           "<kernel>:99999999999:1: e\nother.cl:6:1: f\n");
    free(m);
    m = clrun__map_kernel_lines(log, NULL, 0); /* no source: as it was */
    assert_string_equal(m, log);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(from_file_with_includes),
        cmocka_unit_test(from_string),
        cmocka_unit_test(embedded_set),
        cmocka_unit_test(build_failure_has_log),
        cmocka_unit_test(missing_files_and_includes),
        cmocka_unit_test(ptx_rewrite_text),
        cmocka_unit_test(ptx_rewrite_option),
        cmocka_unit_test(build_log_lines_mapped),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
