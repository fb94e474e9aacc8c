/* internal.h — shared by the core source files of libclrun (lib/, lib/io/); not installed. The kernel
 * library (lib/ops/) sees only ops/op.h. */
#ifndef CLRUN_INTERNAL_H
#define CLRUN_INTERNAL_H

#include "clrun.h"
#include "opkit.h" /* the services the core gives the kernel library, and the settings */

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#define CLRUN__ERRLEN 8192

struct clrun__pinned {
    void *ptr;
    cl_mem mem;
    size_t bytes;
    struct clrun__pinned *next;
};

/* Library kernels built once per context (program + kernel), keyed by file, options and name. */
struct clrun__kentry {
    char key[256];
    clrun_prog *prog; /* owned when own_prog */
    clrun_kernel *kernel;
    int own_prog;
};

/* A queue of a context (clrun_queue): its own scratch memory, so that ops on two queues never share
 * it. The context's own queue is ctx->own; streams (clrun_queue_new) are listed from ctx->streams. */
struct clrun_queue {
    clrun_ctx *ctx;
    cl_command_queue queue;
    clrun_buf *scratch;       /* the ops' scratch memory on this queue (grows) */
    struct clrun_queue *next; /* the context's next stream */
};

/* A thread's current queue on a context, other than the context's own (clrun_queue_use). Threads are
 * told apart by a serial number of their own, never reused (a pthread_t may be). */
struct clrun__cur {
    uint64_t thread;
    struct clrun_queue *q;
};

struct clrun_ctx {
    clrun_device_info info;
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    struct clrun_queue own;  /* the context's own queue: every thread's current queue unless it chose a stream */
    struct clrun__cur *curs; /* per thread that chose a stream (clrun_queue_use): which one; grows */
    size_t ncur, capcur;
    struct clrun_queue *streams;
    char *err;            /* last error text; grows to hold long build logs */
    int delivering;       /* pipelines' deliver callbacks running now (lib/pipe.c) */
    int close_pending;    /* clrun_close was called from one of them: closed once it returns */
    pthread_mutex_t lock; /* recursive: one thread at a time in the context's calls (CLRUN__SERIAL) */
    size_t err_cap;
    pthread_mutex_t pinned_lock;
    struct clrun__pinned *pinned;
    /* staging area for transfers from ordinary memory (lazy) */
    cl_mem stage_mem[2];
    void *stage_ptr[2];
    size_t stage_bytes;
    struct clrun__kentry *kcache; /* grows: one entry per (source, options, kernel) used */
    int nkcache, capkcache;
    struct clrun__op_slot *op_state; /* per-op state (clrun__op_state), newest first */
    struct clrun__profile *profile;  /* kernel times while profiling (profile.c), else NULL */
};

/* One op's state hanging off a context (clrun__op_state). */
struct clrun__op_slot {
    const void *key;
    void *state;
    void (*release)(clrun_ctx *ctx, void *state);
    struct clrun__op_slot *next;
};

struct clrun_buf {
    clrun_ctx *ctx;
    cl_mem mem;
    size_t bytes;
    uint64_t devaddr;                 /* the device address, once read for a tensor map (lib/ops/gemm/nv/tmap_nv.c); 0 before */
    uint64_t cu_addr;                 /* memory shared with CUDA (lib/cuda.c): its CUDA address; 0: OpenCL's alone */
    int cu_dev;                       /* … the CUDA device's ordinal */
    struct clrun__cu_share *cu_share; /* … the imported cl_mem this one is or is a view of, shared by them */
};

/* An imported allocation shared with CUDA (lib/cuda.c), held by the clrun_buf made on it and by
 * its views: OpenCL holds it acquired (clEnqueueAcquireExternalMemObjectsKHR) from its making until
 * the last of them is freed, when clrun__cu_unshare releases it before OpenCL may destroy it. */
struct clrun__cu_share {
    cl_mem root;
    _Atomic int holders;
};

