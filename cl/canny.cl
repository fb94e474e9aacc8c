/* canny.cl — Canny edges equal to OpenCV's cv2.Canny, in three launches (one more with a pre-blur)
 * whatever the edge map, in bounded memory, with no host loop. Both shapes settle the hysteresis
 * inside a tile of the image first and join only the tiles' borders globally:
 *
 * GPUs: clrun_canny_tile — a work-group takes a tile of TW × TH pixels: it stages the tile plus its
 * border (replicated at the image edges) in local memory, computes the Sobel dx, dy and the
 * magnitude (L1 |dx|+|dy| or L2 dx²+dy², as integers) of the tile plus one pixel (0 outside the
 * image), classifies each pixel with OpenCV's non-maximum suppression (0 no edge, 1 weak: > low,
 * 2 strong: > high), finds the tile's components by union-find in local memory, and writes the
 * edges: 255 for a component with a strong pixel, 0 for one without that stays inside the tile, 1
 * (pending) for one without that reaches a border shared with another tile. Pending pixels get a
 * label (their component's root pixel), and the tile's border pixels become nodes of a global
 * union-find: S (= W·H, past every pixel) for an edge pixel, the label for a pending one.
 * clrun_canny_join unites the nodes across each border (lock-free, the larger index wins, so S
 * roots every set holding an edge) and clrun_canny_fix turns each pending pixel, in tiles that
 * have any, into 255 if its root is S, else 0.
 *
 * CPUs: blocks of CW×RB pixels, a work-item each, with OpenCV's own depth-first hysteresis inside
 * (clrun_canny_block_cpu and the passes after it, below).
 *
 * Parameters (-D): CN (channels, 1 or 3), L2 (0 or 1), R (Sobel radius: 1, 2, 3), BX, BY, PY (GPU
 * work-group, and rows per work-item: the tile is BX × BY·PY), ALIGN4 (the image's rows start at
 * multiples of 4 bytes: GPU tiles are staged in words), CW, RB (CPU block), KB (blur size), MAP_IN
 * (tests). */

#ifndef CN
#define CN 1
#endif
#ifndef L2
#define L2 0
#endif
#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 8
#endif
#ifndef PY
#define PY 4 /* rows per work-item: a GPU tile is TW × TH pixels */
#endif
#define TW BX
#define TH (BY * PY)
#define NT (BX * BY)
#define ROW(k) (ly * PY + (k)) /* the tile row of a work-item's k-th pixel: PY consecutive rows */
#ifndef CW
#define CW 256
#endif
#ifndef ALIGN4
#define ALIGN4 0 /* 1: the image's rows start at multiples of 4 bytes (GPU tiles are then staged in words) */
#endif
#ifndef MAP_IN
#define MAP_IN 0 /* 1 (tests): the source is a map of 0, 1 (weak) and 2 (strong) to run the hysteresis on */
#endif

#ifndef R
#define R 1 /* Sobel radius: aperture 3, 5 or 7 */
#endif
#define IW (TW + 2 * R + 2) /* staged input tile */
#define IH (TH + 2 * R + 2)

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
#define MW (TW + 2) /* magnitudes of the tile plus one pixel */
#define MH (TH + 2)
#define TG22 13573  /* tan(22.5°)·2^15, rounded, as OpenCV */

/* Union-find in local memory for one tile (see unite below for the global one): the smaller index
 * wins, and finds halve paths as find_root_halving does (the same argument holds here). */
static inline int find_root_local(volatile __local int *lab, int x)
{
    int p = lab[x];
    while (p != x) {
        const int gp = lab[p];
        if (gp == p) return p;
        lab[x] = gp;
        x = gp;
        p = lab[x];
    }
    return x;
}

static inline void unite_local(volatile __local int *lab, int a, int b)
{
    for (;;) {
        a = find_root_local(lab, a);
        b = find_root_local(lab, b);
        if (a == b) return;
        if (a > b) {
            const int t = a;
            a = b, b = t;
        }
        const int old = atomic_min(&lab[b], a);
        if (old == b) return;
        b = old;
    }
}

/* The GPU shape's scratch: W·H + 1 labels (int; node S = W·H), then the nodes of the tiles'
 * borders, -1 (none), S (an edge pixel) or a pending pixel's label: each tile column's left and
 * right columns (NTX·H each), each tile row's top and bottom rows (NTY·W each); then a flag per tile
 * (it has pending pixels). */
