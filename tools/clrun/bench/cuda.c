/* cuda.c — `clrun bench cuda`: CUDA kernel text translated by clrun (clrun_prog_cuda) against the same
 * algorithm written by hand in OpenCL C, launched with the same work-group shapes on the same data,
 * and on CUDA (when python3 has CuPy) against the same CUDA source run natively through CuPy's
 * RawKernel (tools/peers/cuda_text.py). The two OpenCL results are compared: the translation must
 * give the hand kernel's bits. */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The CUDA source: what a CUDA programmer writes for these four (the classic teaching forms). */
static const char cuda_src[] =
    "extern \"C\" {\n"
    "__global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n"
    "\n"
    "#define TILE 16\n"
    "__global__ void matmul(const float *A, const float *B, float *C, int n)\n"
    "{\n"
    "    __shared__ float As[TILE][TILE], Bs[TILE][TILE];\n"
    "    int tx = threadIdx.x, ty = threadIdx.y;\n"
    "    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;\n"
    "    float acc = 0.0f;\n"
    "    for (int t = 0; t < n / TILE; t++) {\n"
    "        As[ty][tx] = A[row * n + t * TILE + tx];\n"
    "        Bs[ty][tx] = B[(t * TILE + ty) * n + col];\n"
    "        __syncthreads();\n"
    "        for (int k = 0; k < TILE; k++) acc += As[ty][k] * Bs[k][tx];\n"
    "        __syncthreads();\n"
    "    }\n"
    "    C[row * n + col] = acc;\n"
    "}\n"
    "\n"
    "__global__ void reduce(const float *in, float *out, int n)\n"
    "{\n"
    "    __shared__ float s[256];\n"
    "    unsigned t = threadIdx.x, i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;\n"
    "    float v = 0.0f;\n"
    "    if (i < n) v = in[i];\n"
    "    if (i + blockDim.x < n) v += in[i + blockDim.x];\n"
    "    s[t] = v;\n"
    "    __syncthreads();\n"
    "    for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {\n"
    "        if (t < h) s[t] += s[t + h];\n"
    "        __syncthreads();\n"
    "    }\n"
    "    if (t == 0) out[blockIdx.x] = s[0];\n"
    "}\n"
    "\n"
    "#define TDIM 32\n"
    "#define BROWS 8\n"
    "__global__ void transpose(float *odata, const float *idata, int width, int height)\n"
    "{\n"
    "    __shared__ float tile[TDIM][TDIM + 1];\n"
    "    int x = blockIdx.x * TDIM + threadIdx.x, y = blockIdx.y * TDIM + threadIdx.y;\n"
    "    for (int j = 0; j < TDIM; j += BROWS) tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];\n"
    "    __syncthreads();\n"
    "    x = blockIdx.y * TDIM + threadIdx.x;\n"
    "    y = blockIdx.x * TDIM + threadIdx.y;\n"
    "    for (int j = 0; j < TDIM; j += BROWS) odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];\n"
    "}\n"
    "}\n";

