/* test_cudatext.c — CUDA kernel text (lib/cudatext): translated kernels run and agree with the host;
 * what cannot be translated is refused with the file, line and construct; compile errors name the
 * CUDA file's lines. Where libclrun was built without libclang's headers, or libclang cannot be
 * loaded, every call is CLRUN_UNSUPPORTED with the reason, and that is what is checked. */
#include "helpers.h"

#include <math.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float frand(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((int)(rng >> 40) % 2001 - 1000) / 250.0f;
}

/* 1 when translation works here; else the refusal is checked and the caller skips. */
static int available(void)
{
    char *out = NULL;
    clrun_status st = clrun_cuda_translate("__global__ void k(float *a) { a[0] = 1.0f; }\n", "probe.cu", &out);
    if (st == CLRUN_OK) {
        clrun_string_free(out);
        return 1;
    }
    assert_int_equal(st, CLRUN_UNSUPPORTED);
    const char *why = clrun_last_error(NULL);
    assert_true(strstr(why, "libclang") != NULL);
    fprintf(stderr, "skipped: %s\n", why);
    return 0;
}

static const char article[] = "__global__ void multiply_them(float *dest, float *a, float *b)\n"
                              "{\n"
                              "  const int i = threadIdx.x;\n"
                              "  dest[i] = a[i] * b[i];\n"
                              "}\n";

static void article_kernel(void **state)
{
    clrun_ctx *ctx = *state;
    if (!available()) skip();
    enum { N = 400 };
    float a[N], b[N], d[N];
    for (int i = 0; i < N; i++) a[i] = frand(), b[i] = frand();
    clrun_prog *p = NULL;
    clrun_kernel *k = NULL;
    clrun_buf *da = NULL, *db = NULL, *dd = NULL;
    CHECK_OK(ctx, clrun_prog_cuda(ctx, article, "article.cu", NULL, &p));
    CHECK_OK(ctx, clrun_kernel_new(p, "multiply_them", &k));
    CHECK_OK(ctx, clrun_buf_new_from(ctx, a, sizeof a, 0, &da));
    CHECK_OK(ctx, clrun_buf_new_from(ctx, b, sizeof b, 0, &db));
    CHECK_OK(ctx, clrun_buf_new(ctx, sizeof d, 0, &dd));
    CHECK_OK(ctx, clrun_arg_buf(k, 0, dd));
    CHECK_OK(ctx, clrun_arg_buf(k, 1, da));
    CHECK_OK(ctx, clrun_arg_buf(k, 2, db));
    const size_t g = N, l = N <= clrun_ctx_device(ctx)->max_work_group ? N : 1;
    if (l == 1) { /* threadIdx.x alone indexes: one block of 400 is needed */
        fprintf(stderr, "skipped: work-groups of %d items do not fit this device\n", N);
    } else {
        CHECK_OK(ctx, clrun_launch(k, 1, &g, &l));
        CHECK_OK(ctx, clrun_download(dd, 0, d, sizeof d));
        for (int i = 0; i < N; i++)
            if (d[i] != a[i] * b[i]) fail_msg("dest[%d] = %g, a*b = %g", i, d[i], a[i] * b[i]);
    }
    clrun_buf_free(da), clrun_buf_free(db), clrun_buf_free(dd);
    clrun_kernel_free(k);
    clrun_prog_free(p);
}

/* a block reduction in shared memory declared in a nested block, a device function reading shared
 * memory, a __constant__ array set by the launch (the kernel's extra argument), float atomics */
static const char reduction[] = "#include <cuda_runtime.h>\n"
                                "__constant__ float weight[4];\n"
                                "__device__ float pair(const float *s, int t) { return s[t] + s[t + 1]; }\n"
                                "__global__ void wsum(const float *in, float *out, int n)\n"
                                "{\n"
                                "    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;\n"
                                "    if (n > 0) {\n"
                                "        __shared__ float s[65];\n"
                                "        s[t] = i < n ? in[i] * weight[blockIdx.x % 4] : 0.0f;\n"
                                "        if (t == 0) s[64] = 0.0f;\n"
                                "        __syncthreads();\n"
                                "        if (t % 2 == 0) atomicAdd(out, pair(s, t));\n"
                                "    }\n"
                                "}\n";

