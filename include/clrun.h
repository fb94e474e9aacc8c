/** @file clrun.h
 * clrun.h — the whole public API of libclrun, a vendor-neutral OpenCL compute runtime.
 *
 * Reading guide
 * -------------
 *  - Every fallible call returns a clrun_status; CLRUN_OK (0) is success. Results come back through
 *    pointer arguments, which are left untouched (or set to NULL for handles) on failure.
 *  - clrun_status_str(st) names a code. clrun_last_error(ctx) is the full text of the last failure of
 *    a context: what failed, the OpenCL error name and, for build failures, the file, the options and
 *    the whole build log. Calls that have no context (device discovery, clrun_open) record their
 *    text per thread; read it with clrun_last_error(NULL).
 *  - A failed call leaves nothing half done: no partial object is returned and nothing leaks.
 *  - Handles are opaque: clrun_ctx, clrun_buf, clrun_prog, clrun_kernel, clrun_event. Each comment
 *    says who owns what and which call frees it. Free functions accept NULL.
 *  - A NULL handle or a NULL output pointer is refused everywhere: CLRUN_INVALID_ARG naming the
 *    argument (getters return NULL or 0, clrun_event_ms -1; tests/test_nulls.c calls every function
 *    so). A handle used after its free or close is the program's error, as with free(): the Python
 *    package turns every such use into clrun.InvalidArgument.
 *  - The current queue is per thread (clrun_queue_use); see "Streams".
 *
 * Threading
 * ---------
 *  - The process-wide device list is built once, on first use, under a lock; the device calls are
 *    safe from any thread.
 *  - A clrun_ctx may be shared by several threads: every call that uses the context's shared state
 *    (its queue's staging, the library's kernels and their arguments, scratch memory, the program
 *    list, profiling) takes the context's lock (recursive), so calls on one context from several
 *    threads at once run one after another and every result is what one thread alone would get
 *    (tests/test_threads.c). For parallel work give each thread its own context: contexts are
 *    independent. clrun_last_error(ctx) is the context's newest failure, from whichever thread; with
 *    several threads on one context, read it under a lock of your own or use a context per thread.
 *  - A clrun_kernel holds argument state: setting arguments of one kernel from two threads races
 *    (as OpenCL's own cl_kernel). Make a kernel per thread (clrun_kernel_new is cheap), or serialise.
 *  - Closing a context, or freeing an object, while another thread uses it is the caller's error.
 *  - Each thread has its own current queue on a context (clrun_queue_use): a stream one thread
 *    chooses never receives another thread's calls.
 *  - Pipelines (clrun_pipe) and groups (clrun_group) are driven by one thread at a time (below).
 *
 * Raw OpenCL stays reachable through clrun_ctx_cl_context(), clrun_ctx_cl_queue(),
 * clrun_buf_cl_mem() and friends, so clrun can be mixed with hand-written OpenCL or CLBlast.
 */
#ifndef CLRUN_H
#define CLRUN_H

#ifndef CL_TARGET_OPENCL_VERSION
/** The OpenCL API version the header targets (1.2) unless the includer sets another. */
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Marks every public declaration. libclrun is built with hidden visibility: what this header does not
 * declare with CLRUN_API (the clrun__ internals) is not exported from the shared library. */
#if defined(_WIN32) && defined(CLRUN_BUILDING_DLL)
#define CLRUN_API __declspec(dllexport)
#elif defined(__GNUC__) && __GNUC__ >= 4
#define CLRUN_API __attribute__((visibility("default")))
#else
#define CLRUN_API
#endif

/** The version of this header; clrun_version() gives the library's. */
/** @{ */
#define CLRUN_VERSION_MAJOR 0
#define CLRUN_VERSION_MINOR 1
#define CLRUN_VERSION_PATCH 0
#define CLRUN_VERSION_STRING "0.1.0"
/** @} */

/** The library's version string ("MAJOR.MINOR.PATCH"); may differ from the header's if mismatched. */
CLRUN_API const char *clrun_version(void);

/* ------------------------------------------------------------------------------------------------
 * Status codes
 * ----------------------------------------------------------------------------------------------*/

/** X(NAME, value, short description). The one table from which the enum and clrun_status_str come. */
#define CLRUN_STATUS_MAP(X)                            \
    X(OK, 0, "success")                                \
    X(INVALID_ARG, 1, "invalid argument")              \
    X(NO_PLATFORM, 2, "no OpenCL platform found")      \
    X(NO_DEVICE, 3, "no OpenCL device matches")        \
    X(HOST_OUT_OF_MEMORY, 4, "out of host memory")     \
    X(DEVICE_OUT_OF_MEMORY, 5, "out of device memory") \
    X(BUILD_FAILED, 6, "kernel build failed")          \
    X(IO_ERROR, 7, "file input/output error")          \
    X(NOT_FOUND, 8, "not found")                       \
    X(ARG_MISMATCH, 9, "kernel argument mismatch")     \
    X(CL_ERROR, 10, "OpenCL call failed")              \
    X(UNSUPPORTED, 11, "not supported by this device") \
    X(FORMAT_ERROR, 12, "malformed input data")

/** What every fallible call returns: CLRUN_OK, or the kind of failure (clrun_last_error has the words). */
typedef enum clrun_status {
/** @cond */
#define CLRUN__ENUM(name, value, text) CLRUN_##name = value,
    CLRUN_STATUS_MAP(CLRUN__ENUM)
#undef CLRUN__ENUM
    /** @endcond */
} clrun_status;

/** Name of a status code, e.g. "CLRUN_BUILD_FAILED". Never NULL; unknown codes give "CLRUN_?". */
CLRUN_API const char *clrun_status_str(clrun_status st);

/** One-line description of a status code, e.g. "kernel build failed". Never NULL. */
CLRUN_API const char *clrun_status_text(clrun_status st);

/** Name of an OpenCL error code, e.g. "CL_INVALID_VALUE" for -30, as spelled in the Khronos
 *  headers (cl.h and the extension headers). Unknown codes give "CL_UNKNOWN_ERROR". Never NULL. */
CLRUN_API const char *clrun_cl_error_name(cl_int err);

/* ------------------------------------------------------------------------------------------------
 * Devices
 *
 * The process-wide device list holds every device of every platform the ICD loader reports, in
 * platform order, then device order. It is built on first use and never changes afterwards.
 * ----------------------------------------------------------------------------------------------*/

/** The kind of a device, from CL_DEVICE_TYPE. */
typedef enum clrun_device_type {
    CLRUN_DEVICE_GPU = 1,         /**< CL_DEVICE_TYPE_GPU */
    CLRUN_DEVICE_ACCELERATOR = 2, /**< CL_DEVICE_TYPE_ACCELERATOR */
    CLRUN_DEVICE_CPU = 3,         /**< CL_DEVICE_TYPE_CPU */
    CLRUN_DEVICE_OTHER = 4        /**< anything else (CL_DEVICE_TYPE_CUSTOM) */
} clrun_device_type;

/** Capabilities of one device, probed once and cached. Strings are NUL-terminated, truncated to fit. */
typedef struct clrun_device_info {
    unsigned index;             /**< position in the process-wide list */
    unsigned platform_index;    /**< position of its platform among platforms */
    unsigned device_index;      /**< position among its platform's devices */
    clrun_device_type type;     /**< GPU, CPU, accelerator or other */
    char platform_name[128];    /**< CL_PLATFORM_NAME */
    char platform_version[128]; /**< CL_PLATFORM_VERSION */
    char platform_vendor[128];  /**< e.g. "The pocl project", "NVIDIA Corporation" */
    char name[128];             /**< CL_DEVICE_NAME */
    char vendor[128];           /**< CL_DEVICE_VENDOR */
    char version[128];          /**< CL_DEVICE_VERSION, e.g. "OpenCL 3.0 CUDA" */
    char driver_version[128];   /**< CL_DRIVER_VERSION */
    char c_version[64];         /**< CL_DEVICE_OPENCL_C_VERSION, e.g. "OpenCL C 1.2 " */
    int c_version_major;        /**< parsed from c_version */
    int c_version_minor;        /**< parsed from c_version */
    uint64_t global_mem;        /**< bytes */
    uint64_t max_alloc;         /**< CL_DEVICE_MAX_MEM_ALLOC_SIZE, bytes */
    uint64_t local_mem;         /**< bytes per work-group */
    unsigned compute_units;     /**< CL_DEVICE_MAX_COMPUTE_UNITS */
    size_t max_work_group;      /**< CL_DEVICE_MAX_WORK_GROUP_SIZE */
    size_t max_work_item[3];    /**< CL_DEVICE_MAX_WORK_ITEM_SIZES */
    size_t preferred_multiple;  /**< preferred work-group size multiple: the device's answer (OpenCL 3.0);
                                  before 3.0 the vendor's usual width until a context on the device
                                  reads it from a one-line kernel, after which the list agrees */
    unsigned mem_base_align;    /**< CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes: sub-buffer offset alignment */
    int fp64;                   /**< cl_khr_fp64 or double support */
    int fp16;                   /**< cl_khr_fp16 */
    int subgroups;              /**< cl_khr_subgroups, or OpenCL C 3.0's __opencl_c_subgroups feature */
    int host_unified;           /**< CL_DEVICE_HOST_UNIFIED_MEMORY */
    int fp32_denorms;           /**< CL_FP_DENORM in CL_DEVICE_SINGLE_FP_CONFIG: float subnormals are kept;
                                  0: flushed to zero (Mesa's llvmpipe), so results bit-exact with
                                  the host hold only for normal values */
} clrun_device_info;

/** Number of devices in the process-wide list. CLRUN_NO_PLATFORM when the loader finds no platform
 *  (the text says how to install a driver and point the loader at one); a platform with no devices
 *  is skipped. *count is 0 on failure. */
CLRUN_API clrun_status clrun_device_count(unsigned *count);

/** Copy the capabilities of device `index` (0 .. count-1) into *out. */
CLRUN_API clrun_status clrun_device_get(unsigned index, clrun_device_info *out);

/** Resolve a selection string to a device index.
 *  spec: "PLATFORM:DEVICE", each part an index or a case-insensitive substring of the name (for the
 *  platform: of its name or its vendor, so "pocl" finds "Portable Computing Language"), an empty
 *  part meaning 0 ("0:1", "nvidia:", ":h200", "pocl:1"); or a type word "gpu", "cpu", "accelerator"
 *  (the best-ranked device of that type); or a bare index ("1"), or a bare substring, matched against
 *  the devices' names ("h200"), and where no name has it against their platforms' names and vendors
 *  ("intel" finds Intel's CPU runtime, whose device bears the processor's name); a type word or bare
 *  substring that several devices match takes the best-ranked of them. NULL or "" means $CLRUN_DEVICE, and when that is unset or empty
 *  the best-ranked device: GPU, then accelerator, then CPU; within a type, more global memory first,
 *  then list order.
 *  No match is CLRUN_NO_DEVICE with a text that lists every device. *why, when not NULL, receives a
 *  static string saying why this device was chosen ("$CLRUN_DEVICE", "selection string", "ranking"),
 *  and for a type word or bare substring that several devices match, that the best-ranked of them
 *  was taken (also said on stderr under CLRUN_VERBOSE). */
CLRUN_API clrun_status clrun_device_select(const char *spec, unsigned *index, const char **why);

/* ------------------------------------------------------------------------------------------------
 * Contexts
 * ----------------------------------------------------------------------------------------------*/

/** A context: one device, its OpenCL context and queues, the library's kernels (clrun_open, clrun_close). */
typedef struct clrun_ctx clrun_ctx;
/** Device memory of a context (clrun_buf_new, clrun_buf_free). */
typedef struct clrun_buf clrun_buf;
/** A built program (clrun_prog_file, clrun_prog_source, clrun_prog_builtin; clrun_prog_free). */
typedef struct clrun_prog clrun_prog;
/** A kernel of a program with its arguments (clrun_kernel_new, clrun_kernel_free). */
typedef struct clrun_kernel clrun_kernel;
/** A queued command's completion and timestamps (clrun_launch_ev, clrun_event_free). */
typedef struct clrun_event clrun_event;
/** A command queue of a context: a stream (clrun_queue_new, clrun_queue_free). */
typedef struct clrun_queue clrun_queue;

/** Open a context on one device: one OpenCL context and one in-order queue with profiling enabled.
 *  device_spec as for clrun_device_select (NULL: $CLRUN_DEVICE, then the best device).
 *  On success *ctx is a new context the caller frees with clrun_close. On failure *ctx is NULL and
 *  clrun_last_error(NULL) holds the text. */
CLRUN_API clrun_status clrun_open(clrun_ctx **ctx, const char *device_spec);

/** Wait for all queued work, then free the context and any pinned host memory still allocated from
 *  it. Buffers, programs, kernels and events made from it must be freed before: the context does not
 *  track them. NULL is ignored. */
CLRUN_API void clrun_close(clrun_ctx *ctx);

/** Full text of the context's last failure, or "" when none. With ctx NULL: the calling thread's
 *  last failure of a call that had no context (clrun_open, the device calls). The string is owned
 *  by the context (or thread) and valid until its next failing call. Never NULL. */
CLRUN_API const char *clrun_last_error(const clrun_ctx *ctx);

/** Capabilities of the context's device. Borrowed; valid while the context lives. */
CLRUN_API const clrun_device_info *clrun_ctx_device(const clrun_ctx *ctx);

/** Wait until every command queued on the context has finished, on its own queue and on every
 *  stream: a synchronisation point between them (each queue waits on the others' markers, then
 *  clFinish each), after which any queue sees what any other wrote. */
CLRUN_API clrun_status clrun_finish(clrun_ctx *ctx);

/** The raw OpenCL objects behind a context, for mixing clrun with other OpenCL code (the queue:
 *  the current one, see clrun_queue_use). Borrowed: do not release them (retain them if you keep
 *  them beyond the context). */
/** @{ */
CLRUN_API cl_context clrun_ctx_cl_context(const clrun_ctx *ctx);
CLRUN_API cl_command_queue clrun_ctx_cl_queue(const clrun_ctx *ctx);
CLRUN_API cl_device_id clrun_ctx_cl_device(const clrun_ctx *ctx);
/** @} */

/** A clrun context over OpenCL objects an application already has (its own, PyOpenCL's, OpenCV's):
 *  `context` and one of its devices, and optionally an in-order `queue` of that context and device
 *  (NULL: clrun makes its own, with profiling). Every clrun call works on the result, the op
 *  library included.
 *  Reference counting: clrun takes references of its own (clRetainContext, clRetainCommandQueue)
 *  and clrun_close releases only those, so the objects stay the application's: it keeps using and
 *  releasing them as before, in any order with clrun_close. The work clrun queues is ordered with
 *  the application's own commands on a shared queue; clrun_close waits for the queue (clFinish).
 *  Timing (clrun_event_ms, profiling) needs a queue with CL_QUEUE_PROFILING_ENABLE.
 *  Refused (CLRUN_INVALID_ARG): a device not in the context, a queue of another context or device,
 *  an out-of-order queue. CLRUN_UNSUPPORTED: a device clrun does not list (a sub-device). On failure
 *  *ctx is NULL and clrun_last_error(NULL) says why. */
CLRUN_API clrun_status clrun_ctx_wrap(clrun_ctx **ctx, cl_context context, cl_device_id device, cl_command_queue queue);

/* ------------------------------------------------------------------------------------------------
 * Queues (streams), lib/queue.c
 *
 * A context has its own in-order queue; clrun_queue_new adds more on the same device (CUDA's
 * streams, PyTorch's torch.cuda.Stream). Every call on a context — launches, transfers, the ops —
 * enqueues to its current queue, clrun_ctx_queue's unless clrun_queue_use chose another. Commands on
 * one queue run in order; commands on two queues may overlap (an upload on one while a GEMM runs on
 * the other), and are ordered only through events: clrun_queue_marker on one, clrun_queue_wait on
 * the other (or clrun_finish, which syncs all of them): data one queue wrote is read on another only
 * after such an order (Rusticl does not show it otherwise, even after clFinish of the writing
 * queue). Each queue has scratch memory of its own, so ops on two queues never share it. The
 * current queue is per thread and context, as CUDA's current stream and PyTorch's: a thread's
 * clrun_queue_use changes where that thread's calls go, never another thread's (calls on one
 * context still run one at a time).
 * ----------------------------------------------------------------------------------------------*/

/** A new in-order queue (with profiling) on the context's device. Free with clrun_queue_free, or
 *  clrun_close frees it. */
CLRUN_API clrun_status clrun_queue_new(clrun_ctx *ctx, clrun_queue **out);

