"""The runtime: errors, devices, contexts, buffers, programs, kernels, events, profiling."""
import ctypes
import dataclasses
import math
import operator
import os
import threading
import weakref
from ctypes import byref, c_char_p, c_double, c_size_t, c_uint, c_void_p

import numpy as np

from . import _lib as L

# ---- errors -----------------------------------------------------------------------------------------


class Error(Exception):
    """A clrun call failed: .status (the clrun_status number), .name ("CLRUN_BUILD_FAILED") and
    .message (the library's text: what failed and what to do; a build failure's log included)."""

    status = -1

    def __init__(self, status, message):
        self.status = status
        self.name = L.status_str(status).decode()
        self.message = message
        super().__init__(f"{self.name}: {message}")


def _cls(name, code, doc, *more):
    return type(name, (Error,) + more, {"status": code, "__doc__": doc})


InvalidArgument = _cls("InvalidArgument", 1, "An argument is out of range or inconsistent (also a ValueError).", ValueError)
NoPlatform = _cls("NoPlatform", 2, "The ICD loader found no OpenCL platform.")
NoDevice = _cls("NoDevice", 3, "No device matches the selection.")
HostOutOfMemory = _cls("HostOutOfMemory", 4, "Out of host memory.")
DeviceOutOfMemory = _cls("DeviceOutOfMemory", 5, "Out of device memory.")
BuildFailed = _cls("BuildFailed", 6, "A kernel build failed; the message holds the build log.")
FileError = _cls("FileError", 7, "A file could not be read or written.")
NotFound = _cls("NotFound", 8, "A kernel or file was not found.")
ArgMismatch = _cls("ArgMismatch", 9, "Kernel arguments do not match the kernel's signature (also a TypeError).", TypeError)
CLError = _cls("CLError", 10, "An OpenCL call failed.")
Unsupported = _cls("Unsupported", 11, "The device cannot do this.")
FormatError = _cls("FormatError", 12, "Malformed input data.")
OutOfRange = type("OutOfRange", (InvalidArgument, OverflowError),
                  {"status": 1, "__doc__": "A value does not fit the type it would be converted to (an InvalidArgument, also an "
                                           "OverflowError, as NumPy 2 raises for Python integers out of a dtype's range)."})
_by_status = {c.status: c for c in (InvalidArgument, NoPlatform, NoDevice, HostOutOfMemory, DeviceOutOfMemory, BuildFailed, FileError,
                                     NotFound, ArgMismatch, CLError, Unsupported, FormatError)}


def _raise(st, ctx=None):
    msg = L.last_error(ctx).decode(errors="replace")
    if not msg:
        msg = L.status_text(st).decode()
    raise _by_status.get(st, Error)(st, msg)


def _check(st, ctx=None):
    if st:
        _raise(st, ctx)


# ---- types ------------------------------------------------------------------------------------------

# clrun_dtype numbers
F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL = range(13)
_np_to_code = {np.dtype(np.float32): F32, np.dtype(np.float16): F16, np.dtype(np.float64): F64, np.dtype(np.int8): I8,
               np.dtype(np.int16): I16, np.dtype(np.int32): I32, np.dtype(np.int64): I64, np.dtype(np.uint8): U8,
               np.dtype(np.uint16): U16, np.dtype(np.uint32): U32, np.dtype(np.uint64): U64, np.dtype(np.bool_): BOOL}

_DEVICE_TYPES = {1: "gpu", 2: "accelerator", 3: "cpu", 4: "other"}


@dataclasses.dataclass(frozen=True)
class DeviceInfo:
    """One device (clrun_device_info)."""
    index: int
    platform_index: int
    device_index: int
    type: str
    platform_name: str
    platform_version: str
    platform_vendor: str
    name: str
    vendor: str
    version: str
    driver_version: str
    c_version: str
    global_mem: int
    max_alloc: int
    local_mem: int
    compute_units: int
    max_work_group: int
    max_work_item: tuple
    preferred_multiple: int
    mem_base_align: int
    fp64: bool
    fp16: bool
    subgroups: bool
    host_unified: bool
    fp32_denorms: bool

    @property
    def spec(self):
        """The selection string that names this device: "PLATFORM:DEVICE"."""
        return f"{self.platform_index}:{self.device_index}"


