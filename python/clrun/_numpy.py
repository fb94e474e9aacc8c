"""clrun.Array among NumPy's functions: __array_ufunc__ and __array_function__ (np.sqrt(a), np.sum(a),
np.where(c, a, b) run on the device and give Arrays), printing, pickling and copying, the module's
element-wise functions (clrun.sqrt, clrun.where, …) and the creation functions.

A NumPy function clrun has no device version of runs on the host over copies of the Arrays and
gives NumPy's result (np.median(a), np.allclose(a, b)): the table _FUNCTIONS names those that run
on the device. A NumPy ufunc without a device row, or a method other than __call__ and reduce,
likewise runs on the host.
"""
import numpy as np

from ._core import InvalidArgument, Unsupported, _is_dead
from . import _array as A
from . import _axes as X
from . import _nd as N
from . import _sort as S
from . import _hist as H
from . import _ufuncs as U

# NumPy ufunc -> the row of _ufuncs.BINARY / UNARY
_UFUNCS = {uf: op for op, (uf, _) in list(U.BINARY.items()) + list(U.UNARY.items()) if op not in ("erf", "sigmoid")}
_UFUNCS[np.divide] = "div"
_UFUNCS[np.abs] = "abs"
_REDUCE = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min", np.logical_or: "any", np.logical_and: "all"}


def _host(v):
    if isinstance(v, A.Array):
        return v.get()
    if isinstance(v, (list, tuple)):
        return type(v)(_host(x) for x in v)
    if isinstance(v, dict):
        return {k: _host(x) for k, x in v.items()}
    return v


def _on_host(f, args, kwargs):
    return f(*_host(args), **_host(kwargs))


