/* test_cli.c — end-to-end tests of the clrun binary: every subcommand, every argument form of
 * `clrun run`, .sim files, and bad input of every kind, each with its exit code and message. */
#include "helpers.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

extern char **environ;

static const char *clrun_bin;
static char tmp[4096];
static char out_text[1 << 16], err_text[1 << 16];

#define KDIR TEST_DATA_DIR "/kernels"
#define SIMDIR TEST_DATA_DIR "/sim"

static void slurp(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, size - 1, f) : 0;
    buf[n] = 0;
    if (f) fclose(f);
}

static int allow_signal; /* cli(): a death by signal N returns 128 + N instead of failing */

/* Run clrun with a NULL-terminated argument list; returns its exit code; output in out/err_text. */
static int cli(const char *first, ...)
{
    char *argv[256];
    int n = 0;
    argv[n++] = (char *)clrun_bin;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && n < 255; a = va_arg(ap, const char *)) argv[n++] = (char *)a;
    va_end(ap);
    argv[n] = NULL;
    char outp[4200], errp[4200];
    snprintf(outp, sizeof outp, "%s/stdout", tmp);
    snprintf(errp, sizeof errp, "%s/stderr", tmp);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, clrun_bin, &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    slurp(outp, out_text, sizeof out_text);
    slurp(errp, err_text, sizeof err_text);
    if (!WIFEXITED(status) && allow_signal) return 128 + WTERMSIG(status);
    if (!WIFEXITED(status)) fail_msg("clrun %s ... died (signal %d); stderr: %s", first, WTERMSIG(status), err_text);
    return WEXITSTATUS(status);
}

#define EXPECT(code, needle, ...)                                                                                     \
    do {                                                                                                              \
        const char *nd_ = (needle);                                                                                   \
        int rc_ = cli(__VA_ARGS__, NULL);                                                                             \
        if (rc_ != (code)) fail_msg("exit %d, expected %d\nstdout: %s\nstderr: %s", rc_, (code), out_text, err_text); \
        if (nd_ && !strstr(out_text, nd_) && !strstr(err_text, nd_))                                                  \
            fail_msg("output lacks \"%s\"\nstdout: %s\nstderr: %s", nd_, out_text, err_text);                         \
    } while (0)

static const char *path(const char *name)
{
    static char bufs[8][4200];
    static int i;
    char *b = bufs[i++ % 8];
    snprintf(b, 4200, "%s/%s", tmp, name);
    return b;
}

static void write_bytes(const char *name, const void *data, size_t n)
{
    FILE *f = fopen(path(name), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

/* An .npy image with a given header text and data length (the header is padded as NumPy does). */
static void write_npy(const char *name, int major, const char *dict, size_t data_bytes, int fix_len)
{
    unsigned char buf[4096];
    size_t hl = strlen(dict) + 1, start = major == 1 ? 10 : 12;
    size_t pad = (64 - (start + hl) % 64) % 64;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    size_t total = hl + pad, stored = fix_len ? total : 0xFFFF; /* 0: a header length past the end */
    buf[8] = (unsigned char)(stored & 0xFF);
    buf[9] = (unsigned char)(stored >> 8);
    if (major != 1) buf[10] = buf[11] = 0;
    memcpy(buf + start, dict, hl - 1);
    memset(buf + start + hl - 1, ' ', pad);
    buf[start + total - 1] = '\n';
    for (size_t i = 0; i < data_bytes; i++) buf[start + total + i] = (unsigned char)(i * 7);
    write_bytes(name, buf, start + total + data_bytes);
}

static int setup(void **state)
{
    (void)state;
    clrun_bin = getenv("CLRUN_BIN");
    if (!clrun_bin) return -1;
    snprintf(tmp, sizeof tmp, "%s/test_cli.%ld", getenv("CLRUN_CACHE_DIR") ? getenv("CLRUN_CACHE_DIR") : "/tmp", (long)getpid());
    mkdir(getenv("CLRUN_CACHE_DIR") ? getenv("CLRUN_CACHE_DIR") : "/tmp", 0755);
    return mkdir(tmp, 0755);
}

static int teardown(void **state)
{
    (void)state;
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    return system(cmd) == 0 ? 0 : -1;
}

/* What the help texts list exists, and what exists is listed: every command of `clrun --help` has
 * its own --help; the benchmarks `clrun bench --help` describes are exactly the ones its dispatcher
 * knows (named when it refuses an unknown one), and the top-level list names them all; every exit
 * code of cli.h is in `clrun --help`. */
static void help_lists_what_exists(void **state)
{
    (void)state;
    EXPECT(0, "commands:", "--help");
    char top[sizeof out_text];
    snprintf(top, sizeof top, "%s", out_text);
    const char *p = strstr(top, "commands:\n");
    assert_non_null(p);
    int ncmd = 0;
    for (p = strchr(p, '\n') + 1; *p == ' ' && p[1] == ' '; p = strchr(p, '\n') + 1) {
        char name[32], want[64];
        assert_int_equal(sscanf(p, " %31s", name), 1);
        snprintf(want, sizeof want, "usage: clrun %s", name);
        EXPECT(0, want, name, "--help");
        ncmd++;
    }
    assert_true(ncmd >= 7);
    for (int code = 0; code <= 6; code++) {
        char c[16];
        snprintf(c, sizeof c, "%d ", code);
        if (!strstr(strstr(top, "Exit codes:"), c)) fail_msg("clrun --help lacks exit code %d:\n%s", code, top);
    }
    /* the benchmarks: the help's list against the dispatcher's */
    EXPECT(2, "there are: ", "bench", "no-such-benchmark");
    char known[1024];
    snprintf(known, sizeof known, "%s", strstr(err_text, "there are: ") + 11);
    known[strcspn(known, "\n")] = 0;
    EXPECT(0, "Benchmarks", "bench", "--help");
    int nb = 0;
    for (const char *q = strstr(out_text, "Benchmarks"); (q = strchr(q, '\n')) && q[1] == ' '; q++) {
        char name[32];
        if (q[1] == ' ' && q[2] == ' ' && q[3] != ' ' && sscanf(q + 1, " %31s", name) == 1) {
            char with_sep[40];
            snprintf(with_sep, sizeof with_sep, "%s,", name);
            char list[1100];
            snprintf(list, sizeof list, "%s,", known);
            if (!strstr(list, with_sep))
                fail_msg("clrun bench --help describes '%s', which the dispatcher does not know (%s)", name, known);
            if (!strstr(top, name)) fail_msg("clrun --help does not name the benchmark '%s'", name);
            nb++;
        }
    }
    int nk = 1;
    for (const char *k = known; *k; k++) nk += *k == ',';
    if (nb != nk) fail_msg("clrun bench --help describes %d benchmarks; the dispatcher knows %d (%s)", nb, nk, known);
    /* the man page and the bash completion name every command, benchmark and op */
    static char man[32768], comp[8192];
    slurp(SOURCE_DIR "/docs/clrun.1", man, sizeof man);
    slurp(SOURCE_DIR "/tools/completion/clrun.bash", comp, sizeof comp);
    EXPECT(0, "gemm", "op", "--help");
    char words[4096] = "";
    for (p = strstr(top, "commands:\n"), p = strchr(p, '\n') + 1; *p == ' ' && p[1] == ' '; p = strchr(p, '\n') + 1) {
        char name[32];
        sscanf(p, " %31s", name);
        snprintf(words + strlen(words), sizeof words - strlen(words), "%s ", name);
    }
    for (char *k = known; *k; k++)
        if (*k == ',') *k = ' ';
    snprintf(words + strlen(words), sizeof words - strlen(words), "%s ", known);
    char verbs[2048] = "";
    for (const char *q = out_text; (q = strchr(q, '\n')); q++) { /* op --help: "  NAME     what it does" */
        char name[32];
        if (q[1] == ' ' && q[2] == ' ' && q[3] >= 'a' && q[3] <= 'z' && sscanf(q + 1, " %31s", name) == 1 && !strchr(name, '-'))
            snprintf(verbs + strlen(verbs), sizeof verbs - strlen(verbs), "%s\n", name);
    }
    /* the completion asks the command for the op verbs (clrun op --verbs): the same list */
    EXPECT(0, "gemm\n", "op", "--verbs");
    assert_string_equal(out_text, verbs);
    if (!strstr(comp, "op --verbs")) fail_msg("tools/completion/clrun.bash does not ask clrun op --verbs");
    char *save = NULL;
    for (char *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        char pat[48];
        snprintf(pat, sizeof pat, " %s", w);
        if (!strstr(comp, pat) && !strstr(comp, w)) fail_msg("tools/completion/clrun.bash does not complete '%s'", w);
        if (!strstr(man, w)) fail_msg("docs/clrun.1 does not name '%s'", w);
    }
    for (char *w = strtok_r(verbs, "\n", &save); w; w = strtok_r(NULL, "\n", &save))
        if (!strstr(man, w)) fail_msg("docs/clrun.1 does not name the op '%s'", w);
}

static void top_level_and_help(void **state)
{
    (void)state;
    EXPECT(0, CLRUN_VERSION_STRING, "--version");
    EXPECT(0, "commands:", "--help");
    EXPECT(2, "usage:", NULL);
    EXPECT(2, "unknown command 'frobnicate'", "frobnicate");
    const char *subs[] = {"devices", "info", "run", "op", "bench", "tune", "demo"};
    for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
        EXPECT(0, "usage: clrun", subs[i], "--help");
        EXPECT(2, "unknown option", subs[i], "--no-such-option");
    }
}

static void devices_and_info(void **state)
{
    (void)state;
    EXPECT(0, "pthread", "devices");
    assert_non_null(strstr(out_text, getenv("CLRUN_DEVICE") ? "* default device ($CLRUN_DEVICE" : "* default device (ranking"));
    unsigned n = 0;
    CHECK_OK(NULL, clrun_device_count(&n));
    for (unsigned i = 0; i < n; i++) { /* every device of every implementation, by its selection string */
        clrun_device_info in;
        char spec[32];
        CHECK_OK(NULL, clrun_device_get(i, &in));
        snprintf(spec, sizeof spec, " %u:%u ", in.platform_index, in.device_index);
        assert_non_null(strstr(out_text, spec));
    }
    EXPECT(0, "\"devices\": [", "devices", "--json");
    assert_non_null(strstr(out_text, "\"default\": true"));
    /* the device the rest of the tests run on ($CLRUN_DEVICE of a test setup: intel, llvmpipe) is
     * put back as found */
    char saved[256] = "";
    const int had = getenv("CLRUN_DEVICE") != NULL;
    if (had) snprintf(saved, sizeof saved, "%s", getenv("CLRUN_DEVICE"));
    setenv("CLRUN_DEVICE", "pocl:1", 1);
    EXPECT(0, "$CLRUN_DEVICE", "devices");
    setenv("CLRUN_DEVICE", "nosuchthing", 1);
    EXPECT(3, "matches no device", "devices");
    if (had) setenv("CLRUN_DEVICE", saved, 1);
    else unsetenv("CLRUN_DEVICE");
    EXPECT(0, "preferred multiple", "info", "-d", "pocl:1");
    clrun_device_info p1;
    unsigned p1i = 0;
    CHECK_OK(NULL, clrun_device_select("pocl:1", &p1i, NULL));
    CHECK_OK(NULL, clrun_device_get(p1i, &p1));
    char line[64];
    snprintf(line, sizeof line, "device            %u:%u", p1.platform_index, p1.device_index);
    assert_non_null(strstr(out_text, line));
    EXPECT(0, "\"compute_units\"", "info", "--json");
    EXPECT(3, "Devices:", "info", "-d", "nosuch:7");
    EXPECT(2, "needs a value", "info", "-d");
    EXPECT(2, "unexpected argument", "devices", "extra");
}

static void demo_and_bench(void **state)
{
    (void)state;
    EXPECT(0, "matches the CPU", "demo", "--edges", path("demo-edges.png"));
    assert_non_null(strstr(out_text, "matmul     C = A·B, 512×512 f32: matches fp64"));
    assert_non_null(strstr(out_text, "canny      edges of a 640×480 sample image"));
    clrun_image e;
    CHECK_OK(NULL, clrun_image_read(path("demo-edges.png"), &e));
    size_t edge_pixels = 0;
    for (size_t i = 0; i < e.width * e.height; i++) edge_pixels += e.data[i] == 255;
    assert_true(edge_pixels > 1000);
    clrun_image_free(&e);
    EXPECT(0, "clrun overhead", "bench", "launch", "--repeat", "3");
    EXPECT(0, "\"op\": \"h2d\"", "bench", "transfer", "--size", "4", "--repeat", "2", "--json");
    EXPECT(0, "clrun bf16 portable", "bench", "mixed", "--shapes", "40x24x56", "--size", "1", "--repeat", "1");
    EXPECT(0, "cast f32 -> bf16", "bench", "mixed", "--shapes", "8x8x8", "--size", "1", "--repeat", "1");
    EXPECT(2, "--shapes wants", "bench", "mixed", "--shapes", "8x8");
    EXPECT(0, "\"impl\": \"floor: decode + encode only (2 threads)\", \"input\": \"png\", \"frames\": 2", "bench", "pipeline", "--frames",
           "2", "--jobs", "2", "--json");
    EXPECT(2, "--frames wants", "bench", "pipeline", "--frames", "0");
    EXPECT(0, "is bit-identical to device 0's", "bench", "gemm", "--devices", "all", "--shapes", "300x150x70", "--repeat", "1");
    unsigned n = 0;
    char want[64];
    CHECK_OK(NULL, clrun_device_count(&n));
    snprintf(want, sizeof want, "threads + %u devices", n);
    EXPECT(0, want, "bench", "pipeline", "--devices", "all", "--frames", "2", "--jobs", "2");
    EXPECT(2, "named twice", "bench", "gemm", "--devices", "0,0", "--shapes", "8x8x8", "--repeat", "1");
    snprintf(want, sizeof want, "pageable, clrun, %u devices at once", n);
    EXPECT(0, want, "bench", "transfer", "--devices", "all", "--size", "4", "--repeat", "2");
    EXPECT(2, "--jobs wants", "bench", "pipeline", "--jobs", "x");
    EXPECT(2, "unknown benchmark", "bench", "nosuch");
    EXPECT(2, "which benchmark", "bench");
    EXPECT(2, "--repeat wants", "bench", "launch", "--repeat", "0");
    EXPECT(3, "no OpenCL device matches", "demo", "-d", "nosuch:");
}

/* The seed's one-liner, and the forms of generated data, checked against expected files. */
static void run_generated_forms(void **state)
{
    (void)state;
    const char *dest = path("dest.npy");
    char o1[4300];
    snprintf(o1, sizeof o1, "out:f32:400@%s", dest);
    EXPECT(0, "wrote", "run", TEST_DATA_DIR "/../../examples/multiply.cl", "-k", "multiply_them", "-g", "400", o1, "rand:f32:400:11",
           "rand:f32:400:12:-2:2");
    /* two saves into one file, spelled differently, refused before anything runs */
    char t1[4300], t2[4300];
    snprintf(t1, sizeof t1, "out:f32:400@%s", path("twice.npy"));
    snprintf(t2, sizeof t2, "rand:f32:400:11@%s", path("./twice.npy"));
    EXPECT(2, "saved to one file", "run", TEST_DATA_DIR "/../../examples/multiply.cl", "-k", "multiply_them", "-g", "400", t1, t2,
           "rand:f32:400:12");
    assert_int_equal(access(path("twice.npy"), F_OK), -1);
    clrun_array d;
    CHECK_OK(NULL, clrun_npy_read(dest, &d));
    assert_int_equal(d.dtype, CLRUN_F32);
    assert_int_equal(d.count, 400);
    int nonzero = 0;
    for (size_t i = 0; i < 400; i++) nonzero += ((float *)d.data)[i] != 0.0f;
    assert_true(nonzero > 390); /* products of random numbers: every element was written */
    clrun_array_free(&d);

    /* axpb: dst = 2 x + 1 with x = range 0,1,2...; expected = range 1,3,5... made by copy_bytes */
    uint64_t s = test_seed();
    unsigned n = 97 + (unsigned)(rng_next(&s) % 300);
    char N[32], NB[32], rng[64], rng2[64], exp[4300], outspec[4300];
    snprintf(N, sizeof N, "%u", n);
    snprintf(NB, sizeof NB, "%u", n * 4);
    snprintf(rng, sizeof rng, "range:f32:%u", n);
    snprintf(rng2, sizeof rng2, "range:f32:%u:1:2", n);
    snprintf(exp, sizeof exp, "out:f32:%u@%s", n, path("expected.npy"));
    EXPECT(0, "wrote", "run", KDIR "/cli.cl", "-k", "copy_bytes", "-g", NB, exp, rng2, NB);
    snprintf(exp, sizeof exp, "dst=%s", path("expected.npy"));
    snprintf(outspec, sizeof outspec, "out:f32:%u", n);
    EXPECT(0, "all", "run", KDIR "/cli.cl", "-k", "axpb", "-g", N, outspec, rng, "2", "f32:1", N, "--check", exp);
    snprintf(exp, sizeof exp, "0=%s", path("expected.npy"));
    EXPECT(0, "\"mismatches\": 0", "run", KDIR "/cli.cl", "-k", "axpb", "-g", N, outspec, rng, "2", "1", N, "--check", exp, "--json");
    /* a wrong result: exit 5 and the worst element named */
    EXPECT(5, "worst at [", "run", KDIR "/cli.cl", "-k", "axpb", "-g", N, outspec, rng, "2", "1.5", N, "--check", exp);
    /* ... within a tolerance that covers it */
    EXPECT(0, "match", "run", KDIR "/cli.cl", "-k", "axpb", "-g", N, outspec, rng, "2", "1.5", N, "--check", exp, "--atol", "0.5");
    /* fill and zeros */
    snprintf(rng, sizeof rng, "fill:f32:%u:0.5", n);
    EXPECT(5, "expected", "run", KDIR "/cli.cl", "-k", "axpb", "-g", N, outspec, rng, "f32:0", "0", N, "--check", exp);
    /* timing */
    EXPECT(0, "median", "run", KDIR "/cli.cl", "-k", "axpb", "-g", N, "-l", "1", outspec, rng, "2", "1", N, "--repeat", "5", "--bytes",
           "1000");
    assert_non_null(strstr(out_text, "GB/s"));
    EXPECT(0, "\"median_ms\"", "run", KDIR "/cli.cl", "-k", "axpb", "-g", N, outspec, rng, "2", "1", N, "--repeat", "3", "--json");
}

static void run_every_dtype_round_trip(void **state)
{
    (void)state;
    const char *types[] = {"f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bool"};
    for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
        clrun_dtype dt;
        CHECK_OK(NULL, clrun_dtype_parse(types[t], &dt));
        char in[4300], out[4300], gen[4400], nb[32];
        snprintf(gen, sizeof gen, "rand:%s:7x3:%zu@%s", types[t], t + 5, path("in.npy"));
        snprintf(out, sizeof out, "out:like=1@%s", path("out.npy"));
        snprintf(nb, sizeof nb, "%zu", 21 * clrun_dtype_size(dt));
        EXPECT(0, "wrote", "run", KDIR "/cli.cl", "-k", "copy_bytes", "-g", nb, out, gen, nb);
        clrun_array a, b;
        CHECK_OK(NULL, clrun_npy_read(path("in.npy"), &a));
        CHECK_OK(NULL, clrun_npy_read(path("out.npy"), &b));
        assert_int_equal(a.dtype, dt);
        assert_int_equal(b.dtype, dt);
        assert_int_equal(a.ndim, 2);
        assert_int_equal(b.ndim, 2);
        assert_int_equal(b.shape[0], 7);
        assert_int_equal(b.shape[1], 3);
        assert_memory_equal(a.data, b.data, a.bytes);
        /* and the file read back as an input */
        snprintf(in, sizeof in, "%s", path("in.npy"));
        snprintf(out, sizeof out, "out:like=1:%s@%s", types[t], path("out2.npy"));
        EXPECT(0, "wrote", "run", KDIR "/cli.cl", "-k", "copy_bytes", "-g", nb, out, in, nb);
        clrun_array c;
        CHECK_OK(NULL, clrun_npy_read(path("out2.npy"), &c));
        assert_memory_equal(a.data, c.data, a.bytes);
        clrun_array_free(&a);
        clrun_array_free(&b);
        clrun_array_free(&c);
    }
    /* raw input files */
    uint16_t raw[5] = {1, 2, 3, 65535, 7};
    write_bytes("raw.bin", raw, sizeof raw);
    char rawspec[4300], out[4300];
    snprintf(rawspec, sizeof rawspec, "raw:u16:%s", path("raw.bin"));
    snprintf(out, sizeof out, "out:like=1@%s", path("raw.npy"));
    EXPECT(0, "wrote", "run", KDIR "/cli.cl", "-k", "copy_bytes", "-g", "10", out, rawspec, "10");
    clrun_array r;
    CHECK_OK(NULL, clrun_npy_read(path("raw.npy"), &r));
    assert_int_equal(r.dtype, CLRUN_U16);
    assert_memory_equal(r.data, raw, sizeof raw);
    clrun_array_free(&r);
}

