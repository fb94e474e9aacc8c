/* event.c — events and their times. */
#include "internal.h"

#include <stdlib.h>

/* ---- events -------------------------------------------------------------------------------- */

clrun_status clrun__event_wrap(clrun_ctx *ctx, cl_event e, clrun_event **ev)
{
    if (!ev) {
        if (e) clReleaseEvent(e);
        return CLRUN_OK;
    }
    *ev = malloc(sizeof **ev);
    if (!*ev) {
        clWaitForEvents(1, &e);
        clReleaseEvent(e);
        return clrun__fail(ctx, CLRUN_HOST_OUT_OF_MEMORY, "out of host memory for an event");
    }
    (*ev)->ctx = ctx;
    (*ev)->event = e;
    return CLRUN_OK;
}

clrun_status clrun_event_wait(clrun_event *ev)
{
    if (!ev) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_event_wait: ev is NULL");
    cl_int status = CL_COMPLETE;
    cl_int err = clWaitForEvents(1, &ev->event);
    if (err == CL_SUCCESS || err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) {
        clGetEventInfo(ev->event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
        if (status < 0) return clrun__fail_cl(ev->ctx, status, "the command", "waiting for an event");
        if (err == CL_SUCCESS) return CLRUN_OK;
    }
    return clrun__fail_cl(ev->ctx, err, "clWaitForEvents", "waiting for an event");
}

clrun_status clrun_event_times(clrun_event *ev, uint64_t *start_ns, uint64_t *end_ns)
{
    if (!ev) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_event_times: ev is NULL");
    cl_ulong s = 0, e = 0;
    clrun_status st = clrun_event_wait(ev);
    if (st != CLRUN_OK) return st;
    cl_int err = clGetEventProfilingInfo(ev->event, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL);
    if (err == CL_SUCCESS) err = clGetEventProfilingInfo(ev->event, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL);
    if (err != CL_SUCCESS) return clrun__fail_cl(ev->ctx, err, "clGetEventProfilingInfo", "reading an event's times");
    if (start_ns) *start_ns = s;
    if (end_ns) *end_ns = e;
    return CLRUN_OK;
}

double clrun_event_ms(clrun_event *ev)
{
    if (!ev) return -1.0;
    uint64_t s, e;
    if (clrun_event_times(ev, &s, &e) != CLRUN_OK) return -1.0;
    return (double)(e - s) / 1e6;
}

void clrun_event_free(clrun_event *ev)
{
    if (!ev) return;
    if (ev->event) clReleaseEvent(ev->event);
    free(ev);
}

cl_event clrun_event_cl(const clrun_event *ev) { return ev ? ev->event : NULL; }