/* The same four as an OpenCL programmer writes them. */
static const char cl_src[] = "__kernel void saxpy(int n, float a, __global const float *restrict x, __global float *restrict y)\n"
                             "{\n"
                             "    int i = get_global_id(0);\n"
                             "    if (i < n) y[i] = a * x[i] + y[i];\n"
                             "}\n"
                             "\n"
                             "#define TILE 16\n"
                             "__kernel void matmul(__global const float *A, __global const float *B, __global float *C, int n)\n"
                             "{\n"
                             "    __local float As[TILE][TILE], Bs[TILE][TILE];\n"
                             "    int tx = get_local_id(0), ty = get_local_id(1);\n"
                             "    int row = get_group_id(1) * TILE + ty, col = get_group_id(0) * TILE + tx;\n"
                             "    float acc = 0.0f;\n"
                             "    for (int t = 0; t < n / TILE; t++) {\n"
                             "        As[ty][tx] = A[row * n + t * TILE + tx];\n"
                             "        Bs[ty][tx] = B[(t * TILE + ty) * n + col];\n"
                             "        barrier(CLK_LOCAL_MEM_FENCE);\n"
                             "        for (int k = 0; k < TILE; k++) acc += As[ty][k] * Bs[k][tx];\n"
                             "        barrier(CLK_LOCAL_MEM_FENCE);\n"
                             "    }\n"
                             "    C[row * n + col] = acc;\n"
                             "}\n"
                             "\n"
                             "__kernel void reduce(__global const float *in, __global float *out, int n)\n"
                             "{\n"
                             "    __local float s[256];\n"
                             "    uint t = get_local_id(0), ls = get_local_size(0), i = get_group_id(0) * (ls * 2) + t;\n"
                             "    float v = 0.0f;\n"
                             "    if (i < n) v = in[i];\n"
                             "    if (i + ls < n) v += in[i + ls];\n"
                             "    s[t] = v;\n"
                             "    barrier(CLK_LOCAL_MEM_FENCE);\n"
                             "    for (uint h = ls / 2; h > 0; h >>= 1) {\n"
                             "        if (t < h) s[t] += s[t + h];\n"
                             "        barrier(CLK_LOCAL_MEM_FENCE);\n"
                             "    }\n"
                             "    if (t == 0) out[get_group_id(0)] = s[0];\n"
                             "}\n"
                             "\n"
                             "#define TDIM 32\n"
                             "#define BROWS 8\n"
                             "__kernel void transpose(__global float *odata, __global const float *idata, int width, int height)\n"
                             "{\n"
                             "    __local float tile[TDIM][TDIM + 1];\n"
                             "    int tx = get_local_id(0), ty = get_local_id(1), bx = get_group_id(0), by = get_group_id(1);\n"
                             "    int x = bx * TDIM + tx, y = by * TDIM + ty;\n"
                             "    for (int j = 0; j < TDIM; j += BROWS) tile[ty + j][tx] = idata[(y + j) * width + x];\n"
                             "    barrier(CLK_LOCAL_MEM_FENCE);\n"
                             "    x = by * TDIM + tx;\n"
                             "    y = bx * TDIM + ty;\n"
                             "    for (int j = 0; j < TDIM; j += BROWS) odata[(y + j) * height + x] = tile[tx][ty + j];\n"
                             "}\n";

enum { K_SAXPY, K_MATMUL, K_REDUCE, K_TRANSPOSE, K_N };
static const char *const knames[K_N] = {"saxpy", "matmul", "reduce", "transpose"};

struct job {
    size_t n;                   /* saxpy, reduce: elements; matmul: n×n; transpose: n×n */
    size_t grid[2], block[2];   /* CUDA's terms */
    size_t in_words, out_words; /* words of a (input; matmul: A, and B in a2) and b (output; saxpy: y) */
    double bytes, flops;        /* moved / computed per launch */
};

static struct job plan(int k, size_t n)
{
    struct job j = {.n = n};
    switch (k) {
    case K_SAXPY:
        j.block[0] = 256, j.block[1] = 1, j.grid[0] = (n + 255) / 256, j.grid[1] = 1;
        j.in_words = n, j.out_words = n, j.bytes = 12.0 * n, j.flops = 2.0 * n;
        break;
    case K_MATMUL:
        j.block[0] = j.block[1] = 16, j.grid[0] = j.grid[1] = n / 16;
        j.in_words = n * n, j.out_words = n * n, j.bytes = 12.0 * n * n, j.flops = 2.0 * n * n * n;
        break;
    case K_REDUCE:
        j.block[0] = 256, j.block[1] = 1, j.grid[0] = (n + 511) / 512, j.grid[1] = 1;
        j.in_words = n, j.out_words = j.grid[0], j.bytes = 4.0 * n, j.flops = (double)n;
        break;
    case K_TRANSPOSE:
        j.block[0] = 32, j.block[1] = 8, j.grid[0] = j.grid[1] = n / 32;
        j.in_words = n * n, j.out_words = n * n, j.bytes = 8.0 * n * n, j.flops = 0;
        break;
    }
    return j;
}

