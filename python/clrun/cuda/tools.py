"""As pycuda.tools, the parts kernels' host code uses: context_dependent_memoize, dtype_to_ctype,
DeviceData."""
import functools

import numpy as np

from . import driver as _drv

_CTYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double", np.dtype(np.int8): "signed char",
           np.dtype(np.uint8): "unsigned char", np.dtype(np.int16): "short", np.dtype(np.uint16): "unsigned short",
           np.dtype(np.int32): "int", np.dtype(np.uint32): "unsigned int", np.dtype(np.int64): "long long",
           np.dtype(np.uint64): "unsigned long long", np.dtype(np.bool_): "bool"}


def dtype_to_ctype(dtype):
    """The CUDA C type of a NumPy dtype (as pycuda.tools.dtype_to_ctype)."""
    dt = np.dtype(dtype)
    if dt not in _CTYPES:
        raise ValueError(f"dtype_to_ctype: no CUDA C type for {dt}")
    return _CTYPES[dt]


def context_dependent_memoize(func):
    """Cache func's results per current context and arguments (as pycuda.tools'), for functions that
    build modules."""
    cache = {}

    @functools.wraps(func)
    def wrapper(*args):
        key = (id(_drv.Context._current()), args)
        if key not in cache:
            cache[key] = func(*args)
        return cache[key]
    wrapper.clear_cache = cache.clear
    return wrapper


class DeviceData:
    """The launch limits PyCUDA's DeviceData reports, from the OpenCL device."""

    def __init__(self, dev=None):
        info = (dev or _drv.Context._current().get_device())._info
        self.max_threads = info.max_work_group
        self.warp_size = 32
        self.thread_blocks_per_mp = 8
        self.shared_memory = info.local_mem
        self.smem_granularity = 16
