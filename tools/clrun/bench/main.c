/* main.c — `clrun bench`: the command, its options, the result records and the runner of the Python
 * peers (tools/peers/). */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void record(const struct bench_opts *o, const char *op, const char *impl, size_t size, double ms, double gbps, const char *extra)
{
    if (o->json) { /* {"op", "impl", "size", "median_ms", "gbps", ...the benchmark's extra members} */
        json_t *rec = json_pack("{s:s, s:s, s:I, s:o, s:o}", "op", op, "impl", impl, "size", (json_int_t)size, "median_ms",
                                cli_json_num(ms), "gbps", cli_json_num(gbps));
        if (extra) { /* "name": value, ... as the benchmark wrote them */
            char *text = malloc(strlen(extra) + 3);
            json_t *more = NULL;
            if (text) sprintf(text, "{%s}", extra), more = json_loads(text, 0, NULL);
            free(text);
            if (more) json_object_update_new(rec, more);
            else json_object_set_new(rec, "extra", json_string(extra)); /* never seen: a benchmark's malformed members, kept */
        }
        cli_json_emit(stdout, rec);
    } else printf("%-10s %-28s %12zu %12.4f %10.2f\n", op, impl, size, ms, gbps);
}

/* The peer script's path: the source tree's tools/peers (a build tree's clrun), else the installed
 * copy. */
static int peer_path(const char *script, char *buf, size_t size)
{
    static const char *const dirs[] = {CLRUN_PEER_SRC_DIR, CLRUN_PEER_INSTALL_DIR};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        int n = snprintf(buf, size, "%s/%s", dirs[i], script);
        if (n > 0 && (size_t)n < size && access(buf, R_OK) == 0) return 1;
    }
    return 0;
}

/* Run one interpreter on the script; parse its output. -1 when it could not run or failed. */
static int run_peer(const char *python, const char *path, const char *const *args, const char *const *keys, double *vals)
{
    const char *argv[16];
    size_t n = 0;
    argv[n++] = python, argv[n++] = path;
    for (size_t i = 0; args[i] && n + 1 < sizeof argv / sizeof *argv; i++) argv[n++] = args[i];
    argv[n] = NULL;
    int fd[2];
    if (pipe(fd) != 0) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]), close(fd[1]);
        return -1;
    }
    if (pid == 0) { /* the child: stdout into the pipe, stderr dropped */
        int null = open("/dev/null", O_WRONLY);
        dup2(fd[1], STDOUT_FILENO);
        if (null >= 0) dup2(null, STDERR_FILENO);
        close(fd[0]), close(fd[1]);
        execvp(python, (char *const *)argv);
        _exit(127);
    }
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    int found = 0;
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            char key[64];
            double v;
            if (sscanf(line, "%63s %lf", key, &v) != 2) continue;
            for (size_t k = 0; keys[k]; k++)
                if (strcmp(key, keys[k]) == 0) vals[k] = v, found++;
        }
        fclose(f);
    } else {
        close(fd[0]);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? found : -1;
}

int bench_peer(const char *script, const char *const *args, const char *const *keys, double *vals)
{
    static const char *const pythons[] = {"python3", "/usr/bin/python3"};
    char path[4096];
    if (!peer_path(script, path, sizeof path)) return -1;
    for (size_t p = 0; p < sizeof pythons / sizeof *pythons; p++) {
        int got = run_peer(pythons[p], path, args, keys, vals);
        if (got >= 0) return got;
    }
    return -1;
}

