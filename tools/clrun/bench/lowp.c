/* lowp.c — `clrun bench int8` and `clrun bench sparse`: INT8 GEMM (clrun_gemm_s8) and quantization
 * bandwidth, 2:4 sparse GEMM (clrun_gemm_sp) against the dense kernel on the same pruned A; peers
 * in the same run: clrun's own f16 (GPU) or f32 (CPU) kernel, PyTorch's torch._int_mm and
 * semi-structured sparse matmul on CUDA (tools/peers/torch_int8.py). */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* PyTorch's int8, f16 and 2:4 sparse f16 products of the shape (ms; 0 where missing). */
static void torch_lowp(size_t m, size_t n, size_t k, int reps, double *i8, double *f16, double *sp)
{
    char a[4][32];
    snprintf(a[0], sizeof a[0], "%zu", m), snprintf(a[1], sizeof a[1], "%zu", n), snprintf(a[2], sizeof a[2], "%zu", k);
    snprintf(a[3], sizeof a[3], "%d", reps);
    const char *const args[] = {a[0], a[1], a[2], a[3], NULL}, *const keys[] = {"int8", "f16", "sparse", NULL};
    double v[3] = {0, 0, 0};
    *i8 = *f16 = *sp = 0;
    if (bench_peer("torch_int8.py", args, keys, v) > 0) *i8 = v[0], *f16 = v[1], *sp = v[2];
}

/* The median ms of reps calls of the GEMM after a warm-up (each call followed by clFinish). */
enum lowp_kind { K_GEMM, K_S8, K_SP };
struct lowp_call {
    enum lowp_kind kind;
    clrun_gemm_desc d;
    const clrun_s8_epilogue *e;
    clrun_buf *meta;
};

static clrun_status time_call(clrun_ctx *ctx, struct lowp_call *c, int reps, double *ms)
{
    double t[64];
    clrun_status st = CLRUN_OK;
    for (int r = -1; r < reps && !st; r++) {
        const double t0 = cli_now();
        st = c->kind == K_GEMM ? clrun_gemm(ctx, &c->d)
             : c->kind == K_S8 ? clrun_gemm_s8(ctx, &c->d, c->e)
                               : clrun_gemm_sp(ctx, &c->d, c->meta, 0);
        if (!st) st = clrun_finish(ctx);
        if (r >= 0) t[r] = (cli_now() - t0) * 1e3;
    }
    if (!st) *ms = cli_median(t, reps);
    return st;
}

static void *fill_random(size_t bytes, uint64_t seed, int kind) /* kind 0: s8, 1: f16 in [-1, 1), 2: bf16 */
{
    unsigned char *p = malloc(bytes ? bytes : 1);
    for (size_t i = 0; p && i < bytes / (kind ? 2 : 1); i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        const float v = (float)(seed >> 40) / 8388608.0f - 1.0f;
        if (!kind) p[i] = (unsigned char)(seed >> 56);
        else ((uint16_t *)p)[i] = kind == 1 ? clrun_f32_to_f16(v) : clrun_f32_to_bf16(v);
    }
    return p;
}

static int ratio_line(const struct bench_opts *o, const char *what, double num_ms, double den_ms)
{
    if (!o->json && num_ms > 0 && den_ms > 0) printf("  -> %s: %.2f×\n", what, den_ms / num_ms);
    return 0;
}

