/* canny_cpu.cl — the CPU shape of Canny (lib/ops/canny/canny_common.h has what the shapes share). */

#include "canny_common.h"

/* ---- CPU shape: hysteresis inside blocks, only the blocks' borders joined globally. ----
 *
 * clrun_canny_block_cpu: a work-item owns a block of CW columns × RB rows. It classifies the block
 * row by row into a private map (three magnitude rows in private arrays, each Sobel computed once,
 * plain loops over columns that the compiler vectorises), then runs OpenCV's hysteresis inside the
 * block: a depth-first walk from every strong pixel through weak and strong ones (a private stack,
 * each pixel pushed at most once) marks the block's edges. A weak pixel the walk did not reach is an
 * edge only if its component leaves the block, so it must touch the block's border: each such
 * component is walked once more, marked pending, and its border pixels become nodes of a global
 * union-find (node = pixel index; parent = the component's first border pixel). The block is
 * written to the output as 255 (edge), 1 (pending) or 0.
 * clrun_canny_join_cpu unites the nodes of 8-adjacent non-zero pixels on either side of the
 * blocks' right and bottom borders; clrun_canny_fix_cpu walks each pending component from a border
 * pixel and writes 255 if its root is S, else 0. The global union-find (unite, shared with the GPU
 * shape) lets the larger index win, so that node S = W·H (past every pixel), the parent of every
 * edge pixel on a block border, is the root of every set that holds an edge. The two passes
 * touch the blocks' borders and the pending components only; a work-item takes a row of blocks.
 *
 * Scratch: W·H + 1 ints (parent; only the border pixels' and S's are used). */
#define PW (CW + 2) /* the private map: the block with a border of zeros that stops the walks */
#define PH (RB + 2)
#if PW * PH > 65536
#error "canny: CW x RB blocks index their private map in 16 bits"
#endif

/* Magnitude, dx and dy of pixel (x, yy), yy in the image, with the border rule; 0 outside the image. */
static inline void sobel_px(__global const uchar *src, uint stride, int W, int H, int x, int yy, int *mag, short *gx, short *gy)
{
    int best = 0, bdx = 0, bdy = 0;
    if (x >= 0 && x < W) {
        for (int k = 0; k < CN; k++) {
            const int c = CN - 1 - k; /* OpenCV's B, G, R order; a later channel wins only when larger */
#define P(r, q) ((int)src[(size_t)clamp(yy + (r), 0, H - 1) * stride + (size_t)clamp(x + (q), 0, W - 1) * CN + c])
            int dx, dy;
            SOBEL_AT(P, 0, 0, dx, dy);
#undef P
            const int m = L2 ? MAG2(dx, dy) : abs(dx) + abs(dy);
            if (k == 0 || m > best) best = m, bdx = dx, bdy = dy;
        }
    }
    *mag = best, *gx = (short)bdx, *gy = (short)bdy;
}

/* Magnitudes, dx and dy of row yy at columns x0-1 .. x0+n (n+2 values); 0 outside the image. */
static inline void sobel_row(__global const uchar *src, uint stride, int W, int H, int x0, int n, int yy, int *mag, short *gxr,
                             short *gyr)
{
    if (yy < 0 || yy >= H) {
        for (int j = 0; j < n + 2; j++) mag[j] = 0, gxr[j] = gyr[j] = 0;
        return;
    }
#if CN == 1 && R == 1
    __global const uchar *ra = src + (size_t)max(yy - 1, 0) * stride, *rb = src + (size_t)yy * stride,
                         *rc = src + (size_t)min(yy + 1, H - 1) * stride;
    /* columns 1 .. W-2 need no border rule: a plain loop the compiler vectorises */
    const int jlo = max(0, 2 - x0), jhi = min(n + 2, W - x0); /* x = x0 - 1 + j in [1, W - 2] */
    for (int j = jlo; j < jhi; j++) {
        const int x = x0 - 1 + j;
        const int dx = (ra[x + 1] + 2 * rb[x + 1] + rc[x + 1]) - (ra[x - 1] + 2 * rb[x - 1] + rc[x - 1]);
        const int dy = (rc[x - 1] + 2 * rc[x] + rc[x + 1]) - (ra[x - 1] + 2 * ra[x] + ra[x + 1]);
        mag[j] = L2 ? MAG2(dx, dy) : abs(dx) + abs(dy);
        gxr[j] = (short)dx, gyr[j] = (short)dy;
    }
#else
    const int jlo = 0, jhi = 0;
#endif
    /* the other columns (all of them for colour or wider apertures): the border rule */
    for (int j = 0; j < jlo; j++) sobel_px(src, stride, W, H, x0 - 1 + j, yy, mag + j, gxr + j, gyr + j);
    for (int j = max(jlo, jhi); j < n + 2; j++) sobel_px(src, stride, W, H, x0 - 1 + j, yy, mag + j, gxr + j, gyr + j);
}