static void run_scalars_local_and_2d(void **state)
{
    (void)state;
    char out[4300];
    clrun_array a;
    unsigned di = 0; /* the device clrun runs on here: fp64 for the scalars kernel */
    clrun_device_info dev;
    CHECK_OK(NULL, clrun_device_select(NULL, &di, NULL));
    CHECK_OK(NULL, clrun_device_get(di, &dev));
    if (!dev.fp64) print_message("the scalars kernel (double) skipped: %s has no fp64\n", dev.name);
    else {
        snprintf(out, sizeof out, "out:f64:10@%s", path("scalars.npy"));
        EXPECT(0, "wrote", "run", KDIR "/scalars.cl", "-k", "scalars", "-g", "1", out, "i8:-128", "u8:255", "i16:-32768", "u16:65535",
               "i32:-2147483648", "u32:4294967295", "i64:-4611686018427387904", "u64:0x4000000000000000", "f32:-2.5", "f64:1e300");
        CHECK_OK(NULL, clrun_npy_read(path("scalars.npy"), &a));
        const double want[10] = {-128, 255,  -32768, 65535, -2147483648.0, 4294967295.0, -4611686018427387904.0, 4611686018427387904.0,
                                 -2.5, 1e300};
        for (int i = 0; i < 10; i++) assert_true(((double *)a.data)[i] == want[i]);
        clrun_array_free(&a);
        /* untyped values take the signature's type */
        EXPECT(0, "wrote", "run", KDIR "/scalars.cl", "-k", "scalars", "-g", "1", out, "--", "-5", "5", "-5", "5", "-5", "5", "-5", "5",
               "0.25", "0.125");
        /* out-of-range and mistyped scalars */
        EXPECT(2, "not a valid i8", "run", KDIR "/scalars.cl", "-k", "scalars", "-g", "1", out, "i8:128", "u8:1", "i16:1", "u16:1", "i32:1",
               "u32:1", "i64:1", "u64:1", "f32:1", "f64:1");
        EXPECT(2, "of type uchar, not char", "run", KDIR "/scalars.cl", "-k", "scalars", "-g", "1", out, "i8:1", "i8:1", "i16:1", "u16:1",
               "i32:1", "u32:1", "i64:1", "u64:1", "f32:1", "f64:1");
        EXPECT(2, "unknown option '-1'", "run", KDIR "/scalars.cl", "-k", "scalars", "-g", "1", out, "1", "-1", "1", "1", "1", "1", "1",
               "1", "1", "1");
        EXPECT(2, "not a valid uchar", "run", KDIR "/scalars.cl", "-k", "scalars", "-g", "1", "--", out, "1", "-1", "1", "1", "1", "1", "1",
               "1", "1", "1");
        EXPECT(2, "does not fit u8", "run", KDIR "/scalars.cl", "-k", "scalars", "-g", "1", "range:u8:300", "1", "1", "1", "1", "1", "1",
               "1", "1", "1", "1");
        EXPECT(2, "not a valid u8", "run", KDIR "/scalars.cl", "-k", "scalars", "-g", "1", out, "1", "u8:abc", "1", "1", "1", "1", "1", "1",
               "1", "1");
    }
    /* local memory */
    char sums[4300];
    snprintf(sums, sizeof sums, "out:f32:4@%s", path("sums.npy"));
    EXPECT(0, "wrote", "run", KDIR "/cli.cl", "-k", "group_sums", "-g", "32", "-l", "8", sums, "fill:f32:32:0.5", "local:32");
    CHECK_OK(NULL, clrun_npy_read(path("sums.npy"), &a));
    for (int i = 0; i < 4; i++) assert_true(((float *)a.data)[i] == 4.0f);
    clrun_array_free(&a);
    EXPECT(2, "expects __local memory", "run", KDIR "/cli.cl", "-k", "group_sums", "-g", "32", "-l", "8", sums, "fill:f32:32:0.5",
           "zeros:f32:8");
    EXPECT(2, "local:BYTES", "run", KDIR "/cli.cl", "-k", "group_sums", "-g", "32", sums, "fill:f32:32:0.5", "local:0");
    EXPECT(2, "divides the global size", "run", KDIR "/cli.cl", "-k", "group_sums", "-g", "32", "-l", "7", sums, "fill:f32:32:0.5",
           "local:28");
    /* by-value vectors and structs: TYPE:V,V,... or a bare list typed from a vector's signature */
    char bv[4300];
    snprintf(bv, sizeof bv, "out:f32:3@%s", path("bv.npy"));
    EXPECT(0, "wrote", "run", KDIR "/cli.cl", "-k", "byvalue", "-g", "1", bv, "f32:1,2,3,4", "5,6,7", "f32:42,3,18", "zeros:u8:1");
    CHECK_OK(NULL, clrun_npy_read(path("bv.npy"), &a));
    assert_true(((float *)a.data)[0] == 49 && ((float *)a.data)[1] == 765 && ((float *)a.data)[2] == 144);
    clrun_array_free(&a);
    EXPECT(0, "wrote", "run", KDIR "/cli.cl", "-k", "byvalue", "-g", "1", bv, "--", "1,2,3,-4", "i32:5,6,7,0", "f32:42,3,18", "zeros:u8:1");
    CHECK_OK(NULL, clrun_npy_read(path("bv.npy"), &a));
    assert_true(((float *)a.data)[0] == 1 + 4 + 12 - 32);
    clrun_array_free(&a);
    EXPECT(2, "argument 1 (float4 v) gets i32 values from 'i32:1,2,3,4'; the kernel wants float", "run", KDIR "/cli.cl", "-k", "byvalue",
           "-g", "1", bv, "i32:1,2,3,4", "5,6,7", "f32:42,3,18", "zeros:u8:1");
    EXPECT(2, "argument 1 (float4 v) takes 4 values; 'f32:1' gives 1", "run", KDIR "/cli.cl", "-k", "byvalue", "-g", "1", bv, "f32:1",
           "5,6,7", "f32:42,3,18", "zeros:u8:1");
    EXPECT(2, "argument 3 (abc s) of kernel byvalue is 12 bytes; 8 given", "run", KDIR "/cli.cl", "-k", "byvalue", "-g", "1", bv,
           "f32:1,2,3,4", "5,6,7", "f32:42,3", "zeros:u8:1");
    EXPECT(2, "cannot infer values of type abc", "run", KDIR "/cli.cl", "-k", "byvalue", "-g", "1", bv, "f32:1,2,3,4", "5,6,7", "42,3,18",
           "zeros:u8:1");
    EXPECT(2, "not a valid f32", "run", KDIR "/cli.cl", "-k", "byvalue", "-g", "1", bv, "f32:1,,3,4", "5,6,7", "f32:42,3,18", "zeros:u8:1");
    EXPECT(2, "File too large", "run", "--sim", "/dev/zero"); /* inputs are read within bounds */
    EXPECT(2, "up to 16 MiB", "run", "/dev/zero", "-k", "x", "-g", "1");
    EXPECT(2, "not an .npy file", "op", "sum", "/dev/zero");
    { /* a kernel of 100 arguments (the limit is the device's, not clrun's) */
        char src[8192], dst[4300];
        size_t o = (size_t)snprintf(src, sizeof src, "__kernel void many(__global int *out");
        for (int i = 0; i < 99; i++) o += (size_t)snprintf(src + o, sizeof src - o, ", int a%d", i);
        o += (size_t)snprintf(src + o, sizeof src - o, ")\n{\n    out[0] = 0");
        for (int i = 0; i < 99; i++) o += (size_t)snprintf(src + o, sizeof src - o, " + a%d", i);
        snprintf(src + o, sizeof src - o, ";\n}\n");
        FILE *f = fopen(path("many.cl"), "w");
        assert_non_null(f);
        fputs(src, f);
        fclose(f);
        snprintf(dst, sizeof dst, "out:i32:1@%s", path("many.npy"));
        EXPECT(0, "global 1", "run", path("many.cl"), "-k", "many", "-g", "1", dst, "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1",
               "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1",
               "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1",
               "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1",
               "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1");
        clrun_array m;
        CHECK_OK(NULL, clrun_npy_read(path("many.npy"), &m));
        assert_int_equal(((int32_t *)m.data)[0], 99);
        clrun_array_free(&m);
    }
    /* a kernel that never ends: --timeout ends the process with exit 6, naming it. Mesa's llvmpipe
     * ends every work-item after 65,535 loop iterations (docs/VENDORS.md): there no kernel spins
     * forever, and the run ends by itself */
    if (strstr(dev.name, "llvmpipe")) {
        print_message("%s ends loops after 65,535 iterations: spin ends by itself, --timeout is not reached\n", dev.name);
        EXPECT(0, "spin on llvmpipe", "run", KDIR "/cli.cl", "-k", "spin", "-g", "1", "zeros:i32:1", "--timeout", "60");
    } else {
        EXPECT(6, "timeout while kernel spin was running", "run", KDIR "/cli.cl", "-k", "spin", "-g", "1", "zeros:i32:1", "--timeout",
               "0.5");
    }
    EXPECT(2, "--timeout wants", "run", KDIR "/cli.cl", "-k", "spin", "-g", "1", "zeros:i32:1", "--timeout", "-1");
    /* a kernel that crashes the process on a CPU device: clrun names it before dying of the signal */
    struct rlimit nocore = {0, 0}; /* no core file (the child inherits the limit) */
    setrlimit(RLIMIT_CORE, &nocore);
    allow_signal = 1;
    int crc = cli("run", KDIR "/cli.cl", "-k", "crash", "-g", "1", "zeros:i32:1", "0", NULL);
    allow_signal = 0;
    if (crc <= 128 || !strstr(err_text, "while kernel crash was running") || !strstr(err_text, "oclgrind"))
        fail_msg("exit %d; stderr: %s", crc, err_text);
    /* sizes the device cannot take are refused before the driver sees them (some abort the process) */
    EXPECT(2, "bytes of local memory", "run", KDIR "/cli.cl", "-k", "group_sums", "-g", "32", "-l", "8", sums, "fill:f32:32:0.5",
           "local:1073741824");
    EXPECT(2, "bytes of local memory", "run", KDIR "/cli.cl", "-k", "group_sums", "-g", "32", "-l", "8", sums, "fill:f32:32:0.5",
           "local:18446744073709551615");
    EXPECT(2, "work-groups; at most 2^32 - 1", "run", KDIR "/cli.cl", "-k", "group_sums", "-g", "1099511627776", "-l", "1", sums,
           "fill:f32:32:0.5", "local:4");
    EXPECT(2, "work-groups; at most 2^32 - 1", "run", KDIR "/cli.cl", "-k", "ids2", "-g", "65536,65536,65536", "out:i32:5x7", "7");
    EXPECT(2, "allows at most", "run", KDIR "/cli.cl", "-k", "group_sums", "-g", "1048576", "-l", "1048576", sums, "fill:f32:32:0.5",
           "local:4");
    /* 2-D */
    char ids[4300];
    snprintf(ids, sizeof ids, "out:i32:5x7@%s", path("ids.npy"));
    EXPECT(0, "global 7,5", "run", KDIR "/cli.cl", "-k", "ids2", "-g", "7,5", ids, "7");
    CHECK_OK(NULL, clrun_npy_read(path("ids.npy"), &a));
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 7; x++) assert_int_equal(((int32_t *)a.data)[y * 7 + x], x + 1000 * y);
    clrun_array_free(&a);
}