/** Wait for the queue's commands, then free it; every thread that had it current goes back to the
 *  context's own queue. NULL and the context's own queue are ignored. */
CLRUN_API void clrun_queue_free(clrun_queue *q);

/** The context's own queue (borrowed; it lives as long as the context). */
CLRUN_API clrun_queue *clrun_ctx_queue(clrun_ctx *ctx);

/** The queue the calling thread's calls on the context enqueue to now. Borrowed. */
CLRUN_API clrun_queue *clrun_queue_current(clrun_ctx *ctx);

/** Make q the queue the calling thread's later calls on the context enqueue to (NULL: the context's
 *  own); other threads keep theirs. A queue of another context is CLRUN_INVALID_ARG. Nothing already
 *  queued moves. */
CLRUN_API clrun_status clrun_queue_use(clrun_ctx *ctx, clrun_queue *q);

/** Commands queued on q after this call start only once the n events have completed (events of
 *  any of the context's queues: launches, transfers, markers). Queued, does not block. */
CLRUN_API clrun_status clrun_queue_wait(clrun_queue *q, clrun_event *const *events, unsigned n);

/** *ev: an event that completes when everything queued on q so far has (free with
 *  clrun_event_free). The queue is flushed, so another queue may wait on it at once. */
CLRUN_API clrun_status clrun_queue_marker(clrun_queue *q, clrun_event **ev);

/** Submit what is queued on q to the device without waiting (clFlush). */
CLRUN_API clrun_status clrun_queue_flush(clrun_queue *q);

/** Wait for every command queued on q (clFinish). clrun_finish waits for all the context's queues. */
CLRUN_API clrun_status clrun_queue_finish(clrun_queue *q);

/** The raw cl_command_queue. Borrowed. */
CLRUN_API cl_command_queue clrun_queue_cl(const clrun_queue *q);

/* ------------------------------------------------------------------------------------------------
 * Buffers and host memory
 * ----------------------------------------------------------------------------------------------*/

/** Flags for clrun_buf_new; 0 means read-write. */
#define CLRUN_BUF_READ_ONLY 0x1u  /**< kernels only read it */
#define CLRUN_BUF_WRITE_ONLY 0x2u /**< kernels only write it */

/** Allocate `bytes` (> 0) of device memory. A size the device cannot hold (over its global memory
 *  or its largest single allocation) is CLRUN_DEVICE_OUT_OF_MEMORY with a text that names the size
 *  asked and the device's limits. The contents are undefined. Free with clrun_buf_free. */
CLRUN_API clrun_status clrun_buf_new(clrun_ctx *ctx, size_t bytes, unsigned flags, clrun_buf **out);

/** clrun_buf_new holding a copy of `bytes` of host memory from src, made as the buffer is created
 *  (CL_MEM_COPY_HOST_PTR: no queued command, src only read during the call). For small inputs made
 *  per call, where a separate upload costs a round trip through the queue. */
CLRUN_API clrun_status clrun_buf_new_from(clrun_ctx *ctx, const void *src, size_t bytes, unsigned flags, clrun_buf **out);

/** A view of bytes [offset, offset+bytes) of `parent` (clCreateSubBuffer). offset must be a
 *  multiple of the device's mem_base_align. The view keeps the parent's memory alive; free both
 *  with clrun_buf_free, in any order. */
CLRUN_API clrun_status clrun_buf_sub(clrun_buf *parent, size_t offset, size_t bytes, clrun_buf **out);

/** A clrun buffer over an application's cl_mem of ctx's OpenCL context (from clrun_ctx_wrap, or
 *  clrun_ctx_cl_context): bytes [offset, offset+bytes) of it, bytes 0 meaning the rest. Offset 0
 *  wraps the object itself; another offset makes a sub-buffer, and must then be a multiple of the
 *  device's mem_base_align (or wrap the whole buffer and give the op the offset).
 *  Reference counting: clrun holds a reference of its own (clRetainMemObject, or the sub-buffer's
 *  on its parent), released by clrun_buf_free; the application's reference and its data stay its
 *  own. Refused (CLRUN_INVALID_ARG): an image, a cl_mem of another context, a range past it. */
CLRUN_API clrun_status clrun_buf_wrap(clrun_ctx *ctx, cl_mem mem, size_t offset, size_t bytes, clrun_buf **out);

/** Free a buffer (after the commands queued on it finish). NULL is ignored. */
CLRUN_API void clrun_buf_free(clrun_buf *b);

/** Size of a buffer in bytes. */
CLRUN_API size_t clrun_buf_size(const clrun_buf *b);

/** The context the buffer was made on. Borrowed. */
CLRUN_API clrun_ctx *clrun_buf_context(const clrun_buf *b);

/** The raw cl_mem. Borrowed. */
CLRUN_API cl_mem clrun_buf_cl_mem(const clrun_buf *b);

/** The CUDA device address of a buffer whose memory NVIDIA's OpenCL shares with the CUDA driver,
 *  and (cuda_device, when not NULL) the CUDA device's ordinal, as the CUDA runtime, PyTorch and CuPy
 *  number devices (under the default CUDA_VISIBLE_DEVICES). On an NVIDIA GPU with libcuda.so.1 and
 *  cl_khr_external_memory_opaque_fd, clrun_buf_new makes buffers of 4 MiB and more from the CUDA
 *  driver's virtual-memory API and imports them into OpenCL: one memory with an address in the
 *  device's primary context, valid while the buffer lives (views give the parent's address plus
 *  their offset). Before CUDA work reads what clrun's queue wrote, finish the context
 *  (clrun_finish); before clrun reads what CUDA wrote, synchronise the CUDA stream. Smaller buffers,
 *  wrapped ones (clrun_buf_wrap), other devices and CLRUN_NO_CUDA=1 keep OpenCL's memory alone:
 *  CLRUN_UNSUPPORTED, with the reason in clrun_last_error. docs/CUDA.md has the details. */
CLRUN_API clrun_status clrun_buf_cuda_address(const clrun_buf *b, uint64_t *address, int *cuda_device);

/** Copy `bytes` of CUDA device memory at address src (valid in the primary context of its CUDA
 *  device: a PyTorch or CuPy tensor's data pointer) into the buffer at byte `offset`, blocking: the
 *  copy has landed when it returns. Into a shared buffer (see clrun_buf_cuda_address) it is one
 *  device copy, after the context's queue is finished; into any other buffer of an NVIDIA GPU it goes
 *  through host memory, 8 MiB at a time (the CUDA driver is loaded for it; $CLRUN_CUDA is not needed).
 *  CLRUN_UNSUPPORTED where the buffer's device has no CUDA driver (not an NVIDIA GPU, no
 *  libcuda.so.1); CLRUN_INVALID_ARG for a range past the buffer or a source the driver refuses. */
CLRUN_API clrun_status clrun_buf_copy_from_cuda(clrun_buf *dst, size_t offset, uint64_t src, size_t bytes);

/** Wait for the legacy default stream of the primary context of ctx's CUDA device: what CUDA work
 *  (PyTorch's, CuPy's) was ordered before it — a DLPack producer's for stream=1 — has finished, so
 *  commands queued afterwards on ctx read its results in shared memory. CLRUN_UNSUPPORTED where the
 *  device has no CUDA driver (not an NVIDIA GPU, no libcuda.so.1). */
CLRUN_API clrun_status clrun_cuda_synchronize(clrun_ctx *ctx);

/** Blocking copy of `bytes` from host `src` into the buffer at byte `offset`: it returns once the
 *  data is in the buffer, so a command queued afterwards on any queue (a stream too) reads it. src is
 *  only read during the call. Host memory from clrun_host_alloc moves at DMA speed; ordinary memory on a discrete
 *  device goes through a pinned staging area filled by several threads when the transfer is large. */
CLRUN_API clrun_status clrun_upload(clrun_buf *b, size_t offset, const void *src, size_t bytes);

/** Blocking copy of `bytes` at byte `offset` of the buffer into host `dst`. */
CLRUN_API clrun_status clrun_download(clrun_buf *b, size_t offset, void *dst, size_t bytes);

/** Non-blocking upload: queues the copy and returns. src must stay valid and unchanged until the
 *  copy finishes: wait on *ev (when ev is not NULL; free it with clrun_event_free) or clrun_finish. */
CLRUN_API clrun_status clrun_upload_async(clrun_buf *b, size_t offset, const void *src, size_t bytes, clrun_event **ev);

/** Non-blocking download; dst is valid only after *ev completes or clrun_finish. */
CLRUN_API clrun_status clrun_download_async(clrun_buf *b, size_t offset, void *dst, size_t bytes, clrun_event **ev);

/** Fill bytes [offset, offset+bytes) with a repeated pattern of pattern_size bytes (1, 2, 4, 8, 16,
 *  32, 64 or 128); offset and bytes must be multiples of pattern_size. Queued (non-blocking); the
 *  pattern is copied during the call. */
CLRUN_API clrun_status clrun_buf_fill(clrun_buf *b, const void *pattern, size_t pattern_size, size_t offset, size_t bytes);

/** Copy `bytes` from src at src_offset to dst at dst_offset, on the device. Queued (non-blocking).
 *  Overlapping ranges of one buffer are an error. */
CLRUN_API clrun_status clrun_buf_copy(clrun_buf *dst, size_t dst_offset, clrun_buf *src, size_t src_offset, size_t bytes);

/** Allocate `bytes` of pinned (page-locked, device-mapped) host memory: a CL_MEM_ALLOC_HOST_PTR
 *  buffer mapped for reading and writing. Uploads from and downloads into it run at DMA speed. The
 *  memory is ordinary host memory to the caller. Free with clrun_host_free on the same context,
 *  before clrun_close (which frees any left). */
CLRUN_API clrun_status clrun_host_alloc(clrun_ctx *ctx, size_t bytes, void **ptr);

/** Free memory from clrun_host_alloc. NULL is ignored; a pointer clrun did not allocate is
 *  CLRUN_INVALID_ARG. */
CLRUN_API clrun_status clrun_host_free(clrun_ctx *ctx, void *ptr);

/* ------------------------------------------------------------------------------------------------
 * Programs and the binary cache
 *
 * Sources pass through clrun's include resolver before the driver sees them: a line
 * `#include "name"` is replaced by that file, resolved relative to the including file (for embedded
 * sources: among the embedded files). Programs are cached as device binaries in $CLRUN_CACHE_DIR,
 * else $XDG_CACHE_HOME/clrun, else ~/.cache/clrun, keyed by an XXH3-128 hash of the resolved
 * source, the options, the platform, the device, the driver version and the clrun version.
 * CLRUN_NO_CACHE=1 turns the cache off. A corrupt entry or one the driver refuses is rebuilt from
 * source and replaced; a cache directory that cannot be written only costs the caching.
 * ----------------------------------------------------------------------------------------------*/

/** Build a program from a .cl file (sources and included files up to 16 MiB, else CLRUN_IO_ERROR).
 *  options: extra build options (may be NULL); clrun's own option -clrun-ptx-rewrite (never handed
 *  to the driver) rewrites the compiled PTX of NVIDIA's OpenCL before loading it: lines starting
 *  with "//@@" lose those characters (instructions the OpenCL C compiler's target refuses, written
 *  in inline asm behind a PTX comment) and ".target sm_NN" becomes "sm_NNa"; CLRUN_UNSUPPORTED
 *  where program binaries are not PTX. A build failure is
 *  CLRUN_BUILD_FAILED, and clrun_last_error(ctx) holds the file, the options and the whole build
 *  log. A missing file is CLRUN_IO_ERROR. Free with clrun_prog_free. */
CLRUN_API clrun_status clrun_prog_file(clrun_ctx *ctx, const char *path, const char *options, clrun_prog **out);

/** Build a program from source text. name labels it in messages (may be NULL: "<string>");
 *  relative includes resolve against the current directory. */
CLRUN_API clrun_status clrun_prog_source(clrun_ctx *ctx, const char *source, const char *name, const char *options, clrun_prog **out);

/** Build one of the kernel library's embedded sources by name ("vector" or "vector.cl"). When
 *  $CLRUN_KERNEL_DIR is set, the file is read from that folder instead (for kernel development).
 *  An unknown name is CLRUN_NOT_FOUND with the list of embedded names. */
CLRUN_API clrun_status clrun_prog_builtin(clrun_ctx *ctx, const char *name, const char *options, clrun_prog **out);

/** Build CUDA kernel text (a `.cu` file's contents: `__global__` functions, `threadIdx`,
 *  `__shared__`, atomics, the float math library; docs/CUDA_TEXT.md lists what is translated) for
 *  ctx's device: translated to OpenCL C 1.2 on libclang's parse, then built as clrun_prog_source
 *  builds (cached alike). A construct that cannot be translated is CLRUN_BUILD_FAILED with its
 *  file, line and name in clrun_last_error; compile errors name the CUDA file's lines. Uninitialised
 *  `__constant__` and `extern __shared__` variables become the last arguments of the kernels that
 *  read them, in declaration order (`__constant T *`, `__local T *`). Template kernels are built for
 *  the source's explicit instantiations (`template __global__ void k<float, 4>(float *);`);
 *  clrun_kernel_new takes them by their C++ names (`"k<float, 4>"`, any spacing) or mangled names,
 *  and a kernel named as OpenCL C reserves (`kernel`) by its CUDA name. The source's own headers
 *  (`#include "helpers.cuh"`) are pasted in where included, found beside name (the current
 *  directory for a bare name), then in the -I directories of options in order (`-I DIR`, `-IDIR`,
 *  `-I"DIR WITH SPACES"`); `#include <x.cuh>` in the -I directories only; include guards and
 *  `#pragma once` hold, and messages name the header's own lines. CLRUN_UNSUPPORTED where
 *  libclrun was built without libclang's headers or libclang cannot be loaded. */
CLRUN_API clrun_status clrun_prog_cuda(clrun_ctx *ctx, const char *source, const char *name, const char *options, clrun_prog **out);

/** The OpenCL C clrun_prog_cuda builds from CUDA source (name: the file named in messages, NULL for
 *  "kernel.cu"), into *out: malloc'd, freed with clrun_string_free. */
CLRUN_API clrun_status clrun_cuda_translate(const char *source, const char *name, char **out);

/** clrun_cuda_translate with the build options the OpenCL C will be built with (NULL: none): their
 *  macro definitions (-D NAME[=VALUE], -DNAME, -U NAME) hold while the CUDA source is parsed, and
 *  their -I directories are searched for the source's headers, as clrun_prog_cuda does. */
CLRUN_API clrun_status clrun_cuda_translate_options(const char *source, const char *name, const char *options, char **out);

/** Free a string clrun returned for the caller to own (clrun_cuda_translate). NULL is ignored. */
CLRUN_API void clrun_string_free(char *s);

/** Free a program. Kernels made from it must be freed first. NULL is ignored. */
CLRUN_API void clrun_prog_free(clrun_prog *p);

/** 1 when the program's binary came from the cache, 0 when it was built from source. */
CLRUN_API int clrun_prog_from_cache(const clrun_prog *p);

/** The raw cl_program. Borrowed. */
CLRUN_API cl_program clrun_prog_cl_program(const clrun_prog *p);

/** Names of the embedded kernel sources, NULL-terminated; static storage. */
CLRUN_API const char *const *clrun_builtin_names(void);

/** The embedded source text of `name` (as for clrun_prog_builtin), or NULL. Static storage. */
CLRUN_API const char *clrun_builtin_source(const char *name, size_t *len);

/** The cache directory in use (without creating it), or NULL when the cache is off. Writes at most
 *  `size` bytes into buf. */
CLRUN_API const char *clrun_cache_dir(char *buf, size_t size);

/* ------------------------------------------------------------------------------------------------
 * Kernels, launches and events
 * ----------------------------------------------------------------------------------------------*/

/** Make a kernel from a built program. An unknown name is CLRUN_NOT_FOUND with the list of the
 *  program's kernels. In a program built from CUDA (clrun_prog_cuda), the CUDA names its notes give
 *  are taken too: template kernels' instantiations and renamed kernels. Free with clrun_kernel_free,
 *  before the program. */
CLRUN_API clrun_status clrun_kernel_new(clrun_prog *p, const char *name, clrun_kernel **out);
/** Free a kernel. NULL is ignored. */
CLRUN_API void clrun_kernel_free(clrun_kernel *k);

/** Number of arguments the kernel takes. */
CLRUN_API unsigned clrun_kernel_nargs(const clrun_kernel *k);

