/* fuzz_sp24.c — libFuzzer target for 2:4 metadata: clrun_sp24_meta_check must never read past the
 * rows it is given, and for every metadata it accepts, clrun_sp24_decompress and clrun_gemm_sp
 * (on the first device, the CPU in CI) must agree on the matrix: the dense product of the
 * decompressed A equals the sparse product exactly (small integers, exact in f32).
 * Input: byte 0 rows-1 (mod 8), byte 1 K-1 (mod 70), then the metadata words (little-endian; missing
 * bytes are 0x44), then the values (signed bytes). */
#include <clrun.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static clrun_ctx *ctx;

static void close_ctx(void) { clrun_close(ctx); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    const size_t rows = (size_t)(data[0] % 8) + 1, k = (size_t)(data[1] % 70) + 1, km = clrun_sp24_km(k), kv = clrun_sp24_kv(k), n = 3;
    uint32_t *meta = malloc(rows * km * sizeof *meta); /* exactly the rows' words: ASan sees a read past them */
    float *vals = malloc(rows * kv * sizeof *vals), *b = malloc(k * n * sizeof *b), *dense = malloc(rows * k * sizeof *dense);
    float *c1 = malloc(rows * n * sizeof *c1), *c2 = malloc(rows * n * sizeof *c2);
    if (!meta || !vals || !b || !dense || !c1 || !c2) abort();
    size_t at = 2;
    for (size_t i = 0; i < rows * km; i++) {
        uint32_t w = 0;
        for (int j = 0; j < 4; j++) w |= (uint32_t)(at < size ? data[at++] : 0x44) << (8 * j);
        meta[i] = w;
    }
    for (size_t i = 0; i < rows * kv; i++) vals[i] = (float)(int8_t)(at < size ? data[at++] : (uint8_t)i);
    for (size_t i = 0; i < k * n; i++) b[i] = (float)((int)(i % 7) - 3);
    size_t br = 0, bg = 0;
    const clrun_status st = clrun_sp24_meta_check(meta, rows, k, &br, &bg);
    if (st != CLRUN_OK && (st != CLRUN_FORMAT_ERROR || br >= rows || bg >= (k + 3) / 4)) abort();
    if (st == CLRUN_OK) {
        if (!ctx) {
            if (clrun_open(&ctx, getenv("CLRUN_TEST_DEVICE") ? getenv("CLRUN_TEST_DEVICE") : NULL)) abort();
            atexit(close_ctx);
        }
        clrun_buf *bv = NULL, *bm = NULL, *bb = NULL, *bd = NULL, *bc = NULL;
        if (clrun_buf_new_from(ctx, vals, rows * kv * 4, 0, &bv) || clrun_buf_new_from(ctx, meta, rows * km * 4, 0, &bm) ||
            clrun_buf_new_from(ctx, b, k * n * 4, 0, &bb) || clrun_buf_new(ctx, rows * k * 4, 0, &bd) ||
            clrun_buf_new(ctx, rows * n * 4, 0, &bc))
            abort();
        clrun_gemm_desc d = {0};
        d.m = rows, d.n = n, d.k = k, d.alpha = 1, d.a = bv, d.lda = kv, d.b = bb, d.ldb = n, d.c = bc, d.ldc = n;
        if (clrun_sp24_decompress(ctx, CLRUN_F32, bv, bm, rows, k, bd, 0, k) || clrun_download(bd, 0, dense, rows * k * 4) ||
            clrun_gemm_sp(ctx, &d, bm, 0) || clrun_download(bc, 0, c2, rows * n * 4))
            abort();
        for (size_t i = 0; i < rows; i++)
            for (size_t j = 0; j < n; j++) {
                float s = 0;
                for (size_t q = 0; q < k; q++) s += dense[i * k + q] * b[q * n + j];
                c1[i * n + j] = s;
            }
        if (memcmp(c1, c2, rows * n * sizeof *c1) != 0) {
            fprintf(stderr, "fuzz_sp24: decompress and gemm_sp disagree on accepted metadata (%zu rows, K %zu)\n", rows, k);
            abort();
        }
        clrun_buf_free(bv), clrun_buf_free(bm), clrun_buf_free(bb), clrun_buf_free(bd), clrun_buf_free(bc);
    }
    free(meta), free(vals), free(b), free(dense), free(c1), free(c2);
    return 0;
}
