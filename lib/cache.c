/* cache.c — the on-disk program binary cache.
 *
 * Entry file <dir>/<32 hex digits of the key>.bin:
 *   8 bytes magic "CLRUNC1\0", 16 bytes key, 8 bytes payload length (little-endian),
 *   8 bytes XXH3-64 of the payload, the payload (the driver's program binary).
 * Anything that does not check out is a miss; the caller rebuilds and the store replaces the entry.
 * Stores write a temporary file in the same folder and rename it into place, so readers see either
 * no entry or a whole one, and several processes may fill one folder at once.
 *
 * Loads are crash-safe: while the driver takes an entry's binary, <entry>.loading holds the loading
 * process's id. Found naming a process that no longer runs, it means that load killed the process
 * (a driver that crashes on a binary, its own or one made to crash it): the entry is dropped and the
 * program built from source, so one crash does not become a crash on every run. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#define MAGIC "CLRUNC1"
#define HEADER 40

const char *clrun_cache_dir(char *buf, size_t size)
{
    if (clrun__setting_on(CLRUN__SET_NO_CACHE)) return NULL;
    const char *d = clrun__setting_text(CLRUN__SET_CACHE_DIR);
    int n;
    if (d && *d) n = snprintf(buf, size, "%s", d);
    else if ((d = getenv("XDG_CACHE_HOME")) && *d) n = snprintf(buf, size, "%s/clrun", d);
    else if ((d = getenv("HOME")) && *d) n = snprintf(buf, size, "%s/.cache/clrun", d);
    else return NULL;
    if (n < 0 || (size_t)n >= size) return NULL;
    return buf;
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static int entry_path(const unsigned char key[16], char *buf, size_t size)
{
    char dir[4096];
    if (!clrun_cache_dir(dir, sizeof dir)) return -1;
    char hex[33];
    for (int i = 0; i < 16; i++) snprintf(hex + 2 * i, 3, "%02x", key[i]);
    int n = snprintf(buf, size, "%s/%s.bin", dir, hex);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

static void hash_part(XXH3_state_t *s, const void *p, size_t n)
{
    uint64_t len = n;
    XXH3_128bits_update(s, &len, sizeof len); /* length-prefixed, so parts cannot run together */
    XXH3_128bits_update(s, p, n);
}

clrun_status clrun__cache_key(const clrun_ctx *ctx, const char *source, size_t len, const char *options, unsigned char key[16])
{
    XXH3_state_t *s = XXH3_createState();
    if (!s) return CLRUN_HOST_OUT_OF_MEMORY;
    XXH3_128bits_reset(s);
    const clrun_device_info *in = &ctx->info;
    const char *parts[] = {options ? options : "", in->platform_name,   in->platform_version, in->name, in->version,
                           in->driver_version,     CLRUN_VERSION_STRING};
    hash_part(s, source, len);
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) hash_part(s, parts[i], strlen(parts[i]));
    XXH128_hash_t h = XXH3_128bits_digest(s);
    XXH3_freeState(s);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    memcpy(key, c.digest, 16);
    return CLRUN_OK;
}

unsigned char *clrun__cache_load(const unsigned char key[16], size_t *len)
{
    char path[4200];
    char *data = NULL;
    size_t n = 0;
    if (entry_path(key, path, sizeof path)) return NULL;
    int rc = clrun__read_regular(path, &data, &n, CLRUN__CACHE_ENTRY_MAX);
    if (rc) {
        if (clrun__verbose()) fprintf(stderr, "clrun: cache miss: %s: %s\n", path, strerror(rc));
        return NULL;
    }
    const unsigned char *u = (const unsigned char *)data;
    if (n < HEADER || memcmp(u, MAGIC, 8) != 0 || memcmp(u + 8, key, 16) != 0 || get64(u + 24) != n - HEADER ||
        get64(u + 32) != XXH3_64bits(u + HEADER, n - HEADER) || n == HEADER) {
        if (clrun__verbose()) fprintf(stderr, "clrun: cache entry %s is corrupt; rebuilding\n", path);
        free(data);
        return NULL;
    }
    memmove(data, data + HEADER, n - HEADER);
    *len = n - HEADER;
    return (unsigned char *)data;
}

static int mkdirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        int rc = mkdir(path, 0755);
        *p = '/';
        if (rc && errno != EEXIST) return -1;
    }
    return mkdir(path, 0755) && errno != EEXIST ? -1 : 0;
}

struct entry_out {
    const unsigned char *head, *bin;
    size_t len;
};

static int write_entry(FILE *f, void *arg)
{
    const struct entry_out *o = arg;
    return fwrite(o->head, 1, HEADER, f) == HEADER && fwrite(o->bin, 1, o->len, f) == o->len ? 0 : -1;
}

