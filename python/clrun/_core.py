"""The runtime: contexts (clrun.open), and every name of the runtime's modules (errors, devices,
buffers, programs, kernels, events), which the package imports from here."""
import ctypes
import weakref
from ctypes import byref, c_size_t, c_void_p

import numpy as np

from . import _lib as L
# the runtime's names, which the package imports from here (each module's own are in it)
from ._errors import (  # noqa: F401
    Error, InvalidArgument, NoPlatform, NoDevice, HostOutOfMemory, DeviceOutOfMemory, BuildFailed, FileError, NotFound, ArgMismatch, CLError, Unsupported, FormatError, OutOfRange, _by_status, _raise, _check, _as_clrun_errors)
from ._devices import (  # noqa: F401
    F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL, _np_to_code, _DEVICE_TYPES, DeviceInfo, _info, _spec, version, devices, select)
from ._dead import (  # noqa: F401
    _Dead, _DEAD, _kill, _is_dead)
from ._buffer import (  # noqa: F401
    _readable, _int_ptr, _dims, _MAX_BYTES, _nbytes, Buffer)
from ._kernel import (  # noqa: F401
    In, Out, InOut, Local, _SCALAR, _INT_RANGE, _CL_OF, _CL_SIZE, _pointee, _ints, Event, Kernel, Program)


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

    def random(self, seed=0, subsequence=0, offset=0):
        """A random-number stream on the device (clrun.Random: NumPy Generator's names; Philox4x32-10
        as cuRAND's, the same values on every OpenCL implementation)."""
        from ._random import Random
        return Random(self, seed, subsequence, offset)

    def ordered(self, wait_for=None):
        """A with block whose ops start after the events wait_for, and whose .event completes when
        they have all run (clrun_queue_wait before, clrun_queue_marker after: the context's queues
        are in order)."""
        from ._stream import Ordered
        return Ordered(self, wait_for)

    def ones(self, shape, dtype=np.float32):
        """A clrun.Array of ones."""
        return self.empty(shape, dtype).fill(1)

    def arange(self, start, stop=None, step=None, dtype=None):
        """np.arange's values on the device (NumPy's, bit for bit: made on the host and uploaded)."""
        from ._numpy import arange
        return arange(self, start, stop, step, dtype)

    def linspace(self, start, stop, num=50, endpoint=True, dtype=None):
        """np.linspace's values on the device (NumPy's, made on the host and uploaded)."""
        from ._numpy import linspace
        return linspace(self, start, stop, num, endpoint, dtype)

    def eye(self, n, m=None, k=0, dtype=np.float32):
        """np.eye on the device: ones on the k-th diagonal of an n×m Array of zeros."""
        from ._numpy import eye
        return eye(self, n, m, k, dtype)

    def asarray(self, arr, dtype=None, bf16=False, stream=None):
        """A clrun.Array holding a copy of arr (any array-like, C order on the device); an Array of
        this context is returned as it is. bf16=True: arr holds bfloat16 bit patterns (uint16).
        stream=: the upload is queued on it and the call returns at once."""
        from ._array import Array
        if isinstance(arr, Array) and dtype is None and arr.ctx is self:
            return arr
        a = np.asarray(arr, dtype=dtype, order="C")  # 0-d stays 0-d (ascontiguousarray makes it 1-d)
        b = self.empty(a.shape, a.dtype, bf16=bf16)
        b.set(a, stream=stream)
        return b

    def upload(self, arr, dtype=None):
        """A new device array holding a copy of arr (any array-like)."""
        a = np.asarray(arr, dtype=dtype, order="C")
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