/** Argument setters, by index. When the driver reports argument info (clrun builds with
 *  -cl-kernel-arg-info), the kind and type are checked against the kernel's signature: a buffer to a
 *  __global/__constant pointer, local memory to a __local pointer, scalars to the exact scalar type.
 *  An index past the end or a mismatch is CLRUN_ARG_MISMATCH with a text naming the argument. A
 *  buffer of another context than the kernel's program, or __local bytes past the device's local
 *  memory, is CLRUN_INVALID_ARG (every op binds through these, so the library's ops check it too).
 *  clrun_arg_buf with b NULL passes a NULL pointer. */
/** @{ */
CLRUN_API clrun_status clrun_arg_buf(clrun_kernel *k, unsigned i, clrun_buf *b);
CLRUN_API clrun_status clrun_arg_local(clrun_kernel *k, unsigned i, size_t bytes);
CLRUN_API clrun_status clrun_arg_i8(clrun_kernel *k, unsigned i, int8_t v);
CLRUN_API clrun_status clrun_arg_u8(clrun_kernel *k, unsigned i, uint8_t v);
CLRUN_API clrun_status clrun_arg_i16(clrun_kernel *k, unsigned i, int16_t v);
CLRUN_API clrun_status clrun_arg_u16(clrun_kernel *k, unsigned i, uint16_t v);
CLRUN_API clrun_status clrun_arg_i32(clrun_kernel *k, unsigned i, int32_t v);
CLRUN_API clrun_status clrun_arg_u32(clrun_kernel *k, unsigned i, uint32_t v);
CLRUN_API clrun_status clrun_arg_i64(clrun_kernel *k, unsigned i, int64_t v);
CLRUN_API clrun_status clrun_arg_u64(clrun_kernel *k, unsigned i, uint64_t v);
CLRUN_API clrun_status clrun_arg_f32(clrun_kernel *k, unsigned i, float v);
CLRUN_API clrun_status clrun_arg_f64(clrun_kernel *k, unsigned i, double v);
/** @} */
/** A half argument, given as its 16-bit pattern. */
CLRUN_API clrun_status clrun_arg_f16(clrun_kernel *k, unsigned i, uint16_t bits);
/** Any by-value argument (vectors, structs) as raw bytes. Where the driver reports argument info,
 *  `size` must be the argument's size, or CLRUN_ARG_MISMATCH names it and its size: a scalar's or
 *  a vector's from its type (a 3-vector is the size of a 4-vector), a struct's or union's as
 *  `sizeof` on the device, found once per argument by a small probe kernel built from the program's
 *  source and options (through the binary cache). Where the probe cannot be built the driver's own
 *  check is all there is. */
CLRUN_API clrun_status clrun_arg_bytes(clrun_kernel *k, unsigned i, const void *value, size_t size);

/** What the driver reports of a kernel argument (clrun builds with -cl-kernel-arg-info). */
typedef enum clrun_arg_kind {
    CLRUN_ARG_GLOBAL,   /**< __global pointer */
    CLRUN_ARG_CONSTANT, /**< __constant pointer */
    CLRUN_ARG_LOCAL,    /**< __local pointer */
    CLRUN_ARG_VALUE     /**< passed by value (scalars, vectors, structs) */
} clrun_arg_kind;

/** One kernel argument as the driver describes it (clrun_kernel_arg_info). */
typedef struct clrun_arg_info {
    clrun_arg_kind kind; /**< global, constant, local or by value */
    char type[64];       /**< as the driver spells it, e.g. "float*", "uint", "float4" */
    char name[64];       /**< the parameter's name in the source */
} clrun_arg_info;

/** Describe argument i. CLRUN_UNSUPPORTED when the driver keeps no argument info (some drivers lose
 *  it for programs loaded from binaries); CLRUN_ARG_MISMATCH for an index past the end. */
CLRUN_API clrun_status clrun_kernel_arg_info(clrun_kernel *k, unsigned i, clrun_arg_info *out);

/** The kernel's name (borrowed) and raw cl_kernel (borrowed). */
/** @{ */
CLRUN_API const char *clrun_kernel_name(const clrun_kernel *k);
CLRUN_API cl_kernel clrun_kernel_cl(const clrun_kernel *k);
/** @} */

/** Queue a launch over `dims` (1-3) dimensions. global: work items per dimension (each > 0).
 *  local: work-group size per dimension, or NULL to let clrun choose one that divides global in
 *  every dimension (the largest within the work-group limit, a multiple of the device's preferred
 *  multiple where one divides): exactly the global size runs, never a work-item more, so a kernel
 *  without a tail guard (the seed's multiply_them) is safe with any size. A size with no good
 *  divisor (a large prime) then runs in small work-groups: give a local size and a tail guard for
 *  speed. An unset argument is CLRUN_ARG_MISMATCH naming it.
 *  The range is checked against the device before the driver sees it (drivers trap, abort or spin
 *  on ranges they cannot schedule), for every launch, the library's ops included; CLRUN_INVALID_ARG
 *  says which limit: work-items in all beyond the device's address bits (or 2^62), a local size
 *  past the device's work-item sizes or a work-group past the kernel's size, 2^32 or more
 *  work-groups in a dimension, __local arguments past the device's local memory.
 *  Non-blocking: wait with clrun_finish or an event. */
CLRUN_API clrun_status clrun_launch(clrun_kernel *k, unsigned dims, const size_t *global, const size_t *local);

/** As clrun_launch, and *ev receives an event for the launch (free with clrun_event_free). */
CLRUN_API clrun_status clrun_launch_ev(clrun_kernel *k, unsigned dims, const size_t *global, const size_t *local, clrun_event **ev);

/** Block until the event's command has finished; a failed command gives CLRUN_CL_ERROR. */
CLRUN_API clrun_status clrun_event_wait(clrun_event *ev);

/** Device timestamps (ns) of the command's start and end, waiting for it first. */
CLRUN_API clrun_status clrun_event_times(clrun_event *ev, uint64_t *start_ns, uint64_t *end_ns);

/** end - start in milliseconds, waiting first; a negative value on failure. */
CLRUN_API double clrun_event_ms(clrun_event *ev);

/** Free an event. NULL is ignored. */
CLRUN_API void clrun_event_free(clrun_event *ev);

/** The raw cl_event. Borrowed. */
CLRUN_API cl_event clrun_event_cl(const clrun_event *ev);

/* ---- Profiling: device time per kernel -------------------------------------------------------- */

/** One kernel's record: every launch of that name since profiling started. */
typedef struct clrun_profile_entry {
    const char *kernel; /**< the kernel's name (owned by the context) */
    uint64_t launches;  /**< launches recorded */
    double total_ms;    /**< device time of all of them (profiling timestamps, start to end) */
    double min_ms;      /**< the shortest launch */
    double max_ms;      /**< the longest launch */
} clrun_profile_entry;

/** Start recording the device time of every kernel launched on ctx — the library's ops included —
 *  under the kernel's name, and of every upload and download queued through clrun_upload,
 *  clrun_download and their _async forms under "clrun_upload" and "clrun_download" (one record per
 *  command the transfer queues; the copy clrun_buf_new_from makes at creation is not one); earlier
 *  records are dropped. Costs an event per launch, read back in
 *  batches. Setting $CLRUN_PROFILE (any value but "" or "0") starts it for every context at
 *  clrun_open, and clrun_close then writes the table to stderr. */
CLRUN_API clrun_status clrun_profile_start(clrun_ctx *ctx);

/** Wait for the recorded launches and give the records, largest total first: *entries points into
 *  the context (valid until the next profile call or clrun_close), *count is their number (0 when
 *  profiling is off). Recording goes on. */
CLRUN_API clrun_status clrun_profile_read(clrun_ctx *ctx, const clrun_profile_entry **entries, size_t *count);

/** Stop recording and drop the records (waiting for what is still queued). */
CLRUN_API void clrun_profile_stop(clrun_ctx *ctx);

/* ------------------------------------------------------------------------------------------------
 * Arrays and NumPy .npy files (lib/io/npy.c)
 *
 * Reads and writes NumPy's .npy format, versions 1.0, 2.0 and 3.0: little-endian (or 1-byte)
 * dtypes f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8, b1 (bool), c8 and c16 (complex64, complex128), C order (Fortran order is accepted for
 * arrays of one dimension or fewer, where it is the same layout), up to CLRUN_MAX_DIMS dimensions.
 * A CLRUN_BF16 array is written as u2 (uint16 bit patterns); reading never gives CLRUN_BF16.
 * Failures have no context: the text is in clrun_last_error(NULL). A malformed file is
 * CLRUN_FORMAT_ERROR with a text that names the problem; an unreadable one CLRUN_IO_ERROR.
 * ----------------------------------------------------------------------------------------------*/

/** The most dimensions a clrun_array (and a .npy file clrun reads) has. */
#define CLRUN_MAX_DIMS 8

/** The one element-type enum of the API: arrays, vector ops and reductions, GEMM inputs, casts,
 * gradients. CLRUN_F32 is 0, so a zeroed descriptor means f32. CLRUN_BF16 is stored as 16 bits (the
 * top half of an f32, see the conversions below); NumPy has no bf16 dtype, so .npy files carry
 * bf16 data as u2 (uint16). */
typedef enum clrun_dtype {
    CLRUN_F32 = 0,
    CLRUN_F16,
    CLRUN_BF16,
    CLRUN_F64,
    CLRUN_I8,
    CLRUN_I16,
    CLRUN_I32,
    CLRUN_I64,
    CLRUN_U8,
    CLRUN_U16,
    CLRUN_U32,
    CLRUN_U64,
    CLRUN_BOOL,
    CLRUN_C64,  /**< complex64: two f32, real then imaginary (NumPy's complex64, OpenCL's float2) */
    CLRUN_C128, /**< complex128: two f64 (NumPy's complex128, OpenCL's double2) */
    CLRUN_DTYPE_COUNT
} clrun_dtype;

/** An n-dimensional array in host memory, C order. data is malloc'd and owned by the array. */
typedef struct clrun_array {
    clrun_dtype dtype;            /**< element type */
    unsigned ndim;                /**< 0 for a scalar (count 1) */
    size_t shape[CLRUN_MAX_DIMS]; /**< the first ndim entries are the dimensions, outermost first */
    size_t count;                 /**< product of the shape */
    size_t bytes;                 /**< count * element size */
    void *data;                   /**< the elements, C order */
    /** Set by clrun_npy_read when data lies in a private mapping of the file; NULL and 0 otherwise.
     * Leave them alone: clrun_array_free unmaps or frees accordingly. */
    void *map_base;
    size_t map_len; /**< the mapping's length (see map_base) */
} clrun_array;

/** Bytes per element of a dtype (bool: 1); 0 for an invalid value. */
CLRUN_API size_t clrun_dtype_size(clrun_dtype t);

/** Short name: "f32" "f16" "bf16" "f64" "i8" … "u64" "bool" "c64" "c128". "?" for an invalid value. */
CLRUN_API const char *clrun_dtype_name(clrun_dtype t);

/** The OpenCL C scalar type of a dtype: "half" "float" "double" "char" "short" "int" "long"
 *  "uchar" "ushort" "uint" "ulong" "bool"(stored as uchar) "float2" "double2"; bf16 is stored as
 *  "ushort". */
CLRUN_API const char *clrun_dtype_cl_name(clrun_dtype t);

/** Parse a type name: the short names above, NumPy's names ("float32", "int64", "uint8",
 *  "float16", "bool", "complex64", "complex128"; "bfloat16" as ml_dtypes spells it) or OpenCL's
 *  scalar names ("float", "half", "double", "char", "uchar", "short", "ushort", "int", "uint", "long",
 *  "ulong"; "ushort" is u16; the vector names float2 and double2 are not complex types).
 *  CLRUN_INVALID_ARG if unknown. */
CLRUN_API clrun_status clrun_dtype_parse(const char *name, clrun_dtype *out);

/** Allocate a zeroed array of dtype t and the given shape (ndim ≤ CLRUN_MAX_DIMS). Free its data
 *  with clrun_array_free. */
CLRUN_API clrun_status clrun_array_new(clrun_array *a, clrun_dtype t, unsigned ndim, const size_t *shape);

/** Free the array's data and clear it. NULL is ignored. */
CLRUN_API void clrun_array_free(clrun_array *a);

/** Parse an .npy image held in memory (len bytes). On success *out owns a copy of the data. */
CLRUN_API clrun_status clrun_npy_parse(const void *buf, size_t len, clrun_array *out);

/** Read an .npy file, as far as its header says and no further (headers up to 1 MiB; a FIFO or
 *  device that goes on is not read past the data). On success *out owns the data (free with
 *  clrun_array_free). A regular file of 1 MiB of data or more whose data starts aligned for its
 *  type is not read but memory-mapped, privately (writes to the array stay in memory, the file is
 *  never changed): pages are read when first touched, e.g. by the threads of a staged upload, and
 *  nothing is copied twice. As with any mapping, a file cut short by another process while mapped
 *  ends this one with SIGBUS when the missing pages are touched. */
CLRUN_API clrun_status clrun_npy_read(const char *path, clrun_array *out);

/** Write `bytes` bytes to a file, safely as clrun_image_write says ("-": standard output; the old
 *  file replaced whole or left as it was). CLRUN_IO_ERROR names the error. */
CLRUN_API clrun_status clrun_file_write(const char *path, const void *data, size_t bytes);

/** Remove the temporary files of the writes in progress in this process (clrun_file_write,
 *  clrun_npy_write, clrun_image_write, the binary cache), whose destinations are then left as they
 *  were. Async-signal-safe: for a SIGINT or SIGTERM handler that then ends the process, so that
 *  Ctrl-C leaves no partial output. */
CLRUN_API void clrun_file_abort_writes(void);

/** Write an array as a version 1.0 .npy file, safely as clrun_image_write says ("-": standard
 *  output; no partial output; links followed, FIFOs and devices written into, the mode kept). */
CLRUN_API clrun_status clrun_npy_write(const char *path, const clrun_array *a);

/* ------------------------------------------------------------------------------------------------
 * Vector ops (lib/ops/vector/vector.c, lib/ops/vector/vector.cl)
 *
 * Element-wise over n elements (n may be 0) of f32 or f16 buffers (t = CLRUN_F32 or CLRUN_F16;
 * f16 is stored as IEEE binary16 and computed in f32, rounded to nearest even on store). Offsets are
 * in elements. Every input range must lie inside its buffer. dst may be the same buffer as an input
 * at the same offset (in place). The ops are queued; read the result with clrun_download (which
 * waits) or call clrun_finish. Results equal the same f32 operation done on the CPU, bit for bit:
 * div is correctly rounded, axpy and fma round once.
 * ----------------------------------------------------------------------------------------------*/

/** The element-wise ops of clrun_vec. */
typedef enum clrun_vec_op {
    CLRUN_MUL,   /**< dst = a * b */
    CLRUN_ADD,   /**< dst = a + b */
    CLRUN_SUB,   /**< dst = a - b */
    CLRUN_DIV,   /**< dst = a / b */
    CLRUN_AXPY,  /**< dst = alpha * a + b (y = a·x + y with dst = b) */
    CLRUN_SCALE, /**< dst = alpha * a */
    CLRUN_FMA    /**< dst = a * b + c */
} clrun_vec_op;

/** One element-wise op. Operands an op does not use (b for SCALE, c except for FMA) may be NULL. */
CLRUN_API clrun_status clrun_vec(clrun_ctx *ctx, clrun_vec_op op, clrun_dtype t, size_t n, float alpha, clrun_buf *dst, size_t dst_off,
                                 clrun_buf *a, size_t a_off, clrun_buf *b, size_t b_off, clrun_buf *c, size_t c_off);

/** Name of an op ("mul", "axpy", ...), or NULL. */
CLRUN_API const char *clrun_vec_op_name(clrun_vec_op op);

/** Shorthands for the common cases (offsets 0). */
/** @{ */
CLRUN_API clrun_status clrun_mul(clrun_ctx *ctx, clrun_dtype t, size_t n, clrun_buf *dst, clrun_buf *a, clrun_buf *b);
CLRUN_API clrun_status clrun_add(clrun_ctx *ctx, clrun_dtype t, size_t n, clrun_buf *dst, clrun_buf *a, clrun_buf *b);
CLRUN_API clrun_status clrun_axpy(clrun_ctx *ctx, clrun_dtype t, size_t n, float alpha, clrun_buf *x, clrun_buf *y);
/** @} */

