/* test_cache.c — the program binary cache: hits, corrupt and truncated entries, binaries the driver
 * refuses, CLRUN_NO_CACHE, an unwritable folder, several processes filling one folder at once. */
#include "helpers.h"

#include <fcntl.h>

#include <dirent.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <xxhash.h>

extern char **environ;

static char dir[4096];
static unsigned variant; /* makes each test's source unique, so no test sees another's entry */

static const char *source(char *buf, size_t size, unsigned v)
{
    snprintf(buf, size,
             "__kernel void twice(__global int *p, const uint n)\n"
             "{ size_t i = get_global_id(0); if (i < n) p[i] = 2 * p[i] + %u; }\n",
             v);
    return buf;
}

/* Build the source of variant v; check the kernel runs; return clrun_prog_from_cache. */
static int build_and_run(clrun_ctx *ctx, unsigned v)
{
    char src[512];
    clrun_prog *p = NULL;
    clrun_kernel *k = NULL;
    clrun_buf *b = NULL;
    int data[33];
    for (int i = 0; i < 33; i++) data[i] = i - 5;
    CHECK_OK(ctx, clrun_prog_source(ctx, source(src, sizeof src, v), "twice", NULL, &p));
    int cached = clrun_prog_from_cache(p);
    CHECK_OK(ctx, clrun_kernel_new(p, "twice", &k));
    CHECK_OK(ctx, clrun_buf_new(ctx, sizeof data, 0, &b));
    CHECK_OK(ctx, clrun_upload(b, 0, data, sizeof data));
    CHECK_OK(ctx, clrun_arg_buf(k, 0, b));
    CHECK_OK(ctx, clrun_arg_u32(k, 1, 33));
    size_t g = 33;
    CHECK_OK(ctx, clrun_launch(k, 1, &g, NULL));
    CHECK_OK(ctx, clrun_download(b, 0, data, sizeof data));
    for (int i = 0; i < 33; i++) assert_int_equal(data[i], 2 * (i - 5) + (int)v);
    clrun_buf_free(b);
    clrun_kernel_free(k);
    clrun_prog_free(p);
    return cached;
}

/* Count entries (and temporaries) in the cache folder; copy the first entry's path. */
static int entries(char *first, size_t size, int *temps)
{
    int n = 0;
    if (temps) *temps = 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l > 4 && strcmp(e->d_name + l - 4, ".bin") == 0) {
            if (n++ == 0 && first) snprintf(first, size, "%s/%s", dir, e->d_name);
        } else if (e->d_name[0] == '.' && l > 4 && strcmp(e->d_name + l - 4, ".tmp") == 0 && temps) { /* lib/io/save.c's temporaries */
            (*temps)++;
        }
    }
    closedir(d);
    return n;
}

static void clear_dir(void)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[8192];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    closedir(d);
}

static int setup(void **state)
{
    const char *base = getenv("CLRUN_CACHE_DIR");
    snprintf(dir, sizeof dir, "%s/test_cache.%ld", base ? base : "/tmp", (long)getpid());
    setenv("CLRUN_CACHE_DIR", dir, 1);
    unsetenv("CLRUN_NO_CACHE");
    variant = (unsigned)(test_seed() % 100000);
    clrun_ctx *ctx = NULL;
    if (clrun_open(&ctx, test_device()) != CLRUN_OK) return -1;
    *state = ctx;
    return 0;
}

static int teardown(void **state)
{
    clrun_close(*state);
    clear_dir();
    rmdir(dir);
    return 0;
}

