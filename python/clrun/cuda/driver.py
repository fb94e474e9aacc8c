"""As pycuda.driver, over clrun: In, Out, InOut, mem_alloc, memcpy_htod/dtoh, Device, Context,
Function (block=, grid=, shared=, stream=, time_kernel=, prepare/prepared_call), Stream, Event, and
SourceModule (the seed article imports it from here).

Launch shapes are CUDA's: the kernel runs grid × block threads in blocks of block; OpenCL's global
size is their product, its local size the block."""
import ctypes
import operator
import time

import numpy as np

import clrun
from .._kernel import In, InOut, Out  # noqa: F401 - PyCUDA's argument wrappers, same meaning


def init(flags=0):
    """As cuInit: nothing to do (clrun finds its devices on first use)."""


# PyCUDA passes a GPUArray's memory to kernels as .gpudata: a clrun Array is its own
clrun.Array.gpudata = property(lambda self: self)


class Error(Exception):
    pass


class LogicError(Error):
    pass


# PyCUDA's out-of-memory error: clrun's own, so that `except cuda.MemoryError` catches a failed allocation
MemoryError = clrun.DeviceOutOfMemory  # noqa: A001 - PyCUDA's name


class Device:
    """A clrun device by its position in clrun's list (clrun.devices())."""

    def __init__(self, ordinal):
        devs = clrun.devices()
        if not 0 <= ordinal < len(devs):
            raise LogicError(f"Device({ordinal}): there are {len(devs)} devices")
        self._info = devs[ordinal]
        self.ordinal = ordinal

    @staticmethod
    def count():
        return len(clrun.devices())

    def name(self):
        return self._info.name

    def total_memory(self):
        return self._info.global_mem

    def make_context(self):
        return Context(clrun.open(str(self.ordinal)), self)

    def compute_capability(self):
        """PyCUDA's (major, minor): a CUDA notion; (0, 0) here, so that code choosing paths by it takes
        the oldest (no warp intrinsics, which clrun does not translate yet)."""
        return (0, 0)

    def get_attribute(self, attr):
        """The few device_attribute values with an OpenCL meaning (device_attribute.*)."""
        i = self._info
        table = {device_attribute.MAX_THREADS_PER_BLOCK: i.max_work_group, device_attribute.MULTIPROCESSOR_COUNT: i.compute_units,
                 device_attribute.MAX_SHARED_MEMORY_PER_BLOCK: i.local_mem, device_attribute.WARP_SIZE: 32,
                 device_attribute.MAX_BLOCK_DIM_X: i.max_work_item[0], device_attribute.MAX_BLOCK_DIM_Y: i.max_work_item[1],
                 device_attribute.MAX_BLOCK_DIM_Z: i.max_work_item[2], device_attribute.CONCURRENT_KERNELS: 1}
        if attr not in table:
            raise LogicError(f"get_attribute: {attr!r} has no OpenCL counterpart here")
        return table[attr]

    def get_attributes(self):
        return {a: self.get_attribute(a) for a in vars(device_attribute).values() if isinstance(a, str)}


class device_attribute:  # noqa: N801 - PyCUDA's name
    """The names Device.get_attribute answers (pycuda.driver.device_attribute)."""
    MAX_THREADS_PER_BLOCK = "MAX_THREADS_PER_BLOCK"
    MULTIPROCESSOR_COUNT = "MULTIPROCESSOR_COUNT"
    MAX_SHARED_MEMORY_PER_BLOCK = "MAX_SHARED_MEMORY_PER_BLOCK"
    WARP_SIZE = "WARP_SIZE"
    MAX_BLOCK_DIM_X = "MAX_BLOCK_DIM_X"
    MAX_BLOCK_DIM_Y = "MAX_BLOCK_DIM_Y"
    MAX_BLOCK_DIM_Z = "MAX_BLOCK_DIM_Z"
    CONCURRENT_KERNELS = "CONCURRENT_KERNELS"


def mem_get_info():
    """(free, total) bytes of the current device, as cuMemGetInfo. OpenCL reports no free figure:
    free is given as the total, so a caller sizing allocations by it must still expect an allocation
    to fail (clrun.OutOfMemory)."""
    total = Context._current()._clrun.device.global_mem
    return total, total


