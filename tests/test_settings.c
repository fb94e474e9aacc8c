/* test_settings.c — the CLRUN_* variables (lib/settings.c): one policy for every kind (empty is
 * unset, a malformed value is refused naming the variable and its form), clrun_open refusing a
 * malformed one up front, docs/CLI.md's table equal to the module's, and no getenv of a CLRUN_*
 * variable anywhere in lib/ but the settings module. Links the static library (internals). */
#include "helpers.h"
#include "settings.h"

#include <dirent.h>
#include <sys/stat.h>

/* "| `CLRUN_X` | form | effect |", as docs/CLI.md writes the row */
static void row_of(clrun__setting id, char *buf, size_t size)
{
    snprintf(buf, size, "| `%s` | %s | %s |", clrun__setting_name(id), clrun__setting_form(id), clrun__setting_effect(id));
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    return s;
}

/* Every row of docs/CLI.md's table is a row of the module's, and every variable has its row. */
static void readme_table(void **state)
{
    (void)state;
    char *readme = slurp(SOURCE_DIR "/docs/CLI.md");
    int seen[CLRUN__SET_COUNT] = {0}, rows = 0;
    for (char *line = strtok(readme, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "| `CLRUN_", 9) != 0) continue;
        rows++;
        int found = -1;
        char want[1024];
        for (int i = 0; i < CLRUN__SET_COUNT; i++) {
            row_of((clrun__setting)i, want, sizeof want);
            if (strcmp(line, want) == 0) found = i;
        }
        if (found < 0) fail_msg("docs/CLI.md row matches no setting of lib/settings.h (or its text differs):\n%s", line);
        seen[found]++;
    }
    for (int i = 0; i < CLRUN__SET_COUNT; i++) {
        char want[1024];
        row_of((clrun__setting)i, want, sizeof want);
        if (seen[i] != 1) fail_msg("docs/CLI.md must list %s once, as\n%s", clrun__setting_name((clrun__setting)i), want);
    }
    assert_int_equal(rows, CLRUN__SET_COUNT);
    free(readme);
}

static void flags(void **state)
{
    (void)state;
    int on = 7;
    unsetenv("CLRUN_NO_TENSOR");
    CHECK_OK(NULL, clrun__setting_flag(NULL, CLRUN__SET_NO_TENSOR, &on));
    assert_int_equal(on, 0);
    static const char *const yes[] = {"1", "yes", "TRUE", "On"}, *const no[] = {"0", "no", "false", "OFF", ""};
    for (int i = 0; i < 4; i++) {
        setenv("CLRUN_NO_TENSOR", yes[i], 1);
        CHECK_OK(NULL, clrun__setting_flag(NULL, CLRUN__SET_NO_TENSOR, &on));
        assert_int_equal(on, 1);
        assert_int_equal(clrun__setting_on(CLRUN__SET_NO_TENSOR), 1);
    }
    for (int i = 0; i < 5; i++) {
        setenv("CLRUN_NO_TENSOR", no[i], 1);
        CHECK_OK(NULL, clrun__setting_flag(NULL, CLRUN__SET_NO_TENSOR, &on));
        assert_int_equal(on, 0);
        assert_int_equal(clrun__setting_on(CLRUN__SET_NO_TENSOR), 0);
    }
    static const char *const bad[] = {"2", "y", " 1", "1 ", "enable"};
    for (int i = 0; i < 5; i++) {
        setenv("CLRUN_NO_TENSOR", bad[i], 1);
        CHECK_FAIL(NULL, clrun__setting_flag(NULL, CLRUN__SET_NO_TENSOR, &on), CLRUN_INVALID_ARG, "CLRUN_NO_TENSOR");
        assert_non_null(strstr(clrun_last_error(NULL), "expected 1 or 0"));
        assert_int_equal(clrun__setting_on(CLRUN__SET_NO_TENSOR), 0); /* calls that cannot fail: unset */
    }
    unsetenv("CLRUN_NO_TENSOR");
}

