"""Sorts of clrun.Array along an axis (lib/ops/sort): stable radix sorts in NumPy's order, bit for bit
np.sort(kind="stable") and np.argsort(kind="stable"); top-k as torch.topk."""
from ctypes import c_int, c_uint

import numpy as np

from . import _lib as L
from . import _nd as N
from ._core import InvalidArgument, Unsupported, _check

# the clrun_dtype of each key type (bfloat16 Arrays: 2)
_CODES = {np.dtype(t): c for t, c in ((np.float32, 0), (np.float16, 1), (np.float64, 3), (np.int8, 4), (np.int16, 5), (np.int32, 6),
                                      (np.int64, 7), (np.uint8, 8), (np.uint16, 9), (np.uint32, 10), (np.uint64, 11), (np.bool_, 12))}
_DESC = 1  # CLRUN_SORT_DESCENDING


def _code(x, what):
    if getattr(x, "bf16", False):
        return 2
    c = _CODES.get(x.dtype)
    if c is None:
        raise Unsupported(11, f"{what} of {x.dtype} Arrays (integers, bool, float16, bfloat16, float32, float64)")
    return c


def _check_args(what, kind, order):
    if order is not None:
        raise Unsupported(11, f"{what}: order= (structured dtypes) is not supported")
    if kind not in (None, "stable", "mergesort", "quicksort", "heapsort"):
        raise ValueError(f"{what}: kind must be one of 'quicksort', 'mergesort', 'heapsort', 'stable', not {kind!r}")


def _rows(x, axis, what):
    """(a C-contiguous copy of x with axis last, the axis) — axis None: the flattened Array."""
    if axis is None:
        return x.copy().reshape(-1), None
    axis = N.normalize_axis_index(axis, x.ndim)  # AxisError for a 0-d Array, as NumPy's
    return x.swapaxes(axis, -1).copy(), axis


def _rn(work):
    n = work.shape[-1] if work.ndim else 1
    return (work.size // n if n else 0), n


def sort(a, axis=-1, kind=None, order=None, descending=False, stable=None):
    """A sorted copy along axis (None: of the flattened Array), as np.sort(a, kind="stable"): NaN
    last, -0.0 equal to 0.0, equal keys in their order; descending=True: largest first (NaN first),
    equal keys still in their order. Every kind= is the stable radix sort."""
    _check_args("sort", kind, order)
    c = _code(a, "sort")
    work, axis = _rows(a, axis, "sort")
    rows, n = _rn(work)
    if work.size:
        h, off = work._mem()
        _check(L.sort(work.ctx.handle, c_int(c), c_uint(_DESC if descending else 0), h, off // work.itemsize, h, off // work.itemsize,
                      rows, n), work.ctx._h)
    return work if axis is None else work.swapaxes(axis, -1)


def argsort(a, axis=-1, kind=None, order=None, descending=False, stable=None):
    """The stable sorting positions along axis (int64), as np.argsort(a, kind="stable")."""
    _check_args("argsort", kind, order)
    c = _code(a, "argsort")
    from ._array import Array
    work, axis = _rows(a, axis, "argsort")
    rows, n = _rn(work)
    out = Array(a.ctx, work.shape, np.int64)
    if work.size:
        h, off = work._mem()
        oh, ooff = out._mem()
        _check(L.argsort(work.ctx.handle, c_int(c), c_uint(_DESC if descending else 0), h, off // work.itemsize, oh, ooff // 8, rows, n),
               work.ctx._h)
    return out if axis is None else out.swapaxes(axis, -1)


def topk(a, k, axis=-1, largest=True, sorted=True):
    """(values, indices): the k largest (largest=False: smallest) along axis, in order, and their
    int64 positions along it, as torch.topk(a, k, dim=axis); ties: the earlier position first; NaN
    counts as the largest."""
    c = _code(a, "topk")
    from ._array import Array
    k = int(k)
    work, axis = _rows(a, axis, "topk")
    rows, n = _rn(work)
    if not 0 <= k <= n:
        raise InvalidArgument(1, f"topk: k = {k} of {n} elements along the axis")
    shape = work.shape[:-1] + (k,) if work.ndim else (k,)
    vals = Array(a.ctx, shape, a.dtype, bf16=a.bf16)
    idx = Array(a.ctx, shape, np.int64)
    if vals.size:
        h, off = work._mem()
        vh, voff = vals._mem()
        ih, ioff = idx._mem()
        _check(L.topk(work.ctx.handle, c_int(c), c_uint(_DESC if largest else 0), h, off // work.itemsize, rows, n, k, vh,
                      voff // work.itemsize, ih, ioff // 8), work.ctx._h)
    if axis is None:
        return vals, idx
    return vals.swapaxes(axis, -1), idx.swapaxes(axis, -1)


class _Sorts:
    """The sorts' methods (mixed into clrun.Array); NumPy's signatures."""

    def sort(self, axis=-1, kind=None, order=None, descending=False, stable=None):
        """Sort in place along axis, as ndarray.sort (stable, whatever kind=)."""
        r = sort(self, axis, kind, order, descending)
        if self.dtype.kind == "f":  # the sorted bits back in place, as they are
            N.assign(N.bits(self), N.bits(r))
        else:
            N.assign(self, r)
        r.free()

    def argsort(self, axis=-1, kind=None, order=None, descending=False, stable=None):
        """The stable sorting positions along axis (int64), as ndarray.argsort(kind="stable")."""
        return argsort(self, axis, kind, order, descending)

    def topk(self, k, axis=-1, largest=True, sorted=True):
        """(values, indices) of the k largest (or smallest) along axis, as torch.topk."""
        return topk(self, k, axis, largest, sorted)