static void miss_then_hit(void **state)
{
    clrun_ctx *ctx = *state;
    clear_dir();
    char cache[4096];
    assert_string_equal(clrun_cache_dir(cache, sizeof cache), dir);
    assert_int_equal(build_and_run(ctx, ++variant), 0);
    int temps;
    assert_int_equal(entries(NULL, 0, &temps), 1);
    assert_int_equal(temps, 0);
    assert_int_equal(build_and_run(ctx, variant), 1);
    /* other source: other entry; CLRUN_VERBOSE=1 says that the cache missed (stderr into a file) */
    char log[4200], text[4096] = "";
    snprintf(log, sizeof log, "%s.log", dir);
    fflush(stderr);
    int saved = dup(2), fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    setenv("CLRUN_VERBOSE", "1", 1);
    int cached = build_and_run(ctx, ++variant);
    unsetenv("CLRUN_VERBOSE");
    fflush(stderr);
    dup2(saved, 2);
    close(saved), close(fd);
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    text[fread(text, 1, sizeof text - 1, f)] = 0;
    fclose(f);
    unlink(log);
    assert_int_equal(cached, 0);
    if (!strstr(text, "clrun: cache miss")) fail_msg("CLRUN_VERBOSE=1 should say the cache missed; stderr: %s", text);
    assert_int_equal(entries(NULL, 0, NULL), 2);
}

/* The argument checks hold for a program loaded from the cache as for one built from source: the
 * entry keeps the kernels' argument info, which some drivers (Intel's CPU runtime) do not give for
 * programs made from binaries. */
static void argument_info_survives_the_cache(void **state)
{
    clrun_ctx *ctx = *state;
    clear_dir();
    char src[512];
    snprintf(src, sizeof src,
             "__kernel void scaled(__global float *out, const int n, __local float *tmp, const float x, const ushort4 v)\n"
             "{ tmp[0] = x + v.s0; if (get_global_id(0) < n) out[get_global_id(0)] = tmp[0]; } /* %u */\n",
             ++variant);
    for (int pass = 0; pass < 2; pass++) {
        clrun_prog *p = NULL;
        clrun_kernel *k = NULL;
        CHECK_OK(ctx, clrun_prog_source(ctx, src, "scaled.cl", NULL, &p));
        assert_int_equal(clrun_prog_from_cache(p), pass); /* built, then loaded */
        CHECK_OK(ctx, clrun_kernel_new(p, "scaled", &k));
        clrun_arg_info ai;
        CHECK_OK(ctx, clrun_kernel_arg_info(k, 1, &ai));
        assert_int_equal(ai.kind, CLRUN_ARG_VALUE);
        assert_string_equal(ai.name, "n");
        CHECK_OK(ctx, clrun_kernel_arg_info(k, 2, &ai));
        assert_int_equal(ai.kind, CLRUN_ARG_LOCAL);
        CHECK_FAIL(ctx, clrun_arg_f32(k, 1, 1.0f), CLRUN_ARG_MISMATCH, "not float");
        CHECK_FAIL(ctx, clrun_arg_i32(k, 3, 1), CLRUN_ARG_MISMATCH, "not int");
        CHECK_FAIL(ctx, clrun_arg_u32(k, 0, 1), CLRUN_ARG_MISMATCH, "__global");
        const uint16_t v[4] = {1, 2, 3, 4};
        CHECK_FAIL(ctx, clrun_arg_bytes(k, 4, v, 6), CLRUN_ARG_MISMATCH, "is 8 bytes");
        CHECK_OK(ctx, clrun_arg_bytes(k, 4, v, sizeof v));
        clrun_kernel_free(k);
        clrun_prog_free(p);
    }
}

