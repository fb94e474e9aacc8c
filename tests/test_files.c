/* test_files.c — files in and out. Outputs are written without loss or exposure (lib/io/save.c,
 * through clrun_npy_write, clrun_image_write and clrun_file_write): links are followed and kept,
 * FIFOs and devices are written into and never replaced, the replaced file's mode is kept, no
 * predictable temporary name is followed, a failure leaves the destination as it was and names the
 * real error, "-" is stdout. Inputs are read within bounds: an .npy as far as its header says (a
 * FIFO that goes on cannot make it read more), headers up to 1 MiB, kernel sources up to 16 MiB. */
#include "helpers.h"

#include <dirent.h>
#include <errno.h>
#include <png.h>
#include <zlib.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char dir[64];

static const char *in_dir(const char *name)
{
    static char buf[4][256];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 256, "%s/%s", dir, name);
    return p;
}

static void make_array(clrun_array *a, size_t n, float v)
{
    size_t shape[1] = {n};
    CHECK_OK(NULL, clrun_array_new(a, CLRUN_F32, 1, shape));
    for (size_t i = 0; i < n; i++) ((float *)a->data)[i] = v + (float)i;
}

static void expect_array(const char *path, size_t n, float v)
{
    clrun_array r;
    CHECK_OK(NULL, clrun_npy_read(path, &r));
    assert_int_equal(r.count, n);
    for (size_t i = 0; i < n; i++) assert_true(((float *)r.data)[i] == v + (float)i);
    clrun_array_free(&r);
}

static void write_text(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    chmod(path, mode);
}

static void read_text(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    ssize_t n = read(fd, buf, size - 1);
    assert_true(n >= 0);
    buf[n] = 0;
    close(fd);
}

/* Only the expected names are left in the folder: no temporary file survives. */
static void folder_holds(int want)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq %d", dir, want);
    if (system(cmd) != 0) {
        snprintf(cmd, sizeof cmd, "ls -lA %s >&2", dir);
        assert_int_equal(system(cmd), 0);
        fail_msg("%s should hold %d entries", dir, want);
    }
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/clrun-save-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A link is written through: the file it names gets the data, the link stays a link; the mode of a
 * replaced file is kept; a link to nothing creates the file it names. */
