"""As pycuda.gpuarray: GPUArray is clrun.Array (``.get()``, arithmetic, shape, dtype)."""
import numpy as np

from clrun import Array as GPUArray  # noqa: F401
from . import driver as _drv


def _ctx():
    return _drv.Context._current()._clrun


def to_gpu(a):
    return _ctx().asarray(np.ascontiguousarray(a))


def empty(shape, dtype=np.float32):
    return _ctx().empty(shape, dtype)


def zeros(shape, dtype=np.float32):
    return _ctx().zeros(shape, dtype)


def empty_like(a):
    return _ctx().empty(a.shape, a.dtype)


def zeros_like(a):
    return _ctx().zeros(a.shape, a.dtype)