static const char *bench_help = "usage: clrun bench NAME [-d SPEC] [--json] [--repeat N] [--size MIB] [--shapes LIST]\n"
                                "                  [--frames N] [--jobs N] [--devices GROUP]\n\n"
                                "Benchmarks, each printing the baseline it is judged against in the same run:\n"
                                "  transfer   host<->device from pinned memory (clrun_host_alloc), from ordinary memory through the\n"
                                "             plain driver path (baseline) and through clrun; device-to-device copy for reference\n"
                                "  launch     enqueue + finish round trip of a tiny kernel: raw OpenCL against clrun\n"
                                "  vector     element-wise ops and reductions, f32 and f16 storage, against a plain float4 kernel,\n"
                                "             clEnqueueCopyBuffer and (on CPUs) a plain C loop on two threads\n"
                                "  gemm       f32 matrix multiply: clrun's kernel (default, per-slice partial sums) and its fast\n"
                                "             mode (clrun_gemm_desc.fast) against CLBlast on the same device and, on CPUs, OpenBLAS\n"
                                "             (--shapes MxNxK,... to choose the shapes)\n"
                                "  mixed      GEMM with f16/bf16 inputs and f32 results: the portable kernels and, on NVIDIA, the\n"
                                "             tensor-core kernel (and 3xTF32 for f32), against clrun's f32 kernel and PyTorch's cuBLAS\n"
                                "             (when python3 has torch with CUDA); then f32 <-> f16/bf16 conversion bandwidth (--size Mi\n"
                                "             elements, default 256 on a GPU, 16 otherwise; --shapes MxNxK,...)\n"
                                "  canny      Canny edges of 1080p and 4K gray frames (L1, 50/100), device-resident and with the\n"
                                "             transfers, against OpenCV's cv2.Canny on the host cores and on OpenCL (UMat) when\n"
                                "             python3 with cv2 is installed; checks that the edges are identical and splits the\n"
                                "             device time by kernel (clrun_profile)\n"
                                "  pipeline   `op canny` end to end over --frames 4K gray frames written to a temporary folder\n"
                                "             (PNG, and JPEG made by OpenCV): read, decode, Canny, encode and write on --jobs threads\n"
                                "             around the device pipeline, against OpenCV in one process (imread, Canny, imwrite)\n"
                                "             and on a multiprocessing.Pool of --jobs processes, and against the floor: the same\n"
                                "             files decoded and edge images encoded by clrun's codecs, no Canny; checks the edges\n"
                                "             equal OpenCV's\n"
                                "  int8       INT8 GEMM (s8 x s8 -> s32, exact) with B as NxK and KxN and with the f32 epilogue,\n"
                                "             against clrun's f16 tensor-core kernel (NVIDIA) or f32 kernel in the same run and\n"
                                "             PyTorch's torch._int_mm; then quantize/dequantize bandwidth (--size Mi elements)\n"
                                "  sparse     2:4 sparse GEMM (clrun_gemm_sp, f16 and bf16) against clrun's dense kernel on the same\n"
                                "             pruned A, the results compared; PyTorch's semi-structured sparse matmul on CUDA\n"
                                "  overlap    uploads of --size MiB chunks (default 256 on a GPU, 16 otherwise) from pinned memory, each\n"
                                "             followed by a GEMM of about the upload's time reading it: on one queue against two\n"
                                "             streams (clrun_queue_new) that overlap one chunk's upload with the other's GEMM\n"
                                "  random     uniform and normal float32 (clrun_rand), against the copy of the same bytes and\n"
                                "             torch.rand/randn on CUDA or NumPy's Generator(Philox) on the host\n"
                                "  scan       inclusive int32 cumsum (clrun_scan), against the copy and torch.cumsum or np.cumsum\n"
                                "  sort       uint32 keys, uint32 key-value pairs and float32 keys (clrun_sort, clrun_sort_pairs),\n"
                                "             against the copy and torch.sort (CUB) or np.sort / np.argsort(kind=stable)\n"
                                "  hist       bincount of int32 keys into 256 bins (clrun_bincount), against the copy and\n"
                                "             torch.bincount or np.bincount\n"
                                "             (random, scan, sort, hist: --size Mi elements, default 256 on a GPU, 16 otherwise)\n"
                                "  fft        forward transforms (clrun_fft, on VkFFT): a long c2c (2^24 on a GPU, 2^20 otherwise),\n"
                                "             a 2-D r2c (4096^2 or 2048^2), a batch of 4096-point c2c rows and a prime length,\n"
                                "             against torch.fft (cuFFT) on CUDA or numpy.fft (pocketfft) on the host; the plan's\n"
                                "             cost and whether its kernels came from the cache\n"
                                "  conv       conv2d forward, backward-data and backward-weights (clrun_conv2d_*) on ResNet-50's 3x3 and\n"
                                "             1x1 convolutions (NCHW; batch 64 in f16 on a GPU, 8 in f32 otherwise), against PyTorch\n"
                                "             (cuDNN with benchmark mode on CUDA, its CPU kernels) or NumPy's im2col + matmul\n"
                                "  cuda       CUDA kernel text (clrun_prog_cuda): saxpy, a 16x16-tiled matmul, a shared-memory\n"
                                "             reduction and a 32x32-tiled transpose, translated, against the same kernels written\n"
                                "             in OpenCL C (their outputs compared bit for bit; exit 5 if they differ) and, on\n"
                                "             CUDA, the same source through CuPy's RawKernel (--size MiB of saxpy/reduce input)\n\n"
                                "  -d, --device SPEC   device (default: $CLRUN_DEVICE, else the best)\n"
                                "  --json              one JSON record per line: op, impl, size, median_ms, gbps\n"
                                "  --repeat N          timed repetitions after a warm-up (default 5)\n"
                                "  --size MIB          transfer: MiB (default 1024 on a GPU, 256 otherwise); overlap: MiB per chunk;\n"
                                "                      vector: Mi elements\n"
                                "                      (default 256 on a GPU, 16 otherwise)\n"
                                "  --devices GROUP     gemm: also time clrun_group_gemm on the group from host arrays, against its\n"
                                "                      first device alone (same bits checked); pipeline: op canny on the group;\n"
                                "                      transfer: every device of the group copying at once, a thread each\n"
                                "  --frames N          pipeline: frames (default 50)\n"
                                "  --jobs N            pipeline: clrun's host threads and OpenCV's processes (default: the cores plus\n"
                                "                      one for clrun, as op canny; the cores for OpenCV's pool)\n"
                                "  --timeout S         end the command (exit 6) when it runs past S seconds (default 3600, 0: none)\n"
                                "  --help              this text\n";