def _info(c):
    s = lambda b: b.decode(errors="replace")  # noqa: E731
    return DeviceInfo(c.index, c.platform_index, c.device_index, _DEVICE_TYPES.get(c.type, "other"), s(c.platform_name),
                      s(c.platform_version), s(c.platform_vendor), s(c.name), s(c.vendor), s(c.version), s(c.driver_version),
                      s(c.c_version).strip(), c.global_mem, c.max_alloc, c.local_mem, c.compute_units, c.max_work_group,
                      tuple(c.max_work_item), c.preferred_multiple, c.mem_base_align, bool(c.fp64), bool(c.fp16), bool(c.subgroups),
                      bool(c.host_unified), bool(c.fp32_denorms))


def _spec(spec):
    """A selection string as bytes for the library (None stays None); an int is an index."""
    if spec is None or spec == "":
        return None
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        return str(int(spec)).encode()
    if not isinstance(spec, str):
        raise InvalidArgument(1, f"a device selection is a string (\"gpu\", \"0:1\", a name) or an index, not {spec!r}")
    return spec.encode()


def version():
    """libclrun's version string."""
    return L.version().decode()


def devices():
    """Every OpenCL device the ICD loader finds, in platform order (a list of DeviceInfo)."""
    n = c_uint()
    _check(L.device_count(byref(n)))
    out = []
    for i in range(n.value):
        c = L.DeviceInfoC()
        _check(L.device_get(i, byref(c)))
        out.append(_info(c))
    return out


def select(spec=None):
    """The device a selection string names (None: $CLRUN_DEVICE, else the best) and why it was chosen."""
    idx, why = c_uint(), c_char_p()
    _check(L.device_select(_spec(spec), byref(idx), byref(why)))
    return devices()[idx.value], (why.value or b"").decode()


# ---- closed and freed objects ------------------------------------------------------------------------


class _Dead:
    """What a closed or freed object becomes (_kill): every public attribute, method and property
    raises clrun.InvalidArgument naming what happened, but close()/free() (which do nothing again)
    and closed/freed. Live objects pay nothing for it: their class is swapped at release."""

    _ALLOWED = frozenset(("close", "free", "closed", "freed"))

    def __getattribute__(self, name):
        if name[:1] != "_" and name not in _Dead._ALLOWED:
            raise InvalidArgument(1, f"{object.__getattribute__(self, '_dead_msg')}: .{name} is not available")
        return object.__getattribute__(self, name)

    def __repr__(self):
        return f"<clrun.{type(self).__mro__[2].__name__} ({object.__getattribute__(self, '_dead_msg')})>"

    def __bool__(self):
        raise InvalidArgument(1, object.__getattribute__(self, "_dead_msg"))

    def __len__(self):
        raise InvalidArgument(1, object.__getattribute__(self, "_dead_msg"))

    def __iter__(self):
        raise InvalidArgument(1, object.__getattribute__(self, "_dead_msg"))

    def __hash__(self):
        return object.__hash__(self)

    def __eq__(self, other):
        raise InvalidArgument(1, object.__getattribute__(self, "_dead_msg"))

    closed = freed = True


_DEAD = {}


def _kill(obj, msg):
    """Turn obj into its class's dead form (see _Dead); idempotent."""
    cls = type(obj)
    if issubclass(cls, _Dead):
        return
    dead = _DEAD.get(cls)
    if dead is None:
        dead = _DEAD[cls] = type(cls.__name__, (_Dead, cls), {"__module__": cls.__module__, "__qualname__": cls.__qualname__})
    obj._dead_msg = msg
    obj.__class__ = dead


def _is_dead(obj):
    return isinstance(obj, _Dead)


