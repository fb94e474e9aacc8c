/* test_nulls.c — the C API refuses NULL handles and NULL outputs everywhere: every public call that
 * takes a handle or an output pointer, given NULL in turn (the other arguments valid), returns
 * CLRUN_INVALID_ARG (getters: NULL or 0; void calls: nothing), never crashes. Each call runs in a
 * child process of its own, so one crash names its call and the others still run. */
#include "helpers.h"

#include <signal.h>
#include <sys/wait.h>

static clrun_ctx *ctx;
static clrun_buf *buf;
static clrun_prog *prog;
static clrun_kernel *kern;

static int one(int which)
{
    clrun_queue *q = NULL;
    clrun_event *ev = NULL;
    clrun_buf *b = NULL;
    clrun_prog *p = NULL;
    clrun_kernel *k = NULL;
    clrun_pipe *pp = NULL;
    clrun_arg_info info;
    clrun_array arr = {0};
    clrun_image img = {0};
    clrun_scaler sc;
    clrun_gemm_backend gb;
    clrun_dtype dt;
    const clrun_profile_entry *pe = NULL;
    clrun_qparams qp = {0};
    clrun_canny_params cp = {50, 100, 0, 3, 0, 0.0};
    clrun_gemm_desc gd = {.m = 1, .n = 1, .k = 1, .alpha = 1, .lda = 1, .ldb = 1, .ldc = 1};
    static unsigned char host[64];
    void *ptr = NULL;
    size_t n = 0, z = 0, shape[1] = {4}, gsz[1] = {4};
    double d = 0;
    float f = 0;
    int i32v = 0, iv = 0;
    int32_t i32 = 0;
    clrun_status st;
    (void)q, (void)ev, (void)b, (void)p, (void)k, (void)pp, (void)info, (void)arr, (void)img, (void)sc, (void)gb, (void)dt, (void)pe;
    (void)qp, (void)cp, (void)gd, (void)ptr, (void)n, (void)z, (void)shape, (void)gsz, (void)d, (void)f, (void)i32v, (void)iv, (void)i32;
    (void)st;
    switch (which) {
    case 0: {
        st = clrun_device_count(NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 1: {
        st = clrun_device_get(0, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 2: {
        st = clrun_device_select(NULL, NULL, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 3: {
        st = clrun_open(NULL, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 4: {
        clrun_close(NULL);
        return 0;
    }
    case 5: {
        return (clrun_last_error(NULL)) != NULL ? 0 : 0;
    }
    case 6: {
        return (clrun_ctx_device(NULL)) != NULL ? 3 : 0;
    }
    case 7: {
        st = clrun_finish(NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 8: {
        return (clrun_ctx_cl_context(NULL)) != NULL ? 3 : 0;
    }
    case 9: {
        return (clrun_ctx_cl_queue(NULL)) != NULL ? 3 : 0;
    }
    case 10: {
        return (clrun_ctx_cl_device(NULL)) != NULL ? 3 : 0;
    }
    case 11: {
        st = clrun_ctx_wrap(NULL, NULL, NULL, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 12: {
        st = clrun_queue_new(NULL, &q);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 13: {
        st = clrun_queue_new(ctx, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 14: {
        clrun_queue_free(NULL);
        return 0;
    }
    case 15: {
        return (clrun_ctx_queue(NULL)) != NULL ? 3 : 0;
    }
    case 16: {
        return (clrun_queue_current(NULL)) != NULL ? 3 : 0;
    }
    case 17: {
        st = clrun_queue_use(NULL, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 18: {
        st = clrun_queue_wait(NULL, NULL, 0);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 19: {
        st = clrun_queue_marker(NULL, &ev);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 20: {
        st = clrun_queue_flush(NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 21: {
        st = clrun_queue_finish(NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 22: {
        return (clrun_queue_cl(NULL)) != NULL ? 3 : 0;
    }
    case 23: {
        st = clrun_buf_new(NULL, 4, 0, &b);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 24: {
        st = clrun_buf_new(ctx, 4, 0, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 25: {
        st = clrun_buf_new_from(NULL, host, 4, 0, &b);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 26: {
        st = clrun_buf_new_from(ctx, NULL, 4, 0, &b);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 27: {
        st = clrun_buf_sub(NULL, 0, 4, &b);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 28: {
        st = clrun_buf_sub(buf, 0, 4, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 29: {
        st = clrun_buf_wrap(NULL, NULL, 0, 4, &b);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 30: {
        clrun_buf_free(NULL);
        return 0;
    }
    case 31: {
        return (clrun_buf_size(NULL)) != 0 ? 4 : 0;
    }
    case 32: {
        return (clrun_buf_context(NULL)) != NULL ? 3 : 0;
    }
    case 33: {
        return (clrun_buf_cl_mem(NULL)) != NULL ? 3 : 0;
    }
    case 34: {
        st = clrun_upload(NULL, 0, host, 4);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 35: {
        st = clrun_upload(buf, 0, NULL, 4);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 36: {
        st = clrun_download(NULL, 0, host, 4);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 37: {
        st = clrun_download(buf, 0, NULL, 4);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 38: {
        st = clrun_upload_async(NULL, 0, host, 4, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 39: {
        st = clrun_download_async(NULL, 0, host, 4, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 40: {
        st = clrun_buf_fill(NULL, host, 4, 0, 4);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 41: {
        st = clrun_buf_fill(buf, NULL, 4, 0, 4);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 42: {
        st = clrun_buf_copy(NULL, 0, buf, 0, 4);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 43: {
        st = clrun_buf_copy(buf, 0, NULL, 0, 4);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 44: {
        st = clrun_host_alloc(NULL, 4, &ptr);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 45: {
        st = clrun_host_alloc(ctx, 4, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 46: {
        st = clrun_host_free(NULL, host);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 47: {
        st = clrun_prog_file(NULL, "x.cl", NULL, &p);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 48: {
        st = clrun_prog_file(ctx, NULL, NULL, &p);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 49: {
        st = clrun_prog_file(ctx, "x.cl", NULL, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 50: {
        st = clrun_prog_source(NULL, "k", "n", NULL, &p);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 51: {
        st = clrun_prog_source(ctx, NULL, "n", NULL, &p);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 52: {
        st = clrun_prog_source(ctx, "__kernel void k(){}", "n", NULL, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 53: {
        st = clrun_prog_builtin(NULL, "vector.cl", NULL, &p);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 54: {
        st = clrun_prog_builtin(ctx, NULL, NULL, &p);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 55: {
        clrun_prog_free(NULL);
        return 0;
    }
    case 56: {
        return (clrun_prog_from_cache(NULL)) != 0 ? 4 : 0;
    }
    case 57: {
        return (clrun_prog_cl_program(NULL)) != NULL ? 3 : 0;
    }
    case 58: {
        return (clrun_builtin_source(NULL, NULL)) != NULL ? 3 : 0;
    }
    case 59: {
        return (clrun_cache_dir(NULL, 0)) != NULL ? 0 : 0;
    }
    case 60: {
        st = clrun_kernel_new(NULL, "k", &k);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 61: {
        st = clrun_kernel_new(prog, NULL, &k);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 62: {
        st = clrun_kernel_new(prog, "k", NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 63: {
        clrun_kernel_free(NULL);
        return 0;
    }
    case 64: {
        return (clrun_kernel_nargs(NULL)) != 0 ? 4 : 0;
    }
    case 65: {
        st = clrun_arg_buf(NULL, 0, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 66: {
        st = clrun_arg_local(NULL, 0, 4);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 67: {
        st = clrun_arg_i8(NULL, 0, 1);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 68: {
        st = clrun_arg_u8(NULL, 0, 1);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 69: {
        st = clrun_arg_i16(NULL, 0, 1);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 70: {
        st = clrun_arg_u16(NULL, 0, 1);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 71: {
        st = clrun_arg_i32(NULL, 0, 1);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 72: {
        st = clrun_arg_u32(NULL, 0, 1);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 73: {
        st = clrun_arg_i64(NULL, 0, 1);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 74: {
        st = clrun_arg_u64(NULL, 0, 1);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 75: {
        st = clrun_arg_f32(NULL, 0, 1);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 76: {
        st = clrun_arg_f64(NULL, 0, 1);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 77: {
        st = clrun_arg_f16(NULL, 0, 1);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 78: {
        st = clrun_arg_bytes(NULL, 0, host, 4);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 79: {
        st = clrun_arg_bytes(kern, 0, NULL, 4);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 80: {
        st = clrun_kernel_arg_info(NULL, 0, &info);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 81: {
        st = clrun_kernel_arg_info(kern, 0, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 82: {
        return (clrun_kernel_name(NULL)) != NULL ? 3 : 0;
    }
    case 83: {
        return (clrun_kernel_cl(NULL)) != NULL ? 3 : 0;
    }
    case 84: {
        st = clrun_launch(NULL, 1, gsz, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 85: {
        st = clrun_launch(kern, 1, NULL, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 86: {
        st = clrun_launch_ev(NULL, 1, gsz, NULL, &ev);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 87: {
        st = clrun_event_wait(NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 88: {
        st = clrun_event_times(NULL, NULL, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 89: {
        return (clrun_event_ms(NULL)) < 0 ? 0 : 5;
    }
    case 90: {
        clrun_event_free(NULL);
        return 0;
    }
    case 91: {
        return (clrun_event_cl(NULL)) != NULL ? 3 : 0;
    }
    case 92: {
        st = clrun_profile_start(NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 93: {
        st = clrun_profile_read(NULL, &pe, &n);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 94: {
        st = clrun_profile_read(ctx, NULL, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 95: {
        clrun_profile_stop(NULL);
        return 0;
    }
    case 96: {
        st = clrun_dtype_parse(NULL, &dt);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 97: {
        st = clrun_dtype_parse("f32", NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 98: {
        st = clrun_array_new(NULL, CLRUN_F32, 1, shape);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 99: {
        clrun_array_free(NULL);
        return 0;
    }
    case 100: {
        st = clrun_npy_parse(NULL, 10, &arr);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 101: {
        st = clrun_npy_parse(host, 4, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 102: {
        st = clrun_npy_read(NULL, &arr);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 103: {
        st = clrun_npy_read("x.npy", NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 104: {
        st = clrun_file_write(NULL, host, 4);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 105: {
        st = clrun_npy_write(NULL, &arr);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 106: {
        st = clrun_npy_write("/tmp/np/x.npy", NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 107: {
        st = clrun_vec(NULL, CLRUN_ADD, CLRUN_F32, 1, 1.0f, buf, 0, buf, 0, buf, 0, NULL, 0);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 108: {
        st = clrun_vec(ctx, CLRUN_ADD, CLRUN_F32, 1, 1.0f, NULL, 0, buf, 0, buf, 0, NULL, 0);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 109: {
        st = clrun_vec(ctx, CLRUN_ADD, CLRUN_F32, 1, 1.0f, buf, 0, NULL, 0, buf, 0, NULL, 0);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 110: {
        st = clrun_vec(ctx, CLRUN_ADD, CLRUN_F32, 1, 1.0f, buf, 0, buf, 0, NULL, 0, NULL, 0);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 111: {
        st = clrun_mul(NULL, CLRUN_F32, 1, buf, buf, buf);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 112: {
        st = clrun_mul(ctx, CLRUN_F32, 1, NULL, buf, buf);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 113: {
        st = clrun_add(ctx, CLRUN_F32, 1, buf, NULL, buf);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 114: {
        st = clrun_axpy(NULL, CLRUN_F32, 1, 1.0f, buf, buf);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 115: {
        st = clrun_axpy(ctx, CLRUN_F32, 1, 1.0f, NULL, buf);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 116: {
        st = clrun_sum(NULL, CLRUN_F32, buf, 0, 1, &d);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 117: {
        st = clrun_sum(ctx, CLRUN_F32, NULL, 0, 1, &d);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 118: {
        st = clrun_sum(ctx, CLRUN_F32, buf, 0, 1, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 119: {
        st = clrun_dot(ctx, CLRUN_F32, buf, 0, NULL, 0, 1, &d);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 120: {
        st = clrun_dot(NULL, CLRUN_F32, buf, 0, buf, 0, 1, &d);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 121: {
        st = clrun_norm2(ctx, CLRUN_F32, NULL, 0, 1, &d);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 122: {
        st = clrun_max(ctx, CLRUN_F32, NULL, 0, 1, &f);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 123: {
        st = clrun_max(ctx, CLRUN_F32, buf, 0, 1, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 124: {
        st = clrun_min(NULL, CLRUN_F32, buf, 0, 1, &f);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 125: {
        st = clrun_argmax(ctx, CLRUN_F32, buf, 0, 1, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 126: {
        st = clrun_argmax(ctx, CLRUN_F32, NULL, 0, 1, &z);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 127: {
        st = clrun_cast(NULL, buf, 0, CLRUN_F32, buf, 0, CLRUN_F16, 1);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 128: {
        st = clrun_cast(ctx, NULL, 0, CLRUN_F32, buf, 0, CLRUN_F16, 1);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 129: {
        st = clrun_cast(ctx, buf, 0, CLRUN_F32, NULL, 0, CLRUN_F16, 1);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 130: {
        st = clrun_gemm(NULL, &gd);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 131: {
        st = clrun_gemm(ctx, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 132: {
        st = clrun_gemm(ctx, &gd);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 133: {
        return (clrun_gemm_tensor_cores(NULL)) != 0 ? 4 : 0;
    }
    case 134: {
        return (clrun_gemm_tensor_kernel(NULL, CLRUN_F16)) != NULL ? 3 : 0;
    }
    case 135: {
        return (clrun_gemm_tuning_path(NULL, NULL, 0)) != NULL ? 3 : 0;
    }
    case 136: {
        st = clrun_gemm_backend_parse(NULL, &gb);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 137: {
        st = clrun_gemm_backend_parse("auto", NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 138: {
        return (clrun_gemm_resolve(NULL, &gd)) != 0 ? 4 : 0;
    }
    case 139: {
        return (clrun_gemm_resolve(ctx, NULL)) != 0 ? 4 : 0;
    }
    case 140: {
        clrun_scaler_init(NULL);
        return 0;
    }
    case 141: {
        clrun_scaler_free(NULL);
        return 0;
    }
    case 142: {
        st = clrun_scaler_unscale(NULL, &sc, NULL, 0);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 143: {
        st = clrun_scaler_unscale(ctx, NULL, NULL, 0);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 144: {
        st = clrun_scaler_update(NULL, &sc, &iv);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 145: {
        st = clrun_scaler_update(ctx, NULL, &iv);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 146: {
        st = clrun_quantize(NULL, buf, 0, buf, 0, 1, &qp);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 147: {
        st = clrun_quantize(ctx, NULL, 0, buf, 0, 1, &qp);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 148: {
        st = clrun_quantize(ctx, buf, 0, buf, 0, 1, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 149: {
        st = clrun_dequantize(ctx, buf, 0, NULL, 0, 1, &qp);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 150: {
        st = clrun_quant_calibrate(NULL, 1, 1, 1, 0, 100, &f, &i32);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 151: {
        st = clrun_gemm_s8(NULL, &gd, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 152: {
        st = clrun_gemm_s8(ctx, NULL, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 153: {
        st = clrun_gemm_s8(ctx, &gd, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 154: {
        st = clrun_sp24_meta_check(NULL, 1, 4, NULL, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 155: {
        st = clrun_sp24_prune(NULL, CLRUN_F32, buf, 0, 4, 1, 4);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 156: {
        st = clrun_sp24_prune(ctx, CLRUN_F32, NULL, 0, 4, 1, 4);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 157: {
        st = clrun_sp24_compress(NULL, CLRUN_F32, buf, 0, 4, 1, 4, buf, buf);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 158: {
        st = clrun_sp24_compress(ctx, CLRUN_F32, NULL, 0, 4, 1, 4, buf, buf);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 159: {
        st = clrun_sp24_compress(ctx, CLRUN_F32, buf, 0, 4, 1, 4, NULL, buf);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 160: {
        st = clrun_sp24_decompress(NULL, CLRUN_F32, buf, buf, 1, 4, buf, 0, 4);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 161: {
        st = clrun_sp24_decompress(ctx, CLRUN_F32, NULL, buf, 1, 4, buf, 0, 4);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 162: {
        st = clrun_sp24_decompress(ctx, CLRUN_F32, buf, NULL, 1, 4, buf, 0, 4);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 163: {
        st = clrun_gemm_sp(NULL, &gd, buf, 0);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 164: {
        st = clrun_gemm_sp(ctx, NULL, buf, 0);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 165: {
        st = clrun_gemm_sp(ctx, &gd, NULL, 0);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 166: {
        st = clrun_image_new(NULL, 1, 1, 1);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 167: {
        clrun_image_free(NULL);
        return 0;
    }
    case 168: {
        st = clrun_image_read(NULL, &img);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 169: {
        st = clrun_image_read("x.png", NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 170: {
        st = clrun_image_info(NULL, &img);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 171: {
        st = clrun_image_write(NULL, &img);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 172: {
        st = clrun_image_write("/tmp/np/x.png", NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 173: {
        st = clrun_canny(NULL, buf, 0, 4, 2, 2, 1, buf, 0, 2, &cp);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 174: {
        st = clrun_canny(ctx, NULL, 0, 4, 2, 2, 1, buf, 0, 2, &cp);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 175: {
        st = clrun_canny(ctx, buf, 0, 4, 2, 2, 1, NULL, 0, 2, &cp);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 176: {
        st = clrun_canny(ctx, buf, 0, 4, 2, 2, 1, buf, 0, 2, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 177: {
        st = clrun_canny_image(NULL, &img, &cp, &img);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 178: {
        st = clrun_canny_image(ctx, NULL, &cp, &img);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 179: {
        st = clrun_canny_image(ctx, &img, NULL, &img);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 180: {
        st = clrun_canny_image(ctx, &img, &cp, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 181: {
        st = clrun_group_open(NULL, "0");
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 182: {
        clrun_group_close(NULL);
        return 0;
    }
    case 183: {
        return (clrun_group_size(NULL)) != 0 ? 4 : 0;
    }
    case 184: {
        return (clrun_group_ctx(NULL, 0)) != NULL ? 3 : 0;
    }
    case 185: {
        st = clrun_group_set_weights(NULL, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 186: {
        st = clrun_group_weights(NULL, &d);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 187: {
        st = clrun_group_split_rows(NULL, 4, &z);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 188: {
        st = clrun_group_vec(NULL, CLRUN_ADD, CLRUN_F32, 1, 1.0f, host, host, host, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 189: {
        st = clrun_group_reduce(NULL, "sum", CLRUN_F32, host, NULL, 1, &d, &z);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 190: {
        st = clrun_group_gemm(NULL, &gd, host, host, (float *)host);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 191: {
        st = clrun_pipe_new(NULL, NULL, 1, NULL, NULL, &pp);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 192: {
        st = clrun_pipe_canny(NULL, &cp, 1, NULL, NULL, &pp);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 193: {
        st = clrun_pipe_canny(ctx, NULL, 1, NULL, NULL, &pp);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 194: {
        st = clrun_pipe_send(NULL, &img, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 195: {
        return (clrun_pipe_poll(NULL)) != 0 ? 4 : 0;
    }
    case 196: {
        st = clrun_pipe_flush(NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 197: {
        return (clrun_pipe_pending(NULL)) != 0 ? 4 : 0;
    }
    case 198: {
        return (clrun_pipe_cancel(NULL)) != 0 ? 4 : 0;
    }
    case 199: {
        clrun_pipe_free(NULL);
        return 0;
    }
    case 200: {
        clrun_gemm_desc_init(NULL, CLRUN_F32, 1, 2, 2, 2, 0, 0);
        return 0;
    }
    case 201: {
        const char *names[1] = {"x.png"};
        st = clrun_canny_files(NULL, NULL, 1, &cp, names, names, 1, 1, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 202: {
        const char *names[1] = {"x.png"};
        st = clrun_group_canny_files(NULL, &cp, names, names, 1, 1, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 203: {
        st = clrun_gemm_tune(NULL, NULL, NULL, 0, &n);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 204: {
        st = clrun_gemm_tune(ctx, NULL, NULL, 0, NULL);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    case 205: {
        st = clrun_gemm_tune(ctx, NULL, NULL, 4, &n);
        return st == CLRUN_INVALID_ARG ? 0 : 10 + (int)st;
    }
    }
    return 0;
}

static const struct {
    const char *call;
    int status;
} cases[] = {
    {"clrun_device_count(NULL)", 1},
    {"clrun_device_get(0, NULL)", 1},
    {"clrun_device_select(NULL, NULL, NULL)", 1},
    {"clrun_open(NULL, NULL)", 1},
    {"clrun_close(NULL)", 0},
    {"clrun_last_error(NULL)", 0},
    {"clrun_ctx_device(NULL)", 0},
    {"clrun_finish(NULL)", 1},
    {"clrun_ctx_cl_context(NULL)", 0},
    {"clrun_ctx_cl_queue(NULL)", 0},
    {"clrun_ctx_cl_device(NULL)", 0},
    {"clrun_ctx_wrap(NULL, NULL, NULL, NULL)", 1},
    {"clrun_queue_new(NULL, &q)", 1},
    {"clrun_queue_new(ctx, NULL)", 1},
    {"clrun_queue_free(NULL)", 0},
    {"clrun_ctx_queue(NULL)", 0},
    {"clrun_queue_current(NULL)", 0},
    {"clrun_queue_use(NULL, NULL)", 1},
    {"clrun_queue_wait(NULL, NULL, 0)", 1},
    {"clrun_queue_marker(NULL, &ev)", 1},
    {"clrun_queue_flush(NULL)", 1},
    {"clrun_queue_finish(NULL)", 1},
    {"clrun_queue_cl(NULL)", 0},
    {"clrun_buf_new(NULL, 4, 0, &b)", 1},
    {"clrun_buf_new(ctx, 4, 0, NULL)", 1},
    {"clrun_buf_new_from(NULL, host, 4, 0, &b)", 1},
    {"clrun_buf_new_from(ctx, NULL, 4, 0, &b)", 1},
    {"clrun_buf_sub(NULL, 0, 4, &b)", 1},
    {"clrun_buf_sub(buf, 0, 4, NULL)", 1},
    {"clrun_buf_wrap(NULL, NULL, 0, 4, &b)", 1},
    {"clrun_buf_free(NULL)", 0},
    {"clrun_buf_size(NULL)", 0},
    {"clrun_buf_context(NULL)", 0},
    {"clrun_buf_cl_mem(NULL)", 0},
    {"clrun_upload(NULL, 0, host, 4)", 1},
    {"clrun_upload(buf, 0, NULL, 4)", 1},
    {"clrun_download(NULL, 0, host, 4)", 1},
    {"clrun_download(buf, 0, NULL, 4)", 1},
    {"clrun_upload_async(NULL, 0, host, 4, NULL)", 1},
    {"clrun_download_async(NULL, 0, host, 4, NULL)", 1},
    {"clrun_buf_fill(NULL, host, 4, 0, 4)", 1},
    {"clrun_buf_fill(buf, NULL, 4, 0, 4)", 1},
    {"clrun_buf_copy(NULL, 0, buf, 0, 4)", 1},
    {"clrun_buf_copy(buf, 0, NULL, 0, 4)", 1},
    {"clrun_host_alloc(NULL, 4, &ptr)", 1},
    {"clrun_host_alloc(ctx, 4, NULL)", 1},
    {"clrun_host_free(NULL, host)", 1},
    {"clrun_prog_file(NULL, \"x.cl\", NULL, &p)", 1},
    {"clrun_prog_file(ctx, NULL, NULL, &p)", 1},
    {"clrun_prog_file(ctx, \"x.cl\", NULL, NULL)", 1},
    {"clrun_prog_source(NULL, \"k\", \"n\", NULL, &p)", 1},
    {"clrun_prog_source(ctx, NULL, \"n\", NULL, &p)", 1},
    {"clrun_prog_source(ctx, \"__kernel void k(){}\", \"n\", NULL, NULL)", 1},
    {"clrun_prog_builtin(NULL, \"vector.cl\", NULL, &p)", 1},
    {"clrun_prog_builtin(ctx, NULL, NULL, &p)", 1},
    {"clrun_prog_free(NULL)", 0},
    {"clrun_prog_from_cache(NULL)", 0},
    {"clrun_prog_cl_program(NULL)", 0},
    {"clrun_builtin_source(NULL, NULL)", 0},
    {"clrun_cache_dir(NULL, 0)", 0},
    {"clrun_kernel_new(NULL, \"k\", &k)", 1},
    {"clrun_kernel_new(prog, NULL, &k)", 1},
    {"clrun_kernel_new(prog, \"k\", NULL)", 1},
    {"clrun_kernel_free(NULL)", 0},
    {"clrun_kernel_nargs(NULL)", 0},
    {"clrun_arg_buf(NULL, 0, NULL)", 1},
    {"clrun_arg_local(NULL, 0, 4)", 1},
    {"clrun_arg_i8(NULL, 0, 1)", 1},
    {"clrun_arg_u8(NULL, 0, 1)", 1},
    {"clrun_arg_i16(NULL, 0, 1)", 1},
    {"clrun_arg_u16(NULL, 0, 1)", 1},
    {"clrun_arg_i32(NULL, 0, 1)", 1},
    {"clrun_arg_u32(NULL, 0, 1)", 1},
    {"clrun_arg_i64(NULL, 0, 1)", 1},
    {"clrun_arg_u64(NULL, 0, 1)", 1},
    {"clrun_arg_f32(NULL, 0, 1)", 1},
    {"clrun_arg_f64(NULL, 0, 1)", 1},
    {"clrun_arg_f16(NULL, 0, 1)", 1},
    {"clrun_arg_bytes(NULL, 0, host, 4)", 1},
    {"clrun_arg_bytes(kern, 0, NULL, 4)", 1},
    {"clrun_kernel_arg_info(NULL, 0, &info)", 1},
    {"clrun_kernel_arg_info(kern, 0, NULL)", 1},
    {"clrun_kernel_name(NULL)", 0},
    {"clrun_kernel_cl(NULL)", 0},
    {"clrun_launch(NULL, 1, gsz, NULL)", 1},
    {"clrun_launch(kern, 1, NULL, NULL)", 1},
    {"clrun_launch_ev(NULL, 1, gsz, NULL, &ev)", 1},
    {"clrun_event_wait(NULL)", 1},
    {"clrun_event_times(NULL, NULL, NULL)", 1},
    {"clrun_event_ms(NULL)", 0},
    {"clrun_event_free(NULL)", 0},
    {"clrun_event_cl(NULL)", 0},
    {"clrun_profile_start(NULL)", 1},
    {"clrun_profile_read(NULL, &pe, &n)", 1},
    {"clrun_profile_read(ctx, NULL, NULL)", 1},
    {"clrun_profile_stop(NULL)", 0},
    {"clrun_dtype_parse(NULL, &dt)", 1},
    {"clrun_dtype_parse(\"f32\", NULL)", 1},
    {"clrun_array_new(NULL, CLRUN_F32, 1, shape)", 1},
    {"clrun_array_free(NULL)", 0},
    {"clrun_npy_parse(NULL, 10, &arr)", 1},
    {"clrun_npy_parse(host, 4, NULL)", 1},
    {"clrun_npy_read(NULL, &arr)", 1},
    {"clrun_npy_read(\"x.npy\", NULL)", 1},
    {"clrun_file_write(NULL, host, 4)", 1},
    {"clrun_npy_write(NULL, &arr)", 1},
    {"clrun_npy_write(\"/tmp/np/x.npy\", NULL)", 1},
    {"clrun_vec(NULL, CLRUN_ADD, CLRUN_F32, 1, 1.0f, buf, 0, buf, 0, buf, 0, NULL, 0)", 1},
    {"clrun_vec(ctx, CLRUN_ADD, CLRUN_F32, 1, 1.0f, NULL, 0, buf, 0, buf, 0, NULL, 0)", 1},
    {"clrun_vec(ctx, CLRUN_ADD, CLRUN_F32, 1, 1.0f, buf, 0, NULL, 0, buf, 0, NULL, 0)", 1},
    {"clrun_vec(ctx, CLRUN_ADD, CLRUN_F32, 1, 1.0f, buf, 0, buf, 0, NULL, 0, NULL, 0)", 1},
    {"clrun_mul(NULL, CLRUN_F32, 1, buf, buf, buf)", 1},
    {"clrun_mul(ctx, CLRUN_F32, 1, NULL, buf, buf)", 1},
    {"clrun_add(ctx, CLRUN_F32, 1, buf, NULL, buf)", 1},
    {"clrun_axpy(NULL, CLRUN_F32, 1, 1.0f, buf, buf)", 1},
    {"clrun_axpy(ctx, CLRUN_F32, 1, 1.0f, NULL, buf)", 1},
    {"clrun_sum(NULL, CLRUN_F32, buf, 0, 1, &d)", 1},
    {"clrun_sum(ctx, CLRUN_F32, NULL, 0, 1, &d)", 1},
    {"clrun_sum(ctx, CLRUN_F32, buf, 0, 1, NULL)", 1},
    {"clrun_dot(ctx, CLRUN_F32, buf, 0, NULL, 0, 1, &d)", 1},
    {"clrun_dot(NULL, CLRUN_F32, buf, 0, buf, 0, 1, &d)", 1},
    {"clrun_norm2(ctx, CLRUN_F32, NULL, 0, 1, &d)", 1},
    {"clrun_max(ctx, CLRUN_F32, NULL, 0, 1, &f)", 1},
    {"clrun_max(ctx, CLRUN_F32, buf, 0, 1, NULL)", 1},
    {"clrun_min(NULL, CLRUN_F32, buf, 0, 1, &f)", 1},
    {"clrun_argmax(ctx, CLRUN_F32, buf, 0, 1, NULL)", 1},
    {"clrun_argmax(ctx, CLRUN_F32, NULL, 0, 1, &z)", 1},
    {"clrun_cast(NULL, buf, 0, CLRUN_F32, buf, 0, CLRUN_F16, 1)", 1},
    {"clrun_cast(ctx, NULL, 0, CLRUN_F32, buf, 0, CLRUN_F16, 1)", 1},
    {"clrun_cast(ctx, buf, 0, CLRUN_F32, NULL, 0, CLRUN_F16, 1)", 1},
    {"clrun_gemm(NULL, &gd)", 1},
    {"clrun_gemm(ctx, NULL)", 1},
    {"clrun_gemm(ctx, &gd)", 1},
    {"clrun_gemm_tensor_cores(NULL)", 0},
    {"clrun_gemm_tensor_kernel(NULL, CLRUN_F16)", 0},
    {"clrun_gemm_tuning_path(NULL, NULL, 0)", 0},
    {"clrun_gemm_backend_parse(NULL, &gb)", 1},
    {"clrun_gemm_backend_parse(\"auto\", NULL)", 1},
    {"clrun_gemm_resolve(NULL, &gd)", 0},
    {"clrun_gemm_resolve(ctx, NULL)", 0},
    {"clrun_scaler_init(NULL)", 0},
    {"clrun_scaler_free(NULL)", 0},
    {"clrun_scaler_unscale(NULL, &sc, NULL, 0)", 1},
    {"clrun_scaler_unscale(ctx, NULL, NULL, 0)", 1},
    {"clrun_scaler_update(NULL, &sc, &iv)", 1},
    {"clrun_scaler_update(ctx, NULL, &iv)", 1},
    {"clrun_quantize(NULL, buf, 0, buf, 0, 1, &qp)", 1},
    {"clrun_quantize(ctx, NULL, 0, buf, 0, 1, &qp)", 1},
    {"clrun_quantize(ctx, buf, 0, buf, 0, 1, NULL)", 1},
    {"clrun_dequantize(ctx, buf, 0, NULL, 0, 1, &qp)", 1},
    {"clrun_quant_calibrate(NULL, 1, 1, 1, 0, 100, &f, &i32)", 1},
    {"clrun_gemm_s8(NULL, &gd, NULL)", 1},
    {"clrun_gemm_s8(ctx, NULL, NULL)", 1},
    {"clrun_gemm_s8(ctx, &gd, NULL)", 1},
    {"clrun_sp24_meta_check(NULL, 1, 4, NULL, NULL)", 1},
    {"clrun_sp24_prune(NULL, CLRUN_F32, buf, 0, 4, 1, 4)", 1},
    {"clrun_sp24_prune(ctx, CLRUN_F32, NULL, 0, 4, 1, 4)", 1},
    {"clrun_sp24_compress(NULL, CLRUN_F32, buf, 0, 4, 1, 4, buf, buf)", 1},
    {"clrun_sp24_compress(ctx, CLRUN_F32, NULL, 0, 4, 1, 4, buf, buf)", 1},
    {"clrun_sp24_compress(ctx, CLRUN_F32, buf, 0, 4, 1, 4, NULL, buf)", 1},
    {"clrun_sp24_decompress(NULL, CLRUN_F32, buf, buf, 1, 4, buf, 0, 4)", 1},
    {"clrun_sp24_decompress(ctx, CLRUN_F32, NULL, buf, 1, 4, buf, 0, 4)", 1},
    {"clrun_sp24_decompress(ctx, CLRUN_F32, buf, NULL, 1, 4, buf, 0, 4)", 1},
    {"clrun_gemm_sp(NULL, &gd, buf, 0)", 1},
    {"clrun_gemm_sp(ctx, NULL, buf, 0)", 1},
    {"clrun_gemm_sp(ctx, &gd, NULL, 0)", 1},
    {"clrun_image_new(NULL, 1, 1, 1)", 1},
    {"clrun_image_free(NULL)", 0},
    {"clrun_image_read(NULL, &img)", 1},
    {"clrun_image_read(\"x.png\", NULL)", 1},
    {"clrun_image_info(NULL, &img)", 1},
    {"clrun_image_write(NULL, &img)", 1},
    {"clrun_image_write(\"/tmp/np/x.png\", NULL)", 1},
    {"clrun_canny(NULL, buf, 0, 4, 2, 2, 1, buf, 0, 2, &cp)", 1},
    {"clrun_canny(ctx, NULL, 0, 4, 2, 2, 1, buf, 0, 2, &cp)", 1},
    {"clrun_canny(ctx, buf, 0, 4, 2, 2, 1, NULL, 0, 2, &cp)", 1},
    {"clrun_canny(ctx, buf, 0, 4, 2, 2, 1, buf, 0, 2, NULL)", 1},
    {"clrun_canny_image(NULL, &img, &cp, &img)", 1},
    {"clrun_canny_image(ctx, NULL, &cp, &img)", 1},
    {"clrun_canny_image(ctx, &img, NULL, &img)", 1},
    {"clrun_canny_image(ctx, &img, &cp, NULL)", 1},
    {"clrun_group_open(NULL, \"0\")", 1},
    {"clrun_group_close(NULL)", 0},
    {"clrun_group_size(NULL)", 0},
    {"clrun_group_ctx(NULL, 0)", 0},
    {"clrun_group_set_weights(NULL, NULL)", 1},
    {"clrun_group_weights(NULL, &d)", 1},
    {"clrun_group_split_rows(NULL, 4, &z)", 1},
    {"clrun_group_vec(NULL, CLRUN_ADD, CLRUN_F32, 1, 1.0f, host, host, host, NULL)", 1},
    {"clrun_group_reduce(NULL, \"sum\", CLRUN_F32, host, NULL, 1, &d, &z)", 1},
    {"clrun_group_gemm(NULL, &gd, host, host, (float *)host)", 1},
    {"clrun_pipe_new(NULL, NULL, 1, NULL, NULL, &pp)", 1},
    {"clrun_pipe_canny(NULL, &cp, 1, NULL, NULL, &pp)", 1},
    {"clrun_pipe_canny(ctx, NULL, 1, NULL, NULL, &pp)", 1},
    {"clrun_pipe_send(NULL, &img, NULL)", 1},
    {"clrun_pipe_poll(NULL)", 0},
    {"clrun_pipe_flush(NULL)", 1},
    {"clrun_pipe_pending(NULL)", 0},
    {"clrun_pipe_cancel(NULL)", 0},
    {"clrun_pipe_free(NULL)", 0},
    {"clrun_gemm_desc_init(NULL, ...)", 0},
    {"clrun_canny_files(NULL, ...)", 1},
    {"clrun_group_canny_files(NULL, ...)", 1},
    {"clrun_gemm_tune(NULL, NULL, NULL, 0, &n)", 1},
    {"clrun_gemm_tune(ctx, NULL, NULL, 0, NULL)", 1},
    {"clrun_gemm_tune(ctx, NULL, NULL, 4, &n)", 1},
};

static void null_handles_are_refused(void **state)
{
    (void)state;
    int failed = 0;
    for (int c = 0; c < (int)(sizeof cases / sizeof *cases); c++) {
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) { /* cmocka's handlers would report a crash as a failed test: the child dies of it instead */
            static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
            for (size_t j = 0; j < sizeof sigs / sizeof *sigs; j++) signal(sigs[j], SIG_DFL);
            _exit(one(c));
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status)) fprintf(stderr, "%s: crashed (signal %d)\n", cases[c].call, WTERMSIG(status)), failed++;
        else if (WEXITSTATUS(status))
            fprintf(stderr, "%s: %s\n", cases[c].call,
                    WEXITSTATUS(status) >= 10 ? clrun_status_str((clrun_status)(WEXITSTATUS(status) - 10))
                                              : "a non-null or non-zero result"),
                failed++;
    }
    assert_int_equal(failed, 0);
}

static int setup(void **state)
{
    (void)state;
    if (clrun_open(&ctx, test_device()) != CLRUN_OK) return fprintf(stderr, "%s\n", clrun_last_error(NULL)), -1;
    if (clrun_buf_new(ctx, 64, 0, &buf) || clrun_prog_source(ctx, "__kernel void k(__global int *x) { x[0] = 1; }", "k.cl", NULL, &prog) ||
        clrun_kernel_new(prog, "k", &kern))
        return fprintf(stderr, "%s\n", clrun_last_error(ctx)), -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clrun_kernel_free(kern);
    clrun_prog_free(prog);
    clrun_buf_free(buf);
    clrun_close(ctx);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(null_handles_are_refused)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
