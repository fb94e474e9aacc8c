"""As pycuda.curandom: uniform random GPUArrays (clrun's Philox generator, clrun_rand)."""
import numpy as np

from . import driver as _drv

_state = {"calls": 0}


def rand(shape, dtype=np.float32, stream=None):
    """Uniform in [0, 1) (float32 or float64), as pycuda.curandom.rand: each call draws a fresh stream
    (its own subsequence of one Philox key)."""
    _state["calls"] += 1
    gen = _drv.Context._current()._clrun.random(seed=0x9E3779B97F4A7C15, subsequence=_state["calls"])
    if stream is not None:
        with stream:
            return gen.random(shape, dtype)
    return gen.random(shape, dtype)