# ---- context ------------------------------------------------------------------------------------------


class _Closing:
    """with-statement and garbage-collection support for objects that own a handle: close() frees it."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


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
        if not ok:
            raise InvalidArgument(1, f"{v:#x} is not an OpenCL object (its memory cannot be read, or holds no ICD dispatch table): "
                                     "a released or made-up handle")
    return c_void_p(v)


class Context(_Closing):
    """A device's context and in-order queue (clrun_open). Use as a context manager, or close().

    Threads: a Context may be shared by several threads; the library serialises calls on one
    context (its lock), so results stay exact, and a Kernel serialises its own calls (its arguments
    are its state). For parallel work give each thread its own Context. Closing a context while
    another thread uses it is an error of the program."""

    def __init__(self, spec=None):
        h = c_void_p()
        _check(L.open_(byref(h), _spec(spec)))
        self._h = h.value
        self.device = _info(L.ctx_device(self._h).contents)
        self._children = weakref.WeakSet()  # buffers, programs, kernels, pinned arrays: freed before the context

    @classmethod
    def from_int_ptr(cls, context, device, queue=None):
        """A Context over OpenCL objects another library owns (clrun_ctx_wrap): a cl_context, one of
        its devices and optionally an in-order queue of them, each as an int handle (PyOpenCL's
        .int_ptr) or an object that has .int_ptr (a pyopencl.Context, Device, CommandQueue). clrun
        takes references of its own and close() gives back only those: the objects stay their
        owner's. queue None: clrun makes its own."""
        self = cls.__new__(cls)
        self._h = None
        h = c_void_p()
        args = (_int_ptr(context), _int_ptr(device), _int_ptr(queue) if queue is not None else None)
        _check(L.ctx_wrap(byref(h), *args))
        self._h = h.value
        self.device = _info(L.ctx_device(self._h).contents)
        self._children = weakref.WeakSet()
        return self

    @property
    def int_ptr(self):
        """The cl_context as an int (for pyopencl.Context.from_int_ptr); valid while the Context is open."""
        return L.ctx_cl_context(self.handle)

    @property
    def queue_int_ptr(self):
        """The current cl_command_queue as an int (pyopencl.CommandQueue.from_int_ptr)."""
        return L.ctx_cl_queue(self.handle)

    @property
    def device_int_ptr(self):
        """The cl_device_id as an int (pyopencl.Device.from_int_ptr)."""
        return L.ctx_cl_device(self.handle)

    def _adopt(self, child):
        self._children.add(child)

    @property
    def handle(self):
        if not self._h:
            raise InvalidArgument(1, "the context is closed")
        return self._h

    def close(self):
        """Finish what is queued and free the context. Everything made from it (Arrays, Buffers,
        Streams, Programs, Kernels, pipelines) is released with it, and any use of them, or of the
        context, after raises clrun.InvalidArgument."""
        if self._h:
            for child in sorted(list(self._children), key=lambda c: c._rank):
                child._release()
            L.close(self._h)
            self._h = None
        _kill(self, "the context is closed")

    def __repr__(self):
        return f"<clrun.Context on {self.device.name!r}>"

    def finish(self):
        """Wait for everything queued on the context."""
        _check(L.finish(self.handle), self._h)

    def check(self, st):
        _check(st, self._h)

    # arrays
    def empty(self, shape, dtype=np.float32, bf16=False):
        """A clrun.Array of this shape and dtype on the device (contents undefined)."""
        from ._array import Array
        return Array(self, shape, dtype, bf16=bf16)

    def zeros(self, shape, dtype=np.float32, bf16=False):
        """A clrun.Array of zeros."""
        b = self.empty(shape, dtype, bf16)
        if b.nbytes:
            _check(L.buf_fill(b._h, byref(ctypes.c_uint8(0)), 1, 0, b.nbytes), self._h)
        return b

    def full(self, shape, value, dtype=np.float32):
        """A clrun.Array with every element value (filled on the device)."""
        return self.empty(shape, dtype).fill(value)

    def asarray(self, arr, dtype=None, bf16=False, stream=None):
        """A clrun.Array holding a copy of arr (any array-like, C order on the device); an Array of
        this context is returned as it is. bf16=True: arr holds bfloat16 bit patterns (uint16).
        stream=: the upload is queued on it and the call returns at once."""
        from ._array import Array
        if isinstance(arr, Array) and dtype is None and arr.ctx is self:
            return arr
        a = np.ascontiguousarray(arr, dtype=dtype)
        b = self.empty(a.shape, a.dtype, bf16=bf16)
        b.set(a, stream=stream)
        return b

    def upload(self, arr, dtype=None):
        """A new device array holding a copy of arr (any array-like)."""
        a = np.ascontiguousarray(arr, dtype=dtype)
        return self.empty(a.shape, a.dtype).set(a)

    def stream(self):
        """A new stream (a queue of this context): with ctx.stream() as s: ... runs what is inside on it."""
        from ._array import Stream
        return Stream(self)

    def synchronize(self):
        """Wait for everything queued on the context, on all its streams (clrun_finish)."""
        self.finish()

    def host_array(self, shape, dtype=np.float32):
        """A NumPy array in pinned host memory (clrun_host_alloc): transfers from and to it run at DMA
        speed and take no copy. Valid while the context is open."""
        dt = np.dtype(dtype)
        shape = _dims(shape)
        n = _nbytes(shape, dt)
        p = c_void_p()
        _check(L.host_alloc(self.handle, max(n, 1), byref(p)), self._h)
        raw = (ctypes.c_uint8 * max(n, 1)).from_address(p.value)
        arr = np.frombuffer(raw, dtype=np.uint8, count=n).view(dt).reshape(shape)
        h, ctx = p.value, self

        keeper = _Keeper(ctx, h)
        return _Pinned(arr, keeper)

    # programs
    def program(self, source=None, path=None, options=None, name=None):
        """Build a program from OpenCL C source text or a .cl file (through the binary cache)."""
        return Program(self, source=source, path=path, options=options, name=name)

    # profiling
    def profile_start(self):
        """Record the device time of every kernel launched on this context (the library's ops too)."""
        _check(L.profile_start(self.handle), self._h)

    def profile(self):
        """The records since profile_start: a list of (kernel, launches, total_ms, min_ms, max_ms), largest total first."""
        p, n = ctypes.POINTER(L.ProfileEntryC)(), c_size_t()
        _check(L.profile_read(self.handle, byref(p), byref(n)), self._h)
        return [(p[i].kernel.decode(), p[i].launches, p[i].total_ms, p[i].min_ms, p[i].max_ms) for i in range(n.value)]

    def profile_stop(self):
        L.profile_stop(self.handle)