/* ------------------------------------------------------------------------------------------------
 * Random numbers (lib/ops/rand/rand.c, lib/ops/rand/rand.cl)
 *
 * A counter-based generator, Philox4x32-10 from Random123, laid out as cuRAND's Philox4_32_10: for
 * seed s and subsequence u, block q of the stream is philox4x32(counter (q mod 2^32, q >> 32,
 * u mod 2^32, u >> 32), key (s mod 2^32, s >> 32)), and 32-bit word j of the stream is word j mod 4
 * of block j / 4. A call draws from word `offset` on and advances it past the words it used, so
 * calls continue one stream; any offset may be given (streams are random-access). The words, and
 * every distribution but the normal one, are the same bits on every OpenCL implementation and for
 * any work-group size (integer arithmetic, exact conversions, one rounding); the normal one uses
 * the device's log, sin and cos (within OpenCL's ulp bounds of each other across vendors).
 *
 * Words a value takes: bits, Bernoulli, and float32/float16/bfloat16 uniform and normal one; float64
 * and integers two (n values take words in groups of four: n rounded up to a multiple of 4 / 2).
 * ----------------------------------------------------------------------------------------------*/

/** What clrun_rand draws. */
typedef enum clrun_rand_dist {
    CLRUN_RAND_BITS = 0,     /**< the raw 32-bit words (type CLRUN_U32) */
    CLRUN_RAND_UNIFORM = 1,  /**< uniform in [a, b): a + (b - a)·u in one rounding, u in [0, 1) from the word's top
                                   24 bits (float16: 11, bfloat16: 8, float64: 53 from two words); f32, f16, bf16, f64 */
    CLRUN_RAND_NORMAL = 2,   /**< normal with mean a and standard deviation b, Box–Muller as cuRAND's curand_normal4
                                   (pairs from two words; float64 from four); f32, f16, bf16, f64 */
    CLRUN_RAND_INTEGERS = 3, /**< integers in [low, high): low + the top 64 bits of (two words)·(high - low), no modulo
                                   bias (what is left is below (high - low) / 2^64); i32, u32, i64, u64 */
    CLRUN_RAND_BERNOULLI = 4 /**< 1 with probability a (a word below a·2^32, exact), else 0; u8 or bool */
} clrun_rand_dist;

/** A draw: the stream (seed, subsequence, offset in words), the distribution, the output type and
 *  the distribution's parameters. clrun_rand_desc_init fills the defaults. */
typedef struct clrun_rand_desc {
    uint64_t seed;        /**< the key */
    uint64_t subsequence; /**< the counter's high half: independent streams of one seed */
    uint64_t offset;      /**< the next word of the stream; clrun_rand advances it */
    clrun_rand_dist dist; /**< the distribution */
    clrun_dtype type;     /**< the output's element type */
    double a;             /**< uniform: the low bound (default 0); normal: the mean (0); Bernoulli: the probability (0.5) */
    double b;             /**< uniform: the high bound, excluded (default 1); normal: the standard deviation (1) */
    int64_t low;          /**< integers: the low bound (default 0) */
    int64_t high;         /**< integers: the high bound, excluded (default 2^31); high <= low is refused, except
                               low = high = 0 with an unsigned 64-bit type: every value (the raw 64 bits) */
} clrun_rand_desc;

/** Defaults for a draw of dist as type from seed (subsequence 0, offset 0). */
CLRUN_API void clrun_rand_desc_init(clrun_rand_desc *d, uint64_t seed, clrun_rand_dist dist, clrun_dtype type);

/** The words n values of d's distribution take from the stream. */
CLRUN_API uint64_t clrun_rand_words(const clrun_rand_desc *d, size_t n);

/** n values of d's distribution into out (from element out_off); d->offset advances by
 *  clrun_rand_words(d, n). Queued. CLRUN_INVALID_ARG for a type the distribution has not, bad
 *  parameters (b < a, a NaN, p outside [0, 1], high <= low), a range outside out; CLRUN_UNSUPPORTED
 *  for float64 on a device without it. */
CLRUN_API clrun_status clrun_rand(clrun_ctx *ctx, clrun_rand_desc *d, clrun_buf *out, size_t out_off, size_t n);

/* ------------------------------------------------------------------------------------------------
 * Scans (lib/ops/scan/scan.c, lib/ops/scan/scan.cl)
 *
 * Prefix sums, maxima and minima along rows: reduce-then-scan in tiles (each tile's total, an
 * exclusive scan of the totals, then each tile with its carry), so no work-group waits on another
 * and no device needs forward progress between work-groups. Integer sums wrap, as NumPy's cumsum;
 * max and min propagate NaN, as np.maximum.accumulate. Float sums are added in tiles (a tree within
 * a tile's 4-element runs, then the carries): the same bits for the same device and size, and an
 * error within that of pairwise summation (NumPy's cumsum adds left to right).
 * ----------------------------------------------------------------------------------------------*/

/** The combining op of clrun_scan. */
typedef enum clrun_scan_op {
    CLRUN_SCAN_SUM = 0, /**< running sums (np.cumsum) */
    CLRUN_SCAN_MAX = 1, /**< running maxima (np.maximum.accumulate) */
    CLRUN_SCAN_MIN = 2  /**< running minima (np.minimum.accumulate) */
} clrun_scan_op;

/** The scan of each of `rows` rows of n elements (row r at in_off + r·n) into out (the same layout
 *  from out_off): inclusive (element i combines elements 0..i) or, with exclusive, the elements
 *  before i (the op's identity first: 0, -inf or the type's minimum, +inf or its maximum). Types
 *  int32, uint32, int64, uint64, float32, float64. In place when in and out are one buffer at one
 *  offset. Queued. */
CLRUN_API clrun_status clrun_scan(clrun_ctx *ctx, clrun_scan_op op, int exclusive, clrun_dtype t, clrun_buf *in, size_t in_off,
                                  clrun_buf *out, size_t out_off, size_t rows, size_t n);

/** Name of a scan op ("sum", "max", "min"), or NULL. */
CLRUN_API const char *clrun_scan_op_name(clrun_scan_op op);

/* ------------------------------------------------------------------------------------------------
 * Histograms (lib/ops/hist/hist.c, lib/ops/hist/hist.cl)
 *
 * NumPy's np.bincount and np.histogram with equal-width bins. Counts are exact (local counters per
 * work-group, then atomics). Weighted sums are NumPy's to the bit: a stable sort of the keys
 * (clrun_argsort) groups each bin's elements in their original order and one work-item per bin adds
 * them in that order in float64, as NumPy's loop does. Fewer than 2^32 elements; weights, and the
 * bins of float64 and integer elements, need fp64 on the device (CLRUN_UNSUPPORTED otherwise).
 * ----------------------------------------------------------------------------------------------*/

/** np.bincount: for each bin b < nbins, how many of the n keys x (an integer type or bool, from
 *  x_off) equal b — into out as int64 — or, with weights w (n values of type wt from w_off: float32,
 *  float64, an integer type or bool), the sum of their weights as float64. Keys below 0 or from
 *  nbins up are left out (NumPy refuses negative keys and sizes the output to the largest: the
 *  Python package does both). Queued. */
CLRUN_API clrun_status clrun_bincount(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t x_off, size_t n, clrun_buf *w, size_t w_off,
                                      clrun_dtype wt, size_t nbins, clrun_buf *out, size_t out_off);

/** Flags of clrun_histogram. */
#define CLRUN_HIST_SCALE_F64 \
    1u /**< multiply by the scale in float64 even for float32 elements (NumPy 2 when the scale is a float64 scalar) */

/** nbins + 1 equal-width bin edges from lo to hi as np.linspace(lo, hi, nbins + 1) computes them in
 *  float64 (the last one hi), stored as double (f64 1) or float. The edges np.histogram uses for a
 *  range given as numbers. */
CLRUN_API void clrun_histogram_edges(double lo, double hi, size_t nbins, int f64, void *edges);

/** np.histogram with nbins equal-width bins: edges (nbins + 1 values of the bin type, float32 for
 *  float32 elements and float64 for float64 and integer ones, as clrun_histogram_edges makes them)
 *  and scale (nbins / (hi - lo)). Each element x (from x_off; n of type t) in [edges[0],
 *  edges[nbins]] goes to bin int((x - edges[0]) · scale), moved by one where the edges say so
 *  (NumPy's steps, in the bin type); others (and NaN) are left out. out gets the counts (int64) or,
 *  with weights w (type wt: float32, float64, an integer type or bool), their sums in the weights'
 *  type, summed in blocks of 65,536 elements as NumPy does. Queued. */
CLRUN_API clrun_status clrun_histogram(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t x_off, size_t n, clrun_buf *w, size_t w_off,
                                       clrun_dtype wt, size_t nbins, clrun_buf *edges, double scale, unsigned flags, clrun_buf *out,
                                       size_t out_off);

/* ------------------------------------------------------------------------------------------------
 * Fourier transforms (lib/ops/fft/fft.c, on VkFFT)
 *
 * numpy.fft's transforms, generated and run by VkFFT on the context's device, queue and buffers:
 * complex-to-complex (forward e^-2πi·jk/n, inverse e^+2πi·jk/n) and real (forward r2c keeping the
 * n/2 + 1 non-negative frequencies of the last axis, inverse c2r), over the 1 to 3 innermost axes of
 * `batch` arrays one after another, any lengths (VkFFT's Rader and Bluestein algorithms take prime
 * and awkward lengths), in f32 or f64 (complex64 or complex128 elements, real then imaginary).
 * Scaling follows NumPy's norm: "backward" divides the inverse by n, "ortho" both by sqrt(n),
 * "forward" the forward by n (n: the product of the transformed lengths).
 *
 * A plan is made once per descriptor and context: clrun_fft_plan_new hands back the context's plan
 * when one with an equal descriptor exists (and keeps up to 16 that nobody holds), and VkFFT's
 * compiled kernels go to clrun's persistent cache, so another process loads them instead of
 * compiling (clrun_fft_plan_info says which). Transforms are queued on the calling thread's current
 * queue, as the other ops; order them with clrun_queue_marker. The input of an out-of-place
 * transform is left as it was. Without VkFFT at build time every call is CLRUN_UNSUPPORTED
 * (clrun_fft_available says so).
 * ----------------------------------------------------------------------------------------------*/

/** The most axes one plan transforms. */
#define CLRUN_FFT_MAX_DIMS 3

/** What a plan transforms. */
typedef enum clrun_fft_kind {
    CLRUN_FFT_C2C = 0, /**< complex to complex, both directions */
    CLRUN_FFT_REAL = 1 /**< real: forward real to complex (np.fft.rfftn), inverse complex to real (irfftn) */
} clrun_fft_kind;

/** NumPy's norm= of a transform (which direction is scaled). */
typedef enum clrun_fft_norm {
    CLRUN_FFT_NORM_BACKWARD = 0, /**< the inverse by 1/n (NumPy's default) */
    CLRUN_FFT_NORM_ORTHO = 1,    /**< both by 1/sqrt(n) */
    CLRUN_FFT_NORM_FORWARD = 2   /**< the forward by 1/n */
} clrun_fft_norm;

/** A transform's shape. Zeroed, it is a forward-and-inverse c2c f32 plan of ndim 0 (which fails:
 *  set ndim and shape). */
typedef struct clrun_fft_desc {
    clrun_fft_kind kind;              /**< CLRUN_FFT_C2C (0) or CLRUN_FFT_REAL */
    clrun_dtype precision;            /**< CLRUN_F32 (0; complex64 data) or CLRUN_F64 (complex128; needs fp64) */
    unsigned ndim;                    /**< transformed axes: 1 to CLRUN_FFT_MAX_DIMS, the innermost ones */
    size_t shape[CLRUN_FFT_MAX_DIMS]; /**< their lengths, outermost first, as NumPy's shape (for
                                       *  CLRUN_FFT_REAL the real lengths; the complex side's last
                                       *  axis has shape[ndim-1]/2 + 1 elements) */
    size_t batch;                     /**< transforms one after another in memory (0 counts as 1) */
    clrun_fft_norm norm;              /**< the scaling, CLRUN_FFT_NORM_BACKWARD (0) by default */
    int inplace;                      /**< nonzero: the plan transforms its buffer in place (c2c only) */
} clrun_fft_desc;

/** A plan (opaque): one VkFFT application on one context. */
typedef struct clrun_fft_plan clrun_fft_plan;

/** Where a plan's kernels came from (clrun_fft_plan_info). */
typedef enum clrun_fft_plan_source {
    CLRUN_FFT_PLAN_BUILT = 0,  /**< generated and compiled now (then stored in the persistent cache) */
    CLRUN_FFT_PLAN_LOADED = 1, /**< loaded from the persistent cache */
    CLRUN_FFT_PLAN_REUSED = 2  /**< the context's plan for an equal descriptor */
} clrun_fft_plan_source;

/** What making a plan cost, and its sizes. */
typedef struct clrun_fft_info {
    double build_ms;              /**< wall time of making it (0 when reused) */
    clrun_fft_plan_source source; /**< where its kernels came from */
    size_t in_count;              /**< elements a forward transform reads (real ones for CLRUN_FFT_REAL) */
    size_t out_count;             /**< complex elements a forward transform writes */
} clrun_fft_info;

/** 1 when this libclrun has VkFFT (FFT works), 0 when it was built without it. */
CLRUN_API int clrun_fft_available(void);

/** A plan for *d on ctx (or a new reference to the context's plan for an equal descriptor). Fails
 *  with CLRUN_INVALID_ARG for a bad descriptor (no axes, a length of 0, an in-place real plan, a
 *  size past the device's largest buffer), CLRUN_UNSUPPORTED for f64 without fp64 or a build
 *  without VkFFT. Free with clrun_fft_plan_free before clrun_close (which frees any left). */
CLRUN_API clrun_status clrun_fft_plan_new(clrun_ctx *ctx, const clrun_fft_desc *d, clrun_fft_plan **out);

/** Queue the forward (inverse 0) or inverse transform of every batch: from in at element in_off to
 *  out at element out_off, offsets counting the elements of each side (complex, or real on a real
 *  transform's real side: forward's input, inverse's output). Arrays are packed, C order. An
 *  in-place plan transforms out (in is NULL or the same range). Out-of-place ranges must not
 *  overlap; in is left as it was. A real inverse of one axis ignores the imaginary parts of bins 0
 *  and n/2, as numpy.fft.irfft; over several axes the spectrum is read as Hermitian (as cuFFT's
 *  c2r), so a spectrum no real signal has may give other values than NumPy's irfftn, which does the
 *  c2c axes first (the Python package does that). */
CLRUN_API clrun_status clrun_fft_exec(clrun_fft_plan *p, int inverse, clrun_buf *in, size_t in_off, clrun_buf *out, size_t out_off);

/** Its build cost and sizes. */
CLRUN_API clrun_status clrun_fft_plan_info(const clrun_fft_plan *p, clrun_fft_info *info);

/** Drop a reference to the plan (NULL is ignored). */
CLRUN_API void clrun_fft_plan_free(clrun_fft_plan *p);

/** Name of a norm ("backward", "ortho", "forward"), or NULL. */
CLRUN_API const char *clrun_fft_norm_name(clrun_fft_norm norm);

/* ------------------------------------------------------------------------------------------------
 * Convolution and the layers of a vision network (lib/ops/conv, lib/ops/nn)
 *
 * What a convolutional training loop needs, forward and backward, with PyTorch's arithmetic and
 * names: 2-D convolution (clrun_conv2d_*), activations, batch normalisation, pooling, a linear
 * layer, softmax cross-entropy, dropout and the SGD and AdamW optimisers. Activations are 4-D
 * tensors in NCHW (PyTorch's order, the default) or NHWC, stored as f32, f16 or bf16 and computed
 * with f32 arithmetic and f32 accumulation (one rounding to the storage type per result). Learnable
 * parameters of batch normalisation, the running statistics, losses and optimiser state are f32:
 * the master weights of mixed-precision training, as torch.cuda.amp keeps them. Every call is
 * queued on the calling thread's current queue; buffers are used from their first byte.
 *
 * A convolution's three passes are matrix products (clrun_conv_algo): implicit GEMMs, whose tiles of
 * the weights and the activations are gathered as they are loaded, or im2col over chunks of images
 * and clrun_gemm. Results do not depend on timing (every sum has a fixed order), so a training run
 * repeats bit for bit on one device.
 * ----------------------------------------------------------------------------------------------*/

/** The order of a 4-D activation's dimensions (and of the convolution's weights). */
typedef enum clrun_layout {
    CLRUN_NCHW = 0, /**< batch, channel, row, column (PyTorch's); weights K × C/groups × R × S */
    CLRUN_NHWC = 1  /**< batch, row, column, channel (channels last); weights K × R × S × C/groups */
} clrun_layout;

/** A 4-D activation: its layout, storage type and sizes. */
typedef struct clrun_tensor4 {
    clrun_layout layout; /**< CLRUN_NCHW (0) or CLRUN_NHWC */
    clrun_dtype type;    /**< CLRUN_F32 (0), CLRUN_F16 or CLRUN_BF16 */
    int n;               /**< images */
    int c;               /**< channels */
    int h;               /**< rows */
    int w;               /**< columns */
} clrun_tensor4;

