"""Reductions of clrun.Array along axes (axis=, keepdims=, dtype=), with NumPy's result types.

Over the whole Array (axis=None, no keepdims) the library's reductions run and a NumPy scalar comes
back, as before. Along axes a generated kernel runs one work-item per output element, walking the
reduced dimensions at any strides: float32 sums and products accumulate in double where the device
has fp64 (compensated float where not), float16 in float, float64 compensated, integers in 64 bits
wrapping as NumPy's; max/min/argmax/argmin propagate NaN (argmax/argmin: the first NaN's index, ties
to the first), any/all are truth values. mean divides the sum; var and std are two passes (the mean,
then the squared deviations), with ddof=.
"""
import math
import warnings

import numpy as np

from ._core import Unsupported
from . import _array as A
from . import _nd as N
from . import _ufuncs as U

_I64, _U64, _F64, _B = np.dtype(np.int64), np.dtype(np.uint64), np.dtype(np.float64), np.dtype(np.bool_)


def _sum_type(dt, dtype):
    if dtype is not None:
        return np.dtype(dtype)
    if dt.kind in "bi":
        return _I64
    if dt.kind == "u":
        return _U64
    return dt


def _acc(ctx, rt, op):
    """(accumulator type, compensated) of a sum or product computed for result type rt."""
    if rt.kind == "f":
        if rt == _F64:
            return "double", op == "sum"
        if ctx.device.fp64 and rt == np.float32:
            return "double", False
        return "float", op == "sum"
    return ("ulong", False)


def _branch(op, dt, rt, acc, comp, nr):
    """The code of one reduction over the reduced dimensions from position p, stored at z[o]."""
    x = N.load(dt, "a", "q")
    ct = N.ctype(dt)
    b = []
    if op in ("sum", "prod"):
        one = "0" if op == "sum" else "1"
        b.append(f"{acc} s = {one}; {acc} e = 0;")
        if comp:  # Kahan–Babuška: the lost low part kept in e
            upd = f"{{ const {acc} v = ({acc})x; const {acc} t = s + v; e += (fabs(s) >= fabs(v)) ? ((s - t) + v) : ((v - t) + s); s = t; }}"
            fin = "(isfinite(s) ? s + e : s)"
        else:
            upd = f"s = s {'+' if op == 'sum' else '*'} ({acc})x;"
            fin = "s"
    elif op in ("max", "min", "argmax", "argmin"):
        cmp = ">" if op in ("max", "argmax") else "<"
        nan = "isnan(x) ||" if dt.kind == "f" else ""
        keep = "!isnan(s) &&" if dt.kind == "f" else ""
        b.append(f"{ct} s = ({ct}){N.load(dt, 'a', 'p')}; long bi = 0, k = 0;")
        upd = f"if ({keep} ({nan} x {cmp} s)) {{ s = x; bi = k; }} k++;"
        fin = "bi" if op.startswith("arg") else "s"
    else:  # any, all
        b.append("uchar s = " + ("0" if op == "any" else "1") + ";")
        upd = "s = s " + ("| (x != 0)" if op == "any" else "& (x != 0)") + ";"
        fin = "s"
    loops, close = [], []
    prev = "p"
    for e in range(nr):
        loops.append(f"for (long i{e} = 0; i{e} < m{e}; i{e}++) {{ const long q{e} = {prev} + i{e} * t{e};")
        close.append("}")
        prev = f"q{e}"
    b.append(" ".join(loops) + f" const long q = {prev}; const {ct} x = ({ct}){x}; {upd} " + " ".join(close))
    b.append(N.store(rt, "z", "o", fin, _I64 if op.startswith("arg") else np.dtype(np.float64) if acc == "double"
                     else np.dtype(np.float32) if acc == "float" else _U64 if acc == "ulong" else rt) + ";")
    return " ".join(b)


# reductions built as one kernel (a branch on opc): the two of a pair share their result type
_PAIRS = (("sum", "prod"), ("max", "min"), ("argmax", "argmin"), ("any", "all"))
_PAIR_OF = {op: p for p in _PAIRS for op in p}