class _Keeper:
    """Frees pinned host memory with the last view of its array, or at the context's close."""
    _rank = 3

    def __init__(self, ctx, h):
        self.ctx, self.h = ctx, h
        ctx._adopt(self)

    def _release(self):
        if self.h and self.ctx._h:
            L.host_free(self.ctx._h, self.h)
        self.h = None

    def __del__(self):
        self._release()


class _Pinned(np.ndarray):
    """A NumPy array over pinned host memory; its memory lives as long as the array and its views."""

    def __new__(cls, arr, keeper):
        obj = arr.view(cls)
        obj._keeper = keeper
        return obj

    def __array_finalize__(self, obj):
        self._keeper = getattr(obj, "_keeper", None)


def open(spec=None):  # noqa: A001 - the library's own verb
    """Open a context on a device: "gpu", "cpu", an index, "PLATFORM:DEVICE", a name; None:
    $CLRUN_DEVICE, else the best device."""
    return Context(spec)


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


# ---- programs and kernels -----------------------------------------------------------------------------


class In:
    """A NumPy array a kernel reads: uploaded before the launch, not read back."""

    def __init__(self, arr):
        self.arr = np.ascontiguousarray(arr)


class Out:
    """A NumPy array a kernel writes: a buffer of its size, read back into it after the launch."""

    def __init__(self, arr):
        if not isinstance(arr, np.ndarray) or not arr.flags.c_contiguous:
            raise InvalidArgument(1, "Out wants a C-contiguous NumPy array to write into")
        self.arr = arr


