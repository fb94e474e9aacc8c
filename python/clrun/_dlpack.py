"""DLPack: clrun.Array as a producer (__dlpack__, __dlpack_device__) and clrun.from_dlpack for any producer.

An Array whose memory is shared with the CUDA driver (NVIDIA, $CLRUN_CUDA=1, from 4 MiB: see
docs/CUDA.md) is exported as CUDA memory (kDLCUDA, its CUDA address): torch.from_dlpack and
cupy.from_dlpack take it without a copy. The context's queues are finished before the capsule is
made (unless stream=-1), so whatever stream the consumer uses sees what clrun wrote. Any other Array
is exported as kDLOpenCL (the data pointer its clrun_buf); a host consumer (NumPy) cannot read that:
np.asarray(a), or dl_device=(1, 0), is the way there.

clrun.from_dlpack takes a clrun Array (itself, or a copy on another context); a CPU producer's data
(copied to the device); a CUDA producer's tensor (PyTorch, CuPy): without a copy where it is a view
of an Array clrun exported, else with one device copy (clrun_buf_copy_from_cuda; through the host for
memory OpenCL's alone). The producer is asked for stream 1 (the legacy default stream) and that
stream is waited for, so what it queued before is in the result.
"""
import ctypes
from ctypes import POINTER, Structure, byref, c_char_p, c_int, c_int64, c_uint8, c_uint16, c_uint64, c_void_p

import numpy as np

from ._core import InvalidArgument, Unsupported
from . import _array as A
from . import _lib as L
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


def _cuda(a):
    """(the CUDA address of element 0, the CUDA device) of an Array on memory shared with CUDA, else None."""
    h, off = a._raw()
    addr, dev = c_uint64(), c_int(-1)
    if L.buf_cuda_address(h, byref(addr), byref(dev)) != 0:
        return None
    return addr.value + off, dev.value


def device(a):
    cu = _cuda(a)
    if cu is not None:
        return (KDL_CUDA, cu[1])
    return (KDL_OPENCL, int(getattr(a.ctx.device, "index", 0) or 0))


