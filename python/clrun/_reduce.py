"""Reductions, dot and matmul on clrun.Array: the library's where it has them, generated kernels
else; NumPy's values and types."""
import math
import warnings

import numpy as np

from ._core import InvalidArgument, Unsupported
from ._dtypes import _CL, _FLOATS, _dt_name, _F32
from . import _array as A  # Array, at call time (the modules import each other)
from ._gen import _BUILT, ReductionKernel


# ---- reductions on Arrays ---------------------------------------------------------------------------
#
# Every reduction of every dtype an Array holds gives NumPy's value and NumPy's type (NumPy 2 on
# Linux): sum and prod of integers and bools in 64 bits (int64, or uint64 for unsigned types),
# wrapping as NumPy's do; max/min/argmax/argmin propagate NaN (the first NaN's index); mean of
# integers in float64; any/all as truth values (NaN is true); dot of integers in their own type
# (wrapping, as NumPy's); norm of integers in float64. float32/float16 sum, max, min, argmax, dot
# and norm run the library's reductions (compensated: error about 5e-7 of the sum of magnitudes);
# the rest run kernels generated here: float sums and products accumulate in double where the
# device has fp64 (float where it has not), work-item partials then a tree. bfloat16 is refused.

_I64, _U64 = np.dtype(np.int64), np.dtype(np.uint64)
_F64 = np.dtype(np.float64)
_NAN_MAX = "(isnan(a) ? a : isnan(b) ? b : (a >= b ? a : b))"
_NAN_MIN = "(isnan(a) ? a : isnan(b) ? b : (a <= b ? a : b))"


def _fp64(ctx):
    return bool(ctx.device.fp64)


def _red_kernel(key, make):
    k = _BUILT.get(key)
    if k is None:
        k = _BUILT[key] = make()
    return k


def _src_ty(dt):
    """The declared element type of an Array argument of a generated kernel (bool Arrays are declared
    bool and read as uchar)."""
    return "bool" if dt == np.bool_ else _CL[dt]


def _acc_float(x):
    """The accumulator of a float reduction: double where the device has it, else float."""
    return "double" if _fp64(x.ctx) else "float"


def _run_red(x, key, out_dt, neutral, red, mp, extra_args="", extra=()):
    cl = _src_ty(x.dtype)
    args = f"const {cl} *x" + (", " + extra_args if extra_args else "")
    k = _red_kernel(key, lambda: ReductionKernel(out_dt, neutral, red, mp, args, name="clrun_" + "_".join(str(p) for p in key[1:])
                                                 .replace(" ", "_").replace("-", "m")))
    return k(x, *extra).get()[()]


def _load_x(dt):
    return "vload_half(i, x)" if dt == np.float16 else "x[i]"


def _int_sum(x, what):
    """sum or prod of an integer or bool Array in 64 bits, wrapping (NumPy's int64/uint64 result)."""
    signed = x.dtype.kind == "i" or x.dtype == np.bool_
    mp = "(ulong)(long)x[i]" if signed else "(ulong)x[i]"
    r = _run_red(x, ("int", what, _src_ty(x.dtype)), _U64, "0" if what == "sum" else "1", "a + b" if what == "sum" else "a * b", mp)
    return np.uint64(r).view(np.int64) if signed else np.uint64(r)


def _float_sum(x, what):
    acc = _acc_float(x)
    out = _F64 if acc == "double" else _F32
    v = _run_red(x, ("flt", what, _CL[x.dtype], acc), out, "0" if what in ("sum", "sumsq") else "1",
                 "a * b" if what == "prod" else "a + b",
                 f"(({acc}){_load_x(x.dtype)}) * (({acc}){_load_x(x.dtype)})" if what == "sumsq" else f"({acc}){_load_x(x.dtype)}")
    return float(v)


def _extreme(x, what):
    """max or min with NumPy's NaN rule, as the Array's dtype (the caller refuses empty Arrays)."""
    dt = x.dtype
    if dt in _FLOATS:
        from ._ops import _red
        return dt.type(_red(x.ctx, what, x))
    if dt == np.bool_:
        r = _run_red(x, ("bool", what), np.dtype(np.uint8), "0" if what == "max" else "1", "a | b" if what == "max" else "a & b",
                     "(uchar)(x[i] != 0)")
        return np.bool_(r)
    if dt == _F64:
        return np.float64(_run_red(x, ("f64", what), _F64, "-INFINITY" if what == "max" else "INFINITY",
                                   _NAN_MAX if what == "max" else _NAN_MIN, "x[i]"))
    info = np.iinfo(dt)
    cl = _CL[dt]
    lim = {("long", "max"): "LONG_MIN", ("long", "min"): "LONG_MAX", ("ulong", "max"): "0", ("ulong", "min"): "ULONG_MAX"}
    neutral = lim.get((cl, what), str(info.min if what == "max" else info.max))
    return dt.type(_run_red(x, ("ext", what, cl), dt, neutral, f"{what}(a, b)", "x[i]"))