class InOut(Out):
    """A NumPy array a kernel reads and writes (what a bare array argument means)."""


class Local:
    """bytes of __local memory for a __local pointer argument."""

    def __init__(self, nbytes):
        self.nbytes = int(nbytes)


_SCALAR = {"char": "i8", "uchar": "u8", "short": "i16", "ushort": "u16", "int": "i32", "uint": "u32", "long": "i64", "ulong": "u64",
           "float": "f32", "double": "f64", "half": "f16", "size_t": "u64", "bool": "i32"}
_INT_RANGE = {"i8": (-2**7, 2**7 - 1), "u8": (0, 2**8 - 1), "i16": (-2**15, 2**15 - 1), "u16": (0, 2**16 - 1), "i32": (-2**31, 2**31 - 1),
              "u32": (0, 2**32 - 1), "i64": (-2**63, 2**63 - 1), "u64": (0, 2**64 - 1)}
# the OpenCL C element type a NumPy dtype's data is, for pointer arguments
_CL_OF = {np.dtype(np.float32): "float", np.dtype(np.float16): "half", np.dtype(np.float64): "double", np.dtype(np.int8): "char",
          np.dtype(np.uint8): "uchar", np.dtype(np.int16): "short", np.dtype(np.uint16): "ushort", np.dtype(np.int32): "int",
          np.dtype(np.uint32): "uint", np.dtype(np.int64): "long", np.dtype(np.uint64): "ulong", np.dtype(np.bool_): "uchar"}
_CL_SIZE = {"char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4, "long": 8, "ulong": 8, "float": 4, "double": 8, "half": 2}


def _pointee(ty):
    """(base type, bytes per element) of a pointer argument's type ("float4*" -> ("float", 16)); the
    size is None for structs and other types clrun cannot size on the host."""
    t = ty.replace("const", "").replace("volatile", "").replace("restrict", "").replace("*", "").strip()
    if t.startswith("unsigned "):
        t = "u" + t[9:].strip()
    t = {"unsigned": "uint", "signed char": "char"}.get(t, t)
    base, width = t.rstrip("0123456789"), t[len(t.rstrip("0123456789")):]
    if base not in _CL_SIZE:
        return t, None
    w = int(width) if width else 1
    if w not in (1, 2, 3, 4, 8, 16):
        return t, None
    return base, _CL_SIZE[base] * (4 if w == 3 else w)


def _ints(v, what):
    """A launch size (int or sequence of 1-3 ints) as a tuple of positive ints below 2^64."""
    seq = (v,) if isinstance(v, (int, np.integer)) else v
    try:
        t = tuple(seq)
    except TypeError:
        raise InvalidArgument(1, f"{what}: an int or a tuple of 1 to 3 ints, not {v!r}") from None
    if not 1 <= len(t) <= 3 or not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in t):
        raise InvalidArgument(1, f"{what}: an int or a tuple of 1 to 3 ints, not {v!r}")
    if not all(1 <= int(x) < 2**64 for x in t):
        raise InvalidArgument(1, f"{what}: each size is at least 1 and below 2^64, not {tuple(int(x) for x in t)}")
    return tuple(int(x) for x in t)


class Event:
    """A launch's event: wait(), ms (device time, start to end)."""

    def __init__(self, h):
        self._h = h

    def wait(self):
        _check(L.event_wait(self._h))

    @property
    def ms(self):
        return L.event_ms(self._h)

    def __del__(self):
        if self._h:
            L.event_free(self._h)
            self._h = None