class Context:
    """A clrun context made current for clrun.cuda (pycuda.driver.Context)."""
    _stack = []

    def __init__(self, ctx, device=None):
        self._clrun = ctx
        self._device = device
        Context._stack.append(self)

    @classmethod
    def _autoinit(cls):
        if not cls._stack:
            cls(clrun.open())
        return cls._stack[-1]

    @classmethod
    def _current(cls):
        """The current context; without one, a context on the default device is made (as
        clrun.cuda.autoinit would)."""
        return cls._stack[-1] if cls._stack else cls._autoinit()

    def get_device(self):
        if self._device is None:
            self._device = Device(int(self._clrun.device.index))
        return self._device

    @staticmethod
    def synchronize():
        Context._current()._clrun.finish()

    def push(self):
        """Made current again (pycuda.driver.Context.push)."""
        if self in Context._stack:
            Context._stack.remove(self)
        Context._stack.append(self)

    @staticmethod
    def get_current():
        return Context._stack[-1] if Context._stack else None

    def pop(self):
        if Context._stack and Context._stack[-1] is self:
            Context._stack.pop()

    def detach(self):
        self.pop()
        self._clrun.close()


class DeviceAllocation:
    """Device memory of mem_alloc: a clrun Array of bytes; passed to kernels as their pointer."""

    def __init__(self, nbytes):
        self.array = Context._current()._clrun.empty((max(int(nbytes), 1),), np.uint8)
        self.nbytes = int(nbytes)

    def free(self):
        self.array = None


class _AsAllocation:
    def __init__(self, array):
        self.array, self.nbytes = array, array.nbytes


def mem_alloc(nbytes):
    return DeviceAllocation(nbytes)


def memcpy_htod(dest, src):
    src = np.ascontiguousarray(src)
    if src.nbytes > dest.nbytes:
        raise LogicError(f"memcpy_htod: {src.nbytes} bytes into an allocation of {dest.nbytes}")
    dest.array[:src.nbytes].set(src.view(np.uint8).reshape(-1))


def memcpy_dtoh(dest, src):
    if not dest.flags.c_contiguous or dest.nbytes > src.nbytes:
        raise LogicError("memcpy_dtoh: dest must be a C-contiguous array no larger than the allocation")
    dest.view(np.uint8).reshape(-1)[:] = src.array[:dest.nbytes].get()


def mem_alloc_like(arr):
    return DeviceAllocation(np.asarray(arr).nbytes)


def to_device(arr):
    """A new allocation holding the array's bytes."""
    arr = np.ascontiguousarray(arr)
    d = DeviceAllocation(arr.nbytes)
    memcpy_htod(d, arr)
    return d


def from_device(alloc, shape, dtype, order="C"):
    out = np.empty(shape, dtype, order=order)
    memcpy_dtoh(out, alloc)
    return out


def from_device_like(alloc, other):
    return from_device(alloc, other.shape, other.dtype)


def memcpy_dtod(dest, src, size):
    dest.array[:int(size)] = src.array[:int(size)]


def memcpy_htod_async(dest, src, stream=None):
    memcpy_htod(dest, src)


def memcpy_dtoh_async(dest, src, stream=None):
    memcpy_dtoh(dest, src)


def _memset(dest, value, count, dt, what):
    if getattr(dest, "array", None) is None:
        raise LogicError(f"{what}: the allocation was freed")
    count = operator.index(count)
    bits = 8 * np.dtype(dt).itemsize
    try:
        v = operator.index(value)  # an integer, or a NumPy integer scalar (a float's bits: np.float32(x).view(np.uint32))
    except TypeError:
        raise TypeError(f"{what}: the value {value!r} is not an integer (a float's bits: np.float32(x).view(np.uint32))") from None
    if not -(1 << (bits - 1)) <= v < (1 << bits):
        raise ValueError(f"{what}: the value {v} does not fit {bits} bits")
    if count < 0 or count * np.dtype(dt).itemsize > dest.nbytes:
        raise LogicError(f"{what}: {count} elements of {np.dtype(dt).itemsize} bytes into an allocation of {dest.nbytes}")
    value = v & ((1 << bits) - 1)
    if count:
        from .._buffer import Buffer
        from .. import _lib as L
        h, _ = dest.array._raw()
        words = Buffer.from_int_ptr(dest.array.ctx, L.buf_cl_mem(h), (count,), dt)  # the first count words, the memory dest's
        try:
            words.fill(np.array(value).astype(dt))
        finally:
            words.free()


