"""The kernel generators (clrun.elementwise, clrun.reduction) and the element-wise kernels of Array's
operators and casts, generated and built once per context."""
import threading
from ctypes import byref, c_size_t, c_void_p

import numpy as np

from . import _lib as L
from ._core import F16, F32, ArgMismatch, Error, Event, InvalidArgument, Unsupported, _check, _raise
from ._dtypes import _CL, _F32, _NP, _SETTER, _VEC
from . import _array as A  # Array, at call time (the modules import each other)


# ---- generated kernels ------------------------------------------------------------------------------

_LOCK = threading.Lock()


def _parse_arguments(arguments):
    """[(name, np dtype, is_pointer, cl type)] of an argument string such as "float *x, const int n"."""
    if isinstance(arguments, (list, tuple)):
        arguments = ", ".join(arguments)
    out = []
    for part in (p.strip() for p in str(arguments).split(",")):
        if not part:
            raise InvalidArgument(1, f"arguments: an empty argument in {arguments!r}")
        ptr = "*" in part
        words = part.replace("*", " ").split()
        words = [w for w in words if w not in ("const", "__global", "global", "restrict", "__restrict", "volatile")]
        if len(words) < 2 or not words[-1].isidentifier() or words[-1].endswith("__"):
            raise InvalidArgument(1, f"arguments: {part!r} is not TYPE NAME or TYPE *NAME (names may not end in __)")
        name, ty = words[-1], " ".join(words[:-1])
        if ty not in _NP:
            raise InvalidArgument(1, f"arguments: {part!r}: the type {ty!r} is not one of {', '.join(sorted(_NP))}")
        dt = np.dtype(_NP[ty])
        out.append((name, dt, ptr, _CL.get(dt, ty) if ty != "bool" else "uchar"))
    names = [a[0] for a in out]
    if len(set(names)) != len(names):
        raise InvalidArgument(1, f"arguments: a name given twice in {arguments!r}")
    return out


def _params(args):
    ps, setup = [], []
    for name, dt, ptr, cl in args:
        if ptr:
            if cl == "half":  # no arithmetic on half pointers without cl_khr_fp16: offset as ushort
                ps.append(f"__global ushort *{name}__b, ulong {name}__o")
                setup.append(f"__global half *{name} = (__global half *)({name}__b + {name}__o);")
            else:
                ps.append(f"__global {cl} *{name}__b, ulong {name}__o")
                setup.append(f"__global {cl} *{name} = {name}__b + {name}__o;")
        elif cl == "half":
            ps.append(f"float {name}")  # a half scalar is passed as float (exact)
        else:
            ps.append(f"{cl} {name}")
    return ", ".join(ps), "\n    ".join(setup)


def _fp64_pragma(args, extra=""):
    return "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if any(a[3] == "double" for a in args) or "double" in extra else ""


class _Compiled:
    """One generated program on one context: its kernels' handles and a lock for their arguments."""

    _rank = 1

    def __init__(self, ctx, source, name, options, kernels):
        self.ctx = ctx
        if source.startswith("#pragma OPENCL EXTENSION cl_khr_fp64 : enable") and not ctx.device.fp64:
            raise Unsupported(11, f"{name}: float64 on {ctx.device.name!r}, which has no fp64 (cl_khr_fp64)")
        h = c_void_p()
        _check(L.prog_source(ctx.handle, source.encode(), name.encode(), options.encode() if options else None, byref(h)), ctx._h)
        self._h = h.value
        self.k = []
        self.lock = threading.Lock()
        try:
            for kn in kernels:
                kh = c_void_p()
                _check(L.kernel_new(self._h, kn.encode(), byref(kh)), ctx._h)
                self.k.append(kh.value)
        except Error:
            self._release()
            raise
        ctx._adopt(self)

    def _release(self):
        for kh in self.k:
            L.kernel_free(kh)
        self.k = []
        if self._h:
            L.prog_free(self._h)
            self._h = None