class Kernel:
    """One kernel of a program. Call it with one argument per kernel parameter: Buffers, NumPy arrays
    (bare: in and out; or In/Out/InOut), Local(bytes), scalars (typed from the signature), and
    global_size= (int or tuple: exact, no work-item past it runs), local_size= (default: a size that
    divides the global one), wait= (default True: finish and read arrays back), event= (True: return
    an Event with the launch's device time), check_size= (default True, below).

    Checked before anything runs, like the CLI (where the driver reports argument types): an array
    or Buffer's dtype must be the pointer's element type (float32 for float*, int32 for int*, ...;
    clrun.ArgMismatch otherwise); it must hold at least one element per work-item of the launch, or
    the kernel would read past its end (clrun.ArgMismatch; check_size=False for a kernel that reads
    fewer elements than it has work-items, e.g. filter taps); an integer scalar must fit its type
    (clrun.InvalidArgument, never wrapped) and be an integer; a float must not overflow its type.
    Sizes are ints from 1 to 2^64 - 1; the library checks them against the device (clrun_launch).
    Calls of one Kernel from several threads run one at a time (its arguments are its state)."""

    def __init__(self, prog, name):
        self.prog, self.name = prog, name
        h = c_void_p()
        _check(L.kernel_new(prog.handle, name.encode(), byref(h)), prog.ctx._h)
        self._h = h.value
        prog.ctx._adopt(self)
        self.nargs = L.kernel_nargs(self._h)
        self._geo = {}
        self._lock = threading.Lock()  # a kernel's arguments are its state: one call at a time
        self.args = []
        for i in range(self.nargs):
            info = L.ArgInfoC()
            if L.kernel_arg_info(self._h, i, byref(info)):
                self.args.append((None, "", ""))
            else:
                self.args.append((info.kind, info.type.decode(), info.name.decode()))
        # pointer arguments' element type and size, for the per-call checks (None: nothing to check)
        self._ptr = [_pointee(ty) if kind in (0, 1) and ty else None for kind, ty, _ in self.args]

    _rank = 0

    def _release(self):
        if _is_dead(self):
            return
        if getattr(self, "_h", None):
            L.kernel_free(self._h)
            self._h = None
        _kill(self, "the kernel's program or context is closed")

    def __del__(self):
        self._release()

    def free(self):
        """Free the kernel now (else with its program or context); any use after raises clrun.InvalidArgument."""
        self._release()

    close = free

    @property
    def handle(self):
        if not self._h:
            raise InvalidArgument(1, "the kernel's context is closed")
        return self._h

    def _geometry(self, global_size, local_size):
        """ctypes arrays of the launch's global and local sizes (cached per shape) and its work-items."""
        try:
            key = (global_size, local_size)
            geo = self._geo.get(key)
        except TypeError:  # unhashable (a list): checked below, not cached
            key, geo = None, None
        if geo is None:
            gs = _ints(global_size, f"{self.name}: global_size")
            dims = len(gs)
            if local_size is None:  # the global size is exact (as PyCUDA's grid × block): a work-group size that divides it
                ls = [1] * dims
                cap = min(256, self.prog.ctx.device.max_work_group)
                ls[0] = next(d for d in range(min(cap, gs[0]), 0, -1) if gs[0] % d == 0)
            else:
                ls = _ints(local_size, f"{self.name}: local_size")
            if len(ls) != dims:
                raise InvalidArgument(1, f"{self.name}: global_size has {dims} dimensions, local_size {len(ls)}")
            geo = (dims, (c_size_t * dims)(*gs), (c_size_t * dims)(*ls), math.prod(gs))
            if key is not None:
                self._geo[key] = geo
        return geo

    def _check_array(self, i, dtype, nbytes, items, check_size):
        """An array or Buffer for pointer argument i: its dtype is the pointee's type, and it holds at
        least one element per work-item (unless check_size is False)."""
        ptr = self._ptr[i]
        if ptr is None:  # not a pointer, or no argument info: nothing to check against
            return
        base, psize = ptr
        _, ty, pname = self.args[i]
        want = _CL_OF.get(dtype)
        if psize is not None and want != base and not (np.dtype(dtype) == np.bool_ and base == "char"):
            raise ArgMismatch(9, f"{self.name}: argument {i} ({ty} {pname}) gets {np.dtype(dtype)} data; the kernel reads {base} "
                                 f"(give an array of that type, e.g. .astype)")
        if check_size and psize is not None and nbytes // psize < items:
            raise ArgMismatch(9, f"{self.name}: argument {i} ({ty} {pname}) holds {nbytes // psize} elements of {ty.rstrip('*').strip()}; "
                                 f"the launch has {items} work-items, which would read past its end (check_size=False for a kernel "
                                 f"that reads fewer elements than it has work-items)")

    def __call__(self, *args, global_size, local_size=None, wait=True, event=False, check_size=True):
        with self._lock:
            return self._call(args, global_size, local_size, wait, event, check_size)

    def _call(self, args, global_size, local_size, wait, event, check_size):
        ctx = self.prog.ctx
        kh = self.handle  # raises once the context is closed
        if len(args) != self.nargs:
            raise ArgMismatch(9, f"{self.name} takes {self.nargs} arguments, {len(args)} given")
        dims, g, loc, items = self._geometry(global_size, local_size)
        temps, backs = [], []  # device memory for the call's arrays (raw handles, freed at the end)
        try:
            cls_in, cls_out, ndarray = In, Out, np.ndarray
            for i, a in enumerate(args):
                kind = self.args[i][0]
                tp = type(a)
                if tp is cls_in or tp is cls_out:  # the seed's path first: In/Out wrappers
                    arr, h = a.arr, c_void_p()
                    self._check_array(i, arr.dtype, arr.nbytes, items, check_size)
                    if tp is cls_in and arr.nbytes:
                        st = L.buf_new_from(ctx._h, arr.ctypes.data, arr.nbytes, 0, byref(h))
                    else:
                        st = L.buf_new(ctx._h, max(arr.nbytes, 1), 0, byref(h))
                    if st:
                        _raise(st, ctx._h)
                    temps.append(h.value)
                    if tp is cls_out:
                        backs.append((h.value, arr))
                    st = L.arg_buf(kh, i, h.value)
                elif isinstance(a, Buffer):
                    self._check_array(i, a.dtype, a.nbytes, items, check_size)
                    st = L.arg_buf(kh, i, a.handle)
                elif a is None:
                    st = L.arg_buf(kh, i, None)
                elif isinstance(a, Local):
                    st = L.arg_local(kh, i, a.nbytes)
                elif kind == 3 and isinstance(a, np.ndarray):  # a by-value vector or struct from an array's bytes
                    st = self._scalar(i, self.args[i][1], self.args[i][2], a)
                elif isinstance(a, (In, Out, np.ndarray)):
                    arr = a.arr if isinstance(a, (In, Out)) else a
                    if isinstance(a, np.ndarray) and not a.flags.c_contiguous:
                        raise InvalidArgument(1, f"argument {i} ({self.args[i][2]}): a bare array is read back into; give a C-contiguous "
                                                 "one, or In(...)")
                    self._check_array(i, arr.dtype, arr.nbytes, items, check_size)
                    h = c_void_p()
                    if (not isinstance(a, Out) or isinstance(a, InOut)) and arr.nbytes:  # made holding the array's bytes
                        st = L.buf_new_from(ctx._h, arr.ctypes.data, arr.nbytes, 0, byref(h))
                    else:
                        st = L.buf_new(ctx._h, max(arr.nbytes, 1), 0, byref(h))
                    _check(st, ctx._h)
                    temps.append(h.value)
                    if not isinstance(a, In):
                        backs.append((h.value, arr))
                    st = L.arg_buf(kh, i, h.value)
                else:
                    st = self._scalar(i, self.args[i][1], self.args[i][2], a)
                if st:
                    _raise(st, ctx._h)
            ev = None
            if event:
                e = c_void_p()
                _check(L.launch_ev(kh, dims, g, loc, byref(e)), ctx._h)
                ev = Event(e.value)
            else:
                _check(L.launch(kh, dims, g, loc), ctx._h)
            for h, arr in backs:  # blocking: the queue is in order, so the launch is done after
                if arr.nbytes:
                    _check(L.download(h, 0, arr.ctypes.data, arr.nbytes), ctx._h)
            if wait and not backs:
                ctx.finish()
            return ev
        finally:
            for h in temps:
                L.buf_free(h)

    def _scalar(self, i, ty, pname, v):
        base = ty.rstrip("*").strip()
        if base.startswith("const "):
            base = base[6:].strip()
        code = _SCALAR.get(base)
        if code is None:  # a vector or struct: its bytes, checked by the library against the device's size
            raw = np.ascontiguousarray(v)
            return L.arg_bytes(self._h, i, raw.ctypes.data, raw.nbytes)
        setter, conv = L.arg_setters[code]
        where = f"{self.name}: argument {i} ({ty} {pname})"
        if isinstance(v, (np.ndarray, list, tuple)) or v is None or isinstance(v, (str, bytes)):
            raise ArgMismatch(9, f"{where} is a {base}; {type(v).__name__} given")
        if code in _INT_RANGE:  # an integer of the parameter's range, never wrapped or truncated
            if isinstance(v, (float, np.floating)) and not float(v).is_integer():
                raise ArgMismatch(9, f"{where} is an integer; {v!r} is not")
            try:
                iv = int(v)
            except (TypeError, ValueError, OverflowError):
                raise ArgMismatch(9, f"{where} is an integer; {v!r} is not") from None
            lo, hi = _INT_RANGE[code]
            if not lo <= iv <= hi:
                raise InvalidArgument(1, f"{where}: {iv} is out of the range of {base} ({lo} to {hi})")
            return setter(self._h, i, iv)
        try:
            fv = float(v)
        except (TypeError, ValueError):
            raise ArgMismatch(9, f"{where} is a {base}; {v!r} is not a number") from None
        with np.errstate(over="ignore"):
            cast = np.float16(fv) if code == "f16" else np.float32(fv) if code == "f32" else fv
        if math.isfinite(fv) and not np.isfinite(cast):
            raise InvalidArgument(1, f"{where}: {fv!r} overflows {base}")
        if code == "f16":
            return setter(self._h, i, int(cast.view(np.uint16)))
        return setter(self._h, i, conv(fv))