static void reduction_kernel(void **state)
{
    clrun_ctx *ctx = *state;
    if (!available()) skip();
    if (clrun_ctx_device(ctx)->max_work_group < 64) skip();
    enum { N = 1000, B = 64 };
    float in[N], w[4] = {1.0f, 0.5f, -2.0f, 0.25f}, out = 0.0f;
    for (int i = 0; i < N; i++) in[i] = frand();
    double want = 0;
    for (int i = 0; i < N; i++) want += (double)in[i] * w[(i / B) % 4];
    clrun_prog *p = NULL;
    clrun_kernel *k = NULL;
    clrun_buf *din = NULL, *dout = NULL, *dw = NULL;
    CHECK_OK(ctx, clrun_prog_cuda(ctx, reduction, "reduction.cu", NULL, &p));
    CHECK_OK(ctx, clrun_kernel_new(p, "wsum", &k));
    assert_int_equal(clrun_kernel_nargs(k), 4); /* in, out, n, then weight */
    CHECK_OK(ctx, clrun_buf_new_from(ctx, in, sizeof in, 0, &din));
    CHECK_OK(ctx, clrun_buf_new_from(ctx, &out, sizeof out, 0, &dout));
    CHECK_OK(ctx, clrun_buf_new_from(ctx, w, sizeof w, 0, &dw));
    CHECK_OK(ctx, clrun_arg_buf(k, 0, din));
    CHECK_OK(ctx, clrun_arg_buf(k, 1, dout));
    CHECK_OK(ctx, clrun_arg_i32(k, 2, N));
    CHECK_OK(ctx, clrun_arg_buf(k, 3, dw));
    const size_t g = (N + B - 1) / B * B, l = B;
    CHECK_OK(ctx, clrun_launch(k, 1, &g, &l));
    CHECK_OK(ctx, clrun_download(dout, 0, &out, sizeof out));
    if (fabs(out - want) > 1e-3 * (1 + fabs(want))) fail_msg("sum %g, the host says %g", out, want);
    clrun_buf_free(din), clrun_buf_free(dout), clrun_buf_free(dw);
    clrun_kernel_free(k);
    clrun_prog_free(p);
}

/* Template kernels, instantiated as the source asks (explicit instantiations, `extern template` left
 * alone), named in notes as C++ writes them and mangled; a class handing out the dynamic shared
 * memory (NVIDIA's SharedMemory<T>); host code (a launching wrapper, dim3, <<< >>>) left out. Run
 * for two instantiations, made by clrun_kernel_new from those names, and compared with the host's sums. */
static const char tsum[] = "template <class T> struct SharedMemory {\n"
                           "    __device__ inline operator T *() { extern __shared__ int __smem[]; return (T *)__smem; }\n"
                           "};\n"
                           "template <> struct SharedMemory<double> {\n"
                           "    __device__ inline operator double *() { extern __shared__ double __smem_d[]; return (double *)__smem_d; }\n"
                           "};\n"
                           "template <class T, unsigned SCALE> __global__ void bsum(const T *in, T *out, unsigned n)\n"
                           "{\n"
                           "    T *s = SharedMemory<T>();\n"
                           "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                           "    s[threadIdx.x] = i < n ? in[i] * (T)SCALE : (T)0;\n"
                           "    __syncthreads();\n"
                           "    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {\n"
                           "        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];\n"
                           "        __syncthreads();\n"
                           "    }\n"
                           "    if (threadIdx.x == 0) out[blockIdx.x] = s[0];\n"
                           "}\n"
                           "template <class T> void launch(const T *in, T *out, unsigned n)\n"
                           "{\n"
                           "    dim3 block(64), grid((n + 63) / 64);\n"
                           "    bsum<T, 3><<<grid, block, 64 * sizeof(T)>>>(in, out, n);\n"
                           "}\n"
                           "template void launch<int>(const int *, int *, unsigned);\n"
                           "template __global__ void bsum<int, 3>(const int *, int *, unsigned);\n"
                           "extern template __global__ void bsum<float, 3>(const float *, float *, unsigned);\n"
                           "template __global__ decltype(bsum<float, 2>) bsum<float, 2>;\n";

