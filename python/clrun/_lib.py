"""ctypes view of libclrun: the library found, its structs, its functions' prototypes.

The library is looked for, in order: $CLRUN_LIBRARY (a path), a copy installed next to this package
(pip install), the build tree this file sits in (python/ beside build/), then the system's
libclrun.so.0 (ctypes.util.find_library).
"""
import ctypes
import ctypes.util
import glob
import os
from ctypes import (POINTER, Structure, c_char, c_char_p, c_double, c_float, c_int, c_int8, c_int16, c_int32, c_int64, c_size_t,
                    c_uint, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p)


def _candidates():
    env = os.environ.get("CLRUN_LIBRARY")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    yield from sorted(glob.glob(os.path.join(here, "_lib", "libclrun.so*")))
    root = os.path.dirname(os.path.dirname(here))
    for build in ("build", "build-release", "builddir"):
        yield from sorted(glob.glob(os.path.join(root, build, "libclrun.so.0")))
    found = ctypes.util.find_library("clrun")
    if found:
        yield found
    yield "libclrun.so.0"


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError("clrun: libclrun was not found (set CLRUN_LIBRARY to its path, or install clrun); tried:\n  " +
                      "\n  ".join(errors))


lib, path = _load()

MAX_DIMS = 8


class DeviceInfoC(Structure):
    _fields_ = [("index", c_uint), ("platform_index", c_uint), ("device_index", c_uint), ("type", c_int),
                ("platform_name", c_char * 128), ("platform_version", c_char * 128), ("platform_vendor", c_char * 128),
                ("name", c_char * 128), ("vendor", c_char * 128), ("version", c_char * 128), ("driver_version", c_char * 128),
                ("c_version", c_char * 64), ("c_version_major", c_int), ("c_version_minor", c_int), ("global_mem", c_uint64),
                ("max_alloc", c_uint64), ("local_mem", c_uint64), ("compute_units", c_uint), ("max_work_group", c_size_t),
                ("max_work_item", c_size_t * 3), ("preferred_multiple", c_size_t), ("mem_base_align", c_uint), ("fp64", c_int),
                ("fp16", c_int), ("subgroups", c_int), ("host_unified", c_int), ("fp32_denorms", c_int)]


class ArgInfoC(Structure):
    _fields_ = [("kind", c_int), ("type", c_char * 64), ("name", c_char * 64)]


class ProfileEntryC(Structure):
    _fields_ = [("kernel", c_char_p), ("launches", c_uint64), ("total_ms", c_double), ("min_ms", c_double), ("max_ms", c_double)]


class GemmDescC(Structure):
    _fields_ = [("trans_a", c_int), ("trans_b", c_int), ("m", c_size_t), ("n", c_size_t), ("k", c_size_t), ("alpha", c_float),
                ("beta", c_float), ("a", c_void_p), ("a_off", c_size_t), ("lda", c_size_t), ("stride_a", c_size_t), ("b", c_void_p),
                ("b_off", c_size_t), ("ldb", c_size_t), ("stride_b", c_size_t), ("c", c_void_p), ("c_off", c_size_t), ("ldc", c_size_t),
                ("stride_c", c_size_t), ("batch", c_size_t), ("backend", c_int), ("fast", c_int), ("type", c_int), ("whole_m", c_size_t)]


class ScalerC(Structure):
    _fields_ = [("scale", c_float), ("growth_factor", c_double), ("backoff_factor", c_double), ("growth_interval", c_int),
                ("growth_tracker", c_int), ("found_inf", c_void_p)]


class GradC(Structure):
    _fields_ = [("buf", c_void_p), ("off", c_size_t), ("n", c_size_t), ("type", c_int)]


class QParamsC(Structure):
    _fields_ = [("channels", c_size_t), ("inner", c_size_t), ("scale", POINTER(c_float)), ("zero_point", POINTER(c_int32))]


class S8EpilogueC(Structure):
    _fields_ = [("row_scale", c_void_p), ("col_scale", c_void_p), ("bias", c_void_p), ("relu", c_int)]


