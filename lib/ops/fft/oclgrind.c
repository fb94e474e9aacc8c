/* oclgrind.c — the FFT op under Oclgrind's checkers: VkFFT's generated kernels for a short c2c
 * length, a prime (Bluestein) and a real 2-D transform, with the norm's scaling. */
#include "oclgrind_ops.h"

static void fft_ops(void)
{
    if (!clrun_fft_available()) return;
    static const clrun_fft_desc descs[] = {
        {.kind = CLRUN_FFT_C2C, .ndim = 1, .shape = {64}, .batch = 2, .norm = CLRUN_FFT_NORM_ORTHO},
        {.kind = CLRUN_FFT_C2C, .ndim = 1, .shape = {37}},
        {.kind = CLRUN_FFT_REAL, .ndim = 2, .shape = {6, 10}, .norm = CLRUN_FFT_NORM_FORWARD},
    };
    for (size_t i = 0; i < sizeof descs / sizeof *descs; i++) {
        clrun_fft_plan *p;
        TRY(clrun_fft_plan_new(ctx, &descs[i], &p));
        clrun_fft_info info;
        TRY(clrun_fft_plan_info(p, &info));
        clrun_buf *a = make(CLRUN_F32, 2 * info.in_count + 2), *b = make(CLRUN_F32, 2 * info.out_count + 4);
        TRY(clrun_fft_exec(p, 0, a, 1, b, 2));
        TRY(clrun_fft_exec(p, 1, b, 2, a, 0));
        TRY(clrun_finish(ctx));
        clrun_fft_plan_free(p);
        clrun_buf_free(a), clrun_buf_free(b);
    }
}

const struct og_family og_families_fft[] = {{"fft", fft_ops}, {0}};
