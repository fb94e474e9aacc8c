/* test_canny.c — Canny edges byte for byte against OpenCV's goldens (tests/data/canny, made by
 * tools/canny_golden.py), with strides and offsets; the device hysteresis against a breadth-first
 * search on hostile edge maps (every pixel strong, one strong pixel in a sea of weak ones, a long
 * spiral across many tiles, checkerboards, random maps); image files; bad arguments. */
#include "helpers.h"
#include "opkit.h" /* clrun__canny_map (the static library) */

#include <math.h>
#include <unistd.h>

#define CANNY_DIR TEST_DATA_DIR "/canny"

static void read_image(const char *dir, const char *name, clrun_image *img)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (clrun_image_read(path, img) != CLRUN_OK) fail_msg("%s", clrun_last_error(NULL));
}

/* Every step-th line of the manifest: clrun's edges equal OpenCV's, byte for byte, in one shape of
 * the kernels (GPU: tiles in local memory joined by a global union; CPU: row blocks). */
static void goldens_in(clrun_ctx *ctx, const char *shape, int step)
{
    setenv("CLRUN_CANNY_SHAPE", shape, 1);
    FILE *f = fopen(CANNY_DIR "/MANIFEST", "r");
    assert_non_null(f);
    char line[512], in[200], gold[200];
    int n = 0, line_no = 0;
    while (fgets(line, sizeof line, f)) {
        double low, high;
        int l2, aperture, blur;
        double sigma = 0; /* the blur's sigma: an optional eighth column */
        if (line[0] == '#' || sscanf(line, "%199s %199s %lf %lf %d %d %d %lf", in, gold, &low, &high, &l2, &aperture, &blur, &sigma) < 7 ||
            line_no++ % step)
            continue;
        clrun_image img, want, got;
        read_image(CANNY_DIR, in, &img);
        read_image(CANNY_DIR "/golden", gold, &want);
        clrun_canny_params p = {low, high, l2, aperture, blur, sigma};
        CHECK_OK(ctx, clrun_canny_image(ctx, &img, &p, &got));
        assert_int_equal(want.channels, 1);
        assert_int_equal(got.width, want.width);
        assert_int_equal(got.height, want.height);
        for (size_t y = 0; y < got.height; y++)
            for (size_t x = 0; x < got.width; x++)
                if (got.data[y * got.stride + x] != want.data[y * want.stride + x])
                    fail_msg("%s shape, %s (low %g, high %g, %s, aperture %d, blur %d, sigma %g): pixel (%zu, %zu) is %d, OpenCV has %d",
                             shape, in, low, high, l2 ? "L2" : "L1", aperture, blur, sigma, x, y, got.data[y * got.stride + x],
                             want.data[y * want.stride + x]);
        clrun_image_free(&img), clrun_image_free(&want), clrun_image_free(&got);
        n++;
    }
    fclose(f);
    assert_true(n >= 250 / step);
    unsetenv("CLRUN_CANNY_SHAPE");
}

static void goldens(void **state)
{
    goldens_in(*state, "gpu", 1);
    goldens_in(*state, "cpu", 1);
}

/* Source and destination at byte offsets with padded rows: same edges, nothing else written. */
/* One image in a padded layout (offset soff, stride W·channels + pad; dst offset 3, stride W + 5)
 * through both shapes: the golden inside, the padding untouched. */