static void op_mul(void **state)
{
    (void)state;
    uint64_t s = test_seed();
    size_t shape[2] = {3, 1 + (size_t)(rng_next(&s) % 200)};
    clrun_array a, b, r;
    CHECK_OK(NULL, clrun_array_new(&a, CLRUN_F32, 2, shape));
    CHECK_OK(NULL, clrun_array_new(&b, CLRUN_F32, 2, shape));
    for (size_t i = 0; i < a.count; i++) ((float *)a.data)[i] = rng_float(&s), ((float *)b.data)[i] = rng_float(&s);
    CHECK_OK(NULL, clrun_npy_write(path("ma.npy"), &a));
    CHECK_OK(NULL, clrun_npy_write(path("mb.npy"), &b));
    EXPECT(0, "wrote", "op", "mul", path("ma.npy"), path("mb.npy"), "-o", path("mr.npy"), "--timeout", "0");
    /* op, bench and demo run under a time limit: past it the process ends with exit 6 and says so */
    EXPECT(6, "ran past its time limit", "op", "mul", path("ma.npy"), path("mb.npy"), "-o", path("mt.npy"), "--timeout=0.000001");
    EXPECT(6, "ran past its time limit", "bench", "launch", "--timeout", "0.000001");
    EXPECT(2, "--timeout wants seconds", "op", "mul", path("ma.npy"), path("mb.npy"), "-o", path("mt.npy"), "--timeout", "-1");
    CHECK_OK(NULL, clrun_npy_read(path("mr.npy"), &r));
    assert_int_equal(r.ndim, 2);
    assert_int_equal(r.shape[1], shape[1]);
    for (size_t i = 0; i < a.count; i++) assert_true(((float *)r.data)[i] == ((float *)a.data)[i] * ((float *)b.data)[i]);
    clrun_array_free(&r);
    EXPECT(2, "unknown op 'nope'", "op", "nope");
    assert_non_null(strstr(err_text, "mul"));
    EXPECT(2, "which op", "op");
    EXPECT(2, "takes 2 input files", "op", "mul", path("ma.npy"), "-o", path("mr.npy"));
    EXPECT(2, "no output file", "op", "mul", path("ma.npy"), path("mb.npy"));
    shape[1] += 1;
    clrun_array_free(&b);
    CHECK_OK(NULL, clrun_array_new(&b, CLRUN_F32, 2, shape));
    CHECK_OK(NULL, clrun_npy_write(path("mc.npy"), &b));
    EXPECT(2, "shapes differ", "op", "mul", path("ma.npy"), path("mc.npy"), "-o", path("mr.npy"));
    clrun_array_free(&b);
    CHECK_OK(NULL, clrun_array_new(&b, CLRUN_I32, 2, shape));
    CHECK_OK(NULL, clrun_npy_write(path("mi.npy"), &b));
    EXPECT(2, "ops take float32 or float16", "op", "mul", path("mi.npy"), path("ma.npy"), "-o", path("mr.npy"));
    EXPECT(2, "No such file", "op", "mul", "/nonexistent.npy", path("ma.npy"), "-o", path("mr.npy"));
    /* reductions print their value; axpy and scale take --alpha */
    double want = 0, best = -1e30;
    size_t bi = 0;
    for (size_t i = 0; i < a.count; i++) {
        float v = ((float *)a.data)[i];
        want += v;
        if (v > best) best = v, bi = i;
    }
    EXPECT(0, NULL, "op", "sum", path("ma.npy"));
    assert_true(fabs(strtod(out_text, NULL) - want) < 1e-4);
    char idx[64];
    snprintf(idx, sizeof idx, "\"index\": %zu", bi);
    EXPECT(0, idx, "op", "argmax", path("ma.npy"), "--json");
    EXPECT(0, "wrote", "op", "axpy", path("ma.npy"), path("mb.npy"), "--alpha", "-2", "-o", path("ax.npy"));
    clrun_array mb;
    CHECK_OK(NULL, clrun_npy_read(path("ax.npy"), &r));
    CHECK_OK(NULL, clrun_npy_read(path("mb.npy"), &mb));
    for (size_t i = 0; i < a.count; i++) assert_true(((float *)r.data)[i] == fmaf(-2.0f, ((float *)a.data)[i], ((float *)mb.data)[i]));
    clrun_array_free(&r);
    clrun_array_free(&mb);
    EXPECT(2, "prints its result", "op", "sum", path("ma.npy"), "-o", path("x.npy"));
    EXPECT(2, "--alpha wants a number", "op", "scale", path("ma.npy"), "--alpha", "x", "-o", path("x.npy"));
    clrun_array_free(&a);
    clrun_array_free(&b);
}

/* op gemm --devices: the rows split over PoCL's two devices, the file byte-identical to one device's;
 * batches one after another; a bad group or another op refused. */
/* op quantize / dequantize: per tensor and per channel against the formula; calibration printed and
 * taken back; bad command lines. */
static void op_quant(void **state)
{
    (void)state;
    uint64_t rng = test_seed() + 21;
    size_t sh[3] = {3, 4, 5};
    clrun_array x, q, y;
    CHECK_OK(NULL, clrun_array_new(&x, CLRUN_F32, 3, sh));
    for (size_t i = 0; i < x.count; i++) ((float *)x.data)[i] = rng_float(&rng) * 40;
    ((float *)x.data)[7] = 1e9f, ((float *)x.data)[8] = -1e9f;
    CHECK_OK(NULL, clrun_npy_write(path("qx.npy"), &x));
    EXPECT(0, "--zero-point -3", "op", "quantize", path("qx.npy"), "-o", path("qq.npy"), "--scale", "0.25", "--zero-point", "-3");
    CHECK_OK(NULL, clrun_npy_read(path("qq.npy"), &q));
    assert_int_equal(q.dtype, CLRUN_I8);
    for (size_t i = 0; i < x.count; i++) {
        float r = -3.0f + rintf(((float *)x.data)[i] * (1.0f / 0.25f));
        r = r < -128 ? -128 : r > 127 ? 127 : r;
        assert_int_equal(((signed char *)q.data)[i], (int)r);
    }
    EXPECT(0, "wrote", "op", "dequantize", path("qq.npy"), "-o", path("qy.npy"), "--scale", "0.25", "--zero-point", "-3");
    CHECK_OK(NULL, clrun_npy_read(path("qy.npy"), &y));
    for (size_t i = 0; i < x.count; i++) assert_true(((float *)y.data)[i] == (float)(((signed char *)q.data)[i] + 3) * 0.25f);
    clrun_array_free(&q), clrun_array_free(&y);
    /* per channel along the middle axis: four scales */
    EXPECT(0, "wrote", "op", "quantize", path("qx.npy"), "-o", path("qc.npy"), "--scale", "0.5,0.25,1,2", "--zero-point", "1,2,3,4",
           "--axis", "1");
    CHECK_OK(NULL, clrun_npy_read(path("qc.npy"), &q));
    static const float cs[4] = {0.5f, 0.25f, 1, 2};
    for (size_t i = 0; i < x.count; i++) {
        const size_t c = (i / 5) % 4;
        float r = (float)(c + 1) + rintf(((float *)x.data)[i] * (1.0f / cs[c]));
        r = r < -128 ? -128 : r > 127 ? 127 : r;
        assert_int_equal(((signed char *)q.data)[i], (int)r);
    }
    clrun_array_free(&q);
    EXPECT(0, "--axis 1", "op", "quantize", path("qx.npy"), "-o", path("qk.npy"), "--calibrate", "--axis", "1", "--percentile", "99");
    EXPECT(2, "one of them", "op", "quantize", path("qx.npy"), "-o", path("qk.npy"));
    EXPECT(2, "wants 4 numbers", "op", "quantize", path("qx.npy"), "-o", path("qk.npy"), "--scale", "1,2", "--axis", "1");
    EXPECT(2, "-128 to 127", "op", "quantize", path("qx.npy"), "-o", path("qk.npy"), "--scale", "1", "--zero-point", "300");
    EXPECT(2, "positive and finite", "op", "quantize", path("qx.npy"), "-o", path("qk.npy"), "--scale", "-1");
    EXPECT(2, "takes i8", "op", "dequantize", path("qx.npy"), "-o", path("qk.npy"), "--scale", "1");
    EXPECT(2, "has 3 dimensions", "op", "quantize", path("qx.npy"), "-o", path("qk.npy"), "--scale", "1", "--axis", "3");
    clrun_array_free(&x);
    /* op gemm on int8: int32 exactly, or f32 through the row and column scales */
    size_t as[2] = {19, 40}, bs[2] = {40, 11}, ss[1] = {19}, ts[1] = {11};
    clrun_array a, b, sa, sb, r;
    CHECK_OK(NULL, clrun_array_new(&a, CLRUN_I8, 2, as));
    CHECK_OK(NULL, clrun_array_new(&b, CLRUN_I8, 2, bs));
    CHECK_OK(NULL, clrun_array_new(&sa, CLRUN_F32, 1, ss));
    CHECK_OK(NULL, clrun_array_new(&sb, CLRUN_F32, 1, ts));
    for (size_t i = 0; i < a.count; i++) ((signed char *)a.data)[i] = (signed char)(rng_next(&rng) & 255);
    for (size_t i = 0; i < b.count; i++) ((signed char *)b.data)[i] = (signed char)(rng_next(&rng) & 255);
    for (size_t i = 0; i < 19; i++) ((float *)sa.data)[i] = 0.5f + rng_float(&rng);
    for (size_t i = 0; i < 11; i++) ((float *)sb.data)[i] = 0.5f + rng_float(&rng);
    CHECK_OK(NULL, clrun_npy_write(path("ia.npy"), &a));
    CHECK_OK(NULL, clrun_npy_write(path("ib.npy"), &b));
    CHECK_OK(NULL, clrun_npy_write(path("sa.npy"), &sa));
    CHECK_OK(NULL, clrun_npy_write(path("sb.npy"), &sb));
    static const char *const s8_backends[] = {"auto", "cpu-kernel", "gpu-kernel"}; /* --backend chooses the INT8 kernel too */
    for (int be = 0; be < 3; be++) {
        EXPECT(0, "int32, 19×11", "op", "gemm", path("ia.npy"), path("ib.npy"), "-o", path("ic.npy"), "--backend", s8_backends[be]);
        CHECK_OK(NULL, clrun_npy_read(path("ic.npy"), &r));
        assert_int_equal(r.dtype, CLRUN_I32);
        for (size_t i = 0; i < 19; i++)
            for (size_t j = 0; j < 11; j++) {
                int64_t acc = 0;
                for (size_t q = 0; q < 40; q++) acc += (int64_t)((signed char *)a.data)[i * 40 + q] * ((signed char *)b.data)[q * 11 + j];
                assert_int_equal(((int32_t *)r.data)[i * 11 + j], acc);
            }
        clrun_array_free(&r);
    }
    EXPECT(1, "the clblast backend has no kernel for INT8", "op", "gemm", path("ia.npy"), path("ib.npy"), "-o", path("ic.npy"), "--backend",
           "clblast");
    EXPECT(0, "f32, 19×11", "op", "gemm", path("ia.npy"), path("ib.npy"), "-o", path("if.npy"), "--scale-a", path("sa.npy"), "--scale-b",
           path("sb.npy"));
    EXPECT(2, "19 float32 scales", "op", "gemm", path("ia.npy"), path("ib.npy"), "-o", path("if.npy"), "--scale-a", path("sb.npy"));
    EXPECT(2, "both A and B as int8", "op", "gemm", path("ia.npy"), path("sa.npy"), "-o", path("if.npy"));
    EXPECT(2, "no --alpha", "op", "gemm", path("ia.npy"), path("ib.npy"), "-o", path("if.npy"), "--alpha", "2");
    clrun_array_free(&a), clrun_array_free(&b), clrun_array_free(&sa), clrun_array_free(&sb);
}