/** How clrun_conv2d_* compute a convolution. */
typedef enum clrun_conv_algo {
    CLRUN_CONV_AUTO = 0,     /**< $CLRUN_CONV_ALGO, else the measured choice: GEMM on CPUs and on GPUs with matrix
                              *   units in f16/bf16, implicit elsewhere and for layers of few channels per group */
    CLRUN_CONV_IMPLICIT = 1, /**< clrun's implicit-GEMM kernels: tiles gathered from the tensors as they are loaded */
    CLRUN_CONV_GEMM = 2      /**< im2col over chunks of images (at most 32 MiB of columns on CPUs, 256 MiB on GPUs;
                              *   none for 1×1 NHWC layers of stride 1), the products by clrun_gemm (tensor cores on
                              *   NVIDIA, clrun's tuned kernels elsewhere), col2im for backward-data */
} clrun_conv_algo;

/** A 2-D convolution, as torch.nn.functional.conv2d: y[n, k, p, q] = bias[k] + Σ over c in k's
 *  group, r, s of w[k, c, r, s] · x[n, c, p·stride_h - pad_h + r·dilation_h, q·stride_w - pad_w +
 *  s·dilation_w] (x zero outside), P = (h + 2·pad_h - dilation_h·(r - 1) - 1) / stride_h + 1 and
 *  likewise Q. Zeroed members other than the sizes take PyTorch's defaults (stride 1, padding 0,
 *  dilation 1, one group). */
typedef struct clrun_conv2d_desc {
    clrun_tensor4 x;      /**< the input: layout, type (of x, w, bias, y and every gradient) and sizes */
    int k;                /**< output channels */
    int r;                /**< the filter's rows */
    int s;                /**< the filter's columns */
    int stride_h;         /**< 0 counts as 1 */
    int stride_w;         /**< 0 counts as 1 */
    int pad_h;            /**< zero rows added above and below */
    int pad_w;            /**< zero columns added left and right */
    int dilation_h;       /**< 0 counts as 1 */
    int dilation_w;       /**< 0 counts as 1 */
    int groups;           /**< 0 counts as 1; c and k must be multiples (groups = c = k: depthwise) */
    clrun_conv_algo algo; /**< CLRUN_CONV_AUTO (0) or a path to force */
} clrun_conv2d_desc;

/** The output's shape (*y: layout and type as the input's, n, k, P, Q), after checking d: CLRUN_INVALID_ARG
 *  names the first bad member (a size below 1, channels not a multiple of the groups, an output
 *  of no rows or columns, a tensor of 2^31 elements or more, a type other than f32, f16, bf16). */
CLRUN_API clrun_status clrun_conv2d_shape(clrun_ctx *ctx, const clrun_conv2d_desc *d, clrun_tensor4 *y);

/** y = conv2d(x, w) + bias (bias NULL: none). x, w, bias and y hold d->x.type elements. Queued. */
CLRUN_API clrun_status clrun_conv2d_forward(clrun_ctx *ctx, const clrun_conv2d_desc *d, clrun_buf *x, clrun_buf *w, clrun_buf *bias,
                                            clrun_buf *y);

/** dx = the gradient of the loss with respect to x, from dy (the output's gradient) and w. Queued. */
CLRUN_API clrun_status clrun_conv2d_backward_data(clrun_ctx *ctx, const clrun_conv2d_desc *d, clrun_buf *dy, clrun_buf *w, clrun_buf *dx);

/** dw (w's shape) and db (k elements; NULL: not computed) from x and dy. Written, not added to.
 *  Queued. */
CLRUN_API clrun_status clrun_conv2d_backward_weights(clrun_ctx *ctx, const clrun_conv2d_desc *d, clrun_buf *x, clrun_buf *dy, clrun_buf *dw,
                                                     clrun_buf *db);

/** Element-wise activations (torch.nn.functional.relu and gelu). */
typedef enum clrun_act {
    CLRUN_ACT_RELU = 0,     /**< max(x, 0); NaN stays NaN */
    CLRUN_ACT_GELU = 1,     /**< x · Φ(x) = x/2 · (1 + erf(x/√2)) (gelu, approximate="none") */
    CLRUN_ACT_GELU_TANH = 2 /**< x/2 · (1 + tanh(√(2/π)·(x + 0.044715·x³))) (approximate="tanh") */
} clrun_act;

/** y = act(x) over n elements of type t (f32, f16, bf16); y may be x. Queued. */
CLRUN_API clrun_status clrun_act_forward(clrun_ctx *ctx, clrun_act act, clrun_dtype t, size_t n, clrun_buf *x, clrun_buf *y);

/** dx = act'(x) · dy over n elements (ReLU's derivative is 0 at 0, as PyTorch's); dx may be dy.
 *  Queued. */
CLRUN_API clrun_status clrun_act_backward(clrun_ctx *ctx, clrun_act act, clrun_dtype t, size_t n, clrun_buf *x, clrun_buf *dy,
                                          clrun_buf *dx);

/** Name of an activation ("relu", "gelu", "gelu_tanh"), or NULL. */
CLRUN_API const char *clrun_act_name(clrun_act act);

/** Batch normalisation over (n, h, w) per channel, as torch.nn.BatchNorm2d. Every buffer holds c
 *  f32 values. */
typedef struct clrun_batchnorm {
    int training;            /**< nonzero: normalise with the batch's statistics and update the running ones */
    float momentum;          /**< running = (1 - momentum)·running + momentum·batch (PyTorch's 0.1); the
                            *   running variance takes the unbiased batch variance */
    float eps;               /**< added to the variance (PyTorch's 1e-5) */
    clrun_buf *gamma;        /**< the scale (NULL: 1) */
    clrun_buf *beta;         /**< the shift (NULL: 0) */
    clrun_buf *running_mean; /**< read in evaluation, updated in training (NULL in training: not kept) */
    clrun_buf *running_var;  /**< likewise */
    clrun_buf *save_mean;    /**< training: the batch's mean, for the backward pass (required) */
    clrun_buf *save_invstd;  /**< training: 1/sqrt(the batch's biased variance + eps) (required) */
} clrun_batchnorm;

/** y = gamma·(x - mean)·invstd + beta over the activation *t (y may be x). Training needs n·h·w ≥ 2.
 *  Queued. */
CLRUN_API clrun_status clrun_batchnorm_forward(clrun_ctx *ctx, const clrun_tensor4 *t, const clrun_batchnorm *bn, clrun_buf *x,
                                               clrun_buf *y);

/** The gradients of a training forward: dx (t's type), dgamma and dbeta (c f32 each; NULL: not
 *  computed), from x, dy and the statistics the forward saved. Queued. */
CLRUN_API clrun_status clrun_batchnorm_backward(clrun_ctx *ctx, const clrun_tensor4 *t, const clrun_batchnorm *bn, clrun_buf *x,
                                                clrun_buf *dy, clrun_buf *dx, clrun_buf *dgamma, clrun_buf *dbeta);

/** Pooling (torch.nn.functional.max_pool2d and avg_pool2d; global average pooling is a window of
 *  the whole image). */
typedef struct clrun_pool_desc {
    int max;               /**< nonzero: the maximum (NaN wins; the first maximum takes the gradient), else the mean */
    int kh;                /**< window rows */
    int kw;                /**< window columns */
    int stride_h;          /**< 0: the window's rows (PyTorch's default) */
    int stride_w;          /**< 0: the window's columns */
    int pad_h;             /**< at most half the window; max pooling pads with -inf */
    int pad_w;             /**< likewise */
    int count_include_pad; /**< average: divide by the whole window (PyTorch's default, 1) or by the cells inside the image (0) */
} clrun_pool_desc;

/** The output's shape for input *x (floor mode), after checking p. */
CLRUN_API clrun_status clrun_pool_shape(clrun_ctx *ctx, const clrun_tensor4 *x, const clrun_pool_desc *p, clrun_tensor4 *y);

/** y = pool(x). Queued. */
CLRUN_API clrun_status clrun_pool_forward(clrun_ctx *ctx, const clrun_tensor4 *x, const clrun_pool_desc *p, clrun_buf *xb, clrun_buf *y);

/** dx from dy (and, for max pooling, x, whose windows are searched again). Queued. */
CLRUN_API clrun_status clrun_pool_backward(clrun_ctx *ctx, const clrun_tensor4 *x, const clrun_pool_desc *p, clrun_buf *xb, clrun_buf *dy,
                                           clrun_buf *dx);

/** A linear layer, as torch.nn.functional.linear: y (rows × out, f32) = x (rows × in) · wᵀ + b, w
 *  out × in (PyTorch's order), x and w of type t (f32, f16, bf16: clrun_gemm's operands, so tensor
 *  cores where the device has them), b f32 (NULL: none). Queued. */
CLRUN_API clrun_status clrun_linear_forward(clrun_ctx *ctx, clrun_dtype t, size_t rows, size_t in, size_t out, clrun_buf *x, clrun_buf *w,
                                            clrun_buf *b, clrun_buf *y);

/** From dy (rows × out, f32): dx (rows × in, type t; NULL: not computed) = dy·w, dw (out × in, f32)
 *  = dyᵀ·x, db (out, f32; NULL: not computed) = the column sums of dy. Queued. */
CLRUN_API clrun_status clrun_linear_backward(clrun_ctx *ctx, clrun_dtype t, size_t rows, size_t in, size_t out, clrun_buf *x, clrun_buf *w,
                                             clrun_buf *dy, clrun_buf *dx, clrun_buf *dw, clrun_buf *db);

/** Softmax cross-entropy over rows × classes f32 logits and int32 labels in [0, classes), as
 *  torch.nn.functional.cross_entropy with log-sum-exp taken from the row's maximum: loss (rows f32;
 *  NULL: not written) gets each row's -log softmax at its label, dlogits (rows × classes f32; NULL:
 *  not written; may be logits) gets (softmax - one_hot) · grad_scale (1/rows for the mean's
 *  gradient, times the loss scale under AMP), pred (rows int32; NULL: not written) each row's first
 *  largest logit. A label outside [0, classes) gives that row a NaN loss and zero gradient. Queued. */
CLRUN_API clrun_status clrun_cross_entropy(clrun_ctx *ctx, size_t rows, size_t classes, clrun_buf *logits, clrun_buf *labels,
                                           float grad_scale, clrun_buf *loss, clrun_buf *dlogits, clrun_buf *pred);

/** Dropout in training (torch.nn.functional.dropout): mask (n bytes) = 1 with probability 1 - p
 *  from r's stream (clrun_rand's Bernoulli, r advanced), y = x · mask / (1 - p) over n elements of
 *  type t; p in [0, 1) (p = 0 copies x and sets every mask byte). Queued. */
CLRUN_API clrun_status clrun_dropout(clrun_ctx *ctx, clrun_dtype t, size_t n, float p, clrun_rand_desc *r, clrun_buf *x, clrun_buf *mask,
                                     clrun_buf *y);

/** dx = dy · mask / (1 - p). Queued. */
CLRUN_API clrun_status clrun_dropout_backward(clrun_ctx *ctx, clrun_dtype t, size_t n, float p, clrun_buf *mask, clrun_buf *dy,
                                              clrun_buf *dx);

/** SGD with momentum and weight decay, as torch.optim.SGD (maximize off). */
typedef struct clrun_sgd {
    float lr;           /**< the learning rate */
    float momentum;     /**< 0: plain SGD */
    float dampening;    /**< PyTorch's dampening (0) */
    float weight_decay; /**< L2: g += weight_decay·param */
    int nesterov;       /**< nonzero: Nesterov momentum */
} clrun_sgd;

/** One step over n f32 parameters from their f32 gradients; buf (n f32, the momentum buffer; NULL
 *  with momentum 0) is set to the gradient on the first step (first nonzero), as PyTorch's. Queued. */
CLRUN_API clrun_status clrun_sgd_step(clrun_ctx *ctx, const clrun_sgd *o, size_t n, clrun_buf *param, clrun_buf *grad, clrun_buf *buf,
                                      int first);

/** AdamW, as torch.optim.AdamW (amsgrad off). */
typedef struct clrun_adamw {
    float lr;           /**< PyTorch's 1e-3 */
    float beta1;        /**< 0.9 */
    float beta2;        /**< 0.999 */
    float eps;          /**< 1e-8 */
    float weight_decay; /**< decoupled: param ×= 1 - lr·weight_decay (PyTorch's 0.01) */
} clrun_adamw;

/** Step `step` (1 for the first) over n f32 parameters: m and v (n f32 each, zero before the first
 *  step) are the moments. Queued. */
CLRUN_API clrun_status clrun_adamw_step(clrun_ctx *ctx, const clrun_adamw *o, size_t n, clrun_buf *param, clrun_buf *grad, clrun_buf *m,
                                        clrun_buf *v, int64_t step);

/* ------------------------------------------------------------------------------------------------
 * Sorts (lib/ops/sort/sort.c, lib/ops/sort/sort.cl)
 *
 * Stable radix sorts along rows: 4 bits a pass (a 32-bit key takes 8), each pass a count, an
 * exclusive scan of the counts (clrun_scan) and a scatter, so no work-group waits on another and no
 * device needs forward progress between them. The order is NumPy's np.sort / np.argsort(kind=
 * "stable"): integers by value, floats with -0.0 equal to 0.0 and every NaN last (first with
 * CLRUN_SORT_DESCENDING), equal keys in their original order. Keys move with their bits unchanged,
 * so the result is bit for bit NumPy's stable sort. Key types: every integer type, bool, float16,
 * bfloat16, float32, float64 (read as bits: no fp64 needed). A sort of several rows sorts the row
 * number's digits last (one more pass per 16 rows' factor). Fewer than 2^32 elements in all.
 *
 * Memory: clrun_sort of one row takes one temporary the size of the keys (plus 64 bytes per 4,096
 * elements on CPUs, per 2,048 on GPUs); with several rows, and clrun_argsort, clrun_sort_pairs and
 * clrun_topk, also two of 4 bytes per element for the indices (argsort and topk: a second of the
 * keys' size; pairs and topk: one of the values'). Each call is queued and frees its temporaries
 * once the queued kernels are done with them.
 * ----------------------------------------------------------------------------------------------*/

/** Flags of the sorts. */
#define CLRUN_SORT_DESCENDING 1u /**< largest first (NaN first); equal keys still in their original order */

/** Sort each of `rows` rows of n keys of type t (row r at in_off + r·n) into out (the same layout
 *  from out_off). In place when in and out are one buffer at one offset. Queued. */
CLRUN_API clrun_status clrun_sort(clrun_ctx *ctx, clrun_dtype t, unsigned flags, clrun_buf *in, size_t in_off, clrun_buf *out,
                                  size_t out_off, size_t rows, size_t n);

/** The stable sorting permutation of each row: idx (int64, from element idx_off, rows of n) gets,
 *  for each place of the sorted row, the position within the row of the key that goes there
 *  (np.argsort(kind="stable") along the last axis). The keys are not changed. Queued. */
CLRUN_API clrun_status clrun_argsort(clrun_ctx *ctx, clrun_dtype t, unsigned flags, clrun_buf *in, size_t in_off, clrun_buf *idx,
                                     size_t idx_off, size_t rows, size_t n);

/** Sort keys (type t) and move vals (type vt, any type, one value per key) with them, both in
 *  place, rows of n, stable. Queued. */
CLRUN_API clrun_status clrun_sort_pairs(clrun_ctx *ctx, clrun_dtype t, unsigned flags, clrun_buf *keys, size_t keys_off, clrun_buf *vals,
                                        size_t vals_off, clrun_dtype vt, size_t rows, size_t n);

/** The k smallest keys of each row (with CLRUN_SORT_DESCENDING the k largest, as torch.topk's
 *  default), in order, into vals (type t, rows of k from vals_off) and their positions within the
 *  row into idx (int64, rows of k from idx_off). Ties keep the earlier position first. k ≤ n.
 *  Queued. */
CLRUN_API clrun_status clrun_topk(clrun_ctx *ctx, clrun_dtype t, unsigned flags, clrun_buf *in, size_t in_off, size_t rows, size_t n,
                                  size_t k, clrun_buf *vals, size_t vals_off, clrun_buf *idx, size_t idx_off);