int bench_int8(const struct bench_opts *o)
{
    clrun_ctx *ctx = NULL;
    int rc = cli_open("bench", o->spec, &ctx);
    if (rc) return rc;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const int gpu = in->type == CLRUN_DEVICE_GPU, tc = gpu && clrun_gemm_tensor_cores(ctx);
    size_t shapes[16][3], ns = 0;
    const char *list = o->shapes ? o->shapes : gpu ? "4096x4096x4096,8192x8192x8192" : "256x256x256,512x512x512,1024x1024x1024";
    if (!parse_shapes(list, shapes, &ns)) {
        clrun_close(ctx);
        return cli_usage_error("bench", "--shapes wants MxNxK[,MxNxK...], not '%s'", list);
    }
    const int reps = o->repeat > 64 ? 64 : o->repeat;
    if (!o->json)
        printf("INT8 benchmark on %s: s8 x s8 -> s32 exact (ops = 2·M·N·K, in the GFLOP/s column), against clrun's %s kernel in\n"
               "the same run; wall clock around the call and clFinish, median of %d after a warm-up; tensor cores: %s\n"
               "%-30s %6s %6s %6s %12s %10s\n",
               in->name, tc ? "f16 tensor-core" : "f32", reps, tc ? clrun_gemm_tensor_kernel(ctx, CLRUN_I8) : "no", "impl", "M", "N", "K",
               "median_ms", "GOP/s");
    for (size_t si = 0; si < ns && rc == 0; si++) {
        const size_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
        clrun_status st = CLRUN_OK;
        clrun_buf *a8 = NULL, *b8 = NULL, *c = NULL, *af = NULL, *bf = NULL, *rs = NULL, *cs = NULL;
        void *ha = fill_random(m * k, 5 + si, 0), *hb = fill_random(k * n, 77 + si, 0);
        const clrun_dtype ft = tc ? CLRUN_F16 : CLRUN_F32;
        const size_t fes = tc ? 2 : 4;
        if (!ha || !hb) st = CLRUN_HOST_OUT_OF_MEMORY;
        if (!st && !(st = clrun_buf_new(ctx, m * k, 0, &a8)) && !(st = clrun_buf_new(ctx, k * n, 0, &b8)) &&
            !(st = clrun_buf_new(ctx, m * n * 4, 0, &c)) && !(st = clrun_upload(a8, 0, ha, m * k)) &&
            !(st = clrun_upload(b8, 0, hb, k * n)) && !(st = clrun_buf_new(ctx, m * k * fes, 0, &af)) &&
            !(st = clrun_buf_new(ctx, k * n * fes, 0, &bf)) && !(st = clrun_buf_new(ctx, m * 4, 0, &rs)) &&
            !(st = clrun_buf_new(ctx, n * 4, 0, &cs)) && !(st = clrun_buf_fill(af, &(float){0.25f}, 4, 0, 0)) &&
            !(st = clrun_buf_fill(rs, &(float){0.01f}, 4, 0, m * 4)) && !(st = clrun_buf_fill(cs, &(float){0.02f}, 4, 0, n * 4))) {
            /* f16/f32 operands: the int8 values converted (their bits do not change the speed) */
            if (tc) {
                uint16_t *h = malloc((m * k > k * n ? m * k : k * n) * 2);
                if (!h) st = CLRUN_HOST_OUT_OF_MEMORY;
                for (size_t i = 0; h && i < m * k; i++) h[i] = clrun_f32_to_f16(((signed char *)ha)[i] / 128.0f);
                if (!st) st = clrun_upload(af, 0, h, m * k * 2);
                for (size_t i = 0; h && !st && i < k * n; i++) h[i] = clrun_f32_to_f16(((signed char *)hb)[i] / 128.0f);
                if (!st) st = clrun_upload(bf, 0, h, k * n * 2);
                free(h);
            } else {
                float *h = malloc((m * k > k * n ? m * k : k * n) * 4);
                if (!h) st = CLRUN_HOST_OUT_OF_MEMORY;
                for (size_t i = 0; h && i < m * k; i++) h[i] = ((signed char *)ha)[i] / 128.0f;
                if (!st) st = clrun_upload(af, 0, h, m * k * 4);
                for (size_t i = 0; h && !st && i < k * n; i++) h[i] = ((signed char *)hb)[i] / 128.0f;
                if (!st) st = clrun_upload(bf, 0, h, k * n * 4);
                free(h);
            }
        }
        double base = 0, nt = 0, nn = 0, epi = 0;
        const clrun_s8_epilogue e = {rs, cs, NULL, 1};
        struct lowp_call call = {
            K_GEMM, {.m = m, .n = n, .k = k, .alpha = 1, .lda = k, .ldb = n, .ldc = n, .type = ft, .a = af, .b = bf, .c = c}, NULL, NULL};
        if (!st && !(st = time_call(ctx, &call, reps, &base)))
            gemm_record(o, tc ? "clrun f16 tensor cores" : "clrun f32 kernel", m, n, k, base);
        /* B as N×K (a weight matrix's layout, read by rows as the tensor cores want it) */
        call = (struct lowp_call){
            K_S8,
            {.trans_b = 1, .m = m, .n = n, .k = k, .alpha = 1, .lda = k, .ldb = k, .ldc = n, .type = CLRUN_I8, .a = a8, .b = b8, .c = c},
            NULL,
            NULL};
        if (!st && !(st = time_call(ctx, &call, reps, &nt))) gemm_record(o, "clrun int8, B as NxK", m, n, k, nt);
        call.e = &e;
        if (!st && !(st = time_call(ctx, &call, reps, &epi))) gemm_record(o, "clrun int8 + f32 epilogue", m, n, k, epi);
        call.e = NULL, call.d.trans_b = 0, call.d.ldb = n;
        if (!st && !(st = time_call(ctx, &call, reps, &nn))) gemm_record(o, "clrun int8, B as KxN", m, n, k, nn);
        if (st) rc = cli_fail("bench", ctx, st);
        else
            ratio_line(o, tc ? "int8 (B as NxK) against clrun's f16 tensor cores" : "int8 (B as NxK) against clrun's f32 kernel", nt, base);
        double ti8 = 0, tf16 = 0, tsp = 0;
        if (rc == 0 && gpu) {
            torch_lowp(m, n, k, reps, &ti8, &tf16, &tsp);
            if (ti8 > 0) gemm_record(o, "PyTorch torch._int_mm (cuBLASLt)", m, n, k, ti8);
            else if (!o->json) printf("(PyTorch with CUDA and torch._int_mm not found: no cuBLASLt row)\n");
        }
        clrun_buf_free(a8), clrun_buf_free(b8), clrun_buf_free(c), clrun_buf_free(af), clrun_buf_free(bf), clrun_buf_free(rs),
            clrun_buf_free(cs);
        free(ha), free(hb);
    }
    /* quantize / dequantize: bytes read + written per second */
    const size_t count = (size_t)(o->size_mib > 0 ? o->size_mib : gpu ? 256 : 16) << 20;
    clrun_buf *x = NULL, *q = NULL;
    clrun_status st;
    if (rc == 0 && ((st = clrun_buf_new(ctx, count * 4, 0, &x)) || (st = clrun_buf_new(ctx, count, 0, &q)) ||
                    (st = clrun_buf_fill(x, &(float){1.5f}, 4, 0, count))))
        rc = cli_fail("bench", ctx, st);
    float sc[256];
    int32_t zp[256];
    for (int i = 0; i < 256; i++) sc[i] = 0.01f + i * 1e-4f, zp[i] = i % 7 - 3;
    const clrun_qparams pt = {1, 0, sc, zp}, pc = {256, count / 256 / 256 ? count / 256 / 256 : 1, sc, zp};
    static const char *const names[] = {"quantize, per tensor", "dequantize, per tensor", "quantize, 256 channels",
                                        "dequantize, 256 channels"};
    if (rc == 0 && !o->json) printf("\n%-30s %12s %12s %10s\n", "quantization", "elements", "median_ms", "GB/s");
    for (int v = 0; v < 4 && rc == 0; v++) {
        double t[64];
        const clrun_qparams *p = v < 2 ? &pt : &pc;
        for (int r = -1; r < reps && rc == 0; r++) {
            const double t0 = cli_now();
            if ((st = v % 2 ? clrun_dequantize(ctx, q, 0, x, 0, count, p) : clrun_quantize(ctx, x, 0, q, 0, count, p)) ||
                (st = clrun_finish(ctx)))
                rc = cli_fail("bench", ctx, st);
            if (r >= 0) t[r] = (cli_now() - t0) * 1e3;
        }
        if (rc == 0) {
            const double ms = cli_median(t, reps);
            record(o, "quant", names[v], count, ms, count * 5.0 / ms / 1e6, NULL);
        }
    }
    clrun_buf_free(x), clrun_buf_free(q);
    clrun_close(ctx);
    return rc;
}