static clrun_status set_args(clrun_kernel *kr, int k, const struct job *j, clrun_buf *a, clrun_buf *a2, clrun_buf *b)
{
    clrun_status st = CLRUN_OK;
    switch (k) {
    case K_SAXPY:
        if (!(st = clrun_arg_i32(kr, 0, (int32_t)j->n)) && !(st = clrun_arg_f32(kr, 1, 2.5f)) && !(st = clrun_arg_buf(kr, 2, a)))
            st = clrun_arg_buf(kr, 3, b);
        break;
    case K_MATMUL:
        if (!(st = clrun_arg_buf(kr, 0, a)) && !(st = clrun_arg_buf(kr, 1, a2)) && !(st = clrun_arg_buf(kr, 2, b)))
            st = clrun_arg_i32(kr, 3, (int32_t)j->n);
        break;
    case K_REDUCE:
        if (!(st = clrun_arg_buf(kr, 0, a)) && !(st = clrun_arg_buf(kr, 1, b))) st = clrun_arg_i32(kr, 2, (int32_t)j->n);
        break;
    case K_TRANSPOSE:
        if (!(st = clrun_arg_buf(kr, 0, b)) && !(st = clrun_arg_buf(kr, 1, a)) && !(st = clrun_arg_i32(kr, 2, (int32_t)j->n)))
            st = clrun_arg_i32(kr, 3, (int32_t)j->n);
        break;
    }
    return st;
}

static clrun_status launch(clrun_kernel *kr, const struct job *j)
{
    size_t g[2] = {j->grid[0] * j->block[0], j->grid[1] * j->block[1]};
    return clrun_launch(kr, 2, g, j->block);
}

/* Run the CUDA source through tools/peers/cuda_text.py (CuPy RawKernel): the median ms, or < 0. */
static double cupy_peer(int k, const struct job *j, int reps)
{
    char path[] = "/tmp/clrun-bench-cuda-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd), unlink(path);
        return -1;
    }
    int ok = fwrite(cuda_src, 1, sizeof cuda_src - 1, f) == sizeof cuda_src - 1;
    ok = (fclose(f) == 0) && ok;
    double ms = -1, v[1] = {0};
    if (ok) {
        char ns[32], rs[16];
        snprintf(ns, sizeof ns, "%zu", j->n), snprintf(rs, sizeof rs, "%d", reps);
        const char *args[] = {path, knames[k], ns, rs, NULL}, *keys[] = {"ms", NULL};
        if (bench_peer("cuda_text.py", args, keys, v) > 0) ms = v[0];
    }
    unlink(path);
    return ms;
}