static void template_kernels(void **state)
{
    clrun_ctx *ctx = *state;
    if (!available()) skip();
    if (clrun_ctx_device(ctx)->max_work_group < 64) skip();
    char *cl = NULL;
    CHECK_OK(NULL, clrun_cuda_translate(tsum, "tsum.cu", &cl));
    static const char *const want[] = {"// clrun: kernel bsum<int, 3> is bsum_clrun_t0\n",
                                       "// clrun: kernel bsum<float, 2> is bsum_clrun_t1\n",
                                       "// clrun: kernel _Z4bsumIiLj3EEvPKT_PS0_j is bsum_clrun_t0\n",
                                       "// clrun: kernel bsum_clrun_t1 takes after its own arguments: clrun_smem (dynamic __shared__"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(cl, want[i])) fail_msg("the translation lacks '%s':\n%s", want[i], cl);
    const char *code = strstr(cl, "#line 1 \"tsum.cu\""); /* the user's code, after the prelude */
    assert_non_null(code);
    if (strstr(code, "launch") || strstr(code, "<<<") || strstr(code, "SharedMemory") || strstr(code, "template") ||
        strstr(code, "bsum_clrun_t2"))
        fail_msg("host code, the accessor class or an instantiation not asked for is left in:\n%s", code);
    clrun_string_free(cl);
    enum { N = 1000 };
    int ii[N], io[16];
    float fi[N], fo[16];
    for (int i = 0; i < N; i++) ii[i] = (int)(frand() * 1000), fi[i] = (float)ii[i] / 8;
    clrun_prog *p = NULL;
    CHECK_OK(ctx, clrun_prog_cuda(ctx, tsum, "tsum.cu", NULL, &p));
    for (int pass = 0; pass < 2; pass++) {
        clrun_kernel *k = NULL;
        clrun_buf *din = NULL, *dout = NULL;
        /* by the names CUDA gives them: as C++ writes it (any spacing), and mangled */
        CHECK_OK(ctx, clrun_kernel_new(p, pass ? "_Z4bsumIfLj2EEvPKT_PS0_j" : "bsum< int,3 >", &k));
        CHECK_OK(ctx, clrun_buf_new_from(ctx, pass ? (void *)fi : (void *)ii, sizeof ii, 0, &din));
        CHECK_OK(ctx, clrun_buf_new(ctx, sizeof io, 0, &dout));
        CHECK_OK(ctx, clrun_arg_buf(k, 0, din));
        CHECK_OK(ctx, clrun_arg_buf(k, 1, dout));
        CHECK_OK(ctx, clrun_arg_u32(k, 2, N));
        CHECK_OK(ctx, clrun_arg_local(k, 3, 64 * 4));
        const size_t g = 16 * 64, l = 64;
        CHECK_OK(ctx, clrun_launch(k, 1, &g, &l));
        CHECK_OK(ctx, clrun_download(dout, 0, pass ? (void *)fo : (void *)io, sizeof io));
        for (int b = 0; b < 16; b++) {
            double want_sum = 0;
            for (int i = b * 64; i < (b + 1) * 64 && i < N; i++) want_sum += pass ? 2.0 * fi[i] : 3.0 * ii[i];
            if ((pass ? (double)fo[b] : (double)io[b]) != want_sum)
                fail_msg("pass %d block %d: %g, the host says %g", pass, b, pass ? (double)fo[b] : (double)io[b], want_sum);
        }
        clrun_buf_free(din), clrun_buf_free(dout);
        clrun_kernel_free(k);
    }
    clrun_prog_free(p);
}

/* File-scope constants (a const int sizing a __shared__ array, a const float table, two declarators in
 * one declaration) are read by device code as in CUDA; a static kernel is a kernel. */
