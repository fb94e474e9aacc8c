/* canny_gpu.cl — the GPU shape of Canny (lib/ops/canny/canny_common.h has what the shapes share).
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
 * have any, into 255 if its root is S, else 0. */

#include "canny_common.h"

/* Tile parameters (-D): BX, BY, PY (work-group, and rows per work-item: the tile is BX × BY·PY),
 * ALIGN4 (the image's rows start at multiples of 4 bytes: tiles are staged in words). */
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
#ifndef ALIGN4
#define ALIGN4 0 /* 1: the image's rows start at multiples of 4 bytes (GPU tiles are then staged in words) */
#endif
#define IW (TW + 2 * R + 2) /* staged input tile */
#define IH (TH + 2 * R + 2)
#define MW (TW + 2) /* magnitudes of the tile plus one pixel */
#define MH (TH + 2)


/* Union-find in local memory for one tile (see unite below for the global one): the smaller index
 * wins, and finds halve paths as find_root_halving does. Unlike the global one, its loads and
 * stores are plain: they race with other work-items' finds and links (data races under the OpenCL
 * memory model, listed in tests/oclgrind.accounted), harmlessly, since a parent only ever moves to
 * a smaller index and every value a find reads is an ancestor. Removing these races costs the tile
 * kernel 11-16% on the H200 (atomic flags, or a separate map of edge pixels for the runs), and
 * atomic loads in the find (atomic_or with 0) make PoCL 3.1 compute wrong edges. */
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
        if (*d == 1) *d = find_root_halving(label, y * W + x) == S ? 255 : 0; /* from the pixel: its node may be another's */
    }
}