int bench_cuda(const struct bench_opts *o)
{
    clrun_ctx *ctx = NULL;
    int rc = cli_open("bench", o->spec, &ctx);
    if (rc) return rc;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const int gpu = in->type == CLRUN_DEVICE_GPU;
    clrun_prog *pc = NULL, *ph = NULL;
    clrun_kernel *kc = NULL, *kh = NULL;
    clrun_buf *a = NULL, *b = NULL, *a2 = NULL;
    float *h = NULL, *rc_out = NULL, *rh_out = NULL;
    clrun_status st = clrun_prog_cuda(ctx, cuda_src, "bench.cu", NULL, &pc);
    if (!st) st = clrun_prog_source(ctx, cl_src, "bench-cuda-hand.cl", NULL, &ph);
    if (st) goto fail;
    const int nr = o->repeat > 64 ? 64 : o->repeat;
    if (!o->json) {
        printf("CUDA kernel text on %s: translated by clrun against the same kernel written in OpenCL C, median of %d\n", in->name, nr);
        printf("%-10s %-28s %12s %12s %10s\n", "op", "impl", "elements", "median_ms", "GB/s");
    }
    for (int k = 0; k < K_N && !st; k++) {
        /* sizes: a few hundred MiB on a GPU, a few tens on a CPU; --size sets the MiB of saxpy/reduce input */
        size_t n = k == K_SAXPY || k == K_REDUCE ? (o->size_mib > 0 ? (size_t)(o->size_mib * 262144.0)
                                                    : gpu           ? (size_t)1 << 26
                                                                    : (size_t)1 << 22)
                   : k == K_MATMUL               ? (gpu ? 4096 : 512)
                                                 : (gpu ? 8192 : 2048);
        if (n < 512) n = 512;
        const struct job j = plan(k, n);
        const size_t in_words = j.in_words;
        free(h), free(rc_out), free(rh_out);
        h = malloc(in_words * 4), rc_out = malloc(j.out_words * 4), rh_out = malloc(j.out_words * 4);
        if (!h || !rc_out || !rh_out) {
            st = CLRUN_HOST_OUT_OF_MEMORY;
            break;
        }
        uint64_t seed = 0x9e3779b97f4a7c15ull + (uint64_t)k;
        for (size_t i = 0; i < in_words; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            h[i] = (float)((int32_t)(seed >> 40) - (1 << 23)) / (float)(1 << 23);
        }
        clrun_buf_free(a), clrun_buf_free(b), clrun_buf_free(a2);
        a = b = a2 = NULL;
        if ((st = clrun_buf_new(ctx, in_words * 4, 0, &a)) || (st = clrun_buf_new(ctx, j.out_words * 4, 0, &b))) break;
        if (k == K_MATMUL && (st = clrun_buf_new(ctx, n * n * 4, 0, &a2))) break; /* B: the same numbers as A */
        clrun_kernel_free(kc), clrun_kernel_free(kh);
        kc = kh = NULL;
        if ((st = clrun_kernel_new(pc, knames[k], &kc)) || (st = clrun_kernel_new(ph, knames[k], &kh))) break;
        for (int w = 0; w < 2 && !st; w++) st = set_args(w ? kh : kc, k, &j, a, a2, b);
        if (st || (st = clrun_upload(a, 0, h, in_words * 4)) || (k == K_MATMUL && (st = clrun_upload(a2, 0, h, n * n * 4)))) break;
        /* one launch each from the same inputs; the outputs must be the same bits */
        for (int w = 0; w < 2 && !st; w++) {
            if (k == K_SAXPY) st = clrun_upload(b, 0, h, n * 4); /* y = x: saxpy updates y in place */
            if (!st) st = launch(w ? kh : kc, &j);
            if (!st) st = clrun_download(b, 0, w ? rh_out : rc_out, j.out_words * 4);
        }
        if (st) break;
        const int same = memcmp(rc_out, rh_out, j.out_words * 4) == 0;
        /* timing: the two interleaved, a warm-up first; launches per sample so that one lasts ~10 ms */
        double tc[64], th[64];
        int per = 1;
        {
            double t0 = cli_now();
            if (!(st = launch(kc, &j))) st = clrun_finish(ctx);
            double one = cli_now() - t0;
            per = one > 0.01 ? 1 : one < 1e-5 ? 1000 : (int)(0.01 / one) + 1;
        }
        for (int r = -1; r < nr && !st; r++)
            for (int w = 0; w < 2 && !st; w++) {
                double t0 = cli_now();
                for (int i = 0; i < per && !st; i++) st = launch(w ? kh : kc, &j);
                if (!st) st = clrun_finish(ctx);
                if (r >= 0) (w ? th : tc)[r] = (cli_now() - t0) * 1e3 / per;
            }
        if (st) break;
        const double mc = cli_median(tc, nr), mh = cli_median(th, nr);
        char extra[160];
        const char *op = knames[k];
        snprintf(extra, sizeof extra, "\"same_bits\": %s, \"translated_over_hand\": %.4f", same ? "true" : "false", mh / mc);
        record(o, op, "clrun: CUDA text, translated", in_words, mc, j.bytes / mc / 1e6, o->json ? extra : NULL);
        record(o, op, "OpenCL C by hand (baseline)", in_words, mh, j.bytes / mh / 1e6, NULL);
        if (!o->json)
            printf("  %s: %s; the translation runs at %.2fx the hand kernel's speed\n", op, same ? "same bits" : "RESULTS DIFFER", mh / mc);
        if (gpu) {
            double mp = cupy_peer(k, &j, nr);
            if (mp > 0) {
                record(o, op, "CuPy RawKernel, the CUDA source natively", in_words, mp, j.bytes / mp / 1e6, NULL);
                if (!o->json) printf("  %s: the translation runs at %.2fx CuPy's speed\n", op, mp / mc);
            } else if (!o->json) printf("(CuPy RawKernel not measured: python3 with cupy and CUDA not found)\n");
        }
        if (!same) rc = EXIT_CHECK;
    }
fail:
    if (st) rc = cli_fail("bench", ctx, st);
    clrun_kernel_free(kc), clrun_kernel_free(kh);
    clrun_prog_free(pc), clrun_prog_free(ph);
    clrun_buf_free(a), clrun_buf_free(b), clrun_buf_free(a2);
    free(h), free(rc_out), free(rh_out);
    clrun_close(ctx);
    return rc;
}