static void choices(void **state)
{
    (void)state;
    int c = 7;
    unsetenv("CLRUN_CANNY_SHAPE");
    CHECK_OK(NULL, clrun__setting_choice(NULL, CLRUN__SET_CANNY_SHAPE, &c));
    assert_int_equal(c, -1);
    setenv("CLRUN_CANNY_SHAPE", "", 1); /* empty is unset, for every variable */
    CHECK_OK(NULL, clrun__setting_choice(NULL, CLRUN__SET_CANNY_SHAPE, &c));
    assert_int_equal(c, -1);
    setenv("CLRUN_CANNY_SHAPE", "cpu", 1);
    CHECK_OK(NULL, clrun__setting_choice(NULL, CLRUN__SET_CANNY_SHAPE, &c));
    assert_int_equal(c, 1);
    setenv("CLRUN_STAGING", "force", 1);
    CHECK_OK(NULL, clrun__setting_choice(NULL, CLRUN__SET_STAGING, &c));
    assert_int_equal(c, 2);
    static const char *const bad[] = {"CPU", "cp", "cpux", "gpu,cpu", "or"};
    for (int i = 0; i < 5; i++) {
        setenv("CLRUN_CANNY_SHAPE", bad[i], 1);
        CHECK_FAIL(NULL, clrun__setting_choice(NULL, CLRUN__SET_CANNY_SHAPE, &c), CLRUN_INVALID_ARG, "CLRUN_CANNY_SHAPE");
        assert_non_null(strstr(clrun_last_error(NULL), "expected gpu or cpu"));
    }
    unsetenv("CLRUN_CANNY_SHAPE");
    unsetenv("CLRUN_STAGING");
}

static void uint_lists(void **state)
{
    (void)state;
    unsigned v[CLRUN__SETTING_MAX_UINTS], n = 9;
    unsetenv("CLRUN_GEMM_PARAMS");
    CHECK_OK(NULL, clrun__setting_uints(NULL, CLRUN__SET_GEMM_PARAMS, v, &n));
    assert_int_equal(n, 0);
    setenv("CLRUN_GEMM_PARAMS", "64,128,16,8,8", 1);
    CHECK_OK(NULL, clrun__setting_uints(NULL, CLRUN__SET_GEMM_PARAMS, v, &n));
    assert_int_equal(n, 5);
    assert_int_equal(v[1], 128);
    setenv("CLRUN_GEMM_PARAMS", "064,128,16,8,8,1,2", 1); /* decimal, never octal */
    CHECK_OK(NULL, clrun__setting_uints(NULL, CLRUN__SET_GEMM_PARAMS, v, &n));
    assert_int_equal(n, 7);
    assert_int_equal(v[0], 64);
    assert_int_equal(v[6], 2);
    static const char *const bad[] = {"64,128,16,8",    "64,128,16,8,8,1,2,3", "64,,16,8,8",    "64,128,16,8,8,",      "-64,128,16,8,8",
                                      "64, 128,16,8,8", "0x40,128,16,8,8",     "64x128x16x8x8", "99999999999,1,1,1,1", "a,b,c,d,e"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("CLRUN_GEMM_PARAMS", bad[i], 1);
        CHECK_FAIL(NULL, clrun__setting_uints(NULL, CLRUN__SET_GEMM_PARAMS, v, &n), CLRUN_INVALID_ARG, "CLRUN_GEMM_PARAMS");
        assert_non_null(strstr(clrun_last_error(NULL), "TM,TN,TK,WM,WN[,VEC[,DB]]"));
        assert_int_equal(n, 0);
    }
    unsetenv("CLRUN_GEMM_PARAMS");
    setenv("CLRUN_CANNY_TILE", "16x16x2", 1); /* the x-separated form */
    CHECK_OK(NULL, clrun__setting_uints(NULL, CLRUN__SET_CANNY_TILE, v, &n));
    assert_int_equal(n, 3);
    assert_int_equal(v[2], 2);
    setenv("CLRUN_CANNY_TILE", "16,16,2", 1);
    CHECK_FAIL(NULL, clrun__setting_uints(NULL, CLRUN__SET_CANNY_TILE, v, &n), CLRUN_INVALID_ARG, "BXxBYxPY");
    unsetenv("CLRUN_CANNY_TILE");
    setenv("CLRUN_REDUCE_GROUPS", "8abc", 1); /* atoi would have taken 8 */
    CHECK_FAIL(NULL, clrun__setting_uints(NULL, CLRUN__SET_REDUCE_GROUPS, v, &n), CLRUN_INVALID_ARG, "CLRUN_REDUCE_GROUPS");
    unsetenv("CLRUN_REDUCE_GROUPS");
}

