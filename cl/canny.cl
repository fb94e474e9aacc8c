/* canny.cl — Canny edges equal to OpenCV's cv2.Canny (aperture 3), in four launches.
 *
 * clrun_canny_nms: a work-group stages a tile of the image (plus two pixels of border, replicated
 * at the image edges) in local memory, computes the 3×3 Sobel dx, dy and the magnitude (L1
 * |dx|+|dy| or L2 dx²+dy², as integers) of the tile plus one pixel (0 outside the image), and
 * classifies each pixel with OpenCV's non-maximum suppression: 0 no edge, 1 weak (> low), 2 strong
 * (> high). It also starts the union-find: label = own index for weak and strong pixels (the
 * labels of other pixels are never read).
 * clrun_canny_union: every weak or strong pixel unites with its weak or strong neighbours to the
 * east, south-west, south and south-east (8-connectivity; the other four see it), by atomic_min
 * on the roots (the smaller index wins), the lock-free union-find of GPU connected-component
 * labelling. clrun_canny_resolve: every labelled pixel points at its root, and every strong pixel
 * marks its root (map value 3). clrun_canny_out: a pixel is an edge when it is weak or strong and
 * its root is marked. Bounded memory (an int and
 * a byte per pixel) and a fixed number of launches whatever the edge map.
 *
 * The labels (int) and the map (uchar) share one buffer, passed as both arguments: W·H labels, then
 * W·H map bytes.
 *
 * Parameters (-D): CN (channels, 1 or 3), L2 (0 or 1), BX, BY (work-group and tile size). */
#define MAP_OF(buf) ((buf) + (size_t)W * H * sizeof(int))

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
#ifndef CW
#define CW 1 /* pixels of a row per work-item in the passes after clrun_canny_nms */
#endif
#ifndef TILED
#define TILED 0 /* 1: the classification kernel has joined the pixels of each TX×TY tile already */
#endif
#ifndef TX
#define TX BX /* tiles the classification joins: BX×BY on GPUs, CW×RB on CPUs */
#endif
#ifndef TY
#define TY BY
#endif

#ifndef R
#define R 1 /* Sobel radius: aperture 3, 5 or 7 */
#endif
#define IW (BX + 2 * R + 2) /* staged input tile */
#define IH (BY + 2 * R + 2)

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
#define MW (BX + 2) /* magnitudes of the tile plus one pixel */
#define MH (BY + 2)
#define TG22 13573  /* tan(22.5°)·2^15, rounded, as OpenCV */

