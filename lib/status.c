/* status.c — clrun status codes, OpenCL error names, and the last-error text of contexts/threads. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

const char *clrun_version(void) { return CLRUN_VERSION_STRING; }

const char *clrun_status_str(clrun_status st)
{
    switch (st) {
#define CLRUN__NAME(name, value, text) \
    case CLRUN_##name: return "CLRUN_" #name;
        CLRUN_STATUS_MAP(CLRUN__NAME)
#undef CLRUN__NAME
    }
    return "CLRUN_?";
}

const char *clrun_status_text(clrun_status st)
{
    switch (st) {
#define CLRUN__TEXT(name, value, text) \
    case CLRUN_##name: return text;
        CLRUN_STATUS_MAP(CLRUN__TEXT)
#undef CLRUN__TEXT
    }
    return "unknown status";
}

/* Every error code of the Khronos headers (cl.h's error section and the extension headers), by
 * value; where two extensions share a value, the KHR name is given. */
/* a packed table, kept as written: */
/* clang-format off */
#define CLRUN__CL_ERRORS(X)                                                                        \
    X(0, CL_SUCCESS) X(-1, CL_DEVICE_NOT_FOUND) X(-2, CL_DEVICE_NOT_AVAILABLE)                     \
    X(-3, CL_COMPILER_NOT_AVAILABLE) X(-4, CL_MEM_OBJECT_ALLOCATION_FAILURE)                       \
    X(-5, CL_OUT_OF_RESOURCES) X(-6, CL_OUT_OF_HOST_MEMORY)                                        \
    X(-7, CL_PROFILING_INFO_NOT_AVAILABLE) X(-8, CL_MEM_COPY_OVERLAP)                              \
    X(-9, CL_IMAGE_FORMAT_MISMATCH) X(-10, CL_IMAGE_FORMAT_NOT_SUPPORTED)                          \
    X(-11, CL_BUILD_PROGRAM_FAILURE) X(-12, CL_MAP_FAILURE)                                        \
    X(-13, CL_MISALIGNED_SUB_BUFFER_OFFSET) X(-14, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)   \
    X(-15, CL_COMPILE_PROGRAM_FAILURE) X(-16, CL_LINKER_NOT_AVAILABLE)                             \
    X(-17, CL_LINK_PROGRAM_FAILURE) X(-18, CL_DEVICE_PARTITION_FAILED)                             \
    X(-19, CL_KERNEL_ARG_INFO_NOT_AVAILABLE) X(-30, CL_INVALID_VALUE)                              \
    X(-31, CL_INVALID_DEVICE_TYPE) X(-32, CL_INVALID_PLATFORM) X(-33, CL_INVALID_DEVICE)           \
    X(-34, CL_INVALID_CONTEXT) X(-35, CL_INVALID_QUEUE_PROPERTIES)                                 \
    X(-36, CL_INVALID_COMMAND_QUEUE) X(-37, CL_INVALID_HOST_PTR) X(-38, CL_INVALID_MEM_OBJECT)     \
    X(-39, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) X(-40, CL_INVALID_IMAGE_SIZE)                       \
    X(-41, CL_INVALID_SAMPLER) X(-42, CL_INVALID_BINARY) X(-43, CL_INVALID_BUILD_OPTIONS)          \
    X(-44, CL_INVALID_PROGRAM) X(-45, CL_INVALID_PROGRAM_EXECUTABLE)                               \
    X(-46, CL_INVALID_KERNEL_NAME) X(-47, CL_INVALID_KERNEL_DEFINITION)                            \
    X(-48, CL_INVALID_KERNEL) X(-49, CL_INVALID_ARG_INDEX) X(-50, CL_INVALID_ARG_VALUE)            \
    X(-51, CL_INVALID_ARG_SIZE) X(-52, CL_INVALID_KERNEL_ARGS)                                     \
    X(-53, CL_INVALID_WORK_DIMENSION) X(-54, CL_INVALID_WORK_GROUP_SIZE)                           \
    X(-55, CL_INVALID_WORK_ITEM_SIZE) X(-56, CL_INVALID_GLOBAL_OFFSET)                             \
    X(-57, CL_INVALID_EVENT_WAIT_LIST) X(-58, CL_INVALID_EVENT) X(-59, CL_INVALID_OPERATION)       \
    X(-60, CL_INVALID_GL_OBJECT) X(-61, CL_INVALID_BUFFER_SIZE) X(-62, CL_INVALID_MIP_LEVEL)       \
    X(-63, CL_INVALID_GLOBAL_WORK_SIZE) X(-64, CL_INVALID_PROPERTY)                                \
    X(-65, CL_INVALID_IMAGE_DESCRIPTOR) X(-66, CL_INVALID_COMPILER_OPTIONS)                        \
    X(-67, CL_INVALID_LINKER_OPTIONS) X(-68, CL_INVALID_DEVICE_PARTITION_COUNT)                    \
    X(-69, CL_INVALID_PIPE_SIZE) X(-70, CL_INVALID_DEVICE_QUEUE) X(-71, CL_INVALID_SPEC_ID)        \
    X(-72, CL_MAX_SIZE_RESTRICTION_EXCEEDED)                                                       \
    X(-1000, CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR) X(-1001, CL_PLATFORM_NOT_FOUND_KHR)           \
    X(-1002, CL_INVALID_D3D10_DEVICE_KHR) X(-1003, CL_INVALID_D3D10_RESOURCE_KHR)                  \
    X(-1004, CL_D3D10_RESOURCE_ALREADY_ACQUIRED_KHR) X(-1005, CL_D3D10_RESOURCE_NOT_ACQUIRED_KHR)  \
    X(-1006, CL_INVALID_D3D11_DEVICE_KHR) X(-1007, CL_INVALID_D3D11_RESOURCE_KHR)                  \
    X(-1008, CL_D3D11_RESOURCE_ALREADY_ACQUIRED_KHR) X(-1009, CL_D3D11_RESOURCE_NOT_ACQUIRED_KHR)  \
    X(-1010, CL_INVALID_DX9_MEDIA_ADAPTER_KHR) X(-1011, CL_INVALID_DX9_MEDIA_SURFACE_KHR)          \
    X(-1012, CL_DX9_MEDIA_SURFACE_ALREADY_ACQUIRED_KHR)                                            \
    X(-1013, CL_DX9_MEDIA_SURFACE_NOT_ACQUIRED_KHR) X(-1057, CL_DEVICE_PARTITION_FAILED_EXT)       \
    X(-1058, CL_INVALID_PARTITION_COUNT_EXT) X(-1059, CL_INVALID_PARTITION_NAME_EXT)               \
    X(-1092, CL_EGL_RESOURCE_NOT_ACQUIRED_KHR) X(-1093, CL_INVALID_EGL_OBJECT_KHR)                 \
    X(-1094, CL_INVALID_ACCELERATOR_INTEL) X(-1095, CL_INVALID_ACCELERATOR_TYPE_INTEL)             \
    X(-1096, CL_INVALID_ACCELERATOR_DESCRIPTOR_INTEL)                                              \
    X(-1097, CL_ACCELERATOR_TYPE_NOT_SUPPORTED_INTEL)                                              \
    X(-1098, CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL) X(-1099, CL_INVALID_VA_API_MEDIA_SURFACE_INTEL) \
    X(-1100, CL_VA_API_MEDIA_SURFACE_ALREADY_ACQUIRED_INTEL)                                       \
    X(-1101, CL_VA_API_MEDIA_SURFACE_NOT_ACQUIRED_INTEL)                                           \
    X(-1108, CL_COMMAND_TERMINATED_ITSELF_WITH_FAILURE_ARM) X(-1121, CL_CONTEXT_TERMINATED_KHR)    \
    X(-1138, CL_INVALID_COMMAND_BUFFER_KHR) X(-1139, CL_INVALID_SYNC_POINT_WAIT_LIST_KHR)          \
    X(-1140, CL_INCOMPATIBLE_COMMAND_QUEUE_KHR) X(-1141, CL_INVALID_MUTABLE_COMMAND_KHR)           \
    X(-1142, CL_INVALID_SEMAPHORE_KHR)