static void layout_case(clrun_ctx *ctx, const char *name, const char *golden, size_t soff, size_t pad)
{
    clrun_image img, want;
    read_image(CANNY_DIR, name, &img);
    read_image(CANNY_DIR "/golden", golden, &want);
    const size_t W = img.width, H = img.height, C = img.channels, ss = W * C + pad, ds = W + 5, doff = 3;
    unsigned char *src = malloc(soff + H * ss), *dst = malloc(doff + H * ds), *back = malloc(doff + H * ds);
    memset(src, 0xA5, soff + H * ss);
    memset(dst, 0x5A, doff + H * ds);
    for (size_t y = 0; y < H; y++) memcpy(src + soff + y * ss, img.data + y * img.stride, W * C);
    clrun_buf *bs, *bd;
    CHECK_OK(ctx, clrun_buf_new(ctx, soff + H * ss, 0, &bs));
    CHECK_OK(ctx, clrun_buf_new(ctx, doff + H * ds, 0, &bd));
    CHECK_OK(ctx, clrun_upload(bs, 0, src, soff + H * ss));
    static const char *const shapes[2] = {"gpu", "cpu"};
    for (int sh = 0; sh < 2; sh++) {
        setenv("CLRUN_CANNY_SHAPE", shapes[sh], 1);
        CHECK_OK(ctx, clrun_upload(bd, 0, dst, doff + H * ds));
        clrun_canny_params p = {50, 100, 0, 0, 0, 0.0};
        CHECK_OK(ctx, clrun_canny(ctx, bs, soff, ss, W, H, (unsigned)C, bd, doff, ds, &p));
        CHECK_OK(ctx, clrun_download(bd, 0, back, doff + H * ds));
        for (size_t i = 0; i < doff + H * ds; i++) {
            size_t y = (i - doff) / ds, x = (i - doff) % ds;
            int inside = i >= doff && x < W && y < H;
            int expect = inside ? want.data[y * want.stride + x] : 0x5A;
            if (back[i] != expect)
                fail_msg("%s, offset %zu, stride %zu, %s shape: byte %zu (inside %d) is %d, want %d", name, soff, ss, shapes[sh], i, inside,
                         back[i], expect);
        }
    }
    unsetenv("CLRUN_CANNY_SHAPE");
    clrun_buf_free(bs), clrun_buf_free(bd);
    free(src), free(dst), free(back);
    clrun_image_free(&img), clrun_image_free(&want);
}

/* Offsets and strides: colour; gray with rows at odd addresses; gray with rows at multiples of 4
 * bytes but a width that is not (the GPU tiles are then staged in words, the last one of a row
 * partly past the image) */
static void strides_and_offsets(void **state)
{
    layout_case(*state, "color.png", "color.l1-50-100.png", 7, 13);
    layout_case(*state, "noise-odd.png", "noise-odd.l1-50-100.png", 7, 2);
    layout_case(*state, "noise-odd.png", "noise-odd.l1-50-100.png", 8, 3);
    layout_case(*state, "frame.png", "frame.l1-50-100.png", 12, 7);
    /* widths 3 (mod 4), 2, 3 and 1: every way a row's last word can reach past the image */
    layout_case(*state, "noise-low.png", "noise-low.l1-50-100.png", 4, 1);
    layout_case(*state, "text.png", "text.l1-50-100.png", 16, 5);
    layout_case(*state, "two-by-three.png", "two-by-three.l1-50-100.png", 4, 2);
    layout_case(*state, "three-by-one.png", "three-by-one.l1-50-100.png", 8, 1);
    layout_case(*state, "one-column.png", "one-column.l1-50-100.png", 4, 3);
}

/* In place: the edges written over the image itself (same buffer, same offset and stride), in both
 * shapes, equal the golden. */
static void in_place(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_image img, want;
    read_image(CANNY_DIR, "frame.png", &img);
    read_image(CANNY_DIR "/golden", "frame.l1-50-100.png", &want);
    const size_t W = img.width, H = img.height, off = 5, stride = W + 3;
    unsigned char *buf = calloc(off + H * stride, 1), *back = malloc(off + H * stride);
    for (size_t y = 0; y < H; y++) memcpy(buf + off + y * stride, img.data + y * img.stride, W);
    clrun_buf *b;
    CHECK_OK(ctx, clrun_buf_new(ctx, off + H * stride, 0, &b));
    static const char *const shapes[2] = {"gpu", "cpu"};
    for (int sh = 0; sh < 2; sh++) {
        setenv("CLRUN_CANNY_SHAPE", shapes[sh], 1);
        CHECK_OK(ctx, clrun_upload(b, 0, buf, off + H * stride));
        clrun_canny_params p = {50, 100, 0, 3, 0, 0.0};
        CHECK_OK(ctx, clrun_canny(ctx, b, off, stride, W, H, 1, b, off, stride, &p));
        CHECK_OK(ctx, clrun_download(b, 0, back, off + H * stride));
        for (size_t y = 0; y < H; y++)
            for (size_t x = 0; x < W; x++)
                if (back[off + y * stride + x] != want.data[y * want.stride + x])
                    fail_msg("%s shape, in place: pixel (%zu, %zu) is %d, OpenCV has %d", shapes[sh], x, y, back[off + y * stride + x],
                             want.data[y * want.stride + x]);
    }
    unsetenv("CLRUN_CANNY_SHAPE");
    clrun_buf_free(b);
    free(buf), free(back);
    clrun_image_free(&img), clrun_image_free(&want);
}