def memset_d8(dest, value, count):
    """count bytes of dest set to value (pycuda.driver.memset_d8)."""
    _memset(dest, value, count, np.uint8, "memset_d8")


def memset_d16(dest, value, count):
    """count 16-bit words of dest set to value."""
    _memset(dest, value, count, np.uint16, "memset_d16")


def memset_d32(dest, value, count):
    """count 32-bit words of dest set to value (an int, or a float's bits through np.float32(x).view(np.uint32))."""
    _memset(dest, value, count, np.uint32, "memset_d32")


def memset_d8_async(dest, value, count, stream=None):
    memset_d8(dest, value, count)


def memset_d16_async(dest, value, count, stream=None):
    memset_d16(dest, value, count)


def memset_d32_async(dest, value, count, stream=None):
    memset_d32(dest, value, count)


def pagelocked_empty(shape, dtype, order="C", mem_flags=0):
    return np.empty(shape, dtype, order=order)


def pagelocked_zeros(shape, dtype, order="C", mem_flags=0):
    return np.zeros(shape, dtype, order=order)


class Stream:
    def __init__(self, flags=0):
        self._s = Context._current()._clrun.stream()

    def synchronize(self):
        self._s.synchronize()

    def is_done(self):
        return self._s.is_done() if hasattr(self._s, "is_done") else True


class Event:
    """Host-timed event (pycuda.driver.Event): record() waits for the stream given (or the context)
    and reads the clock; time_till / time_since in milliseconds."""

    def __init__(self, flags=0):
        self._t = None

    def record(self, stream=None):
        (stream._s.synchronize() if stream is not None else Context._current()._clrun.finish())
        self._t = time.perf_counter()
        return self

    def synchronize(self):
        return self

    def query(self):
        return True

    def time_till(self, other):
        return (other._t - self._t) * 1e3

    def time_since(self, other):
        return (self._t - other._t) * 1e3


def _dims(v, n, what):
    v = tuple(int(x) for x in v)
    if not 1 <= len(v) <= n or any(x < 1 for x in v):
        raise LogicError(f"{what}={v}: 1 to {n} positive sizes")
    return v + (1,) * (3 - len(v))