/* ------------------------------------------------------------------------------------------------
 * Reductions (lib/ops/reduce/reduce.c, lib/ops/reduce/reduce.cl)
 *
 * Over n elements of an f32 or f16 buffer from element offset off; blocking (the result is on the
 * host when the call returns).
 *  - sum, dot and norm2 accumulate in f32 with compensation (Neumaier per lane, exact product
 *    errors for dot and norm2, a pairwise tree across work-items) and combine partial results in
 *    double. Error bound, with u = 2^-24 and S = sum of |terms| (|x_i|, or |x_i·y_i|):
 *        |result - exact| <= 8·u·S + 4·u²·n·S
 *    i.e. about 5e-7·S whatever n is (tested at n = 10^8 against an fp64 reference). Terms or sums
 *    beyond the f32 range overflow to inf (norm2 does not rescale).
 *  - max and min propagate NaN: any NaN gives NaN (as NumPy's max). argmax gives the index of the
 *    first NaN if there is one, else of the first largest element (as NumPy's argmax).
 *  - sum, dot and norm2 of n = 0 are 0; max, min and argmax of n = 0 are CLRUN_INVALID_ARG.
 * ----------------------------------------------------------------------------------------------*/

/** The sum of the n elements. */
CLRUN_API clrun_status clrun_sum(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t off, size_t n, double *result);
/** The dot product of n elements of x and of y. */
CLRUN_API clrun_status clrun_dot(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t x_off, clrun_buf *y, size_t y_off, size_t n,
                                 double *result);
/** The Euclidean norm (square root of the sum of squares). */
CLRUN_API clrun_status clrun_norm2(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t off, size_t n, double *result);
/** The largest element (NaN if any is NaN). */
CLRUN_API clrun_status clrun_max(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t off, size_t n, float *result);
/** The smallest element (NaN if any is NaN). */
CLRUN_API clrun_status clrun_min(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t off, size_t n, float *result);
/** The index (from off) of the first NaN, else of the first largest element. */
CLRUN_API clrun_status clrun_argmax(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t off, size_t n, size_t *index);

/* ------------------------------------------------------------------------------------------------
 * Conversions (lib/io/half.c on the host, lib/ops/convert/convert.c and lib/ops/convert/convert.cl on the device)
 *
 * f32 -> f16: IEEE binary16, round to nearest even, subnormals kept, |x| >= 65520 -> inf, NaN stays
 * NaN. f32 -> bf16: the top 16 bits of the f32 pattern rounded to nearest even, any NaN -> 0x7FC0
 * (as PyTorch). f16, bf16 -> f32: exact.
 * ----------------------------------------------------------------------------------------------*/
/** One value f32 -> f16 bits, on the host. */
CLRUN_API uint16_t clrun_f32_to_f16(float f);
/** One value f16 bits -> f32, on the host. */
CLRUN_API float clrun_f16_to_f32(uint16_t h);
/** One value f32 -> bf16 bits, on the host. */
CLRUN_API uint16_t clrun_f32_to_bf16(float f);
/** One value bf16 bits -> f32, on the host. */
CLRUN_API float clrun_bf16_to_f32(uint16_t b);

/** Convert n elements of src (type from, from element src_off) into dst (type to, from element
 *  dst_off) on the device: f32 -> f16, f16 -> f32, f32 -> bf16, bf16 -> f32 (others are
 *  CLRUN_UNSUPPORTED), with the host converters' results bit for bit. Asynchronous. */
CLRUN_API clrun_status clrun_cast(clrun_ctx *ctx, clrun_buf *src, size_t src_off, clrun_dtype from, clrun_buf *dst, size_t dst_off,
                                  clrun_dtype to, size_t n);

/* ------------------------------------------------------------------------------------------------
 * Matrix multiply (lib/ops/gemm/, cl/gemm*.cl)
 *
 * C = alpha·op(A)·op(B) + beta·C, row-major, A and B in f32, f16 or bf16 (desc.type), C and all
 * arithmetic in f32 (f16/bf16 elements are widened exactly): element (i, j) of a matrix X with leading
 * dimension ldx is X[off + i·ldx + j]. op(A) is M×K (A is stored K×M when trans_a), op(B) is K×N
 * (B is stored N×K when trans_b), C is M×N. Any M, N, K ≥ 0: K = 0 gives beta·C; beta = 0 never
 * reads C (NaNs in it are ignored). With batch > 1, product b uses the matrices at offsets
 * off + b·stride (strided batched GEMM). Queued; read C with clrun_download or call clrun_finish.
 * ----------------------------------------------------------------------------------------------*/

/** Which kernel family runs a product (clrun_gemm_desc.backend). */
typedef enum clrun_gemm_backend {
    CLRUN_GEMM_AUTO = 0,       /**< the fastest for the product: the device's matrix units for f16/bf16,
                                  INT8 and 2:4 products where it has them (rows not on 16 bytes are
                                  staged, for f16/bf16 only in products of 1 GFLOP or more); for f32 the
                                  tuning file's fastest backend for the shape class (clrun tune gemm,
                                  which times 3xTF32 on the matrix units too); without one, the matrix
                                  units (3xTF32) for products of 2^32 flops or more where the device
                                  has them; else clrun's kernel for the device class (GPU- or CPU-shaped) */
    CLRUN_GEMM_GPU_KERNEL = 1, /**< "gpu-kernel": the portable kernels (lib/ops/gemm/portable/); local-memory tiles, any GPU */
    CLRUN_GEMM_CPU_KERNEL = 2, /**< "cpu-kernel": lib/ops/gemm/cpu/; no local memory, wide vectors, large blocks */
    CLRUN_GEMM_CLBLAST = 3,    /**< "clblast": CLBlastSgemm / CLBlastSgemmStridedBatched (f32 only), when built with CLBlast */
    CLRUN_GEMM_KERNEL = 4,     /**< "kernel": clrun's kernel for the device class, whatever the tuning file says */
    CLRUN_GEMM_TENSOR = 5,     /**< "tensor": the device's matrix units, the first of their backends that
                                * runs here and takes the product, in the order of
                                * lib/ops/gemm/backends.def (clrun_gemm_tensor_kernel says which; on
                                * NVIDIA GPUs CLRUN_GEMM_WGMMA, then CLRUN_GEMM_MMA_SYNC). f16/bf16
                                * products exact, summed in f32; f32 inputs as 3xTF32 (each operand
                                * split into a tf32 high part and a tf32 residual, three products summed
                                * in f32: the f32 kernels' accuracy, on matrix units); s8 exact in
                                * int32; 2:4 f16/bf16 through sparse instructions. CLRUN_UNSUPPORTED
                                * where there are none. Operands whose rows, offsets or batch strides
                                * are not on 16 bytes (or, for s8, not A M×K and B N×K) are copied into
                                * that layout first (the context's scratch memory, one pass over each). */
    CLRUN_GEMM_MMA_SYNC = 6,   /**< "mma.sync": NVIDIA's mma.sync (lib/ops/gemm/nv/), any NVIDIA GPU from sm_80 (f32 as 3xTF32,
                                *   f16, bf16, s8, 2:4) */
    CLRUN_GEMM_WGMMA = 7       /**< "wgmma": NVIDIA Hopper's warpgroup MMA (lib/ops/gemm/nv/; f16, bf16, s8; 2:4 f16/bf16
                                *   where TMA tensor maps can be made) */
} clrun_gemm_backend;

/** One product C = alpha·op(A)·op(B) + beta·C, or a strided batch of them (clrun_gemm). A zeroed
 *  descriptor is f32, no transposes, one product, CLRUN_GEMM_AUTO. */
typedef struct clrun_gemm_desc {
    int trans_a;                /**< nonzero: op(A) = Aᵀ (A is stored K×M) */
    int trans_b;                /**< nonzero: op(B) = Bᵀ (B is stored N×K) */
    size_t m;                   /**< rows of C and of op(A) */
    size_t n;                   /**< columns of C and of op(B) */
    size_t k;                   /**< columns of op(A), rows of op(B) */
    float alpha;                /**< scales the product */
    float beta;                 /**< scales C before the product is added (0: C is only written) */
    clrun_buf *a;               /**< A's buffer */
    size_t a_off;               /**< A's first element, in elements */
    size_t lda;                 /**< A's leading dimension (row pitch), in elements */
    size_t stride_a;            /**< elements from one batch's A to the next */
    clrun_buf *b;               /**< B's buffer */
    size_t b_off;               /**< B's first element, in elements */
    size_t ldb;                 /**< B's leading dimension, in elements */
    size_t stride_b;            /**< elements from one batch's B to the next */
    clrun_buf *c;               /**< C's buffer (f32, or as the call says) */
    size_t c_off;               /**< C's first element, in elements */
    size_t ldc;                 /**< C's leading dimension, in elements */
    size_t stride_c;            /**< elements from one batch's C to the next */
    size_t batch;               /**< 0 or 1: one product */
    clrun_gemm_backend backend; /**< the kernel family; CLRUN_GEMM_AUTO (0) chooses */
    int fast;                   /**< 0 (default): clrun's kernels sum each slice of K apart and then into the result,
               * about three times more accurate than a plain f32 loop (max relative error against
               * fp64); 1: one running sum per element, as a plain loop (with fma) but faster (about
               * 7% on the H200, 10% on AVX-512 CPUs). CLBlast and the matrix-unit kernels
               * ignore it. */
    clrun_dtype type;           /**< element type of A and B: CLRUN_F32 (0, the default), CLRUN_F16
                           * or CLRUN_BF16 (offsets, leading dimensions and strides count their
                           * elements); C is f32 whatever the type. CLBlast takes f32 only. */
    size_t whole_m;             /**< 0, or the M of a whole product of which this call computes a block of rows
                       * (starting at a multiple of 128): the kernel configuration is then chosen for
                       * whole_m × n × k, so that blocks computed apart (clrun_group_gemm) give the
                       * whole product's bits */
} clrun_gemm_desc;

/** Fill d for the product C = op(A)·op(B) of packed row-major matrices, the usual case: every member
 *  zeroed, then type, batch (0 means 1), m, n, k, trans_a, trans_b, alpha 1, beta 0, the leading
 *  dimensions of packed storage (lda = trans_a ? m : k, ldb = trans_b ? k : n, ldc = n), the batch
 *  strides of whole matrices (m·k, k·n, m·n) and CLRUN_GEMM_AUTO. The caller sets a, b and c, and
 *  any member that differs (alpha, beta, offsets, a backend). Nothing happens when d is NULL. */
CLRUN_API void clrun_gemm_desc_init(clrun_gemm_desc *d, clrun_dtype type, size_t batch, size_t m, size_t n, size_t k, int trans_a,
                                    int trans_b);

/** Run the product described by d. Leading dimensions must cover the rows (lda ≥ K, or ≥ M when
 *  trans_a; likewise ldb, ldc ≥ N) and every matrix of every batch must lie inside its buffer, else
 *  CLRUN_INVALID_ARG names the operand. CLRUN_UNSUPPORTED, with the reason, when d->backend names a
 *  backend that is not here (CLBlast not built in, no matrix units) or does not take the product
 *  (CLBlast with f16). Dimensions are limited to 2^32 - 1. */
CLRUN_API clrun_status clrun_gemm(clrun_ctx *ctx, const clrun_gemm_desc *d);

/** 1 when CLRUN_GEMM_TENSOR runs f32, f16 and bf16 products on this context's device: a device with
 *  matrix units one of clrun's backends reaches (today NVIDIA GPUs, whose OpenCL compiler built and
 *  ran clrun's probe product correctly; checked once per context, on first use). 0 elsewhere, with
 *  the reason in clrun_last_error(ctx) when a probe was tried and failed. */
CLRUN_API int clrun_gemm_tensor_cores(clrun_ctx *ctx);

/** Which matrix-unit kernel CLRUN_GEMM_TENSOR runs for inputs of this type (clrun_gemm, and
 *  clrun_gemm_s8 with CLRUN_I8), by its backend name: on NVIDIA GPUs "wgmma" (Hopper's asynchronous
 *  warpgroup instructions, sm_90a, reached by rewriting the compiled PTX: f16, bf16, s8) or
 *  "mma.sync" (f32 as 3xTF32 always); NULL where the device has no matrix units clrun reaches, or
 *  for another type.
 *  Each kernel is probed once per context on first use (an exact small product); a wgmma probe that
 *  fails leaves "mma.sync", and $CLRUN_NO_WGMMA=1 skips it. */
CLRUN_API const char *clrun_gemm_tensor_kernel(clrun_ctx *ctx, clrun_dtype type);

/** 1 when libclrun was built with the CLBlast backend. */
CLRUN_API int clrun_have_clblast(void);

/** Where clrun_gemm_tune (`clrun tune gemm`) stores what it measured best on this context's
 *  device (a text file in the cache folder, keyed by platform, device and driver), written into
 *  buf. NULL when the cache is off. The file holds lines "ROW KEY V,V,...": the tiles backend ROW
 *  (clrun_gemm_backend_name) uses for products of KEY (the row's own keys: the shape classes small,
 *  large, small-fast, large-fast for gpu-kernel, where a product is large when it has at least two
 *  128×128 tiles per compute unit and -fast means desc.fast = 1; f16, f32, s8, sp for mma.sync
 *  and cpu-kernel; f16, s8, sp with -large from 2^39 flops for wgmma; docs/CLI.md lists the
 *  parameters); and lines "auto CLASS ROW": the backend CLRUN_GEMM_AUTO takes for f32 products
 *  of the class. When it exists, clrun_gemm uses its tiles instead of the built-in ones
 *  ($CLRUN_GEMM_TILES still wins) and its backends for auto. */
CLRUN_API const char *clrun_gemm_tuning_path(const clrun_ctx *ctx, char *buf, size_t size);

/** Options of clrun_gemm_tune. Zeroed: N 4096 on GPUs and 256 elsewhere, the whole space, nothing
 *  stored, no progress. */
typedef struct clrun_gemm_tune_opts {
    size_t size; /**< the large size N (16 to 65536; 0: the default); small products are (N/4)³ */
    int quick;   /**< 1: a handful of candidate tiles per product instead of the whole space */
    int store;   /**< 1: write the winners to the device's tuning file (clrun_gemm_tuning_path) */
    /** NULL, or called with each line of progress (no newline) as it is measured */
    void (*progress)(void *user, const char *line);
    void *user; /**< passed to progress */
} clrun_gemm_tune_opts;

/** One winner of clrun_gemm_tune. */
typedef struct clrun_gemm_tuned {
    char backend[16]; /**< the row ("gpu-kernel", "wgmma", ...), or "auto" for a shape class's fastest backend */
    char key[24];     /**< the row's key of the product ("large", "f16-large", ...), or for "auto" the class */
    char value[64];   /**< the fastest tiles "V,V,...", or for "auto" the fastest backend's name */
    double gflops;    /**< its speed on the product, GFLOP/s */
} clrun_gemm_tuned;

/** Measure GEMM's tiles on this context's device: for every backend with tile parameters that runs
 *  here, on each of the products it is tuned on (by element type, shape class or size band), every
 *  candidate set of its space, each result checked against the first candidate's (s8 exactly,
 *  floats within 1e-3 relative); then, for f32 products of each shape class, every backend with
 *  its fastest tiles. Writes up to max winners to out (the rows' then the classes'; *count says
 *  how many, out may be NULL with max 0) and, with opts->store, the tuning file (replaced whole,
 *  safely). The first candidate of a product failing is an error; later ones are skipped. The
 *  context's GEMM uses the winners at once. */
CLRUN_API clrun_status clrun_gemm_tune(clrun_ctx *ctx, const clrun_gemm_tune_opts *opts, clrun_gemm_tuned *out, size_t max, size_t *count);

/** The backend's name as the tuning file and the CLI write it: "auto", "kernel", "tensor",
 *  "wgmma", "mma.sync", "gpu-kernel", "cpu-kernel", "clblast"; "?" for an invalid value. Static
 *  storage. */
CLRUN_API const char *clrun_gemm_backend_name(clrun_gemm_backend b);

/** The backend named `name` (the names clrun_gemm_backend_name gives, exactly), into *out. An
 *  unknown name is CLRUN_INVALID_ARG with a text that lists the names. */
CLRUN_API clrun_status clrun_gemm_backend_parse(const char *name, clrun_gemm_backend *out);

/** The backend clrun_gemm (or clrun_gemm_s8, for d->type CLRUN_I8) would run d on: d->backend
 *  resolved to the one backend that runs it (CLRUN_GEMM_AUTO, CLRUN_GEMM_KERNEL and
 *  CLRUN_GEMM_TENSOR by their rules) — CLRUN_GEMM_GPU_KERNEL, CLRUN_GEMM_CPU_KERNEL,
 *  CLRUN_GEMM_CLBLAST, CLRUN_GEMM_MMA_SYNC or CLRUN_GEMM_WGMMA — or d->backend itself when that
 *  cannot run here. For logs, benchmarks and tests; d is not checked. */