/* ---- hysteresis on hand-made maps: the library's own kernels against a breadth-first search ---- */

/* edges: 255 where an 8-connected path of weak (1) or strong (2) pixels reaches a strong one */
static void reference(const unsigned char *map, int W, int H, unsigned char *edges)
{
    int *queue = malloc(sizeof(int) * (size_t)W * H), head = 0, tail = 0;
    memset(edges, 0, (size_t)W * H);
    for (int i = 0; i < W * H; i++)
        if (map[i] == 2) edges[i] = 255, queue[tail++] = i;
    while (head < tail) {
        int i = queue[head++], x = i % W, y = i / W;
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int nx = x + dx, ny = y + dy, j = ny * W + nx;
                if (nx < 0 || ny < 0 || nx >= W || ny >= H || edges[j] || !map[j]) continue;
                edges[j] = 255, queue[tail++] = j;
            }
    }
    free(queue);
}

/* The map through each shape's own kernels (GPU: tiles joined in local memory, then globally; CPU:
 * walks inside blocks, then their borders joined), compared with the search. */
static const char *only_shape; /* NULL: both shapes */

static void run_hysteresis(clrun_ctx *ctx, const unsigned char *map, int W, int H, const char *what)
{
    size_t n = (size_t)W * H;
    unsigned char *got = malloc(n), *want = malloc(n);
    reference(map, W, H, want);
    clrun_buf *m, *d;
    CHECK_OK(ctx, clrun_buf_new(ctx, n, 0, &m));
    CHECK_OK(ctx, clrun_buf_new(ctx, n, 0, &d));
    CHECK_OK(ctx, clrun_upload(m, 0, map, n));
    static const char *const shapes[2] = {"gpu", "cpu"};
    for (int sh = 0; sh < 2; sh++) {
        if (only_shape && strcmp(only_shape, shapes[sh])) continue;
        setenv("CLRUN_CANNY_SHAPE", shapes[sh], 1);
        memset(got, 0x5A, n);
        CHECK_OK(ctx, clrun_upload(d, 0, got, n));
        CHECK_OK(ctx, clrun__canny_map(ctx, m, W, H, d));
        CHECK_OK(ctx, clrun_download(d, 0, got, n));
        for (size_t i = 0; i < n; i++)
            if (got[i] != want[i])
                fail_msg("%s %dx%d, %s shape: pixel (%zu, %zu) is %d, want %d", what, W, H, shapes[sh], i % W, i / W, got[i], want[i]);
    }
    unsetenv("CLRUN_CANNY_SHAPE");
    clrun_buf_free(m), clrun_buf_free(d);
    free(got), free(want);
}