int cmd_bench(int argc, char **argv)
{
    struct bench_opts o = {NULL, 0, 5, 0, NULL, 0, 0, NULL};
    static const struct option opts[] = {{"device", required_argument, NULL, 'd'}, {"json", no_argument, NULL, 'j'},
                                         {"repeat", required_argument, NULL, 'r'}, {"size", required_argument, NULL, 's'},
                                         {"shapes", required_argument, NULL, 'S'}, {"frames", required_argument, NULL, 'F'},
                                         {"jobs", required_argument, NULL, 'J'},   {"devices", required_argument, NULL, 'G'},
                                         {"help", no_argument, NULL, 'h'},         {0}};
    int c;
    struct cli_opts opt = {.sub = "bench", .help = bench_help, .first = 1};
    while ((c = cli_next_opt(&opt, argc, argv, "d:h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        char *end = NULL;
        switch (c) {
        case 'd': o.spec = optarg; break;
        case 'j': o.json = 1; break;
        case 'r':
            o.repeat = (int)strtol(optarg, &end, 10);
            if (!*optarg || *end || o.repeat < 1 || o.repeat > 1000)
                return cli_usage_error("bench", "--repeat wants 1..1000, not '%s'", optarg);
            break;
        case 's':
            o.size_mib = strtod(optarg, &end);
            if (!*optarg || *end || !(o.size_mib > 0) || o.size_mib > 1e6)
                return cli_usage_error("bench", "--size wants a positive number of MiB, not '%s'", optarg);
            break;
        case 'S': o.shapes = optarg; break;
        case 'G': o.devices = optarg; break;
        case 'F':
        case 'J': {
            long v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 1 || v > (c == 'F' ? 100000 : 256))
                return cli_usage_error("bench", "--%s wants 1..%d, not '%s'", c == 'F' ? "frames" : "jobs", c == 'F' ? 100000 : 256,
                                       optarg);
            *(c == 'F' ? &o.frames : &o.jobs) = (int)v;
            break;
        }
        }
    }
    if (optind >= argc) return cli_usage_error("bench", "which benchmark? " BENCH_NAMES);
    const char *name = argv[optind];
    if (optind + 1 < argc) return cli_usage_error("bench", "unexpected argument '%s'", argv[optind + 1]);
    static const struct cli_cmd benches[] = {
        {.name = "transfer", .bench = bench_transfer}, {.name = "launch", .bench = bench_launch}, {.name = "vector", .bench = bench_vector},
        {.name = "gemm", .bench = bench_gemm},         {.name = "mixed", .bench = bench_mixed},   {.name = "canny", .bench = bench_canny},
        {.name = "pipeline", .bench = bench_pipeline}, {.name = "int8", .bench = bench_int8},     {.name = "sparse", .bench = bench_sparse},
        {.name = "overlap", .bench = bench_overlap},   {.name = "random", .bench = bench_random}, {.name = "scan", .bench = bench_scan},
        {.name = "sort", .bench = bench_sort},         {.name = "hist", .bench = bench_hist},     {.name = "fft", .bench = bench_fft},
        {.name = "conv", .bench = bench_conv},         {.name = "cuda", .bench = bench_cuda},
    };
    for (size_t i = 0; i < sizeof benches / sizeof *benches; i++)
        if (strcmp(name, benches[i].name) == 0) return benches[i].bench(&o);
    return cli_usage_error("bench", "unknown benchmark '%s'; there are: " BENCH_NAMES, name);
}