/* op sparsify / densify / gemm --meta: the rule on every group (ties, a partial last group), the
 * files' shapes and types, densify(sparsify(A)) equal to the pruned A, the sparse product against
 * the pruned A's, and bad command lines. */
static void op_sparse(void **state)
{
    (void)state;
    uint64_t rng = test_seed() + 31;
    size_t as[2] = {9, 22}, bs[2] = {22, 5};
    clrun_array a, b, v, m, p, d, c;
    CHECK_OK(NULL, clrun_array_new(&a, CLRUN_F32, 2, as));
    CHECK_OK(NULL, clrun_array_new(&b, CLRUN_F32, 2, bs));
    for (size_t i = 0; i < a.count; i++) ((float *)a.data)[i] = (float)((int)(rng_next(&rng) % 7) - 3); /* many ties */
    for (size_t i = 0; i < b.count; i++) ((float *)b.data)[i] = rng_float(&rng);
    CHECK_OK(NULL, clrun_npy_write(path("spa.npy"), &a));
    CHECK_OK(NULL, clrun_npy_write(path("spb.npy"), &b));
    EXPECT(0, "9 rows of 12 kept values", "op", "sparsify", path("spa.npy"), "-o", path("spv.npy"), "--pruned", path("spp.npy"));
    CHECK_OK(NULL, clrun_npy_read(path("spv.npy"), &v));
    CHECK_OK(NULL, clrun_npy_read(path("spv.meta.npy"), &m));
    CHECK_OK(NULL, clrun_npy_read(path("spp.npy"), &p));
    assert_int_equal(v.dtype, CLRUN_F32), assert_int_equal(v.shape[1], 12), assert_int_equal(m.dtype, CLRUN_U32),
        assert_int_equal(m.shape[1], 1);
    for (size_t r = 0; r < 9; r++)
        for (size_t g = 0; g < 6; g++) { /* the two largest magnitudes, the first of equals */
            const float *x = (const float *)a.data + r * 22 + 4 * g;
            const size_t n = g == 5 ? 2 : 4;
            int k1 = 0, k2 = -1;
            for (size_t q = 1; q < 4; q++)
                if ((q < n ? fabsf(x[q]) : 0) > fabsf(x[k1])) k1 = (int)q;
            for (size_t q = 0; q < 4; q++)
                if ((int)q != k1 && (k2 < 0 || (q < n ? fabsf(x[q]) : 0) > (k2 < (int)n ? fabsf(x[k2]) : 0))) k2 = (int)q;
            const int lo = k1 < k2 ? k1 : k2, hi = k1 < k2 ? k2 : k1;
            assert_int_equal((((uint32_t *)m.data)[r] >> (4 * g)) & 15, (unsigned)(lo | hi << 2));
            for (size_t q = 0; q < n; q++)
                assert_true(((float *)p.data)[r * 22 + 4 * g + q] == ((int)q == lo || (int)q == hi ? x[q] : 0.0f));
        }
    EXPECT(0, "9 rows of 22", "op", "densify", path("spv.npy"), "--meta", path("spv.meta.npy"), "--k", "22", "-o", path("spd.npy"));
    CHECK_OK(NULL, clrun_npy_read(path("spd.npy"), &d));
    assert_memory_equal(d.data, p.data, p.bytes);
    static const char *const sp_backends[] = {"auto", "cpu-kernel", "gpu-kernel"};
    for (int be = 0; be < 3; be++) {
        EXPECT(0, "from a 2:4 sparse f32 A", "op", "gemm", path("spv.npy"), path("spb.npy"), "--meta", path("spv.meta.npy"), "-o",
               path("spc.npy"), "--backend", sp_backends[be]);
        CHECK_OK(NULL, clrun_npy_read(path("spc.npy"), &c));
        for (size_t i = 0; i < 9; i++)
            for (size_t j = 0; j < 5; j++) {
                double s = 0, sa = 0;
                for (size_t q = 0; q < 22; q++)
                    s += (double)((float *)p.data)[i * 22 + q] * ((float *)b.data)[q * 5 + j],
                        sa += fabs((double)((float *)p.data)[i * 22 + q] * ((float *)b.data)[q * 5 + j]);
                assert_true(fabs(((float *)c.data)[i * 5 + j] - s) <= 1e-6 * sa + 1e-30);
            }
        if (be < 2) clrun_array_free(&c);
    }
    EXPECT(2, "K = 21 to 24, not 30", "op", "densify", path("spv.npy"), "--meta", path("spv.meta.npy"), "--k", "30", "-o", path("spd.npy"));
    EXPECT(2, "--meta", "op", "densify", path("spv.npy"), "-o", path("spd.npy"));
    EXPECT(2, "uint32", "op", "densify", path("spv.npy"), "--meta", path("spv.npy"), "-o", path("spd.npy"));
    EXPECT(2, "not 12", "op", "gemm", path("spv.npy"), path("spb.npy"), "--meta", path("spv.meta.npy"), "-o", path("spc.npy"), "--tb");
    EXPECT(2, "--tb, --alpha, --bf16 and --backend only", "op", "gemm", path("spv.npy"), path("spb.npy"), "--meta", path("spv.meta.npy"),
           "-o", path("spc.npy"), "--ta");
    EXPECT(2, "float32 or float16", "op", "sparsify", path("spv.meta.npy"), "-o", path("spx.npy"));
    EXPECT(0, "usage: clrun op sparsify", "op", "sparsify", "--help");
    /* outputs of one name are refused before anything is written; the values survive */
    EXPECT(2, "name one file", "op", "sparsify", path("spa.npy"), "-o", path("spv.npy"), "--meta", path("spv.npy"));
    EXPECT(2, "name one file", "op", "sparsify", path("spa.npy"), "-o", path("spv.npy"), "--pruned", path("spv.npy"));
    EXPECT(2, "name one file", "op", "sparsify", path("spa.npy"), "-o", path("spv2.npy"), "--meta", path("spp2.npy"), "--pruned",
           path("spp2.npy"));
    /* spelled differently, before either exists: compared by the parent folder's canonical path */
    EXPECT(2, "name one file", "op", "sparsify", path("spa.npy"), "-o", path("spw.npy"), "--meta", path("./spw.npy"));
    mkdir(path("sub"), 0755);
    EXPECT(2, "name one file", "op", "sparsify", path("spa.npy"), "-o", path("spw.npy"), "--pruned", path("sub/../spw.npy"));
    assert_int_equal(access(path("spw.npy"), F_OK), -1);
    clrun_array v2;
    CHECK_OK(NULL, clrun_npy_read(path("spv.npy"), &v2));
    assert_memory_equal(v2.data, v.data, v.bytes);
    clrun_array_free(&v2);
    /* malformed metadata: a group naming one column twice, a group with the higher column first,
     * random words: refused by densify and gemm alike, naming the row and group */
    for (int bad = 0; bad < 3; bad++) {
        clrun_array mb;
        CHECK_OK(NULL, clrun_npy_read(path("spv.meta.npy"), &mb));
        uint32_t *w = (uint32_t *)mb.data;
        const size_t row = rng_next(&rng) % 9, group = rng_next(&rng) % 6;
        if (bad == 2) {
            for (size_t i = 0; i < mb.count; i++) w[i] = (uint32_t)rng_next(&rng) | 0x0000000Fu; /* group 0 names column 3 twice */
        } else {
            const uint32_t nib = bad == 0 ? 0x5u /* 1 and 1 */ : 0x6u /* lo 2 > hi 1 */;
            w[row] = (w[row] & ~(0xFu << (4 * group))) | nib << (4 * group);
        }
        CHECK_OK(NULL, clrun_npy_write(path("spbad.meta.npy"), &mb));
        EXPECT(2, "2:4 metadata: row", "op", "densify", path("spv.npy"), "--meta", path("spbad.meta.npy"), "--k", "22", "-o",
               path("spd.npy"));
        EXPECT(2, "2:4 metadata: row", "op", "gemm", path("spv.npy"), path("spb.npy"), "--meta", path("spbad.meta.npy"), "-o",
               path("spc.npy"));
        if (bad < 2) {
            char want[64];
            snprintf(want, sizeof want, "row %zu, group %zu", row, group);
            EXPECT(2, want, "op", "densify", path("spv.npy"), "--meta", path("spbad.meta.npy"), "--k", "22", "-o", path("spd.npy"));
        }
        clrun_array_free(&mb);
    }
    clrun_array_free(&a), clrun_array_free(&b), clrun_array_free(&v), clrun_array_free(&m), clrun_array_free(&p), clrun_array_free(&d),
        clrun_array_free(&c);
}

static void op_gemm_devices(void **state)
{
    (void)state;
    uint64_t s = test_seed() + 11;
    size_t ash[2] = {300 + rng_next(&s) % 200, 129}, bsh[2] = {129, 70};
    clrun_array a, b, one, two;
    CHECK_OK(NULL, clrun_array_new(&a, CLRUN_F32, 2, ash));
    CHECK_OK(NULL, clrun_array_new(&b, CLRUN_F32, 2, bsh));
    for (size_t i = 0; i < a.count; i++) ((float *)a.data)[i] = rng_float(&s);
    for (size_t i = 0; i < b.count; i++) ((float *)b.data)[i] = rng_float(&s);
    CHECK_OK(NULL, clrun_npy_write(path("da.npy"), &a));
    CHECK_OK(NULL, clrun_npy_write(path("db.npy"), &b));
    EXPECT(0, "wrote", "op", "gemm", path("da.npy"), path("db.npy"), "-o", path("d1.npy"), "-d", "0");
    EXPECT(0, "device 1, ", "op", "gemm", path("da.npy"), path("db.npy"), "-o", path("d2.npy"), "--devices", "all");
    /* a bad CLRUN_GROUP_WEIGHTS (wrong count, all zeros) is refused, nothing written, never ignored */
    unsigned n = 0;
    CHECK_OK(NULL, clrun_device_count(&n));
    char zeros[64] = "0", extra[64] = "1"; /* all zeros, one more than the devices, one fewer */
    for (unsigned i = 1; i < n; i++) strcat(zeros, ",0");
    for (unsigned i = 0; i < n; i++) strcat(extra, ",1");
    const char *const bad_w[] = {zeros, extra, n > 1 ? "7" : "7,7"};
    for (int i = 0; i < 3; i++) {
        setenv("CLRUN_GROUP_WEIGHTS", bad_w[i], 1);
        unlink(path("dw.npy"));
        EXPECT(2, "CLRUN_GROUP_WEIGHTS", "op", "gemm", path("da.npy"), path("db.npy"), "-o", path("dw.npy"), "--devices", "all");
        EXPECT(2, "CLRUN_GROUP_WEIGHTS", "op", "mul", path("da.npy"), path("da.npy"), "-o", path("dw.npy"), "--devices", "all");
        assert_int_equal(access(path("dw.npy"), F_OK), -1);
    }
    unsetenv("CLRUN_GROUP_WEIGHTS");
    CHECK_OK(NULL, clrun_npy_read(path("d1.npy"), &one));
    CHECK_OK(NULL, clrun_npy_read(path("d2.npy"), &two));
    assert_int_equal(one.bytes, two.bytes);
    assert_memory_equal(one.data, two.data, one.bytes);
    clrun_array_free(&two);
    setenv("CLRUN_DEVICES", "1,0", 1); /* the default group */
    EXPECT(0, "of ", "op", "gemm", path("da.npy"), path("db.npy"), "-o", path("d3.npy"), "--devices", "");
    unsetenv("CLRUN_DEVICES");
    CHECK_OK(NULL, clrun_npy_read(path("d3.npy"), &two));
    assert_memory_equal(one.data, two.data, one.bytes);
    clrun_array_free(&two), clrun_array_free(&one);
    EXPECT(0, "wrote", "op", "gemm", path("ga.npy"), path("gb.npy"), "-o", path("d4.npy"), "--devices", "0,1"); /* a batch */
    CHECK_OK(NULL, clrun_npy_read(path("gc.npy"), &one));
    CHECK_OK(NULL, clrun_npy_read(path("d4.npy"), &two));
    for (size_t i = 0; i < one.count; i++) assert_true(((float *)one.data)[i] == 2 * ((float *)two.data)[i]); /* gc has alpha 2 */
    clrun_array_free(&two), clrun_array_free(&one);
    EXPECT(2, "named twice", "op", "gemm", path("da.npy"), path("db.npy"), "-o", path("x.npy"), "--devices", "0,0");
    EXPECT(3, "no OpenCL device matches", "op", "gemm", path("da.npy"), path("db.npy"), "-o", path("x.npy"), "--devices", "0,nosuch");
    EXPECT(2, "not both", "op", "gemm", path("da.npy"), path("db.npy"), "-o", path("x.npy"), "--devices", "all", "-d", "0");
    { /* element-wise ops and reductions over the group: the same bytes and values */
        size_t big[1] = {3 * 4096 + 77};
        clrun_array v;
        CHECK_OK(NULL, clrun_array_new(&v, CLRUN_F32, 1, big));
        for (size_t i = 0; i < v.count; i++) ((float *)v.data)[i] = rng_float(&s);
        CHECK_OK(NULL, clrun_npy_write(path("dv.npy"), &v));
        clrun_array_free(&v);
        EXPECT(0, "wrote", "op", "fma", path("dv.npy"), path("dv.npy"), path("dv.npy"), "-o", path("f1.npy"), "-d", "0");
        EXPECT(0, "wrote", "op", "fma", path("dv.npy"), path("dv.npy"), path("dv.npy"), "-o", path("f2.npy"), "--devices", "all");
        CHECK_OK(NULL, clrun_npy_read(path("f1.npy"), &one));
        CHECK_OK(NULL, clrun_npy_read(path("f2.npy"), &two));
        assert_memory_equal(one.data, two.data, one.bytes);
        clrun_array_free(&one), clrun_array_free(&two);
        EXPECT(0, NULL, "op", "max", path("dv.npy"), "-d", "0");
        char want[64];
        snprintf(want, sizeof want, "%.63s", out_text);
        EXPECT(0, NULL, "op", "max", path("dv.npy"), "--devices", "all");
        assert_string_equal(out_text, want);
        EXPECT(0, "\"op\": \"sum\"", "op", "sum", path("dv.npy"), "--devices", "all", "--json");
    }
    clrun_array_free(&a), clrun_array_free(&b);
}