def _arg(x, what):
    """argmax/argmin: the first index of the extreme (of the first NaN where there is one)."""
    dt = x.dtype
    if what == "argmax" and dt in _FLOATS:
        from ._ops import _red
        return np.int64(_red(x.ctx, "argmax", x))
    m = _extreme(x, "max" if what == "argmax" else "min")
    cl = _src_ty(dt)
    if dt == np.bool_:
        ty, val, match = "uchar", int(bool(m)), "((uchar)(x[i] != 0) == m)"
    elif dt.kind == "f":
        ty = "float" if dt == np.float16 else cl
        val = float(m)
        xi = _load_x(dt)
        match = f"(({ty}){xi} == m || (isnan(m) && isnan(({ty}){xi})))"
    else:
        ty, val, match = cl, int(m), "(x[i] == m)"
    r = _run_red(x, ("arg", cl), _U64, "ULONG_MAX", "min(a, b)", f"({match} ? (ulong)i : ULONG_MAX)", f"{ty} m", (val,))
    return np.int64(r)


def _truth(x, what):
    if x.size == 0:
        return np.bool_(what == "all")
    xi = f"({_load_x(x.dtype)} != 0)" if x.dtype == np.float16 else "(x[i] != 0)"
    r = _run_red(x, ("truth", what, _src_ty(x.dtype)), np.dtype(np.uint8), "0" if what == "any" else "1",
                 "a | b" if what == "any" else "a & b", f"(uchar){xi}")
    return np.bool_(r)


def _empty(x, what):
    raise InvalidArgument(1, f"{what} of an empty Array: the operation has no identity (NumPy raises ValueError too)")


def _reduce(x, what, y=None):
    if x.dtype.kind == "c":
        from ._axes import _complex_sum
        if what in ("sum", "mean"):
            return _complex_sum(x, what, None, None, False)
        raise Unsupported(11, f"{what} of complex Arrays: not computed by clrun (sum and mean are)")
    if x.bf16:
        raise Unsupported(11, f"{what} of a bfloat16 Array: .astype(np.float32) first")
    dt, n = x.dtype, x.size
    if what in ("max", "min", "argmax", "argmin") and n == 0:
        _empty(x, what)
    if what in ("max", "min"):
        return _extreme(x, what)
    if what in ("argmax", "argmin"):
        return _arg(x, what)
    if what in ("any", "all"):
        return _truth(x, what)
    if what == "sum":
        if n == 0:
            return (_I64 if dt.kind in "ib" else _U64 if dt.kind == "u" else dt).type(0)
        if dt in _FLOATS:
            from ._ops import _red
            return dt.type(_red(x.ctx, "sum", x))
        return dt.type(_float_sum(x, "sum")) if dt == _F64 else _int_sum(x, "sum")
    if what == "prod":
        if n == 0:
            return (_I64 if dt.kind in "ib" else _U64 if dt.kind == "u" else dt).type(1)
        if dt.kind == "f":
            with np.errstate(over="ignore"):
                return dt.type(_float_sum(x, "prod"))
        return _int_sum(x, "prod")
    if what == "mean":
        out = dt if dt.kind == "f" else _F64
        if n == 0:
            warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=3)
            return out.type(np.nan)
        if dt.kind == "f":
            if dt in _FLOATS:
                from ._ops import _red
                s = _red(x.ctx, "sum", x)  # in double: a float16 sum past 65504 still has its mean
            else:
                s = _float_sum(x, "sum")
        elif dt.itemsize <= 4 or not _fp64(x.ctx):
            s = float(int(_int_sum(x, "sum")))  # exact in 64 bits for 8- to 32-bit values
        else:
            s = float(_run_red(x, ("mean", _CL[dt]), _F64, "0", "a + b", "(double)x[i]"))
        with np.errstate(over="ignore", invalid="ignore"):
            return out.type(s / n)
    if what == "norm2":
        if dt in _FLOATS:
            from ._ops import _red
            return dt.type(_red(x.ctx, "norm2", x))
        if n == 0:
            return (dt if dt == _F64 else _F64).type(0.0)
        if dt.kind != "f":
            x = x.astype(np.float64) if _fp64(x.ctx) else x.astype(np.float32)
        return np.float64(math.sqrt(_float_sum(x, "sumsq")))
    raise InvalidArgument(1, f"no reduction {what!r}")