def capsule(a, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule ("dltensor") of the Array's memory on its device."""
    dev = device(a)
    if dl_device is not None and tuple(dl_device) != dev:
        if tuple(dl_device)[0] == KDL_CPU and copy is not False:
            return a.get().__dlpack__()
        raise BufferError(f"__dlpack__: the Array is on {dev}; dl_device={tuple(dl_device)} needs a copy (copy=True, "
                          "to the CPU only)")
    if stream is not None and not isinstance(stream, int):
        raise TypeError(f"__dlpack__: stream must be an int or None, not {type(stream).__name__}")
    if dev[0] == KDL_CUDA and stream == 0:
        raise ValueError("__dlpack__: stream=0 is ambiguous for CUDA (the DLPack standard disallows it); 1 is the legacy "
                         "default stream, 2 the per-thread one")
    if copy:
        a = a.copy()
        dev = device(a)
    if a.bf16:
        code, bits = 4, 16  # kDLBfloat
    elif a.dtype.kind == "c":
        code, bits = 5, a.dtype.itemsize * 8  # kDLComplex
    else:
        code, bits = _CODES[a.dtype.kind], a.dtype.itemsize * 8
    if a.dtype == np.bool_:
        bits = 8
    m = _Managed()
    shape = (c_int64 * max(a.ndim, 1))(*a.shape)
    strides = (c_int64 * max(a.ndim, 1))(*N.strides(a))
    if dev[0] == KDL_CUDA:
        if stream != -1:
            a.ctx.finish()  # what clrun queued on the memory has landed, for any stream of the consumer
        data, off = _cuda(a)[0], 0
    else:
        data, off = a._raw()
    m.dl_tensor = _Tensor(data, _Device(*dev), a.ndim, _DType(code, bits, 1), shape, strides, off)
    m.manager_ctx = None
    m.deleter = _delete
    _LIVE[ctypes.addressof(m)] = (m, shape, strides, a)
    return _py.PyCapsule_New(ctypes.addressof(m), ctypes.cast(_NAME, c_char_p), _capsule_gone)


_py.PyCapsule_GetPointer.restype = c_void_p
_py.PyCapsule_GetPointer.argtypes = [ctypes.py_object, c_char_p]
_py.PyCapsule_SetName.restype = c_int
_py.PyCapsule_SetName.argtypes = [ctypes.py_object, c_char_p]
_USED = ctypes.create_string_buffer(b"used_dltensor")  # lives as long as the module: capsules keep the pointer


def _dtype_of(t):
    """(NumPy dtype, bf16) of a DLTensor's element type; Unsupported where clrun has none."""
    code, bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
    if lanes == 1:
        if code == 4 and bits == 16:
            return np.dtype(np.uint16), True
        if code == 6 and bits == 8:
            return np.dtype(np.bool_), False
        kind = {0: "i", 1: "u", 2: "f", 5: "c"}.get(code)
        if kind is not None and bits % 8 == 0:
            try:
                return np.dtype(f"{kind}{bits // 8}"), False
            except TypeError:
                pass
    raise Unsupported(11, f"from_dlpack: DLPack element type code {code}, {bits} bits, {lanes} lanes has no clrun dtype")


def _from_cuda(x, ctx):
    """An Array of a CUDA producer's tensor: a view where it lies in memory clrun exported, else a copy."""
    cap = x.__dlpack__(stream=1)
    p = _py.PyCapsule_GetPointer(cap, b"dltensor")
    m = _Managed.from_address(p)
    t = m.dl_tensor
    try:
        dtype, bf16 = _dtype_of(t)
        item = dtype.itemsize
        shape = tuple(int(t.shape[i]) for i in range(t.ndim))
        size = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if t.strides:
            st = tuple(int(t.strides[i]) for i in range(t.ndim))
        else:
            st = tuple(int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(t.ndim))
        lo = sum(s * (n - 1) for s, n in zip(st, shape) if s < 0 and n) if size else 0
        hi = sum(s * (n - 1) for s, n in zip(st, shape) if s > 0 and n) + 1 if size else 0
        first = int(t.data or 0) + int(t.byte_offset)  # element 0's address
        # memory clrun exported (a live capsule's Array): a view of it, no copy
        for _m, _sh, _st, a in list(_LIVE.values()):
            if ctx is not None and a.ctx is not ctx:
                continue
            root = a._root()
            cu = _cuda(root) if root._h else None
            if cu is None or root.dtype != dtype or root.bf16 != bf16:
                continue
            rel = first - cu[0]
            if rel % item == 0 and 0 <= rel + lo * item and rel + hi * item <= root.nbytes:
                _check(L.cuda_synchronize(root.ctx.handle), root.ctx)
                return root._strided(shape, st, rel // item)
        if ctx is None:
            from ._numpy import _default_context
            ctx = _default_context()
        flat = ctx.empty((max(hi - lo, 0),), dtype, bf16=bf16)
        if hi > lo:
            h, off = flat._raw()
            _check(L.buf_copy_from_cuda(h, off, first + lo * item, (hi - lo) * item), ctx)
        if N.contiguous_strides(shape, st):
            return flat.reshape(shape)
        return flat._strided(shape, st, -lo)
    finally:
        _py.PyCapsule_SetName(cap, ctypes.cast(_USED, c_char_p))  # the tensor is ours to delete: done with it
        if m.deleter:
            m.deleter(ctypes.cast(p, POINTER(_Managed)))


def _check(st, ctx):
    if st != 0:
        ctx.check(st)


def from_dlpack(x, ctx=None):
    """An Array from any DLPack producer: a clrun Array itself (a copy when ctx is another context),
    the data of a CPU producer copied to the device (ctx, or the default device's context), a CUDA
    tensor (PyTorch, CuPy) viewed where clrun exported its memory, else copied on the device."""
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
    if int(dev[0]) == KDL_CUDA:
        return _from_cuda(x, ctx)
    raise Unsupported(11, f"from_dlpack: a producer on DLPack device {dev} (not the CPU, CUDA or a clrun Array); move it to "
                          "the host first")