static void hostile_maps(clrun_ctx *ctx)
{
    uint64_t s = test_seed();
    const int W = 301, H = 203;
    unsigned char *map = malloc((size_t)W * H);
    memset(map, 2, (size_t)W * H); /* every pixel strong */
    run_hysteresis(ctx, map, W, H, "all strong");
    memset(map, 1, (size_t)W * H); /* one component of weak pixels, one strong pixel in a corner */
    map[(size_t)W * H - 1] = 2;
    run_hysteresis(ctx, map, W, H, "all weak but the last");
    for (int y = 0; y < H; y++) /* weak checkerboard: connected through the diagonals only */
        for (int x = 0; x < W; x++) map[y * W + x] = (x + y) % 2 == 0;
    map[0] = 2;
    run_hysteresis(ctx, map, W, H, "weak checkerboard");
    memset(map, 0, (size_t)W * H); /* a one-pixel square spiral of weak pixels, strong at its centre */
    int x0 = 1, y0 = 1, x1 = W - 2, y1 = H - 2, cx = 0, cy = 0;
    while (x0 < x1 && y0 < y1) {
        for (int x = x0; x <= x1; x++) map[y0 * W + x] = 1, map[y1 * W + x] = 1;
        for (int y = y0; y <= y1; y++) map[y * W + x1] = 1;
        for (int y = y0 + 2; y <= y1; y++) map[y * W + x0] = 1;
        cx = x0 + 2, cy = y0 + 2, x0 += 2, y0 += 2, x1 -= 2, y1 -= 2;
    }
    map[(cy < H ? cy : H - 1) * W + (cx < W ? cx : W - 1)] = 2;
    run_hysteresis(ctx, map, W, H, "spiral");
    for (int y = 0; y < H; y++) /* diagonals both ways and dashes: runs joined below-left and below-right */
        for (int x = 0; x < W; x++) map[y * W + x] = (x + y) % 7 == 0 || (x - y + 5 * H) % 5 == 0 || (y % 9 == 4 && x % 4 != 0);
    map[(H / 2) * W + W / 2] = 2;
    run_hysteresis(ctx, map, W, H, "diagonals");
    for (int t = 0; t < 6; t++) { /* random maps of growing density */
        for (int i = 0; i < W * H; i++) {
            unsigned r = (unsigned)(rng_next(&s) % 1000);
            map[i] = r < 20 * (unsigned)(t + 1) ? 2 : r < 120 * (unsigned)(t + 1) ? 1 : 0;
        }
        run_hysteresis(ctx, map, W, H, "random");
    }
    memset(map, 1, 7); /* tiny and one-row maps */
    map[3] = 2;
    run_hysteresis(ctx, map, 7, 1, "one row");
    run_hysteresis(ctx, map, 1, 7, "one column");
    free(map);
}

static void hysteresis_hostile_maps(void **state) { hostile_maps(*state); }

/* The GPU shape with other tiles (CLRUN_CANNY_TILE): odd tile heights, one row per work-item, small
 * and wide tiles move every tile border; a sample of the goldens and the hostile maps. A malformed
 * tile is refused. */
static void other_tiles(void **state)
{
    clrun_ctx *ctx = *state;
    static const char *const tiles[] = {"8x4x3", "64x2x1", "16x16x2"};
    only_shape = "gpu";
    for (size_t t = 0; t < sizeof tiles / sizeof *tiles; t++) {
        setenv("CLRUN_CANNY_TILE", tiles[t], 1);
        goldens_in(ctx, "gpu", 5);
        hostile_maps(ctx);
    }
    only_shape = NULL;
    clrun_buf *b;
    CHECK_OK(ctx, clrun_buf_new(ctx, 100, 0, &b));
    clrun_canny_params p = {50, 100, 0, 3, 0, 0.0};
    static const char *const bad[] = {"32x8", "0x8x4", "64x32x1", "32x8x4x", "axbxc", "32x8x17", "65536x65536x1"};
    for (size_t t = 0; t < sizeof bad / sizeof *bad; t++) {
        setenv("CLRUN_CANNY_TILE", bad[t], 1);
        CHECK_FAIL(ctx, clrun_canny(ctx, b, 0, 10, 10, 10, 1, b, 0, 10, &p), CLRUN_INVALID_ARG, "CLRUN_CANNY_TILE");
    }
    unsetenv("CLRUN_CANNY_TILE");
    clrun_buf_free(b);
}

/* Random images of odd sizes: 3-channel edges equal the 1-channel edges of the same image given
 * in all three channels (the channel choice is exercised by the goldens). */
static void gray_as_three_channels(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    clrun_image g, c, eg, ec;
    CHECK_OK(NULL, clrun_image_new(&g, 67 + rng_next(&s) % 50, 33 + rng_next(&s) % 40, 1));
    CHECK_OK(NULL, clrun_image_new(&c, g.width, g.height, 3));
    for (size_t i = 0; i < g.width * g.height; i++) {
        g.data[i] = (unsigned char)(rng_next(&s) % 4 == 0 ? rng_next(&s) : 128);
        memset(c.data + 3 * i, g.data[i], 3);
    }
    clrun_canny_params p = {20, 60, (int)(rng_next(&s) % 2), 3, 0, 0.0};
    CHECK_OK(ctx, clrun_canny_image(ctx, &g, &p, &eg));
    CHECK_OK(ctx, clrun_canny_image(ctx, &c, &p, &ec));
    assert_memory_equal(eg.data, ec.data, eg.width * eg.height);
    clrun_image_free(&g), clrun_image_free(&c), clrun_image_free(&eg), clrun_image_free(&ec);
}

