/* internal.h — shared by libclrun's source files; not installed. */
#ifndef CLRUN_INTERNAL_H
#define CLRUN_INTERNAL_H

#include "clrun.h"

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

struct clrun_ctx {
    clrun_device_info info;
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    char *err; /* last error text; grows to hold long build logs */
    size_t err_cap;
    pthread_mutex_t pinned_lock;
    struct clrun__pinned *pinned;
    /* staging area for transfers from ordinary memory (lazy) */
    cl_mem stage_mem[2];
    void *stage_ptr[2];
    size_t stage_bytes;
    struct clrun__kentry *kcache; /* grows: one entry per (source, options, kernel) used */
    int nkcache, capkcache;
    clrun_buf *scratch; /* partial results of reductions (grows) */
    int gemm_tuned;     /* 0 not read yet, 1 read (found or not) */
    unsigned gemm_params[4][7]; /* GPU kernel tiles per class (small, large, small-fast, large-fast) from the tuning file; [0] == 0: none */
    int gemm_backend[4];        /* backend per class from the tuning file; 0 (auto): none */
    unsigned gemm_vw;                      /* CPU kernel's vector width (0: not asked yet) */
    int gemm_tensor;                       /* tensor-core GEMM: 0 not probed yet, 1 works, -1 not here */
    struct clrun__profile *profile;        /* kernel times while profiling (profile.c), else NULL */
};

struct clrun_buf {
    clrun_ctx *ctx;
    cl_mem mem;
    size_t bytes;
};

struct clrun_prog {
    clrun_ctx *ctx;
    cl_program program;
    int from_cache;
    char *label;
};

struct clrun_kernel {
    clrun_prog *prog;
    cl_kernel kernel;
    char *name;
    unsigned nargs;
    unsigned char *set;     /* per argument: 1 once set */
    int have_arg_info;
};

struct clrun_event {
    clrun_ctx *ctx;
    cl_event event;
};

/* Record the context's last error (printf style) and return st. ctx NULL: the thread's record. */
clrun_status clrun__fail(clrun_ctx *ctx, clrun_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* As clrun__fail, naming an OpenCL call and its error: "<what>: <call> failed with CL_...". */
clrun_status clrun__fail_cl(clrun_ctx *ctx, cl_int err, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Append text to the context's last error (after clrun__fail). */
void clrun__append(clrun_ctx *ctx, const char *text);
/* Map an OpenCL error from an allocation/enqueue to a status. */
clrun_status clrun__cl_status(cl_int err);

/* Device list (device.c). */
clrun_status clrun__device_handles(unsigned index, cl_platform_id *platform, cl_device_id *device);
void clrun__device_list_text(char *buf, size_t size);

/* Programs (program.c / cache.c). */
clrun_status clrun__cache_key(const clrun_ctx *ctx, const char *source, size_t len,
                              const char *options, unsigned char key[16]);
/* Load a cached binary: returns malloc'd bytes or NULL on a miss (any corruption is a miss). */
unsigned char *clrun__cache_load(const unsigned char key[16], size_t *len);
/* Store a binary; failures are silent (the cache is an optimisation). Returns 0 on success. */
int clrun__cache_store(const unsigned char key[16], const unsigned char *bin, size_t len);
/* Remove an entry (after the driver refused it). */
void clrun__cache_remove(const unsigned char key[16]);
int clrun__verbose(void);

/* A kernel of the embedded library, built once per context with these options and kept until
 * clrun_close. Borrowed: do not free. */
clrun_status clrun__lib_kernel(clrun_ctx *ctx, const char *file, const char *options, const char *name,
                               clrun_kernel **out);
/* The context's scratch buffer, at least `bytes` long. Borrowed. */
clrun_status clrun__scratch(clrun_ctx *ctx, size_t bytes, clrun_buf **out);
/* Profiling (profile.c): record a launch's event under the kernel's name; start from $CLRUN_PROFILE
 * at clrun_open; print (when started from the environment) and free at clrun_close. */
clrun_status clrun__profile_add(clrun_ctx *ctx, const char *kernel, cl_event e);
void clrun__profile_env(clrun_ctx *ctx);
void clrun__profile_close(clrun_ctx *ctx);

/* Tests: runs the Canny hysteresis of the device's shape (CLRUN_CANNY_SHAPE overrides it) on a W×H
 * map of 0, 1 (weak) and 2 (strong) bytes, rows packed; dst gets the edges (255 or 0). */
clrun_status clrun__canny_map(clrun_ctx *ctx, clrun_buf *map, int W, int H, clrun_buf *dst);

/* Embedded kernel sources (generated at build time). */
struct clrun__embedded {
    const char *name;
    const char *data;
    size_t len;
};
extern const struct clrun__embedded clrun__embedded_files[];
extern const size_t clrun__embedded_count;
extern const char *const clrun__embedded_names[]; /* NULL-terminated */

/* Wrap a cl_event into *ev (ev NULL: release it). */
clrun_status clrun__event_wrap(clrun_ctx *ctx, cl_event e, clrun_event **ev);

/* Bytes per element of a clrun_cast_type (f32 4; f16, bf16 2). */
static inline size_t clrun__cast_size(clrun_cast_type t) { return t == CLRUN_CAST_F32 ? 4 : 2; }

/* Small helpers. */
char *clrun__strdup(const char *s);
int clrun__read_file(const char *path, char **data, size_t *len);

#endif