class Function:
    """A kernel of a SourceModule, launched as CUDA launches: f(*args, block=(x, y, z), grid=(x, y))."""

    def __init__(self, module, kernel, extra):
        self._module, self._k, self._extra = module, kernel, extra
        self._prepared = None

    def _args(self, args, shared):
        out = []
        from .._kernel import _CL_OF
        for i, a in enumerate(args):
            if isinstance(a, DeviceAllocation):
                a = self._typed(i, a)
            elif isinstance(a, clrun.Array) and i < len(self._k._ptr) and self._k._ptr[i] and \
                    _CL_OF.get(a.dtype) != self._k._ptr[i][0] and a._base is None:
                a = self._typed(i, _AsAllocation(a))  # CUDA takes any pointer: the memory read as the kernel's type
            out.append(a)
        for name, what in self._extra:  # the translation's extra arguments: __constant__ globals, dynamic shared
            if what.startswith("dynamic __shared__"):
                out.append(clrun.Local(max(int(shared), 4)))
            else:
                out.append(self._typed(len(out), self._module._global_for(name, what)))
        return out

    def _typed(self, i, alloc):
        """Untyped device memory (mem_alloc) as the element type of the kernel's pointer argument i."""
        from .._kernel import _CL_OF
        from .._buffer import Buffer
        from .. import _lib as L
        ptr = self._k._ptr[i] if i < len(self._k._ptr) else None
        inverse = {v: k for k, v in _CL_OF.items()}
        dt = np.dtype(inverse.get(ptr[0], np.uint8)) if ptr else np.dtype(np.uint8)
        h, _ = alloc.array._raw()
        return Buffer.from_int_ptr(alloc.array.ctx, L.buf_cl_mem(h), (max(alloc.nbytes // dt.itemsize, 1),), dt)

    def __call__(self, *args, block=(1, 1, 1), grid=(1, 1), shared=0, stream=None, time_kernel=False, texrefs=()):
        b, g = _dims(block, 3, "block"), _dims(grid, 3, "grid")
        gs = tuple(b[i] * g[i] for i in range(3))
        dims = 3 if gs[2] > 1 or b[2] > 1 else 2 if gs[1] > 1 or b[1] > 1 else 1
        t0 = time.perf_counter()
        call = self._k
        if stream is not None:
            with stream._s:
                call(*self._args(args, shared), global_size=gs[:dims], local_size=b[:dims], check_size=False)
        else:
            call(*self._args(args, shared), global_size=gs[:dims], local_size=b[:dims], check_size=False)
        if time_kernel:
            Context._current()._clrun.finish()
            return time.perf_counter() - t0
        return None

    def _wg_info(self, param, ctype=ctypes.c_size_t):
        """clGetKernelWorkGroupInfo(param) of this kernel on the context's device."""
        cl = ctypes.CDLL("libOpenCL.so.1")
        cl.clGetKernelWorkGroupInfo.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_size_t, ctypes.c_void_p,
                                                ctypes.c_void_p]
        cl.clGetKernelWorkGroupInfo.restype = ctypes.c_int32
        from .. import _lib as L
        v = ctype()
        dev = self._module.ctx._clrun.device_int_ptr
        err = cl.clGetKernelWorkGroupInfo(L.kernel_cl(self._k.handle), dev, param, ctypes.sizeof(v), ctypes.byref(v), None)
        return int(v.value) if err == 0 else 0

    @property
    def max_threads_per_block(self):
        """The most threads a block of this kernel may have on the device (CL_KERNEL_WORK_GROUP_SIZE)."""
        return self._wg_info(0x11B0)

    @property
    def shared_size_bytes(self):
        """Static shared (__local) memory the kernel declares (CL_KERNEL_LOCAL_MEM_SIZE), bytes."""
        return self._wg_info(0x11B2, ctypes.c_uint64)

    @property
    def local_size_bytes(self):
        """Per-thread local (private) memory (CL_KERNEL_PRIVATE_MEM_SIZE), bytes."""
        return self._wg_info(0x11B4, ctypes.c_uint64)

    @property
    def const_size_bytes(self):
        return 0

    @property
    def num_regs(self):
        """Registers per thread: OpenCL does not say; 0."""
        return 0

    def get_attribute(self, attr):
        """pycuda.driver.function_attribute's values, as far as OpenCL tells them."""
        names = {function_attribute.MAX_THREADS_PER_BLOCK: "max_threads_per_block",
                 function_attribute.SHARED_SIZE_BYTES: "shared_size_bytes", function_attribute.CONST_SIZE_BYTES: "const_size_bytes",
                 function_attribute.LOCAL_SIZE_BYTES: "local_size_bytes", function_attribute.NUM_REGS: "num_regs"}
        if attr not in names:
            raise LogicError(f"get_attribute: {attr!r} is not one clrun.cuda knows ({', '.join(sorted(names.values()))})")
        return getattr(self, names[attr])

    def set_cache_config(self, config):
        """Accepted (OpenCL lets the driver choose the shared memory / L1 split)."""

    def prepare(self, arg_types, block=None):
        self._prepared = (arg_types, block)
        return self

    def prepared_call(self, grid, block, *args, shared_size=0):
        return self(*args, block=block, grid=grid, shared=shared_size)

    def prepared_timed_call(self, grid, block, *args, shared_size=0):
        t = self(*args, block=block, grid=grid, shared=shared_size, time_kernel=True)
        return lambda: t


class function_attribute:  # noqa: N801 - PyCUDA's name
    MAX_THREADS_PER_BLOCK, SHARED_SIZE_BYTES, CONST_SIZE_BYTES, LOCAL_SIZE_BYTES, NUM_REGS = range(5)


class func_cache:  # noqa: N801 - PyCUDA's name
    PREFER_NONE, PREFER_SHARED, PREFER_L1, PREFER_EQUAL = range(4)


def SourceModule(*args, **kw):  # noqa: N802 - PyCUDA's name (the seed article calls drv.SourceModule)
    from .compiler import SourceModule as _SM
    return _SM(*args, **kw)