/* clang-format on */

const char *clrun_cl_error_name(cl_int err)
{
    switch (err) {
#define CLRUN__CLNAME(value, name) \
    case value: return #name;
        CLRUN__CL_ERRORS(CLRUN__CLNAME)
#undef CLRUN__CLNAME
    }
    return "CL_UNKNOWN_ERROR";
}

clrun_status clrun__cl_status(cl_int err)
{
    switch (err) {
    case CL_SUCCESS: return CLRUN_OK;
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
    case CL_INVALID_BUFFER_SIZE: return CLRUN_DEVICE_OUT_OF_MEMORY;
    case CL_OUT_OF_HOST_MEMORY: return CLRUN_HOST_OUT_OF_MEMORY;
    case CL_BUILD_PROGRAM_FAILURE: return CLRUN_BUILD_FAILED;
    case CL_DEVICE_NOT_FOUND: return CLRUN_NO_DEVICE;
    case -1001: return CLRUN_NO_PLATFORM;
    default: return CLRUN_CL_ERROR;
    }
}

/* ---- last-error text ------------------------------------------------------------------------- */

static _Thread_local char thread_err[CLRUN__ERRLEN];

static void set_text(clrun_ctx *ctx, const char *fmt, va_list ap)
{
    if (!ctx) {
        vsnprintf(thread_err, sizeof thread_err, fmt, ap);
        return;
    }
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    if (n < 0) n = 0;
    if ((size_t)n + 1 > ctx->err_cap) {
        char *p = realloc(ctx->err, (size_t)n + 1);
        if (!p) { /* keep what fits */
            if (ctx->err) vsnprintf(ctx->err, ctx->err_cap, fmt, ap);
            return;
        }
        ctx->err = p;
        ctx->err_cap = (size_t)n + 1;
    }
    vsnprintf(ctx->err, ctx->err_cap, fmt, ap);
}