int clrun__cache_store(const unsigned char key[16], const unsigned char *bin, size_t len)
{
    char dir[4096], path[4200];
    unsigned char head[HEADER];
    int err;
    struct stat sb;
    if (!clrun_cache_dir(dir, sizeof dir) || entry_path(key, path, sizeof path)) return -1;
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) { /* a FIFO, a folder, a link: not an entry of ours; left alone */
        if (clrun__verbose()) fprintf(stderr, "clrun: %s is not a regular file; the binary is not cached\n", path);
        return -1;
    }
    if (mkdirs(dir)) {
        if (clrun__verbose()) fprintf(stderr, "clrun: cannot create cache folder %s: %s\n", dir, strerror(errno));
        return -1;
    }
    memcpy(head, MAGIC, 8);
    memcpy(head + 8, key, 16);
    put64(head + 24, len);
    put64(head + 32, XXH3_64bits(bin, len));
    struct entry_out o = {head, bin, len};
    if (clrun__save(path, write_entry, &o, &err) != 0) {
        if (clrun__verbose()) fprintf(stderr, "clrun: cannot write cache entry %s: %s\n", path, strerror(err));
        return -1;
    }
    return 0;
}

int clrun__cache_load_begin(const unsigned char key[16])
{
    char path[4200], mark[4300], tmp[4400], text[32];
    struct stat before, after;
    if (entry_path(key, path, sizeof path)) return 1;
    snprintf(mark, sizeof mark, "%s.loading", path);
    /* O_NONBLOCK: a FIFO planted there must not hang the load; only a regular file is a mark */
    int fd = open(mark, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno != ENOENT) { /* a link, or unreadable: not a mark of ours; load without one */
        if (clrun__verbose())
            fprintf(stderr, "clrun: %s is not a load mark clrun can read (%s); loading without one\n", mark, strerror(errno));
        return 1;
    }
    if (fd >= 0) {
        if (fstat(fd, &before) != 0 || !S_ISREG(before.st_mode)) {
            close(fd);
            if (clrun__verbose()) fprintf(stderr, "clrun: %s is not a regular file; loading without a load mark\n", mark);
            return 1;
        }
        const ssize_t n = read(fd, text, sizeof text - 1);
        close(fd);
        text[n > 0 ? n : 0] = 0;
        const long pid = strtol(text, NULL, 10);
        if (pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM)) return 1; /* another process is loading it now */
        /* its process is gone: a crash if the mark is still the one it made (a loader that finished
         * removed its mark before it exited) */
        if (lstat(mark, &after) != 0 || after.st_ino != before.st_ino || after.st_dev != before.st_dev) return 1;
        if (clrun__verbose())
            fprintf(stderr, "clrun: cache entry %s was being loaded when its process died; dropping it and building from source\n", path);
        unlink(path);
        unlink(mark);
        return 0;
    }
    /* the mark appears whole (link), so a reader never sees it without its pid; the temporary is made
     * new (O_EXCL), never opened through a name planted there (a link to another file) */
    const long me = (long)getpid();
    snprintf(tmp, sizeof tmp, "%s.loading.%ld", path, me);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST && unlink(tmp) == 0) /* left by a process of our id that died: its name only is removed */
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return 1; /* a read-only cache: load without the mark */
    const int len = snprintf(text, sizeof text, "%ld\n", me);
    const int ok = write(fd, text, (size_t)len) == len;
    close(fd);
    const int linked = ok && link(tmp, mark) == 0;
    unlink(tmp);
    return linked ? 2 : 1;
}

void clrun__cache_load_end(const unsigned char key[16], int begun)
{
    char path[4200], mark[4300];
    if (begun != 2 || entry_path(key, path, sizeof path)) return;
    snprintf(mark, sizeof mark, "%s.loading", path);
    unlink(mark);
}

void clrun__cache_remove(const unsigned char key[16])
{
    char path[4200];
    if (entry_path(key, path, sizeof path) == 0) unlink(path);
}

/* ---- blobs of the kernel library (opkit.h) ---------------------------------------------------- */

static int blob_key(clrun_ctx *ctx, const char *what, const void *key, size_t keylen, unsigned char k[16])
{
    char opts[128];
    snprintf(opts, sizeof opts, "-clrun-blob=%s", what);
    return ctx && clrun__cache_key(ctx, (const char *)key, keylen, opts, k) == CLRUN_OK ? 0 : -1;
}

unsigned char *clrun__blob_load(clrun_ctx *ctx, const char *what, const void *key, size_t keylen, size_t *len)
{
    unsigned char k[16];
    return blob_key(ctx, what, key, keylen, k) ? NULL : clrun__cache_load(k, len);
}

void clrun__blob_store(clrun_ctx *ctx, const char *what, const void *key, size_t keylen, const void *blob, size_t len)
{
    unsigned char k[16];
    if (!blob_key(ctx, what, key, keylen, k)) (void)clrun__cache_store(k, (const unsigned char *)blob, len);
}

void clrun__blob_remove(clrun_ctx *ctx, const char *what, const void *key, size_t keylen)
{
    unsigned char k[16];
    if (!blob_key(ctx, what, key, keylen, k)) clrun__cache_remove(k);
}