static void op_gemm(void **state)
{
    (void)state;
    uint64_t s = test_seed();
    size_t ash[3] = {2, 5, 7}, bsh[3] = {2, 7, 3}; /* a batch of two 5×7 @ 7×3 */
    clrun_array a, b, r;
    CHECK_OK(NULL, clrun_array_new(&a, CLRUN_F32, 3, ash));
    CHECK_OK(NULL, clrun_array_new(&b, CLRUN_F32, 3, bsh));
    for (size_t i = 0; i < a.count; i++) ((float *)a.data)[i] = (float)(int)(rng_float(&s) * 8);
    for (size_t i = 0; i < b.count; i++) ((float *)b.data)[i] = (float)(int)(rng_float(&s) * 8);
    CHECK_OK(NULL, clrun_npy_write(path("ga.npy"), &a));
    CHECK_OK(NULL, clrun_npy_write(path("gb.npy"), &b));
    EXPECT(0, "wrote", "op", "gemm", path("ga.npy"), path("gb.npy"), "-o", path("gc.npy"), "--alpha", "2");
    CHECK_OK(NULL, clrun_npy_read(path("gc.npy"), &r));
    assert_int_equal(r.ndim, 3);
    assert_int_equal(r.shape[1], 5);
    assert_int_equal(r.shape[2], 3);
    for (size_t bt = 0; bt < 2; bt++)
        for (size_t i = 0; i < 5; i++)
            for (size_t j = 0; j < 3; j++) {
                float want = 0; /* small integers: exact */
                for (size_t q = 0; q < 7; q++) want += ((float *)a.data)[bt * 35 + i * 7 + q] * ((float *)b.data)[bt * 21 + q * 3 + j];
                assert_true(((float *)r.data)[bt * 15 + i * 3 + j] == 2 * want);
            }
    /* beta with C0, the transposes, and the backends */
    EXPECT(0, "wrote", "op", "gemm", path("ga.npy"), path("gb.npy"), "-o", path("gd.npy"), "--beta", "-1", "-c", path("gc.npy"),
           "--backend", "cpu-kernel");
    { /* C0 of the right element count but another shape (2×3×5 for a batch of 5×3) is refused */
        size_t sh[3] = {2, 3, 5};
        clrun_array w;
        CHECK_OK(NULL, clrun_array_new(&w, CLRUN_F32, 3, sh));
        CHECK_OK(NULL, clrun_npy_write(path("gw.npy"), &w));
        clrun_array_free(&w);
        EXPECT(2, "must be float32 of shape", "op", "gemm", path("ga.npy"), path("gb.npy"), "-o", path("x.npy"), "--beta", "1", "-c",
               path("gw.npy"));
    }
    clrun_array r2;
    CHECK_OK(NULL, clrun_npy_read(path("gd.npy"), &r2));
    for (size_t i = 0; i < r2.count; i++) assert_true(((float *)r2.data)[i] == -((float *)r.data)[i] / 2);
    clrun_array_free(&r2);
    EXPECT(2, "inner dimensions differ", "op", "gemm", path("ga.npy"), path("gb.npy"), "--tb", "-o", path("x.npy"));
    EXPECT(0, "wrote", "op", "gemm", path("ga.npy"), path("ga.npy"), "--tb", "-o", path("x.npy"), "--backend", "cpu-kernel");
    EXPECT(0, "wrote", "op", "gemm", path("ga.npy"), path("ga.npy"), "--tb", "-o", path("x.npy"), "--backend", "gpu-kernel");
    EXPECT(0, "wrote", "op", "gemm", path("ga.npy"), path("gb.npy"), "-o", path("x.npy"), "--backend", "kernel");
    EXPECT(0, "{\"op\": \"gemm\", \"output\": \"", "op", "gemm", path("ga.npy"), path("gb.npy"), "-o", path("x.npy"), "--json");
    assert_non_null(strstr(out_text, "\"dtype\": \"f32\", \"shape\": ["));
    assert_null(strstr(out_text, "wrote"));
    EXPECT(2, "--beta needs", "op", "gemm", path("ga.npy"), path("gb.npy"), "--beta", "1", "-o", path("x.npy"));
    EXPECT(2, "--backend wants", "op", "gemm", path("ga.npy"), path("gb.npy"), "--backend", "magic", "-o", path("x.npy"));
    EXPECT(2, "mma.sync, gpu-kernel", "op", "gemm", path("ga.npy"), path("gb.npy"), "--backend", "gpu", "-o", path("x.npy"));
    EXPECT(2, "must be float32", "op", "gemm", path("ga.npy"), path("gb.npy"), "-c", path("ga.npy"), "--beta", "1", "-o", path("x.npy"));
    /* float16 and bf16 inputs (small integers: exact in both), float32 out, equal to the f32 product */
    for (int bf = 0; bf < 2; bf++) {
        clrun_array a16, b16, r16;
        CHECK_OK(NULL, clrun_array_new(&a16, bf ? CLRUN_U16 : CLRUN_F16, 3, ash));
        CHECK_OK(NULL, clrun_array_new(&b16, bf ? CLRUN_U16 : CLRUN_F16, 3, bsh));
        for (size_t i = 0; i < a.count; i++) {
            float v = ((float *)a.data)[i];
            ((uint16_t *)a16.data)[i] = bf ? clrun_f32_to_bf16(v) : clrun_f32_to_f16(v);
        }
        for (size_t i = 0; i < b.count; i++) {
            float v = ((float *)b.data)[i];
            ((uint16_t *)b16.data)[i] = bf ? clrun_f32_to_bf16(v) : clrun_f32_to_f16(v);
        }
        CHECK_OK(NULL, clrun_npy_write(path("ha.npy"), &a16));
        CHECK_OK(NULL, clrun_npy_write(path("hb.npy"), &b16));
        if (bf) EXPECT(0, "from bf16 inputs", "op", "gemm", path("ha.npy"), path("hb.npy"), "-o", path("hc.npy"), "--alpha", "2", "--bf16");
        else EXPECT(0, "from f16 inputs", "op", "gemm", path("ha.npy"), path("hb.npy"), "-o", path("hc.npy"), "--alpha", "2");
        CHECK_OK(NULL, clrun_npy_read(path("hc.npy"), &r16));
        assert_int_equal(r16.dtype, CLRUN_F32);
        assert_int_equal(r16.count, r.count);
        assert_memory_equal(r16.data, r.data, r.bytes);
        clrun_array_free(&r16), clrun_array_free(&a16), clrun_array_free(&b16);
    }
    EXPECT(2, "be float32 or both float16", "op", "gemm", path("ga.npy"), path("ha.npy"), "-o", path("x.npy"));
    EXPECT(2, "uint16 arrays of bf16", "op", "gemm", path("ga.npy"), path("gb.npy"), "--bf16", "-o", path("x.npy"));
    clrun_array_free(&a), clrun_array_free(&b), clrun_array_free(&r);
}

static void tune_gemm(void **state)
{
    (void)state;
    char dir[4300], save[4300];
    const int had = getenv("CLRUN_CACHE_DIR") != NULL; /* restored as found: unset stays unset */
    snprintf(save, sizeof save, "%s", had ? getenv("CLRUN_CACHE_DIR") : "");
    snprintf(dir, sizeof dir, "%s/tunecache", tmp);
    setenv("CLRUN_CACHE_DIR", dir, 1);
    EXPECT(0, "best large", "tune", "gemm", "--quick", "--size", "64", "--dry-run");
    assert_null(strstr(out_text, "stored in"));
    EXPECT(0, "stored in", "tune", "gemm", "--quick", "--size", "64");
    char *p = strstr(out_text, "stored in ") + 10, file[4400];
    snprintf(file, sizeof file, "%.*s", (int)strcspn(p, "\n"), p);
    FILE *f = fopen(file, "r");
    assert_non_null(f);
    char text[8192] = ""; /* a GPU's file has a line per row, key and class */
    size_t got = fread(text, 1, sizeof text - 1, f);
    text[got] = 0;
    fclose(f);
    /* every class's tiles for the portable kernel and its fastest backend; the CPU kernel's per type */
    assert_non_null(strstr(text, "\ngpu-kernel small "));
    assert_non_null(strstr(text, "\ngpu-kernel large-fast "));
    assert_non_null(strstr(text, "\nauto large "));
    assert_non_null(strstr(text, "\ncpu-kernel f32 "));
    /* clrun_gemm uses the stored parameters: the product must still be right */
    EXPECT(0, "wrote", "op", "gemm", path("ga.npy"), path("gb.npy"), "-o", path("gt.npy"), "--backend", "gpu-kernel", "--alpha", "2");
    clrun_array r1, r2;
    CHECK_OK(NULL, clrun_npy_read(path("gt.npy"), &r1));
    CHECK_OK(NULL, clrun_npy_read(path("gc.npy"), &r2));
    assert_memory_equal(r1.data, r2.data, r1.bytes);
    /* a damaged tuning file is ignored, not trusted */
    f = fopen(file, "w");
    fputs("small 0,0,0,0,0,0,0\nlarge 4096,4096,64,1,1,0,0\ngpu-kernel large-fast 0,0,0,0,0,0,0\ngpu-kernel small 64,64\n"
          "cpu-kernel f32 5,6\nauto large warp-drive\nwgmma f16 1,2,3\n",
          f);
    fclose(f);
    EXPECT(0, "wrote", "op", "gemm", path("ga.npy"), path("gb.npy"), "-o", path("gt.npy"), "--backend", "gpu-kernel", "--alpha", "2");
    clrun_array_free(&r1);
    CHECK_OK(NULL, clrun_npy_read(path("gt.npy"), &r1));
    assert_memory_equal(r1.data, r2.data, r1.bytes);
    clrun_array_free(&r1), clrun_array_free(&r2);
    EXPECT(2, "unknown tuning target", "tune", "fft");
    EXPECT(2, "what to tune", "tune");
    EXPECT(2, "--size wants", "tune", "gemm", "--size", "3");
    if (had) setenv("CLRUN_CACHE_DIR", save, 1);
    else unsetenv("CLRUN_CACHE_DIR");
}