def _source(ctx, pair, dt, rt, nk, nr):
    ps = ["ulong n", "uint opc", f"__global {N._storage(rt)} *z", f"__global const {N._storage(dt)} *a", "long ao"]
    ps += [f"long n{d}, long s{d}" for d in range(nk)] + [f"long m{e}, long t{e}" for e in range(nr)]
    b = ["ulong r = get_global_id(0);", "if (r >= n) return;", "const ulong o = r;", "long p = ao;"]
    for d in reversed(range(nk)):
        c = f"(long)(r % (ulong)n{d})" if d else "(long)r"
        b.append(f"{{ const long c = {c};" + (f" r /= (ulong)n{d};" if d else "") + f" p += c * s{d}; }}")
    fp64 = "double" in (N.cl(dt), N.cl(rt))
    for i, op in enumerate(pair):
        acc, comp = _acc(ctx, rt, op) if op in ("sum", "prod") else (None, False)
        fp64 = fp64 or acc == "double"
        b.append(f"if (opc == {i}) {{ {_branch(op, dt, rt, acc, comp, nr)} }}")
    return (("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if fp64 else "")
            + "__kernel void __NAME__(" + ", ".join(ps) + ")\n{\n    " + "\n    ".join(b) + "\n}\n")


def _along(x, op, axes, rt, keepdims):
    """op over the dimensions axes of x, as a new Array of type rt."""
    ctx = x.ctx
    kept = [d for d in range(x.ndim) if d not in axes]
    oshape = tuple(1 if d in axes else x.shape[d] for d in range(x.ndim)) if keepdims else tuple(x.shape[d] for d in kept)
    m = math.prod(x.shape[d] for d in axes)
    if m == 0 and op in ("max", "min", "argmax", "argmin"):
        raise ValueError(f"zero-size array to reduction operation {op.replace('arg', '')} which has no identity"
                         if not op.startswith("arg") else f"attempt to get {op} of an empty sequence")
    out = A.Array(ctx, oshape, rt)
    n = out.size
    if not n:
        return out
    acc = _acc(ctx, rt, op)[0] if op in ("sum", "prod") else None
    N.need_fp64(ctx, [x.dtype, rt] + ([_F64] if acc == "double" else []), op)
    st = N.strides(x)
    kshp, (kst,) = N.coalesce([x.shape[d] for d in kept], [[st[d] for d in kept]])
    rshp, (rst,) = N.coalesce([x.shape[d] for d in axes], [[st[d] for d in axes]]) if m else ([0], [[0]])
    while len(kshp) < 2:  # padded: one build serves every reduction of up to two kept and two reduced dimensions
        kshp, kst = [1] + kshp, [0] + kst
    while len(rshp) < 2:
        rshp, rst = [1] + rshp, [0] + rst
    pair = _PAIR_OF[op]
    c = N.program(ctx, _source(ctx, pair, x.dtype, rt, len(kshp), len(rshp)), f"clrun_{pair[0]}_axis")
    h, o = x._raw()
    args = [("u64", n), ("u32", pair.index(op)), ("buf", out._raw()[0]), ("buf", h), ("i64", o // x.itemsize)]
    args += [a for d in range(len(kshp)) for a in (("i64", kshp[d]), ("i64", kst[d]))]
    args += [a for e in range(len(rshp)) for a in (("i64", rshp[e]), ("i64", rst[e]))]
    N.run(ctx, c, n, args)
    return out


def _complex_sum(x, op, axis, dtype, keepdims):
    """sum or mean of a complex Array: its real and imaginary parts reduced apart (the float
    reductions' accuracy), joined again."""
    if op not in ("sum", "mean"):
        from ._ufuncs import DTypeError
        raise DTypeError(11, f"{op} of complex Arrays is not one clrun computes (sum and mean are)")
    if dtype is not None and np.dtype(dtype).kind != "c":
        raise Unsupported(11, f"{op}: dtype={np.dtype(dtype)} would drop the imaginary part; astype first")
    x = x if dtype is None or np.dtype(dtype) == x.dtype else x.astype(dtype)
    f = reduce if op == "sum" else mean
    kw = {"keepdims": keepdims}
    re = f(x.real, axis, **kw) if op == "mean" else f(x.real, "sum", axis, keepdims=keepdims)
    im = f(x.imag, axis, **kw) if op == "mean" else f(x.imag, "sum", axis, keepdims=keepdims)
    if not isinstance(re, A.Array):
        return x.dtype.type(complex(re, im))
    out = A.Array(x.ctx, re.shape, x.dtype)
    out.real[...] = re
    out.imag[...] = im
    return out


def reduce(x, op, axis=None, dtype=None, keepdims=False, out=None):
    if out is not None:
        raise Unsupported(11, f"{op}: out= is not supported (assign the result: a[...] = x.{op}(...))")
    if x.dtype.kind == "c":
        return _complex_sum(x, op, axis, dtype, keepdims)
    if x.bf16:
        raise Unsupported(11, f"{op} on bfloat16 Arrays: .astype(np.float32) first")
    arg = op.startswith("arg")
    if arg and axis is not None and not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{op}: axis is None or an int")
    axes = N.norm_axes(axis, x.ndim)
    if axis is None and not keepdims and (dtype is None or (op in ("sum", "prod") and np.dtype(dtype) == _sum_type(x.dtype, None))):
        return A._reduce(N.contiguous(x), op)
    if op in ("sum", "prod"):
        rt = _sum_type(x.dtype, dtype)
    elif arg:
        rt = _I64
        if axis is None:  # the flat index
            r = _along(N.contiguous(x).reshape(-1), op, (0,), rt, False)
            return r.reshape((1,) * x.ndim) if keepdims else r
    elif op in ("any", "all"):
        rt = _B
    else:
        rt = x.dtype
    src = x
    if dtype is not None and op not in ("sum", "prod") and np.dtype(dtype) != x.dtype:
        src, rt = x.astype(dtype), np.dtype(dtype)
    r = _along(src, op, axes, rt, keepdims)
    return r.get()[()] if (not keepdims and not r.shape) else r


def _moments(x, axis, dtype):
    """(the axes, the elements per output, the result type, the type it is computed in) of mean, var
    and std: float64 for integers and bools, float16 computed in float32."""
    axes = N.norm_axes(axis, x.ndim)
    rt = np.dtype(dtype) if dtype is not None else _F64 if x.dtype.kind in "biu" else x.dtype
    return axes, math.prod(x.shape[d] for d in axes), rt, np.dtype(np.float32) if rt == np.float16 else rt


def _finish(r, x, axes, rt, keepdims):
    """r (computed with keepdims) in the result type and shape; a NumPy scalar when no axis is left."""
    if r.dtype != rt:
        r = r.astype(rt)
    if not keepdims:
        r = r.reshape(tuple(x.shape[d] for d in range(x.ndim) if d not in axes))
    return r.get()[()] if (not keepdims and not r.shape) else r


def mean(x, axis=None, dtype=None, keepdims=False, out=None):
    if out is not None:
        raise Unsupported(11, "mean: out= is not supported")
    if x.dtype.kind == "c":
        return _complex_sum(x, "mean", axis, dtype, keepdims)
    if axis is None and not keepdims and dtype is None:
        return A._reduce(N.contiguous(x), "mean")
    axes, n, rt, ct = _moments(x, axis, dtype)
    s = reduce(x, "sum", axes, ct, keepdims=True)
    if n == 0:
        warnings.warn("Mean of empty slice.", RuntimeWarning, stacklevel=3)
    with np.errstate(all="ignore"):
        r = s / float(n) if n else s * float("nan")
    return _finish(r, x, axes, rt, keepdims)


def var(x, axis=None, dtype=None, ddof=0, keepdims=False, out=None, sqrt=False):
    if out is not None:
        raise Unsupported(11, "var: out= is not supported")
    if x.dtype.kind == "c":
        raise Unsupported(11, "var and std of complex Arrays: not computed by clrun (sum and mean are)")
    axes, n, rt, ct = _moments(x, axis, dtype)
    src = x if x.dtype == ct else x.astype(ct)
    d = src - mean(src, axes, keepdims=True)
    s = reduce(d * d, "sum", axes, ct, keepdims=True)
    k = n - ddof
    if k <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)
    with np.errstate(all="ignore"):
        r = s / float(k) if k > 0 else s * float("inf")
    if sqrt:
        r = U.apply("sqrt", r)
    return _finish(r, x, axes, rt, keepdims)


_SCANS = {"sum": 0, "max": 1, "min": 2}
_SCAN_TYPES = {np.dtype(t): c for t, c in ((np.int32, 6), (np.uint32, 10), (np.int64, 7), (np.uint64, 11), (np.float32, 0),
                                            (np.float64, 3))}


def scan(x, op="sum", axis=None, dtype=None, exclusive=False):
    """Running sums (np.cumsum), maxima or minima (np.maximum/minimum.accumulate) along axis (None:
    the flattened Array), through the library's clrun_scan; NumPy's types (cumsum of integers and
    bools in 64 bits, float16 computed in float32 and rounded once per element)."""
    from ctypes import c_int
    from . import _lib as L
    from ._core import _check
    if x.bf16:
        raise Unsupported(11, f"cum{op} on bfloat16 Arrays: .astype(np.float32) first")
    if x.dtype.kind == "c":
        raise Unsupported(11, f"cum{op} of complex Arrays: not computed by clrun")
    if axis is None:
        x, axis = N.contiguous(x).reshape(-1), 0
    if x.ndim == 0:
        raise ValueError("cumsum of a 0-d Array: give it a dimension first")
    axis = N.normalize_axis_index(axis, x.ndim)
    rt = np.dtype(dtype) if dtype is not None else (_sum_type(x.dtype, None) if op == "sum" else x.dtype)
    ct = np.dtype(np.float32) if rt == np.float16 else np.dtype(np.int64) if rt.kind in "bi" and rt.itemsize < 4 or rt == np.bool_ \
        else np.dtype(np.uint64) if rt.kind == "u" and rt.itemsize < 4 else rt
    if ct not in _SCAN_TYPES:
        raise Unsupported(11, f"cum{op}: {rt} (int32, uint32, int64, uint64, float32, float64 and those promoting to them)")
    y = x.swapaxes(axis, -1)
    work = y.astype(ct) if y.dtype != ct else N.contiguous(y, copy=True)
    n = work.shape[-1] if work.ndim else 1
    if work.size:
        h, off = work._mem()
        _check(L.scan(work.ctx.handle, c_int(_SCANS[op]), int(exclusive), _SCAN_TYPES[ct], h, off // work.itemsize, h,
                      off // work.itemsize, work.size // n, n), work.ctx._h)
    if ct != rt:
        work = work.astype(rt)
    return work.swapaxes(axis, -1)


class _Axes:
    """The reductions' methods (mixed into clrun.Array); NumPy's signatures."""

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        """The sum (NumPy's type: int64/uint64 for integers and bools); a NumPy scalar over the whole
        Array (float32/float16 compensated in the library), an Array along axes."""
        return reduce(self, "sum", axis, dtype, keepdims, out)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        return reduce(self, "prod", axis, dtype, keepdims, out)

    def max(self, axis=None, out=None, keepdims=False):
        """The largest element (NaN if any is NaN); an empty reduction raises ValueError."""
        return reduce(self, "max", axis, None, keepdims, out)

    def min(self, axis=None, out=None, keepdims=False):
        return reduce(self, "min", axis, None, keepdims, out)

    def argmax(self, axis=None, out=None, keepdims=False):
        """The index of the first largest element (of the first NaN), int64: flat when axis is None."""
        return reduce(self, "argmax", axis, None, keepdims, out)

    def argmin(self, axis=None, out=None, keepdims=False):
        return reduce(self, "argmin", axis, None, keepdims, out)

    def any(self, axis=None, out=None, keepdims=False):
        return reduce(self, "any", axis, None, keepdims, out)

    def all(self, axis=None, out=None, keepdims=False):
        return reduce(self, "all", axis, None, keepdims, out)

    def cumsum(self, axis=None, dtype=None, out=None):
        """Running sums along axis (None: over the flattened Array), as np.cumsum (int64 for
        integers and bools); integers exact (wrapping), floats added in tiles (clrun_scan)."""
        if out is not None:
            raise Unsupported(11, "cumsum: out= is not supported")
        return scan(self, "sum", axis, dtype)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        """The mean (float64 for integers and bools, the dtype for floats); NaN with a warning when empty."""
        return mean(self, axis, dtype, keepdims, out)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        """The variance, two passes (the mean, then the squared deviations), divided by n - ddof."""
        return var(self, axis, dtype, ddof, keepdims, out)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        return var(self, axis, dtype, ddof, keepdims, out, sqrt=True)
