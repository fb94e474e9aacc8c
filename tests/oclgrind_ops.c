/* oclgrind_ops.c — every kernel family of the library on small, awkward shapes, for a run under
 * Oclgrind's checkers (tests/oclgrind_check.py runs it as `oclgrind --data-races --uninitialized
 * oclgrind_ops FAMILY` and compares what they report with tests/oclgrind.accounted). It checks only
 * that each call succeeds; the library's own tests check the numbers. The families live in the op
 * folders (lib/ops/NAME/oclgrind.c), walked in the order of lib/ops/ops.def.
 *
 * Shapes are small (Oclgrind interprets every work-item) and chosen to leave partial tiles, partial
 * work-groups and odd tails in every kernel. Data are fixed, so the reports are the same every run. */
#include "oclgrind_ops.h"

clrun_ctx *ctx;
int failures;

static uint32_t rng = 12345;
float next_float(void) /* in [-1, 1) */
{
    rng = rng * 1664525u + 1013904223u;
    return (float)(rng >> 8) / 8388608.0f - 1.0f;
}

/* A device buffer of n elements of t with fixed pseudo-random contents. */
clrun_buf *make(clrun_dtype t, size_t n)
{
    clrun_buf *b = NULL;
    size_t es = clrun_dtype_size(t);
    unsigned char *h = malloc(n * es + 1);
    if (!h) return NULL;
    for (size_t i = 0; i < n; i++) {
        float v = next_float() * 4;
        if (t == CLRUN_F32) memcpy(h + i * 4, &v, 4);
        else {
            uint16_t x = t == CLRUN_F16 ? clrun_f32_to_f16(v) : clrun_f32_to_bf16(v);
            memcpy(h + i * 2, &x, 2);
        }
    }
    if (clrun_buf_new(ctx, n * es, 0, &b) != CLRUN_OK || clrun_upload(b, 0, h, n * es) != CLRUN_OK) {
        fprintf(stderr, "oclgrind_ops: buffer of %zu: %s\n", n, clrun_last_error(ctx));
        failures++;
    }
    free(h);
    return b;
}

/* Bytes of s8 in [-100, 100], fixed. */
clrun_buf *make_s8(size_t n)
{
    clrun_buf *b = NULL;
    int8_t *h = malloc(n + 1);
    if (!h) return NULL;
    for (size_t i = 0; i < n; i++) h[i] = (int8_t)(next_float() * 100);
    if (clrun_buf_new(ctx, n, 0, &b) != CLRUN_OK || clrun_upload(b, 0, h, n) != CLRUN_OK) {
        fprintf(stderr, "oclgrind_ops: s8 buffer of %zu: %s\n", n, clrun_last_error(ctx));
        failures++;
    }
    free(h);
    return b;
}

#define CLRUN_OP(name, summary) extern const struct og_family og_families_##name[];
#include "../lib/ops/ops.def"
#undef CLRUN_OP

static const struct og_family *const all[] = {
#define CLRUN_OP(name, summary) og_families_##name,
#include "../lib/ops/ops.def"
#undef CLRUN_OP
};

static int wanted(int argc, char **argv, const char *family)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], family)) return 1;
    return argc < 2;
}

int main(int argc, char **argv)
{
    /* families, all or those named; --list: their names */
    if (argc == 2 && !strcmp(argv[1], "--list")) {
        for (size_t i = 0; i < sizeof all / sizeof *all; i++)
            for (const struct og_family *f = all[i]; f->name; f++) printf("%s\n", f->name);
        return 0;
    }
    for (int i = 1; i < argc; i++) {
        int known = 0;
        for (size_t j = 0; j < sizeof all / sizeof *all; j++)
            for (const struct og_family *f = all[j]; f->name; f++) known |= !strcmp(f->name, argv[i]);
        if (!known) {
            fprintf(stderr, "oclgrind_ops: no family '%s' (--list names them)\n", argv[i]);
            return 2;
        }
    }
    if (clrun_open(&ctx, getenv("CLRUN_DEVICE")) != CLRUN_OK) {
        fprintf(stderr, "oclgrind_ops: %s\n", clrun_last_error(NULL));
        return 3;
    }
    printf("oclgrind_ops on %s\n", clrun_ctx_device(ctx)->name);
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        for (const struct og_family *f = all[i]; f->name; f++)
            if (wanted(argc, argv, f->name)) f->run();
    clrun_close(ctx);
    printf("oclgrind_ops: %d failure%s\n", failures, failures == 1 ? "" : "s");
    return failures ? 1 : 0;
}
