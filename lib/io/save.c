/* save.c — writing an output file without losing or exposing anything (npy, images, the cache).
 *
 *  - "-" is standard output.
 *  - A symbolic link is followed to the file it names (which is written, the link kept).
 *  - An existing file that is not a regular file (a FIFO, /dev/null, a terminal) is written
 *    directly: it is never replaced by a regular file.
 *  - Otherwise the bytes go to a new file without a name in the destination's folder (O_TMPFILE),
 *    with the mode of the file it replaces (a new file: 0666 less the umask). When complete it is
 *    linked in as the destination itself when none exists (linkat: atomic, no other name ever), else
 *    under a temporary name renamed over the destination at once: readers see the old file or the
 *    new one, never half of one, and a failure leaves the destination as it was. A process that
 *    dies while writing leaves nothing behind: the file has no name to leave until the last step.
 *  - Where the file system has no O_TMPFILE, the bytes go to a named temporary file (created with
 *    O_CREAT|O_EXCL|O_NOFOLLOW under a name no other process can have made for us to follow) that
 *    is renamed over the destination.
 *  - The error is the one that happened (ENOSPC on a full disk, not a later one).
 *  - Temporary names are listed before they can exist, so that clrun_file_abort_writes, called from
 *    a signal handler (Ctrl-C) in any thread, removes them; a write that has begun to give its file
 *    a name is waited for (briefly), and a write that has not yet begun sees the abort and gives
 *    its file no name at all. */
#include "../internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* target: path with its symbolic links followed (at most 40); a link to nothing names the file the
 * write creates. */
static int follow(const char *path, char *target, size_t size)
{
    char link[PATH_MAX], next[PATH_MAX * 2];
    if ((size_t)snprintf(target, size, "%s", path) >= size) return (errno = ENAMETOOLONG), -1;
    for (int hops = 0; hops < 40; hops++) {
        struct stat sb;
        if (lstat(target, &sb) != 0 || !S_ISLNK(sb.st_mode)) return 0;
        ssize_t n = readlink(target, link, sizeof link - 1);
        if (n < 0) return -1;
        link[n] = 0;
        const char *slash = strrchr(target, '/');
        if (link[0] == '/' || !slash) snprintf(next, sizeof next, "%s", link);
        else snprintf(next, sizeof next, "%.*s/%s", (int)(slash - target), target, link);
        if ((size_t)snprintf(target, size, "%s", next) >= size) return (errno = ENAMETOOLONG), -1;
    }
    return (errno = ELOOP), -1;
}

/* Write through f with the writer; flush; the errno of the first failure, 0 when all went well, or
 * -1 when the writer failed and recorded its own reason. */
static int run_writer(FILE *f, int (*write)(FILE *f, void *arg), void *arg)
{
    errno = 0;
    int r = write(f, arg);
    if (r == -2) return -1;
    if (r != 0) return errno ? errno : EIO;
    if (fflush(f) != 0) return errno ? errno : EIO;
    return 0;
}

/* Writes in progress: their temporary files' paths, for clrun_file_abort_writes. A slot is claimed
 * (0 -> 1) and filled, then published (1 -> 2); LINKING (3) while an unnamed file is being given
 * its names (link, rename); the handler reads only published slots. abort_gen counts the aborts: a
 * write that sees it change before it links gives its file no name. */
#define SLOTS 256
enum { SLOT_FREE, SLOT_CLAIMED, SLOT_PUBLISHED, SLOT_LINKING };
static char slot_path[SLOTS][PATH_MAX + 96];
static _Atomic int slot_state[SLOTS];
static _Atomic unsigned abort_gen;

static int slot_claim(const char *tmp)
{
    for (int i = 0; i < SLOTS; i++) {
        int free_ = 0;
        if (atomic_compare_exchange_strong(&slot_state[i], &free_, 1)) {
            snprintf(slot_path[i], sizeof slot_path[i], "%s", tmp);
            atomic_store(&slot_state[i], 2);
            return i;
        }
    }
    return -1; /* more writes at once than slots: this one is not listed */
}

static void slot_release(int i)
{
    if (i >= 0) atomic_store(&slot_state[i], 0);
}

void clrun_file_abort_writes(void)
{
    atomic_fetch_add(&abort_gen, 1); /* writes not yet linking now give their files no name */
    for (int i = 0; i < SLOTS; i++) {
        /* a write giving its file its names finishes them within microseconds; wait up to 200 ms
         * (this thread may be the one that was linking: then the wait ends and its names go) */
        for (int w = 0; w < 200 && atomic_load(&slot_state[i]) == SLOT_LINKING; w++) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL); /* async-signal-safe */
        }
        const int st = atomic_load(&slot_state[i]);
        if (st == SLOT_PUBLISHED || st == SLOT_LINKING) unlink(slot_path[i]); /* unlink is async-signal-safe */
    }
}

/* fd as a stream for writing, with the mode and (where we may) the owner of the file it replaces
 * (was: NULL when none); NULL, fd closed and *e set, when it cannot be. */
static FILE *stream_for(int fd, const struct stat *was, int *e)
{
    if (was) {
        (void)fchmod(fd, was->st_mode & 07777);
        if (geteuid() == 0) (void)!fchown(fd, was->st_uid, was->st_gid);
    }
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        *e = errno;
        close(fd);
    }
    return f;
}

/* The unnamed file fd, complete, becomes target: linked in directly when no file is there, else
 * linked under a temporary name in the folder and renamed over it. Returns 0 or the errno; an abort
 * seen before the first link gives the file no name (ECANCELED). */