static void constants_and_static_kernels(void **state)
{
    clrun_ctx *ctx = *state;
    if (!available()) skip();
    static const char src[] = "const int TILE = 8, TWICE = 2 * TILE;\n"
                              "const float w[3] = {0.5f, -1.0f, 4.0f};\n"
                              "__global__ static void k(float *o, const float *in)\n"
                              "{\n"
                              "    __shared__ float s[TILE][TILE + 1];\n"
                              "    int t = threadIdx.x;\n"
                              "    s[t / TILE][t % TILE] = in[t];\n"
                              "    __syncthreads();\n"
                              "    o[t] = s[t % TILE][t / TILE] * w[t % 3] + TWICE;\n"
                              "}\n";
    float in[64], out[64];
    for (int i = 0; i < 64; i++) in[i] = (float)(i * 7 % 13) - 6.0f;
    clrun_prog *p = NULL;
    clrun_kernel *k = NULL;
    clrun_buf *din = NULL, *dout = NULL;
    CHECK_OK(ctx, clrun_prog_cuda(ctx, src, "consts.cu", NULL, &p));
    CHECK_OK(ctx, clrun_kernel_new(p, "k", &k));
    CHECK_OK(ctx, clrun_buf_new_from(ctx, in, sizeof in, 0, &din));
    CHECK_OK(ctx, clrun_buf_new(ctx, sizeof out, 0, &dout));
    CHECK_OK(ctx, clrun_arg_buf(k, 0, dout));
    CHECK_OK(ctx, clrun_arg_buf(k, 1, din));
    const size_t g = 64;
    CHECK_OK(ctx, clrun_launch(k, 1, &g, &g));
    CHECK_OK(ctx, clrun_download(dout, 0, out, sizeof out));
    static const float w[3] = {0.5f, -1.0f, 4.0f};
    for (int t = 0; t < 64; t++) {
        const float want = in[(t % 8) * 8 + t / 8] * w[t % 3] + 16.0f;
        if (out[t] != want) fail_msg("o[%d] = %g, want %g", t, out[t], want);
    }
    clrun_buf_free(din), clrun_buf_free(dout);
    clrun_kernel_free(k);
    clrun_prog_free(p);
}

/* clrun_cuda_translate_options: its arguments checked; -D holds for the parse; two threads translating
 * at once get what one gets alone. */
struct tjob {
    const char *src;
    char *out;
    const char *name, *opts; /* NULL: "t.cu", "-DSCALE=2.0f" */
    clrun_status st;
    int differed; /* a translation unlike the thread's first */
};

static void *translate_job(void *arg)
{
    struct tjob *j = arg;
    for (int i = 0; i < 20 && !j->st && !j->differed; i++) {
        char *o = NULL;
        j->st = clrun_cuda_translate_options(j->src, j->name ? j->name : "t.cu", j->opts ? j->opts : "-DSCALE=2.0f", &o);
        if (!j->st && j->out && strcmp(o, j->out)) j->differed = 1;
        if (j->out) clrun_string_free(o);
        else j->out = o;
    }
    return NULL;
}

static void translate_options_and_threads(void **state)
{
    (void)state;
    char *out = (char *)1;
    CHECK_FAIL(NULL, clrun_cuda_translate_options(NULL, "x.cu", NULL, &out), CLRUN_INVALID_ARG, "source is NULL");
    assert_null(out);
    CHECK_FAIL(NULL, clrun_cuda_translate_options(article, "x.cu", NULL, NULL), CLRUN_INVALID_ARG, "out is NULL");
    if (!available()) skip();
    static const char src[] = "template <typename T> __device__ T twice(T x) { return x * SCALE; }\n"
                              "extern \"C\" __global__ void k(float *a) { a[threadIdx.x] = twice(a[threadIdx.x]); }\n";
    CHECK_FAIL(NULL, clrun_cuda_translate_options(src, "t.cu", NULL, &out), CLRUN_BUILD_FAILED, "undeclared identifier 'SCALE'");
    struct tjob jobs[2] = {{.src = src}, {.src = src}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, translate_job, &jobs[i]), 0);
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
    for (int i = 0; i < 2; i++) {
        if (jobs[i].st || jobs[i].differed)
            fail_msg("thread %d: %s%s", i, clrun_status_str(jobs[i].st), jobs[i].differed ? ", translations differ" : "");
        assert_non_null(strstr(jobs[i].out, "twice_clrun_t0"));
    }
    assert_string_equal(jobs[0].out, jobs[1].out);
    clrun_string_free(jobs[0].out), clrun_string_free(jobs[1].out);
}