class _Numpy:
    """NumPy's protocols (mixed into clrun.Array)."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        for v in inputs:
            if isinstance(v, np.ndarray) and v.ndim:
                raise InvalidArgument(1, f"{ufunc.__name__}: an Array with a NumPy array: move it to the device first "
                                         "(ctx.asarray(x)); clrun never computes on the host")
        if ufunc is np.matmul and method == "__call__" and len(inputs) == 2 and not kwargs:
            return A.matmul(*inputs)
        op = _UFUNCS.get(ufunc)
        if method == "__call__" and op is not None and set(kwargs) <= {"out"}:
            out = kwargs.get("out")
            if isinstance(out, tuple):
                out = out[0] if len(out) == 1 else out
            if out is not None and not isinstance(out, A.Array):
                return NotImplemented
            return U.apply(op, *inputs, out=out)
        if method == "accumulate" and ufunc in (np.add, np.maximum, np.minimum) and len(inputs) == 1 and set(kwargs) <= {"axis", "dtype"}:
            return X.scan(inputs[0], {np.add: "sum", np.maximum: "max", np.minimum: "min"}[ufunc], kwargs.get("axis", 0),
                          kwargs.get("dtype"))
        if method == "reduce" and ufunc in _REDUCE and len(inputs) == 1 and set(kwargs) <= {"axis", "keepdims", "dtype"}:
            return X.reduce(inputs[0], _REDUCE[ufunc], kwargs.get("axis", 0), kwargs.get("dtype"), kwargs.get("keepdims", False))
        if "out" in kwargs:
            return NotImplemented
        return getattr(ufunc, method)(*_host(inputs), **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        f = _FUNCTIONS.get(func)
        if f is None:
            return _on_host(func, args, kwargs)
        return f(*args, **kwargs)

    def __repr__(self):
        if _is_dead(self):
            return "<clrun.Array (freed)>"
        body = np.array2string(self.get(), separator=", ", prefix="clrun.Array(")
        dt = "bfloat16 bits" if self.bf16 else str(self.dtype)
        return f"clrun.Array({body}, dtype={dt})"

    def __str__(self):
        if _is_dead(self):
            return "<clrun.Array (freed)>"
        return str(self.get())

    def __format__(self, spec):
        return format(self.get()[()] if not self.shape else str(self), spec)

    def __reduce_ex__(self, protocol):
        """Pickled as its values (a host copy); unpickled onto the default device's context."""
        return (_unpickle, (self.get(), self.bf16))

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of the Array's device memory (device type kDLOpenCL, the data pointer the
        cl_mem); dl_device=(1, 0) (the CPU) gives a host copy's."""
        from ._dlpack import capsule
        return capsule(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        from ._dlpack import device
        return device(self)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()


_DEFAULT = []


def _default_context():
    """The context unpickled and DLPack-imported Arrays land on: the default device's, one per process."""
    from ._core import Context
    if not _DEFAULT or not _DEFAULT[0]._h:
        _DEFAULT[:] = [Context()]
    return _DEFAULT[0]


def _unpickle(values, bf16):
    return _default_context().asarray(values, bf16=bf16)


# ---- the module's functions ------------------------------------------------------------------------------


def _fn(op):
    def f(x, out=None):
        return U.apply(op, x, out=out)
    f.__name__ = op
    f.__doc__ = f"NumPy's {op} element by element on the device (see clrun.Array)."
    return f


def _fn2(op):
    def f(x, y, out=None):
        return U.apply(op, x, y, out=out)
    f.__name__ = op
    f.__doc__ = f"NumPy's {op} element by element, broadcast, on the device."
    return f


UNARY_NAMES = ("abs", "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin",
               "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "floor", "ceil", "trunc", "rint",
               "erf", "sigmoid", "sign", "square", "reciprocal", "isnan", "isinf", "isfinite", "signbit", "logical_not")
BINARY_NAMES = ("maximum", "minimum", "arctan2", "hypot", "copysign", "fmod", "logical_and", "logical_or", "logical_xor")
FUNCS = {n: _fn(n) for n in UNARY_NAMES}
FUNCS.update({n: _fn2(n) for n in BINARY_NAMES})
FUNCS["power"] = _fn2("pow")
FUNCS["where"] = U.where
FUNCS["conjugate"] = FUNCS["conj"] = _fn("conjugate")


def clip(a, a_min, a_max, out=None):
    """np.clip: minimum(maximum(a, a_min), a_max), NaN kept; either bound may be None."""
    if a_min is None and a_max is None:
        raise ValueError("One of max or min must be given")
    r = a if a_min is None else U.apply("maximum", a, a_min)
    r = r if a_max is None else U.apply("minimum", r, a_max)
    if out is not None:
        N.assign(out, r)
        return out
    return r if r is not a else a.copy()


def round_(a, decimals=0, out=None):
    """np.round: half to even; with decimals, as NumPy: rint(a * 10**d) / 10**d (d < 0: rint(a / 10**-d) * 10**-d)."""
    if a.dtype.kind in "biu":
        if decimals >= 0:
            return a.copy()
        raise Unsupported(11, "round: negative decimals on integer Arrays")
    if decimals == 0:
        r = U.apply("rint", a)
    elif decimals > 0:
        f = 10.0 ** decimals
        r = U.apply("div", U.apply("rint", U.apply("mul", a, f)), f)
    else:
        f = 10.0 ** -decimals
        r = U.apply("mul", U.apply("rint", U.apply("div", a, f)), f)
    if out is not None:
        N.assign(out, r)
        return out
    return r


FUNCS["clip"] = clip
FUNCS["cumsum"] = lambda a, axis=None, dtype=None, exclusive=False: X.scan(a, "sum", axis, dtype, exclusive)
FUNCS["cummax"] = lambda a, axis=None, exclusive=False: X.scan(a, "max", axis, None, exclusive)
FUNCS["cummin"] = lambda a, axis=None, exclusive=False: X.scan(a, "min", axis, None, exclusive)
FUNCS["round"] = round_
FUNCS["sort"] = S.sort
FUNCS["argsort"] = S.argsort
FUNCS["topk"] = S.topk
FUNCS["bincount"] = H.bincount
FUNCS["histogram"] = H.histogram


def concatenate(arrays, axis=0):
    """np.concatenate of Arrays of one context (dtype: NumPy's result_type of theirs); axis=None flattens."""
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if not all(isinstance(a, A.Array) for a in arrays):
        raise InvalidArgument(1, "concatenate: clrun.Arrays (move NumPy arrays to the device first)")
    ctx = arrays[0].ctx
    if axis is None:
        arrays, axis = [a.reshape(-1) for a in arrays], 0
    nd = arrays[0].ndim
    if nd == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = N.normalize_axis_index(axis, nd)
    for a in arrays:
        if a.ctx is not ctx:
            raise InvalidArgument(1, "concatenate: the Arrays are on different contexts")
        if a.ndim != nd or any(a.shape[d] != arrays[0].shape[d] for d in range(nd) if d != axis):
            raise ValueError("all the input array dimensions except for the concatenation axis must match exactly")
    dt = np.result_type(*[a.dtype for a in arrays])
    shape = list(arrays[0].shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    out = A.Array(ctx, tuple(shape), dt)
    at = 0
    for a in arrays:
        key = (slice(None),) * axis + (slice(at, at + a.shape[axis]),)
        N.assign(out[key], a)
        at += a.shape[axis]
    return out


def stack(arrays, axis=0):
    """np.stack: Arrays of one shape along a new axis."""
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to stack")
    if not all(isinstance(a, A.Array) for a in arrays):
        raise InvalidArgument(1, "stack: clrun.Arrays (move NumPy arrays to the device first)")
    if len({a.shape for a in arrays}) != 1:
        raise ValueError("all input arrays must have the same shape")
    axis = N.normalize_axis_index(axis, arrays[0].ndim + 1)
    return concatenate([a.expand_dims(axis) for a in arrays], axis=axis)


def _like(proto, fill, dtype=None, shape=None):
    if not isinstance(proto, A.Array):
        raise InvalidArgument(1, "an Array is the prototype")
    out = A.Array(proto.ctx, proto.shape if shape is None else shape, proto.dtype if dtype is None else dtype,
                  bf16=proto.bf16 if dtype is None else False)
    if fill is not None:
        out.fill(fill)
    return out


def empty_like(a, dtype=None, shape=None):
    return _like(a, None, dtype, shape)


def zeros_like(a, dtype=None, shape=None):
    return _like(a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None):
    return _like(a, 1, dtype, shape)


def full_like(a, fill_value, dtype=None, shape=None):
    return _like(a, fill_value, dtype, shape)


def arange(ctx, start, stop=None, step=None, dtype=None):
    """np.arange's values (computed as NumPy computes them, then uploaded: bit for bit NumPy's)."""
    return ctx.asarray(np.arange(start, stop, step, dtype=dtype) if stop is not None else np.arange(start, dtype=dtype))


def linspace(ctx, start, stop, num=50, endpoint=True, dtype=None):
    """np.linspace's values (NumPy's, uploaded)."""
    return ctx.asarray(np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype))


def eye(ctx, n, m=None, k=0, dtype=np.float32):
    """np.eye on the device: zeros, then ones on the k-th diagonal (a strided view)."""
    m = n if m is None else m
    out = ctx.zeros((n, m), dtype)
    if n and m and -n < k < m:
        length = min(n + min(k, 0), m - max(k, 0))
        start = max(-k, 0) * m + max(k, 0)
        out.reshape(-1)._strided((length,), (m + 1,), start).fill(1)
    return out


def angle(z, deg=False):
    """np.angle: the argument of each element, arctan2(imag, real), in radians (degrees with deg)."""
    r = U.apply("arctan2", z.imag, z.real)
    return r * (180 / np.pi) if deg else r


FUNCS["angle"] = angle


def _ones(ctx, shape, dtype=np.float32):
    return ctx.empty(shape, dtype).fill(1)


# np.<function> -> the device's version (the Arrays' own methods where they are the same)
_FUNCTIONS = {
    np.angle: angle,
    np.real: lambda a: a.real,
    np.imag: lambda a: a.imag,
    np.sum: lambda a, axis=None, dtype=None, out=None, keepdims=False, **k: X.reduce(a, "sum", axis, dtype, keepdims, out),
    np.prod: lambda a, axis=None, dtype=None, out=None, keepdims=False, **k: X.reduce(a, "prod", axis, dtype, keepdims, out),
    np.max: lambda a, axis=None, out=None, keepdims=False, **k: X.reduce(a, "max", axis, None, keepdims, out),
    np.amax: lambda a, axis=None, out=None, keepdims=False, **k: X.reduce(a, "max", axis, None, keepdims, out),
    np.min: lambda a, axis=None, out=None, keepdims=False, **k: X.reduce(a, "min", axis, None, keepdims, out),
    np.amin: lambda a, axis=None, out=None, keepdims=False, **k: X.reduce(a, "min", axis, None, keepdims, out),
    np.argmax: lambda a, axis=None, out=None, keepdims=False: X.reduce(a, "argmax", axis, None, keepdims, out),
    np.argmin: lambda a, axis=None, out=None, keepdims=False: X.reduce(a, "argmin", axis, None, keepdims, out),
    np.any: lambda a, axis=None, out=None, keepdims=False, **k: X.reduce(a, "any", axis, None, keepdims, out),
    np.all: lambda a, axis=None, out=None, keepdims=False, **k: X.reduce(a, "all", axis, None, keepdims, out),
    np.cumsum: lambda a, axis=None, dtype=None, out=None: X.scan(a, "sum", axis, dtype) if out is None else _on_host(np.cumsum, (a,), {}),
    np.sort: lambda a, axis=-1, kind=None, order=None, **k: S.sort(a, axis, kind, order),
    np.argsort: lambda a, axis=-1, kind=None, order=None, **k: S.argsort(a, axis, kind, order),
    np.bincount: lambda x, weights=None, minlength=0: H.bincount(x, weights, minlength),
    np.histogram: lambda a, bins=10, range=None, density=None, weights=None: H.histogram(a, bins, range, density, weights),
    np.mean: lambda a, axis=None, dtype=None, out=None, keepdims=False, **k: X.mean(a, axis, dtype, keepdims, out),
    np.var: lambda a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **k: X.var(a, axis, dtype, ddof, keepdims, out),
    np.std: lambda a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **k: X.var(a, axis, dtype, ddof, keepdims, out, True),
    np.where: lambda c, x=None, y=None: U.where(c, x, y) if x is not None and y is not None else _on_host(np.where, (c,), {}),
    np.clip: lambda a, a_min=None, a_max=None, out=None, **k: clip(a, a_min, a_max, out),
    np.round: lambda a, decimals=0, out=None: round_(a, decimals, out),
    np.around: lambda a, decimals=0, out=None: round_(a, decimals, out),
    np.reshape: lambda a, newshape, order="C": a.reshape(newshape, order=order),
    np.transpose: lambda a, axes=None: a.transpose(axes),
    np.swapaxes: lambda a, a1, a2: a.swapaxes(a1, a2),
    np.squeeze: lambda a, axis=None: a.squeeze(axis),
    np.expand_dims: lambda a, axis: a.expand_dims(axis),
    np.ravel: lambda a, order="C": a.ravel(),
    np.copy: lambda a, order="K", subok=False: a.copy(),
    np.concatenate: lambda arrays, axis=0, out=None, **k: concatenate(arrays, axis),
    np.stack: lambda arrays, axis=0, out=None, **k: stack(arrays, axis),
    np.empty_like: lambda a, dtype=None, order="K", subok=True, shape=None: empty_like(a, dtype, shape),
    np.zeros_like: lambda a, dtype=None, order="K", subok=True, shape=None: zeros_like(a, dtype, shape),
    np.ones_like: lambda a, dtype=None, order="K", subok=True, shape=None: ones_like(a, dtype, shape),
    np.full_like: lambda a, fill_value, dtype=None, order="K", subok=True, shape=None: full_like(a, fill_value, dtype, shape),
    np.shape: lambda a: a.shape, np.ndim: lambda a: a.ndim, np.size: lambda a, axis=None: a.size if axis is None else a.shape[axis],
    np.dot: lambda a, b, out=None: A.dot(a, b),
}
