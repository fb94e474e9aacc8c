/* canny_blur.cl — Canny's optional Gaussian pre-blur, GPU and CPU shapes (lib/ops/canny/canny_common.h has the
 * shared parameters). */

#include "canny_common.h"

/* ---- Gaussian pre-blur, as cv2.GaussianBlur(img, (K, K), sigma) on 8-bit data: OpenCV's kernel
 * for K = 3, 5, 7 in 8.8 fixed point (made on the host: g0.. the weights from the edge to the
 * centre), rows then columns, exact sums, rounded half up from 16.16; borders reflected without
 * repeating the edge pixel (BORDER_REFLECT_101). ---- */
#ifndef KB
#define KB 3
#endif

static inline int reflect101(int i, int n)
{
    if (n == 1) return 0;
    while (i < 0 || i >= n) i = i < 0 ? -i : 2 * n - 2 - i;
    return i;
}

__kernel void clrun_canny_blur(__global const uchar *restrict src, const ulong src_off, const uint src_stride, const int W,
                               const int H, __global uchar *restrict dst, const ulong dst_off, const int g0, const int g1,
                               const int g2, const int g3)
{
    const int g[4] = {g0, g1, g2, g3};
#define GK(b) g[KB / 2 - abs(b)]
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= W || y >= H) return;
    src += src_off;
    const int r = KB / 2;
    for (int c = 0; c < CN; c++) {
        int s = 0;
        for (int a = -r; a <= r; a++) {
            __global const uchar *row = src + (size_t)reflect101(y + a, H) * src_stride;
            int h = 0;
            for (int b = -r; b <= r; b++) h += GK(b) * row[(size_t)reflect101(x + b, W) * CN + c];
            s += GK(a) * h;
        }
        dst[dst_off + ((size_t)y * W + x) * CN + c] = (uchar)min(255, (s + 32768) >> 16);
    }
#undef GK
}

/* CPU shape of the blur: a work-item per block of CW pixels × RB rows. The horizontal sums of the
 * KB source rows an output row needs are kept in a private ring (each computed once per block);
 * the taps are written out (GSUM: F(k) is the value k pixels or rows from the centre) so that the
 * loops over the block's bytes vectorise; reflected columns apart. */
#if KB == 3
#define GSUM(F) (g0 * (F(-1) + F(1)) + g1 * F(0))
#elif KB == 5
#define GSUM(F) (g0 * (F(-2) + F(2)) + g1 * (F(-1) + F(1)) + g2 * F(0))
#else
#define GSUM(F) (g0 * (F(-3) + F(3)) + g1 * (F(-2) + F(2)) + g2 * (F(-1) + F(1)) + g3 * F(0))
#endif

__kernel void clrun_canny_blur_cpu(__global const uchar *restrict src, const ulong src_off, const uint src_stride, const int W,
                                   const int H, __global uchar *restrict dst, const ulong dst_off, const int g0, const int g1,
                                   const int g2, const int g3)
{
    const int x0 = get_global_id(0) * CW, y0 = get_global_id(1) * RB;
    if (x0 >= W || y0 >= H) return;
    const int n = min(CW, W - x0), rows = min(RB, H - y0), r = KB / 2, ne = n * CN;
    const int xa = max(x0, r), xb = max(xa, min(x0 + n, W - r)); /* columns [xa, xb) need no reflection */
    int h[KB][CW * CN];
    src += src_off;
    for (int i = -r; i < rows + r; i++) { /* source row y0 + i (reflected) into slot (i + r) % KB */
        __global const uchar *row = src + (size_t)reflect101(y0 + i, H) * src_stride + (size_t)x0 * CN;
        int *hr = h[(i + r) % KB];
#define F(k) row[e + (k) * CN]
        for (int e = (xa - x0) * CN; e < (xb - x0) * CN; e++) hr[e] = GSUM(F);
#undef F
#define F(k) row[(reflect101(x + (k), W) - x0) * CN + c]
        for (int x = x0; x < xa; x++)
            for (int c = 0; c < CN; c++) hr[(x - x0) * CN + c] = GSUM(F);
        for (int x = xb; x < x0 + n; x++)
            for (int c = 0; c < CN; c++) hr[(x - x0) * CN + c] = GSUM(F);
#undef F
        if (i < r) continue;
        /* output row y0 + i - r from source rows y0 + i - 2r .. y0 + i: slots (i + k) % KB, k = -r..r */
        __global uchar *o = dst + dst_off + ((size_t)(y0 + i - r) * W + x0) * CN;
        const int *c0 = h[i % KB], *m1 = h[(i + KB - 1) % KB], *p1 = h[(i + 1) % KB];
#if KB >= 5
        const int *m2 = h[(i + KB - 2) % KB], *p2 = h[(i + 2) % KB];
#endif
#if KB >= 7
        const int *m3 = h[(i + KB - 3) % KB], *p3 = h[(i + 3) % KB];
#endif
#define F(k) ((k) == 0 ? c0[e] : (k) == -1 ? m1[e] : (k) == 1 ? p1[e] : (k) == -2 ? M2(e) : (k) == 2 ? P2(e) : (k) == -3 ? M3(e) : P3(e))
#if KB >= 5
#define M2(e) m2[e]
#define P2(e) p2[e]
#else
#define M2(e) 0
#define P2(e) 0
#endif
#if KB >= 7
#define M3(e) m3[e]
#define P3(e) p3[e]
#else
#define M3(e) 0
#define P3(e) 0
#endif
        for (int e = 0; e < ne; e++) o[e] = (uchar)min(255, (GSUM(F) + 32768) >> 16);
#undef F
#undef M2
#undef P2
#undef M3
#undef P3
    }
}
#undef GSUM