static int link_in(int fd, const char *target, const char *dir, int dlen, const char *base, int root, unsigned gen)
{
    static _Atomic unsigned counter;
    char proc[64], tmp[PATH_MAX + 96];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    int slot = -1, e = 0;
    for (int attempt = 0; attempt < 100; attempt++) {
        const unsigned r = counter++ * 2654435761u ^ (unsigned)getpid() ^ (unsigned)clock();
        snprintf(tmp, sizeof tmp, "%.*s/.%s.%08x.tmp", root ? 0 : dlen, dir, base, r);
        slot = slot_claim(tmp);
        if (slot >= 0) atomic_store(&slot_state[slot], SLOT_LINKING);
        if (atomic_load(&abort_gen) != gen) {
            e = ECANCELED;
            break;
        }
        if (attempt == 0 && linkat(AT_FDCWD, proc, AT_FDCWD, target, AT_SYMLINK_FOLLOW) == 0) break; /* a new file: done */
        if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0) {
            if (rename(tmp, target) != 0) {
                e = errno;
                unlink(tmp);
            }
            break;
        }
        e = errno;
        slot_release(slot), slot = -1;
        if (e != EEXIST) break;
        e = 0;
    }
    slot_release(slot);
    return e;
}

int clrun__save(const char *path, int (*write)(FILE *f, void *arg), void *arg, int *err)
{
    static _Atomic unsigned counter;
    char target[PATH_MAX], tmp[PATH_MAX + 96];
    struct stat sb;
    int e = 0, fd = -1;
    *err = 0;
    if (strcmp(path, "-") == 0) return (*err = run_writer(stdout, write, arg)) ? -1 : 0;
    if (follow(path, target, sizeof target) != 0) return (*err = errno), -1;
    const int have = stat(target, &sb) == 0;
    if (have && S_ISDIR(sb.st_mode)) return (*err = EISDIR), -1;
    if (have && !S_ISREG(sb.st_mode)) { /* a FIFO, a device: write into it */
        if ((fd = open(target, O_WRONLY | O_CLOEXEC)) < 0) return (*err = errno), -1;
        FILE *f = stream_for(fd, NULL, &e);
        if (!f) return (*err = e), -1;
        e = run_writer(f, write, arg);
        if (fclose(f) != 0 && !e) e = errno;
        return (*err = e) ? -1 : 0;
    }
    const char *slash = strrchr(target, '/');
    const int dlen = slash ? (int)(slash - target) : 1;
    const char *dir = slash ? target : ".", *base = slash ? slash + 1 : target;
    if (slash == target) dir = "/", base = target + 1;
    const unsigned gen = atomic_load(&abort_gen);
    /* first a file with no name: nothing to clean up whenever the process ends */
    char dirpath[PATH_MAX];
    snprintf(dirpath, sizeof dirpath, "%.*s", slash == target ? 1 : slash ? dlen : 1, slash ? dir : ".");
    fd = open(dirpath, O_TMPFILE | O_WRONLY | O_CLOEXEC, have ? 0600 : 0666);
    if (fd >= 0) {
        FILE *f = stream_for(fd, have ? &sb : NULL, &e);
        if (!f) return (*err = e), -1;
        e = run_writer(f, write, arg);
        if (!e && fflush(f) != 0) e = errno ? errno : EIO;
        if (!e) e = link_in(fileno(f), target, dir, dlen, base, slash == target, gen);
        if (fclose(f) != 0 && !e) e = errno ? errno : EIO;
        return (*err = e) ? -1 : 0;
    }
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL && errno != ENOENT) return (*err = errno), -1;
    fd = -1;
    /* the temporary's name is listed before the file exists, so an interrupt at any moment finds
     * it (unlinking a name not made yet is harmless); a name taken by another file is unlisted
     * before the next is tried */
    int slot = -1;
    for (int attempt = 0; fd < 0 && attempt < 100; attempt++) {
        const unsigned r = counter++ * 2654435761u ^ (unsigned)getpid() ^ (unsigned)clock();
        snprintf(tmp, sizeof tmp, "%.*s/.%s.%08x.tmp", slash == target ? 0 : dlen, dir, base, r);
        slot = slot_claim(tmp);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, have ? 0600 : 0666);
        if (fd < 0) {
            e = errno;
            slot_release(slot), slot = -1;
            if (e != EEXIST) return (*err = e), -1;
        }
    }
    if (fd < 0) return (*err = EEXIST), -1;
    FILE *f = stream_for(fd, have ? &sb : NULL, &e);
    if (f) {
        e = run_writer(f, write, arg);
        if (fclose(f) != 0 && !e) e = errno ? errno : EIO;
        if (!e && rename(tmp, target) != 0) e = errno;
    }
    if (e) unlink(tmp);
    slot_release(slot);
    return (*err = e) ? -1 : 0;
}

struct bytes_out {
    const void *data;
    size_t bytes;
};

static int write_bytes(FILE *f, void *arg)
{
    const struct bytes_out *o = arg;
    return o->bytes == 0 || fwrite(o->data, 1, o->bytes, f) == o->bytes ? 0 : -1;
}

clrun_status clrun_file_write(const char *path, const void *data, size_t bytes)
{
    int err;
    if (!path || (bytes && !data)) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_file_write: NULL argument");
    struct bytes_out o = {data, bytes};
    if (clrun__save(path, write_bytes, &o, &err) != 0) return clrun__fail(NULL, CLRUN_IO_ERROR, "cannot write %s: %s", path, strerror(err));
    return CLRUN_OK;
}
