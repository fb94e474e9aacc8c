/* oclgrind.c — the canny kernels on small, awkward shapes under Oclgrind's checkers (the families
 * tests/oclgrind_ops.c runs; tests/oclgrind_check.py says how). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "oclgrind_ops.h"

/* Canny on an image with edges everywhere (noise plus a bright block), gray and colour, with and
 * without blur, L1 and L2, apertures 3 to 7; sizes that leave partial tiles. */
static void canny(const char *shape)
{
    setenv("CLRUN_CANNY_SHAPE", shape, 1);
    const size_t w = 45, h = 29;
    for (unsigned ch = 1; ch <= 3; ch += 2) {
        clrun_image in, out;
        if (clrun_image_new(&in, w, h, ch) != CLRUN_OK) {
            failures++;
            return;
        }
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w * ch; x++)
                in.data[y * in.stride + x] =
                    (unsigned char)((x / ch > 12 && x / ch < 30 && y > 8 && y < 20 ? 160 : 40) + (next_float() + 1) * 30);
        const clrun_canny_params ps[] = {{50, 100, 0, 3, 0, 0}, {20, 60, 1, 5, 5, 0}, {200, 400, 0, 7, 3, 1.2}};
        for (int p = 0; p < 3; p++) {
            memset(&out, 0, sizeof out);
            TRY(clrun_canny_image(ctx, &in, &ps[p], &out));
            clrun_image_free(&out);
        }
        clrun_image_free(&in);
    }
    unsetenv("CLRUN_CANNY_SHAPE");
}

static void canny_gpu(void) { canny("gpu"); }
static void canny_cpu(void) { canny("cpu"); }

const struct og_family og_families_canny[] = {{"canny-gpu", canny_gpu}, {"canny-cpu", canny_cpu}, {0}};
