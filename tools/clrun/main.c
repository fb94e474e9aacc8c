/* main.c — the clrun command: dispatch to subcommands, shared helpers. */
#include "cli.h"
#include "bench/bench.h" /* BENCH_NAMES */

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int cli_exit_code(clrun_status st)
{
    switch (st) {
    case CLRUN_OK: return EXIT_OK;
    case CLRUN_NO_PLATFORM:
    case CLRUN_NO_DEVICE: return EXIT_NODEVICE;
    case CLRUN_BUILD_FAILED: return EXIT_BUILD;
    case CLRUN_FORMAT_ERROR: return EXIT_USAGE;
    default: return EXIT_RUNTIME;
    }
}

int cli_fail(const char *sub, clrun_ctx *ctx, clrun_status st)
{
    const char *text = clrun_last_error(ctx);
    fprintf(stderr, "clrun %s: %s\n", sub, *text ? text : clrun_status_text(st)); /* never a blank message */
    return cli_exit_code(st);
}

int cli_usage_error(const char *sub, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "clrun %s: ", sub);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see: clrun %s --help)\n", sub);
    return EXIT_USAGE;
}

FILE *cli_notes(const char *out) { return out && strcmp(out, "-") == 0 ? stderr : stdout; }

int cli_next_opt(struct cli_opts *p, int argc, char **argv, const char *shortopts, const struct option *longopts)
{
    if (!p->started) {
        optind = p->first ? p->first : 1;
        opterr = 0;
        p->started = 1;
    }
    const int c = getopt_long(argc, argv, shortopts, longopts, NULL);
    if (c == -1) return CLI_OPTS_END;
    if (c == 'h' && p->help) {
        fputs(p->help, stdout);
        p->rc = EXIT_OK;
        return CLI_OPTS_EXIT;
    }
    if (c == '?' || c == ':') {
        /* getopt sets optopt for a known option that lacks its value, and for an unknown short one */
        int takes_value = 0;
        const char *s = optopt > 0 ? strchr(shortopts, optopt) : NULL;
        if (s && s[1] == ':') takes_value = 1;
        for (const struct option *o = longopts; optopt > 0 && o->name; o++)
            if (o->val == optopt && o->has_arg == required_argument) takes_value = 1;
        p->rc = takes_value ? cli_usage_error(p->sub, "option -%c needs a value", optopt)
                            : cli_usage_error(p->sub, "unknown option '%s'", argv[optind - 1]);
        return CLI_OPTS_EXIT;
    }
    return c;
}

int cli_open(const char *sub, const char *spec, clrun_ctx **ctx)
{
    clrun_status st = clrun_open(ctx, spec);
    return st == CLRUN_OK ? 0 : cli_fail(sub, NULL, st);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double cli_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *cli_type_name(clrun_device_type t)
{
    switch (t) {
    case CLRUN_DEVICE_GPU: return "gpu";
    case CLRUN_DEVICE_CPU: return "cpu";
    case CLRUN_DEVICE_ACCELERATOR: return "accelerator";
    default: return "other";
    }
}

/* The commands; limit: the default --timeout in seconds, where a hang is a bug (0: none). */
static const struct cli_cmd commands[] = {
    {.name = "devices", .what = "list every platform and device, and the default", .run = cmd_devices},
    {.name = "info", .what = "every capability of one device", .run = cmd_info},
    {.name = "run", .what = "run any kernel file with arguments from .npy files, generated data or scalars", .run = cmd_run},
    {.name = "op",
     .what = "the kernel library's ops on .npy files and images (mul, sum, gemm, canny, cast, quantize, ...)",
     .run = cmd_op,
     .limit = 600},
    {.name = "bench", .what = "benchmarks against their peers (" BENCH_NAMES ")", .run = cmd_bench, .limit = 3600},
    {.name = "tune", .what = "search kernel parameters on this device and store the best (gemm)", .run = cmd_tune},
    {.name = "demo", .what = "the seed examples on the default device, checked and timed", .run = cmd_demo, .limit = 600},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: clrun [--version] [--help] COMMAND [ARGS]\n\n"
               "clrun runs OpenCL kernels and the clrun kernel library from the shell.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].what);
    fprintf(f, "\n'clrun COMMAND --help' describes one command.\n"
               "Exit codes: 0 success, 1 runtime failure, 2 usage error, 3 no OpenCL platform or device,\n"
               "4 kernel build failure, 5 --check mismatch, 6 a kernel or command ran past --timeout.\n"
               "Environment: CLRUN_DEVICE (default device), CLRUN_CACHE_DIR, CLRUN_NO_CACHE=1.\n");
}

/* ---- what is running, for signals ---------------------------------------------------------- */

static char running_kernel[128], running_device[128];
static volatile sig_atomic_t running_set;

void cli_running(const char *kernel, const char *device)
{
    running_set = 0;
    if (!kernel) return;
    snprintf(running_kernel, sizeof running_kernel, "%s", kernel);
    snprintf(running_device, sizeof running_device, "%s", device ? device : "?");
    running_set = 1;
}

static void say(const char *s) { (void)!write(2, s, strlen(s)); }

/* the running kernel, in words, with async-signal-safe calls only */
static void say_running(void)
{
    if (!running_set) return;
    say(" while kernel ");
    say(running_kernel);
    say(" was running on ");
    say(running_device);
}

static void on_crash(int sig)
{
    say("clrun: killed by signal ");
    char num[8] = {0};
    int n = sig, i = 6;
    do num[i--] = (char)('0' + n % 10), n /= 10;
    while (n && i >= 0);
    say(num + i + 1);
    say_running();
    say(".\nA kernel that reads or writes out of bounds can do this on a CPU device; oclgrind (Debian's oclgrind\n"
        "package) finds the access: oclgrind clrun run ... with the same arguments.\n");
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Ctrl-C, SIGTERM, SIGHUP: remove the temporary files of the writes in progress, then die of the
 * signal, so no partial output is left and the old files stay as they were. */
static void on_interrupt(int sig)
{
    clrun_file_abort_writes();
    signal(sig, SIG_DFL);
    raise(sig);
}

void cli_crash_handlers(void)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE}, stops[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) signal(sigs[i], on_crash);
    for (size_t i = 0; i < sizeof stops / sizeof *stops; i++) signal(stops[i], on_interrupt);
}

