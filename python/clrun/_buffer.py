"""clrun.Buffer: device memory, and OpenCL handles checked before a driver sees them."""
import ctypes
import math
import operator
import os
from ctypes import byref, c_size_t, c_void_p

import numpy as np

from . import _lib as L
from ._errors import InvalidArgument, _check
from ._dead import _kill, _is_dead


def _readable(addr):
    """Whether 8 bytes at addr can be read, asked of the kernel (write(2) from that address into a
    pipe fails with EFAULT instead of faulting), so a stale or made-up handle is refused in words."""
    r, w = os.pipe()
    try:
        return _libc_write(w, c_void_p(addr), 8) == 8
    finally:
        os.close(r), os.close(w)


try:
    _libc_write = ctypes.CDLL(None, use_errno=True).write
    _libc_write.argtypes, _libc_write.restype = [ctypes.c_int, c_void_p, c_size_t], ctypes.c_ssize_t
except (OSError, AttributeError):  # no C library to ask: only the range checks below
    _libc_write = None

_DISPATCH = None


def _dispatch_tables():
    """The ICD dispatch tables of the drivers the ICD loader lists: the first word of each platform's
    and device's handle. Every object a driver makes starts with its one table, so a handle whose
    first word is none of these is no OpenCL object, even where its memory happens to be readable
    (an address inside some library) and a driver would jump through garbage. Empty when the loader
    cannot be asked: then only the other checks apply."""
    global _DISPATCH
    if _DISPATCH is not None:
        return _DISPATCH
    found = set()
    try:
        cl = ctypes.CDLL("libOpenCL.so.1")
        u32p = ctypes.POINTER(ctypes.c_uint32)
        cl.clGetPlatformIDs.argtypes = [ctypes.c_uint32, c_void_p, u32p]
        cl.clGetDeviceIDs.argtypes = [c_void_p, ctypes.c_uint64, ctypes.c_uint32, c_void_p, u32p]
        cl.clGetPlatformIDs.restype = cl.clGetDeviceIDs.restype = ctypes.c_int32
        n = ctypes.c_uint32()
        if cl.clGetPlatformIDs(0, None, byref(n)) == 0 and n.value:
            plats = (c_void_p * n.value)()
            if cl.clGetPlatformIDs(n.value, plats, None) == 0:
                for p in plats:
                    if not p or not _readable(p):
                        continue
                    found.add(ctypes.c_uint64.from_address(p).value)
                    nd = ctypes.c_uint32()
                    if cl.clGetDeviceIDs(p, 0xFFFFFFFF, 0, None, byref(nd)) != 0 or not nd.value:
                        continue
                    devs = (c_void_p * nd.value)()
                    if cl.clGetDeviceIDs(p, 0xFFFFFFFF, nd.value, devs, None) == 0:
                        found.update(ctypes.c_uint64.from_address(d).value for d in devs if d and _readable(d))
    except (OSError, AttributeError):
        pass
    found.discard(0)
    _DISPATCH = frozenset(found)
    return _DISPATCH


def _int_ptr(x):
    """An OpenCL handle as a c_void_p: an int, or an object with .int_ptr (PyOpenCL's). Values that
    cannot be a handle are refused before any driver sees them: not an int, 0, negative, 2^64 or
    more, not 8-byte aligned (drivers allocate their objects), or (where the C library can be asked)
    pointing at memory that cannot be read, or whose first word (the ICD dispatch table) cannot."""
    v = getattr(x, "int_ptr", x)
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise InvalidArgument(1, f"an OpenCL handle is an int or has .int_ptr, not {x!r}")
    v = int(v)
    if v <= 0 or v >= 1 << 64:
        raise InvalidArgument(1, f"{v} cannot be an OpenCL handle (a handle is an address: from 1 to 2^64 - 1)")
    if v % 8 or v < 4096:
        raise InvalidArgument(1, f"{v:#x} cannot be an OpenCL handle (a driver's object is 8-byte aligned, above the first page)")
    if _libc_write is not None:
        ok = _readable(v)
        if ok:
            d = ctypes.c_uint64.from_address(v).value
            ok = d != 0 and d % 8 == 0 and _readable(d)
            known = _dispatch_tables()
            ok = ok and (not known or d in known)
        if not ok:
            raise InvalidArgument(1, f"{v:#x} is not an OpenCL object (its memory cannot be read, or holds no ICD dispatch table): "
                                     "a released or made-up handle")
    return c_void_p(v)


# ---- buffers ----------------------------------------------------------------------------------------