static void rewrite_entry(const char *path, long truncate_to, int flip_payload_byte)
{
    char *data = NULL;
    size_t n = 0;
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    struct stat st;
    stat(path, &st);
    n = (size_t)st.st_size;
    data = malloc(n);
    assert_int_equal(fread(data, 1, n, f), n);
    fclose(f);
    if (truncate_to >= 0) n = (size_t)truncate_to;
    if (flip_payload_byte) data[n - 1] ^= 0x5A;
    f = fopen(path, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
    free(data);
}

static void corrupt_and_truncated_entries_are_rebuilt(void **state)
{
    clrun_ctx *ctx = *state;
    char path[8192];
    const long cuts[] = {0, 7, 39, 41, -2};
    for (size_t c = 0; c < sizeof cuts / sizeof *cuts; c++) {
        clear_dir();
        unsigned v = ++variant;
        assert_int_equal(build_and_run(ctx, v), 0);
        assert_int_equal(entries(path, sizeof path, NULL), 1);
        if (cuts[c] == -2) rewrite_entry(path, -1, 1); /* flipped payload byte: checksum mismatch */
        else rewrite_entry(path, cuts[c], 0);          /* truncated */
        assert_int_equal(build_and_run(ctx, v), 0);    /* a miss, rebuilt ... */
        assert_int_equal(build_and_run(ctx, v), 1);    /* ... and replaced by a whole entry */
    }
}

/* An entry whose framing checks out but whose payload the driver cannot load: clrun must fall
 * back to a source build and replace it. */
static void refused_binary_falls_back(void **state)
{
    clrun_ctx *ctx = *state;
    char path[8192];
    clear_dir();
    unsigned v = ++variant;
    assert_int_equal(build_and_run(ctx, v), 0);
    assert_int_equal(entries(path, sizeof path, NULL), 1);
    FILE *f = fopen(path, "rb");
    unsigned char head[40];
    assert_int_equal(fread(head, 1, 40, f), 40);
    fclose(f);
    unsigned char junk[300];
    uint64_t s = test_seed();
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)rng_next(&s);
    uint64_t len = sizeof junk, h = XXH3_64bits(junk, sizeof junk);
    for (int i = 0; i < 8; i++) head[24 + i] = (unsigned char)(len >> (8 * i)), head[32 + i] = (unsigned char)(h >> (8 * i));
    f = fopen(path, "wb");
    fwrite(head, 1, 40, f);
    fwrite(junk, 1, sizeof junk, f);
    fclose(f);
    assert_int_equal(build_and_run(ctx, v), 0);
    assert_int_equal(build_and_run(ctx, v), 1);
}

/* An entry whose framing checks out (its key, length and checksum) around another program's
 * binary, which the driver accepts: clrun must see that it is not this source's program (the key
 * kernel it carries) and rebuild, not run the other program. */
static void another_programs_binary_is_rebuilt(void **state)
{
    clrun_ctx *ctx = *state;
    char path[8192], first[8192];
    clear_dir();
    unsigned v1 = ++variant, v2 = ++variant;
    assert_int_equal(build_and_run(ctx, v1), 0);
    assert_int_equal(entries(first, sizeof first, NULL), 1);
    FILE *f = fopen(first, "rb");
    assert_non_null(f);
    static unsigned char other[1 << 22];
    size_t n = fread(other, 1, sizeof other, f);
    fclose(f);
    assert_true(n > 40 && n < sizeof other);
    clear_dir();
    assert_int_equal(build_and_run(ctx, v2), 0);
    assert_int_equal(entries(path, sizeof path, NULL), 1);
    f = fopen(path, "rb");
    unsigned char key[24];
    assert_int_equal(fread(key, 1, 24, f), 24);
    fclose(f);
    memcpy(other + 8, key + 8, 16); /* v1's binary under v2's key: valid framing */
    f = fopen(path, "wb");
    assert_int_equal(fwrite(other, 1, n, f), n);
    fclose(f);
    assert_int_equal(build_and_run(ctx, v2), 0); /* rebuilt (and it computes v2's results) */
    assert_int_equal(build_and_run(ctx, v2), 1);
}

/* Crash-safe loads: a load mark (ENTRY.loading) naming a process that has died means that loading
 * the entry killed it: the entry is dropped and rebuilt, and the mark removed. A mark naming a
 * running process (another loader) is left alone and the entry is used. */
