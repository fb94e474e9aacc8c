/* faultcl.c — fault injection for OpenCL calls, preloaded (LD_PRELOAD=libfaultcl.so) in front of
 * the ICD loader. Every call of the functions below that can fail at run time is counted; with
 * FAULTCL_FAIL=N the N-th one fails as a driver fails under pressure (CL_OUT_OF_RESOURCES,
 * CL_MEM_OBJECT_ALLOCATION_FAILURE, a NULL object...) without calling the driver, so nothing is
 * made that the caller would have to release. FAULTCL_ONLY=clCreateBuffer counts only the calls of
 * that function. At exit, with FAULTCL_COUNT=FILE, the number of counted calls is written there
 * (the sweep's range), and with a failure injected "faultcl: failed call N (NAME)" goes to stderr.
 * Used by tests/fault_sweep.sh; not part of the library. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#include <CL/cl.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long counted, fail_at;
static const char *only, *failed_name;
static int ready;

static void report(void)
{
    const char *path = getenv("FAULTCL_COUNT");
    if (path) {
        FILE *f = fopen(path, "w");
        if (f) fprintf(f, "%lu\n", counted), fclose(f);
    }
    if (failed_name) fprintf(stderr, "faultcl: failed call %lu (%s)\n", fail_at, failed_name);
}

/* 1 when this call is the one to fail. */
static int inject(const char *name)
{
    if (!ready) {
        const char *n = getenv("FAULTCL_FAIL");
        fail_at = n ? strtoul(n, NULL, 10) : 0;
        only = getenv("FAULTCL_ONLY");
        ready = 1;
        atexit(report);
    }
    if (only && strcmp(only, name) != 0) return 0;
    if (++counted != fail_at) return 0;
    failed_name = name;
    return 1;
}

static void *real(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "faultcl: %s not found\n", name);
        abort();
    }
    return f;
}

/* A function returning cl_int. */
#define STATUS_CALL(name, err, params, args)    \
    CL_API_ENTRY cl_int CL_API_CALL name params \
    {                                           \
        static cl_int(CL_API_CALL *fn) params;  \
        if (inject(#name)) return err;          \
        if (!fn) *(void **)&fn = real(#name);   \
        return fn args;                         \
    }
/* A function returning an object, with its error code last. */
#define OBJECT_CALL(type, name, err, params, args, errp) \
    CL_API_ENTRY type CL_API_CALL name params            \
    {                                                    \
        static type(CL_API_CALL *fn) params;             \
        if (inject(#name)) {                             \
            if (errp) *(errp) = err;                     \
            return NULL;                                 \
        }                                                \
        if (!fn) *(void **)&fn = real(#name);            \
        return fn args;                                  \
    }

OBJECT_CALL(cl_context, clCreateContext, CL_OUT_OF_HOST_MEMORY,
            (const cl_context_properties *p, cl_uint n, const cl_device_id *d,
             void(CL_CALLBACK *cb)(const char *, const void *, size_t, void *), void *u, cl_int *e),
            (p, n, d, cb, u, e), e)
OBJECT_CALL(cl_command_queue, clCreateCommandQueue, CL_OUT_OF_RESOURCES,
            (cl_context c, cl_device_id d, cl_command_queue_properties p, cl_int *e), (c, d, p, e), e)
OBJECT_CALL(cl_mem, clCreateBuffer, CL_MEM_OBJECT_ALLOCATION_FAILURE, (cl_context c, cl_mem_flags f, size_t s, void *h, cl_int *e),
            (c, f, s, h, e), e)
OBJECT_CALL(cl_mem, clCreateSubBuffer, CL_OUT_OF_RESOURCES, (cl_mem b, cl_mem_flags f, cl_buffer_create_type t, const void *i, cl_int *e),
            (b, f, t, i, e), e)
OBJECT_CALL(cl_program, clCreateProgramWithSource, CL_OUT_OF_HOST_MEMORY,
            (cl_context c, cl_uint n, const char **s, const size_t *l, cl_int *e), (c, n, s, l, e), e)
OBJECT_CALL(cl_program, clCreateProgramWithBinary, CL_OUT_OF_HOST_MEMORY,
            (cl_context c, cl_uint n, const cl_device_id *d, const size_t *l, const unsigned char **b, cl_int *s, cl_int *e),
            (c, n, d, l, b, s, e), e)
OBJECT_CALL(cl_kernel, clCreateKernel, CL_OUT_OF_HOST_MEMORY, (cl_program p, const char *name, cl_int *e), (p, name, e), e)
STATUS_CALL(clBuildProgram, CL_OUT_OF_HOST_MEMORY,
            (cl_program p, cl_uint n, const cl_device_id *d, const char *o, void(CL_CALLBACK *cb)(cl_program, void *), void *u),
            (p, n, d, o, cb, u))
STATUS_CALL(clSetKernelArg, CL_OUT_OF_HOST_MEMORY, (cl_kernel k, cl_uint i, size_t s, const void *v), (k, i, s, v))
STATUS_CALL(clEnqueueNDRangeKernel, CL_OUT_OF_RESOURCES,
            (cl_command_queue q, cl_kernel k, cl_uint d, const size_t *o, const size_t *g, const size_t *l, cl_uint n, const cl_event *w,
             cl_event *ev),
            (q, k, d, o, g, l, n, w, ev))
STATUS_CALL(clEnqueueReadBuffer, CL_OUT_OF_RESOURCES,
            (cl_command_queue q, cl_mem b, cl_bool bl, size_t o, size_t s, void *p, cl_uint n, const cl_event *w, cl_event *ev),
            (q, b, bl, o, s, p, n, w, ev))
STATUS_CALL(clEnqueueWriteBuffer, CL_OUT_OF_RESOURCES,
            (cl_command_queue q, cl_mem b, cl_bool bl, size_t o, size_t s, const void *p, cl_uint n, const cl_event *w, cl_event *ev),
            (q, b, bl, o, s, p, n, w, ev))
STATUS_CALL(clEnqueueCopyBuffer, CL_OUT_OF_RESOURCES,
            (cl_command_queue q, cl_mem a, cl_mem b, size_t oa, size_t ob, size_t s, cl_uint n, const cl_event *w, cl_event *ev),
            (q, a, b, oa, ob, s, n, w, ev))
STATUS_CALL(clEnqueueFillBuffer, CL_OUT_OF_RESOURCES,
            (cl_command_queue q, cl_mem b, const void *p, size_t ps, size_t o, size_t s, cl_uint n, const cl_event *w, cl_event *ev),
            (q, b, p, ps, o, s, n, w, ev))
OBJECT_CALL(void *, clEnqueueMapBuffer, CL_MAP_FAILURE,
            (cl_command_queue q, cl_mem b, cl_bool bl, cl_map_flags f, size_t o, size_t s, cl_uint n, const cl_event *w, cl_event *ev,
             cl_int *e),
            (q, b, bl, f, o, s, n, w, ev, e), e)
STATUS_CALL(clEnqueueMarkerWithWaitList, CL_OUT_OF_RESOURCES, (cl_command_queue q, cl_uint n, const cl_event *w, cl_event *ev),
            (q, n, w, ev))
STATUS_CALL(clEnqueueBarrierWithWaitList, CL_OUT_OF_RESOURCES, (cl_command_queue q, cl_uint n, const cl_event *w, cl_event *ev),
            (q, n, w, ev))
STATUS_CALL(clFinish, CL_OUT_OF_RESOURCES, (cl_command_queue q), (q))
STATUS_CALL(clWaitForEvents, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, (cl_uint n, const cl_event *l), (n, l))
