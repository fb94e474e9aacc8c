"""NumPy's rules for the operands of clrun.Array's operators: which pairs of Arrays combine, and what
a Python or NumPy scalar becomes beside an Array."""
import math
import warnings

import numpy as np

from ._core import InvalidArgument, OutOfRange, Unsupported


def _same(a, b, op):
    if a.ctx is not b.ctx:
        raise InvalidArgument(1, f"{op}: the Arrays are on different contexts")
    if a.shape != b.shape:
        raise Unsupported(11, f"{op}: shapes {a.shape} and {b.shape}: clrun.Array has no broadcasting (give operands of one shape)")
    if a.dtype != b.dtype:
        raise Unsupported(11, f"{op}: dtypes {a.dtype} and {b.dtype}: clrun.Array does not mix dtypes (astype one of them first)")


def _scalar_of(v, dt, op):
    """A Python or NumPy scalar as a NumPy scalar of dt, refused when it does not fit (NumPy would
    change the result's type, which clrun does not)."""
    if isinstance(v, (np.ndarray, np.generic)) and np.ndim(v) == 0:
        v = v.item()
    if isinstance(v, bool) or dt == np.bool_:
        if dt != np.bool_ or not isinstance(v, (bool, int)):
            raise Unsupported(11, f"{op}: a {type(v).__name__} with a {dt} Array")
        return np.array(bool(v), np.bool_)
    if isinstance(v, int):
        if dt.kind in "iu":
            info = np.iinfo(dt)
            if not info.min <= v <= info.max:  # NumPy 2 (NEP 50) raises OverflowError here too
                raise OutOfRange(1, f"{op}: Python integer {v} out of bounds for {dt}")
        elif dt.kind == "f":
            return _float_scalar(float(v), dt)
        return np.array(v, dt)
    if isinstance(v, float):
        if dt.kind != "f":
            raise Unsupported(11, f"{op}: a float with an {dt} Array would give float64 in NumPy; clrun does not mix types "
                                  "(.astype(np.float32) first)")
        return _float_scalar(v, dt)
    raise InvalidArgument(1, f"{op}: an Array or a number, not {type(v).__name__}")




def _float_scalar(v, dt):
    """A Python float in the Array's float dtype (NEP 50: the Array's type wins); a finite value that
    overflows it warns as NumPy does (RuntimeWarning: overflow encountered in cast), never silently."""
    with np.errstate(over="ignore"):
        r = np.array(v, dt)
    if math.isfinite(v) and not np.isfinite(r):
        warnings.warn(f"overflow encountered in cast ({v!r} to {dt} is {float(r)})", RuntimeWarning, stacklevel=4)
    return r