static void run_sim_files(void **state)
{
    (void)state;
    EXPECT(0, "\"dumps\": [{\"arg\": \"c\", \"type\": \"f32\", \"values\": [1.5, 4.5, 7.5, 10.5, 16.5, 19.5, 22.5, 25.5]}]", "run", "--sim",
           SIMDIR "/vecadd.sim", "--json"); /* --json keeps the dumped buffers */
    EXPECT(0, "c[7] = 25.5", "run", "--sim", SIMDIR "/vecadd.sim");
    for (int i = 0; i < 8; i++) {
        char line[64];
        snprintf(line, sizeof line, "c[%d] = %g\n", i, (i + (i < 4 ? 0.5 : 1.5)) * 3);
        assert_non_null(strstr(out_text, line));
    }
    { /* exactly oclgrind-kernel's output: hex dumps, floats to 6 digits, no launch line unless --timing */
        const char sim_fmt[] =
            KDIR "/cli.cl\ncopy_bytes\n8 1 1\n8 1 1\n<size=8 uchar dump hex fill=0>\n<size=8 uchar hex>\nff 10 0a 00 01 02 03 7f\n"
                 "<size=4 uint>\n8\n";
        write_bytes("fmt.sim", sim_fmt, sizeof sim_fmt - 1);
        EXPECT(0, "\nArgument 'dst': 8 bytes\n  dst[0] = 0xff\n  dst[1] = 0x10\n  dst[2] = 0x0a\n  dst[3] = 0x00\n", "run", "--sim",
               path("fmt.sim"));
        if (strstr(out_text, "global") || strstr(out_text, " ms")) fail_msg("no launch line without --timing: %s", out_text);
        const char sim_float[] =
            KDIR "/cli.cl\ncopy_bytes\n8 1 1\n8 1 1\n<size=8 float dump fill=0>\n<size=8 float>\n42.24 -0.000123456789\n"
                 "<size=4 uint>\n8\n";
        write_bytes("float.sim", sim_float, sizeof sim_float - 1);
        EXPECT(0, "  dst[0] = 42.24\n  dst[1] = -0.000123457\n\n", "run", "--sim", path("float.sim"));
        const char sim_int[] =
            KDIR "/cli.cl\ncopy_bytes\n8 1 1\n8 1 1\n<size=8 int dump hex fill=0>\n<size=8 int>\n-1 010\n<size=4 uint>\n8\n";
        write_bytes("int.sim", sim_int, sizeof sim_int - 1);
        EXPECT(0, "  dst[0] = 0xffffffff\n  dst[1] = 0x0000000a\n", "run", "--sim", path("int.sim")); /* 010 is ten */
        EXPECT(0, "copy_bytes on", "run", "--sim", path("int.sim"), "--timing");
    }
    EXPECT(0, "dst[0] = 255", "run", "--sim", SIMDIR "/hex.sim");
    assert_non_null(strstr(out_text, "dst[2] = 10"));
    assert_non_null(strstr(out_text, "dst[7] = 127"));
    EXPECT(2, "unexpected end of file while reading the work-group size", "run", "--sim", SIMDIR "/missing_sizes.sim");
    EXPECT(2, "wants 4 values, found 3", "run", "--sim", SIMDIR "/short_data.sim");
    EXPECT(2, "unrecognised header token 'frobnicate'", "run", "--sim", SIMDIR "/bad_header.sim");
    EXPECT(2, "does not give 4 values", "run", "--sim", SIMDIR "/bad_range.sim");
    EXPECT(2, "cannot read", "run", "--sim", SIMDIR "/nope.sim");
    EXPECT(2, "drop -k", "run", "--sim", SIMDIR "/vecadd.sim", "-k", "x");
    const char sim_missing_kernel[] = "nope.cl\nk\n1 1 1\n1 1 1\n";
    write_bytes("k.sim", sim_missing_kernel, sizeof sim_missing_kernel - 1);
    EXPECT(2, "nope.cl", "run", "--sim", path("k.sim"));
    const char sim_bad_wg[] =
        KDIR "/cli.cl\ncopy_bytes\n10 1 1\n3 1 1\n<size=10 uchar fill=0>\n<size=10 uchar fill=1>\n<size=4 uint>\n10\n";
    write_bytes("wg.sim", sim_bad_wg, sizeof sim_bad_wg - 1);
    EXPECT(2, "divides the global size", "run", "--sim", path("wg.sim")); /* the device's refusal: PoCL has no non-uniform groups */
    { /* by-value vectors and structs, an empty buffer, --build-options as oclgrind-kernel spells it */
        const char sim_bv[] = KDIR "/cli.cl\nbyvalue\n1 1 1\n1 1 1\n<size=12 dump fill=0>\n<size=16>\n1 2 3 4\n<size=12>\n5 6 7\n"
                                   "<size=12 float>\n42 3 18\n<size=0>\n";
        write_bytes("bv.sim", sim_bv, sizeof sim_bv - 1);
        EXPECT(0, "\nArgument 'out': 12 bytes\n  out[0] = 49\n  out[1] = 765\n  out[2] = 144\n\n", "run", "--build-options", "-DUNUSED=1",
               "--sim", path("bv.sim"));
        const char sim_bv_short[] = KDIR "/cli.cl\nbyvalue\n1 1 1\n1 1 1\n<size=12 dump fill=0>\n<size=8>\n1 2\n<size=12>\n5 6 7\n"
                                         "<size=12 float>\n42 3 18\n<size=0>\n";
        write_bytes("bv2.sim", sim_bv_short, sizeof sim_bv_short - 1);
        EXPECT(2, "argument 1 (float4 v) takes 4 values", "run", "--sim", path("bv2.sim"));
        const char sim_struct_short[] = KDIR "/cli.cl\nbyvalue\n1 1 1\n1 1 1\n<size=12 dump fill=0>\n<size=16>\n1 2 3 4\n<size=12>\n5 6 7\n"
                                             "<size=8 float>\n42 3\n<size=0>\n";
        write_bytes("bv3.sim", sim_struct_short, sizeof sim_struct_short - 1);
        EXPECT(2, "argument 3 (abc s) of kernel byvalue is 12 bytes; 8 given", "run", "--sim", path("bv3.sim"));
        const char sim_struct_untyped[] =
            KDIR "/cli.cl\nbyvalue\n1 1 1\n1 1 1\n<size=12 dump fill=0>\n<size=16>\n1 2 3 4\n<size=12>\n5 6 7\n"
                 "<size=12>\n42 3 18\n<size=0>\n";
        write_bytes("bv4.sim", sim_struct_untyped, sizeof sim_struct_untyped - 1);
        EXPECT(2, "give its type in the header", "run", "--sim", path("bv4.sim"));
        const char sim_local0[] = KDIR "/cli.cl\ngroup_sums\n4 1 1\n4 1 1\n<size=4 fill=0>\n<size=16 fill=1>\n<size=0>\n";
        write_bytes("l0.sim", sim_local0, sizeof sim_local0 - 1);
        EXPECT(2, "size=0 is only valid for buffers (__local memory needs at least one byte)", "run", "--sim", path("l0.sim"));
    }
    const char sim_extra[] = KDIR "/cli.cl\ncopy_bytes\n1 1 1\n1 1 1\n<size=1 uchar>\n1\n<size=1 uchar>\n2\n<size=4>\n1\nextra\n";
    write_bytes("extra.sim", sim_extra, sizeof sim_extra - 1);
    EXPECT(2, "unexpected 'extra'", "run", "--sim", path("extra.sim"));
}

