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

import numpy as np


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


class RandDescC(Structure):
    _fields_ = [("seed", c_uint64), ("subsequence", c_uint64), ("offset", c_uint64), ("dist", c_int), ("type", c_int), ("a", c_double),
                ("b", c_double), ("low", c_int64), ("high", c_int64)]


class FftDescC(Structure):
    _fields_ = [("kind", c_int), ("precision", c_int), ("ndim", c_uint), ("shape", c_size_t * 3), ("batch", c_size_t), ("norm", c_int),
                ("inplace", c_int)]


class FftInfoC(Structure):
    _fields_ = [("build_ms", c_double), ("source", c_int), ("in_count", c_size_t), ("out_count", c_size_t)]


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


CANNY_IMAGE = ctypes.CFUNCTYPE(None, c_void_p, c_size_t, c_int, c_int, c_char_p)
CANNY_DEVICE = ctypes.CFUNCTYPE(None, c_void_p, c_uint, c_char_p)
CANNY_PROGRESS = ctypes.CFUNCTYPE(None, c_void_p, c_size_t, c_size_t)


class CannyReportC(Structure):
    _fields_ = [("image", CANNY_IMAGE), ("device", CANNY_DEVICE), ("progress", CANNY_PROGRESS), ("arg", c_void_p), ("read_s", c_double),
                ("device_s", c_double), ("write_s", c_double), ("written", c_size_t), ("sent", POINTER(c_size_t))]


class Tensor4C(Structure):
    _fields_ = [("layout", c_int), ("type", c_int), ("n", c_int), ("c", c_int), ("h", c_int), ("w", c_int)]


class Conv2dDescC(Structure):
    _fields_ = [("x", Tensor4C), ("k", c_int), ("r", c_int), ("s", c_int), ("stride_h", c_int), ("stride_w", c_int), ("pad_h", c_int),
                ("pad_w", c_int), ("dilation_h", c_int), ("dilation_w", c_int), ("groups", c_int), ("algo", c_int)]


class BatchnormC(Structure):
    _fields_ = [("training", c_int), ("momentum", c_float), ("eps", c_float), ("gamma", c_void_p), ("beta", c_void_p),
                ("running_mean", c_void_p), ("running_var", c_void_p), ("save_mean", c_void_p), ("save_invstd", c_void_p)]


class PoolDescC(Structure):
    _fields_ = [("max", c_int), ("kh", c_int), ("kw", c_int), ("stride_h", c_int), ("stride_w", c_int), ("pad_h", c_int), ("pad_w", c_int),
                ("count_include_pad", c_int)]


class SgdC(Structure):
    _fields_ = [("lr", c_float), ("momentum", c_float), ("dampening", c_float), ("weight_decay", c_float), ("nesterov", c_int)]


class AdamwC(Structure):
    _fields_ = [("lr", c_float), ("beta1", c_float), ("beta2", c_float), ("eps", c_float), ("weight_decay", c_float)]


# the structs by their names in clrun.h (tests/python/test_layout.py checks each against the compiler)
STRUCTS = {"clrun_device_info": DeviceInfoC, "clrun_arg_info": ArgInfoC, "clrun_profile_entry": ProfileEntryC,
           "clrun_gemm_desc": GemmDescC, "clrun_scaler": ScalerC, "clrun_grad": GradC, "clrun_qparams": QParamsC,
           "clrun_s8_epilogue": S8EpilogueC, "clrun_canny_params": CannyParamsC, "clrun_image": ImageC,
           "clrun_canny_report": CannyReportC, "clrun_rand_desc": RandDescC, "clrun_fft_desc": FftDescC,
           "clrun_fft_info": FftInfoC, "clrun_tensor4": Tensor4C, "clrun_conv2d_desc": Conv2dDescC, "clrun_batchnorm": BatchnormC,
           "clrun_pool_desc": PoolDescC, "clrun_sgd": SgdC, "clrun_adamw": AdamwC}