/* lib/cuda.c: a shared allocation of `bytes` (1: *mem, *addr and *ordinal set; 0: make a plain buffer), from
 * CLRUN__CU_MIN bytes or (force) at any size */
int clrun__cu_alloc(clrun_ctx *ctx, size_t bytes, cl_mem_flags flags, int force, cl_mem *mem, uint64_t *addr, int *ordinal);
/* Unmap and release the shared allocations whose cl_mem OpenCL has destroyed since the last call
 * (lib/cuda.c): at the next shared allocation, and at clrun_close once the OpenCL context is gone. */
void clrun__cu_drain(void);
/* lib/cuda.c: hand `root`, a shared allocation no clrun_buf holds any more, back from OpenCL (the
 * release that ends its acquisition, enqueued on the context's queue) before it is released:
 * NVIDIA's runtime otherwise waits forever in clReleaseContext. */
void clrun__cu_unshare(clrun_ctx *ctx, cl_mem root);

struct clrun_prog {
    clrun_ctx *ctx;
    cl_program program;
    int from_cache;
    char *label;
    char *source;  /* the source as built (includes resolved), for clrun_arg_bytes's size probe; may be NULL */
    char *options; /* the caller's build options; may be NULL */
    char *arginfo; /* from the cache entry: its kernels' argument info (program.c); NULL when built here */
};

/* What clGetKernelArgInfo says of one argument, read once when the kernel is made: from the driver,
 * or from the cache entry where the driver keeps none for programs made from binaries. */
#define CLRUN__ARG_TEXT 128
struct clrun__arginfo {
    cl_kernel_arg_address_qualifier aq;
    cl_kernel_arg_type_qualifier tq;
    char type[CLRUN__ARG_TEXT], name[CLRUN__ARG_TEXT];
};

struct clrun_kernel {
    clrun_prog *prog;
    cl_kernel kernel;
    char *name;
    unsigned nargs;
    unsigned char *set;          /* per argument: 1 once set */
    size_t *size;                /* per argument: its by-value size once known (clrun_arg_bytes), else 0 */
    size_t *local;               /* per argument: the __local bytes given to it (clrun_arg_local), else 0 */
    struct clrun__arginfo *args; /* per argument; NULL when neither the driver nor the cache knows them */
};

struct clrun_event {
    clrun_ctx *ctx;
    cl_event event;
};

/* The calling thread's current queue on ctx (queue.c): &ctx->own unless it chose a stream. */
struct clrun_queue *clrun__cur(clrun_ctx *ctx);
#define clrun__queue(ctx) (clrun__cur(ctx)->queue)

/* Append text to the context's last error (after clrun__fail). */
void clrun__append(clrun_ctx *ctx, const char *text);
/* Map an OpenCL error from an allocation/enqueue to a status. */
clrun_status clrun__cl_status(cl_int err);

/* Device list (device.c). */
clrun_status clrun__device_handles(unsigned index, cl_platform_id *platform, cl_device_id *device);
/* 1 when the device answered its preferred work-group multiple (OpenCL 3.0) or a context learnt it. */
int clrun__device_multiple_known(unsigned index);
void clrun__device_learn_multiple(unsigned index, size_t m);
void clrun__device_list_text(char *buf, size_t size);

/* Programs (program.c / cache.c). */
clrun_status clrun__cache_key(const clrun_ctx *ctx, const char *source, size_t len, const char *options, unsigned char key[16]);
/* The prefix of the (never launched) kernel whose name carries a cached program's key (program.c). */
#define CLRUN__KEY_KERNEL "clrun_key_"
/* Load a cached binary: returns malloc'd bytes or NULL on a miss (any corruption is a miss). */
unsigned char *clrun__cache_load(const unsigned char key[16], size_t *len);
/* Store a binary; failures are silent (the cache is an optimisation). Returns 0 on success. */
int clrun__cache_store(const unsigned char key[16], const unsigned char *bin, size_t len);
/* Remove an entry (after the driver refused it). */
void clrun__cache_remove(const unsigned char key[16]);
/* Around the driver's load of an entry's binary (crash-safe loads, see cache.c): begin returns 0
 * when a load of this entry killed a process before (the entry is then gone: build from source),
 * else 1 or 2 (2: the mark was made); end takes that value and removes the mark. */