#define NTX ((W + TW - 1) / TW)
#define NTY ((H + TH - 1) / TH)
#define LEFT_COL(sc) ((sc) + (size_t)W * H + 1)
#define RIGHT_COL(sc) (LEFT_COL(sc) + (size_t)NTX * H)
#define TOP_ROW(sc) (RIGHT_COL(sc) + (size_t)NTX * H)
#define BOTTOM_ROW(sc) (TOP_ROW(sc) + (size_t)NTY * W)
#define PENDING(sc) (BOTTOM_ROW(sc) + (size_t)NTY * W)

__kernel __attribute__((reqd_work_group_size(BX, BY, 1))) void
clrun_canny_tile(__global const uchar *restrict src, const ulong src_off, const uint src_stride, const int W, const int H,
                 const int low, const int high, __global int *label, __global uchar *restrict dst, const ulong dst_off,
                 const uint dst_stride)
{
    __local int lab[TH * TW];
    volatile __local uchar strong[TH * TW], border[TH * TW];
    __local int any_pending;
    const int lx = get_local_id(0), ly = get_local_id(1), lid = ly * BX + lx;
    const int tx = get_group_id(0), ty = get_group_id(1), x0 = tx * TW, y0 = ty * TH, x = x0 + lx;
    const int S = W * H;
    int v[PY];
    src += src_off;
#if MAP_IN /* tests: the source holds a map (0, 1, 2) to run the hysteresis on */
    for (int k = 0; k < PY; k++) {
        const int y = y0 + ROW(k);
        v[k] = x < W && y < H ? src[(size_t)y * src_stride + x] : 0;
    }
#else
#if ALIGN4 && CN == 1 && defined(__ENDIAN_LITTLE__) /* rows start at multiples of 4 bytes: the tile in words, from x0 - 4 */
#define IW4 ((TW + 8) / 4)
    __local uint inw[IH * IW4];
    __local const uchar *inb = (__local const uchar *)inw;
#define IN(c, r, q) inb[(r) * (IW4 * 4) + (q) + 3 - R]
    for (int e = lid; e < IW4 * IH; e += NT) {
        const int w = e % IW4, iy = e / IW4, xs = x0 - 4 + 4 * w, yy = clamp(y0 - 1 - R + iy, 0, H - 1);
        __global const uchar *row = src + (size_t)yy * src_stride;
        uint word;
        if (xs >= 0 && xs + 3 < W) {
            word = *(__global const uint *)(row + xs);
        } else { /* the image's left or right edge: replicated, byte by byte */
            word = 0;
            for (int b = 3; b >= 0; b--) word = word << 8 | row[clamp(xs + b, 0, W - 1)];
        }
        inw[e] = word;
    }
#else
    __local uchar in[CN][IH][IW];
#define IN(c, r, q) in[c][r][q]
    for (int e = lid; e < IW * IH; e += NT) {
        const int ix = e % IW, iy = e / IW;
        const int xx = clamp(x0 - 1 - R + ix, 0, W - 1), yy = clamp(y0 - 1 - R + iy, 0, H - 1); /* replicated border */
        __global const uchar *p = src + (size_t)yy * src_stride + (size_t)xx * CN;
        for (int c = 0; c < CN; c++) in[c][iy][ix] = p[c];
    }
#endif
    __local int mag[MH][MW];
    barrier(CLK_LOCAL_MEM_FENCE);

    /* the magnitudes of the tile plus one pixel (0 outside the image); each work-item keeps its own
     * pixels' dx, dy for the sector test */
    int gxv[PY], gyv[PY];
#if CN == 1 && R == 1
    /* a work-item walks down its column: magnitude rows ROW(0) .. ROW(PY-1) (+1 in mag), the row
     * above the tile too in the first row of work-items, the row below in the last; each input row
     * is read once, as a horizontal sum and difference */
    {
        const int mx = lx + 1, m0 = ROW(0) + 1, inx = x < W;
        int hs[3], hd[3];
#define HROW(i, iy) (hs[i] = IN(0, iy, mx) + 2 * IN(0, iy, mx + 1) + IN(0, iy, mx + 2), hd[i] = IN(0, iy, mx + 2) - IN(0, iy, mx))
        HROW(0, m0 - 1);
        HROW(1, m0);
#pragma unroll
        for (int k = -1; k <= PY; k++) {
            const int my = m0 + k; /* rows my-1 .. my+1 of mag are rows my .. my+2 of in */
            HROW((k + 3) % 3, my + 2);
            const int a = (k + 1) % 3, b = (k + 2) % 3, c = (k + 3) % 3;
            const int dx = hd[a] + 2 * hd[b] + hd[c], dy = hs[c] - hs[a], yy = y0 - 1 + my;
            const int m = inx && yy >= 0 && yy < H ? (L2 ? MAG2(dx, dy) : abs(dx) + abs(dy)) : 0;
            if (k >= 0 && k < PY) gxv[k] = dx, gyv[k] = dy, mag[my][mx] = m;
            else if ((k < 0 && ly == 0) || (k == PY && ly == BY - 1)) mag[my][mx] = m;
        }
#undef HROW
    }
    for (int e = lid; e < 2 * MH; e += NT) { /* the columns left and right of the tile */
        const int my = e >> 1, mx = e & 1 ? MW - 1 : 0, xx = x0 - 1 + mx, yy = y0 - 1 + my;
        int m = 0;
        if (xx >= 0 && xx < W && yy >= 0 && yy < H) {
            int dx, dy;
#define I(r, q) ((int)IN(0, r, q))
            SOBEL_AT(I, my + R, mx + R, dx, dy);
#undef I
            m = L2 ? MAG2(dx, dy) : abs(dx) + abs(dy);
        }
        mag[my][mx] = m;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#else
    __local short dxl[MH][MW], dyl[MH][MW];
    for (int e = lid; e < MW * MH; e += NT) {
        const int mx = e % MW, my = e / MW, xx = x0 - 1 + mx, yy = y0 - 1 + my;
        int best = 0, bdx = 0, bdy = 0;
        if (xx >= 0 && xx < W && yy >= 0 && yy < H) { /* outside the image the magnitude is 0 */
            /* channels in OpenCV's B, G, R order; a later one wins only when strictly larger */
            for (int k = 0; k < CN; k++) {
                const int c = CN - 1 - k;
#define I(r, q) ((int)IN(c, r, q))
                int dx, dy;
                SOBEL_AT(I, my + R, mx + R, dx, dy);
#undef I
                const int m = L2 ? MAG2(dx, dy) : abs(dx) + abs(dy);
                if (k == 0 || m > best) best = m, bdx = dx, bdy = dy;
            }
        }
        mag[my][mx] = best;
        dxl[my][mx] = (short)bdx;
        dyl[my][mx] = (short)bdy;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < PY; k++) gxv[k] = dxl[ROW(k) + 1][lx + 1], gyv[k] = dyl[ROW(k) + 1][lx + 1];
#endif

    for (int k = 0; k < PY; k++) {
        const int row = ROW(k), cx = lx + 1, cy = row + 1, m = mag[cy][cx];
        v[k] = 0;
        if (x < W && y0 + row < H && m > low) {
            const int xs = gxv[k], ys = gyv[k];
            const int ax = abs(xs), ay = abs(ys) << 15, tg22x = ax * TG22;
            int keep;
            if (ay < tg22x) { /* horizontal gradient: compare left (strict) and right */
                keep = m > mag[cy][cx - 1] && m >= mag[cy][cx + 1];
            } else {
                const int tg67x = TG67(tg22x, ax);
                if (ay > tg67x) { /* vertical: above (strict) and below */
                    keep = m > mag[cy - 1][cx] && m >= mag[cy + 1][cx];
                } else { /* diagonal, both strict */
                    const int s = (xs ^ ys) < 0 ? -1 : 1;
                    keep = m > mag[cy - 1][cx - s] && m > mag[cy + 1][cx + s];
                }
            }
            if (keep) v[k] = m > high ? 2 : 1;
        }
    }
#endif
    /* the tile's components: union-find in local memory, over horizontal runs */
    for (int k = 0; k < PY; k++) {
        const int li = ROW(k) * TW + lx;
        lab[li] = v[k] ? li : -1;
        strong[li] = border[li] = 0;
    }
    if (lid == 0) any_pending = 0;
    if (lid == 0 && tx == 0 && ty == 0) label[S] = S;
    barrier(CLK_LOCAL_MEM_FENCE);
    /* each pixel points at the first pixel of its horizontal run (only signs are read here, and they
     * do not change) */
    for (int k = 0; k < PY; k++) {
        const int li = ROW(k) * TW + lx;
        if (!v[k]) continue;
        int h = li;
        while (h % TW > 0 && lab[h - 1] >= 0) h--;
        lab[li] = h;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* then each run with the runs below it: a run's first pixel with those below-left, below and
     * below-right of it, every later pixel only with a run that starts below-right of it (the pixel
     * to its left has joined the others). On the H200 at 4K, runs took the local union-find from
     * 71 to 43 µs of the tile kernel's 136, and the all-strong map from 1.35 to 0.21 ms. */
    for (int k = 0; k < PY; k++) {
        const int row = ROW(k), li = row * TW + lx, j = li + TW;
        if (!v[k] || row + 1 >= TH) continue;
        const int se = lx + 1 < TW && lab[j + 1] >= 0, s = lab[j] >= 0;
        if (lx > 0 && lab[li - 1] >= 0) {
            if (se && !s) unite_local(lab, li, j + 1);
        } else if (s) {
            unite_local(lab, li, j);
        } else {
            if (lx > 0 && lab[j - 1] >= 0) unite_local(lab, li, j - 1);
            if (se) unite_local(lab, li, j + 1);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* each component: does it hold a strong pixel, does it reach a border shared with another tile */
    int root[PY];
    for (int k = 0; k < PY; k++) {
        const int row = ROW(k), y = y0 + row;
        root[k] = v[k] ? find_root_local(lab, row * TW + lx) : 0;
        if (v[k] == 2) strong[root[k]] = 1;
        if (v[k] && ((lx == 0 && x0 > 0) || (lx == TW - 1 && x + 1 < W) || (row == 0 && y0 > 0) || (row == TH - 1 && y + 1 < H)))
            border[root[k]] = 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* edges (255), pixels of components closed inside the tile without a strong pixel (0), and
     * pending ones (1, labelled with their root's index), settled by clrun_canny_join and _fix */
    dst += dst_off;
    __global int *left = LEFT_COL(label), *right = RIGHT_COL(label), *top = TOP_ROW(label), *bottom = BOTTOM_ROW(label);
    for (int k = 0; k < PY; k++) {
        const int row = ROW(k), y = y0 + row;
        if (x >= W || y >= H) break;
        const int r = root[k], o = !v[k] ? 0 : strong[r] ? 255 : border[r] ? 1 : 0;
        const int node = o == 255 ? S : o == 1 ? (y0 + r / TW) * W + x0 + r % TW : -1;
        dst[(size_t)y * dst_stride + x] = (uchar)o;
        if (o == 1) label[y * W + x] = node, any_pending = 1;
        if (lx == 0 && x0 > 0) left[(size_t)tx * H + y] = node;
        if (lx == TW - 1 && x + 1 < W) right[(size_t)tx * H + y] = node;
        if (row == 0 && y0 > 0) top[(size_t)ty * W + x] = node;
        if (row == TH - 1 && y + 1 < H) bottom[(size_t)ty * W + x] = node;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) PENDING(label)[ty * NTX + tx] = any_pending;
}

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
#ifndef RB
#define RB 64
#endif
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

/* The root of x's tree, halving the path on the way: each visited node is pointed at its
 * grandparent. Labels only ever move to larger indices (the larger root wins in unite), and a
 * grandparent is an ancestor, so the plain store races harmlessly with other finds (they only
 * shorten paths too) and with a unite's atomic_max on the same node (that unite saw the node was no
 * longer a root and joins its old parent, hence the same tree, next). Long edges that cross many
 * tiles otherwise leave chains one node per tile long, walked again by every find. */
static inline int find_root_halving(volatile __global int *label, int x)
{
    int p = label[x];
    while (p != x) {
        const int gp = label[p];
        if (gp == p) return p;
        label[x] = gp;
        x = gp;
        p = label[x];
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

/* ---- GPU shape, the passes after clrun_canny_tile. ----
 *
 * clrun_canny_join: a work-item per pixel of a border between two tiles (the bottom rows of all
 * tile rows but the last, then the right columns of all tile columns but the last) unites its node
 * with the nodes of the three pixels across the border; the larger index wins, so S roots every
 * set that holds an edge. */
__kernel void clrun_canny_join(const int W, const int H, volatile __global int *label)
{
    const int g = get_global_id(0), S = W * H, nh = (NTY - 1) * W, nv = (NTX - 1) * H;
    __global const int *nodes = (__global const int *)label, *a, *b; /* this side's node, the other side's three */
    int i, n;
    if (g < nh) {
        const int t = g / W;
        i = g % W, n = W;
        a = BOTTOM_ROW(nodes) + (size_t)t * W, b = TOP_ROW(nodes) + (size_t)(t + 1) * W;
    } else if (g < nh + nv) {
        const int t = (g - nh) / H;
        i = (g - nh) % H, n = H;
        a = RIGHT_COL(nodes) + (size_t)t * H, b = LEFT_COL(nodes) + (size_t)(t + 1) * H;
    } else {
        return;
    }
    const int p = a[i];
    if (p < 0) return;
    for (int j = max(i - 1, 0); j <= min(i + 1, n - 1); j++) {
        const int q = b[j];
        if (q >= 0 && (p != S || q != S)) unite(label, p, q);
    }
}

/* a work-group per tile, as clrun_canny_tile: each pending pixel becomes an edge if its root is S */
__kernel __attribute__((reqd_work_group_size(BX, BY, 1))) void
clrun_canny_fix(const int W, const int H, volatile __global int *label, __global uchar *dst, const ulong dst_off, const uint dst_stride)
{
    const int tx = get_group_id(0), ty = get_group_id(1);
    if (!PENDING((__global const int *)label)[ty * NTX + tx]) return;
    const int ly = get_local_id(1), x = tx * TW + get_local_id(0), S = W * H;
    if (x >= W) return;
    dst += dst_off;
    for (int k = 0; k < PY; k++) {
        const int y = ty * TH + ROW(k);
        if (y >= H) break;
        __global uchar *d = dst + (size_t)y * dst_stride + x;
        if (*d == 1) *d = find_root_halving(label, label[y * W + x]) == S ? 255 : 0;
    }
}

/* ---- CPU shape, the passes after clrun_canny_block_cpu: a work-item per row of blocks. ---- */
#define DST(x, y) d[(size_t)(y) * dst_stride + (x)]

__kernel void clrun_canny_join_cpu(const int W, const int H, volatile __global int *parent, __global const uchar *dst,
                                   const ulong dst_off, const uint dst_stride)
{
    const int by = get_global_id(0), y0 = by * RB, y1 = min(H, y0 + RB);
    if (y0 >= H) return;
    __global const uchar *d = dst + dst_off;
    /* across the bottom border: each non-zero pixel of the last row with the three below it */
    if (y1 < H)
        for (int x = 0, y = y1 - 1; x < W; x++) {
            if (!DST(x, y)) continue;
            for (int dx = -1; dx <= 1; dx++)
                if (x + dx >= 0 && x + dx < W && DST(x + dx, y + 1)) unite(parent, y * W + x, (y + 1) * W + x + dx);
        }
    /* across the right border of each block: with the three pixels to the east */
    for (int x = CW - 1; x + 1 < W; x += CW)
        for (int y = y0; y < y1; y++) {
            if (!DST(x, y)) continue;
            for (int dy = -1; dy <= 1; dy++)
                if (y + dy >= 0 && y + dy < H && DST(x + 1, y + dy)) unite(parent, y * W + x, (y + dy) * W + x + 1);
        }
}

/* each pending component: an edge (255) if its root is S, else 0 (finds halve paths: only finds
 * run concurrently here, and halving keeps every tree's root) */
__kernel void clrun_canny_fix_cpu(const int W, const int H, volatile __global int *parent, __global uchar *dst, const ulong dst_off,
                                  const uint dst_stride)
{
    const int y0 = get_global_id(0) * RB, y1 = min(H, y0 + RB);
    if (y0 >= H) return;
    __global uchar *d = dst + dst_off;
    ushort stack[CW * RB];
    for (int x0 = 0; x0 < W; x0 += CW) /* each block [x0, x1) × [y0, y1) of the row: its border pixels */
        for (int x1 = min(W, x0 + CW), y = y0; y < y1; y++)
            for (int x = x0, step = (y == y0 || y == y1 - 1) ? 1 : max(x1 - x0 - 1, 1); x < x1; x += step) {
                if (DST(x, y) != 1) continue;
                const uchar e = find_root_halving(parent, y * W + x) == W * H ? 255 : 0;
                int sp = 0;
                DST(x, y) = e;
                stack[sp++] = (ushort)((y - y0) * CW + x - x0);
                while (sp) {
                    const int p = stack[--sp], py = y0 + p / CW, px = x0 + p % CW;
                    for (int qy = max(py - 1, y0); qy <= min(py + 1, y1 - 1); qy++)
                        for (int qx = max(px - 1, x0); qx <= min(px + 1, x1 - 1); qx++)
                            if (DST(qx, qy) == 1) DST(qx, qy) = e, stack[sp++] = (ushort)((qy - y0) * CW + qx - x0);
                }
            }
}
#undef DST