/* clrun_open checks every variable first; the ops refuse values of the right form they cannot use. */
static void open_and_ops_refuse(void **state)
{
    (void)state;
    static const char *const vars[][2] = {{"CLRUN_NO_CACHE", "maybe"},
                                          {"CLRUN_GEMM_CPU_PARAMS", "8"},
                                          {"CLRUN_REDUCE_SHAPE", "fpga"},
                                          {"CLRUN_PROFILE", "2"},
                                          {"CLRUN_CANNY_TILE", "32x8"}};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        clrun_ctx *ctx = (clrun_ctx *)1;
        setenv(vars[i][0], vars[i][1], 1);
        CHECK_FAIL(NULL, clrun_open(&ctx, test_device()), CLRUN_INVALID_ARG, vars[i][0]);
        assert_null(ctx);
        unsetenv(vars[i][0]);
    }
    clrun_ctx *ctx = NULL;
    CHECK_OK(NULL, clrun_open(&ctx, test_device()));
    clrun_buf *x = NULL;
    double r;
    CHECK_OK(ctx, clrun_buf_new(ctx, 4096, 0, &x));
    setenv("CLRUN_REDUCE_GROUPS", "0", 1); /* well formed, out of range */
    setenv("CLRUN_REDUCE_SHAPE", "gpu", 1);
    CHECK_FAIL(ctx, clrun_sum(ctx, CLRUN_F32, x, 0, 16, &r), CLRUN_INVALID_ARG, "CLRUN_REDUCE_GROUPS=0");
    unsetenv("CLRUN_REDUCE_GROUPS");
    unsetenv("CLRUN_REDUCE_SHAPE");
    setenv("CLRUN_GEMM_CPU_PARAMS", "5,6", 1);
    clrun_gemm_desc d = {0};
    d.m = d.n = d.k = 4, d.lda = d.ldb = d.ldc = 4, d.a = d.b = d.c = x, d.alpha = 1, d.backend = CLRUN_GEMM_CPU_KERNEL;
    CHECK_FAIL(ctx, clrun_gemm(ctx, &d), CLRUN_INVALID_ARG, "CLRUN_GEMM_CPU_PARAMS=5,6");
    unsetenv("CLRUN_GEMM_CPU_PARAMS");
    setenv("CLRUN_GEMM_PARAMS", "64,64,16,3,4,1,1", 1); /* WM does not divide TM */
    d.backend = CLRUN_GEMM_GPU_KERNEL;
    CHECK_FAIL(ctx, clrun_gemm(ctx, &d), CLRUN_INVALID_ARG, "CLRUN_GEMM_PARAMS=64,64,16,3,4,1,1");
    unsetenv("CLRUN_GEMM_PARAMS");
    CHECK_OK(ctx, clrun_gemm(ctx, &d));
    CHECK_OK(ctx, clrun_finish(ctx));
    clrun_buf_free(x);
    clrun_close(ctx);
}

/* Walk lib/: no file but settings.c calls getenv on a CLRUN_ variable (or at all, but for the
 * loader's OCL_ICD_VENDORS and the cache's XDG_CACHE_HOME and HOME, which are not clrun's). */
static void scan(const char *dir, int *bad)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[4096];
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(path, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode)) {
            scan(path, bad);
            continue;
        }
        size_t n = strlen(e->d_name);
        if (n < 2 || (strcmp(e->d_name + n - 2, ".c") && strcmp(e->d_name + n - 2, ".h")) || strcmp(e->d_name, "settings.c") == 0) continue;
        /* an op folder's tests, CLI verbs and Oclgrind families are not the library */
        if (strncmp(e->d_name, "test_", 5) == 0 || strcmp(e->d_name, "cli.c") == 0 || strcmp(e->d_name, "oclgrind.c") == 0) continue;
        char *text = slurp(path);
        for (char *p = strstr(text, "getenv("); p; p = strstr(p + 1, "getenv(")) {
            if (strncmp(p, "getenv(\"OCL_ICD_VENDORS\")", 25) == 0 || strncmp(p, "getenv(\"XDG_CACHE_HOME\")", 24) == 0 ||
                strncmp(p, "getenv(\"HOME\")", 14) == 0)
                continue;
            fprintf(stderr, "%s: getenv outside lib/settings.c: %.40s\n", path, p);
            (*bad)++;
        }
        free(text);
    }
    closedir(d);
}

static void one_home(void **state)
{
    (void)state;
    int bad = 0;
    scan(SOURCE_DIR "/lib", &bad);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(readme_table),        cmocka_unit_test(flags),    cmocka_unit_test(choices), cmocka_unit_test(uint_lists),
        cmocka_unit_test(open_and_ops_refuse), cmocka_unit_test(one_home),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