static double watchdog_s; /* op and bench: the time limit (0 none), re-armed by cli_progress */

static void on_timeout(int sig)
{
    (void)sig;
    say("clrun: timeout");
    say_running();
    clrun_file_abort_writes();
    say(watchdog_s > 0 ? ": the command ran past its time limit (--timeout SECONDS to change it, 0 for none); the process ends "
                         "(exit 6).\n"
                       : ": it ran past --timeout; the process ends (exit 6).\n");
    _exit(EXIT_TIMEOUT);
}

void cli_progress(void)
{
    if (watchdog_s > 0) cli_timeout_arm(watchdog_s);
}

/* op and bench: take --timeout S (or --timeout=S) out of argv (before any "--") and arm the
 * watchdog with it, else with the default. Returns 0 or EXIT_USAGE. */
static int watchdog(const char *cmd, double def, int *argc, char **argv)
{
    watchdog_s = def;
    for (int i = 1; i < *argc && strcmp(argv[i], "--") != 0; i++) {
        const char *v = NULL;
        int used = 0;
        if (strcmp(argv[i], "--timeout") == 0) v = i + 1 < *argc ? argv[i + 1] : "", used = 2;
        else if (strncmp(argv[i], "--timeout=", 10) == 0) v = argv[i] + 10, used = 1;
        if (!used) continue;
        char *end;
        const double t = strtod(v, &end);
        if (!*v || *end || !(t >= 0) || t > 1e6) return cli_usage_error(cmd, "--timeout wants seconds (0 for no limit), not '%s'", v);
        watchdog_s = t;
        memmove(argv + i, argv + i + used, (size_t)(*argc - i - used + 1) * sizeof *argv);
        *argc -= used, i--;
    }
    if (watchdog_s > 0) cli_timeout_arm(watchdog_s);
    return 0;
}

void cli_timeout_arm(double seconds)
{
    struct itimerval t = {{0, 0}, {(time_t)seconds, (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6)}};
    if (t.it_value.tv_sec == 0 && t.it_value.tv_usec == 0) t.it_value.tv_usec = 1;
    signal(SIGALRM, on_timeout);
    setitimer(ITIMER_REAL, &t, NULL);
}

void cli_timeout_disarm(void)
{
    struct itimerval t = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &t, NULL);
}

int main(int argc, char **argv)
{
    cli_crash_handlers();
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("clrun %s\n", clrun_version());
        return EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        if (strcmp(argv[1], commands[i].name) != 0) continue;
        int sub_argc = argc - 1, rc;
        if (commands[i].limit > 0 && (rc = watchdog(commands[i].name, commands[i].limit, &sub_argc, argv + 1))) return rc;
        if (strcmp(argv[1], "op") == 0) cli_mpi_init();                   /* a rank of mpirun: op canny and op gemm split over the ranks */
        for (int a = 2; a <= sub_argc && strcmp(argv[a], "--") != 0; a++) /* --json: failures end in an error record too */
            if (strcmp(argv[a], "--json") == 0) cli_json_mode = 1;
        if (cli_json_mode) cli_json_capture_stderr();
        if (!(rc = cli_mpi_agree(sub_argc + 1, argv))) rc = commands[i].run(sub_argc, argv + 1);
        if (rc && cli_json_mode && cli_mpi_rank() == 0) cli_json_error(rc);
        cli_mpi_finalize();
        return rc;
    }
    fprintf(stderr, "clrun: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return EXIT_USAGE;
}

/* path as the canonical path of its parent folder + its last name ("Q.npy", "./Q.npy" and
 * "sub/../Q.npy" agree whether the file exists yet or not); 0 when the parent cannot be resolved. */
static int canonical(const char *path, char *out, size_t size)
{
    char dir[PATH_MAX], real[PATH_MAX];
    const size_t n = strlen(path);
    if (!n || n >= sizeof dir) return 0;
    memcpy(dir, path, n + 1);
    while (strlen(dir) > 1 && dir[strlen(dir) - 1] == '/') dir[strlen(dir) - 1] = 0; /* "out/" names out */
    char *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : dir;
    if (!strcmp(base, ".") || !strcmp(base, "..") || (slash && slash == dir && !base[0])) /* a folder name: the whole path */
        return realpath(dir, real) && snprintf(out, size, "%s", real) < (int)size;
    if (slash) {
        *slash = 0;
        if (!realpath(slash == dir ? "/" : dir, real)) return 0;
    } else if (!realpath(".", real)) return 0;
    return snprintf(out, size, "%s/%s", strcmp(real, "/") ? real : "", base) < (int)size;
}

int cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    char ca[PATH_MAX + 256], cb[PATH_MAX + 256];
    if (strcmp(a, b) == 0) return 1;
    if (!strcmp(a, "-") || !strcmp(b, "-")) return 0; /* standard output is no file */
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return canonical(a, ca, sizeof ca) && canonical(b, cb, sizeof cb) && strcmp(ca, cb) == 0;
}
