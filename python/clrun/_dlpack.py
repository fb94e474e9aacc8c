"""DLPack: clrun.Array as a producer (__dlpack__, __dlpack_device__: the OpenCL device type, the
data pointer the cl_mem, byte_offset the view's offset) and clrun.from_dlpack for any producer.

A consumer on the host (NumPy) cannot read OpenCL memory: np.asarray(a) is the way there. From a CPU
producer (NumPy, PyTorch on the CPU) from_dlpack copies the data to the device; from a clrun Array it
returns the Array (or a copy on another context). Producers on other devices (CUDA) are refused in
words: move the tensor to the host first.
"""
import ctypes
from ctypes import POINTER, Structure, c_char_p, c_int, c_int64, c_uint8, c_uint16, c_uint64, c_void_p

import numpy as np

from ._core import InvalidArgument, Unsupported
from . import _array as A
from . import _nd as N

KDL_CPU, KDL_CUDA, KDL_OPENCL = 1, 2, 4
_CODES = {"i": 0, "u": 1, "f": 2, "b": 6}


class _Device(Structure):
    _fields_ = [("device_type", c_int), ("device_id", c_int)]


class _DType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class _Tensor(Structure):
    _fields_ = [("data", c_void_p), ("device", _Device), ("ndim", c_int), ("dtype", _DType), ("shape", POINTER(c_int64)),
                ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class _Managed(Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, POINTER(_Managed))
_Managed._fields_ = [("dl_tensor", _Tensor), ("manager_ctx", c_void_p), ("deleter", _DELETER)]

_LIVE = {}  # address of a DLManagedTensor -> (the struct, its shape and strides, the Array): kept until deleted


@_DELETER
def _delete(p):
    _LIVE.pop(ctypes.addressof(p.contents), None)


_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, c_void_p)  # the capsule as a raw pointer: it is being destroyed
_py = ctypes.pythonapi
_py.PyCapsule_New.restype = ctypes.py_object
_py.PyCapsule_New.argtypes = [c_void_p, c_char_p, _CAPSULE_DESTRUCTOR]

_NAME = ctypes.create_string_buffer(b"dltensor")  # the name our capsules carry (a consumer renames it "used_dltensor")
_NAME_ADDR = ctypes.addressof(_NAME)


@_CAPSULE_DESTRUCTOR
def _capsule_gone(capsule):
    """A capsule no consumer took (its name still "dltensor"): the tensor is deleted with it. It may
    run while an exception is pending (a consumer refused the capsule), so it calls no Python C
    function: it reads the capsule's fields (PyCapsule: the object's head, then pointer and name)."""
    head = ctypes.sizeof(c_void_p) * 2
    pointer = c_void_p.from_address(capsule + head).value
    name = c_void_p.from_address(capsule + head + ctypes.sizeof(c_void_p)).value
    if pointer and name == _NAME_ADDR:
        _LIVE.pop(pointer, None)


def device(a):
    return (KDL_OPENCL, int(getattr(a.ctx.device, "index", 0) or 0))


def capsule(a, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule ("dltensor") of the Array's memory on its device."""
    if dl_device is not None and tuple(dl_device) != device(a):
        if tuple(dl_device)[0] == KDL_CPU and copy is not False:
            return a.get().__dlpack__()
        raise BufferError(f"__dlpack__: the Array is on {device(a)}; dl_device={tuple(dl_device)} needs a copy (copy=True, "
                          "to the CPU only)")
    if copy:
        a = a.copy()
    if a.bf16:
        code, bits = 4, 16  # kDLBfloat
    else:
        code, bits = _CODES[a.dtype.kind], a.dtype.itemsize * 8
    if a.dtype == np.bool_:
        bits = 8
    m = _Managed()
    shape = (c_int64 * max(a.ndim, 1))(*a.shape)
    strides = (c_int64 * max(a.ndim, 1))(*N.strides(a))
    h, off = a._raw()
    m.dl_tensor = _Tensor(h, _Device(*device(a)), a.ndim, _DType(code, bits, 1), shape, strides, off)
    m.manager_ctx = None
    m.deleter = _delete
    _LIVE[ctypes.addressof(m)] = (m, shape, strides, a)
    return _py.PyCapsule_New(ctypes.addressof(m), ctypes.cast(_NAME, c_char_p), _capsule_gone)


def from_dlpack(x, ctx=None):
    """An Array from any DLPack producer: a clrun Array itself (a copy when ctx is another context),
    the data of a CPU producer copied to the device (ctx, or the default device's context)."""
    if isinstance(x, A.Array):
        if ctx is None or ctx is x.ctx:
            return x
        return ctx.asarray(x.get())
    if not hasattr(x, "__dlpack_device__"):
        raise InvalidArgument(1, f"from_dlpack: {type(x).__name__} is no DLPack producer (it has no __dlpack_device__)")
    dev = tuple(x.__dlpack_device__())
    if int(dev[0]) == KDL_CPU:
        host = np.from_dlpack(x)
        if ctx is None:
            from ._numpy import _default_context
            ctx = _default_context()
        return ctx.asarray(np.asarray(host, order="C"))
    raise Unsupported(11, f"from_dlpack: a producer on DLPack device {dev} (not the CPU or a clrun Array); move it to the host "
                          "first (tensor.cpu(), cupy.asnumpy)")