static void entry_whose_load_killed_a_process_is_rebuilt(void **state)
{
    clrun_ctx *ctx = *state;
    char path[8192], mark[8300];
    clear_dir();
    unsigned v = ++variant;
    assert_int_equal(build_and_run(ctx, v), 0);
    assert_int_equal(entries(path, sizeof path, NULL), 1);
    assert_int_equal(build_and_run(ctx, v), 1);
    snprintf(mark, sizeof mark, "%s.loading", path);
    assert_int_equal(access(mark, F_OK), -1); /* a load leaves no mark */
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    assert_true(dead > 0);
    waitpid(dead, NULL, 0);
    FILE *f = fopen(mark, "w");
    assert_non_null(f);
    fprintf(f, "%ld\n", (long)dead);
    fclose(f);
    assert_int_equal(build_and_run(ctx, v), 0); /* dropped and built from source */
    assert_int_equal(access(mark, F_OK), -1);
    assert_int_equal(entries(NULL, 0, NULL), 1); /* stored again */
    assert_int_equal(build_and_run(ctx, v), 1);
    f = fopen(mark, "w"); /* a loader that is alive: this process */
    fprintf(f, "%ld\n", (long)getpid());
    fclose(f);
    assert_int_equal(build_and_run(ctx, v), 1);
    assert_int_equal(access(mark, F_OK), 0);
    unlink(mark);
}

/* What an adversary or an accident leaves at a mark's or an entry's name never hangs a load, never
 * writes through a planted link, and never turns every run into a rebuild. alarm(): a hang fails. */
