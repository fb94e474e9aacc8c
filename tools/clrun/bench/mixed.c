/* mixed.c — `clrun bench mixed`: GEMM with f16/bf16 inputs (portable and tensor-core kernels, 3xTF32)
 * against clrun's f32 kernel and PyTorch's cuBLAS; f32 <-> f16/bf16 conversion bandwidth. */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* PyTorch's matmul on CUDA (cuBLAS) in f16 and f32 (tools/peers/torch_gemm.py): median ms of reps
 * after a warm-up. 0 when python3 with torch and a GPU is not there. */
static int torch_gemm(size_t m, size_t n, size_t k, int reps, double *f16, double *f32)
{
    char a[4][32];
    snprintf(a[0], sizeof a[0], "%zu", m), snprintf(a[1], sizeof a[1], "%zu", n), snprintf(a[2], sizeof a[2], "%zu", k);
    snprintf(a[3], sizeof a[3], "%d", reps);
    const char *const args[] = {a[0], a[1], a[2], a[3], NULL}, *const keys[] = {"f16", "f32", NULL};
    double v[2];
    if (bench_peer("torch_gemm.py", args, keys, v) != 2) return 0;
    *f16 = v[0], *f32 = v[1];
    return 1;
}

/* Fill a matrix of count elements of type t with values in [-0.5, 0.5). */
static void *fill_matrix(clrun_dtype t, size_t count, uint64_t seed)
{
    void *p = malloc(count * (t == CLRUN_F32 ? 4 : 2));
    for (size_t i = 0; p && i < count; i++) {
        float v = (float)((seed = seed * 6364136223846793005ull + 1) >> 40) / 16777216.0f - 0.5f;
        if (t == CLRUN_F32) ((float *)p)[i] = v;
        else ((uint16_t *)p)[i] = t == CLRUN_F16 ? clrun_f32_to_f16(v) : clrun_f32_to_bf16(v);
    }
    return p;
}