/* push q if it is weak (1) or strong not yet walked (2), marking it as an edge (3) */
#define WALK_EDGE(q)                                                                                                \
    do {                                                                                                            \
        const int q_ = (q);                                                                                         \
        if ((uchar)(m[q_] - 1) < 2) m[q_] = 3, stack[sp++] = (ushort)q_;                                            \
    } while (0)
/* push q if it is weak and unreached (1), marking it as pending (4) */
#define WALK_PENDING(q)                                                                                             \
    do {                                                                                                            \
        const int q_ = (q);                                                                                         \
        if (m[q_] == 1) m[q_] = 4, stack[sp++] = (ushort)q_;                                                        \
    } while (0)
#define NEIGHBOURS(WALK, p)                                                                                         \
    do {                                                                                                            \
        WALK((p) - PW - 1);                                                                                         \
        WALK((p) - PW);                                                                                             \
        WALK((p) - PW + 1);                                                                                         \
        WALK((p) - 1);                                                                                              \
        WALK((p) + 1);                                                                                              \
        WALK((p) + PW - 1);                                                                                         \
        WALK((p) + PW);                                                                                             \
        WALK((p) + PW + 1);                                                                                         \
    } while (0)

__kernel void clrun_canny_block_cpu(__global const uchar *restrict src, const ulong src_off, const uint src_stride, const int W,
                                    const int H, const int low, const int high, __global int *parent,
                                    __global uchar *restrict dst, const ulong dst_off, const uint dst_stride)
{
    src += src_off;
    const int x0 = get_global_id(0) * CW, y0 = get_global_id(1) * RB;
    if (x0 >= W || y0 >= H) return;
    const int n = min(CW, W - x0), rows = min(RB, H - y0);
    if (x0 == 0 && y0 == 0) parent[W * H] = W * H; /* S, the root of every set with an edge */
    ulong mw[(PH * PW + 7) / 8]; /* the map, read eight bytes at a time by the search for strong pixels */
    uchar *m = (uchar *)mw;
    ushort stack[CW * RB]; /* every pixel is pushed at most once per walk phase */
    int sp = 0;
    for (int j = 0; j < PW; j++) m[j] = 0, m[(rows + 1) * PW + j] = 0;

    int mag[3][CW + 2];
    short gxr[3][CW + 2], gyr[3][CW + 2];
    uchar any_strong = 0;
    sobel_row(src, src_stride, W, H, x0, n, y0 - 1, mag[0], gxr[0], gyr[0]);
    sobel_row(src, src_stride, W, H, x0, n, y0, mag[1], gxr[1], gyr[1]);
    for (int r = 1; r <= rows; r++) {
        const int y = y0 + r - 1, up = (r - 1) % 3, mid = r % 3, dn = (r + 1) % 3;
        sobel_row(src, src_stride, W, H, x0, n, y + 1, mag[dn], gxr[dn], gyr[dn]);
        const int *mu = mag[up], *mm = mag[mid], *md = mag[dn];
        const short *gx = gxr[mid], *gy = gyr[mid];
        uchar *mrow = m + r * PW;
        mrow[0] = 0, mrow[n + 1] = 0;
        for (int j = n + 2; j < PW; j++) mrow[j] = 0; /* a partial block's row tail: the strong-pixel scan reads whole words */
        uchar strong = 0;
        for (int j = 1; j <= n; j++) {
            const int v = mm[j], xs = gx[j], ys = gy[j];
            const int ax = abs(xs), ay = abs(ys) << 15, tg22x = ax * TG22, tg67x = TG67(tg22x, ax);
            const int neg = (xs ^ ys) < 0, horiz = ay < tg22x, vert = !horiz & (ay > tg67x), diag = !horiz & !vert;
            const int keep = (horiz & (v > mm[j - 1]) & (v >= mm[j + 1])) | (vert & (v > mu[j]) & (v >= md[j])) |
                             (diag & neg & (v > mu[j + 1]) & (v > md[j - 1])) | (diag & !neg & (v > mu[j - 1]) & (v > md[j + 1]));
#if MAP_IN
            const uchar c = src[(size_t)y * src_stride + x0 + j - 1];
#else
            const uchar c = (v > low) & keep ? 1 + (v > high) : 0;
#endif
            mrow[j] = c;
            strong |= c;
        }
        any_strong |= strong;
    }

    /* hysteresis inside the block, from every strong pixel: found eight map bytes at a time (bit 0
     * of a byte of s is set where the byte is 2, the map holding 0 to 3 here) */
    if (any_strong & 2)
        for (int w = PW / 8, end = (rows + 1) * PW; w * 8 < end; w++)
            for (ulong s = (mw[w] >> 1) & ~mw[w] & 0x0101010101010101UL; s; s &= s - 1) {
                const int p0 = w * 8 + (int)((63 - clz(s & -s)) >> 3);
                if (p0 >= end || m[p0] != 2) continue; /* past the block, or walked since mw[w] was read */
                m[p0] = 3;
                stack[sp++] = (ushort)p0;
                while (sp) {
                    const int p = stack[--sp];
                    NEIGHBOURS(WALK_EDGE, p);
                }
            }

    /* weak components not reached that touch the border: pending, their border pixels are nodes */
#define BORDER(r, j) ((r) == 1 || (r) == rows || (j) == 1 || (j) == n)
#define GLOBAL(p) ((y0 + (p) / PW - 1) * W + x0 + (p) % PW - 1)
    for (int r = 1; r <= rows; r++) {
        const int step = (r == 1 || r == rows) ? 1 : max(n - 1, 1);
        for (int j = 1; j <= n; j += step) {
            const int p0 = r * PW + j;
            if (m[p0] == 3) parent[GLOBAL(p0)] = W * H; /* an edge on the border: under S */
            if (m[p0] != 1) continue;
            const int rep = GLOBAL(p0);
            m[p0] = 4;
            stack[sp++] = (ushort)p0;
            while (sp) {
                const int p = stack[--sp];
                if (BORDER(p / PW, p % PW)) parent[GLOBAL(p)] = rep;
                NEIGHBOURS(WALK_PENDING, p);
            }
        }
    }
#undef BORDER
#undef GLOBAL

    __global uchar *d = dst + dst_off + (size_t)y0 * dst_stride + x0;
    for (int r = 1; r <= rows; r++, d += dst_stride) {
        const uchar *mrow = m + r * PW + 1;
        for (int j = 0; j < n; j++) d[j] = mrow[j] == 3 ? 255 : mrow[j] == 4 ? 1 : 0;
    }
}