clrun_status clrun__fail(clrun_ctx *ctx, clrun_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_text(ctx, fmt, ap);
    va_end(ap);
    if (clrun__verbose()) fprintf(stderr, "clrun: %s\n", clrun_last_error(ctx));
    return st;
}

clrun_status clrun__fail_cl(clrun_ctx *ctx, cl_int err, const char *call, const char *fmt, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return clrun__fail(ctx, clrun__cl_status(err), "%s: %s failed with %s (%d)", what, call, clrun_cl_error_name(err), (int)err);
}

void clrun__append(clrun_ctx *ctx, const char *text)
{
    char *base = ctx ? ctx->err : thread_err;
    size_t cap = ctx ? ctx->err_cap : sizeof thread_err;
    size_t have = base ? strlen(base) : 0, add = strlen(text);
    if (ctx && have + add + 1 > cap) {
        char *p = realloc(ctx->err, have + add + 1);
        if (!p) return;
        if (!ctx->err) p[0] = 0;
        ctx->err = base = p;
        ctx->err_cap = cap = have + add + 1;
    }
    if (!base) return;
    snprintf(base + have, cap - have, "%s", text);
}

const char *clrun_last_error(const clrun_ctx *ctx)
{
    if (!ctx) return thread_err;
    return ctx->err ? ctx->err : "";
}

int clrun__verbose(void) { return clrun__setting_on(CLRUN__SET_VERBOSE); }

char *clrun__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* Read a whole file of at most max bytes; returns 0, or an errno value (EFBIG past max, whatever
 * the file: /dev/zero too). *data is NUL-terminated, freed by the caller. */
static int read_stream(FILE *f, char **data, size_t *len, size_t max);

int clrun__read_file(const char *path, char **data, size_t *len, size_t max)
{
    FILE *f = fopen(path, "rb");
    if (!f) return errno ? errno : EIO;
    return read_stream(f, data, len, max);
}

int clrun__read_regular(const char *path, char **data, size_t *len, size_t max)
{
    struct stat sb;
    const int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC); /* a FIFO opens at once, and is refused below */
    if (fd < 0) return errno ? errno : EIO;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || fcntl(fd, F_SETFL, 0) != 0) {
        const int e = S_ISDIR(sb.st_mode) ? EISDIR : EINVAL;
        close(fd);
        return e;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        const int e = errno ? errno : EIO;
        close(fd);
        return e;
    }
    return read_stream(f, data, len, max);
}

/* Reads f whole and closes it. */
static int read_stream(FILE *f, char **data, size_t *len, size_t max)
{
    int rc = 0;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n > max) {
            rc = EFBIG;
            goto done;
        }
        if (n + 4096 + 1 > cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            char *p = realloc(buf, ncap);
            if (!p) {
                rc = ENOMEM;
                goto done;
            }
            buf = p;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        rc = errno ? errno : EIO;
        goto done;
    }
    buf[n] = 0;
    *data = buf;
    *len = n;
    buf = NULL;
done:
    free(buf);
    fclose(f);
    return rc;
}
