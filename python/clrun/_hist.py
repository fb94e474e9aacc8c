"""np.bincount and np.histogram of clrun.Array (lib/ops/hist): counts exact, weighted sums NumPy's to the
bit (each bin's weights added in the elements' order in float64; histogram's in NumPy's blocks)."""
import operator
from ctypes import c_double, c_int, c_uint

import numpy as np

from . import _lib as L
from ._core import InvalidArgument, Unsupported, _check

_CODES = {np.dtype(t): c for t, c in ((np.float32, 0), (np.float64, 3), (np.int8, 4), (np.int16, 5), (np.int32, 6), (np.int64, 7),
                                      (np.uint8, 8), (np.uint16, 9), (np.uint32, 10), (np.uint64, 11), (np.bool_, 12))}


def _device(ctx, v, what):
    from ._array import Array
    if isinstance(v, Array):
        if v.ctx is not ctx:
            raise InvalidArgument(1, f"{what}: Arrays of two contexts")
        return v
    return ctx.asarray(np.asarray(v))


def _weights(x, weights, what):
    w = _device(x.ctx, weights, what).reshape(-1)
    if w.size != x.size:
        raise ValueError("The weights and list don't have the same length.")
    if w.bf16 or w.dtype == np.float16:
        w = w.astype(np.float32)  # exact
    if w.dtype not in _CODES:
        raise Unsupported(11, f"{what}: weights of {w.dtype}")
    return w


def bincount(x, weights=None, minlength=0):
    """np.bincount of a 1-D Array of non-negative integers (or bools): int64 counts, or with weights
    their float64 sums, each bin's added in the elements' order (NumPy's bits; on a device without
    fp64, NumPy's own on host copies)."""
    from ._array import Array
    if not isinstance(x, Array):
        raise InvalidArgument(1, "bincount: a clrun.Array (ctx.asarray(x) first)")
    if x.ndim != 1:
        raise ValueError("object too deep for desired array" if x.ndim > 1 else "object of too small depth for desired array")
    if x.bf16 or x.dtype.kind not in "biu" or x.dtype == np.uint64:
        raise TypeError(f"Cannot cast array data from dtype('{x.dtype}') to dtype('int64') according to the rule 'safe'")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if x.size and int(x.min()) < 0:
        raise ValueError("'list' argument must have no negative elements")
    nbins = max(int(x.max()) + 1 if x.size else 0, minlength)
    w = None if weights is None else _weights(x, weights, "bincount")
    if w is not None and not x.ctx.device.fp64:  # float64 sums: NumPy's own on host copies
        return x.ctx.asarray(np.bincount(x.get(), w.get(), minlength))
    out = Array(x.ctx, (nbins,), np.int64 if w is None or not x.size else np.float64)  # NumPy: empty input gives int64
    if not x.size:
        return out.fill(0)
    if nbins:
        xh, xo = x._mem()
        oh, oo = out._mem()
        wh, wo = w._mem() if w is not None else (None, 0)
        _check(L.bincount(x.ctx.handle, c_int(_CODES[x.dtype]), xh, xo // x.itemsize, x.size, wh,
                          wo // (w.itemsize if w is not None else 1), c_int(_CODES[w.dtype] if w is not None else 0), nbins, oh,
                          oo // out.itemsize), x.ctx._h)
    return out


def _numpy_helpers():
    try:
        from numpy.lib._histograms_impl import _get_outer_edges, _unsigned_subtract  # NumPy 2
    except ImportError:
        from numpy.lib.histograms import _get_outer_edges, _unsigned_subtract  # NumPy 1
    return _get_outer_edges, _unsigned_subtract


def histogram(a, bins=10, range=None, density=None, weights=None):
    """np.histogram with bins equal-width bins: (counts, edges) as Arrays, counts int64 (or the sums of
    weights, in their type), NumPy's bin of every element to the bit. Edges given as an array, bin
    estimators by name, float16 or bool data, and float64 work on a device without fp64 run NumPy's
    own on host copies."""
    from ._array import Array
    if not isinstance(a, Array):
        raise InvalidArgument(1, "histogram: a clrun.Array (ctx.asarray(a) first)")
    x = a.reshape(-1) if a._st is None else a.copy().reshape(-1)
    if np.ndim(bins) != 0 or isinstance(bins, str) or x.bf16 or x.dtype not in _CODES or x.dtype == np.bool_:
        return _host(a, bins, range, density, weights)
    try:
        nb = operator.index(bins)
    except TypeError as e:
        raise TypeError("`bins` must be an integer, a string, or an array") from e
    if nb < 1:
        raise ValueError("`bins` must be positive, when an integer")
    get_outer_edges, unsigned_subtract = _numpy_helpers()
    w = None if weights is None else _weights(x, weights, "histogram")
    if w is not None and w.dtype == np.bool_:
        return _host(a, bins, range, density, weights)
    first, last = get_outer_edges(_MinMax(x), range)
    probe = np.zeros(1, x.dtype)
    bin_type = np.result_type(first, last, probe)
    if np.issubdtype(bin_type, np.integer):
        bin_type = np.result_type(bin_type, float)
    edges = np.linspace(first, last, nb + 1, endpoint=True, dtype=bin_type)
    norm = nb / unsigned_subtract(last, first)
    ft = np.dtype(np.float32 if x.dtype == np.float32 else np.float64)  # the library's bin type
    sub_dt = unsigned_subtract(np.zeros(1, bin_type), first).dtype
    mul_dt = (np.zeros(1, sub_dt) * norm).dtype
    if bin_type != ft or sub_dt != ft or mul_dt not in (ft, np.dtype(np.float64)):
        return _host(a, bins, range, density, weights)  # an arithmetic the kernel does not have
    if not x.ctx.device.fp64 and (w is not None or ft != np.float32 or mul_dt != ft):
        return _host(a, bins, range, density, weights)  # float64 on a device without it
    ctx = x.ctx
    e = ctx.asarray(edges)
    out = Array(ctx, (nb,), np.int64 if w is None else w.dtype)
    if x.size:
        xh, xo = x._mem()
        oh, oo = out._mem()
        wh, wo = w._mem() if w is not None else (None, 0)
        _check(L.histogram(ctx.handle, c_int(_CODES[x.dtype]), xh, xo // x.itemsize, x.size, wh,
                           wo // (w.itemsize if w is not None else 1), c_int(_CODES[w.dtype] if w is not None else 0), nb, e.handle,
                           c_double(float(norm)), c_uint(1 if mul_dt != ft else 0), oh, oo // out.itemsize), ctx._h)
    else:
        out.fill(0)
    if density and not ctx.device.fp64:
        return ctx.asarray(out.get() / np.array(np.diff(edges), float) / out.get().sum()), e
    if density:
        db = ctx.asarray(np.array(np.diff(edges), float))
        return out / db / out.sum(), e
    return out, e


class _MinMax:
    """What _get_outer_edges reads of an array: its size, min() and max() (the device's reductions)."""

    def __init__(self, x):
        self.x, self.size = x, x.size

    def min(self):
        return self.x.min()

    def max(self):
        return self.x.max()


def _host(a, bins, range, density, weights):
    from ._array import Array
    wt = weights.get() if isinstance(weights, Array) else weights
    n, e = np.histogram(a.get(), bins=bins, range=range, density=density, weights=wt)
    return a.ctx.asarray(n), a.ctx.asarray(e)
