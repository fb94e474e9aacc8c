"""ctx.random(seed): random numbers on the device with NumPy Generator's names (clrun_rand).

A Random is one stream of Philox4x32-10 (Random123), laid out as cuRAND's Philox4_32_10: the seed,
a subsequence, and the offset of its next 32-bit word, which every draw advances; the same seed,
subsequence and offset give the same values on every OpenCL implementation (the normal
distribution within a few ulps: it uses the device's log, sin and cos).
"""
import math
import operator
from ctypes import byref

import numpy as np

from . import _lib as L
from ._core import F16, F32, F64, I32, I64, U8, U32, U64, BF16, BOOL, InvalidArgument, Unsupported, _check
from . import _array as A

BITS, UNIFORM, NORMAL, INTEGERS, BERNOULLI = range(5)
_FLOAT = {np.dtype(np.float32): F32, np.dtype(np.float16): F16, np.dtype(np.float64): F64}
_INT = {np.dtype(np.int32): I32, np.dtype(np.int64): I64, np.dtype(np.uint32): U32, np.dtype(np.uint64): U64}


def _shape(size):
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)):
        size = (size,)
    shape = tuple(operator.index(s) for s in size)
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    return shape


def _float_type(dtype):
    if isinstance(dtype, str) and dtype in ("bfloat16", "bf16"):
        return np.dtype(np.uint16), BF16
    dt = np.dtype(dtype)
    if dt not in _FLOAT:
        raise Unsupported(11, f"random floats are float32, float16, float64 or 'bfloat16', not {dt}")
    return dt, _FLOAT[dt]


class Random:
    """A device random-number stream (ctx.random(seed, subsequence=0)), NumPy Generator's methods:
    random, uniform, normal, standard_normal, integers, bits, bernoulli. Each returns a new Array
    (a 0-d Array when size is None). offset is the stream's next word: set it to go back or skip."""

    def __init__(self, ctx, seed=0, subsequence=0, offset=0):
        for name, v in (("seed", seed), ("subsequence", subsequence), ("offset", offset)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= int(v) < 1 << 64:
                raise InvalidArgument(1, f"random: {name} is an integer from 0 to 2^64 - 1, not {v!r}")
        self.ctx, self.seed, self.subsequence, self.offset = ctx, int(seed), int(subsequence), int(offset)

    def __repr__(self):
        return f"<clrun.Random seed={self.seed} subsequence={self.subsequence} offset={self.offset} on {self.ctx.device.name!r}>"

    def _draw(self, dist, code, dt, shape, a=0.0, b=1.0, low=0, high=0, bf16=False):
        out = A.Array(self.ctx, shape, dt, bf16=bf16)
        d = L.RandDescC()
        L.rand_desc_init(byref(d), self.seed, dist, code)
        d.subsequence, d.offset, d.a, d.b, d.low, d.high = self.subsequence, self.offset, a, b, low, high
        h, off = out._mem()
        _check(L.rand(self.ctx.handle, byref(d), h, off // max(out.itemsize, 1), out.size), self.ctx._h)
        self.offset = d.offset
        return out

    def random(self, size=None, dtype=np.float32):
        """Uniform in [0, 1): float32 (24 bits of a word), float16 (11), 'bfloat16' (8), float64 (53 of two)."""
        dt, code = _float_type(dtype)
        return self._draw(UNIFORM, code, dt, _shape(size), 0.0, 1.0, bf16=code == BF16)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=np.float32):
        """Uniform in [low, high): low + (high - low)·u in one rounding."""
        dt, code = _float_type(dtype)
        low, high = float(low), float(high)
        if not (math.isfinite(low) and math.isfinite(high)) or high < low:
            raise ValueError(f"uniform: low <= high, both finite (not {low}, {high})")
        return self._draw(UNIFORM, code, dt, _shape(size), low, high, bf16=code == BF16)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=np.float32):
        """Normal with mean loc and standard deviation scale (Box–Muller as cuRAND's curand_normal4)."""
        dt, code = _float_type(dtype)
        loc, scale = float(loc), float(scale)
        if scale < 0 or not math.isfinite(scale) or not math.isfinite(loc):
            raise ValueError(f"normal: scale >= 0, both finite (not loc {loc}, scale {scale})")
        return self._draw(NORMAL, code, dt, _shape(size), loc, scale, bf16=code == BF16)

    def standard_normal(self, size=None, dtype=np.float32):
        return self.normal(0.0, 1.0, size, dtype)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        """Integers in [low, high) ([low, high] with endpoint=True; [0, low) when high is None), no
        modulo bias: int64 (default), int32, uint32, uint64."""
        if high is None:
            low, high = 0, low
        low, high = operator.index(low), operator.index(high) + (1 if endpoint else 0)
        dt = np.dtype(dtype)
        if dt not in _INT:
            raise Unsupported(11, f"random integers are int32, int64, uint32 or uint64, not {dt}")
        info = np.iinfo(dt)
        if low >= high:
            raise ValueError(f"integers: low >= high ({low}, {high})")
        if low < info.min or high - 1 > info.max:
            raise ValueError(f"integers: [{low}, {high}) does not fit {dt}")
        if high > (1 << 63) - 1:  # past int64, which the C descriptor's bounds are: raw 64 bits mapped here
            return self._wide(low, high, _shape(size), dt)
        return self._draw(INTEGERS, _INT[dt], dt, _shape(size), low=low, high=high)

    def _wide(self, low, high, shape, dt):
        """[low, high) reaching past 2^63 - 1: the raw 64-bit values (two words each, as clrun_rand's
        integers take them) mapped on the device to low + the top 64 bits of w·(high - low)."""
        raw = self._draw(INTEGERS, U64, np.dtype(np.uint64), shape, low=0, high=0)
        rng = high - low
        if rng == 1 << 64 and dt == np.uint64:
            return raw
        from . import _nd as N
        out = A.Array(self.ctx, shape, dt)
        expr = f"((ulong){low % (1 << 64)}UL + " + (f"mul_hi(x0, (ulong){rng}UL))" if rng < 1 << 64 else "x0)")
        return N.walk(self.ctx, out, expr, np.dtype(np.uint64), [(raw, np.dtype(np.uint64), None)], stem="clrun_rand_wide")

    def bits(self, n):
        """n raw 32-bit words of the stream (uint32): the generator's output itself."""
        return self._draw(BITS, U32, np.dtype(np.uint32), _shape(n))

    def bernoulli(self, p=0.5, size=None, dtype=np.bool_):
        """1 (True) with probability p, else 0: bool or uint8 (a dropout mask)."""
        p = float(p)
        if not 0 <= p <= 1:
            raise ValueError(f"bernoulli: p from 0 to 1, not {p}")
        dt = np.dtype(dtype)
        if dt not in (np.dtype(np.bool_), np.dtype(np.uint8)):
            raise Unsupported(11, f"bernoulli values are bool or uint8, not {dt}")
        return self._draw(BERNOULLI, BOOL if dt == np.bool_ else U8, dt, _shape(size), a=p)