static void planted_marks_and_entries(void **state)
{
    clrun_ctx *ctx = *state;
    char path[8192], mark[8300], tmp[8400], victim[8300];
    clear_dir();
    alarm(120);
    unsigned v = ++variant;
    assert_int_equal(build_and_run(ctx, v), 0);
    assert_int_equal(entries(path, sizeof path, NULL), 1);
    snprintf(mark, sizeof mark, "%s.loading", path);
    /* a FIFO at the mark: loaded without a mark, from the cache */
    assert_int_equal(mkfifo(mark, 0600), 0);
    assert_int_equal(build_and_run(ctx, v), 1);
    assert_int_equal(build_and_run(ctx, v), 1);
    unlink(mark);
    /* a folder at the mark: still a hit every run, not a rebuild */
    assert_int_equal(mkdir(mark, 0700), 0);
    assert_int_equal(build_and_run(ctx, v), 1);
    assert_int_equal(build_and_run(ctx, v), 1);
    rmdir(mark);
    /* a hard link at this process's temporary mark name: its target keeps its bytes */
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *f = fopen(victim, "w");
    assert_non_null(f);
    fputs("precious\n", f);
    fclose(f);
    snprintf(tmp, sizeof tmp, "%s.loading.%ld", path, (long)getpid());
    assert_int_equal(link(victim, tmp), 0);
    assert_int_equal(build_and_run(ctx, v), 1);
    char text[64] = "";
    f = fopen(victim, "r");
    assert_non_null(f);
    text[fread(text, 1, sizeof text - 1, f)] = 0;
    fclose(f);
    assert_string_equal(text, "precious\n");
    assert_int_equal(access(mark, F_OK), -1); /* the load's own mark came and went */
    unlink(tmp), unlink(victim);
    /* a FIFO at the entry itself: a miss, built from source, and the FIFO left alone (never written) */
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(build_and_run(ctx, v), 0);
    assert_int_equal(build_and_run(ctx, v), 0);
    struct stat sb;
    assert_int_equal(lstat(path, &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    unlink(path);
    alarm(0);
}

static void no_cache_and_unwritable_folder(void **state)
{
    clrun_ctx *ctx = *state;
    clear_dir();
    char cache[64];
    setenv("CLRUN_NO_CACHE", "1", 1);
    assert_null(clrun_cache_dir(cache, sizeof cache));
    assert_int_equal(build_and_run(ctx, ++variant), 0);
    assert_int_equal(build_and_run(ctx, variant), 0);
    assert_int_equal(entries(NULL, 0, NULL), 0);
    unsetenv("CLRUN_NO_CACHE");
    /* a cache folder that cannot be created (its parent is a file) only costs the caching; this
     * holds for root too, unlike a read-only folder */
    char file[4200], sub[4300];
    snprintf(file, sizeof file, "%s.file", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(sub, sizeof sub, "%s/cache", file);
    setenv("CLRUN_CACHE_DIR", sub, 1);
    assert_int_equal(build_and_run(ctx, ++variant), 0);
    assert_int_equal(build_and_run(ctx, variant), 0);
    setenv("CLRUN_CACHE_DIR", dir, 1);
    unlink(file);
}

/* Child mode: open a context and build the shared source; exit 0 after a source build, 10 after a
 * cache hit, anything else on failure. */
static int child(unsigned v)
{
    clrun_ctx *ctx = NULL;
    char src[512];
    clrun_prog *p = NULL;
    if (clrun_open(&ctx, test_device()) != CLRUN_OK) return 3;
    int rc = clrun_prog_source(ctx, source(src, sizeof src, v), "twice", NULL, &p) == CLRUN_OK ? 0 : 1;
    if (rc == 0 && clrun_prog_from_cache(p)) rc = 10;
    if (rc == 1) fprintf(stderr, "child: %s\n", clrun_last_error(ctx));
    clrun_prog_free(p);
    clrun_close(ctx);
    return rc;
}

static void processes_share_one_folder(void **state)
{
    clrun_ctx *ctx = *state;
    enum { P = 6 };
    clear_dir();
    unsigned v = ++variant;
    char arg[32];
    snprintf(arg, sizeof arg, "%u", v);
    pid_t pids[P];
    int count[2];
    for (int round = 0; round < 2; round++) { /* round 0: a race to store; round 1: all hit */
        for (int i = 0; i < P; i++) {
            /* each child its own PoCL kernel cache: PoCL 3.1's is not safe for processes building one
             * program at once (one build failed, "failed to build the program" with no log, in 150
             * such builds, and one process crashed in 240; none in 240 with a PoCL cache each).
             * clrun's cache, the one under test, stays shared. */
            char *argv[] = {"test_cache", "--child", arg, NULL}, pocl[4400], base[4096] = "";
            const int had = getenv("POCL_CACHE_DIR") != NULL;
            if (had) snprintf(base, sizeof base, "%s", getenv("POCL_CACHE_DIR"));
            snprintf(pocl, sizeof pocl, "%s/test_cache.%ld.child%d", had && *base ? base : "/tmp", (long)getpid(), i);
            setenv("POCL_CACHE_DIR", pocl, 1);
            assert_int_equal(posix_spawn(&pids[i], "/proc/self/exe", NULL, NULL, argv, environ), 0);
            if (had) setenv("POCL_CACHE_DIR", base, 1);
            else unsetenv("POCL_CACHE_DIR");
        }
        for (int i = 0; i < P; i++) {
            int status = 0;
            assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
            assert_true(WIFEXITED(status));
            if (round == 0) assert_true(WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 10);
            else assert_int_equal(WEXITSTATUS(status), 10);
        }
        int temps;
        count[round] = entries(NULL, 0, &temps);
        assert_int_equal(temps, 0); /* no temporary file is left behind */
    }
    assert_int_equal(count[0], count[1]);
    assert_true(count[0] >= 1);
    assert_int_equal(build_and_run(ctx, v), 1);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--child") == 0) return child((unsigned)strtoul(argv[2], NULL, 10));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(miss_then_hit),
        cmocka_unit_test(argument_info_survives_the_cache),
        cmocka_unit_test(corrupt_and_truncated_entries_are_rebuilt),
        cmocka_unit_test(refused_binary_falls_back),
        cmocka_unit_test(another_programs_binary_is_rebuilt),
        cmocka_unit_test(entry_whose_load_killed_a_process_is_rebuilt),
        cmocka_unit_test(planted_marks_and_entries),
        cmocka_unit_test(no_cache_and_unwritable_folder),
        cmocka_unit_test(processes_share_one_folder),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