class Program:
    """A built program; its kernels are attributes (prog.multiply_them) or prog.kernel(name)."""

    def __init__(self, ctx, source=None, path=None, options=None, name=None):
        if (source is None) == (path is None):
            raise InvalidArgument(1, "program: give source= or path=, one of them")
        self.ctx = ctx
        h = c_void_p()
        opts = options.encode() if options else None
        if path is not None:
            _check(L.prog_file(ctx.handle, os.fsencode(path), opts, byref(h)), ctx._h)
        else:
            _check(L.prog_source(ctx.handle, source.encode(), (name or "source").encode(), opts, byref(h)), ctx._h)
        self._h = h.value
        self._kernels = {}
        ctx._adopt(self)

    _rank = 1

    def _release(self):
        if _is_dead(self):
            return
        if getattr(self, "_h", None):
            for k in self._kernels.values():
                k._release()
            self._kernels.clear()
            L.prog_free(self._h)
            self._h = None
        _kill(self, "the program's context is closed")

    @property
    def handle(self):
        if not self._h:
            raise InvalidArgument(1, "the program's context is closed")
        return self._h

    @property
    def from_cache(self):
        """Whether the binary came from the on-disk cache."""
        return bool(L.prog_from_cache(self.handle))

    def kernel(self, name):
        k = self._kernels.get(name)
        if k is None or _is_dead(k):
            k = self._kernels[name] = Kernel(self, name)
        return k

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self.kernel(name)

    def free(self):
        """Free the program and its kernels now (else when collected or the context closes)."""
        self._release()

    close = free

    def __del__(self):
        self._release()