CLRUN_API clrun_gemm_backend clrun_gemm_resolve(clrun_ctx *ctx, const clrun_gemm_desc *d);

/* ------------------------------------------------------------------------------------------------
 * Dynamic loss scaling (lib/ops/amp/amp.c, lib/ops/amp/amp.cl), with the semantics of PyTorch's GradScaler
 *
 * A training step: multiply the loss (or the gradient it seeds backpropagation with) by
 * scaler.scale; backpropagate; clrun_scaler_unscale the gradients (one launch per 8 buffers checks
 * them for inf/NaN and multiplies them by 1/scale); clrun_scaler_update, which says whether a
 * gradient was not finite: then skip the optimizer step. The scale backs off on overflow and grows
 * after growth_interval clean steps in a row, exactly as torch.cuda.amp.GradScaler does it.
 * ----------------------------------------------------------------------------------------------*/

/** A dynamic loss scaler with the state and semantics of torch.cuda.amp.GradScaler. */
typedef struct clrun_scaler {
    float scale;           /**< current loss scale (f32, as PyTorch keeps it); init 65536 */
    double growth_factor;  /**< > 1; init 2 (double, as PyTorch passes it: products are rounded to f32 once) */
    double backoff_factor; /**< in (0, 1); init 0.5 */
    int growth_interval;   /**< ≥ 1; init 2000 */
    int growth_tracker;    /**< clean steps since the scale last changed or backed off */
    clrun_buf *found_inf;  /**< device flag (4 bytes), made by the first unscale; freed by clrun_scaler_free */
} clrun_scaler;

/** One gradient buffer for clrun_scaler_unscale: n elements of type (f32, f16 or bf16) from
 *  element off. */
typedef struct clrun_grad {
    clrun_buf *buf;   /**< the gradient's buffer */
    size_t off;       /**< first element, in elements */
    size_t n;         /**< elements */
    clrun_dtype type; /**< CLRUN_F32, CLRUN_F16 or CLRUN_BF16 */
} clrun_grad;

/** PyTorch's defaults: scale 65536, growth 2, backoff 0.5, interval 2000, tracker 0. */
CLRUN_API void clrun_scaler_init(clrun_scaler *s);

/** Free the scaler's device flag (the scaler may be used again: it makes a new one). NULL is
 *  ignored. */
CLRUN_API void clrun_scaler_free(clrun_scaler *s);

/** For every element of every gradient: if it is inf or NaN set the scaler's found-inf flag (which
 *  collects every unscale since the last update, as GradScaler does over optimizers), and multiply it by inv_scale = (float)(1.0 / (double)scale) in f32 (non-finite values are
 *  multiplied too; f16/bf16 results rounded to nearest even). One launch per 8 gradients; queued.
 *  CLRUN_INVALID_ARG for a range outside its buffer, an unknown type or a scale that is not a
 *  positive finite number. */
CLRUN_API clrun_status clrun_scaler_unscale(clrun_ctx *ctx, clrun_scaler *s, const clrun_grad *grads, size_t count);

/** Read the flag the unscales since the last update left (waits for them) into *found_inf (1: skip
 *  this step's optimizer update), clear it, and update the scale: on found_inf, scale ×= backoff_factor and the tracker resets to 0;
 *  otherwise the tracker counts the step and, when it then equals growth_interval, scale ×=
 *  growth_factor if the product is finite in f32, and the tracker resets to 0. Without an unscale since the last update,
 *  the step counts as clean. CLRUN_INVALID_ARG for factors or an interval out of range. */
CLRUN_API clrun_status clrun_scaler_update(clrun_ctx *ctx, clrun_scaler *s, int *found_inf);

/* ------------------------------------------------------------------------------------------------
 * INT8 quantization (lib/ops/quant/quant.c, lib/ops/quant/quant.cl)
 *
 * f32 -> s8 with PyTorch's arithmetic for qint8 (torch.quantize_per_tensor / quantize_per_channel):
 *     inv = 1.0f / scale (f32),  q = clamp(zero_point + rint(x · inv), -128, 127)
 * with rint rounding half to even and the addition in f32 (as PyTorch's int64 + float is); ±inf
 * saturate, NaN gives the zero point. Back: x = (float)(q - zero_point) · scale in f32 (one
 * rounding), as torch.dequantize. Per tensor (channels 0 or 1) or per channel: element i of a
 * row-major array belongs to channel (i / inner) % channels, inner being the product of the
 * dimensions after the channel axis.
 * ----------------------------------------------------------------------------------------------*/

/** Quantization parameters: per tensor or per channel. */
typedef struct clrun_qparams {
    size_t channels;           /**< 0 or 1: per tensor; else the length of the channel axis */
    size_t inner;              /**< per channel: elements per step along the axis (product of the later dimensions) */
    const float *scale;        /**< host array, one per channel: positive and finite */
    const int32_t *zero_point; /**< host array, one per channel: -128 to 127 */
} clrun_qparams;

/** n f32 elements of x from element x_off into n s8 elements of q from q_off (queued). */
CLRUN_API clrun_status clrun_quantize(clrun_ctx *ctx, clrun_buf *x, size_t x_off, clrun_buf *q, size_t q_off, size_t n,
                                      const clrun_qparams *p);

/** n s8 elements of q from q_off into n f32 elements of x from x_off (queued). */
CLRUN_API clrun_status clrun_dequantize(clrun_ctx *ctx, clrun_buf *q, size_t q_off, clrun_buf *x, size_t x_off, size_t n,
                                        const clrun_qparams *p);

/** Scales and zero points (one per channel; channels and inner as in clrun_qparams) from the
 *  range of host data x, as torch.ao.quantization's MinMaxObserver computes them for qint8 in f32:
 *  symmetric: scale = max(|min|, max) / 127.5, zero point 0; affine: scale = (max - min) / 255 and
 *  zero point = -128 - round(min / scale), clamped; min taken ≤ 0 and max ≥ 0; scale at least f32's
 *  epsilon. percentile 100 uses the range itself; below 100 the nearest-rank percentile from the
 *  top for max and from the bottom for min, which clips outliers. Non-finite values are ignored. */
CLRUN_API clrun_status clrun_quant_calibrate(const float *x, size_t n, size_t channels, size_t inner, int symmetric, double percentile,
                                             float *scale, int32_t *zero_point);

/** The fused epilogue of an INT8 linear layer (clrun_gemm_s8): C is f32,
 *  C[i][j] = relu?( ((float)acc · row_scale[i]) · col_scale[j] + bias[j] ), each operation rounded
 *  apart in f32. A NULL buffer leaves its step out. */
typedef struct clrun_s8_epilogue {
    clrun_buf *row_scale; /**< m floats (e.g. A's per-row quantization scales), or NULL */
    clrun_buf *col_scale; /**< n floats (e.g. B's per-column scales), or NULL */
    clrun_buf *bias;      /**< n floats, or NULL */
    int relu;             /**< 1: max(v, 0) last */
} clrun_s8_epilogue;

/** INT8 GEMM: op(A)·op(B) with A and B s8 (d->type CLRUN_I8; offsets, leading dimensions and
 *  strides in elements, transposes and batches as clrun_gemm takes them), accumulated exactly in
 *  int32 (K up to 131072). Without an epilogue C is int32: C = acc, or C + acc with beta 1; with
 *  one, C is f32 as clrun_s8_epilogue says. alpha must be 1. The same result on every device, equal
 *  to NumPy's int64 matmul. d->backend chooses the kernel as for clrun_gemm (gpu-kernel, cpu-kernel,
 *  tensor, mma.sync, wgmma; CLBlast has none). Queued. */
CLRUN_API clrun_status clrun_gemm_s8(clrun_ctx *ctx, const clrun_gemm_desc *d, const clrun_s8_epilogue *e);

/* ------------------------------------------------------------------------------------------------
 * 2:4 structured sparsity (lib/ops/sparse/sparse.c, lib/ops/sparse/sparse.cl; the GEMM in lib/ops/gemm/)
 *
 * A matrix of R rows × K columns is 2:4 sparse along K when every group of 4 consecutive elements
 * of a row (columns 4g .. 4g+3; a last, partial group counts as padded with zeros) holds at most 2
 * nonzeros. Pruning keeps in each group the 2 elements of largest magnitude (ties to the lower
 * column; NaN counts as infinite) and zeroes the others. The compressed form, the operand of
 * NVIDIA's sparse tensor-core instructions (mma.sp m16n8k32 with ordered metadata, and Hopper's
 * wgmma.mma_async.sp, each thread given the same words) and of clrun_gemm_sp:
 *   values: R rows of clrun_sp24_kv(K) = 2·⌈K/4⌉ elements of the matrix's type: group g's two kept
 *           elements, lower column first, at 2g and 2g+1;
 *   meta:   R rows of clrun_sp24_km(K) = ⌈K/32⌉ uint32: word w of a row holds groups 8w .. 8w+7,
 *           group g in bits 4(g mod 8) .. 4(g mod 8)+3: the lower kept column (0-3 within the group) in
 *           the low 2 bits, the higher in the next 2 (always two distinct columns). Bits of groups past
 *           the row's end are 0x4 (columns 0 and 1).
 * Element types: CLRUN_F32, CLRUN_F16, CLRUN_BF16. Rows of values and meta are packed (leading
 * dimension kv and km); the dense matrix has leading dimension ld ≥ K and starts at element off.
 * ----------------------------------------------------------------------------------------------*/

/** Elements per compressed row: 2·⌈k/4⌉. */
CLRUN_API size_t clrun_sp24_kv(size_t k);
/** uint32 metadata words per row: ⌈k/32⌉. */
CLRUN_API size_t clrun_sp24_km(size_t k);

/** Check host metadata (rows packed rows of clrun_sp24_km(k) words) before it is uploaded: every
 *  group of a row names two distinct columns, the lower first (its nibble is one of 0x4, 0x8, 0xC,
 *  0x9, 0xD, 0xE); bits past the row's last group are not read. CLRUN_FORMAT_ERROR names the first
 *  bad row and group (also in *bad_row and *bad_group when not NULL). Metadata in device buffers is
 *  trusted by clrun_sp24_decompress and clrun_gemm_sp: check it here where it comes from a file or
 *  a user (the CLI and the Python package do), since the two would read a bad group differently. */
CLRUN_API clrun_status clrun_sp24_meta_check(const uint32_t *meta, size_t rows, size_t k, size_t *bad_row, size_t *bad_group);

/** Prune the rows × k matrix x (type t, from element off, leading dimension ld) to 2:4 in place (queued). */
CLRUN_API clrun_status clrun_sp24_prune(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t off, size_t ld, size_t rows, size_t k);

/** Prune and compress x (as clrun_sp24_prune chooses; x is not changed) into values and meta, both
 *  from their start (queued). */
CLRUN_API clrun_status clrun_sp24_compress(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t off, size_t ld, size_t rows, size_t k,
                                           clrun_buf *values, clrun_buf *meta);

/** Expand values and meta back into the dense rows × k matrix x (zeros where pruned; queued).
 *  Metadata is trusted (clrun_sp24_meta_check checks it on the host); writes stay within the row. */
CLRUN_API clrun_status clrun_sp24_decompress(clrun_ctx *ctx, clrun_dtype t, clrun_buf *values, clrun_buf *meta, size_t rows, size_t k,
                                             clrun_buf *x, size_t off, size_t ld);

/** Sparse GEMM: C = alpha·A·op(B) + beta·C with A 2:4 compressed: d->a holds its values (d->type
 *  f32, f16 or bf16; d->lda ≥ clrun_sp24_kv(K) elements between rows, d->a_off, d->stride_a per
 *  batch) and meta its metadata (packed rows of clrun_sp24_km(K) words from word meta_off, batches
 *  M rows apart); trans_a must be 0. B, C, batches, alpha, beta as clrun_gemm; C is f32. The products
 *  and sums are those of the dense mixed GEMM on the decompressed A with its zero terms left out:
 *  on CPUs and portable GPU kernels each element is one f32 sum in the order of K, so its error is
 *  within the f32 accumulation bound of that dense sum (K/2·u·Σ|a||b|); on NVIDIA's tensor cores
 *  (mma.sp; on Hopper wgmma.mma_async.sp) the sums are the tensor cores' own. d->backend chooses the
 *  kernel as for clrun_gemm (gpu-kernel, cpu-kernel, or tensor, mma.sync and wgmma, which take f16
 *  and bf16; wgmma's where the CUDA driver makes TMA tensor maps, and under auto or tensor only for
 *  products of 2^30 flops and more, mma.sync's below). Under CLRUN_GEMM_AUTO,
 *  where the sparse product would run on tensor cores, a sparse product is never slower than the
 *  dense one: the first time a shape comes (per context) both are timed — the sparse kernel, and
 *  the dense kernels on the decompressed A, decompression included — and the faster runs from then
 *  on ($CLRUN_VERBOSE says which); the dense way's sums are the dense GEMM's. Queued (the first
 *  call of a shape waits for the context's queues while it measures). */
CLRUN_API clrun_status clrun_gemm_sp(clrun_ctx *ctx, const clrun_gemm_desc *d, clrun_buf *meta, size_t meta_off);

/* ------------------------------------------------------------------------------------------------
 * Images and Canny edge detection (lib/io/image.c, lib/ops/canny/)
 * ----------------------------------------------------------------------------------------------*/

/** An 8-bit image in host memory: rows of width·channels bytes, stride bytes apart; channels 1
 *  (gray) or 3 (R, G, B in that order). */
typedef struct clrun_image {
    size_t width;        /**< pixels per row */
    size_t height;       /**< rows */
    size_t stride;       /**< bytes from one row to the next (≥ width·channels) */
    unsigned channels;   /**< 1 (gray) or 3 (R, G, B) */
    unsigned char *data; /**< the rows; malloc'd and owned by the image for clrun_image_new and the readers */
} clrun_image;

/** Allocate a zeroed image (stride = width·channels). channels must be 1 or 3. */
CLRUN_API clrun_status clrun_image_new(clrun_image *img, size_t width, size_t height, unsigned channels);

/** Free the image's data and clear it. NULL is ignored. */
CLRUN_API void clrun_image_free(clrun_image *img);

/** Read a PNG (libpng: gray, gray+alpha, RGB, RGBA, palette with or without transparency; 1–16
 *  bits, 16-bit reduced to the high byte and alpha dropped, as OpenCV's imread does), a JPEG
 *  (libjpeg-turbo: baseline or progressive, gray, YCbCr or RGB, any subsampling, decoded with
 *  libjpeg's defaults to the pixels cv2.imread returns; CMYK refused) or a binary PGM/PPM (P5/P6,
 *  maxval 255, or up to 65535 reduced to the high byte). Gray and gray+alpha give 1 channel, the
 *  rest 3. The format comes from the file's first bytes.
 *  - EXIF orientation (a JPEG's APP1 Exif block, a PNG's eXIf chunk, read with libexif) is applied
 *    as cv2.imread applies it: 2 mirrors, 3 turns 180°, 4 flips, 5 transposes, 6 turns 90°
 *    clockwise, 7 transverses, 8 turns 90° counter-clockwise; width and height swap for 5–8.
 *  - An image over 2^30 pixels (cv2.imread's limit) or that decodes to more than 2 GiB (width ×
 *    height × channels) is refused from its header, before anything is decoded or allocated.
 *  - A damaged or truncated JPEG (a file cut short, corrupt scan data: what libjpeg warns about and
 *    would fill in) is an error, CLRUN_FORMAT_ERROR naming the file and libjpeg's words, where
 *    cv2.imread warns and returns the filled-in image: decoding stops at the first such warning,
 *    so a small file whose header claims a huge image fails at once.
 *  CLRUN_FORMAT_ERROR names what is wrong with a bad file. */
CLRUN_API clrun_status clrun_image_read(const char *path, clrun_image *out);

/** The shape clrun_image_read would give the file (width and height after its EXIF orientation,
 *  channels, stride = width·channels), from its header alone: data is NULL and nothing is decoded
 *  or allocated. The same refusals as clrun_image_read for a header it would refuse. For
 *  budgeting memory before decoding (the CLI's batches do). */
CLRUN_API clrun_status clrun_image_info(const char *path, clrun_image *shape);