static void bad_arguments(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_buf *b;
    CHECK_OK(ctx, clrun_buf_new(ctx, 100, 0, &b));
    clrun_canny_params p = {50, 100, 0, 3, 0, 0.0};
    CHECK_FAIL(ctx, clrun_canny(ctx, b, 0, 10, 10, 10, 2, b, 0, 10, &p), CLRUN_INVALID_ARG, "1 or 3 channels");
    CHECK_FAIL(ctx, clrun_canny(ctx, b, 0, 9, 10, 10, 1, b, 0, 10, &p), CLRUN_INVALID_ARG, "stride");
    CHECK_FAIL(ctx, clrun_canny(ctx, b, 1, 10, 10, 10, 1, b, 0, 10, &p), CLRUN_INVALID_ARG, "source image");
    CHECK_FAIL(ctx, clrun_canny(ctx, b, 0, 10, 10, 10, 1, b, 0, 11, &p), CLRUN_INVALID_ARG, "edge image");
    CHECK_FAIL(ctx, clrun_canny(ctx, b, 0, 10, 10, 10, 1, b, 0, 10, NULL), CLRUN_INVALID_ARG, "NULL");
    p.aperture = 4;
    CHECK_FAIL(ctx, clrun_canny(ctx, b, 0, 10, 10, 10, 1, b, 0, 10, &p), CLRUN_INVALID_ARG, "aperture 4");
    p.aperture = 3, p.low = NAN;
    CHECK_FAIL(ctx, clrun_canny(ctx, b, 0, 10, 10, 10, 1, b, 0, 10, &p), CLRUN_INVALID_ARG, "NaN");
    p.low = 50, p.blur = 4;
    CHECK_FAIL(ctx, clrun_canny(ctx, b, 0, 10, 10, 10, 1, b, 0, 10, &p), CLRUN_INVALID_ARG, "blur size 4");
    p.blur = 5, p.blur_sigma = NAN;
    CHECK_FAIL(ctx, clrun_canny(ctx, b, 0, 10, 10, 10, 1, b, 0, 10, &p), CLRUN_INVALID_ARG, "sigma is NaN");
    clrun_buf_free(b);
}

/* Image files: PNG and PGM/PPM round trips; missing, foreign and damaged files are refused. */
static void image_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/clrun-img-XXXXXX", path[256];
    assert_non_null(mkdtemp(dir));
    uint64_t s = test_seed();
    const char *names[] = {"a.png", "b.pgm", "c.png", "d.ppm"};
    for (int t = 0; t < 4; t++) {
        clrun_image img, back;
        CHECK_OK(NULL, clrun_image_new(&img, 1 + rng_next(&s) % 40, 1 + rng_next(&s) % 30, t < 2 ? 1 : 3));
        for (size_t i = 0; i < img.stride * img.height; i++) img.data[i] = (unsigned char)rng_next(&s);
        snprintf(path, sizeof path, "%s/%s", dir, names[t]);
        CHECK_OK(NULL, clrun_image_write(path, &img));
        CHECK_OK(NULL, clrun_image_read(path, &back));
        assert_int_equal(back.width, img.width);
        assert_int_equal(back.height, img.height);
        assert_int_equal(back.channels, img.channels);
        assert_memory_equal(back.data, img.data, img.stride * img.height);
        /* damaged copies: every truncation of the header, and of the data */
        FILE *f = fopen(path, "rb");
        unsigned char buf[8192];
        size_t len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        for (size_t cut = 0; cut < len; cut += cut < 64 ? 1 : 97) {
            snprintf(path, sizeof path, "%s/cut-%s", dir, names[t]);
            f = fopen(path, "wb");
            fwrite(buf, 1, cut, f);
            fclose(f);
            clrun_image bad;
            clrun_status st = clrun_image_read(path, &bad);
            if (st == CLRUN_OK) fail_msg("%s cut to %zu of %zu bytes was read", names[t], cut, len);
            assert_int_equal(st, CLRUN_FORMAT_ERROR);
            assert_null(bad.data);
            unlink(path);
        }
        snprintf(path, sizeof path, "%s/%s", dir, names[t]);
        unlink(path);
        clrun_image_free(&img), clrun_image_free(&back);
    }
    clrun_image img;
    CHECK_FAIL(NULL, clrun_image_read("/nonexistent/x.png", &img), CLRUN_NOT_FOUND, "x.png");
    CHECK_FAIL(NULL, clrun_image_read(TEST_DATA_DIR "/kernels/args.cl", &img), CLRUN_FORMAT_ERROR, "not a PNG");
    snprintf(path, sizeof path, "%s/bad.pgm", dir);
    FILE *f = fopen(path, "wb");
    fputs("P5\n10 -3\n255\n", f);
    fclose(f);
    CHECK_FAIL(NULL, clrun_image_read(path, &img), CLRUN_FORMAT_ERROR, "bad P5 header");
    unlink(path);
    CHECK_FAIL(NULL, clrun_image_new(&img, 4, 4, 2), CLRUN_INVALID_ARG, "1 or 3 channels");
    rmdir(dir);
}