int clrun__cache_load_begin(const unsigned char key[16]);
void clrun__cache_load_end(const unsigned char key[16], int begun);
int clrun__verbose(void);

/* "argument I (TYPE NAME) of kernel K" into buf, for messages (kernel.c). */
const char *clrun__arg_desc(clrun_kernel *k, unsigned i, char *buf, size_t size);

/* Profiling (profile.c): record a launch's event under the kernel's name; start from $CLRUN_PROFILE
 * at clrun_open; print (when started from the environment) and free at clrun_close. */
clrun_status clrun__profile_add(clrun_ctx *ctx, const char *kernel, cl_event e);
void clrun__profile_env(clrun_ctx *ctx);
void clrun__profile_close(clrun_ctx *ctx);

/* Embedded kernel sources (generated at build time). */
struct clrun__embedded {
    const char *name;
    const char *data;
    size_t len;
};
extern const struct clrun__embedded clrun__embedded_files[];
extern const size_t clrun__embedded_count;
extern const char *const clrun__embedded_names[]; /* NULL-terminated */

/* ---- kernel sources (source.c) ----------------------------------------------------------------- */

/* A growing string; oom set (and the text kept as it was) when memory ran out. */
struct clrun__sbuf {
    char *p;
    size_t n, cap;
    int oom;
};
void clrun__sb_add(struct clrun__sbuf *b, const char *s, size_t n);
void clrun__sb_printf(struct clrun__sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The embedded source of that base name, or NULL. */
const struct clrun__embedded *clrun__find_embedded(const char *name);
/* How deep CLRUN_KERNEL_DIR's subfolders are searched: lib/ops/gemm/nv/ from lib/ops is 2. */
#define CLRUN__KERNEL_TREE_DEPTH 3
/* The file `name` in folder root, else in its subfolders (depth levels deep, the first found); 1
 * with its path in out when found. */
int clrun__find_in_tree(const char *root, const char *name, int depth, char *out, size_t size);
/* Append text (from label, in folder dir; dir NULL: the embedded set) to out with each #include "x"
 * replaced by the resolved file; with root (CLRUN_KERNEL_DIR), a name not beside the including file
 * is looked for in root's tree. depth: 0 at the top. */
clrun_status clrun__resolve(clrun_ctx *ctx, const char *text, size_t len, const char *label, const char *dir, const char *root, int depth,
                            struct clrun__sbuf *out);

/* Wrap a cl_event into *ev (ev NULL: release it). */
clrun_status clrun__event_wrap(clrun_ctx *ctx, cl_event e, clrun_event **ev);

/* Write an output file safely (io/save.c: links followed, FIFOs and devices written into, a
 * temporary file made with O_EXCL|O_NOFOLLOW and renamed into place, the old mode kept; "-" is
 * stdout). write returns 0, or -1 with errno set, or -2 when it recorded its own error text.
 * Returns 0, or -1 with *err the errno of the first failure (-1 after a writer's -2). */
int clrun__save(const char *path, int (*write)(FILE *f, void *arg), void *arg, int *err);

/* Small helpers. */
char *clrun__strdup(const char *s);
/* The largest kernel source (and included file) and cache entry clrun reads. */
#define CLRUN__SOURCE_MAX ((size_t)16 << 20)
#define CLRUN__CACHE_ENTRY_MAX ((size_t)1 << 30)
int clrun__read_file(const char *path, char **data, size_t *len, size_t max);
/* As clrun__read_file, for a regular file only: a FIFO, a device or a folder there is refused at
 * once (EINVAL, EISDIR) instead of read or waited on; a symbolic link is refused (ELOOP). */
int clrun__read_regular(const char *path, char **data, size_t *len, size_t max);

#endif