/** Write an image as PNG (with cv2.imwrite's default settings, for its speed and size: the Sub
 *  filter, zlib's fastest level, run-length strategy), as JPEG when path ends in .jpg/.jpeg/.jpe
 *  (cv2.imwrite's default: quality 95, 4:2:0 for color), or as PGM/PPM when path ends in
 *  .pgm/.ppm/.pnm; other image formats' extensions (.bmp, .tif, .webp, ...) are refused with
 *  CLRUN_INVALID_ARG, never written as PNG under their name. Outputs are written
 *  safely, for clrun_npy_write and the binary cache alike: "-" is standard output; a symbolic link
 *  is followed and kept; an existing FIFO or device (/dev/null) is written into, never replaced; a
 *  regular file is replaced whole (a new temporary file in its folder, made with O_EXCL|O_NOFOLLOW,
 *  renamed over it) and keeps its mode; a failure leaves the old file as it was and its text names
 *  the error that happened (e.g. "No space left on device"). */
CLRUN_API clrun_status clrun_image_write(const char *path, const clrun_image *img);

/** The parameters of cv2.Canny, plus an optional Gaussian blur before it. */
typedef struct clrun_canny_params {
    double low;        /**< lower hysteresis threshold (the two are swapped when low > high) */
    double high;       /**< upper hysteresis threshold */
    int l2;            /**< 1: magnitude sqrt(dx²+dy²) (compared squared), 0: |dx|+|dy| */
    int aperture;      /**< Sobel aperture: 3, 5 or 7 (0 means 3) */
    int blur;          /**< Gaussian pre-blur of blur×blur, 0 or 1: none; 3, 5, 7 as cv2.GaussianBlur(img,
                       * (blur, blur), blur_sigma), reflected borders, OpenCV's 8.8 fixed-point kernel */
    double blur_sigma; /**< > 0: the Gaussian's sigma; <= 0: OpenCV's fixed kernel for the size; NaN refused */
} clrun_canny_params;

/** Canny edges of an 8-bit image in device memory, equal byte for byte to OpenCV's
 *  cv2.Canny(img, low, high, apertureSize, L2gradient=l2): Sobel with replicated borders, for 3
 *  channels per pixel the channel with the largest magnitude (the first in OpenCV's B, G, R order
 *  on ties), non-maximum suppression in OpenCV's fixed-point sectors (magnitudes outside the image
 *  are 0), and 8-connected hysteresis from strong (> high) through weak (> low) pixels, done on the
 *  device in a fixed number of launches whatever the edge map. src holds height rows of
 *  width·channels bytes, src_stride apart, from byte src_off; dst gets 0 or 255 per pixel in rows
 *  dst_stride apart from dst_off; src and dst may be the same buffer, overlapping too (in place).
 *  Works in the context's scratch memory (4 bytes per pixel and a little more for the tiles'
 *  borders, plus the image when it overlaps the edges or when blurred). */
CLRUN_API clrun_status clrun_canny(clrun_ctx *ctx, clrun_buf *src, size_t src_off, size_t src_stride, size_t width, size_t height,
                                   unsigned channels, clrun_buf *dst, size_t dst_off, size_t dst_stride, const clrun_canny_params *p);

/** clrun_canny on a host image: upload, edges, download into *out (a new 1-channel image). */
CLRUN_API clrun_status clrun_canny_image(clrun_ctx *ctx, const clrun_image *in, const clrun_canny_params *p, clrun_image *out);

/* ------------------------------------------------------------------------------------------------
 * Device groups: one job over several devices (lib/group.c)
 *
 * A group holds one context per device (never a multi-device context: each device keeps its own
 * queue, kernels, scratch and cache entries, which the binary cache keys by device). Group calls
 * take host memory, split the work deterministically, run each device's share on a host thread
 * of its own and return when all are done. Failures are recorded per thread (clrun_last_error(
 * NULL)) and name the device. A group is used by one thread at a time, as a context is.
 * ----------------------------------------------------------------------------------------------*/

/** A set of devices, one context each, that the group calls split work across. */
typedef struct clrun_group clrun_group;

/** Open a group. spec: "all" (every device), "gpu", "cpu" or "accelerator" (every device of that
 *  type), or a comma-separated list of selection strings as clrun_device_select takes them
 *  ("0,2", "nvidia:,pocl:"); a device named twice is refused. NULL or "": $CLRUN_DEVICES, and when
 *  that is unset the device clrun_open would choose, alone. */
CLRUN_API clrun_status clrun_group_open(clrun_group **out, const char *spec);

/** Close every context of the group. NULL is ignored. */
CLRUN_API void clrun_group_close(clrun_group *g);

/** Devices in the group, and the context of device i (borrowed; NULL past the end). */
/** @{ */
CLRUN_API unsigned clrun_group_size(const clrun_group *g);
CLRUN_API clrun_ctx *clrun_group_ctx(const clrun_group *g, unsigned i);
/** @} */

/** The devices' relative speeds, by which work is split: w[i] >= 0 for each device (0: give it
 *  nothing; at least one > 0). w NULL: measure them again (each device's f32 GEMM rate, from 256³
 *  doubling until a product takes 2 ms or reaches 2048³, so that a GPU is not judged by its launch
 *  latency; run once per group before its first split unless weights were set), or take them from
 *  $CLRUN_GROUP_WEIGHTS (integers, one per device). */
CLRUN_API clrun_status clrun_group_set_weights(clrun_group *g, const double *w);

/** The weights in use (measured first when needed) into w[0 .. size). */
CLRUN_API clrun_status clrun_group_weights(clrun_group *g, double *w);

/** How clrun_group_gemm splits m rows: rows[i] for device i, in device order, contiguous, in
 *  blocks of 128 rows given by the weights (largest remainders first, ties to the lower index);
 *  a device whose share is under one block gets none. */
CLRUN_API clrun_status clrun_group_split_rows(clrun_group *g, size_t m, size_t *rows);

/** clrun_vec over the group on host arrays of n elements of type t (f32 or f16): each device takes
 *  a range (whole units of 4096 elements by the weights) of a, b and c (those the op uses; the
 *  others may be NULL) and writes that range of dst. Element-wise results are exact, so they equal
 *  one device's bit for bit. A failed device's range is done again on another. */
CLRUN_API clrun_status clrun_group_vec(clrun_group *g, clrun_vec_op op, clrun_dtype t, size_t n, float alpha, void *dst, const void *a,
                                       const void *b, const void *c);

/** The reductions over the group on host arrays (f32 or f16), split in ranges as clrun_group_vec.
 *  op: "sum", "dot" (x·y), "norm2", "max", "min" or "argmax". sum, dot and norm2 combine the
 *  devices' results (each with its compensation) in double with a Neumaier sum, so the error bound
 *  of the one-device reductions holds (|result - exact| <= 8·u·S + 4·u²·n·S); max and min give NaN
 *  when any device found one; argmax (into *index; *value gets x at it) gives the first NaN, else
 *  the first largest element, as on one device. */
CLRUN_API clrun_status clrun_group_reduce(clrun_group *g, const char *op, clrun_dtype t, const void *x, const void *y, size_t n,
                                          double *value, size_t *index);

/** clrun_gemm over the group on host memory: d as for clrun_gemm with its buffers NULL and its
 *  offsets and leading dimensions applied to the host arrays a, b (elements of d->type) and c
 *  (f32; read when beta != 0; elements between rows, when ldc > n, are left as they were). No batches. Each device gets a block of C's rows
 *  (clrun_group_split_rows), the rows of A it needs (all of A when trans_a) and all of B. The
 *  kernel configuration is chosen for the whole product (clrun_gemm_desc.whole_m), so on devices
 *  of one kind the result is bit-identical to one device's. A device that fails has its block
 *  computed again on the first device that did not; the call fails only when every device did. */
CLRUN_API clrun_status clrun_group_gemm(clrun_group *g, const clrun_gemm_desc *d, const void *a, const void *b, float *c);

/* ------------------------------------------------------------------------------------------------
 * Pipelines: many items in flight on one device (lib/pipe.c)
 *
 * A pipeline runs one op on a sequence of items (frames, tiles, matrices held as rows of bytes)
 * with up to `depth` of them in flight: while the device computes item i, item i+1 is copied in
 * and item i-1 copied out, on queues of their own (the op computes on the context's queue). Each
 * slot's device buffers and pinned host staging buffers are made once and reused (they grow when
 * an item is larger than any before), so a stream of frames allocates nothing per frame, and
 * memory stays bounded by depth items.
 *
 * An application feeds items from its own source with clrun_pipe_send (the item's bytes are
 * copied at once: the caller may reuse its memory on return) and gets each result back in the
 * order sent, through its deliver callback, with no threads of its own:
 *
 *     static void got(void *arg, void *tag, clrun_status st, const clrun_image *edges) {...}
 *     clrun_pipe *pp;
 *     clrun_pipe_canny(ctx, &params, 3, got, arg, &pp);
 *     while (next_frame(&img)) clrun_pipe_send(pp, &img, tag);   (calls got for earlier frames)
 *     clrun_pipe_flush(pp);                                       (calls got for the rest)
 *     clrun_pipe_free(pp);
 *
 * Delivery: every item that clrun_pipe_send accepted is delivered exactly once, in the order sent,
 * unless clrun_pipe_cancel drops it: with CLRUN_OK and its result, or with the status of its own
 * failure (an item the op refuses, e.g. a 2-channel image for Canny; clrun_last_error(ctx) holds
 * the text during the callback) and result NULL. A failed item does not stop the pipeline. The
 * result image (rows packed, stride = width·channels) lives in the pipeline's pinned memory and is
 * valid only during the callback: copy what you keep.
 *
 * Threading: a pipeline belongs to its context, and the context's rule holds: one thread at a time
 * calls it (or the context), and deliver runs in that thread, inside clrun_pipe_send, _poll,
 * _flush. deliver may read the result, copy it and hand it to other threads; it must not call
 * clrun_pipe_send, _flush or _cancel on the same pipeline (refused, CLRUN_INVALID_ARG). It may free
 * the pipeline (clrun_pipe_free) or close the context (clrun_close): both are put off until deliver
 * returns and done then, nothing more is delivered, and the call that was delivering returns at once
 * (clrun_pipe_send: CLRUN_INVALID_ARG, the item not taken; _flush: CLRUN_OK; _poll: the count so
 * far); the pipeline's handle is gone after. Other contexts (one per thread or device) run
 * pipelines of their own independently.
 * ----------------------------------------------------------------------------------------------*/

/** A pipeline: items in flight through an op on a context, overlapped, delivered in order. */
typedef struct clrun_pipe clrun_pipe;

/** The callback that receives each item's result, in order (see above). tag: the caller's value
 *  given with the item to clrun_pipe_send. result: NULL when st is not CLRUN_OK. */
typedef void (*clrun_pipe_deliver)(void *arg, void *tag, clrun_status st, const clrun_image *result);

/** An op as a pipeline runs it: two callbacks and their argument.
 *  - shape: from an input item's shape (in->data is NULL), set out's width, height and channels
 *    (the result's bytes are width·height·channels); or refuse the item with a status.
 *  - run: enqueue the op on ctx's queue (clrun_ctx_cl_queue or any clrun call on ctx), reading the
 *    input's rows packed in `in` from byte 0, writing the result's rows packed to `out` from byte
 *    0; never wait for the device. A failure fails this item only.
 *  Both run in the thread that calls clrun_pipe_send. */
typedef struct clrun_pipe_op {
    /** The result's shape from an input's (see above). */
    clrun_status (*shape)(void *arg, clrun_ctx *ctx, const clrun_image *in, clrun_image *out);
    /** Enqueue the op on one item (see above). */
    clrun_status (*run)(void *arg, clrun_ctx *ctx, clrun_buf *in, const clrun_image *in_shape, clrun_buf *out,
                        const clrun_image *out_shape);
    void *arg; /**< passed to both */
} clrun_pipe_op;

/** Make a pipeline on ctx for op (copied; op->arg must live as long as the pipeline) with up to
 *  depth items in flight (1 to 64; 0 means 3), delivering results to deliver(arg, ...). */
CLRUN_API clrun_status clrun_pipe_new(clrun_ctx *ctx, const clrun_pipe_op *op, unsigned depth, clrun_pipe_deliver deliver, void *arg,
                                      clrun_pipe **out);

/** A pipeline of Canny edges (clrun_canny with *p, checked here and copied): items are 8-bit
 *  images of 1 or 3 channels, results 1-channel edge images, byte for byte clrun_canny's. */
CLRUN_API clrun_status clrun_pipe_canny(clrun_ctx *ctx, const clrun_canny_params *p, unsigned depth, clrun_pipe_deliver deliver, void *arg,
                                        clrun_pipe **out);

/** Send one item (its rows are copied before the call returns) with the caller's tag. When depth
 *  items are in flight, first waits for the oldest and delivers it; items already finished are
 *  delivered too. An item the op refuses is still accepted and delivered with its failure. Fails,
 *  accepting nothing, only when the pipeline itself can go on no more (a transfer failed; its
 *  later calls then fail the same way, and flush delivers the items in flight with that status),
 *  or when in is NULL or has no data. */
CLRUN_API clrun_status clrun_pipe_send(clrun_pipe *pp, const clrun_image *in, void *tag);

/** Deliver the items that have finished, in order, without waiting. Returns how many. */
CLRUN_API unsigned clrun_pipe_poll(clrun_pipe *pp);

/** Wait for every item in flight and deliver them all, in order. CLRUN_OK, or the pipeline's own
 *  failure (the items were delivered with it). */
CLRUN_API clrun_status clrun_pipe_flush(clrun_pipe *pp);

/** Items sent and not yet delivered. */
CLRUN_API unsigned clrun_pipe_pending(const clrun_pipe *pp);

/** Drop every item in flight without delivering it (the device finishes what it started; nothing
 *  is read back) and return how many were dropped. The pipeline stays usable. */
CLRUN_API unsigned clrun_pipe_cancel(clrun_pipe *pp);

/** Cancel what is in flight, then free the pipeline's queues and buffers. NULL is ignored. From
 *  the pipeline's own deliver callback: done when the callback returns (see Threading above). */
CLRUN_API void clrun_pipe_free(clrun_pipe *pp);

/* ------------------------------------------------------------------------------------------------
 * Canny over files on several devices (lib/ops/canny/batch.c)
 * ----------------------------------------------------------------------------------------------*/

/** What clrun_canny_files reports besides its status: three callbacks, all called in the calling
 *  thread, and figures it fills in. Zero it, then set what you want. */
typedef struct clrun_canny_report {
    /** Once per image, in input order, after the batch: st CLRUN_OK when its edges were written;
     *  else its failure, text the failure's words (naming the file), and bad_input 1 when the image
     *  could not be read or decoded. NULL: not called. */
    void (*image)(void *arg, size_t index, clrun_status st, int bad_input, const char *text);
    /** When context k fails as a device (not one image's own failure): it takes no more images and
     *  its images go to the other contexts. NULL: not called. */
    void (*device)(void *arg, unsigned k, const char *text);
    /** Each time an image is handed to a device: sent of n (for a progress line, a watchdog). NULL:
     *  not called. */
    void (*progress)(void *arg, size_t sent, size_t n);
    void *arg;       /**< passed to the callbacks */
    double read_s;   /**< out: seconds summed over the threads that read and decode */
    double device_s; /**< out: seconds in the calling thread handing images to the devices and waiting for them */
    double write_s;  /**< out: seconds summed over the threads that encode and write */
    size_t written;  /**< out: images whose edges were written */
    size_t *sent;    /**< NULL, or nctx entries: out, the images handed to each context */
} clrun_canny_report;

/** Canny edges of n image files (PNG, JPEG, PGM/PPM, as clrun_image_read reads them) into
 *  outputs[i] (written as clrun_image_write writes them), on nctx contexts at once: `jobs` host
 *  threads (0 means 4) read and decode inputs and encode and write edges while a pipeline
 *  (clrun_pipe_canny) on each context computes. Each image goes to the context that would finish
 *  it first by the weights (NULL: equal; a weight 0 takes none), so a slow device takes few images;
 *  a context that fails takes no more and its images go to the others. Decoded images held at once
 *  stay under 1 GiB. The edges are those of clrun_canny_image with p on any device. Returns
 *  CLRUN_OK when every image was written; else the first failure's status (an image's own, or the
 *  devices' when none is left), with the count and the first failure in clrun_last_error(NULL);
 *  report (may be NULL) says per image. */
CLRUN_API clrun_status clrun_canny_files(clrun_ctx *const *ctx, const double *weights, unsigned nctx, const clrun_canny_params *p,
                                         const char *const *inputs, const char *const *outputs, size_t n, unsigned jobs,
                                         clrun_canny_report *report);

/** clrun_canny_files on the group's contexts with the group's weights. */
CLRUN_API clrun_status clrun_group_canny_files(clrun_group *g, const clrun_canny_params *p, const char *const *inputs,
                                               const char *const *outputs, size_t n, unsigned jobs, clrun_canny_report *report);

#ifdef __cplusplus
}
#endif
#endif /* CLRUN_H */
