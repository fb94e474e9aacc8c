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
    unsetenv("CLRUN_GROUP_WEIGHTS");
    CHECK_OK(NULL, clrun__setting_uints(NULL, CLRUN__SET_GROUP_WEIGHTS, v, &n));
    assert_int_equal(n, 0);
    setenv("CLRUN_GROUP_WEIGHTS", "64,128,16,8,8", 1);
    CHECK_OK(NULL, clrun__setting_uints(NULL, CLRUN__SET_GROUP_WEIGHTS, v, &n));
    assert_int_equal(n, 5);
    assert_int_equal(v[1], 128);
    setenv("CLRUN_GROUP_WEIGHTS", "064,128,16,8,8,1,2", 1); /* decimal, never octal */
    CHECK_OK(NULL, clrun__setting_uints(NULL, CLRUN__SET_GROUP_WEIGHTS, v, &n));
    assert_int_equal(n, 7);
    assert_int_equal(v[0], 64);
    assert_int_equal(v[6], 2);
    static const char *const bad[] = {"1,2,3,4,5,6,7,8,9", "64,,16,8,8",    "64,128,16,8,8,",      "-64,128,16,8,8", "64, 128,16,8,8",
                                      "0x40,128,16,8,8",   "64x128x16x8x8", "99999999999,1,1,1,1", "a,b,c,d,e",      ","};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("CLRUN_GROUP_WEIGHTS", bad[i], 1);
        CHECK_FAIL(NULL, clrun__setting_uints(NULL, CLRUN__SET_GROUP_WEIGHTS, v, &n), CLRUN_INVALID_ARG, "CLRUN_GROUP_WEIGHTS");
        assert_non_null(strstr(clrun_last_error(NULL), "W,W,..."));
        assert_int_equal(n, 0);
    }
    unsetenv("CLRUN_GROUP_WEIGHTS");
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
                                          {"CLRUN_GROUP_WEIGHTS", "8,x"},
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
    clrun_gemm_desc d = {0};
    d.m = d.n = d.k = 4, d.lda = d.ldb = d.ldc = 4, d.a = d.b = d.c = x, d.alpha = 1, d.backend = CLRUN_GEMM_CPU_KERNEL;
    /* $CLRUN_GEMM_TILES: a row's tiles, positional or named; anything it cannot use refused by name */
    static const char *const tiles_bad[][3] = {
        {"cpu-kernel:5,6", "cpu-kernel", "VW is 4, 8 or 16"},                /* a set the kernel cannot run */
        {"gpu-kernel:64,64,16,3,4,1,1", "gpu-kernel", "cannot run"},         /* WM does not divide TM */
        {"gpu-kernel:64,64,16,4", "gpu-kernel", "at least 5 values"},        /* too few */
        {"gpu-kernel:64,64,16,4,4,1,1,9", "gpu-kernel", "TM,TN,TK,WM,WN"},   /* too many */
        {"gpu-kernel:TM=64,XX=4", "gpu-kernel", "NAME=V"},                   /* no such name */
        {"gpu-kernel:TM=", "gpu-kernel", "plain decimals"},                  /* no value */
        {"gpu-kernel:64,-64,16,4,4", "gpu-kernel", "plain decimals"},        /* a sign */
        {"gpu-kernel 64,64,16,4,4", "gpu-kernel", "ROW:SET"},                /* no colon */
        {"clblast:1,2", "clblast", "no backend with tiles"},                 /* a row without tiles */
        {"warp-drive:1,2", "warp-drive", "no backend with tiles"},           /* no row */
        {"cpu-kernel:8,6;nonsense:1", "nonsense", "no backend with tiles"}}; /* every item is checked */
    for (size_t i = 0; i < sizeof tiles_bad / sizeof *tiles_bad; i++) {
        setenv("CLRUN_GEMM_TILES", tiles_bad[i][0], 1);
        d.backend = strncmp(tiles_bad[i][0], "gpu", 3) ? CLRUN_GEMM_CPU_KERNEL : CLRUN_GEMM_GPU_KERNEL;
        CHECK_FAIL(ctx, clrun_gemm(ctx, &d), CLRUN_INVALID_ARG, "CLRUN_GEMM_TILES=");
        assert_non_null(strstr(clrun_last_error(ctx), tiles_bad[i][1]));
        assert_non_null(strstr(clrun_last_error(ctx), tiles_bad[i][2]));
    }
    /* well-formed sets run, positional (VEC and DB left out: 0) or named over the built-in ones,
     * several rows at once */
    static const char *const tiles_ok[] = {"gpu-kernel:32,32,8,4,4", "gpu-kernel:TM=32,tn=32,WM=4,WN=4,DB=0",
                                           "cpu-kernel:4,3;gpu-kernel:32,32,8,4,4,1,2", "cpu-kernel:RM=1"};
    for (size_t i = 0; i < sizeof tiles_ok / sizeof *tiles_ok; i++) {
        setenv("CLRUN_GEMM_TILES", tiles_ok[i], 1);
        for (int b = 0; b < 2; b++) {
            d.backend = b ? CLRUN_GEMM_GPU_KERNEL : CLRUN_GEMM_CPU_KERNEL;
            CHECK_OK(ctx, clrun_gemm(ctx, &d));
        }
    }
    unsetenv("CLRUN_GEMM_TILES");
    /* the variables it replaced are refused with the new spelling, not ignored */
    static const char *const retired[][2] = {{"CLRUN_GEMM_PARAMS", "CLRUN_GEMM_TILES=gpu-kernel:"},
                                             {"CLRUN_GEMM_CPU_PARAMS", "CLRUN_GEMM_TILES=cpu-kernel:"},
                                             {"CLRUN_GEMM_MMA_PARAMS", "CLRUN_GEMM_TILES=mma.sync:"},
                                             {"CLRUN_GEMM_WGMMA_PARAMS", "CLRUN_GEMM_TILES=wgmma:"}};
    for (int i = 0; i < 4; i++) {
        clrun_ctx *c = (clrun_ctx *)1;
        setenv(retired[i][0], "64,64,16,4,4", 1);
        CHECK_FAIL(NULL, clrun_open(&c, test_device()), CLRUN_INVALID_ARG, retired[i][1]);
        assert_non_null(strstr(clrun_last_error(NULL), retired[i][0]));
        assert_null(c);
        unsetenv(retired[i][0]);
    }
    d.backend = CLRUN_GEMM_GPU_KERNEL;
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