int bench_mixed(const struct bench_opts *o)
{
    clrun_ctx *ctx = NULL;
    int rc = cli_open("bench", o->spec, &ctx);
    if (rc) return rc;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const int gpu = in->type == CLRUN_DEVICE_GPU, tc = clrun_gemm_tensor_cores(ctx);
    size_t shapes[16][3], ns = 0;
    if (!tc && gpu && *clrun_last_error(ctx)) fprintf(stderr, "clrun bench: no tensor cores: %s\n", clrun_last_error(ctx));
    const char *list = o->shapes ? o->shapes : gpu ? "4096x4096x4096,8192x8192x8192,4095x4097x1000" : "512x512x512,1024x1024x1024";
    if (!parse_shapes(list, shapes, &ns)) {
        clrun_close(ctx);
        return cli_usage_error("bench", "--shapes wants MxNxK[,MxNxK...], not '%s'", list);
    }
    const int reps = o->repeat > 64 ? 64 : o->repeat;
    char tcs[96] = "no (the portable kernels run)";
    if (tc) /* which kernel each type runs ($CLRUN_NO_WGMMA=1: mma.sync everywhere) */
        snprintf(tcs, sizeof tcs, "f16/bf16 %s, f32 (3xTF32) %s, through inline PTX", clrun_gemm_tensor_kernel(ctx, CLRUN_F16),
                 clrun_gemm_tensor_kernel(ctx, CLRUN_F32));
    if (!o->json)
        printf("mixed-precision benchmark on %s: row-major NN, C in f32, GFLOP/s = 2·M·N·K / time, wall clock around the call\n"
               "and clFinish, median of %d after a warm-up; tensor cores: %s\n%-30s %6s %6s %6s %12s %10s\n",
               in->name, reps, tcs, "impl", "M", "N", "K", "median_ms", "GFLOP/s");
    static const struct {
        const char *name;
        clrun_dtype t;
        clrun_gemm_backend be;
        int need_tc;
    } rows[] = {{"clrun f32 (SIMT kernel)", CLRUN_F32, CLRUN_GEMM_KERNEL, 0},  {"clrun f16 portable", CLRUN_F16, CLRUN_GEMM_KERNEL, 0},
                {"clrun bf16 portable", CLRUN_BF16, CLRUN_GEMM_KERNEL, 0},     {"clrun f16 tensor cores", CLRUN_F16, CLRUN_GEMM_TENSOR, 1},
                {"clrun bf16 tensor cores", CLRUN_BF16, CLRUN_GEMM_TENSOR, 1}, {"clrun f32 3xTF32", CLRUN_F32, CLRUN_GEMM_TENSOR, 1}};
    for (size_t si = 0; si < ns && rc == 0; si++) {
        const size_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
        for (size_t r = 0; r < sizeof rows / sizeof *rows && rc == 0; r++) {
            if (rows[r].need_tc && !tc) continue;
            if (rows[r].need_tc && rows[r].t == CLRUN_F32 && (k % 4 || n % 4)) { /* 3xTF32 reads rows in place: on 16 bytes */
                if (!o->json)
                    printf("%-30s %6zu %6zu %6zu   (rows of A or B not 16-byte aligned: 3xTF32 does not take them)\n", rows[r].name, m, n,
                           k);
                continue;
            }
            if (gpu && rows[r].be == CLRUN_GEMM_KERNEL && rows[r].t != CLRUN_F32 && tc && m * n * k > (size_t)1 << 36) continue; /* slow */
            const clrun_dtype t = rows[r].t;
            const size_t es = t == CLRUN_F32 ? 4 : 2;
            void *ha = fill_matrix(t, m * k, 7 + si), *hb = fill_matrix(t, k * n, 99 + si);
            clrun_gemm_desc d;
            clrun_gemm_desc_init(&d, t, 1, m, n, k, 0, 0);
            clrun_status st = CLRUN_OK;
            double ms = 0;
            if (!ha || !hb) rc = (fprintf(stderr, "clrun bench: out of host memory\n"), EXIT_RUNTIME);
            else if ((st = clrun_buf_new(ctx, m * k * es, 0, &d.a)) || (st = clrun_buf_new(ctx, k * n * es, 0, &d.b)) ||
                     (st = clrun_buf_new(ctx, m * n * 4, 0, &d.c)) || (st = clrun_upload(d.a, 0, ha, m * k * es)) ||
                     (st = clrun_upload(d.b, 0, hb, k * n * es)) || (st = time_gemm(ctx, &d, rows[r].be, reps, &ms)))
                rc = cli_fail("bench", ctx, st);
            else gemm_record(o, rows[r].name, m, n, k, ms);
            clrun_buf_free(d.a), clrun_buf_free(d.b), clrun_buf_free(d.c);
            free(ha), free(hb);
        }
        double f16 = 0, f32 = 0;
        if (rc == 0 && gpu && torch_gemm(m, n, k, reps, &f16, &f32)) {
            gemm_record(o, "PyTorch f16 matmul (cuBLAS)", m, n, k, f16);
            gemm_record(o, "PyTorch f32 matmul (cuBLAS)", m, n, k, f32);
        } else if (rc == 0 && gpu && si == 0 && !o->json) {
            printf("(PyTorch with CUDA not found: no cuBLAS rows)\n");
        }
    }
    /* conversions: bytes read + written per second */
    const size_t count = (size_t)(o->size_mib > 0 ? o->size_mib : gpu ? 256 : 16) << 20;
    clrun_buf *f = NULL, *h = NULL;
    clrun_status st;
    if (rc == 0 && ((st = clrun_buf_new(ctx, count * 4, 0, &f)) || (st = clrun_buf_new(ctx, count * 2, 0, &h))))
        rc = cli_fail("bench", ctx, st);
    static const struct {
        const char *name;
        clrun_dtype from, to;
    } casts[] = {{"cast f32 -> f16", CLRUN_F32, CLRUN_F16},
                 {"cast f16 -> f32", CLRUN_F16, CLRUN_F32},
                 {"cast f32 -> bf16", CLRUN_F32, CLRUN_BF16},
                 {"cast bf16 -> f32", CLRUN_BF16, CLRUN_F32}};
    if (rc == 0 && !o->json) printf("\n%-30s %12s %12s %10s\n", "conversion", "elements", "median_ms", "GB/s");
    for (size_t c = 0; c < sizeof casts / sizeof *casts && rc == 0; c++) {
        double t[64];
        clrun_buf *src = casts[c].from == CLRUN_F32 ? f : h, *dst = src == f ? h : f;
        for (int r = -1; r < reps && rc == 0; r++) {
            double t0 = cli_now();
            if ((st = clrun_cast(ctx, src, 0, casts[c].from, dst, 0, casts[c].to, count)) || (st = clrun_finish(ctx)))
                rc = cli_fail("bench", ctx, st);
            if (r >= 0) t[r] = (cli_now() - t0) * 1e3;
        }
        if (rc) break;
        double ms = cli_median(t, reps);
        record(o, "cast", casts[c].name, count, ms, count * 6.0 / ms / 1e6, NULL);
    }
    clrun_buf_free(f), clrun_buf_free(h);
    clrun_close(ctx);
    return rc;
}

/* ---- canny --------------------------------------------------------------------------------------*/