static void run_bad_npy_files(void **state)
{
    (void)state;
    char spec[4300];
    struct {
        const char *name;
        int major;
        const char *dict;
        size_t data;
        int fix;
        const char *needle;
    } cases[] = {
        {"good.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 16, 1, NULL},
        {"v2.npy", 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 16, 1, NULL},
        {"truncated.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 15, 1, "truncated"},
        {"trailing.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 17, 1, "after the data"},
        {"badlen.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 16, 0, "header length"},
        {"huge.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999, 99999999999), }", 16, 1, "too large"},
        {"neg.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }", 16, 1, "negative"},
        {"dtype.npy", 1, "{'descr': '<m8', 'fortran_order': False, 'shape': (2,), }", 16, 1, "unsupported dtype '<m8'"},
        {"struct.npy", 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }", 16, 1, "structured"},
        {"fortran.npy", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16, 1, "Fortran"},
        {"bigendian.npy", 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }", 16, 1, "big-endian"},
        {"nokey.npy", 1, "{'descr': '<f4', 'shape': (4,), }", 16, 1, "lacks 'fortran_order'"},
        {"garbage.npy", 1, "not a dict at all", 16, 1, "not a Python dictionary"},
        {"version.npy", 9, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 16, 1, "format version 9"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_npy(cases[i].name, cases[i].major, cases[i].dict, cases[i].data, cases[i].fix);
        snprintf(spec, sizeof spec, "%s", path(cases[i].name));
        if (!cases[i].needle) {
            EXPECT(0, "wrote", "run", KDIR "/cli.cl", "-k", "copy_bytes", "-g", "16", "out:like=1@/dev/null", spec, "16");
            continue;
        }
        EXPECT(2, cases[i].needle, "run", KDIR "/cli.cl", "-k", "copy_bytes", "-g", "16", "out:u8:16", spec, "16");
        assert_non_null(strstr(err_text, cases[i].name)); /* the message names the file */
    }
    write_bytes("magic.npy", "\x93NUMPX\x01\x00", 8);
    snprintf(spec, sizeof spec, "%s", path("magic.npy"));
    EXPECT(2, "magic", "run", KDIR "/cli.cl", "-k", "copy_bytes", "-g", "16", "out:u8:16", spec, "16");
    EXPECT(2, "No such file", "run", KDIR "/cli.cl", "-k", "copy_bytes", "-g", "16", "out:u8:16", "/nonexistent/x.npy", "16");
}

static void run_bad_command_lines(void **state)
{
    (void)state;
    const char *cl = KDIR "/cli.cl";
    EXPECT(2, "No such file", "run", "/nonexistent/k.cl", "-k", "x", "-g", "1");
    EXPECT(2, "no kernel file", "run", "-k", "x", "-g", "1");
    EXPECT(2, "no kernel name", "run", cl, "-g", "1");
    EXPECT(2, "no global size", "run", cl, "-k", "axpb");
    EXPECT(2, "has no kernel named \"nope\"", "run", cl, "-k", "nope", "-g", "1");
    assert_non_null(strstr(err_text, "axpb"));
    EXPECT(2, "takes 5 arguments", "run", cl, "-k", "axpb", "-g", "4", "out:f32:4", "zeros:f32:4");
    EXPECT(2, "takes 5 arguments", "run", cl, "-k", "axpb", "-g", "4", "out:f32:4", "zeros:f32:4", "1", "1", "4", "5");
    EXPECT(2, "-g '0'", "run", cl, "-k", "axpb", "-g", "0", "out:f32:4", "zeros:f32:4", "1", "1", "4");
    EXPECT(2, "-g 'a,b'", "run", cl, "-k", "axpb", "-g", "a,b", "out:f32:4");
    EXPECT(2, "-g '1,2,3,4'", "run", cl, "-k", "axpb", "-g", "1,2,3,4", "out:f32:4");
    EXPECT(2, "-l has 2 dimensions", "run", cl, "-k", "axpb", "-g", "4", "-l", "2,2", "out:f32:4");
    EXPECT(2, "unknown type 'f13'", "run", cl, "-k", "axpb", "-g", "4", "out:f13:4", "zeros:f32:4", "1", "1", "4");
    EXPECT(2, "not a shape", "run", cl, "-k", "axpb", "-g", "4", "out:f32:4y", "zeros:f32:4", "1", "1", "4");
    EXPECT(2, "at least one element", "run", cl, "-k", "axpb", "-g", "4", "out:f32:0", "zeros:f32:4", "1", "1", "4");
    EXPECT(2, "unknown form 'blah'", "run", cl, "-k", "axpb", "-g", "4", "blah:f32:4", "zeros:f32:4", "1", "1", "4");
    EXPECT(2, "neither a file.npy nor a number", "run", cl, "-k", "axpb", "-g", "4", "hello", "zeros:f32:4", "1", "1", "4");
    EXPECT(2, "gets i32 data", "run", cl, "-k", "axpb", "-g", "4", "out:f32:4", "zeros:i32:4", "1", "1", "4");
    EXPECT(2, "expects a buffer", "run", cl, "-k", "axpb", "-g", "4", "out:f32:4", "f32:1", "1", "1", "4");
    EXPECT(2, "not the number", "run", cl, "-k", "axpb", "-g", "4", "out:f32:4", "5", "1", "1", "4");
    EXPECT(2, "not a valid float", "run", cl, "-k", "axpb", "-g", "4", "out:f32:4", "zeros:f32:4", "1e99", "1", "4");
    EXPECT(2, "of type float, not double", "run", cl, "-k", "axpb", "-g", "4", "out:f32:4", "zeros:f32:4", "f64:1", "1", "4");
    EXPECT(2, "want fill:TYPE:SHAPE:VALUE", "run", cl, "-k", "axpb", "-g", "4", "out:f32:4", "fill:f32:4", "1", "1", "4");
    EXPECT(2, "LO < HI", "run", cl, "-k", "axpb", "-g", "4", "out:f32:4", "rand:f32:4:1:2:1", "1", "1", "4");
    EXPECT(2, "not a buffer with a shape", "run", cl, "-k", "axpb", "-g", "4", "out:like=0", "zeros:f32:4", "1", "1", "4");
    EXPECT(2, "nothing after '@'", "run", cl, "-k", "axpb", "-g", "4", "out:f32:4@", "zeros:f32:4", "1", "1", "4");
    EXPECT(2, "only buffers can be saved", "run", cl, "-k", "axpb", "-g", "4", "out:f32:4", "zeros:f32:4", "f32:1@x.npy", "1", "4");
    EXPECT(2, "--check wants ARG=EXPECTED.npy", "run", cl, "-k", "axpb", "-g", "4", "--check", "dst", "out:f32:4");
    EXPECT(2, "no argument of kernel axpb", "run", cl, "-k", "axpb", "-g", "4", "--check", "zz=a.npy", "out:f32:4", "zeros:f32:4", "1", "1",
           "4");
    EXPECT(2, "is not a buffer", "run", cl, "-k", "axpb", "-g", "4", "--check", "a=a.npy", "out:f32:4", "zeros:f32:4", "1", "1", "4");
    EXPECT(2, "--repeat wants", "run", cl, "-k", "axpb", "-g", "4", "--repeat", "x", "out:f32:4");
    EXPECT(2, "needs a value", "run", cl, "-k");
    EXPECT(2, "-D ' x'", "run", cl, "-D", " x", "-k", "axpb", "-g", "4");
    EXPECT(4, "undeclared_identifier_xyz", "run", KDIR "/broken.cl", "-k", "broken", "-g", "4", "out:f32:4");
    assert_non_null(strstr(err_text, "build log"));
    EXPECT(4, "-bogus-flag", "run", cl, "-O", "-bogus-flag", "-k", "axpb", "-g", "4", "out:f32:4", "zeros:f32:4", "1", "1", "4");
    EXPECT(3, "Devices:", "run", "-d", "nosuch:9", cl, "-k", "axpb", "-g", "4", "out:f32:4", "zeros:f32:4", "1", "1", "4");
    /* -D reaches the compiler: main.cl's offset becomes 4 */
    char o[4300], e[4300];
    snprintf(o, sizeof o, "out:f32:3@%s", path("d.npy"));
    EXPECT(0, "wrote", "run", KDIR "/main.cl", "-k", "scale_add", "-g", "3", "-D", "TEST_OFFSET=4.0f", o, "fill:f32:3:1", "3");
    snprintf(e, sizeof e, "dst=%s", path("d.npy"));
    EXPECT(0, "match", "run", cl, "-k", "axpb", "-g", "3", "--check", e, "out:f32:3", "fill:f32:3:1", "3", "4", "3");
}

/* OUT/shapes.png and OUT/pgm.png equal the OpenCV goldens in canny_dir (L1, 50/100); removed after. */
static void expect_canny_goldens(const char *canny_dir, const char *out)
{
    static const char *const names[2] = {"shapes", "pgm"};
    char p[4200];
    clrun_image got, want;
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/golden/%s.l1-50-100.png", canny_dir, names[i]);
        CHECK_OK(NULL, clrun_image_read(p, &want));
        snprintf(p, sizeof p, "%s/%s.png", out, names[i]);
        CHECK_OK(NULL, clrun_image_read(p, &got));
        assert_memory_equal(got.data, want.data, got.width * got.height);
        clrun_image_free(&got), clrun_image_free(&want);
        unlink(p);
    }
}

/* clrun op canny: one image to a file equal to OpenCV's golden, several into a folder, bad input. */
/* op canny --devices: eight images dealt over PoCL's two devices, every output byte for byte the
 * one-device run's; both devices named in the dealing lines. */
static void op_canny_devices(void **state)
{
    (void)state;
#define CD(name) TEST_DATA_DIR "/canny/" name
#define CD_INPUTS                                                                                                                         \
    CD("shapes.png"), CD("noise-odd.png"), CD("spiral.png"), CD("text.png"), CD("color.png"), CD("gradient.png"), CD("checkerboard.png"), \
        CD("frame.png")
    static const char *const names[] = {"shapes", "noise-odd", "spiral", "text", "color", "gradient", "checkerboard", "frame"};
    EXPECT(0, NULL, "op", "canny", CD_INPUTS, "-o", path("cd1"), "-d", "0", "-q");
    EXPECT(0, "device 1, ", "op", "canny", CD_INPUTS, "-o", path("cd2"), "--devices", "all");
    assert_non_null(strstr(err_text, "device 0, "));
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char a[4300], b[4300], cmd[9000];
        snprintf(a, sizeof a, "%s/cd1/%s.png", tmp, names[i]);
        snprintf(b, sizeof b, "%s/cd2/%s.png", tmp, names[i]);
        snprintf(cmd, sizeof cmd, "cmp -s %s %s", a, b);
        if (system(cmd) != 0) fail_msg("%s differs between one device and the group", names[i]);
    }
    EXPECT(2, "not both", "op", "canny", CD_INPUTS, "-o", path("cd3"), "--devices", "all", "-d", "0");
    EXPECT(2, "named twice", "op", "canny", CD_INPUTS, "-o", path("cd3"), "--devices", "1,1");
#undef CD_INPUTS
#undef CD
}

/* A truncated JPEG in a batch is an error naming it while the others are written. */
static void op_canny_damaged_files(void **state)
{
    (void)state;
    char inputs[4][4200];
    const int n = 4;
    clrun_image img;
    CHECK_OK(NULL, clrun_image_new(&img, 3, 2, 1));
    for (int i = 0; i < n; i++) {
        snprintf(inputs[i], sizeof inputs[i], "%s/tiny%02d.png", tmp, i);
        img.data[0] = (unsigned char)(i * 5);
        CHECK_OK(NULL, clrun_image_write(inputs[i], &img));
    }
    clrun_image_free(&img);
    /* a truncated JPEG among good files */
    char good[4200], cut[4200], out2[4200];
    unsigned char buf[8192];
    snprintf(good, sizeof good, "%s/jpeg/baseline-420.jpg", TEST_DATA_DIR);
    FILE *f = fopen(good, "rb");
    const size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    snprintf(cut, sizeof cut, "%s/half-downloaded.jpg", tmp);
    f = fopen(cut, "wb");
    fwrite(buf, 1, len / 2, f);
    fclose(f);
    snprintf(out2, sizeof out2, "%s/cutout", tmp);
    EXPECT(2, "half-downloaded.jpg: not a readable JPEG: damaged or truncated", "op", "canny", good, cut, inputs[0], "-o", out2, "-q");
    assert_non_null(strstr(err_text, "1 of 3 images failed"));
}

static void op_canny(void **state)
{
    (void)state;
    const char *dir = TEST_DATA_DIR "/canny";
    EXPECT(0, "wrote", "op", "canny", TEST_DATA_DIR "/canny/color.png", "-o", path("c.png"), "--low", "30", "--high", "90", "--l2");
    clrun_image got, want;
    CHECK_OK(NULL, clrun_image_read(path("c.png"), &got));
    CHECK_OK(NULL, clrun_image_read(TEST_DATA_DIR "/canny/golden/color.l2-30-90.png", &want));
    assert_int_equal(got.width * got.height, want.width * want.height);
    assert_memory_equal(got.data, want.data, got.width * got.height);
    clrun_image_free(&got), clrun_image_free(&want);
    EXPECT(0, "stages over 2 images", "op", "canny", TEST_DATA_DIR "/canny/shapes.png", TEST_DATA_DIR "/canny/pgm.pgm", "-o", path("edges"),
           "--stages", "--overwrite");
    assert_non_null(strstr(err_text, "read and decode"));
    expect_canny_goldens(dir, path("edges"));
    /* a batch streams through worker threads: a bad file in the middle is reported by name, the
     * others are still written, each as its golden, and the exit status says it after a count */
    write_bytes("bad.png", "not an image", 12);
    for (int jobs = 1; jobs <= 3; jobs += 2) {
        char j[16];
        snprintf(j, sizeof j, "%d", jobs);
        EXPECT(2, "1 of 3 images failed", "op", "canny", TEST_DATA_DIR "/canny/shapes.png", path("bad.png"), TEST_DATA_DIR "/canny/pgm.pgm",
               "-o", path("batch"), "--jobs", j);
        assert_non_null(strstr(err_text, "bad.png: not a PNG"));
        expect_canny_goldens(dir, path("batch"));
    }
    EXPECT(0, NULL, "op", "canny", TEST_DATA_DIR "/canny/shapes.png", TEST_DATA_DIR "/canny/pgm.pgm", "-o", path("batch"), "--quiet");
    if (strstr(out_text, "->") || strchr(err_text, '\r'))
        fail_msg("--quiet, and no terminal: no lines; stdout %s stderr %s", out_text, err_text);
    /* a JPEG input: the edges of the pixels cv2.imread returns for it (its golden) */
    EXPECT(0, "wrote", "op", "canny", TEST_DATA_DIR "/jpeg/baseline-420.jpg", "-o", path("j1.png"));
    EXPECT(0, "wrote", "op", "canny", TEST_DATA_DIR "/jpeg/baseline-420.golden.png", "-o", path("j2.png"));
    CHECK_OK(NULL, clrun_image_read(path("j1.png"), &got));
    CHECK_OK(NULL, clrun_image_read(path("j2.png"), &want));
    assert_memory_equal(got.data, want.data, got.width * got.height);
    clrun_image_free(&got), clrun_image_free(&want);
    EXPECT(2, "a CMYK JPEG", "op", "canny", TEST_DATA_DIR "/jpeg/cmyk.jpg", "-o", path("j3.png"));
    EXPECT(2, "--jobs wants 1 to 1024", "op", "canny", TEST_DATA_DIR "/canny/shapes.png", "-o", path("x.png"), "--jobs", "0");
    EXPECT(0, "wrote", "op", "canny", TEST_DATA_DIR "/canny/frame.png", "-o", path("b.png"), "--low", "20", "--high", "60", "--blur", "3");
    CHECK_OK(NULL, clrun_image_read(path("b.png"), &got));
    CHECK_OK(NULL, clrun_image_read(TEST_DATA_DIR "/canny/golden/frame.b3-l1-20-60.png", &want));
    assert_memory_equal(got.data, want.data, got.width * got.height);
    clrun_image_free(&got), clrun_image_free(&want);
    EXPECT(2, "--blur wants", "op", "canny", TEST_DATA_DIR "/canny/one.png", "-o", path("x.png"), "--blur", "4");
    EXPECT(0, "wrote", "op", "canny", TEST_DATA_DIR "/canny/frame.png", "-o", path("s.png"), "--low", "20", "--high", "60", "--blur",
           "5,1.4");
    CHECK_OK(NULL, clrun_image_read(path("s.png"), &got));
    CHECK_OK(NULL, clrun_image_read(TEST_DATA_DIR "/canny/golden/frame.b5s1.4-l1-20-60.png", &want));
    assert_memory_equal(got.data, want.data, got.width * got.height);
    clrun_image_free(&got), clrun_image_free(&want);
    EXPECT(2, "--blur wants", "op", "canny", TEST_DATA_DIR "/canny/one.png", "-o", path("x.png"), "--blur", "5,-1");
    EXPECT(2, "--blur wants", "op", "canny", TEST_DATA_DIR "/canny/one.png", "-o", path("x.png"), "--blur", "5,x");
    EXPECT(0, "usage: clrun op canny", "op", "canny", "--help");
    setenv("CLRUN_PROFILE", "1", 1); /* the per-kernel table at exit, on stderr */
    EXPECT(0, "clrun profile: device time per kernel", "op", "canny", TEST_DATA_DIR "/canny/one.png", "-o", path("p.png"));
    if (!strstr(err_text, "clrun_canny_") || strstr(out_text, "clrun profile")) fail_msg("profile table: %s", err_text);
    setenv("CLRUN_PROFILE", "0", 1);
    EXPECT(0, "wrote", "op", "canny", TEST_DATA_DIR "/canny/one.png", "-o", path("p.png"));
    if (strstr(err_text, "clrun profile")) fail_msg("CLRUN_PROFILE=0 printed a profile: %s", err_text);
    unsetenv("CLRUN_PROFILE");
    EXPECT(2, "cannot open", "op", "canny", path("nothing.png"), "-o", path("x.png"));
    /* outputs that collide, or land on an input, are refused before anything is written */
    mkdir(path("d1"), 0755), mkdir(path("d2"), 0755), mkdir(path("outs"), 0755);
    clrun_image im;
    CHECK_OK(NULL, clrun_image_read(TEST_DATA_DIR "/canny/one.png", &im));
    CHECK_OK(NULL, clrun_image_write(path("d1/x.png"), &im));
    CHECK_OK(NULL, clrun_image_write(path("d2/x.png"), &im));
    CHECK_OK(NULL, clrun_image_write(path("d1/x.pgm"), &im));
    clrun_image_free(&im);
    EXPECT(2, "would both write", "op", "canny", path("d1/x.png"), path("d2/x.png"), "-o", path("outs"));
    EXPECT(2, "would both write", "op", "canny", path("d1/x.png"), path("d1/x.pgm"), "-o", path("outs"));
    EXPECT(2, "would replace the input", "op", "canny", path("d1/x.png"), path("d2/x.png"), "-o", path("d1")); /* -o . among the inputs */
    EXPECT(2, "would replace the input", "op", "canny", path("d1/x.png"), "-o", path("d1/x.png"));
    CHECK_OK(NULL, clrun_image_read(path("d1/x.png"), &im)); /* untouched: still the photo, not 0/255 edges */
    int gray = 0;
    for (size_t i = 0; i < im.width * im.height; i++) gray |= im.data[i] != 0 && im.data[i] != 255;
    assert_true(gray);
    clrun_image_free(&im);
    EXPECT(0, "wrote", "op", "canny", path("d1/x.png"), "-o", path("d1/x.png"), "--overwrite");
    /* -o -: the PNG on stdout, the note on stderr */
    EXPECT(0, "wrote -", "op", "canny", TEST_DATA_DIR "/canny/one.png", "-o", "-");
    if (!strstr(err_text, "wrote -") || memcmp(out_text, "\x89PNG", 4) != 0) fail_msg("stdout should hold the PNG: %.40s", out_text);
    EXPECT(2, "-o - takes one input", "op", "canny", path("d1/x.png"), path("d2/x.png"), "-o", "-");
    EXPECT(2, "not a PNG", "op", "canny", TEST_DATA_DIR "/canny/MANIFEST", "-o", path("x.png"));
    EXPECT(2, "--low wants a number", "op", "canny", TEST_DATA_DIR "/canny/one.png", "-o", path("x.png"), "--low", "abc");
    EXPECT(2, "--aperture wants 3, 5 or 7", "op", "canny", TEST_DATA_DIR "/canny/one.png", "-o", path("x.png"), "--aperture", "4");
    EXPECT(2, "no output", "op", "canny", TEST_DATA_DIR "/canny/one.png");
    EXPECT(2, "no input image", "op", "canny", "-o", path("x.png"));
}

/* clrun op cast: float32 -> float16 / bfloat16 (uint16 .npy) -> float32, against the host converters */

/* Ctrl-C trials: clrun run writing a 32 MiB output, interrupted at random moments, 30 times. Each
 * time the destination holds the old file or the complete new one, and no temporary file is left
 * (the output has no name until its last step: by construction, not by a handler's clean-up). */
static void ctrl_c_leaves_nothing(void **state)
{
    (void)state;
    const char *dst = path("intr.npy");
    char spec[4300];
    snprintf(spec, sizeof spec, "out:f32:8388608@%s", dst);
    clrun_array old;
    const size_t one = 1;
    CHECK_OK(NULL, clrun_array_new(&old, CLRUN_F32, 1, &one));
    uint64_t rng = test_seed();
    int interrupted = 0, finished = 0;
    for (int trial = 0; trial < 30; trial++) {
        CHECK_OK(NULL, clrun_npy_write(dst, &old));
        char *argv[] = {(char *)clrun_bin, "run", KDIR "/cli.cl", "-k", "axpb", "-g", "8388608", spec, "rand:f32:8388608:3", "2", "1",
                        "8388608",         NULL};
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        pid_t pid;
        assert_int_equal(posix_spawn(&pid, clrun_bin, &fa, NULL, argv, environ), 0);
        posix_spawn_file_actions_destroy(&fa);
        usleep((useconds_t)(20000 + rng_next(&rng) % 400000)); /* 20 to 420 ms: start-up, the run, the write */
        kill(pid, SIGINT);
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (WIFSIGNALED(status)) interrupted++;
        else finished += WEXITSTATUS(status) == 0;
        clrun_array got;
        CHECK_OK(NULL, clrun_npy_read(dst, &got)); /* old or new, never half of one */
        if (got.count != 1 && got.count != 8388608) fail_msg("trial %d: %s holds %zu elements", trial, dst, got.count);
        clrun_array_free(&got);
        DIR *d = opendir(tmp);
        assert_non_null(d);
        for (struct dirent *e; (e = readdir(d));)
            if (!strncmp(e->d_name, ".intr.npy.", 10)) fail_msg("trial %d: %s was left behind", trial, e->d_name);
        closedir(d);
    }
    fprintf(stderr, "ctrl-c trials: %d interrupted, %d finished first\n", interrupted, finished);
    assert_true(interrupted > 0);
    clrun_array_free(&old);
    unlink(dst);
}

/* Inputs and flags that cannot mean what they say are refused in words, exit 2, nothing written. */
static void smaller_refusals(void **state)
{
    (void)state;
    mkdir(path("adir"), 0755);
    EXPECT(2, "is a folder", "op", "canny", path("adir"), "-o", path("adir.png"));
    EXPECT(2, "is a folder", "op", "gemm", path("adir"), path("adir"), "-o", path("adir.npy"));
    clrun_array e, x;
    const size_t zero = 0, four = 4;
    CHECK_OK(NULL, clrun_array_new(&e, CLRUN_F32, 1, &zero));
    CHECK_OK(NULL, clrun_array_new(&x, CLRUN_F32, 1, &four));
    CHECK_OK(NULL, clrun_npy_write(path("qe.npy"), &e));
    CHECK_OK(NULL, clrun_npy_write(path("qx.npy"), &x));
    EXPECT(2, "no elements", "op", "quantize", path("qe.npy"), "-o", path("qq.npy"), "--calibrate");
    EXPECT(0, "0 elements", "op", "quantize", path("qe.npy"), "-o", path("qq.npy"), "--scale", "0.5");
    EXPECT(2, "--symmetric", "op", "quantize", path("qx.npy"), "-o", path("qq2.npy"), "--scale", "0.5", "--symmetric");
    EXPECT(2, "--percentile", "op", "quantize", path("qx.npy"), "-o", path("qq2.npy"), "--scale", "0.5", "--percentile", "99");
    EXPECT(2, "--zero-point", "op", "quantize", path("qx.npy"), "-o", path("qq2.npy"), "--calibrate", "--zero-point", "3");
    assert_int_equal(access(path("qq2.npy"), F_OK), -1);
    clrun_array_free(&e), clrun_array_free(&x);
    /* -O given twice: both kept */
    FILE *f = fopen(path("twoopts.cl"), "w");
    assert_non_null(f);
    fputs("__kernel void k(__global int *o) { o[0] = A + B; }\n", f);
    fclose(f);
    char spec[4300];
    snprintf(spec, sizeof spec, "out:i32:1@%s", path("twoopts.npy"));
    EXPECT(0, "wrote", "run", path("twoopts.cl"), "-k", "k", "-g", "1", "-O", "-DA=40", "-O", "-DB=2", spec);
    clrun_array r;
    CHECK_OK(NULL, clrun_npy_read(path("twoopts.npy"), &r));
    assert_int_equal(((int32_t *)r.data)[0], 42);
    clrun_array_free(&r);
}

static void op_cast(void **state)
{
    (void)state;
    clrun_array a = {0}, r = {0};
    size_t shape[2] = {3, 7};
    CHECK_OK(NULL, clrun_array_new(&a, CLRUN_F32, 2, shape));
    float *x = a.data;
    const float specials[] = {0.0f, -0.0f, 1.0f / 3, 65504.0f, 65520.0f, -1e-8f, 1e30f, INFINITY, NAN, 3.0e-5f, 1.00390625f};
    for (size_t i = 0; i < a.count; i++) x[i] = i < 11 ? specials[i] : (float)i * 0.37f - 2.0f;
    CHECK_OK(NULL, clrun_npy_write(path("f32.npy"), &a));
    EXPECT(0, "wrote", "op", "cast", path("f32.npy"), "--to", "f16", "-o", path("h.npy"));
    CHECK_OK(NULL, clrun_npy_read(path("h.npy"), &r));
    assert_int_equal(r.dtype, CLRUN_F16);
    assert_int_equal(r.ndim, 2);
    for (size_t i = 0; i < a.count; i++)
        if (!isnan(x[i])) assert_int_equal(((uint16_t *)r.data)[i], clrun_f32_to_f16(x[i]));
    clrun_array_free(&r);
    EXPECT(0, "wrote", "op", "cast", path("f32.npy"), "--to", "bf16", "-o", path("b.npy"));
    CHECK_OK(NULL, clrun_npy_read(path("b.npy"), &r));
    assert_int_equal(r.dtype, CLRUN_U16);
    for (size_t i = 0; i < a.count; i++) assert_int_equal(((uint16_t *)r.data)[i], clrun_f32_to_bf16(x[i]));
    clrun_array_free(&r);
    EXPECT(0, "wrote", "op", "cast", path("b.npy"), "--to", "f32", "-o", path("back.npy"));
    CHECK_OK(NULL, clrun_npy_read(path("back.npy"), &r));
    for (size_t i = 0; i < a.count; i++) {
        float want = clrun_bf16_to_f32(clrun_f32_to_bf16(x[i])), got = ((float *)r.data)[i];
        assert_memory_equal(&got, &want, 4);
    }
    clrun_array_free(&r);
    EXPECT(2, "--to wants", "op", "cast", path("f32.npy"), "--to", "f8", "-o", path("x.npy"));
    EXPECT(2, "no target type", "op", "cast", path("f32.npy"), "-o", path("x.npy"));
    EXPECT(2, "the input is f16", "op", "cast", path("h.npy"), "--to", "bf16", "-o", path("x.npy"));
    EXPECT(0, "wrote -", "op", "cast", path("f32.npy"), "--to", "f16", "-o", "-"); /* -o -: the array on stdout */
    {
        char outp[4200];
        clrun_array o;
        snprintf(outp, sizeof outp, "%s/stdout", tmp);
        CHECK_OK(NULL, clrun_npy_read(outp, &o));
        assert_int_equal(o.dtype, CLRUN_F16);
        assert_int_equal(o.count, a.count);
        clrun_array_free(&o);
    }
    EXPECT(2, "the input is f32", "op", "cast", path("f32.npy"), "--to", "f32", "-o", path("x.npy")); /* the input's own type */
    EXPECT(0, "usage: clrun op cast", "op", "cast", "--help");
    clrun_array_free(&a);
}

/* Standard output is JSON records only: one object per line, strings closed, braces and brackets
 * balanced. Returns the number of records. */
static int json_records(const char *text)
{
    int records = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        if (!end) fail_msg("an unterminated line in the JSON output: %s", line);
        if (*line != '{' || end[-1] != '}') fail_msg("not a JSON record: %.*s", (int)(end - line), line);
        int depth = 0, in_str = 0;
        for (const char *c = line; c < end; c++) {
            if (in_str && *c == '\\') c++;
            else if (*c == '"') in_str = !in_str;
            else if (!in_str && (*c == '{' || *c == '[')) depth++;
            else if (!in_str && (*c == '}' || *c == ']')) depth--;
            if (depth == 0 && c + 1 < end && !in_str) fail_msg("text after a record: %.*s", (int)(end - line), line);
        }
        if (depth || in_str) fail_msg("an unbalanced JSON record: %.*s", (int)(end - line), line);
        records++;
        line = end + 1;
    }
    return records;
}

/* --json on every command that prints results: its standard output is the records alone (the
 * lines for people go to standard error), one schema per command as its --help gives it. */
static void json_everywhere(void **state)
{
    (void)state;
    EXPECT(0, "\"devices\": [", "devices", "--json");
    assert_int_equal(json_records(out_text), 1);
    EXPECT(0, "\"compute_units\"", "info", "--json");
    assert_int_equal(json_records(out_text), 1);
    EXPECT(0, "\"multiply\": {\"ok\": true", "demo", "--json", "--edges", path("dj.png"));
    assert_int_equal(json_records(out_text), 1);
    assert_non_null(strstr(out_text, "\"canny\": {\"ok\": true"));
    assert_non_null(strstr(out_text, "\"mlp\": {\"ok\": true"));
    assert_non_null(strstr(out_text, "\"exit\": 0}"));
    assert_non_null(strstr(err_text, "matches the CPU")); /* the lines for people, on stderr */
    EXPECT(3, "\"exit\": 3}", "demo", "--json", "-d", "nosuch:");
    assert_int_equal(json_records(out_text), 2); /* the demo's record, then the error record */
    assert_non_null(strstr(out_text, "\n{\"error\": {\"exit\": 3, \"meaning\": \"no OpenCL platform or device\", \"message\": \"clrun"));
    /* no device: the parts that never ran are null, never records of zeros, and "error" says why */
    assert_non_null(strstr(out_text, "\"multiply\": null, \"matmul\": null, \"canny\": null, \"mlp\": null"));
    assert_non_null(strstr(out_text, "\"error\": \""));
    assert_null(strstr(out_text, "\"kernel_ms\": 0.0000"));
    char dir[4300], save[4300];
    const int had = getenv("CLRUN_CACHE_DIR") != NULL;
    snprintf(save, sizeof save, "%s", had ? getenv("CLRUN_CACHE_DIR") : "");
    snprintf(dir, sizeof dir, "%s/jsoncache", tmp);
    setenv("CLRUN_CACHE_DIR", dir, 1);
    EXPECT(0, "\"stored\": null}", "tune", "gemm", "--quick", "--size", "64", "--dry-run", "--json");
    assert_int_equal(json_records(out_text), 1);
    assert_non_null(strstr(out_text, "{\"backend\": \"gpu-kernel\", \"key\": \"large-fast\", \"tiles\": \""));
    assert_non_null(strstr(out_text, "{\"class\": \"large-fast\", \"backend\": \""));
    assert_non_null(strstr(err_text, "best large"));
    EXPECT(0, "\"stored\": \"", "tune", "gemm", "--quick", "--size", "64", "--json");
    assert_int_equal(json_records(out_text), 1);
    if (had) setenv("CLRUN_CACHE_DIR", save, 1);
    else unsetenv("CLRUN_CACHE_DIR");
    /* op canny: a record per input, in order, a failure's with its error and exit status */
    FILE *f = fopen(path("junk.png"), "w");
    assert_non_null(f);
    fputs("not an image", f);
    fclose(f);
    EXPECT(2, NULL, "op", "canny", TEST_DATA_DIR "/canny/shapes.png", path("junk.png"), TEST_DATA_DIR "/canny/text.png", "-o", path("cj"),
           "--json");
    assert_int_equal(json_records(out_text), 4); /* one per input, then the error record of the command */
    const char *first = strstr(out_text, "shapes.png"), *bad = strstr(out_text, "\"error\": "), *last = strstr(out_text, "text.png");
    assert_true(first && bad && last && first < bad && bad < last);
    assert_non_null(strstr(out_text, "\"exit\": 2}"));
    assert_non_null(strstr(last, "\n{\"error\": {\"exit\": 2, \"meaning\": \"usage error\""));
    EXPECT(0, NULL, "op", "canny", TEST_DATA_DIR "/canny/shapes.png", "-o", path("cj1.png"), "--json");
    assert_int_equal(json_records(out_text), 1);
    assert_null(strstr(out_text, "wrote"));
    EXPECT(0, NULL, "op", "canny", TEST_DATA_DIR "/canny/shapes.png", "-o", "-", "--json"); /* the PNG on stdout, the record on stderr */
    assert_memory_equal(out_text, "\x89PNG", 4);
    assert_int_equal(json_records(err_text), 1);
    /* the ops that write arrays: {"op", "output", "dtype", "shape"} (and what each adds) */
    const size_t shp[2] = {3, 8};
    clrun_array x;
    CHECK_OK(NULL, clrun_array_new(&x, CLRUN_F32, 2, shp));
    for (size_t i = 0; i < x.count; i++) ((float *)x.data)[i] = (float)i * 0.25f - 2.0f;
    CHECK_OK(NULL, clrun_npy_write(path("jx.npy"), &x));
    clrun_array_free(&x);
    EXPECT(0, "{\"op\": \"cast\", \"output\": \"", "op", "cast", path("jx.npy"), "--to", "f16", "-o", path("jh.npy"), "--json");
    assert_int_equal(json_records(out_text), 1);
    assert_non_null(strstr(out_text, "\"dtype\": \"f16\", \"shape\": [3, 8]}"));
    EXPECT(0, "\"zero_point\": [-3], \"axis\": null}", "op", "quantize", path("jx.npy"), "-o", path("jq.npy"), "--scale", "0.25",
           "--zero-point", "-3", "--json");
    assert_int_equal(json_records(out_text), 1);
    assert_non_null(strstr(out_text, "\"scale\": [0.25]"));
    EXPECT(0, "\"what\": ", "op", "sparsify", path("jx.npy"), "-o", path("jv.npy"), "--json");
    assert_int_equal(json_records(out_text), 2); /* the values and the metadata */
    /* a failure of any command under --json ends in the error record, on standard output */
    EXPECT(2, "{\"error\": {\"exit\": 2, \"meaning\": \"usage error\", \"message\": \"clrun op cast: --to wants", "op", "cast",
           path("jx.npy"), "--to", "f8", "-o", path("jh.npy"), "--json");
    assert_int_equal(json_records(out_text), 1);
    EXPECT(2, "{\"error\": {\"exit\": 2", "op", "sum", path("nosuch.npy"), "--json");
    assert_int_equal(json_records(out_text), 1);
    EXPECT(3, "{\"error\": {\"exit\": 3", "info", "-d", "nosuch:", "--json");
    assert_int_equal(json_records(out_text), 1);
    EXPECT(2, "{\"error\": {\"exit\": 2", "run", "--json", KDIR "/cli.cl", "-k", "nosuch", "-g", "4");
    assert_int_equal(json_records(out_text), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(top_level_and_help),
        cmocka_unit_test(help_lists_what_exists),
        cmocka_unit_test(devices_and_info),
        cmocka_unit_test(demo_and_bench),
        cmocka_unit_test(run_generated_forms),
        cmocka_unit_test(run_every_dtype_round_trip),
        cmocka_unit_test(run_scalars_local_and_2d),
        cmocka_unit_test(run_sim_files),
        cmocka_unit_test(op_mul),
        cmocka_unit_test(op_gemm),
        cmocka_unit_test(op_gemm_devices),
        cmocka_unit_test(op_quant),
        cmocka_unit_test(op_sparse),
        cmocka_unit_test(tune_gemm),
        cmocka_unit_test(json_everywhere),
        cmocka_unit_test(op_canny),
        cmocka_unit_test(op_canny_damaged_files),
        cmocka_unit_test(op_canny_devices),
        cmocka_unit_test(op_cast),
        cmocka_unit_test(ctrl_c_leaves_nothing),
        cmocka_unit_test(smaller_refusals),
        cmocka_unit_test(run_bad_npy_files),
        cmocka_unit_test(run_bad_command_lines),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
