/* op.h — the seam between libclrun's core and its kernel library (lib/ops/); not installed.
 *
 * An op is lib/ops/NAME.c, cl/NAME*.cl, tests/test_NAME.c and tools/clrun's file for it. Its host
 * code includes this header and clrun.h only: it sees handles through the public getters
 * (clrun_ctx_device, clrun_buf_size, ...), never the core's structs, and asks the core for the
 * services below. A launch reads as: pick the kernel, bind its arguments in one typed list that reads
 * like the kernel's signature, launch:
 *
 *     clrun_kernel *k;
 *     if ((st = clrun__lib_kernel(ctx, "vector", opts, "clrun_mul_f32", &k))) return st;
 *     return CLRUN__RUN(k, CLRUN__GRID1(n), ARG_BUF(dst), ARG_U64(off), ARG_F32(alpha), ARG_U64(n));
 *
 * Settings (lib/settings.h) are read through their typed getters, never getenv. */
#ifndef CLRUN_OP_H
#define CLRUN_OP_H

#include "clrun.h"

#include "settings.h"

#include <stdio.h>

/* ---- errors ------------------------------------------------------------------------------------ */

/* Record the context's last error (printf style) and return st. ctx NULL: the thread's record. */
clrun_status clrun__fail(clrun_ctx *ctx, clrun_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* As clrun__fail, naming an OpenCL call and its error: "<what>: <call> failed with CL_...". */
clrun_status clrun__fail_cl(clrun_ctx *ctx, cl_int err, const char *call, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* ---- threads ---------------------------------------------------------------------------------- */

/* The context's lock (recursive), taken for the rest of the enclosing block: every public call that
 * uses a context's shared state (library kernels and their arguments, scratch, staging, the program
 * list, profiling) starts with CLRUN__SERIAL(ctx), so calls on one context from several threads run
 * one after another (clrun.h, "Threads"). ctx may be NULL (no lock). */
clrun_ctx *clrun__ctx_lock(clrun_ctx *ctx);
void clrun__ctx_unlock(clrun_ctx **held);
#define CLRUN__SERIAL(ctx) clrun_ctx *clrun__held_ __attribute__((cleanup(clrun__ctx_unlock), unused)) = clrun__ctx_lock(ctx)

/* ---- per-work-item work ----------------------------------------------------------------------- */

/* The most iterations one work-item of a library kernel makes in a loop that walks data. No kernel
 * may let one work-item walk a range that grows with the input: Mesa's llvmpipe JIT (Rusticl)
 * stops a work-item after 65,535 loop iterations in all, silently, and a GPU's watchdog has its own
 * limit. Shapes that give a work-item a chunk size it from this, not from the device type. */
#define CLRUN__MAX_TRIPS 16384

/* ---- library kernels and scratch -------------------------------------------------------------- */

/* A kernel of the embedded library, built once per context with these options and kept until
 * clrun_close. Borrowed: do not free. */
clrun_status clrun__lib_kernel(clrun_ctx *ctx, const char *file, const char *options, const char *name, clrun_kernel **out);
/* The context's scratch buffer, at least `bytes` long (its contents are not kept when it grows).
 * Borrowed; one op's call owns it from one call to the next. */
clrun_status clrun__scratch(clrun_ctx *ctx, size_t bytes, clrun_buf **out);

/* Tests: the shares of device `dev` of the group fail (-1: none), as a device failing mid-job. */
void clrun__group_fail(clrun_group *g, int dev);

/* CLRUN_OK when count elements of es bytes from element off lie within b; else CLRUN_INVALID_ARG
 * saying "WHAT: elements A..B past NAME's CAP" ("WHAT: NAME is NULL" for a NULL b). */
clrun_status clrun__span(clrun_ctx *ctx, const char *what, const char *name, const clrun_buf *b, size_t off, size_t count, size_t es);

/* A pipeline frees mem (an op's copy of its parameters, its op.arg) when it is freed. */
void clrun__pipe_adopt(clrun_pipe *pp, void *mem);

/* A buffer's device address as an op found it (0 until one stores it): kept in the buffer, for
 * the tensor maps of lib/ops/gemm/nv/tmap_nv.c. */
uint64_t *clrun__buf_devaddr(clrun_buf *b);

/* ---- the CUDA driver beside NVIDIA's OpenCL (lib/cuda.c) -------------------------------------- */

/* What of the CUDA driver (loaded by lib/cuda.c) the kernel library calls itself. */
struct clrun__cu_api {
    int (*set_current)(void *cu_context);
    int (*encode_tiled)(void *map, int dtype, uint32_t rank, void *addr, const uint64_t *dims, const uint64_t *strides, const uint32_t *box,
                        const uint32_t *elem_strides, int interleave, int swizzle, int l2, int oob);
};
/* The driver's entry points and (cu_ctx, when not NULL) the device's primary context, retained
 * until clrun_close, where the context shares memory with CUDA; NULL elsewhere. */
const struct clrun__cu_api *clrun__cu(clrun_ctx *ctx, void **cu_ctx);
/* A buffer of `bytes` shared with CUDA at any size; CLRUN_UNSUPPORTED where the context has none. */
clrun_status clrun__buf_new_cuda(clrun_ctx *ctx, size_t bytes, clrun_buf **out);
/* A buffer's CUDA address where its memory is shared with CUDA (clrun_buf_cuda_address), else 0. */
uint64_t clrun__buf_cuaddr(const clrun_buf *b);
/* 1 where kernels can be launched through the CUDA driver on this context ($CLRUN_CUDA=1). */
int clrun__cu_launchable(clrun_ctx *ctx);

/* Per-op state hanging off the context: the first call with `key` (the address of an object of the
 * op's, which names the slot) allocates `size` zeroed bytes; later calls return the same memory. At
 * clrun_close, release(state) (when not NULL) runs, then the memory is freed. NULL when out of
 * memory (the context's error says so). */
void *clrun__op_state(clrun_ctx *ctx, const void *key, size_t size, void (*release)(clrun_ctx *ctx, void *state));

/* ---- blobs in the persistent cache ----------------------------------------------------------- */

/* What an op made for the context's device and wants to keep across processes (the generated
 * binaries of a library such as VkFFT), in clrun's program cache: keyed by what (a short name),
 * the key bytes, the device, its driver and clrun's version; checked as a program's entry (any
 * corruption is a miss). load: malloc'd bytes, or NULL on a miss or with the cache off; store and
 * remove fail silently (the cache is an optimisation). */
unsigned char *clrun__blob_load(clrun_ctx *ctx, const char *what, const void *key, size_t keylen, size_t *len);
void clrun__blob_store(clrun_ctx *ctx, const char *what, const void *key, size_t keylen, const void *blob, size_t len);
void clrun__blob_remove(clrun_ctx *ctx, const char *what, const void *key, size_t keylen);

/* ---- build hooks ------------------------------------------------------------------------------ */

/* An option of clrun_prog_* that the core keeps from the driver and hands to a hook of the kernel
 * library after the program is built from source: the hook may replace the program (NVIDIA's PTX
 * rewrite, lib/ops/gemm/nv/ptx.c). The option stays in the cache key, so the cache holds what the
 * hook made. The hooks are listed in lib/ops/hooks.c, NULL-terminated. */
typedef struct clrun__build_hook {
    const char *option;
    clrun_status (*after_build)(clrun_ctx *ctx, const char *label, const char *options, cl_program *program);
} clrun__build_hook;
extern const clrun__build_hook *const clrun__build_hooks[];

/* The program's binary for the context's device (malloc'd; NULL, with the context's error, when the
 * driver gives none). */
unsigned char *clrun__program_binary(clrun_ctx *ctx, cl_program program, size_t *len);
/* Append the program's build log for the context's device to the context's last error. */
void clrun__build_log(clrun_ctx *ctx, cl_program program, const char *src, size_t len);
/* log with NVIDIA's "<kernel>:LINE:" named as src's #line directives say (program.c), malloc'd. */
char *clrun__map_kernel_lines(const char *log, const char *src, size_t len);

/* -clrun-ptx-rewrite's rewrite (lib/ops/gemm/nv/ptx.c): "//@@" removed where it starts a line,
 * ".target sm_NN" made "sm_NNa"; malloc'd with its NUL counted in *out_len, NULL when bin is not PTX. */
char *clrun__ptx_rewrite(const unsigned char *bin, size_t len, size_t *out_len);

/* PTX text with its one `.shared` array whose name holds clrun_dyn_smem made dynamic shared memory:
 * `.extern .shared .align A .b8 NAME[];` at module scope, after `.address_size` (lib/cuda.c);
 * %envreg0-5 (the group and global offsets NVIDIA's OpenCL runtime sets) made 0; malloc'd, NULL where
 * the text has no such declaration or reads another environment register. */
char *clrun__ptx_dynamic_smem(const char *ptx, size_t len);

/* ---- typed bind and launch -------------------------------------------------------------------- */

typedef enum clrun__arg_kind {
    CLRUN__A_BUF,
    CLRUN__A_LOCAL,
    CLRUN__A_I32,
    CLRUN__A_U32,
    CLRUN__A_U64,
    CLRUN__A_F32,
    CLRUN__A_F64
} clrun__arg_kind;

/* One kernel argument: its kind and value. Build them with the ARG_* macros. */
typedef struct clrun__arg {
    clrun__arg_kind kind;
    union {
        clrun_buf *buf;
        size_t local; /* bytes of __local memory */
        int32_t i32;
        uint32_t u32;
        uint64_t u64;
        float f32;
        double f64;
    } v;
} clrun__arg;

/* Short names on purpose: they appear only in lib/ops/, where they make an argument list read like the
 * kernel's signature. */
#define ARG_BUF(x) ((clrun__arg){CLRUN__A_BUF, {.buf = (x)}})
#define ARG_LOCAL(bytes) ((clrun__arg){CLRUN__A_LOCAL, {.local = (bytes)}})
#define ARG_I32(x) ((clrun__arg){CLRUN__A_I32, {.i32 = (int32_t)(x)}})
#define ARG_U32(x) ((clrun__arg){CLRUN__A_U32, {.u32 = (uint32_t)(x)}})
#define ARG_U64(x) ((clrun__arg){CLRUN__A_U64, {.u64 = (uint64_t)(x)}})
#define ARG_F32(x) ((clrun__arg){CLRUN__A_F32, {.f32 = (float)(x)}})
#define ARG_F64(x) ((clrun__arg){CLRUN__A_F64, {.f64 = (double)(x)}})

/* Launch geometry: dims (1-3), global size per dimension, local size per dimension or all 0 to let
 * clrun choose (clrun_launch's rules). */
typedef struct clrun__grid {
    unsigned dims;
    size_t global[3], local[3];
} clrun__grid;

#define CLRUN__GRID1(n) ((clrun__grid){1, {(n), 1, 1}, {0, 0, 0}})

/* Bind args[0 .. n) to the kernel's arguments 0 .. n-1, each checked as clrun_arg_* checks it; n
 * must be the kernel's argument count (CLRUN_ARG_MISMATCH otherwise: an argument list that no longer
 * reads like the signature is a bug). */
clrun_status clrun__bind(clrun_kernel *k, const clrun__arg *args, size_t n);
/* Bind, then launch over g. */
clrun_status clrun__launch(clrun_kernel *k, clrun__grid g, const clrun__arg *args, size_t n);

#define CLRUN__ARGS(...) (const clrun__arg[]){__VA_ARGS__}, sizeof((const clrun__arg[]){__VA_ARGS__}) / sizeof(clrun__arg)
/* CLRUN__RUN(k, grid, ARG_..., ...): bind the list and launch, one call. */
#define CLRUN__RUN(k, grid, ...) clrun__launch((k), (grid), CLRUN__ARGS(__VA_ARGS__))
/* Launch k through the CUDA driver instead of OpenCL (lib/cuda.c), in order with the context's
 * current queue: its program's PTX with the __local array named clrun_dyn_smem made dynamic shared
 * memory of dyn bytes (up to 227 KiB on Hopper). Every buffer argument must be shared with CUDA. The
 * grid as OpenCL's: global sizes multiples of the local ones. */
clrun_status clrun__launch_cuda(clrun_kernel *k, clrun__grid g, size_t dyn, const clrun__arg *args, size_t n);
#define CLRUN__RUN_CUDA(k, grid, dyn, ...) clrun__launch_cuda((k), (grid), (dyn), CLRUN__ARGS(__VA_ARGS__))
/* CLRUN__BIND(k, ARG_..., ...): bind only (kernels launched more than once with one list). */
#define CLRUN__BIND(k, ...) clrun__bind((k), CLRUN__ARGS(__VA_ARGS__))

/* ---- element types ---------------------------------------------------------------------------- */

/* The kernels' code for an element type of A/B in GEMM, gradients and casts (-DABT, the amp type
 * bits): f32 0, f16 1, bf16 2; -1 for any other type. */
static inline int clrun__float_code(clrun_dtype t) { return t == CLRUN_F32 ? 0 : t == CLRUN_F16 ? 1 : t == CLRUN_BF16 ? 2 : -1; }

/* ---- ops reached by tests ----------------------------------------------------------------------- */

/* Runs the Canny hysteresis of the device's shape (CLRUN_CANNY_SHAPE overrides it) on a W×H map of
 * 0, 1 (weak) and 2 (strong) bytes, rows packed; dst gets the edges (255 or 0). */
clrun_status clrun__canny_map(clrun_ctx *ctx, clrun_buf *map, int W, int H, clrun_buf *dst);

#endif