/* What clrun_canny_files reported. */
struct seen {
    size_t images, next, bad_inputs, device_calls, progress;
    clrun_status st[16];
    int in_order;
};

static void seen_image(void *arg, size_t i, clrun_status st, int bad_input, const char *text)
{
    struct seen *s = arg;
    s->in_order &= i == s->next++;
    if (i < 16) s->st[i] = st;
    s->images++, s->bad_inputs += bad_input != 0;
    if (st) assert_non_null(strstr(text, "junk")); /* the failure names its file */
}
static void seen_device(void *arg, unsigned k, const char *text)
{
    (void)k, (void)text;
    ((struct seen *)arg)->device_calls++;
}
static void seen_progress(void *arg, size_t sent, size_t n)
{
    struct seen *s = arg;
    assert_true(sent >= 1 && sent <= n);
    s->progress++;
}

/* Canny over files on two contexts of the device (and on a group), unequal weights: every output
 * equals clrun_canny_image's edges of its input; a bad input fails alone, reported in order, named;
 * the images dealt add up; hostile arguments refused. */
static void files_on_several_devices(void **state)
{
    clrun_ctx *ctx = *state, *two[2] = {ctx, NULL};
    CHECK_OK(NULL, clrun_open(&two[1], test_device()));
    char dir[] = "/tmp/clrun-canny-files-XXXXXX";
    assert_non_null(mkdtemp(dir));
    static const char *names[] = {"shapes.png", "text.png", "pgm.pgm", "color.png", "junk", "one.png", "noise-odd.png", "gradient.png"};
    enum { N = sizeof names / sizeof *names };
    char in[N][4200], out[N][4200];
    const char *ins[N], *outs[N];
    for (int i = 0; i < N; i++) {
        if (strcmp(names[i], "junk") == 0) {
            snprintf(in[i], sizeof in[i], "%s/junk.png", dir);
            FILE *f = fopen(in[i], "w");
            assert_non_null(f);
            fputs("not an image", f);
            fclose(f);
        } else {
            snprintf(in[i], sizeof in[i], "%s/%s", CANNY_DIR, names[i]);
        }
        snprintf(out[i], sizeof out[i], "%s/e%d.png", dir, i);
        ins[i] = in[i], outs[i] = out[i];
    }
    const clrun_canny_params p = {40, 120, 1, 3, 5, 0};
    const double w[2] = {3, 1};
    size_t sent[2] = {7, 7};
    struct seen s = {.in_order = 1};
    clrun_canny_report rep = {seen_image, seen_device, seen_progress, &s, 0, 0, 0, 0, sent};
    CHECK_FAIL(NULL, clrun_canny_files(two, w, 2, &p, ins, outs, N, 3, &rep), CLRUN_FORMAT_ERROR, "1 of 8 images failed");
    assert_int_equal(s.images, N);
    assert_true(s.in_order);
    assert_int_equal(s.bad_inputs, 1);
    assert_int_equal(s.device_calls, 0);
    assert_int_equal(rep.written, N - 1);
    assert_int_equal(sent[0] + sent[1], N - 1);
    assert_true(s.progress >= N - 1);
    for (int i = 0; i < N; i++) {
        if (strcmp(names[i], "junk") == 0) {
            assert_int_equal(s.st[i], CLRUN_FORMAT_ERROR);
            assert_int_equal(access(out[i], F_OK), -1); /* nothing written for it */
            continue;
        }
        assert_int_equal(s.st[i], CLRUN_OK);
        clrun_image src, got, want = {0};
        CHECK_OK(NULL, clrun_image_read(in[i], &src));
        CHECK_OK(NULL, clrun_image_read(out[i], &got));
        CHECK_OK(ctx, clrun_canny_image(ctx, &src, &p, &want));
        assert_int_equal(got.width, want.width);
        assert_int_equal(got.height, want.height);
        for (size_t y = 0; y < want.height; y++)
            if (memcmp(got.data + y * got.stride, want.data + y * want.stride, want.width))
                fail_msg("%s: row %zu of the written edges differs from clrun_canny_image's", names[i], y);
        clrun_image_free(&src), clrun_image_free(&got), clrun_image_free(&want);
        unlink(out[i]);
    }
    /* a weight 0 takes nothing; the group's form; no report at all */
    const double w0[2] = {0, 1};
    CHECK_OK(NULL, clrun_canny_files(two, w0, 2, &p, ins, outs, 4, 0, &rep));
    assert_int_equal(sent[0], 0);
    assert_int_equal(sent[1], 4);
    clrun_group *g = NULL;
    CHECK_OK(NULL, clrun_group_open(&g, "all"));
    CHECK_OK(NULL, clrun_group_canny_files(g, &p, ins, outs, 4, 2, NULL));
    for (int i = 0; i < 4; i++) assert_int_equal(access(out[i], F_OK), 0), unlink(out[i]);
    clrun_group_close(g);
    /* hostile arguments */
    const double bad_w[2] = {1, NAN};
    CHECK_FAIL(NULL, clrun_canny_files(two, bad_w, 2, &p, ins, outs, 1, 1, NULL), CLRUN_INVALID_ARG, "weight 1");
    clrun_ctx *none[2] = {ctx, NULL};
    CHECK_FAIL(NULL, clrun_canny_files(none, NULL, 2, &p, ins, outs, 1, 1, NULL), CLRUN_INVALID_ARG, "context 1 is NULL");
    CHECK_FAIL(NULL, clrun_canny_files(two, NULL, 0, &p, ins, outs, 1, 1, NULL), CLRUN_INVALID_ARG, "no context");
    CHECK_FAIL(NULL, clrun_canny_files(two, NULL, 2, NULL, ins, outs, 1, 1, NULL), CLRUN_INVALID_ARG, "NULL");
    const char *holes[1] = {NULL};
    CHECK_FAIL(NULL, clrun_canny_files(two, NULL, 2, &p, holes, outs, 1, 1, NULL), CLRUN_INVALID_ARG, "input or output 0 is NULL");
    CHECK_OK(NULL, clrun_canny_files(two, NULL, 2, &p, NULL, NULL, 0, 1, NULL)); /* nothing to do */
    const clrun_canny_params bad_p = {40, 120, 0, 4, 0, 0};                      /* an even aperture: refused as the parameters' fault */
    CHECK_FAIL(NULL, clrun_canny_files(two, NULL, 2, &bad_p, ins, outs, 1, 1, NULL), CLRUN_INVALID_ARG, "aperture");
    assert_int_equal(access(out[0], F_OK), -1);
    CHECK_FAIL(NULL, clrun_group_canny_files(NULL, &p, ins, outs, 1, 1, NULL), CLRUN_INVALID_ARG, "g is NULL");
    unlink(in[4]);
    rmdir(dir);
    clrun_close(two[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(files_on_several_devices),
        cmocka_unit_test(goldens),
        cmocka_unit_test(strides_and_offsets),
        cmocka_unit_test(in_place),
        cmocka_unit_test(hysteresis_hostile_maps),
        cmocka_unit_test(gray_as_three_channels),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(other_tiles),
        cmocka_unit_test(image_files),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