static void refusals(void **state)
{
    clrun_ctx *ctx = *state;
    char *out = NULL;
    CHECK_FAIL(NULL, clrun_cuda_translate(NULL, "x.cu", &out), CLRUN_INVALID_ARG, "source is NULL");
    CHECK_FAIL(NULL, clrun_cuda_translate(article, "x.cu", NULL), CLRUN_INVALID_ARG, "out is NULL");
    if (!available()) skip();
    static const struct {
        const char *src, *needle;
    } cases[] = {
        {"template <typename T> __global__ void k(T *a) { auto f = [](T v) { return v; }; a[0] = f(a[1]); }\n"
         "template <typename T> __global__ void unused(T *a) { auto f = [](T v) { return v; }; a[0] = f(a[1]); }\n"
         "template __global__ void k<float>(float *);\n",
         "x.cu:1:58: a lambda: OpenCL C has none (template 'k', instantiated at x.cu:3)"},
        {"template <typename T> __global__ void k(T *a) { a[0] = 1; }\ntemplate __global__ void k<nosuch>(float *);\n",
         "x.cu:2:28: error: use of undeclared identifier 'nosuch'"},
        {"__global__ void k(float *a)\n{\n  auto f = [](float v) { return v; };\n  a[0] = f(1.0f);\n}\n", "x.cu:3:"},
        {"__global__ void k(float **a) { a[0][0] = 1.0f; }\n", "pointer to a pointer"},
        {"template <typename T> __device__ T f(T *v) { return __shfl_down_sync(0xffffffff, v[0] * 2, 1); }\n"
         "__global__ void k(float *a) { a[0] = f(a); }\n",
         "x.cu:1:53: __shfl_down_sync on a value whose type is not int"},
        {"__global__ void k(float *a) { a[0] = __shfl_down(a[0], 1); }\n", "x.cu:1:"},
        {"#include \"mine.cuh\"\n__global__ void k(float *a) { a[0] = 1.0f; }\n", "x.cu:1:"},
        {"__global__ void k(float *a)\n{\n  a[0] = undefined_name;\n}\n", "x.cu:3:10: error: use of undeclared identifier"},
        {"__device__ float g[4];\n__global__ void k(float *a) { a[0] = g[0]; }\n", "global variable 'g'"},
        {"float host_only = 2.0f;\n__global__ void k(float *a) { a[0] = 1.0f; }\n", "host variable 'host_only'"},
        {"__device__ void f(float *p) { float *q = p; q[0] = 1.0f; }\n__global__ void k(float *a)\n{\n  __shared__ float s[4];\n  f(a);\n"
         "  f(s);\n}\n",
         "declares pointer variables"},
        {"__device__ void g(float *p) { p[0] = 2.0f; }\n__device__ void f(float *p) { g(p); }\n__global__ void k(float *a)\n{\n"
         "  __shared__ float s[4];\n  f(a);\n  f(s);\n}\n",
         "passes a pointer on to 'g'"},
        {"__device__ void f(float &v) { v = 1.0f; }\n__global__ void k(float &a) { f(a); }\n", "reference parameter 'a' of a kernel"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        out = (char *)1;
        const clrun_status st = clrun_cuda_translate(cases[i].src, "x.cu", &out);
        if (st != CLRUN_BUILD_FAILED || out != NULL) fail_msg("case %zu: status %d", i, (int)st);
        if (!strstr(clrun_last_error(NULL), cases[i].needle))
            fail_msg("case %zu: '%s' lacks '%s'", i, clrun_last_error(NULL), cases[i].needle);
    }
    /* a compile error of the device's compiler names the CUDA file's line */
    clrun_prog *p = NULL;
    CHECK_FAIL(ctx, clrun_prog_cuda(ctx, "__global__ void k(float *a)\n{\n  a[0] = 1.0f\n}\n", "y.cu", NULL, &p), CLRUN_BUILD_FAILED,
               "y.cu:3");
    assert_null(p);
}

/* Warp sums with __shfl_xor_sync on ints: each lane holds its warp's sum, where the device has warps
 * (inline PTX on NVIDIA, sub-groups of 32); elsewhere the build fails naming the first use's line. */
static void warp_shuffles(void **state)
{
    clrun_ctx *ctx = *state;
    if (!available()) skip();
    if (clrun_ctx_device(ctx)->max_work_group < 64) skip();
    static const char src[] = "__global__ void wsum(const int *in, int *out)\n"
                              "{\n"
                              "    int i = blockIdx.x * blockDim.x + threadIdx.x, v = in[i];\n"
                              "    for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);\n"
                              "    out[i] = v;\n"
                              "}\n";
    enum { N = 256 };
    int in[N], out[N], want[N];
    for (int i = 0; i < N; i++) in[i] = (int)(frand() * 2000.0f) - 1000;
    for (int w = 0; w < N / 32; w++) {
        int sum = 0;
        for (int l = 0; l < 32; l++) sum += in[32 * w + l];
        for (int l = 0; l < 32; l++) want[32 * w + l] = sum;
    }
    clrun_prog *p = NULL;
    const clrun_status st = clrun_prog_cuda(ctx, src, "warp.cu", NULL, &p);
    if (st != CLRUN_OK) { /* no warps: refused at the line, naming what is missing */
        assert_int_equal(st, CLRUN_BUILD_FAILED);
        if (!strstr(clrun_last_error(ctx), "warp.cu:4:") || !strstr(clrun_last_error(ctx), "warp intrinsics need"))
            fail_msg("%s", clrun_last_error(ctx));
        assert_false(clrun_ctx_device(ctx)->type == CLRUN_DEVICE_GPU && strstr(clrun_ctx_device(ctx)->platform_vendor, "NVIDIA"));
        return;
    }
    clrun_kernel *k = NULL;
    clrun_buf *din = NULL, *dout = NULL;
    CHECK_OK(ctx, clrun_kernel_new(p, "wsum", &k));
    CHECK_OK(ctx, clrun_buf_new_from(ctx, in, sizeof in, 0, &din));
    CHECK_OK(ctx, clrun_buf_new(ctx, sizeof out, 0, &dout));
    CHECK_OK(ctx, clrun_arg_buf(k, 0, din));
    CHECK_OK(ctx, clrun_arg_buf(k, 1, dout));
    const size_t g = N, l = 64;
    CHECK_OK(ctx, clrun_launch(k, 1, &g, &l));
    CHECK_OK(ctx, clrun_download(dout, 0, out, sizeof out));
    for (int i = 0; i < N; i++)
        if (out[i] != want[i]) fail_msg("lane %d: %d, the host says %d", i, out[i], want[i]);
    clrun_buf_free(din), clrun_buf_free(dout);
    clrun_kernel_free(k);
    clrun_prog_free(p);
}

static void write_text(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A user's own headers: pasted in where included (beside the file, then -I directories; include
 * guards and #pragma once as the preprocessor keeps them), the kernel run, and every message —
 * clang's, the translator's, the device compiler's — naming the header's own file and line. */
static void included_headers(void **state)
{
    clrun_ctx *ctx = *state;
    if (!available()) skip();
    char dir[] = "/tmp/clrun-cuinc-XXXXXX", sub[600], inc[600], main_name[600], opts[700];
    assert_non_null(mkdtemp(dir));
    snprintf(sub, sizeof sub, "%s/sub", dir), snprintf(inc, sizeof inc, "%s/inc dir", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(mkdir(inc, 0700), 0);
    write_text(sub, "twice.cuh",
               "#pragma once\n#include \"scale.cuh\"\n__device__ inline float twice(float x) { return scale(x, 2.0f); }\n");
    write_text(sub, "scale.cuh",
               "#ifndef SCALE_CUH\n#define SCALE_CUH\n__device__ inline float scale(float x, float s)\n{\n    return x * s;\n}\n#endif\n");
    write_text(inc, "offset.cuh", "/* from an -I directory */\n#define OFFSET 0.5f\n");
    write_text(inc, "broken.cuh", "__device__ float broken(float x)\n{\n    return x +* ;\n}\n");
    write_text(inc, "devonly.cuh", "\n\n#ifdef __OPENCL_VERSION__\n#error the device compiler reads this line\n#endif\n");
    write_text(inc, "self.cuh", "#include \"self.cuh\"\n");
    snprintf(main_name, sizeof main_name, "%s/k.cu", dir);
    snprintf(opts, sizeof opts, "-I\"%s\" -DGAIN=3", inc);
    static const char src[] = "// headers beside the file and in an -I directory\n"
                              "#include \"sub/twice.cuh\"\n"
                              "#include \"sub/twice.cuh\"\n"
                              "#include <offset.cuh>\n"
                              "__global__ void k(float *a)\n"
                              "{\n"
                              "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                              "    a[i] = twice(a[i]) + scale(OFFSET, GAIN);\n"
                              "}\n";
    char *cl = NULL;
    CHECK_OK(NULL, clrun_cuda_translate_options(src, main_name, opts, &cl));
    char want[800];
    snprintf(want, sizeof want, "#line 1 \"%s/sub/scale.cuh\"\n", dir);
    if (!strstr(cl, want)) fail_msg("the translation lacks '%s':\n%s", want, cl);
    snprintf(want, sizeof want, "#line 5 \"%s\"\n__kernel void k", main_name);
    if (!strstr(cl, want)) fail_msg("the translation lacks '%s':\n%s", want, cl);
    const char *first = strstr(cl, "inline float twice");
    assert_non_null(first);
    if (strstr(first + 1, "inline float twice")) fail_msg("#pragma once: twice.cuh pasted twice:\n%s", cl);
    /* two threads pasting the same headers in at once: each translation the one above */
    struct tjob jobs[2] = {{.src = src, .name = main_name, .opts = opts}, {.src = src, .name = main_name, .opts = opts}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, translate_job, &jobs[i]), 0);
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
    for (int i = 0; i < 2; i++) {
        if (jobs[i].st || jobs[i].differed || strcmp(jobs[i].out, cl)) fail_msg("thread %d: %s", i, clrun_status_str(jobs[i].st));
        clrun_string_free(jobs[i].out);
    }
    clrun_string_free(cl);
    /* run: a[i] * 2 + 0.5 * 3 */
    enum { N = 64 };
    float a[N], b[N];
    for (int i = 0; i < N; i++) a[i] = frand();
    clrun_prog *p = NULL;
    clrun_kernel *k = NULL;
    clrun_buf *da = NULL;
    CHECK_OK(ctx, clrun_prog_cuda(ctx, src, main_name, opts, &p));
    CHECK_OK(ctx, clrun_kernel_new(p, "k", &k));
    CHECK_OK(ctx, clrun_buf_new_from(ctx, a, sizeof a, 0, &da));
    CHECK_OK(ctx, clrun_arg_buf(k, 0, da));
    const size_t g = N;
    CHECK_OK(ctx, clrun_launch(k, 1, &g, NULL));
    CHECK_OK(ctx, clrun_download(da, 0, b, sizeof b));
    for (int i = 0; i < N; i++)
        if (b[i] != a[i] * 2.0f + 1.5f) fail_msg("a[%d]: %g, the host says %g", i, (double)b[i], (double)(a[i] * 2.0f + 1.5f));
    clrun_buf_free(da);
    clrun_kernel_free(k);
    clrun_prog_free(p);
    /* messages name the header's lines: clang's, the device compiler's, the translator's */
    char needle[800];
    snprintf(needle, sizeof needle, "%s/broken.cuh:3:", inc);
    CHECK_FAIL(ctx,
               clrun_prog_cuda(ctx, "#include \"broken.cuh\"\n__global__ void k(float *a) { a[0] = broken(a[0]); }\n", main_name, opts, &p),
               CLRUN_BUILD_FAILED, needle);
    snprintf(needle, sizeof needle, "%s/devonly.cuh:4", inc);
    CHECK_FAIL(ctx, clrun_prog_cuda(ctx, "\n#include <devonly.cuh>\n__global__ void k(float *a) { a[0] = 1.0f; }\n", main_name, opts, &p),
               CLRUN_BUILD_FAILED, needle);
    snprintf(needle, sizeof needle, "%s:2:1: #include \"nowhere.cuh\": not found beside the file or in the -I directories", main_name);
    CHECK_FAIL(ctx, clrun_prog_cuda(ctx, "\n#include \"nowhere.cuh\"\n__global__ void k(float *a) { a[0] = 1.0f; }\n", main_name, opts, &p),
               CLRUN_BUILD_FAILED, needle);
    CHECK_FAIL(ctx, clrun_prog_cuda(ctx, "#include \"self.cuh\"\n", main_name, opts, &p), CLRUN_BUILD_FAILED, "nest more than 64 deep");
    /* without the -I directory, the angled header is not found, and named so */
    CHECK_FAIL(ctx, clrun_prog_cuda(ctx, src, main_name, "-DGAIN=3", &p), CLRUN_BUILD_FAILED, "#include <offset.cuh>: not found in the -I");
    assert_null(p);
    static const char *const files[] = {
        "sub/twice.cuh", "sub/scale.cuh", "inc dir/offset.cuh", "inc dir/broken.cuh", "inc dir/devonly.cuh", "inc dir/self.cuh",
        "sub",           "inc dir"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[800];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        assert_int_equal(remove(path), 0);
    }
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refusals),         cmocka_unit_test(article_kernel),
        cmocka_unit_test(reduction_kernel), cmocka_unit_test(constants_and_static_kernels),
        cmocka_unit_test(template_kernels), cmocka_unit_test(translate_options_and_threads),
        cmocka_unit_test(warp_shuffles),    cmocka_unit_test(included_headers),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