class CannyParamsC(Structure):
    _fields_ = [("low", c_double), ("high", c_double), ("l2", c_int), ("aperture", c_int), ("blur", c_int), ("blur_sigma", c_double)]


class ImageC(Structure):
    _fields_ = [("width", c_size_t), ("height", c_size_t), ("stride", c_size_t), ("channels", c_uint), ("data", c_void_p)]


def _proto(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


P = c_void_p  # every handle is an opaque pointer
S = c_int  # clrun_status
SZ = c_size_t

version = _proto("clrun_version", c_char_p)
status_str = _proto("clrun_status_str", c_char_p, S)
status_text = _proto("clrun_status_text", c_char_p, S)
device_count = _proto("clrun_device_count", S, POINTER(c_uint))
device_get = _proto("clrun_device_get", S, c_uint, POINTER(DeviceInfoC))
device_select = _proto("clrun_device_select", S, c_char_p, POINTER(c_uint), POINTER(c_char_p))
open_ = _proto("clrun_open", S, POINTER(P), c_char_p)
close = _proto("clrun_close", None, P)
last_error = _proto("clrun_last_error", c_char_p, P)
ctx_device = _proto("clrun_ctx_device", POINTER(DeviceInfoC), P)
finish = _proto("clrun_finish", S, P)
buf_new = _proto("clrun_buf_new", S, P, SZ, c_uint, POINTER(P))
buf_new_from = _proto("clrun_buf_new_from", S, P, c_void_p, SZ, c_uint, POINTER(P))
buf_free = _proto("clrun_buf_free", None, P)
ctx_wrap = _proto("clrun_ctx_wrap", S, POINTER(P), c_void_p, c_void_p, c_void_p)
buf_wrap = _proto("clrun_buf_wrap", S, P, c_void_p, SZ, SZ, POINTER(P))
ctx_cl_context = _proto("clrun_ctx_cl_context", c_void_p, P)
ctx_cl_queue = _proto("clrun_ctx_cl_queue", c_void_p, P)
ctx_cl_device = _proto("clrun_ctx_cl_device", c_void_p, P)
buf_cl_mem = _proto("clrun_buf_cl_mem", c_void_p, P)
buf_size = _proto("clrun_buf_size", SZ, P)
upload = _proto("clrun_upload", S, P, SZ, c_void_p, SZ)
download = _proto("clrun_download", S, P, SZ, c_void_p, SZ)
buf_fill = _proto("clrun_buf_fill", S, P, c_void_p, SZ, SZ, SZ)
buf_copy = _proto("clrun_buf_copy", S, P, SZ, P, SZ, SZ)
host_alloc = _proto("clrun_host_alloc", S, P, SZ, POINTER(c_void_p))
host_free = _proto("clrun_host_free", S, P, c_void_p)
prog_file = _proto("clrun_prog_file", S, P, c_char_p, c_char_p, POINTER(P))
prog_source = _proto("clrun_prog_source", S, P, c_char_p, c_char_p, c_char_p, POINTER(P))
prog_free = _proto("clrun_prog_free", None, P)
prog_from_cache = _proto("clrun_prog_from_cache", c_int, P)
kernel_new = _proto("clrun_kernel_new", S, P, c_char_p, POINTER(P))
kernel_free = _proto("clrun_kernel_free", None, P)
kernel_nargs = _proto("clrun_kernel_nargs", c_uint, P)
kernel_arg_info = _proto("clrun_kernel_arg_info", S, P, c_uint, POINTER(ArgInfoC))
arg_buf = _proto("clrun_arg_buf", S, P, c_uint, P)
arg_local = _proto("clrun_arg_local", S, P, c_uint, SZ)
arg_bytes = _proto("clrun_arg_bytes", S, P, c_uint, c_void_p, SZ)
arg_setters = {
    "i8": (_proto("clrun_arg_i8", S, P, c_uint, c_int8), int), "u8": (_proto("clrun_arg_u8", S, P, c_uint, c_uint8), int),
    "i16": (_proto("clrun_arg_i16", S, P, c_uint, c_int16), int), "u16": (_proto("clrun_arg_u16", S, P, c_uint, c_uint16), int),
    "i32": (_proto("clrun_arg_i32", S, P, c_uint, c_int32), int), "u32": (_proto("clrun_arg_u32", S, P, c_uint, c_uint32), int),
    "i64": (_proto("clrun_arg_i64", S, P, c_uint, c_int64), int), "u64": (_proto("clrun_arg_u64", S, P, c_uint, c_uint64), int),
    "f32": (_proto("clrun_arg_f32", S, P, c_uint, c_float), float), "f64": (_proto("clrun_arg_f64", S, P, c_uint, c_double), float),
    "f16": (_proto("clrun_arg_f16", S, P, c_uint, c_uint16), None),
}
launch = _proto("clrun_launch", S, P, c_uint, POINTER(SZ), POINTER(SZ))
launch_ev = _proto("clrun_launch_ev", S, P, c_uint, POINTER(SZ), POINTER(SZ), POINTER(P))
event_wait = _proto("clrun_event_wait", S, P)
event_ms = _proto("clrun_event_ms", c_double, P)
event_free = _proto("clrun_event_free", None, P)
buf_sub = _proto("clrun_buf_sub", S, P, SZ, SZ, POINTER(P))
upload_async = _proto("clrun_upload_async", S, P, SZ, c_void_p, SZ, POINTER(P))
download_async = _proto("clrun_download_async", S, P, SZ, c_void_p, SZ, POINTER(P))
queue_new = _proto("clrun_queue_new", S, P, POINTER(P))
queue_free = _proto("clrun_queue_free", None, P)
queue_current = _proto("clrun_queue_current", P, P)
queue_use = _proto("clrun_queue_use", S, P, P)
queue_wait = _proto("clrun_queue_wait", S, P, POINTER(P), c_uint)
queue_marker = _proto("clrun_queue_marker", S, P, POINTER(P))
queue_finish = _proto("clrun_queue_finish", S, P)
queue_cl = _proto("clrun_queue_cl", c_void_p, P)
ctx_queue = _proto("clrun_ctx_queue", P, P)
profile_start = _proto("clrun_profile_start", S, P)
profile_read = _proto("clrun_profile_read", S, P, POINTER(POINTER(ProfileEntryC)), POINTER(SZ))
profile_stop = _proto("clrun_profile_stop", None, P)
vec = _proto("clrun_vec", S, P, c_int, c_int, SZ, c_float, P, SZ, P, SZ, P, SZ, P, SZ)
red_d = {n: _proto("clrun_" + n, S, P, c_int, P, SZ, SZ, POINTER(c_double)) for n in ("sum", "norm2")}
dot = _proto("clrun_dot", S, P, c_int, P, SZ, P, SZ, SZ, POINTER(c_double))
red_f = {n: _proto("clrun_" + n, S, P, c_int, P, SZ, SZ, POINTER(c_float)) for n in ("max", "min")}
argmax = _proto("clrun_argmax", S, P, c_int, P, SZ, SZ, POINTER(SZ))
cast = _proto("clrun_cast", S, P, P, SZ, c_int, P, SZ, c_int, SZ)
gemm = _proto("clrun_gemm", S, P, POINTER(GemmDescC))
gemm_tensor_cores = _proto("clrun_gemm_tensor_cores", c_int, P)
gemm_tensor_kernel = _proto("clrun_gemm_tensor_kernel", c_char_p, P, c_int)
gemm_backend_parse = _proto("clrun_gemm_backend_parse", S, c_char_p, POINTER(c_int))
gemm_backend_name = _proto("clrun_gemm_backend_name", c_char_p, c_int)
gemm_resolve = _proto("clrun_gemm_resolve", c_int, P, POINTER(GemmDescC))
scaler_init = _proto("clrun_scaler_init", None, POINTER(ScalerC))
scaler_free = _proto("clrun_scaler_free", None, POINTER(ScalerC))
scaler_unscale = _proto("clrun_scaler_unscale", S, P, POINTER(ScalerC), POINTER(GradC), SZ)
scaler_update = _proto("clrun_scaler_update", S, P, POINTER(ScalerC), POINTER(c_int))
quantize = _proto("clrun_quantize", S, P, P, SZ, P, SZ, SZ, POINTER(QParamsC))
dequantize = _proto("clrun_dequantize", S, P, P, SZ, P, SZ, SZ, POINTER(QParamsC))
quant_calibrate = _proto("clrun_quant_calibrate", S, c_void_p, SZ, SZ, SZ, c_int, c_double, POINTER(c_float), POINTER(c_int32))
gemm_s8 = _proto("clrun_gemm_s8", S, P, POINTER(GemmDescC), POINTER(S8EpilogueC))
sp24_kv = _proto("clrun_sp24_kv", SZ, SZ)
sp24_km = _proto("clrun_sp24_km", SZ, SZ)
sp24_meta_check = _proto("clrun_sp24_meta_check", S, c_void_p, SZ, SZ, POINTER(SZ), POINTER(SZ))
sp24_prune = _proto("clrun_sp24_prune", S, P, c_int, P, SZ, SZ, SZ, SZ)
sp24_compress = _proto("clrun_sp24_compress", S, P, c_int, P, SZ, SZ, SZ, SZ, P, P)
sp24_decompress = _proto("clrun_sp24_decompress", S, P, c_int, P, P, SZ, SZ, P, SZ, SZ)
gemm_sp = _proto("clrun_gemm_sp", S, P, POINTER(GemmDescC), P, SZ)
canny = _proto("clrun_canny", S, P, P, SZ, SZ, SZ, SZ, c_uint, P, SZ, SZ, POINTER(CannyParamsC))
image_read = _proto("clrun_image_read", S, c_char_p, POINTER(ImageC))
image_write = _proto("clrun_image_write", S, c_char_p, POINTER(ImageC))
image_free = _proto("clrun_image_free", None, POINTER(ImageC))
group_open = _proto("clrun_group_open", S, POINTER(P), c_char_p)
group_close = _proto("clrun_group_close", None, P)
group_size = _proto("clrun_group_size", c_uint, P)
group_ctx = _proto("clrun_group_ctx", P, P, c_uint)
group_set_weights = _proto("clrun_group_set_weights", S, P, POINTER(c_double))
group_weights = _proto("clrun_group_weights", S, P, POINTER(c_double))
group_split_rows = _proto("clrun_group_split_rows", S, P, SZ, POINTER(SZ))
group_vec = _proto("clrun_group_vec", S, P, c_int, c_int, SZ, c_float, c_void_p, c_void_p, c_void_p, c_void_p)
group_reduce = _proto("clrun_group_reduce", S, P, c_char_p, c_int, c_void_p, c_void_p, SZ, POINTER(c_double), POINTER(SZ))
group_gemm = _proto("clrun_group_gemm", S, P, POINTER(GemmDescC), c_void_p, c_void_p, c_void_p)
PIPE_DELIVER = ctypes.CFUNCTYPE(None, c_void_p, c_void_p, c_int, POINTER(ImageC))
pipe_canny = _proto("clrun_pipe_canny", S, P, POINTER(CannyParamsC), c_uint, PIPE_DELIVER, c_void_p, POINTER(P))
pipe_send = _proto("clrun_pipe_send", S, P, POINTER(ImageC), c_void_p)
pipe_poll = _proto("clrun_pipe_poll", c_uint, P)
pipe_flush = _proto("clrun_pipe_flush", S, P)
pipe_pending = _proto("clrun_pipe_pending", c_uint, P)
pipe_cancel = _proto("clrun_pipe_cancel", c_uint, P)
pipe_free = _proto("clrun_pipe_free", None, P)