int bench_sparse(const struct bench_opts *o)
{
    clrun_ctx *ctx = NULL;
    int rc = cli_open("bench", o->spec, &ctx);
    if (rc) return rc;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const int gpu = in->type == CLRUN_DEVICE_GPU;
    size_t shapes[16][3], ns = 0;
    const char *list = o->shapes ? o->shapes : gpu ? "4096x4096x4096,8192x8192x8192" : "512x512x512,1024x1024x1024";
    if (!parse_shapes(list, shapes, &ns)) {
        clrun_close(ctx);
        return cli_usage_error("bench", "--shapes wants MxNxK[,MxNxK...], not '%s'", list);
    }
    const int reps = o->repeat > 64 ? 64 : o->repeat;
    if (!o->json)
        printf("2:4 sparse GEMM benchmark on %s: A pruned to 2:4 along K, times B dense, C in f32: the sparse kernel on A\n"
               "compressed against clrun's dense kernel on the same pruned A, in the same run (GFLOP/s count the dense 2·M·N·K);\n"
               "wall clock around the call and clFinish, median of %d after a warm-up\n%-30s %6s %6s %6s %12s %10s\n",
               in->name, reps, "impl", "M", "N", "K", "median_ms", "GFLOP/s");
    static const struct {
        const char *dense, *sparse;
        clrun_dtype t;
    } types[] = {{"clrun f16 dense", "clrun f16 2:4 sparse", CLRUN_F16}, {"clrun bf16 dense", "clrun bf16 2:4 sparse", CLRUN_BF16}};
    for (size_t si = 0; si < ns && rc == 0; si++) {
        const size_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2], kv = clrun_sp24_kv(k), km = clrun_sp24_km(k);
        for (size_t ti = 0; ti < 2 && rc == 0; ti++) {
            const clrun_dtype t = types[ti].t;
            clrun_status st = CLRUN_OK;
            clrun_buf *a = NULL, *v = NULL, *meta = NULL, *b = NULL, *c = NULL, *c2 = NULL;
            void *ha = fill_random(m * k * 2, 3 + si, t == CLRUN_F16 ? 1 : 2),
                 *hb = fill_random(k * n * 2, 91 + si, t == CLRUN_F16 ? 1 : 2);
            double dense = 0, sparse = 0, auto_ms = 0, diff = 0;
            if (!ha || !hb) st = CLRUN_HOST_OUT_OF_MEMORY;
            if (!st && !(st = clrun_buf_new(ctx, m * k * 2, 0, &a)) && !(st = clrun_buf_new(ctx, m * kv * 2, 0, &v)) &&
                !(st = clrun_buf_new(ctx, m * km * 4, 0, &meta)) && !(st = clrun_buf_new(ctx, k * n * 2, 0, &b)) &&
                !(st = clrun_buf_new(ctx, m * n * 4, 0, &c)) && !(st = clrun_buf_new(ctx, m * n * 4, 0, &c2)) &&
                !(st = clrun_upload(a, 0, ha, m * k * 2)) && !(st = clrun_upload(b, 0, hb, k * n * 2)) &&
                !(st = clrun_sp24_prune(ctx, t, a, 0, k, m, k)) && !(st = clrun_sp24_compress(ctx, t, a, 0, k, m, k, v, meta))) {
                struct lowp_call call = {
                    K_GEMM,
                    {.m = m, .n = n, .k = k, .alpha = 1, .lda = k, .ldb = n, .ldc = n, .type = t, .a = a, .b = b, .c = c},
                    NULL,
                    NULL};
                if (!(st = time_call(ctx, &call, reps, &dense))) gemm_record(o, types[ti].dense, m, n, k, dense);
                float *x = malloc(m * n * 4), *y = malloc(m * n * 4);
                if (!x || !y) st = st ? st : CLRUN_HOST_OUT_OF_MEMORY;
                if (!st) st = clrun_download(c, 0, x, m * n * 4);
                /* each sparse tensor-core kernel by name (the ratio is the fastest's), then what auto
                 * runs: the sparse kernel, or the dense one on the decompressed A where that measured
                 * faster; every result against the dense one (within f32 sums in other orders) */
                static const clrun_gemm_backend kernels[] = {CLRUN_GEMM_WGMMA, CLRUN_GEMM_MMA_SYNC, CLRUN_GEMM_AUTO};
                for (size_t ki = gpu ? 0 : 2; ki < 3 && !st; ki++) {
                    call = (struct lowp_call){K_SP,
                                              {.m = m,
                                               .n = n,
                                               .k = k,
                                               .alpha = 1,
                                               .lda = kv,
                                               .ldb = n,
                                               .ldc = n,
                                               .type = t,
                                               .a = v,
                                               .b = b,
                                               .c = c2,
                                               .backend = kernels[ki]},
                                              NULL,
                                              meta};
                    double ms = 0;
                    const clrun_status ts = time_call(ctx, &call, reps, &ms);
                    if (ts == CLRUN_UNSUPPORTED && kernels[ki] != CLRUN_GEMM_AUTO) continue; /* no such kernel here */
                    if ((st = ts)) break;
                    char name[96];
                    if (kernels[ki] == CLRUN_GEMM_AUTO) snprintf(name, sizeof name, "%s", types[ti].sparse);
                    else snprintf(name, sizeof name, "%s (%s)", types[ti].sparse, clrun_gemm_backend_name(kernels[ki]));
                    gemm_record(o, name, m, n, k, ms);
                    if (kernels[ki] == CLRUN_GEMM_AUTO) auto_ms = ms;
                    else if (sparse == 0 || ms < sparse) sparse = ms;
                    if ((st = clrun_download(c2, 0, y, m * n * 4))) break;
                    for (size_t i = 0; i < m * n; i++) {
                        const double dd = fabs((double)x[i] - y[i]) / (fabs((double)x[i]) + 1);
                        if (!(dd <= diff)) diff = dd; /* NaN stays */
                    }
                }
                free(x), free(y);
            }
            if (st) rc = cli_fail("bench", ctx, st);
            else {
                ratio_line(o, "sparse kernel against dense on the same pruned A", sparse ? sparse : auto_ms, dense);
                ratio_line(o, "auto against dense on the same pruned A", auto_ms, dense);
                if (!o->json) printf("  (largest difference between the two results: %.2g relative to |C| + 1)\n", diff);
                if (diff > 1e-3 || diff != diff)
                    rc = (fprintf(stderr, "clrun bench: the sparse and dense results disagree\n"), EXIT_RUNTIME);
            }
            if (rc == 0 && gpu && ti == 0) {
                double ti8, tf16, tsp;
                torch_lowp(m, n, k, reps, &ti8, &tf16, &tsp);
                if (tf16 > 0) gemm_record(o, "PyTorch f16 matmul (cuBLAS)", m, n, k, tf16);
                if (tsp > 0) gemm_record(o, "PyTorch f16 2:4 semi-structured", m, n, k, tsp);
                else if (!o->json) printf("(PyTorch with CUDA and semi-structured sparsity not found: no sparse peer)\n");
            }
            clrun_buf_free(a), clrun_buf_free(v), clrun_buf_free(meta), clrun_buf_free(b), clrun_buf_free(c), clrun_buf_free(c2);
            free(ha), free(hb);
        }
    }
    clrun_close(ctx);
    return rc;
}
