"""N-dimensional element-wise work on clrun.Array: strides, broadcasting, NumPy 2's type promotion
(NEP 50), and the generated kernels that walk strided operands.

Every Array is a root allocation, a byte offset and element strides (None: C-contiguous). The
element-wise ops here take any strides (negative and zero included) and broadcast their operands as
NumPy does; one kernel per (expression, dtypes, dimensions after coalescing) is generated and built
once per context through the library's binary cache (the kernel's name is a hash of its source, so
another process finds it in the cache). Ops of the library (clrun_vec, the reductions, GEMM, Canny,
casts) take contiguous memory: Array's methods give them contiguous copies of strided views.
"""
import hashlib
import math
import threading
from ctypes import c_size_t

import numpy as np

from . import _lib as L
from ._core import InvalidArgument, OutOfRange, Unsupported, _check, _raise
from ._dtypes import _CL
from . import _array as A  # Array, at call time
from ._gen import _Compiled, _wg

try:  # NumPy 2
    from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple  # noqa: F401 (used by _views, _numpy)
except ImportError:  # NumPy 1
    from numpy.core.numeric import normalize_axis_index, normalize_axis_tuple  # noqa: F401 (used by _views, _numpy)

_LOCK = threading.Lock()
_MAXDIM = 16  # dimensions a generated kernel walks after coalescing (NumPy allows 32; few survive coalescing)
_PAD = 3  # walks of fewer dimensions are padded to this many
_B = np.dtype(np.bool_)
_F64 = np.dtype(np.float64)
_I64 = np.dtype(np.int64)

# ---- shapes and strides ---------------------------------------------------------------------------


def cstrides(shape):
    st, acc = [], 1
    for s in reversed(shape):
        st.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(st))


def strides(a):
    """Element strides of an Array (C order when it has none of its own)."""
    st = a.__dict__.get("_st")
    return st if st is not None else cstrides(a.shape)


def contiguous_strides(shape, st):
    """Whether strides st walk shape in C order without gaps (dimensions of one element ignored)."""
    acc = 1
    for s, t in zip(reversed(shape), reversed(st)):
        if s == 0:
            return True
        if s != 1 and t != acc:
            return False
        acc *= s
    return True