class _Generated:
    """What the two generators share: the source, and its program per context (built through the
    library's binary cache, so a second process loads it instead of compiling)."""

    def __init__(self, name, options):
        if not str(name).isidentifier():
            raise InvalidArgument(1, f"name: {name!r} is not an OpenCL C identifier")
        self.name, self.options = str(name), options

    def _compiled(self, ctx):
        cache = ctx.__dict__.get("_generated")
        if cache is None:
            cache = ctx._generated = {}
        c = cache.get(id(self))
        if c is None or not c._h:
            with _LOCK:
                c = cache.get(id(self))
                if c is None or not c._h:
                    c = cache[id(self)] = _Compiled(ctx, self._source(ctx), self.name, self.options, self._kernel_names())
                    c.owner = self  # keeps id(self) from being reused while the entry lives
        return c

    def _bind(self, kh, args, values, start=0):
        """Set the user arguments from index start; returns (next index, n from the first Array, ctx)."""
        i, n, ctx = start, None, None
        for (name, dt, ptr, cl), v in zip(args, values):
            if ptr:
                if not isinstance(v, A.Array):
                    raise ArgMismatch(9, f"{self.name}: argument {name} is a {cl} pointer: give a clrun.Array, not {type(v).__name__}")
                if v.dtype != dt:
                    raise ArgMismatch(9, f"{self.name}: argument {name} is {cl} *: a {dt} Array, not {v.dtype}")
                h, off = v._mem()
                st = L.arg_buf(kh, i, h) or L.arg_setters["u64"][0](kh, i + 1, off // v.itemsize)
                i += 2
                if n is None:
                    n, ctx = v.size, v.ctx
            else:
                if isinstance(v, (A.Array, np.ndarray)) and np.ndim(v) > 0:
                    raise ArgMismatch(9, f"{self.name}: argument {name} is a {cl} scalar, not an array")
                sv = _scalar_value(v, dt, f"{self.name}: argument {name}")
                st = (L.arg_setters["f32"][0](kh, i, float(sv)) if cl == "half" else L.arg_setters[_SETTER[dt]][0](kh, i, sv))
                i += 1
            if st:
                _raise(st, ctx._h if ctx else None)
        return i, n, ctx


def _scalar_value(v, dt, where):
    try:
        if dt.kind == "f":
            return float(v)
        if dt == np.bool_:
            return int(bool(v))
        iv = int(v)
        if isinstance(v, float) and not v.is_integer():
            raise ValueError
    except (TypeError, ValueError, OverflowError):
        raise ArgMismatch(9, f"{where} is {dt}; {v!r} is not") from None
    info = np.iinfo(dt)
    if not info.min <= iv <= info.max:
        raise InvalidArgument(1, f"{where}: {iv} is out of the range of {dt}")
    return iv


def _wg(ctx):
    w = min(256, ctx.device.max_work_group)
    return 1 << (w.bit_length() - 1)


class ElementwiseKernel(_Generated):
    """An element-wise kernel generated from an argument string and a per-element statement, as
    PyOpenCL's ElementwiseKernel and CuPy's: clrun.elementwise("float *z, const float *x, float a",
    "z[i] = a * x[i]"). The statement runs for i from 0 to n - 1, n the size of the first Array
    argument (or size=); pointer arguments take Arrays (views included: their offsets are passed),
    scalars take numbers, checked against their type. float16 data is declared half * and read and
    written with vload_half / vstore_half (devices without cl_khr_fp16 have no half arithmetic);
    preamble= adds helper functions. Built once per context through the binary cache."""

    def __init__(self, *args, **kwargs):
        ctx = args[0] if args and _is_context(args[0]) else kwargs.pop("context", None)
        if args and _is_context(args[0]):
            args = args[1:]
        self._init(*args, **kwargs)
        if ctx is not None:  # PyOpenCL's form: ElementwiseKernel(ctx, arguments, operation, name): built at once
            self._compiled(ctx)

    def _init(self, arguments, operation, name="elementwise", preamble="", options=None):
        super().__init__(name, options)
        self.args = _parse_arguments(arguments)
        if not any(a[2] for a in self.args):
            raise InvalidArgument(1, "elementwise: the arguments need at least one pointer (an Array)")
        self.operation, self.preamble = str(operation), str(preamble)
        parts = arguments if isinstance(arguments, (list, tuple)) else str(arguments).split(",")
        written = [a[0] for a, p in zip(self.args, parts) if a[2] and "const" not in str(p).split("*")[0].split()]
        self.output = written[0] if written else next(a[0] for a in self.args if a[2])

    def _kernel_names(self):
        return [self.name]

    def _source(self, ctx):
        params, setup = _params(self.args)
        return (f"{_fp64_pragma(self.args, self.operation)}{self.preamble}\n"
                f"__kernel void {self.name}({params}, ulong n__)\n{{\n    const ulong i = get_global_id(0);\n"
                f"    if (i >= n__) return;\n    {setup}\n    {self.operation};\n}}\n")

    def __call__(self, *args, size=None, stream=None, range=None, queue=None, wait_for=None, event=False):
        """Run over i in 0 .. n - 1; returns the Array of the first pointer argument declared without
        const (the output; the first pointer if all are const), or (that Array, an Event of the
        launch) with event=True. PyOpenCL's keywords: range= (an int or range(n): the n), queue=
        (a Stream), wait_for= (Events finished first)."""
        size = _range(range, size)
        if queue is not None and stream is None and not _is_context(queue):
            stream = queue
        _wait(wait_for)
        if len(args) != len(self.args):
            raise ArgMismatch(9, f"{self.name} takes {len(self.args)} arguments, {len(args)} given")
        ctx = next(a.ctx for a in args if isinstance(a, A.Array)) if any(isinstance(a, A.Array) for a in args) else None
        if ctx is None:
            raise ArgMismatch(9, f"{self.name}: no Array among the arguments")
        n = _extent(self.name, self.args, args, size, ctx)
        c = self._compiled(ctx)
        ev = None
        with c.lock:
            kh = c.k[0]
            i, _, _ = self._bind(kh, self.args, args)
            _check(L.arg_setters["u64"][0](kh, i, n), ctx._h)
            if n:
                ev = _launch(ctx, kh, n, stream, event=event)
        out = next(v for (nm, _, _, _), v in zip(self.args, args) if nm == self.output)
        return (out, ev) if event else out


def _extent(name, params, args, size, ctx):
    """The n a generated kernel runs over (i from 0 to n - 1): size= (a positive int below 2^63), else
    the first Array argument's size; every Array argument (views by their own extent) must hold at
    least n elements, since the statement reads and writes element i of each: a shorter one would
    be read or written past its end. All Arrays on ctx."""
    arrays = [a for a in args if isinstance(a, A.Array)]
    for a in arrays:
        if a.ctx is not ctx:
            raise InvalidArgument(1, f"{name}: Arrays of different contexts")
    if size is not None:
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
            raise InvalidArgument(1, f"{name}: size= is a positive integer, not {size!r}")
        n = int(size)
        if not 1 <= n < 1 << 63:
            raise InvalidArgument(1, f"{name}: size= is a positive integer below 2^63, not {n}")
    else:
        n = arrays[0].size if arrays else 0
    for (pname, _, ptr, _), a in zip(params, args):
        if ptr and isinstance(a, A.Array) and a.size < n:
            raise InvalidArgument(1, f"{name}: argument {pname} holds {a.size} elements; the kernel runs over {n} "
                                     f"({'size=' if size is not None else 'the first Array'}), and would go past its end")
    return n


def _launch(ctx, kh, n, stream, groups=None, event=False):
    wg = _wg(ctx)
    g = (c_size_t * 1)(groups * wg if groups else -(-n // wg) * wg)
    lo = (c_size_t * 1)(wg)
    if event:
        e = c_void_p()
        if stream is None:
            _check(L.launch_ev(kh, 1, g, lo, byref(e)), ctx._h)
        else:
            with stream:
                _check(L.launch_ev(kh, 1, g, lo, byref(e)), ctx._h)
        return Event(e.value)
    if stream is None:
        _check(L.launch(kh, 1, g, lo), ctx._h)
    else:
        with stream:
            _check(L.launch(kh, 1, g, lo), ctx._h)
    return None


def _range(r, size):
    """PyOpenCL's range= (an int, or range(n)) as the n of a launch."""
    if r is None:
        return size
    if isinstance(r, range):
        if r.start != 0 or r.step != 1:
            raise Unsupported(11, f"range={r}: a range from 0 in steps of 1 (write the offset into the operation)")
        return r.stop
    return r


def _is_context(v):
    from ._core import Context
    return isinstance(v, Context)


def _wait(wait_for):
    """PyOpenCL's wait_for=: the Events (clrun.Event) finish before the launch is queued."""
    if wait_for is None:
        return
    if isinstance(wait_for, Event):
        wait_for = [wait_for]
    for e in wait_for:
        if not isinstance(e, Event):
            raise InvalidArgument(1, f"wait_for: clrun.Events, not {type(e).__name__}")
        e.wait()


class ReductionKernel(_Generated):
    """A reduction generated as PyOpenCL's ReductionKernel: clrun.reduction(np.float32, "0", "a + b",
    "x[i] * y[i]", "const float *x, const float *y") gives the dot product. map_expr is evaluated for
    each i in 0 .. n - 1 (n: the first Array argument's size, or size=) and folded with reduce_expr
    (over a and b) from neutral, in a fixed order for a given device (deterministic). Returns a 0-d
    Array of dtype_out on the device (.get(), float(), or use it in later kernels)."""

    def __init__(self, *args, **kwargs):
        ctx = args[0] if args and _is_context(args[0]) else kwargs.pop("context", None)
        if args and _is_context(args[0]):
            args = args[1:]
        self._init(*args, **kwargs)
        if ctx is not None:  # PyOpenCL's form: ReductionKernel(ctx, dtype_out, neutral, reduce_expr, map_expr, arguments)
            self._compiled(ctx)

    def _init(self, dtype_out, neutral, reduce_expr, map_expr, arguments, name="reduce", preamble="", options=None):
        super().__init__(name, options)
        self.out = np.dtype(dtype_out)
        if self.out not in _CL or self.out in (np.dtype(np.float16), np.dtype(np.bool_)):
            raise Unsupported(11, f"reduction: dtype_out {self.out}: a type the device computes in (float32, float64, integers)")
        self.cl = _CL[self.out]
        self.args = _parse_arguments(arguments)
        self.neutral, self.reduce_expr, self.map_expr, self.preamble = str(neutral), str(reduce_expr), str(map_expr), str(preamble)

    def _kernel_names(self):
        return [self.name + "_part", self.name + "_final"]

    def _source(self, ctx):
        params, setup = _params(self.args)
        o, wg = self.cl, _wg(ctx)
        tree = (f"    __local {o} sh__[{wg}];\n    const uint lid__ = get_local_id(0);\n    sh__[lid__] = acc__;\n"
                f"    barrier(CLK_LOCAL_MEM_FENCE);\n"
                f"    for (uint s__ = {wg // 2}; s__ > 0; s__ >>= 1) {{\n"
                f"        if (lid__ < s__) sh__[lid__] = REDUCE__(sh__[lid__], sh__[lid__ + s__]);\n"
                f"        barrier(CLK_LOCAL_MEM_FENCE);\n    }}\n")
        return (f"{_fp64_pragma(self.args, o + self.map_expr)}{self.preamble}\n"
                f"#define REDUCE__(a, b) (({o})({self.reduce_expr}))\n"
                f"__kernel __attribute__((reqd_work_group_size({wg}, 1, 1)))\n"
                f"void {self.name}_part({params + ', ' if params else ''}ulong n__, __global {o} *part__)\n{{\n"
                f"    {setup}\n    {o} acc__ = ({o})({self.neutral});\n"
                f"    for (ulong i = get_global_id(0); i < n__; i += get_global_size(0)) {{\n"
                f"        const {o} b__ = ({o})({self.map_expr});\n        acc__ = REDUCE__(acc__, b__);\n    }}\n"
                f"{tree}    if (lid__ == 0) part__[get_group_id(0)] = sh__[0];\n}}\n"
                f"__kernel __attribute__((reqd_work_group_size({wg}, 1, 1)))\n"
                f"void {self.name}_final(__global const {o} *part__, uint m__, __global {o} *out__, ulong off__)\n{{\n"
                f"    {o} acc__ = ({o})({self.neutral});\n"
                f"    for (uint j = get_local_id(0); j < m__; j += {wg}) acc__ = REDUCE__(acc__, part__[j]);\n"
                f"{tree}    if (lid__ == 0) out__[off__] = sh__[0];\n}}\n")

    def __call__(self, *args, size=None, stream=None, out=None, range=None, queue=None, wait_for=None):
        size = _range(range, size)
        if queue is not None and stream is None and not _is_context(queue):
            stream = queue
        _wait(wait_for)
        if len(args) != len(self.args):
            raise ArgMismatch(9, f"{self.name} takes {len(self.args)} arguments, {len(args)} given")
        arrays = [a for a in args if isinstance(a, A.Array)]
        ctx = arrays[0].ctx if arrays else (out.ctx if isinstance(out, A.Array) else None)
        if ctx is None:
            raise ArgMismatch(9, f"{self.name}: no Array among the arguments (give out= to name the context)")
        if any(a.ctx is not ctx for a in arrays):
            raise InvalidArgument(1, f"{self.name}: Arrays of different contexts")
        if out is None:
            out = A.Array(ctx, (), self.out)
        elif not isinstance(out, A.Array) or out.dtype != self.out or out.size != 1:
            raise InvalidArgument(1, f"{self.name}: out is a one-element {self.out} Array")
        if not arrays and size is None:
            raise ArgMismatch(9, f"{self.name}: no Array among the arguments: give size=")
        n = _extent(self.name, self.args, args, size, ctx)
        c = self._compiled(ctx)
        wg = _wg(ctx)
        with c.lock:
            kp, kf = c.k
            i, _, _ = self._bind(kp, self.args, args)
            groups = max(1, min(-(-n // wg), 256))
            part = A.Array(ctx, (groups,), self.out)
            ph, po = part._mem()
            oh, oo = out._mem()
            st = (L.arg_setters["u64"][0](kp, i, n) or L.arg_buf(kp, i + 1, ph) or L.arg_buf(kf, 0, ph)
                  or L.arg_setters["u32"][0](kf, 1, groups) or L.arg_buf(kf, 2, oh) or L.arg_setters["u64"][0](kf, 3, oo // out.itemsize))
            if st:
                _raise(st, ctx._h)
            _launch(ctx, kp, n, stream, groups=groups)
            _launch(ctx, kf, wg, stream, groups=1)
        return out


def elementwise(arguments, operation, name="elementwise", preamble="", options=None):
    """An element-wise kernel generator (see ElementwiseKernel)."""
    return ElementwiseKernel(arguments, operation, name=name, preamble=preamble, options=options)


def reduction(dtype_out, neutral, reduce_expr, map_expr, arguments, name="reduce", preamble="", options=None):
    """A reduction kernel generator (see ReductionKernel)."""
    return ReductionKernel(dtype_out, neutral, reduce_expr, map_expr, arguments, name=name, preamble=preamble, options=options)


# the casts of astype, generated once per (from, to)
_BUILT = {}


def _load(cl, p):
    """Element i of pointer p (half through vload_half: no half arithmetic without cl_khr_fp16)."""
    return f"vload_half(i, {p})" if cl == "half" else f"{p}[i]"


def _store(cl, p, value):
    if cl == "half":
        return f"vstore_half_rte({value}, i, {p})"
    return f"{p}[i] = ({cl})({value})"


def _convert_kernel(fr, to):
    key = ("convert", fr, to)
    k = _BUILT.get(key)
    if k is None:
        cf, ct = _CL[fr], _CL[to]
        x = _load(cf, "x")
        if to == np.bool_:
            body = f"z[i] = ({x} != 0) ? 1 : 0"
        elif ct == "half":
            body = f"vstore_half_rte(({'double' if cf == 'double' else 'float'})({x}), i, z)"
        elif to.kind in "iu" and fr.kind == "f":
            body = f"z[i] = convert_{ct}_sat_rtz({x})"
        else:
            body = f"z[i] = ({ct})({x})"
        src_ty = "bool" if fr == np.bool_ else cf
        dst_ty = "bool" if to == np.bool_ else ct
        inner = ElementwiseKernel(f"{src_ty} *x, {dst_ty} *z", body, name=f"clrun_convert_{cf}_{ct}{'_b' if to == np.bool_ else ''}")
        k = _BUILT[key] = inner
    return k


# ---- the library's element-wise ops and casts on Arrays ------------------------------------------------


def _vec(op, out, a, b=None, c=None, alpha=1.0):
    if not out.size:  # nothing to compute (an empty view's offset may lie at its buffer's end)
        return
    ctx = out.ctx
    t = F32 if out.dtype == _F32 else F16
    oh, oo = out._mem()
    ah, ao = a._mem()
    bh, bo = b._mem() if b is not None else (None, 0)
    ch, co = c._mem() if c is not None else (None, 0)
    isz = out.dtype.itemsize
    st = L.vec(ctx._h, _VEC[op], t, out.size, alpha, oh, oo // isz, ah, ao // isz, bh, bo // isz, ch, co // isz)
    if st:
        _raise(st, ctx._h)


def _cast(src, out, fr, to):
    h, o = src._mem()
    oh, oo = out._mem()
    _check(L.cast(src.ctx.handle, h, o // src.itemsize, fr, oh, oo // out.itemsize, to, src.size), src.ctx._h)
