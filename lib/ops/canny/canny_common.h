/* canny_common.h — shared by the Canny kernels (lib/ops/canny/canny_gpu.cl, lib/ops/canny/canny_cpu.cl, lib/ops/canny/canny_blur.cl):
 * the parameters every shape takes, OpenCV's Sobel taps and sector-test arithmetic, and the global
 * union-find both shapes join their tiles' or blocks' borders with.
 *
 * Canny edges equal to OpenCV's cv2.Canny, in three launches (one more with a pre-blur) whatever
 * the edge map, in bounded memory, with no host loop. Both shapes settle the hysteresis inside a
 * tile of the image first and join only the tiles' borders globally (GPUs: canny_gpu.cl; CPUs:
 * canny_cpu.cl).
 *
 * Parameters (-D): CN (channels, 1 or 3), L2 (0 or 1), R (Sobel radius: 1, 2, 3), CW, RB (CPU
 * block, also the CPU blur's), MAP_IN (tests); the GPU tile's BX, BY, PY, ALIGN4 in canny_gpu.cl,
 * the blur's KB in canny_blur.cl. */
#ifndef CLRUN_CANNY_COMMON_H
#define CLRUN_CANNY_COMMON_H

#ifndef CN
#define CN 1
#endif
#ifndef L2
#define L2 0
#endif
#ifndef CW
#define CW 256
#endif
#ifndef RB
#define RB 64
#endif
#ifndef MAP_IN
#define MAP_IN 0 /* 1 (tests): the source is a map of 0, 1 (weak) and 2 (strong) to run the hysteresis on */
#endif

#ifndef R
#define R 1 /* Sobel radius: aperture 3, 5 or 7 */
#endif

/* OpenCV's Sobel kernels (getDerivKernels, not normalised): smoothing and first derivative taps
 * for radius R; dx = smoothing down the rows of the derivative along them, dy the other way; the
 * sum is exact in int and saturated to short at the end, as cv::Sobel into CV_16S (for aperture 7
 * Canny asks for a scale of 1/16, so the sum is rounded to sixteenths first). */
#if R == 1
__constant int SM[3] = {1, 2, 1};
__constant int DV[3] = {-1, 0, 1};
#elif R == 2
__constant int SM[5] = {1, 4, 6, 4, 1};
__constant int DV[5] = {-1, -2, 0, 2, 1};
#else
__constant int SM[7] = {1, 6, 15, 20, 15, 6, 1};
__constant int DV[7] = {-1, -4, -5, 0, 5, 4, 1};
#endif

/* dx, dy of channel c at tile position (ty, tx) of an input tile held in T(row, col) */
#define SOBEL_AT(T, ty, tx, gx, gy)                                                                                 \
    do {                                                                                                            \
        int sx_ = 0, sy_ = 0;                                                                                       \
        for (int a = -R; a <= R; a++)                                                                               \
            for (int b = -R; b <= R; b++) {                                                                         \
                const int v_ = T((ty) + a, (tx) + b);                                                               \
                sx_ += SM[a + R] * DV[b + R] * v_;                                                                  \
                sy_ += DV[a + R] * SM[b + R] * v_;                                                                  \
            }                                                                                                       \
        gx = clamp(SCALE7(sx_), -32768, 32767);                                                                     \
        gy = clamp(SCALE7(sy_), -32768, 32767);                                                                     \
    } while (0)
/* Canny scales the aperture-7 Sobel by 1/16 (cvRound: halves to even) */
#if R == 3
#define SCALE7(v) (((v) >> 4) + (((v) & 15) > 8 || (((v) & 15) == 8 && (((v) >> 4) & 1))))
#else
#define SCALE7(v) (v)
#endif

/* OpenCV's sector test works in int and, for aperture 7, overflows in tan(67.5°)·x: the same
 * wrap-around here, through unsigned arithmetic */
#define TG67(tg22x, ax) as_int((uint)(tg22x) + ((uint)(ax) << 16))
/* dx² + dy², wrapping as OpenCV's int sum does when both are -32768 */
#define MAG2(dx, dy) as_int((uint)((dx) * (dx)) + (uint)((dy) * (dy)))
#define TG22 13573  /* tan(22.5°)·2^15, rounded, as OpenCV */

/* Parents that other work-items change at the same time are read and written with atomic
 * operations only, so the union-find passes have no data race under the OpenCL memory model (CI
 * runs them under Oclgrind's race checker). OpenCL 1.2 has no atomic load: atomic_or with 0 is one. */
#define UF_LOAD(p) atomic_or((p), 0)

/* The root of x's tree, halving the path on the way: each visited node is pointed at its
 * grandparent. Parents only ever move to larger indices (the larger root wins in unite; a pixel's
 * first parent may be smaller, but every node it leads to only points up), so of two ancestors the
 * larger is the higher, and the halving store is an atomic_max: it never undoes what another find
 * or a unite's link did meanwhile. Long edges that cross many tiles otherwise leave chains one node
 * per tile long, walked again by every find. */
static inline int find_root_halving(volatile __global int *label, int x)
{
    int p = UF_LOAD(&label[x]);
    while (p != x) {
        const int gp = UF_LOAD(&label[p]);
        if (gp == p) return p;
        atomic_max(&label[x], gp);
        x = gp;
        p = UF_LOAD(&label[x]);
    }
    return x;
}

/* Join the trees of a and b, the larger root winning: node S = W·H, past every pixel, then roots
 * every set it joins. Both shapes' global passes use it. */
static inline void unite(volatile __global int *label, int a, int b)
{
    for (;;) {
        a = find_root_halving(label, a);
        b = find_root_halving(label, b);
        if (a == b) return;
        if (a < b) { /* a: the root that wins */
            const int t = a;
            a = b, b = t;
        }
        /* link root b under a; if b stopped being a root meanwhile, unite a with what it points to */
        const int old = atomic_max(&label[b], a);
        if (old == b) return;
        b = old;
    }
}

#endif