static void links_and_modes(void **state)
{
    (void)state;
    clrun_array a;
    struct stat sb;
    make_array(&a, 7, 1.5f);
    write_text(in_dir("real.npy"), "old", 0640);
    assert_int_equal(symlink("real.npy", in_dir("link.npy")), 0);
    CHECK_OK(NULL, clrun_npy_write(in_dir("link.npy"), &a));
    assert_int_equal(lstat(in_dir("link.npy"), &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    assert_int_equal(stat(in_dir("real.npy"), &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0640);
    expect_array(in_dir("real.npy"), 7, 1.5f);
    assert_int_equal(symlink("made.npy", in_dir("dangling.npy")), 0);
    CHECK_OK(NULL, clrun_npy_write(in_dir("dangling.npy"), &a));
    assert_int_equal(lstat(in_dir("dangling.npy"), &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    expect_array(in_dir("made.npy"), 7, 1.5f);
    mode_t old = umask(022); /* a new file: 0666 less the umask */
    CHECK_OK(NULL, clrun_npy_write(in_dir("new.npy"), &a));
    umask(old);
    assert_int_equal(stat(in_dir("new.npy"), &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0644);
    char text[16]; /* raw bytes, through the same writer */
    write_text(in_dir("tune.txt"), "old lines", 0600);
    CHECK_OK(NULL, clrun_file_write(in_dir("tune.txt"), "abc", 3));
    read_text(in_dir("tune.txt"), text, sizeof text);
    assert_string_equal(text, "abc");
    assert_int_equal(stat(in_dir("tune.txt"), &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0600);
    CHECK_FAIL(NULL, clrun_file_write("/dev/full", "abc", 3), CLRUN_IO_ERROR, strerror(ENOSPC));
    folder_holds(6);
    clrun_array_free(&a);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -f %s/*", dir);
    assert_int_equal(system(cmd), 0);
}

/* The temporary name the writer once used (OUT.tmp.PID) planted as a link to a victim file: the
 * victim is untouched. */
static void planted_links_not_followed(void **state)
{
    (void)state;
    clrun_array a;
    char old[256], text[64];
    make_array(&a, 3, 4.0f);
    write_text(in_dir("victim"), "precious", 0600);
    snprintf(old, sizeof old, "%s.tmp.%ld", in_dir("out.npy"), (long)getpid());
    assert_int_equal(symlink(in_dir("victim"), old), 0);
    clrun_image img;
    CHECK_OK(NULL, clrun_image_new(&img, 4, 3, 1));
    snprintf(old, sizeof old, "%s.tmp.%ld", in_dir("out.png"), (long)getpid());
    assert_int_equal(symlink(in_dir("victim"), old), 0);
    CHECK_OK(NULL, clrun_npy_write(in_dir("out.npy"), &a));
    CHECK_OK(NULL, clrun_image_write(in_dir("out.png"), &img));
    read_text(in_dir("victim"), text, sizeof text);
    assert_string_equal(text, "precious");
    expect_array(in_dir("out.npy"), 3, 4.0f);
    clrun_image back;
    CHECK_OK(NULL, clrun_image_read(in_dir("out.png"), &back));
    assert_int_equal(back.width, 4);
    clrun_image_free(&back), clrun_image_free(&img), clrun_array_free(&a);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -f %s/*", dir);
    assert_int_equal(system(cmd), 0);
}

struct reader {
    const char *path;
    unsigned char buf[4096];
    size_t n;
};

static void *read_fifo(void *arg)
{
    struct reader *r = arg;
    int fd = open(r->path, O_RDONLY);
    ssize_t k;
    while (fd >= 0 && (k = read(fd, r->buf + r->n, sizeof r->buf - r->n)) > 0) r->n += (size_t)k;
    if (fd >= 0) close(fd);
    return NULL;
}

/* A FIFO is written into and stays a FIFO; a device too (/dev/full: the real error, ENOSPC). */
static void fifos_and_devices(void **state)
{
    (void)state;
    clrun_array a, r;
    struct stat sb;
    make_array(&a, 5, -2.0f);
    assert_int_equal(mkfifo(in_dir("fifo"), 0600), 0);
    struct reader rd = {in_dir("fifo"), {0}, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, read_fifo, &rd), 0);
    CHECK_OK(NULL, clrun_npy_write(rd.path, &a));
    pthread_join(t, NULL);
    assert_int_equal(lstat(in_dir("fifo"), &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    CHECK_OK(NULL, clrun_npy_parse(rd.buf, rd.n, &r));
    assert_int_equal(r.count, 5);
    clrun_array_free(&r);
    CHECK_FAIL(NULL, clrun_npy_write("/dev/full", &a), CLRUN_IO_ERROR, strerror(ENOSPC));
    assert_int_equal(stat("/dev/full", &sb), 0);
    assert_true(S_ISCHR(sb.st_mode));
    CHECK_FAIL(NULL, clrun_npy_write(dir, &a), CLRUN_IO_ERROR, strerror(EISDIR)); /* a folder is refused, nothing left */
    unlink(in_dir("fifo"));
    folder_holds(0);
    clrun_array_free(&a);
}

/* PNGs are written as cv2.imwrite writes them by default (its speed and size): every row with the
 * Sub filter, deflated at zlib's fastest level (FLEVEL 0 in the zlib header). The pixels read back. */
static void png_written_as_opencv_does(void **state)
{
    (void)state;
    clrun_image img, back;
    uint64_t s = test_seed();
    const size_t w = 300 + rng_next(&s) % 50, h = 40 + rng_next(&s) % 20;
    CHECK_OK(NULL, clrun_image_new(&img, w, h, 1));
    for (size_t i = 0; i < w * h; i++) img.data[i] = (unsigned char)(i % 7 == 0 ? 255 : rng_next(&s) % 4);
    CHECK_OK(NULL, clrun_image_write(in_dir("sub.png"), &img));
    FILE *f = fopen(in_dir("sub.png"), "rb");
    assert_non_null(f);
    static unsigned char file[1 << 20], idat[1 << 20], raw[1 << 20];
    const size_t n = fread(file, 1, sizeof file, f);
    fclose(f);
    size_t ni = 0;
    for (size_t p = 8; p + 12 <= n;) { /* gather the IDAT chunks */
        const size_t len = (size_t)file[p] << 24 | (size_t)file[p + 1] << 16 | (size_t)file[p + 2] << 8 | file[p + 3];
        if (memcmp(file + p + 4, "IDAT", 4) == 0) memcpy(idat + ni, file + p + 8, len), ni += len;
        p += 12 + len;
    }
    assert_true(ni > 2);
    assert_int_equal(idat[1] >> 6, 0); /* FLEVEL 0: the fastest level */
    uLongf nr = sizeof raw;
    assert_int_equal(uncompress(raw, &nr, idat, ni), Z_OK);
    assert_int_equal(nr, h * (w + 1));
    for (size_t y = 0; y < h; y++) assert_int_equal(raw[y * (w + 1)], 1); /* PNG filter type 1, Sub */
    CHECK_OK(NULL, clrun_image_read(in_dir("sub.png"), &back));
    assert_memory_equal(back.data, img.data, w * h);
    clrun_image_free(&img), clrun_image_free(&back);
}

/* A signal handler that calls clrun_file_abort_writes (Ctrl-C in clrun) while a write is in progress
 * in another thread: the write, whose file has no name yet, gives it none and fails; the
 * destination is as it was, nothing is left in the folder. */
static void on_usr1(int sig)
{
    (void)sig;
    clrun_file_abort_writes();
}

struct big_write {
    const char *path;
    const void *data;
    size_t bytes;
    clrun_status st;
    _Atomic int started;
};

static void *big_writer(void *arg)
{
    struct big_write *w = arg;
    atomic_store(&w->started, 1);
    w->st = clrun_file_write(w->path, w->data, w->bytes);
    return NULL;
}

static int temp_of(const char *base) /* a temporary file of the write to base exists in dir */
{
    char name[300];
    int n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        snprintf(name, sizeof name, ".%s.", base);
        n += strncmp(e->d_name, name, strlen(name)) == 0;
    }
    if (d) closedir(d);
    return n;
}

static void interrupted_write_leaves_nothing(void **state)
{
    (void)state;
    const size_t bytes = (size_t)96 << 20;
    char *data = calloc(bytes, 1);
    assert_non_null(data);
    signal(SIGUSR1, on_usr1);
    int caught = 0;
    for (int attempt = 0; attempt < 20 && !caught; attempt++) { /* until the signal lands while the write is in progress */
        write_text(in_dir("old.bin"), "old contents", 0644);
        struct big_write w = {in_dir("old.bin"), data, bytes, CLRUN_OK, 0};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, big_writer, &w), 0);
        while (!atomic_load(&w.started)) usleep(50);
        usleep(500u << (attempt % 5)); /* 0.5 to 8 ms into the write */
        raise(SIGUSR1);
        pthread_join(t, NULL);
        caught = w.st == CLRUN_IO_ERROR;               /* the write gave its file no name */
        if (!caught) assert_int_equal(w.st, CLRUN_OK); /* the write had finished first */
        assert_int_equal(temp_of("old.bin"), 0);       /* either way, nothing else in the folder */
    }
    signal(SIGUSR1, SIG_DFL);
    assert_true(caught);
    char buf[64];
    read_text(in_dir("old.bin"), buf, sizeof buf);
    assert_string_equal(buf, "old contents");
    assert_int_equal(temp_of("old.bin"), 0);
    unlink(in_dir("old.bin"));
    free(data);
}

/* "-" writes to standard output. */
static void dash_is_stdout(void **state)
{
    (void)state;
    clrun_array a, r;
    make_array(&a, 9, 0.25f);
    fflush(stdout);
    int saved = dup(1), fd = open(in_dir("stdout"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 1);
    clrun_status st = clrun_npy_write("-", &a);
    fflush(stdout);
    dup2(saved, 1);
    close(saved), close(fd);
    CHECK_OK(NULL, st);
    CHECK_OK(NULL, clrun_npy_read(in_dir("stdout"), &r));
    assert_int_equal(r.count, 9);
    clrun_array_free(&r), clrun_array_free(&a);
    unlink(in_dir("stdout"));
}

struct writer {
    const char *path;
    const unsigned char *data;
    size_t n, extra; /* extra: zero bytes after the data */
};

static void *write_fifo(void *arg)
{
    const struct writer *w = arg;
    static const unsigned char zeros[4096];
    int fd = open(w->path, O_WRONLY);
    if (fd < 0) return NULL;
    ssize_t k = write(fd, w->data, w->n);
    for (size_t sent = 0; k >= 0 && sent < w->extra; sent += sizeof zeros)
        k = write(fd, zeros, sizeof zeros); /* EPIPE once the reader stops */
    close(fd);
    return NULL;
}

/* Inputs: an .npy read as far as its header says, from a FIFO too; headers and sources bounded. */
static void inputs_bounded(void **state)
{
    (void)state;
    clrun_array a, r;
    make_array(&a, 4, 3.0f);
    CHECK_OK(NULL, clrun_npy_write(in_dir("a.npy"), &a));
    unsigned char file[256];
    FILE *f = fopen(in_dir("a.npy"), "rb");
    assert_non_null(f);
    size_t n = fread(file, 1, sizeof file, f);
    fclose(f);
    signal(SIGPIPE, SIG_IGN);
    for (int extra = 0; extra < 2; extra++) { /* exactly the array, then the array and 64 MiB more */
        assert_int_equal(mkfifo(in_dir("fifo.npy"), 0600), 0);
        struct writer w = {in_dir("fifo.npy"), file, n, extra ? (size_t)64 << 20 : 0};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, write_fifo, &w), 0);
        clrun_status st = clrun_npy_read(w.path, &r);
        pthread_join(t, NULL);
        unlink(w.path);
        if (extra) {
            CHECK_FAIL(NULL, st, CLRUN_FORMAT_ERROR, "bytes after the data");
        } else {
            CHECK_OK(NULL, st);
            assert_int_equal(r.count, 4);
            clrun_array_free(&r);
        }
    }
    file[6] = 2, file[8] = 0, file[9] = 0, file[10] = 0x20, file[11] = 0; /* version 2, a header of 2 MiB */
    f = fopen(in_dir("big.npy"), "wb");
    assert_non_null(f);
    fwrite(file, 1, n, f);
    fclose(f);
    CHECK_FAIL(NULL, clrun_npy_read(in_dir("big.npy"), &r), CLRUN_FORMAT_ERROR, "up to 1 MiB");
    CHECK_FAIL(NULL, clrun_npy_read("/dev/zero", &r), CLRUN_FORMAT_ERROR, "not an .npy file");
    int fd = open(in_dir("huge.cl"), O_WRONLY | O_CREAT | O_TRUNC, 0600); /* 17 MiB of source (sparse) */
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)17 << 20), 0);
    close(fd);
    clrun_ctx *ctx = NULL;
    clrun_prog *p = NULL;
    CHECK_OK(NULL, clrun_open(&ctx, test_device()));
    CHECK_FAIL(ctx, clrun_prog_file(ctx, in_dir("huge.cl"), NULL, &p), CLRUN_IO_ERROR, "up to 16 MiB");
    CHECK_FAIL(ctx, clrun_prog_file(ctx, "/dev/zero", NULL, &p), CLRUN_IO_ERROR, "up to 16 MiB");
    clrun_close(ctx);
    unlink(in_dir("a.npy")), unlink(in_dir("big.npy")), unlink(in_dir("huge.cl"));
    clrun_array_free(&a);
}

/* A palette PNG with transparency (tRNS: what PIL writes for any palette image with transparency)
 * reads as RGB, the alpha dropped, as cv2.imread gives it. */
/* JPEG: every file in tests/data/jpeg decodes to the pixels cv2.imread returns for it (its golden,
 * a PNG written from cv2.imread's result: baseline 4:2:0, 4:2:2, 4:4:4, quality 50, progressive,
 * optimised with restart markers, gray); CMYK is refused by name; damage is a format error. */
static void jpeg_as_opencv_reads_it(void **state)
{
    (void)state;
    static const char *const names[] = {"baseline-420", "baseline-422",      "baseline-440", "baseline-444",    "baseline-q50",
                                        "progressive",  "optimized-restart", "gray",         "gray-progressive"};
    char path[512], golden[512];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        clrun_image got, want;
        snprintf(path, sizeof path, "%s/jpeg/%s.jpg", TEST_DATA_DIR, names[i]);
        snprintf(golden, sizeof golden, "%s/jpeg/%s.golden.png", TEST_DATA_DIR, names[i]);
        CHECK_OK(NULL, clrun_image_read(path, &got));
        CHECK_OK(NULL, clrun_image_read(golden, &want));
        assert_int_equal(got.channels, want.channels);
        assert_int_equal(got.width, want.width);
        assert_int_equal(got.height, want.height);
        for (size_t y = 0; y < got.height; y++)
            if (memcmp(got.data + y * got.stride, want.data + y * want.stride, got.width * got.channels))
                fail_msg("%s: row %zu differs from cv2.imread's", names[i], y);
        clrun_image_free(&got), clrun_image_free(&want);
    }
    clrun_image img;
    snprintf(path, sizeof path, "%s/jpeg/cmyk.jpg", TEST_DATA_DIR);
    CHECK_FAIL(NULL, clrun_image_read(path, &img), CLRUN_FORMAT_ERROR, "CMYK");
    /* a JPEG signature before garbage; a file cut inside its header */
    FILE *f = fopen(in_dir("junk.jpg"), "wb");
    static const char junk[] = "\xff\xd8\xff\xe0 this is not a JPEG stream at all";
    fwrite(junk, 1, sizeof junk - 1, f);
    fclose(f);
    CHECK_FAIL(NULL, clrun_image_read(in_dir("junk.jpg"), &img), CLRUN_FORMAT_ERROR, "not a readable JPEG");
    snprintf(path, sizeof path, "%s/jpeg/progressive.jpg", TEST_DATA_DIR);
    unsigned char buf[4096];
    f = fopen(path, "rb");
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(n > 200);
    f = fopen(in_dir("cut.jpg"), "wb");
    fwrite(buf, 1, 100, f);
    fclose(f);
    CHECK_FAIL(NULL, clrun_image_read(in_dir("cut.jpg"), &img), CLRUN_FORMAT_ERROR, "not a readable JPEG");
    unlink(in_dir("junk.jpg")), unlink(in_dir("cut.jpg"));
}

static void expect_same(const char *path, const char *golden)
{
    clrun_image got, want, shape;
    CHECK_OK(NULL, clrun_image_read(path, &got));
    CHECK_OK(NULL, clrun_image_read(golden, &want));
    CHECK_OK(NULL, clrun_image_info(path, &shape));
    assert_null(shape.data);
    if (got.width != want.width || got.height != want.height || got.channels != want.channels)
        fail_msg("%s: %zu×%zu×%u, cv2.imread gives %zu×%zu×%u", path, got.width, got.height, got.channels, want.width, want.height,
                 want.channels);
    assert_true(shape.width == got.width && shape.height == got.height && shape.channels == got.channels);
    for (size_t y = 0; y < got.height; y++)
        if (memcmp(got.data + y * got.stride, want.data + y * want.stride, got.width * got.channels))
            fail_msg("%s: row %zu differs from cv2.imread's", path, y);
    clrun_image_free(&got), clrun_image_free(&want);
}

/* EXIF orientation, all eight, in JPEG (APP1, both byte orders) and PNG (eXIf), and a gray JPEG:
 * the pixels cv2.imread returns (goldens by tools/exif_golden.py, OpenCV 4.6). */
static void exif_orientation_as_opencv(void **state)
{
    (void)state;
    char path[480], golden[512];
    for (int o = 1; o <= 8; o++)
        for (int png = 0; png < 2; png++) {
            snprintf(path, sizeof path, "%s/exif/o%d.%s", TEST_DATA_DIR, o, png ? "png" : "jpg");
            snprintf(golden, sizeof golden, "%s.golden.png", path);
            expect_same(path, golden);
        }
    snprintf(path, sizeof path, "%s/exif/g6.jpg", TEST_DATA_DIR);
    snprintf(golden, sizeof golden, "%s.golden.png", path);
    expect_same(path, golden);
}

/* Patch a JPEG's SOF height and width. */
static void patch_sof(unsigned char *b, size_t n, unsigned w, unsigned h)
{
    for (size_t i = 2; i + 9 < n; i++)
        if (b[i] == 0xFF && (b[i + 1] == 0xC0 || b[i + 1] == 0xC2)) {
            b[i + 5] = (unsigned char)(h >> 8), b[i + 6] = (unsigned char)h;
            b[i + 7] = (unsigned char)(w >> 8), b[i + 8] = (unsigned char)w;
            return;
        }
    fail_msg("no SOF marker");
}

/* A truncated JPEG is an error naming the file; a small file whose header claims a huge image is
 * refused at once (over 2^30 pixels: from the header; under: at the first missing byte), never
 * decoded for minutes into gigabytes. alarm(): a slow decode fails. */
static void truncated_and_bombs(void **state)
{
    (void)state;
    char path[512];
    unsigned char buf[65536];
    clrun_image img;
    snprintf(path, sizeof path, "%s/jpeg/baseline-420.jpg", TEST_DATA_DIR);
    FILE *f = fopen(path, "rb");
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(n > 1000);
    alarm(30);
    for (size_t cut = n / 3; cut < n - 2; cut += n / 3) { /* inside the scan */
        f = fopen(in_dir("half.jpg"), "wb");
        fwrite(buf, 1, cut, f);
        fclose(f);
        CHECK_FAIL(NULL, clrun_image_read(in_dir("half.jpg"), &img), CLRUN_FORMAT_ERROR, "half.jpg");
        assert_non_null(strstr(clrun_last_error(NULL), "truncated"));
    }
    static const unsigned dims[][2] = {{46000, 46000}, {65500, 16400}, {30000, 30000}, {32768, 32767}};
    for (int d = 0; d < 4; d++) {
        unsigned char bomb[65536];
        memcpy(bomb, buf, n);
        patch_sof(bomb, n, dims[d][0], dims[d][1]);
        f = fopen(in_dir("bomb.jpg"), "wb");
        fwrite(bomb, 1, n, f);
        fclose(f);
        const size_t px = (size_t)dims[d][0] * dims[d][1];
        CHECK_FAIL(NULL, clrun_image_read(in_dir("bomb.jpg"), &img), CLRUN_FORMAT_ERROR, "bomb.jpg");
        if (px > ((size_t)1 << 30)) {
            if (!strstr(clrun_last_error(NULL), "2^30 pixels")) fail_msg("%ux%u: %s", dims[d][0], dims[d][1], clrun_last_error(NULL));
            CHECK_FAIL(NULL, clrun_image_info(in_dir("bomb.jpg"), &img), CLRUN_FORMAT_ERROR, "2^30 pixels");
        }
    }
    alarm(0);
    unlink(in_dir("half.jpg")), unlink(in_dir("bomb.jpg"));
}

/* clrun_image_write: .jpg writes a JPEG (read back close to the original), other formats' names
 * are refused rather than written as PNG. */
static void write_by_extension(void **state)
{
    (void)state;
    clrun_image img, back;
    CHECK_OK(NULL, clrun_image_new(&img, 33, 17, 3));
    for (size_t i = 0; i < 33 * 17 * 3; i++) img.data[i] = (unsigned char)(100 + (i % 3) * 20);
    CHECK_OK(NULL, clrun_image_write(in_dir("w.jpg"), &img));
    unsigned char sig[3] = {0};
    FILE *f = fopen(in_dir("w.jpg"), "rb");
    assert_int_equal(fread(sig, 1, 3, f), 3);
    fclose(f);
    assert_true(sig[0] == 0xFF && sig[1] == 0xD8 && sig[2] == 0xFF);
    CHECK_OK(NULL, clrun_image_read(in_dir("w.jpg"), &back));
    assert_true(back.width == 33 && back.height == 17 && back.channels == 3);
    for (size_t i = 0; i < 33 * 17 * 3; i++) assert_true(abs((int)back.data[i] - (int)img.data[i]) <= 4);
    clrun_image_free(&back);
    static const char *const refused[] = {"w.bmp", "w.tif", "w.webp", "w.TIFF"};
    for (int i = 0; i < 4; i++) {
        CHECK_FAIL(NULL, clrun_image_write(in_dir(refused[i]), &img), CLRUN_INVALID_ARG, "not ");
        assert_int_equal(access(in_dir(refused[i]), F_OK), -1);
    }
    /* a full disk is named as such (libpng's own words would be "Write Error"), for every format */
    static const char *const full[] = {"/dev/full"};
    if (access(full[0], W_OK) == 0) {
        CHECK_FAIL(NULL, clrun_image_write(full[0], &img), CLRUN_IO_ERROR, "No space left on device");
        clrun_image big;
        CHECK_OK(NULL, clrun_image_new(&big, 512, 512, 3)); /* noise: past stdio's buffer, so libpng's own write fails */
        uint64_t r = 12345;
        for (size_t i = 0; i < 512 * 512 * 3; i++) big.data[i] = (unsigned char)rng_next(&r);
        CHECK_FAIL(NULL, clrun_image_write(full[0], &big), CLRUN_IO_ERROR, "No space left on device");
        clrun_image_free(&big);
    }
    clrun_image_free(&img);
    unlink(in_dir("w.jpg"));
}

static void palette_with_transparency(void **state)
{
    (void)state;
    FILE *f = fopen(in_dir("pal.png"), "wb");
    assert_non_null(f);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    assert_true(png && info && !setjmp(png_jmpbuf(png)));
    png_init_io(png, f);
    png_set_IHDR(png, info, 3, 2, 8, PNG_COLOR_TYPE_PALETTE, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_color pal[3] = {{10, 20, 30}, {200, 100, 50}, {0, 255, 0}};
    png_byte alpha[2] = {0, 128};
    png_set_PLTE(png, info, pal, 3);
    png_set_tRNS(png, info, alpha, 2, NULL);
    png_write_info(png, info);
    png_byte r0[3] = {0, 1, 2}, r1[3] = {2, 1, 0};
    png_write_row(png, r0);
    png_write_row(png, r1);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    fclose(f);
    clrun_image img;
    CHECK_OK(NULL, clrun_image_read(in_dir("pal.png"), &img));
    assert_int_equal(img.channels, 3);
    assert_int_equal(img.width, 3);
    const unsigned char want[2][9] = {{10, 20, 30, 200, 100, 50, 0, 255, 0}, {0, 255, 0, 200, 100, 50, 10, 20, 30}};
    for (int y = 0; y < 2; y++) assert_memory_equal(img.data + (size_t)y * img.stride, want[y], 9);
    clrun_image_free(&img);
    unlink(in_dir("pal.png"));
}

static uint32_t crc32_of(const unsigned char *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return ~c;
}

/* A small PNG that says it is 30000 × 30000 RGB (2.7 GB decoded) is refused from its header, at once,
 * before anything is decoded or allocated; so is such a PGM. */
static void huge_headers(void **state)
{
    (void)state;
    clrun_image img, tiny;
    CHECK_OK(NULL, clrun_image_new(&tiny, 1, 1, 3));
    CHECK_OK(NULL, clrun_image_write(in_dir("tiny.png"), &tiny));
    clrun_image_free(&tiny);
    unsigned char buf[4096];
    FILE *f = fopen(in_dir("tiny.png"), "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_memory_equal(buf + 12, "IHDR", 4);
    const uint32_t big = 30000; /* 9·10^8 pixels: under the old 2^31-pixel bound, 2.7 GB decoded in RGB */
    for (int k = 0; k < 2; k++)
        for (int b = 0; b < 4; b++) buf[16 + 4 * k + b] = (unsigned char)(big >> (24 - 8 * b));
    const uint32_t crc = crc32_of(buf + 12, 17);
    for (int b = 0; b < 4; b++) buf[29 + b] = (unsigned char)(crc >> (24 - 8 * b));
    f = fopen(in_dir("huge.png"), "wb");
    assert_non_null(f);
    fwrite(buf, 1, n, f);
    fclose(f);
    const double t0 = (double)clock() / CLOCKS_PER_SEC;
    CHECK_FAIL(NULL, clrun_image_read(in_dir("huge.png"), &img), CLRUN_FORMAT_ERROR, "more than the 2 GiB");
    assert_true((double)clock() / CLOCKS_PER_SEC - t0 < 1.0);
    write_text(in_dir("huge.pgm"), "P6\n30000 30000\n255\n", 0600);
    CHECK_FAIL(NULL, clrun_image_read(in_dir("huge.pgm"), &img), CLRUN_FORMAT_ERROR, "more than the 2 GiB");
    unlink(in_dir("tiny.png")), unlink(in_dir("huge.png")), unlink(in_dir("huge.pgm"));
}

/* A large .npy is mapped, not read: the same values, writes to the array never reach the file; a
 * file with bytes after the data or cut short is refused as before; small files are read. */
static void large_npy_mapped(void **state)
{
    (void)state;
    uint64_t rng = test_seed();
    const size_t n = (3u << 20) / 4 + (size_t)(rng_next(&rng) % 1000);
    clrun_array a, r, small;
    make_array(&a, n, (float)(rng_next(&rng) % 1000));
    const char *path = in_dir("big.npy"), *tail = in_dir("tail.npy"), *cut = in_dir("cut.npy");
    CHECK_OK(NULL, clrun_npy_write(path, &a));
    CHECK_OK(NULL, clrun_npy_read(path, &r));
    assert_non_null(r.map_base);
    assert_true(r.map_len > r.bytes);
    assert_int_equal(r.count, n);
    assert_int_equal((uintptr_t)r.data % 16, 0);
    assert_memory_equal(r.data, a.data, a.bytes);
    ((float *)r.data)[0] = -1, ((float *)r.data)[n - 1] = -2; /* private: the file keeps its values */
    clrun_array_free(&r);
    assert_null(r.data);
    expect_array(path, n, ((float *)a.data)[0]);
    /* the same file with one byte more, and one byte less */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp %s %s && printf x >> %s && head -c -1 %s > %s", path, tail, tail, path, cut);
    assert_int_equal(system(cmd), 0);
    CHECK_FAIL(NULL, clrun_npy_read(tail, &r), CLRUN_FORMAT_ERROR, "bytes after the data");
    CHECK_FAIL(NULL, clrun_npy_read(cut, &r), CLRUN_FORMAT_ERROR, "truncated");
    make_array(&small, 100, 1);
    CHECK_OK(NULL, clrun_npy_write(in_dir("small.npy"), &small));
    CHECK_OK(NULL, clrun_npy_read(in_dir("small.npy"), &r));
    assert_null(r.map_base);
    clrun_array_free(&r);
    clrun_array_free(&small);
    clrun_array_free(&a);
    unlink(path), unlink(tail), unlink(cut), unlink(in_dir("small.npy"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(links_and_modes),
        cmocka_unit_test(planted_links_not_followed),
        cmocka_unit_test(fifos_and_devices),
        cmocka_unit_test(dash_is_stdout),
        cmocka_unit_test(interrupted_write_leaves_nothing),
        cmocka_unit_test(png_written_as_opencv_does),
        cmocka_unit_test(inputs_bounded),
        cmocka_unit_test(palette_with_transparency),
        cmocka_unit_test(jpeg_as_opencv_reads_it),
        cmocka_unit_test(exif_orientation_as_opencv),
        cmocka_unit_test(truncated_and_bombs),
        cmocka_unit_test(write_by_extension),
        cmocka_unit_test(huge_headers),
        cmocka_unit_test(large_npy_mapped),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