PIPE_DELIVER = ctypes.CFUNCTYPE(None, c_void_p, c_void_p, c_int, POINTER(ImageC))
CALLBACKS = {"clrun_pipe_deliver": PIPE_DELIVER}
_SCALARS = {"void": None, "int": c_int, "unsigned": c_uint, "size_t": c_size_t, "float": c_float, "double": c_double, "char": c_char,
            "int8_t": c_int8, "uint8_t": c_uint8, "int16_t": c_int16, "uint16_t": c_uint16, "int32_t": c_int32, "uint32_t": c_uint32,
            "int64_t": c_int64, "uint64_t": c_uint64, "cl_int": c_int32, "cl_uint": c_uint32, "char*": c_char_p, "void*": c_void_p,
            "handle": c_void_p}


def _ctype(tok, arg=True):
    """The ctypes type of a token of tools/gen_ctypes.py. Arguments that point at scalars or at
    pointers are void* (ctypes then takes an address, byref(), an array or a pointer alike), strings
    char*, mirrored structs POINTER(the mirror) (which takes the struct itself too)."""
    stars = 0
    while tok not in _SCALARS and tok.endswith("*"):
        tok, stars = tok[:-1], stars + 1
    if tok.startswith("struct:"):
        t = STRUCTS.get(tok[7:])
        if t is None or stars:
            return c_void_p  # a struct Python never reads, or a pointer to a pointer: an address
        return POINTER(t)
    if tok.startswith("callback:"):
        return CALLBACKS[tok[9:]] if not stars else c_void_p
    t = _SCALARS[tok]
    if stars and arg:
        return c_void_p
    for _ in range(stars):
        t = POINTER(t)
    return t


def _functions():
    """The table tools/gen_ctypes.py wrote from clrun.h: the package's copy (installed), else the one
    the build wrote beside the library it loaded."""
    try:
        from . import _protos  # type: ignore[attr-defined]
        return _protos.FUNCTIONS
    except ImportError:
        pass
    tried = []
    for d in dict.fromkeys([os.path.dirname(os.path.abspath(path)), os.path.dirname(os.path.realpath(path))]):
        f = os.path.join(d, "_clrun_protos.py")
        tried.append(f)
        if os.path.exists(f):
            scope = {}
            with open(f) as src:
                exec(compile(src.read(), f, "exec"), scope)
            return scope["FUNCTIONS"]
    raise ImportError("clrun: the prototypes made from clrun.h by the build are missing (looked for " + ", ".join(tried) + ")")


FUNCTIONS = _functions()
for _name, (_ret, _args) in FUNCTIONS.items():
    _f = getattr(lib, _name)
    _f.restype, _f.argtypes = _ctype(_ret, arg=False), [_ctype(a) for a in _args]


def _proto(name):
    """The function of libclrun, its prototype set from clrun.h."""
    if name not in FUNCTIONS:
        raise ImportError(f"clrun: {name} is not in the clrun.h the prototypes were made from")
    return getattr(lib, name)