def broadcast_shapes(*shapes):
    nd = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(nd):
        sizes = {s[len(s) - nd + d] for s in shapes if len(s) - nd + d >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            raise ValueError("operands could not be broadcast together with shapes " + " ".join(str(tuple(s)) for s in shapes))
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def bstrides(shape, st, to):
    """Strides that read an operand of shape/st as broadcast to shape `to` (0 where it repeats)."""
    lead = len(to) - len(shape)
    return tuple(0 if d < lead or shape[d - lead] == 1 else st[d - lead] for d in range(len(to)))


def coalesce(shape, stlist):
    """Drop dimensions of one element and merge neighbours every operand walks as one; returns the
    shorter (shape, [strides per operand])."""
    dims = [d for d in range(len(shape)) if shape[d] != 1]
    shp = [shape[d] for d in dims]
    sts = [[st[d] for d in dims] for st in stlist]
    i = len(shp) - 1
    while i > 0:
        if all(st[i - 1] == st[i] * shp[i] for st in sts):
            shp[i - 1] *= shp[i]
            del shp[i]
            for st in sts:
                st[i - 1] = st[i]
                del st[i]
        i -= 1
    return shp, sts


def norm_axes(axis, ndim):
    """axis (None, int or tuple) as a sorted tuple of dimensions; AxisError as NumPy's."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list,)):
        axis = tuple(axis)
    return tuple(sorted(normalize_axis_tuple(axis, ndim)))


# ---- NumPy 2's promotion (NEP 50) ---------------------------------------------------------------------

_KIND = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def operand_dtype(v, other_dtypes, where):
    """The dtype NEP 50 gives operand v: an Array's or a NumPy value's own (strong); a Python bool,
    int or float is weak: it takes the type of the Arrays beside it when that is of its kind or
    higher (an int that does not fit raises OverflowError, as NumPy 2), else NumPy's default."""
    if isinstance(v, A.Array):
        return v.dtype
    if isinstance(v, (np.ndarray, np.generic)):
        return v.dtype
    if isinstance(v, (bool, int, float)):
        kind = 0 if isinstance(v, bool) else 1 if isinstance(v, int) else 2
        strong = np.result_type(*other_dtypes) if other_dtypes else None
        if strong is not None and _KIND.get(strong.kind, 3) >= kind:
            if kind == 1 and strong.kind in "iu":
                info = np.iinfo(strong)
                if not info.min <= v <= info.max:
                    raise OutOfRange(1, f"{where}: Python integer {v} out of bounds for {strong}")
            return strong
        return np.dtype(np.bool_ if kind == 0 else np.int64 if kind == 1 else np.float64)
    if isinstance(v, complex):  # weak too (NEP 50): the complex type of the Arrays' float precision
        strong = np.result_type(*other_dtypes) if other_dtypes else None
        if strong is not None and strong.kind == "c":
            return strong
        return np.dtype(np.complex64 if strong is not None and strong in (np.float32, np.float16) else np.complex128)
    raise InvalidArgument(1, f"{where}: an Array or a number, not {type(v).__name__}")


_RESOLVED = {}


def ufunc_types(uf, dts):
    """(the type the loop computes in, its output type) of NumPy's ufunc for these operand dtypes:
    the output's, except for ufuncs that give bool (comparisons, logical ops, isnan), which compare
    in the operands' common type."""
    key = (uf, tuple(dts))
    r = _RESOLVED.get(key)
    if r is None:
        with np.errstate(all="ignore"):
            out = uf(*[np.zeros(1, d) for d in dts])
        out_dt = (out[0] if isinstance(out, tuple) else out).dtype
        r = _RESOLVED[key] = (np.result_type(*dts) if out_dt == _B else out_dt, out_dt)
    return r


def host_scalar(v, dt):
    """A Python or NumPy scalar converted once to dt on the host, as NumPy converts it (a float to
    float16 rounds once, not through float32); a finite value that overflows warns as NumPy's
    (RuntimeWarning: overflow encountered in cast)."""
    if type(v) in (float, int, bool, complex) and not (dt.kind in "iu" and type(v) is float) and not (dt.kind != "c" and type(v) is complex):
        return dt.type(v)  # (NumPy warns on overflow itself)
    with np.errstate(over="warn", invalid="ignore"):
        return np.array(v).astype(dt)[()]


# ---- generated strided kernels --------------------------------------------------------------------------


def cl(dt):
    return _CL[np.dtype(dt)]


def ctype(dt):
    """The OpenCL C type a value of dt computes in (half in float: no half arithmetic without cl_khr_fp16)."""
    return "float" if dt == np.float16 else "uchar" if dt == _B else cl(dt)


def load(dt, ptr, idx):
    return f"vload_half({idx}, {ptr})" if dt == np.float16 else f"{ptr}[{idx}]"


def store(dt, ptr, idx, value, from_dt):
    """Store value (computed in from_dt's type) as dt: half rounded to nearest even, bool as 0/1,
    float to integer toward zero saturated (NumPy leaves it undefined), integers wrapped; a real
    value to complex with 0 imaginary, complex to a real type by its real part (NumPy's cast, which
    warns), complex to bool by either part being nonzero."""
    if from_dt.kind == "c" or dt.kind == "c":
        v = f"({value})"
        if dt.kind == "c" and from_dt.kind == "c":
            return f"{ptr}[{idx}] = convert_{cl(dt)}({v})"
        if dt.kind == "c":
            return f"{ptr}[{idx}] = ({cl(dt)})(({cl(dt)[:-1]}){v}, 0)"
        if dt == _B:
            return f"{ptr}[{idx}] = ({v}.x != 0 || {v}.y != 0) ? 1 : 0"
        return store(dt, ptr, idx, f"{v}.x", np.dtype(np.float64 if from_dt == np.complex128 else np.float32))
    if dt == np.float16:
        return f"vstore_half_rte(({ctype(from_dt) if from_dt.kind == 'f' else 'float'})({value}), {idx}, {ptr})"
    if dt == _B:
        return f"{ptr}[{idx}] = (({value}) != 0) ? 1 : 0"
    if dt.kind in "iu" and from_dt.kind == "f":
        return f"{ptr}[{idx}] = convert_{cl(dt)}_sat_rtz({value})"
    return f"{ptr}[{idx}] = ({cl(dt)})({value})"


def _storage(dt):
    return "half" if dt == np.float16 else "uchar" if dt == _B else cl(dt)


def walk_source(out_dt, res_dt, ins, nd, expr, name, pre=""):
    """A kernel writing z at a strided position for each of n elements: ins are (kind, dtype, ctype)
    with kind "a" (a strided array, loaded as x<j>) or "s" (a scalar argument x<j>); expr computes
    in res_dt's type from x0, x1, …; a list of expressions gives a kernel of several ops, the
    argument opc choosing one (a branch every work-item takes alike: one build serves a family)."""
    ps = ["ulong n"] + (["uint opc"] if isinstance(expr, list) else []) + [f"__global {_storage(out_dt)} *z", "long zo"]
    arrays = [j for j, (k, _, _) in enumerate(ins) if k == "a"]
    for j, (k, dt, ct) in enumerate(ins):
        ps += [f"__global const {_storage(dt)} *a{j}", f"long a{j}o"] if k == "a" else [f"{ct} x{j}"]
    for d in range(nd):
        ps += [f"long n{d}", f"long zs{d}"] + [f"long a{j}s{d}" for j in arrays]
    body = ["ulong r = get_global_id(0);", "if (r >= n) return;", "long pz = zo;"]
    body += [f"long p{j} = a{j}o;" for j in arrays]
    for d in reversed(range(nd)):
        c = f"(long)(r % (ulong)n{d})" if d else "(long)r"
        step = (f"{{ const long c = {c};" + (f" r /= (ulong)n{d};" if d else "") + f" pz += c * zs{d};"
                + "".join(f" p{j} += c * a{j}s{d};" for j in arrays) + " }")
        body.append(f"if (n{d} != 1) {step}" if d else step)
    for j in arrays:
        body.append(f"const {ins[j][2]} x{j} = ({ins[j][2]}){load(ins[j][1], f'a{j}', f'p{j}')};")
    fp64 = "double" in repr(expr) + pre + cl(out_dt) + ctype(res_dt) + "".join(c for _, _, c in ins)
    if isinstance(expr, list):
        rt = ctype(res_dt)
        body.append(f"{rt} v; switch (opc) {{ " + " ".join(f"case {i}: v = ({rt})({e}); break;" for i, e in enumerate(expr))
                    + f" default: v = ({rt})0; }}")
        expr = "v"
    body.append(store(out_dt, "z", "pz", expr, res_dt) + ";")
    return (("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if fp64 else "") + pre
            + f"__kernel void {name}({', '.join(ps)})\n{{\n    " + "\n    ".join(body) + "\n}\n")


def program(ctx, source, stem):
    """The kernel of a generated source on ctx (built once; the name is the source's hash, so the
    binary cache finds it from any process)."""
    progs = ctx.__dict__.get("_ndprogs")
    if progs is None:
        progs = ctx._ndprogs = {}
    c = progs.get(source)
    if c is None or not c._h:
        with _LOCK:
            c = progs.get(source)
            if c is None or not c._h:
                name = f"{stem}_{hashlib.sha1(source.encode()).hexdigest()[:12]}"
                c = progs[source] = _Compiled(ctx, source.replace("__NAME__", name), name,
                                              "-cl-fp32-correctly-rounded-divide-sqrt", [name])
    return c


def setter(dt):
    dt = np.dtype(dt)
    if dt.kind == "c":
        return "c64" if dt == np.complex64 else "c128"
    return {"f": "f64" if dt == _F64 else "f32", "b": "u8"}.get(dt.kind) or f"{'i' if dt.kind == 'i' else 'u'}{dt.itemsize * 8}"


def run(ctx, c, n, args, stream=None):
    """Set a generated kernel's arguments (("buf", handle) | ("i64"|"u64"|"f32"|…, value)) and launch
    it over n work-items."""
    with c.lock:
        kh = c.k[0]
        for i, (kind, v) in enumerate(args):
            st = L.arg_buf(kh, i, v) if kind == "buf" else L.arg_setters[kind][0](kh, i, v)
            if st:
                _raise(st, ctx._h)
        if n:
            wg = _wg(ctx)
            g, lo = (c_size_t * 1)(-(-n // wg) * wg), (c_size_t * 1)(wg)
            if stream is None:
                _check(L.launch(kh, 1, g, lo), ctx._h)
            else:
                with stream:
                    _check(L.launch(kh, 1, g, lo), ctx._h)


def need_fp64(ctx, dts, where):
    if any(np.dtype(d) in (_F64, np.complex128) for d in dts) and not ctx.device.fp64:
        raise Unsupported(11, f"{where}: float64 on {ctx.device.name!r}, which has no fp64 (cl_khr_fp64)")


def overlaps(a, b):
    """Whether b's memory may overlap a's in another layout (NumPy copies such an input first)."""
    if not isinstance(b, A.Array) or a._root() is not b._root():
        return False
    return (a._off, strides(a), a.shape) != (b._off, strides(b), b.shape) and a.size and b.size


def walk(ctx, out, expr, res_dt, operands, stem="clrun_nd", pre="", choice=None):
    """out[...] = expr(x0, x1, …) element by element, operands broadcast to out.shape: each operand
    is (Array | None, dtype, scalar value); Arrays at any strides. expr may be a list of
    expressions, choice the index of the one to run.

    A call's plan (its kernel, the merged dimensions and strides) is kept per context for the next
    call of the same layout, and a kernel's dimension arguments stay set between calls of one plan,
    so a repeated call sets only its buffers, offsets and scalars."""
    n = out.size
    if not n:
        return out
    for i, (a, dt, v) in enumerate(operands):
        if a is not None and a._root() is out._root() and overlaps(out, a):
            operands[i] = (contiguous(a, copy=True), dt, v)
    shape = out.shape
    key = (expr if isinstance(expr, str) else id(expr), res_dt, out.dtype, shape, strides(out), pre,
           tuple((dt, None) if a is None else (dt, a.shape, strides(a)) for a, dt, _ in operands))
    plans = ctx.__dict__.get("_ndplans")
    if plans is None:
        plans = ctx._ndplans = {}
    plan = plans.get(key)
    if plan is None:
        plan = plans[key] = _plan(ctx, out, expr, res_dt, operands, stem, pre, choice)
        if len(plans) > 4096:  # layouts seen once do not pile up
            plans.clear()
            plans[key] = plan
    c, static, setters = plan
    zh, zo = out._raw()
    dyn = [("buf", zh), ("i64", zo // out.itemsize)]
    for (a, dt, v), st in zip(operands, setters):
        if a is not None:
            h, o = a._raw()
            dyn += [("buf", h), ("i64", o // a.itemsize)]
        else:
            dyn.append((st, float(v) if st[0] == "f" else complex(v) if st[0] == "c" else int(v)))
    with c.lock:
        kh = c.k[0]
        if c.__dict__.get("last") is not static:
            c.last_dyn = None  # (a failure below leaves nothing trusted)
            for i, kind, v in static:
                st = L.arg_setters[kind][0](kh, i, v)
                if st:
                    c.last = None
                    _raise(st, ctx._h)
            c.last = static
        i = 2 if isinstance(expr, list) else 1
        last = c.__dict__.get("last_dyn")
        if last is None or len(last) != len(dyn):
            last = c.last_dyn = [None] * len(dyn)
            c.last_choice = None
        for j, (kind, v) in enumerate(dyn):
            # kernel arguments stay set between launches: numbers are set when they changed; buffers
            # always (a freed buffer's handle may come back as another buffer's)
            if kind == "buf" or last[j] != v:
                st = L.arg_buf(kh, i + j, v) if kind == "buf" else L.arg_setters[kind][0](kh, i + j, v)
                if st:
                    last[j] = None
                    _raise(st, ctx._h)
                last[j] = v
        if choice is not None and c.__dict__.get("last_choice") != choice:
            st = L.arg_setters["u32"][0](kh, 1, choice)
            if st:
                _raise(st, ctx._h)
            c.last_choice = choice
        wg = _wg(ctx)
        _check(L.launch(kh, 1, (c_size_t * 1)(-(-n // wg) * wg), (c_size_t * 1)(wg)), ctx._h)
    return out


def _plan(ctx, out, expr, res_dt, operands, stem, pre, choice):
    """(the kernel, its arguments that hold for every call of this layout as (index, setter, value),
    the setter of each scalar operand)."""
    need_fp64(ctx, [out.dtype, res_dt] + [d for _, d, _ in operands], stem)
    shape = out.shape
    arrs = [bstrides(a.shape, strides(a), shape) for a, _, _ in operands if a is not None]
    shp, sts = coalesce(shape, [strides(out)] + arrs)
    while len(shp) < _PAD:  # one kernel serves every walk of up to _PAD dimensions (fewer builds)
        shp.insert(0, 1)
        for st in sts:
            st.insert(0, 0)
    if len(shp) > _MAXDIM:
        raise Unsupported(11, f"{stem}: {len(shp)} dimensions that do not merge; at most {_MAXDIM}")
    ins = [("a" if a is not None else "s", dt, ctype(dt)) for a, dt, _ in operands]
    c = program(ctx, walk_source(out.dtype, res_dt, ins, len(shp), expr, "__NAME__", pre), stem)
    static = [(0, "u64", out.size)]
    i = (2 if isinstance(expr, list) else 1) + 2 + sum(2 if a is not None else 1 for a, _, _ in operands)
    for d in range(len(shp)):
        for v in [shp[d], sts[0][d]] + [st[d] for st in sts[1:]]:
            static.append((i, "i64", v))
            i += 1
    setters = [None if a is not None else setter(np.float32 if dt == np.float16 else dt) for a, dt, _ in operands]
    return c, static, setters


def broadcast_to(a, shape):
    """A read-only-in-spirit view of a repeated along new or one-element dimensions (strides 0)."""
    shape = tuple(shape)
    if broadcast_shapes(a.shape, shape) != shape:
        raise ValueError(f"operands could not be broadcast together with remapped shapes {a.shape} and requested shape {shape}")
    return a._strided(shape, bstrides(a.shape, strides(a), shape), 0)


def contiguous(a, copy=False):
    """a itself when C-contiguous (unless copy), else a C-contiguous copy made on the device."""
    if a.__dict__.get("_st") is None and not copy:
        return a
    out = A.Array(a.ctx, a.shape, a.dtype, bf16=a.bf16)
    if a.dtype.kind == "f":  # moved as bits, as NumPy copies (NaN payloads kept; float64 without fp64 too)
        u = np.dtype(f"u{a.itemsize}")
        walk(a.ctx, bits(out), "x0", u, [(bits(a), u, None)], stem="clrun_copy")
        return out
    return walk(a.ctx, out, "x0", a.dtype, [(a, a.dtype, None)], stem="clrun_copy")


def bits(a):
    """a float Array's memory seen as unsigned integers of its width, at its strides (a temporary view)."""
    v = A.Array(a.ctx, a.shape, np.dtype(f"u{a.itemsize}"), _base=a._root(), _off=a._off)
    v._st = a._st
    return v


def assign(dst, value, where="assignment"):
    """dst[...] = value with NumPy's broadcasting and its unsafe cast (as ndarray.__setitem__)."""
    ctx = dst.ctx
    if isinstance(value, A.Array):
        if value.ctx is not ctx:
            raise InvalidArgument(1, f"{where}: the Arrays are on different contexts")
        if value.bf16 != dst.bf16:
            raise Unsupported(11, f"{where}: bfloat16 and {value.dtype} mixed; astype first")
        broadcast_shapes(value.shape, dst.shape)
        if broadcast_shapes(value.shape, dst.shape) != dst.shape:
            raise ValueError(f"could not broadcast input array from shape {value.shape} into shape {dst.shape}")
        return walk(ctx, dst, "x0", value.dtype, [(value, value.dtype, None)], stem="clrun_assign")
    if isinstance(value, np.ndarray) and value.ndim:
        return assign(dst, ctx.asarray(np.asarray(value, order="C")), where)
    v = checked_scalar(dst.dtype, value, where)
    if dst.__dict__.get("_st") is None:
        fill_bytes(dst, v)
        return dst
    return walk(ctx, dst, "x0", dst.dtype, [(None, dst.dtype, v)], stem="clrun_fill")


def checked_scalar(dt, value, where):
    """value as a NumPy scalar of dt, converted as ndarray.__setitem__ converts: floats to integers
    toward zero (NaN and inf refused), integers out of range refused (OverflowError, as NumPy 2)."""
    if isinstance(value, (np.ndarray, np.generic)):
        value = value.item()
    if isinstance(value, complex):
        if dt.kind != "c":
            raise TypeError(f"{where}: can't convert complex to {dt}")
        return host_scalar(value, dt)
    if not isinstance(value, (bool, int, float)):
        raise InvalidArgument(1, f"{where}: an Array, a NumPy array or a number, not {type(value).__name__}")
    if dt.kind in "iu" and isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot convert float {value} to integer")
        value = int(value)
    if dt.kind in "iu" and not isinstance(value, bool):
        info = np.iinfo(dt)
        if not info.min <= value <= info.max:
            raise OutOfRange(1, f"{where}: Python integer {value} out of bounds for {dt}")
    if dt == _B:
        value = bool(value)
    return host_scalar(value, dt)


def fill_bytes(dst, v):
    """Every element of a contiguous Array set to the NumPy scalar v (of its dtype)."""
    if dst.nbytes:
        v = np.array(v, dst.dtype)
        h, off = dst._mem()
        _check(L.buf_fill(h, v.ctypes.data, v.itemsize, off, dst.nbytes), dst.ctx._h)