def _dims(shape):
    """A shape as a tuple of non-negative ints (NumPy's rule: integers only, 1.5 is refused)."""
    try:
        t = tuple(operator.index(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    except TypeError:
        raise InvalidArgument(1, f"a shape is integers, not {shape!r}") from None
    if any(s < 0 for s in t):
        raise InvalidArgument(1, f"a shape has no negative dimension: {t}")
    return t


_MAX_BYTES = (1 << 63) - 1


def _nbytes(shape, dtype):
    """The bytes an array of shape and dtype holds, refused (never wrapped) from 2^63 on."""
    n = math.prod(shape) * np.dtype(dtype).itemsize
    if n > _MAX_BYTES:
        raise InvalidArgument(1, f"an array of shape {shape} and {np.dtype(dtype)} would hold {n} bytes: more than any device or "
                                 "address space (2^63)")
    return n


class Buffer:
    """Device memory for an array of a shape and dtype."""

    def __init__(self, ctx, shape, dtype=np.float32, src=None):
        self.ctx = ctx
        self.dtype = np.dtype(dtype)
        self.shape = _dims(shape)
        self.size = math.prod(self.shape)
        self.nbytes = _nbytes(self.shape, self.dtype)
        h = c_void_p()
        if src is not None and self.nbytes:  # made holding a copy of src (C-contiguous, nbytes long): no queued upload
            _check(L.buf_new_from(ctx.handle, src.ctypes.data, self.nbytes, 0, byref(h)), ctx._h)
        else:
            _check(L.buf_new(ctx.handle, max(self.nbytes, 1), 0, byref(h)), ctx._h)
        self._h = h.value
        ctx._adopt(self)

    _rank = 2

    @classmethod
    def from_int_ptr(cls, ctx, mem, shape, dtype=np.float32, offset=0):
        """A Buffer over a cl_mem of ctx's OpenCL context that another library owns
        (clrun_buf_wrap): mem an int handle or an object with .int_ptr (a pyopencl.Buffer, or a
        pyopencl.array.Array's .data), read as an array of this shape and dtype from byte offset
        (0, or a multiple of the device's mem_base_align). clrun keeps a reference of its own,
        given back by free(); the memory stays its owner's."""
        self = cls.__new__(cls)
        self._h = None
        self.ctx = ctx
        self.dtype = np.dtype(dtype)
        self.shape = _dims(shape)
        self.size = math.prod(self.shape)
        self.nbytes = _nbytes(self.shape, self.dtype)
        if not self.nbytes:
            raise InvalidArgument(1, "from_int_ptr: an empty shape")
        off = operator.index(offset)
        if not 0 <= off <= _MAX_BYTES:
            raise InvalidArgument(1, f"from_int_ptr: offset {off} is out of range")
        h = c_void_p()
        _check(L.buf_wrap(ctx.handle, _int_ptr(mem), off, self.nbytes, byref(h)), ctx._h)
        self._h = h.value
        ctx._adopt(self)
        return self

    @property
    def int_ptr(self):
        """The cl_mem as an int (for pyopencl.Buffer.from_int_ptr); valid while the Buffer lives."""
        return L.buf_cl_mem(self.handle)

    def _mem(self):
        """(the clrun_buf holding the data, byte offset of element 0)."""
        return self.handle, 0

    def _release(self):
        if _is_dead(self):
            return
        if self._h:
            L.buf_free(self._h)
            self._h = None
        _kill(self, "the buffer is freed")

    def free(self):
        """Free the device memory now (else when the Buffer is collected or its context closes); any
        use after raises clrun.InvalidArgument."""
        self._release()

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass

    def __repr__(self):
        return f"<clrun.Buffer {self.shape} {self.dtype} on {self.ctx.device.name!r}>"

    @property
    def handle(self):
        if not self._h:
            raise InvalidArgument(1, "the buffer is freed")
        return self._h

    def upload(self, arr):
        """Copy arr (same number of bytes) into the buffer, straight from its memory when it is contiguous."""
        a = np.ascontiguousarray(arr)
        if a.nbytes != self.nbytes:
            raise InvalidArgument(1, f"upload: {a.nbytes} bytes into a buffer of {self.nbytes}")
        if a.nbytes:
            _check(L.upload(self.handle, 0, a.ctypes.data, a.nbytes), self.ctx._h)
        return self

    def download(self, out=None):
        """The buffer's contents as a NumPy array of its shape and dtype (into out when given)."""
        if out is None:
            out = np.empty(self.shape, self.dtype)
        elif not out.flags.c_contiguous or out.nbytes != self.nbytes:
            raise InvalidArgument(1, "download: out must be C-contiguous and as large as the buffer")
        if self.nbytes:
            _check(L.download(self.handle, 0, out.ctypes.data, self.nbytes), self.ctx._h)
        return out

    numpy = download

    def __array__(self, dtype=None, copy=None):
        """NumPy reads a Buffer as its contents (downloaded): np.asarray(buf)."""
        a = self.download()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d Buffer")
        return self.shape[0]

    def fill(self, value):
        v = np.asarray(value, self.dtype)
        if self.nbytes:
            _check(L.buf_fill(self.handle, v.ctypes.data, v.itemsize, 0, self.nbytes), self.ctx._h)
        return self