# the functions by short names, as the package calls them
version = _proto("clrun_version")
status_str = _proto("clrun_status_str")
status_text = _proto("clrun_status_text")
device_count = _proto("clrun_device_count")
device_get = _proto("clrun_device_get")
device_select = _proto("clrun_device_select")
open_ = _proto("clrun_open")
close = _proto("clrun_close")
last_error = _proto("clrun_last_error")
ctx_device = _proto("clrun_ctx_device")
finish = _proto("clrun_finish")
buf_new = _proto("clrun_buf_new")
buf_new_from = _proto("clrun_buf_new_from")
buf_free = _proto("clrun_buf_free")
ctx_wrap = _proto("clrun_ctx_wrap")
buf_wrap = _proto("clrun_buf_wrap")
ctx_cl_context = _proto("clrun_ctx_cl_context")
ctx_cl_queue = _proto("clrun_ctx_cl_queue")
ctx_cl_device = _proto("clrun_ctx_cl_device")
buf_cl_mem = _proto("clrun_buf_cl_mem")
buf_size = _proto("clrun_buf_size")
buf_cuda_address = _proto("clrun_buf_cuda_address")
buf_copy_from_cuda = _proto("clrun_buf_copy_from_cuda")
cuda_synchronize = _proto("clrun_cuda_synchronize")
cuda_translate = _proto("clrun_cuda_translate")
cuda_translate_options = _proto("clrun_cuda_translate_options")
string_free = _proto("clrun_string_free")
upload = _proto("clrun_upload")
download = _proto("clrun_download")
buf_fill = _proto("clrun_buf_fill")
buf_copy = _proto("clrun_buf_copy")
host_alloc = _proto("clrun_host_alloc")
host_free = _proto("clrun_host_free")
prog_file = _proto("clrun_prog_file")
prog_source = _proto("clrun_prog_source")
prog_free = _proto("clrun_prog_free")
prog_from_cache = _proto("clrun_prog_from_cache")
kernel_new = _proto("clrun_kernel_new")
kernel_free = _proto("clrun_kernel_free")
kernel_nargs = _proto("clrun_kernel_nargs")
kernel_arg_info = _proto("clrun_kernel_arg_info")
kernel_cl = _proto("clrun_kernel_cl")
arg_buf = _proto("clrun_arg_buf")
arg_local = _proto("clrun_arg_local")
arg_bytes = _proto("clrun_arg_bytes")
arg_setters = {
    "i8": (_proto("clrun_arg_i8"), int), "u8": (_proto("clrun_arg_u8"), int),
    "i16": (_proto("clrun_arg_i16"), int), "u16": (_proto("clrun_arg_u16"), int),
    "i32": (_proto("clrun_arg_i32"), int), "u32": (_proto("clrun_arg_u32"), int),
    "i64": (_proto("clrun_arg_i64"), int), "u64": (_proto("clrun_arg_u64"), int),
    "f32": (_proto("clrun_arg_f32"), float), "f64": (_proto("clrun_arg_f64"), float),
    "f16": (_proto("clrun_arg_f16"), None),
}
arg_bytes = _proto("clrun_arg_bytes")
# complex scalars: float2 and double2 arguments, set as their bytes
arg_setters["c64"] = (lambda k, i, v: arg_bytes(k, i, np.complex64(v).tobytes(), 8), complex)
arg_setters["c128"] = (lambda k, i, v: arg_bytes(k, i, np.complex128(v).tobytes(), 16), complex)
launch = _proto("clrun_launch")
launch_ev = _proto("clrun_launch_ev")
event_wait = _proto("clrun_event_wait")
event_ms = _proto("clrun_event_ms")
event_free = _proto("clrun_event_free")
buf_sub = _proto("clrun_buf_sub")
upload_async = _proto("clrun_upload_async")
download_async = _proto("clrun_download_async")
queue_new = _proto("clrun_queue_new")
queue_free = _proto("clrun_queue_free")
queue_current = _proto("clrun_queue_current")
queue_use = _proto("clrun_queue_use")
queue_wait = _proto("clrun_queue_wait")
queue_marker = _proto("clrun_queue_marker")
queue_finish = _proto("clrun_queue_finish")
queue_cl = _proto("clrun_queue_cl")
ctx_queue = _proto("clrun_ctx_queue")
profile_start = _proto("clrun_profile_start")
profile_read = _proto("clrun_profile_read")
profile_stop = _proto("clrun_profile_stop")
vec = _proto("clrun_vec")
red_d = {n: _proto("clrun_" + n) for n in ("sum", "norm2")}
dot = _proto("clrun_dot")
red_f = {n: _proto("clrun_" + n) for n in ("max", "min")}
argmax = _proto("clrun_argmax")
cast = _proto("clrun_cast")
gemm = _proto("clrun_gemm")
rand = _proto("clrun_rand")
scan = _proto("clrun_scan")
sort = _proto("clrun_sort")
argsort = _proto("clrun_argsort")
topk = _proto("clrun_topk")
bincount = _proto("clrun_bincount")
fft_available = _proto("clrun_fft_available")
fft_plan_new = _proto("clrun_fft_plan_new")
fft_exec = _proto("clrun_fft_exec")
conv2d_shape = _proto("clrun_conv2d_shape")
conv2d_forward = _proto("clrun_conv2d_forward")
conv2d_backward_data = _proto("clrun_conv2d_backward_data")
conv2d_backward_weights = _proto("clrun_conv2d_backward_weights")
act_forward = _proto("clrun_act_forward")
act_backward = _proto("clrun_act_backward")
batchnorm_forward = _proto("clrun_batchnorm_forward")
batchnorm_backward = _proto("clrun_batchnorm_backward")
pool_shape = _proto("clrun_pool_shape")
pool_forward = _proto("clrun_pool_forward")
pool_backward = _proto("clrun_pool_backward")
linear_forward = _proto("clrun_linear_forward")
linear_backward = _proto("clrun_linear_backward")
cross_entropy = _proto("clrun_cross_entropy")
dropout = _proto("clrun_dropout")
dropout_backward = _proto("clrun_dropout_backward")
sgd_step = _proto("clrun_sgd_step")
adamw_step = _proto("clrun_adamw_step")
fft_plan_info = _proto("clrun_fft_plan_info")
fft_plan_free = _proto("clrun_fft_plan_free")
histogram = _proto("clrun_histogram")
rand_desc_init = _proto("clrun_rand_desc_init")
rand_words = _proto("clrun_rand_words")
gemm_tensor_cores = _proto("clrun_gemm_tensor_cores")
gemm_tensor_kernel = _proto("clrun_gemm_tensor_kernel")
gemm_backend_parse = _proto("clrun_gemm_backend_parse")
gemm_backend_name = _proto("clrun_gemm_backend_name")
gemm_resolve = _proto("clrun_gemm_resolve")
gemm_desc_init = _proto("clrun_gemm_desc_init")
scaler_init = _proto("clrun_scaler_init")
scaler_free = _proto("clrun_scaler_free")
scaler_unscale = _proto("clrun_scaler_unscale")
scaler_update = _proto("clrun_scaler_update")
quantize = _proto("clrun_quantize")
dequantize = _proto("clrun_dequantize")
quant_calibrate = _proto("clrun_quant_calibrate")
gemm_s8 = _proto("clrun_gemm_s8")
sp24_kv = _proto("clrun_sp24_kv")
sp24_km = _proto("clrun_sp24_km")
sp24_meta_check = _proto("clrun_sp24_meta_check")
sp24_prune = _proto("clrun_sp24_prune")
sp24_compress = _proto("clrun_sp24_compress")
sp24_decompress = _proto("clrun_sp24_decompress")
gemm_sp = _proto("clrun_gemm_sp")
canny = _proto("clrun_canny")
image_read = _proto("clrun_image_read")
image_write = _proto("clrun_image_write")
image_free = _proto("clrun_image_free")
group_open = _proto("clrun_group_open")
group_close = _proto("clrun_group_close")
group_size = _proto("clrun_group_size")
group_ctx = _proto("clrun_group_ctx")
group_set_weights = _proto("clrun_group_set_weights")
group_weights = _proto("clrun_group_weights")
group_split_rows = _proto("clrun_group_split_rows")
group_vec = _proto("clrun_group_vec")
group_reduce = _proto("clrun_group_reduce")
group_gemm = _proto("clrun_group_gemm")
pipe_canny = _proto("clrun_pipe_canny")
group_canny_files = _proto("clrun_group_canny_files")
pipe_send = _proto("clrun_pipe_send")
pipe_poll = _proto("clrun_pipe_poll")
pipe_flush = _proto("clrun_pipe_flush")
pipe_pending = _proto("clrun_pipe_pending")
pipe_cancel = _proto("clrun_pipe_cancel")
pipe_free = _proto("clrun_pipe_free")


def gemm_desc(dtype, batch, m, n, k, trans_a=False, trans_b=False):
    """A clrun_gemm_desc for packed row-major matrices (clrun_gemm_desc_init); set a, b, c and what differs."""
    d = GemmDescC()
    gemm_desc_init(ctypes.byref(d), dtype, batch, m, n, k, int(trans_a), int(trans_b))
    return d