/* ---- CPU shape, the passes after clrun_canny_block_cpu: a work-item per block again, so that no
 * work-item's loops grow with the image (Mesa's llvmpipe stops a work-item after 65,535 loop
 * iterations in all). ---- */
#define DST(x, y) d[(size_t)(y) * dst_stride + (x)]

__kernel void clrun_canny_join_cpu(const int W, const int H, volatile __global int *parent, __global const uchar *dst,
                                   const ulong dst_off, const uint dst_stride)
{
    const int x0 = get_global_id(0) * CW, y0 = get_global_id(1) * RB;
    if (x0 >= W || y0 >= H) return;
    const int x1 = min(W, x0 + CW), y1 = min(H, y0 + RB);
    __global const uchar *d = dst + dst_off;
    /* across the block's bottom border: each non-zero pixel of its last row with the three below */
    if (y1 < H)
        for (int x = x0, y = y1 - 1; x < x1; x++) {
            if (!DST(x, y)) continue;
            for (int dx = -1; dx <= 1; dx++)
                if (x + dx >= 0 && x + dx < W && DST(x + dx, y + 1)) unite(parent, y * W + x, (y + 1) * W + x + dx);
        }
    /* across its right border: with the three pixels to the east */
    if (x1 < W)
        for (int x = x1 - 1, y = y0; y < y1; y++) {
            if (!DST(x, y)) continue;
            for (int dy = -1; dy <= 1; dy++)
                if (y + dy >= 0 && y + dy < H && DST(x + 1, y + dy)) unite(parent, y * W + x, (y + dy) * W + x + 1);
        }
}

/* each pending component of the block: an edge (255) if its root is S, else 0 (finds halve paths:
 * only finds run concurrently here, and halving keeps every tree's root) */
__kernel void clrun_canny_fix_cpu(const int W, const int H, volatile __global int *parent, __global uchar *dst, const ulong dst_off,
                                  const uint dst_stride)
{
    const int x0 = get_global_id(0) * CW, y0 = get_global_id(1) * RB;
    if (x0 >= W || y0 >= H) return;
    const int x1 = min(W, x0 + CW), y1 = min(H, y0 + RB);
    __global uchar *d = dst + dst_off;
    ushort stack[CW * RB];
    for (int y = y0; y < y1; y++) /* the block's border pixels */
        for (int x = x0, step = (y == y0 || y == y1 - 1) ? 1 : max(x1 - x0 - 1, 1); x < x1; x += step) {
            if (DST(x, y) != 1) continue;
            const uchar e = find_root_halving(parent, y * W + x) == W * H ? 255 : 0;
            int sp = 0;
            DST(x, y) = e;
            stack[sp++] = (ushort)((y - y0) * CW + x - x0);
            while (sp) {
                const int p = stack[--sp], py = y0 + p / CW, px = x0 + p % CW;
#pragma unroll
                for (int dy = -1; dy <= 1; dy++) /* constant bounds: unrolled, no loop trips per pixel */
#pragma unroll
                    for (int dx = -1; dx <= 1; dx++) {
                        const int qy = py + dy, qx = px + dx;
                        if (qy >= y0 && qy < y1 && qx >= x0 && qx < x1 && DST(qx, qy) == 1)
                            DST(qx, qy) = e, stack[sp++] = (ushort)((qy - y0) * CW + qx - x0);
                    }
            }
        }
}
#undef DST