/* Union-find in local memory for one tile (see unite below for the global one). */
static inline int find_root_local(volatile __local int *lab, int x)
{
    int p = lab[x];
    while (p != x) {
        x = p;
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

__kernel __attribute__((reqd_work_group_size(BX, BY, 1))) void
clrun_canny_nms(__global const uchar *restrict src, const ulong src_off, const uint src_stride, const int W, const int H,
                const int low, const int high, __global uchar *map, __global int *label)
{
    map = MAP_OF(map);
    __local uchar in[CN][IH][IW];
    __local int mag[MH][MW];
    __local short dxl[MH][MW], dyl[MH][MW];
    const int lx = get_local_id(0), ly = get_local_id(1), lid = ly * BX + lx;
    const int x0 = get_group_id(0) * BX, y0 = get_group_id(1) * BY;
    src += src_off;

    for (int e = lid; e < IW * IH; e += BX * BY) {
        const int tx = e % IW, ty = e / IW;
        const int x = clamp(x0 - 1 - R + tx, 0, W - 1), y = clamp(y0 - 1 - R + ty, 0, H - 1); /* replicated border */
        __global const uchar *p = src + (size_t)y * src_stride + (size_t)x * CN;
        for (int c = 0; c < CN; c++) in[c][ty][tx] = p[c];
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    for (int e = lid; e < MW * MH; e += BX * BY) {
        const int mx = e % MW, my = e / MW, x = x0 - 1 + mx, y = y0 - 1 + my;
        int best = 0, bdx = 0, bdy = 0;
        if (x >= 0 && x < W && y >= 0 && y < H) { /* outside the image the magnitude is 0 */
            /* channels in OpenCV's B, G, R order; a later one wins only when strictly larger */
            for (int k = 0; k < CN; k++) {
                const int c = CN - 1 - k;
#define I(r, q) ((int)in[c][r][q])
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

    const int x = x0 + lx, y = y0 + ly, inside = x < W && y < H;
    const int cx = lx + 1, cy = ly + 1, m = mag[cy][cx];
    int v = 0;
    if (inside && m > low) {
        const int xs = dxl[cy][cx], ys = dyl[cy][cx];
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
        if (keep) v = m > high ? 2 : 1;
    }
    /* union-find inside the tile, in local memory; clrun_canny_union (TILED) then joins the tiles */
    __local int lab[BY * BX];
    const int li = ly * BX + lx;
    lab[li] = v ? li : -1;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (v) {
        const int e = lx + 1 < BX && lab[li + 1] >= 0;
        if (e) unite_local(lab, li, li + 1);
        if (ly + 1 < BY) {
            const int j = li + BX;
            if (lab[j] >= 0) {
                unite_local(lab, li, j);
            } else {
                if (lx > 0 && lab[j - 1] >= 0) unite_local(lab, li, j - 1);
                if (!e && lx + 1 < BX && lab[j + 1] >= 0) unite_local(lab, li, j + 1);
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!inside) return;
    const size_t i = (size_t)y * W + x;
    map[i] = (uchar)v;
    if (v) { /* labels are read only where the map is not 0 */
        const int r = find_root_local(lab, li);
        label[i] = (y0 + r / BX) * W + x0 + r % BX;
    }
}

/* ---- CPU shape: a work-item classifies a block of CW columns × RB rows, row by row, keeping the
 * magnitudes of three rows in private arrays (each Sobel computed once); plain loops over columns
 * that the compiler vectorises; no local memory and no barrier. ---- */
#ifndef RB
#define RB 16
#endif

/* Sequential union-find, for labels that only this work-item touches: the root is the smallest
 * index (as in unite below), paths are compressed. */
static inline int find_seq(__global int *label, int x)
{
    int r = x;
    while (label[r] != r) r = label[r];
    while (label[x] != r) {
        const int nx = label[x];
        label[x] = r;
        x = nx;
    }
    return r;
}

static inline void join_seq(__global int *label, int a, int b)
{
    a = find_seq(label, a);
    b = find_seq(label, b);
    if (a < b) label[b] = a;
    else if (b < a) label[a] = b;
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
    for (int j = 0; j < n + 2; j++) {
        if (j >= jlo && j < jhi) continue;
        const int x = x0 - 1 + j;
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
        mag[j] = best, gxr[j] = (short)bdx, gyr[j] = (short)bdy;
    }
}

__kernel void clrun_canny_nms_cpu(__global const uchar *restrict src, const ulong src_off, const uint src_stride, const int W,
                                  const int H, const int low, const int high, __global uchar *map, __global int *label)
{
    map = MAP_OF(map);
    src += src_off;
    const int x0 = get_global_id(0) * CW, y0 = get_global_id(1) * RB;
    if (x0 >= W || y0 >= H) return;
    const int n = min(CW, W - x0), y1 = min(H, y0 + RB);
    int mag[3][CW + 2];
    short gxr[3][CW + 2], gyr[3][CW + 2];
    sobel_row(src, src_stride, W, H, x0, n, y0 - 1, mag[0], gxr[0], gyr[0]);
    sobel_row(src, src_stride, W, H, x0, n, y0, mag[1], gxr[1], gyr[1]);
    for (int y = y0; y < y1; y++) {
        const int up = (y - y0) % 3, mid = (y - y0 + 1) % 3, dn = (y - y0 + 2) % 3;
        sobel_row(src, src_stride, W, H, x0, n, y + 1, mag[dn], gxr[dn], gyr[dn]);
        const int *mu = mag[up], *mm = mag[mid], *md = mag[dn];
        const short *gx = gxr[mid], *gy = gyr[mid];
        __global uchar *mrow = map + (size_t)y * W + x0;
        __global int *lrow = label + (size_t)y * W + x0;
        for (int j = 1; j <= n; j++) {
            const int m = mm[j], xs = gx[j], ys = gy[j];
            const int ax = abs(xs), ay = abs(ys) << 15, tg22x = ax * TG22, tg67x = TG67(tg22x, ax);
            const int neg = (xs ^ ys) < 0, horiz = ay < tg22x, vert = !horiz & (ay > tg67x), diag = !horiz & !vert;
            const int keep = (horiz & (m > mm[j - 1]) & (m >= mm[j + 1])) | (vert & (m > mu[j]) & (m >= md[j])) |
                             (diag & neg & (m > mu[j + 1]) & (m > md[j - 1])) | (diag & !neg & (m > mu[j - 1]) & (m > md[j + 1]));
            const int v = (m > low) & keep ? 1 + (m > high) : 0;
            mrow[j - 1] = (uchar)v;
            if (v) lrow[j - 1] = y * W + x0 + j - 1; /* labels are read only where the map is not 0 */
        }
        /* join this row's pixels with their west, north-west, north and north-east neighbours in
         * the block: a sequential union-find (the block is this work-item's alone) */
        for (int j = 1; j <= n; j++) {
            if (!mrow[j - 1]) continue;
            const int i = y * W + x0 + j - 1;
            if (j > 1 && mrow[j - 2]) join_seq(label, i, i - 1);
            if (y > y0) {
                __global const uchar *prev = mrow - W;
                if (j > 1 && prev[j - 2]) join_seq(label, i, i - W - 1);
                if (prev[j - 1]) join_seq(label, i, i - W);
                if (j < n && prev[j]) join_seq(label, i, i - W + 1);
            }
        }
    }
}

/* ---- Gaussian pre-blur, as cv2.GaussianBlur(img, (K, K), 0) on 8-bit data: OpenCV's fixed
 * kernels for K = 3, 5, 7 in 8.8 fixed point, rows then columns, exact sums, rounded half up from
 * 16.16; borders reflected without repeating the edge pixel (BORDER_REFLECT_101). ---- */
#ifndef KB
#define KB 3
#endif
#if KB == 3
__constant int GK[3] = {64, 128, 64};
#elif KB == 5
__constant int GK[5] = {16, 64, 96, 64, 16};
#else
__constant int GK[7] = {8, 28, 56, 72, 56, 28, 8};
#endif

static inline int reflect101(int i, int n)
{
    if (n == 1) return 0;
    while (i < 0 || i >= n) i = i < 0 ? -i : 2 * n - 2 - i;
    return i;
}

__kernel void clrun_canny_blur(__global const uchar *restrict src, const ulong src_off, const uint src_stride, const int W,
                               const int H, __global uchar *restrict dst, const ulong dst_off)
{
    const int x = get_global_id(0), y = get_global_id(1);
    if (x >= W || y >= H) return;
    src += src_off;
    const int r = KB / 2;
    for (int c = 0; c < CN; c++) {
        int s = 0;
        for (int a = -r; a <= r; a++) {
            __global const uchar *row = src + (size_t)reflect101(y + a, H) * src_stride;
            int h = 0;
            for (int b = -r; b <= r; b++) h += GK[b + r] * row[(size_t)reflect101(x + b, W) * CN + c];
            s += GK[a + r] * h;
        }
        dst[dst_off + ((size_t)y * W + x) * CN + c] = (uchar)min(255, (s + 32768) >> 16);
    }
}

/* The root of x's tree (read only: clrun_canny_resolve relies on every pixel's final label being
 * its root, which a concurrent halving store would undo). */
static inline int find_root(volatile __global int *label, int x)
{
    int p = label[x];
    while (p != x) {
        x = p;
        p = label[x];
    }
    return x;
}

/* The same, for unite, halving the path on the way: each visited pixel is pointed at its
 * grandparent. Labels only ever point at smaller indices, and a grandparent is an ancestor, so the
 * plain store races harmlessly with other finds (they only shorten paths too) and with a unite's
 * atomic_min on the same pixel (that unite saw the pixel was no longer a root and joins its old
 * parent, hence the same tree, next). Long edges that cross many tiles otherwise leave chains one
 * tile root long per tile, walked again by every find. */
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

static inline void unite(volatile __global int *label, int a, int b)
{
    for (;;) {
        a = find_root_halving(label, a);
        b = find_root_halving(label, b);
        if (a == b) return;
        if (a > b) {
            const int t = a;
            a = b, b = t;
        }
        /* link root b under a; if b stopped being a root meanwhile, unite a with what it points to */
        const int old = atomic_min(&label[b], a);
        if (old == b) return;
        b = old;
    }
}

/* The passes below take CW consecutive pixels of a row per work-item (1 on GPUs; a run of them on
 * CPUs, where a work-item per pixel costs more than the work). Global size: ⌈W/CW⌉ × H. */
#define FOR_CHUNK(W, H)                                                                                             \
    const int x0_ = get_global_id(0) * CW, y = get_global_id(1);                                                   \
    if (y >= H) return;                                                                                             \
    for (int x = x0_; x < min(W, x0_ + CW); x++)

/* FOR_CHUNK for passes that only act on candidate pixels (map value not 0), most pixels being 0:
 * on CPUs (CW ≥ 16) runs of 16 map bytes that are all 0 are skipped with one vector test (ZR(x)
 * handles such a run starting at x), the others go pixel by pixel. The map's zeros do not change
 * while these passes run. */
#define NO_RUN(x) ((void)0)
#if CW >= 16
#define FOR_RUNS(W, H, m, ZR)                                                                                       \
    const int x0_ = get_global_id(0) * CW, y = get_global_id(1);                                                   \
    if (y >= H) return;                                                                                             \
    const int x1_ = min(W, x0_ + CW);                                                                               \
    for (int xc_ = x0_, xe_; xc_ < x1_; xc_ = xe_)                                                                  \
        if ((xe_ = min(x1_, xc_ + 16)) - xc_ == 16 && !any(vload16(0, (m) + (size_t)y * W + xc_) != (uchar16)(0)))   \
            ZR(xc_);                                                                                                \
        else                                                                                                        \
            for (int x = xc_; x < xe_; x++)
#else
#define FOR_RUNS(W, H, m, ZR) FOR_CHUNK(W, H)
#endif

/* Join pixel (x, y), a weak or strong one, with its weak or strong neighbours to the east, south-west,
 * south and south-east (fewer: the south one covers south-west and south-east, the east one covers
 * south-east); with TILED only the pairs that cross a TX×TY tile, the others being joined already. */
static inline void union_at(const int W, const int H, __global const uchar *map, volatile __global int *label, const int x, const int y)
{
    const int i = y * W + x;
    if (!map[i]) return;
    const int lx = x % TX, ly = y % TY;
    const int cross_e = !TILED || lx == TX - 1, cross_s = !TILED || ly == TY - 1;
    const int e = x + 1 < W && map[i + 1];
    if (e && cross_e) unite(label, i, i + 1);
    if (y + 1 < H) {
        const int j = i + W;
        if (map[j]) {
            if (cross_s) unite(label, i, j);
        } else {
            if (x > 0 && map[j - 1] && (cross_s || lx == 0)) unite(label, i, j - 1);
            if (!e && x + 1 < W && map[j + 1] && (cross_s || lx == TX - 1)) unite(label, i, j + 1);
        }
    }
}

__kernel void clrun_canny_union(const int W, const int H, __global const uchar *map, volatile __global int *label)
{
    map = MAP_OF(map);
#if TILED && CW == TX
    /* a work-item holds one tile row: inside the tile only its first and last pixels can cross,
     * except on the tile's last row */
    const int x0 = get_global_id(0) * CW, y = get_global_id(1);
    if (y >= H || x0 >= W) return;
    const int last = min(W, x0 + CW) - 1;
    if (y % TY != TY - 1) {
        union_at(W, H, map, label, x0, y);
        if (last != x0) union_at(W, H, map, label, last, y);
        return;
    }
    for (int x = x0; x <= last; x++) union_at(W, H, map, label, x, y);
#else
    FOR_CHUNK(W, H) union_at(W, H, map, label, x, y);
#endif
}

/* Point every labelled pixel straight at its root, and mark the root of every strong pixel (map
 * value 3: its component is an edge). Only this pixel's own label is written, and another pixel's
 * concurrent write only shortens a path to the same root; a root marked meanwhile reads as >= 2
 * and is marked again, harmlessly. */
__kernel void clrun_canny_resolve(const int W, const int H, volatile __global uchar *map, volatile __global int *label)
{
    map = MAP_OF(map);
    FOR_RUNS(W, H, (__global const uchar *)map, NO_RUN)
    {
        const int i = y * W + x;
        const uchar v = map[i];
        if (!v) continue;
        const int r = find_root(label, i);
        label[i] = r;
        if (v >= 2) map[r] = 3;
    }
}

__kernel void clrun_canny_out(const int W, const int H, __global const uchar *map, __global const int *label,
                              __global uchar *restrict dst, const ulong dst_off, const uint dst_stride)
{
    map = MAP_OF(map);
    __global uchar *drow = dst + dst_off + (size_t)get_global_id(1) * dst_stride;
#define ZERO_RUN(x) vstore16((uchar16)(0), 0, drow + (x))
    FOR_RUNS(W, H, map, ZERO_RUN)
    {
        const int i = y * W + x;
        drow[x] = map[i] && map[label[i]] == 3 ? 255 : 0;
    }
#undef ZERO_RUN
}