def dot(a, b):
    """NumPy's dot on Arrays: 1-D · 1-D the inner product (in the dtype, integers wrapping as
    NumPy's); 2-D · 2-D, 2-D · 1-D and 1-D · 2-D the matrix product (through @); a 0-d operand
    scales the other."""
    if not isinstance(a, A.Array) or not isinstance(b, A.Array):
        raise InvalidArgument(1, "dot: two clrun.Arrays")
    if a.ctx is not b.ctx:
        raise InvalidArgument(1, "dot: the Arrays are on different contexts")
    if a.dtype != b.dtype or a.bf16 != b.bf16:
        raise Unsupported(11, f"dot: {_dt_name(a.dtype, a.bf16)} with {_dt_name(b.dtype, b.bf16)}: one dtype (astype one of them)")
    if a.ndim == 0 or b.ndim == 0:
        return a * b.item() if b.ndim == 0 else b * a.item()
    if a.ndim == 1 and b.ndim == 1:
        if a.shape != b.shape:
            raise InvalidArgument(1, f"dot: shapes {a.shape} and {b.shape} are not aligned")
        return _dot1(a.copy() if not a.is_contiguous else a, b.copy() if not b.is_contiguous else b)
    if a.ndim > 2 or b.ndim > 2:
        raise Unsupported(11, f"dot of {a.ndim}-D and {b.ndim}-D Arrays: 1-D and 2-D operands only")
    if a.shape[-1] != b.shape[0]:
        raise InvalidArgument(1, f"dot: shapes {a.shape} and {b.shape} are not aligned")
    if a.ndim == 1:
        return matmul(a.reshape(1, a.shape[0]), b).reshape(b.shape[1])
    if b.ndim == 1:
        return matmul(a, b.reshape(b.shape[0], 1)).reshape(a.shape[0])
    return matmul(a, b)


def _dot1(x, y):
    dt = x.dtype
    if dt.kind == "c":
        raise Unsupported(11, "dot of complex Arrays: not computed by clrun")
    if x.bf16:
        raise Unsupported(11, "dot of bfloat16 Arrays: .astype(np.float32) first")
    if x.size == 0:
        return np.bool_(False) if dt == np.bool_ else dt.type(0)
    if dt in _FLOATS:
        from ._ops import _red
        return dt.type(_red(x.ctx, "dot", x, y))
    cl = _src_ty(dt)
    key = ("dot", cl)
    if dt == _F64:
        k = _red_kernel(key, lambda: ReductionKernel(_F64, "0", "a + b", "x[i] * y[i]", "const double *x, const double *y",
                                                     name="clrun_dot_double"))
        return np.float64(k(x, y).get()[()])
    if dt == np.bool_:
        k = _red_kernel(key, lambda: ReductionKernel(np.uint8, "0", "a | b", "(uchar)(x[i] != 0 && y[i] != 0)",
                                                     "const bool *x, const bool *y", name="clrun_dot_bool"))
        return np.bool_(k(x, y).get()[()])
    k = _red_kernel(key, lambda: ReductionKernel(_U64, "0", "a + b", "(ulong)x[i] * (ulong)y[i]", f"const {cl} *x, const {cl} *y",
                                                 name=f"clrun_dot_{cl}"))
    return np.uint64(k(x, y).get()[()]).astype(dt)  # NumPy's integer dot wraps in the dtype; modular sums agree


# ---- matmul -----------------------------------------------------------------------------------------


def matmul(a, b):
    """a @ b on Arrays through the library's GEMM: float32 -> float32; float16 or bfloat16 ->
    float32 (exact products, f32 sums); int8 -> int32 (exact). 2-D @ 2-D, or 3-D @ 3-D batches of
    equal count."""
    if not isinstance(a, A.Array) or not isinstance(b, A.Array):
        raise InvalidArgument(1, "@: both operands are clrun.Arrays (move host arrays with ctx.asarray first)")
    if a.ctx is not b.ctx:
        raise InvalidArgument(1, "@: the Arrays are on different contexts")
    if a.dtype != b.dtype or a.bf16 != b.bf16:
        raise Unsupported(11, f"@: {_dt_name(a.dtype, a.bf16)} @ {_dt_name(b.dtype, b.bf16)}: one input dtype (astype one of them)")
    if a.dtype.kind == "c":
        raise Unsupported(11, "@ of complex Arrays: the library's GEMM is real")
    if a.ndim not in (2, 3) or b.ndim != a.ndim:
        raise Unsupported(11, f"@: shapes {a.shape} and {b.shape}: 2-D @ 2-D or 3-D @ 3-D (no broadcasting or vectors)")
    if a.ndim == 3 and a.shape[0] != b.shape[0]:
        raise Unsupported(11, f"@: batches of {a.shape[0]} and {b.shape[0]}: equal counts (no broadcasting)")
    if a.shape[-1] != b.shape[-2]:
        raise InvalidArgument(1, f"@: {a.shape} @ {b.shape}: the inner dimensions differ")
    from ._ops import _gemm_arrays
    return _gemm_arrays(a, b)
