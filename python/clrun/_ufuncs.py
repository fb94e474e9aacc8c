"""NumPy's element-wise functions on clrun.Array: each one a row of OpenCL C (one expression per
kind of type), its NumPy ufunc (for the result's type and for __array_ufunc__), run by _nd.walk over
operands of any strides, broadcast, promoted as NumPy 2 promotes (NEP 50).

Integer arithmetic wraps as NumPy's (computed unsigned, so no C overflow is undefined); integer
division and remainder by zero give 0 (NumPy gives 0 and warns), INT_MIN // -1 wraps; floor division
and remainder of floats follow NumPy's divmod; shifts past the width give 0 (or -1 for a negative
number shifted right), as NumPy's. Float functions are the device's OpenCL built-ins: sqrt and
division correctly rounded, the others within OpenCL's ulp bounds (NumPy's own vary by CPU).
"""
import numpy as np

from ._core import InvalidArgument, Unsupported
from . import _array as A
from . import _nd as N
from ._dtypes import _CMP

_B = np.dtype(np.bool_)
# an op NumPy has no loop for (a TypeError there): clrun.Unsupported and TypeError at once
DTypeError = type("DTypeError", (Unsupported, TypeError), {"__doc__": "An op NumPy refuses for these dtypes (also a TypeError)."})
_UNS = {"char": "uchar", "short": "ushort", "int": "uint", "long": "ulong"}


def _wrap(op):
    """x OP y on integers in the unsigned type of the same width (wraps; no undefined overflow)."""
    def f(t, k):
        if k in "iu":
            u = _UNS.get(t, t)
            return f"({t})(({u})X {op} ({u})Y)"
        if k == "b":
            return {"+": "(X | Y)", "*": "(X & Y)"}.get(op) or _no_bool(op)
        return f"(X {op} Y)"
    return f


def _no_bool(op):
    raise DTypeError(11, f"numpy boolean {op} is not supported, use the bitwise_xor, the `^` operator, or the logical_xor function instead")


def _floordiv(t, k):
    if k in "iu":
        if k == "u":
            return "(Y == 0 ? 0 : X / Y)"
        u = _UNS[t]
        return (f"(Y == 0 ? ({t})0 : Y == -1 ? ({t})(({u})0 - ({u})X) : "
                f"(({t})(X / Y) - ((X % Y != 0 && ((X < 0) != (Y < 0))) ? 1 : 0)))")
    return "npy_floordiv(X, Y)"


def _mod(t, k):
    if k in "iu":
        if k == "u":
            return "(Y == 0 ? 0 : X % Y)"
        return f"(Y == 0 || Y == -1 ? ({t})0 : ((X % Y != 0 && ((X % Y < 0) != (Y < 0))) ? X % Y + Y : X % Y))"
    return "npy_mod(X, Y)"


def _pow(t, k):
    if k in "iu":
        return f"ipow_{t}(X, Y)"
    return "pow(X, Y)"


def _shift(d):
    def f(t, k):
        if k not in "iu":
            raise DTypeError(11, f"ufunc '{'left_shift' if d == '<<' else 'right_shift'}' not supported for the input types")
        bits = {"char": 8, "uchar": 8, "short": 16, "ushort": 16, "int": 32, "uint": 32, "long": 64, "ulong": 64}[t]
        if d == "<<":
            return f"((Y < 0 || Y >= {bits}) ? ({t})0 : ({t})(({_UNS.get(t, t)})X << Y))"
        return f"((Y < 0 || Y >= {bits}) ? (X < 0 ? ({t})-1 : ({t})0) : ({t})(X >> Y))"
    return f


def _bitwise(op):
    def f(t, k):
        if k == "f":
            raise DTypeError(11, "ufunc 'bitwise' not supported for the input types, and the inputs could not be safely coerced")
        return f"(X {op} Y)"
    return f


def _maxmin(cmp):
    def f(t, k):
        if k == "f":
            return f"((X {cmp} Y || isnan(X)) ? X : Y)"
        return f"(X {cmp} Y ? X : Y)"
    return f


def _ff(fn):  # float-only binary functions
    def f(t, k):
        return f"{fn}(X, Y)"
    return f


# op: (NumPy ufunc, expression maker (compute type, kind) -> expression in X and Y)
BINARY = {
    "add": (np.add, _wrap("+")), "sub": (np.subtract, _wrap("-")), "mul": (np.multiply, _wrap("*")),
    "div": (np.true_divide, lambda t, k: "(X / Y)"), "floordiv": (np.floor_divide, _floordiv), "mod": (np.remainder, _mod),
    "pow": (np.power, _pow), "maximum": (np.maximum, _maxmin(">=")), "minimum": (np.minimum, _maxmin("<=")),
    "lt": (np.less, lambda t, k: "(X < Y)"), "le": (np.less_equal, lambda t, k: "(X <= Y)"), "gt": (np.greater, lambda t, k: "(X > Y)"),
    "ge": (np.greater_equal, lambda t, k: "(X >= Y)"), "eq": (np.equal, lambda t, k: "(X == Y)"),
    "ne": (np.not_equal, lambda t, k: "(X != Y)"),
    "and": (np.bitwise_and, _bitwise("&")), "or": (np.bitwise_or, _bitwise("|")), "xor": (np.bitwise_xor, _bitwise("^")),
    "lshift": (np.left_shift, _shift("<<")), "rshift": (np.right_shift, _shift(">>")),
    "logical_and": (np.logical_and, lambda t, k: "(X != 0 && Y != 0)"), "logical_or": (np.logical_or, lambda t, k: "(X != 0 || Y != 0)"),
    "logical_xor": (np.logical_xor, lambda t, k: "((X != 0) != (Y != 0))"),
    "arctan2": (np.arctan2, _ff("atan2")), "hypot": (np.hypot, _ff("hypot")), "copysign": (np.copysign, _ff("copysign")),
    "fmod": (np.fmod, lambda t, k: "fmod(X, Y)" if k == "f" else _mod(t, k).replace("X % Y + Y", "X % Y")),
}


def _fl(fn):
    return lambda t, k: f"{fn}(X)"


def _rounding(fn):  # on integers (NumPy 2 keeps their type) the value itself
    return lambda t, k: f"{fn}(X)" if k == "f" else "X"


def _neg(t, k):
    if k == "b":
        raise DTypeError(11, "The numpy boolean negative, the `-` operator, is not supported, use the `~` operator or the "
                        "logical_not function instead.")
    return f"({t})(({_UNS.get(t, t)})0 - ({_UNS.get(t, t)})X)" if k in "iu" else "(-X)"


def _abs(t, k):
    return "fabs(X)" if k == "f" else f"({t})abs(X)" if k == "i" else "X"


def _sign(t, k):
    if k == "f":
        return "(isnan(X) ? X : X > 0 ? 1 : X < 0 ? -1 : 0)"
    if k == "b":
        raise DTypeError(11, "ufunc 'sign' did not contain a loop with signature matching types bool")
    return "(X > 0 ? 1 : X < 0 ? -1 : 0)" if k == "i" else "(X > 0 ? 1 : 0)"


def _invert(t, k):
    if k == "f":
        raise DTypeError(11, "ufunc 'invert' not supported for the input types, and the inputs could not be safely coerced")
    return "(X == 0)" if k == "b" else f"({t})(~X)"


# op: (NumPy ufunc or a stand-in for the result type, expression maker)
UNARY = {
    "neg": (np.negative, _neg), "pos": (np.positive, lambda t, k: "X"), "abs": (np.absolute, _abs), "invert": (np.invert, _invert),
    "sign": (np.sign, _sign), "square": (np.square, lambda t, k: _wrap("*")(t, k).replace("Y", "X")),
    "sqrt": (np.sqrt, _fl("sqrt")), "cbrt": (np.cbrt, _fl("cbrt")), "exp": (np.exp, _fl("exp")), "exp2": (np.exp2, _fl("exp2")),
    "expm1": (np.expm1, _fl("expm1")), "log": (np.log, _fl("log")), "log2": (np.log2, _fl("log2")), "log10": (np.log10, _fl("log10")),
    "log1p": (np.log1p, _fl("log1p")), "sin": (np.sin, _fl("sin")), "cos": (np.cos, _fl("cos")), "tan": (np.tan, _fl("tan")),
    "arcsin": (np.arcsin, _fl("asin")), "arccos": (np.arccos, _fl("acos")), "arctan": (np.arctan, _fl("atan")),
    "sinh": (np.sinh, _fl("sinh")), "cosh": (np.cosh, _fl("cosh")), "tanh": (np.tanh, _fl("tanh")),
    "arcsinh": (np.arcsinh, _fl("asinh")), "arccosh": (np.arccosh, _fl("acosh")), "arctanh": (np.arctanh, _fl("atanh")),
    "floor": (np.floor, _rounding("floor")), "ceil": (np.ceil, _rounding("ceil")), "trunc": (np.trunc, _rounding("trunc")),
    "rint": (np.rint, _rounding("rint")),
    "erf": (np.sqrt, _fl("erf")), "sigmoid": (np.sqrt, lambda t, k: "(1 / (1 + exp(-X)))"),
    "reciprocal": (np.reciprocal, lambda t, k: "(1 / X)" if k == "f" else f"(X == 0 ? ({t})0 : ({t})(1 / X))"),
    "isnan": (np.isnan, lambda t, k: "isnan(X)" if k == "f" else "0"), "isinf": (np.isinf, lambda t, k: "isinf(X)" if k == "f" else "0"),
    "isfinite": (np.isfinite, lambda t, k: "isfinite(X)" if k == "f" else "1"),
    "signbit": (np.signbit, lambda t, k: "signbit(X)" if k == "f" else "(X < 0)" if k == "i" else "0"),
    "logical_not": (np.logical_not, lambda t, k: "(X == 0)"),
    "conjugate": (np.conjugate, lambda t, k: "X"),
}

# helpers some expressions call: NumPy's divmod for floats (npy_divmod), integer powers by squaring
_PRE = {
    "npy_": ("#define NPY_DIVMOD(T) \\\n"
             "T npy_mod_##T(T a, T b) { if (b == 0) return fmod(a, b); T m = fmod(a, b);"
             " if (m != 0) { if ((b < 0) != (m < 0)) m += b; } else m = copysign((T)0, b); return m; } \\\n"
             "T npy_floordiv_##T(T a, T b) { if (b == 0) return a / b; T m = fmod(a, b); T d = (a - m) / b;"
             " if (m != 0 && ((b < 0) != (m < 0))) d -= 1; T f; if (d != 0) { f = floor(d); if (d - f > (T)0.5) f += 1; }"
             " else f = copysign((T)0, a / b); return f; }\n"),
}


def _preamble(expr, t):
    pre = ""
    if "npy_" in expr:
        pre += _PRE["npy_"] + f"NPY_DIVMOD({t})\n"
        expr = expr.replace("npy_mod(", f"npy_mod_{t}(").replace("npy_floordiv(", f"npy_floordiv_{t}(")
    if "ipow_" in expr:
        u = _UNS.get(t, t)
        pre += (f"{t} ipow_{t}({t} b, {t} e) {{ if (e < 0) return b == 1 ? 1 : (b == ({t})-1 ? ((e & 1) ? ({t})-1 : 1) : 0);"
                f" {u} r = 1, x = ({u})b; while (e) {{ if (e & 1) r *= x; x *= x; e >>= 1; }} return ({t})r; }}\n")
    return expr, pre


def _dt_of(v, others, where, op):
    """NEP 50's dtype of an operand; a Python int out of an integer Array's range compares exactly
    (NumPy 2 compares such ints by value) in the widest integer type that holds it, or float64."""
    try:
        return N.operand_dtype(v, others, where)
    except OverflowError:
        if op not in _CMP:
            raise
        for d in (np.int64, np.uint64):
            if np.iinfo(d).min <= v <= np.iinfo(d).max:
                return np.dtype(d)
        return np.dtype(np.float64)


def apply(op, *operands, out=None):
    """NumPy's op over operands (Arrays, NumPy or Python scalars), broadcast, promoted as NEP 50;
    the result in a new Array, or in out (an Array of the broadcast shape; cast unsafely, as NumPy's
    out= with casting='unsafe' is not: the result type must cast to out's dtype 'same_kind')."""
    table = BINARY if len(operands) == 2 else UNARY
    if op not in table:
        raise InvalidArgument(1, f"no element-wise op {op!r}")
    uf, make = table[op]
    arrays = [v for v in operands if isinstance(v, A.Array)]
    if not arrays:
        raise InvalidArgument(1, f"{op}: no clrun.Array among the operands")
    ctx = arrays[0].ctx
    for v in operands:
        if isinstance(v, A.Array):
            if v.ctx is not ctx:
                raise InvalidArgument(1, f"{op}: the Arrays are on different contexts")
            if v.bf16:
                raise Unsupported(11, f"{op} on bfloat16 Arrays: the library has no bf16 arithmetic; .astype(np.float32) first")
        elif isinstance(v, np.ndarray) and v.ndim:
            raise InvalidArgument(1, f"{op}: an Array with a NumPy array: move it to the device first (ctx.asarray(x)); clrun never "
                                     "computes on the host")
    strong = [v.dtype for v in operands if isinstance(v, (A.Array, np.ndarray, np.generic))]
    dts = [_dt_of(v, strong, op, op) for v in operands]
    try:
        ct, rt = N.ufunc_types(uf, dts)
    except TypeError as e:  # NumPy has no loop for these dtypes
        raise DTypeError(11, f"{op}: {e}") from None
    if ct.kind == "c" or any(d.kind == "c" for d in dts):  # computed in the operands' complex type
        return _complex(op, operands, dts, np.result_type(*dts), rt, ctx, out)
    if rt.kind == "c":
        raise DTypeError(11, f"{op}: a complex result of {ct} operands is not one clrun computes")
    if rt not in N._CL or ct not in N._CL:
        raise Unsupported(11, f"{op}: the result type {rt} is not one clrun.Array holds")
    shape = N.broadcast_shapes(*[np.shape(v) if not isinstance(v, A.Array) else v.shape for v in operands])
    t = N.ctype(ct)
    make(t, ct.kind)  # the op's own refusal (TypeError, as NumPy's) before its family's
    exprs, pre, choice = _family(op, tuple(dts), ct, rt)
    ops = []
    for v, d in zip(operands, dts):
        ops.append((v, d, None) if isinstance(v, A.Array) else (None, ct, N.host_scalar(v, d)))
    if out is None:
        out = A.Array(ctx, shape, rt)
    else:
        if not isinstance(out, A.Array) or out.ctx is not ctx:
            raise InvalidArgument(1, f"{op}: out is an Array on the operands' context")
        if N.broadcast_shapes(shape, out.shape) != out.shape:
            raise ValueError(f"non-broadcastable output operand with shape {out.shape} doesn't match the broadcast shape {shape}")
        if not np.can_cast(rt, out.dtype, "same_kind"):
            raise DTypeError(11, f"Cannot cast ufunc '{uf.__name__}' output from {rt} to {out.dtype} with casting rule 'same_kind'")
    return N.walk(ctx, out, exprs, ct, ops, stem="clrun_ew", pre=pre, choice=choice)


# ops on complex operands: (expression in the complex type T of the operands X, Y, real type R)
_CPLX_PRE = ("T cmul_T(T a, T b) { return (T)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }\n"
             # Smith's division, as NumPy's: no overflow from squaring the divisor
             "T cdiv_T(T a, T b) { R ax = fabs(b.x), ay = fabs(b.y); if (ax >= ay) { if (ax == 0 && ay == 0) "
             "return (T)(a.x / ax, a.y / ay); R r = b.y / b.x, d = b.x + b.y * r; return (T)((a.x + a.y * r) / d, (a.y - a.x * r) / d); }"
             " R r = b.x / b.y, d = b.x * r + b.y; return (T)((a.x * r + a.y) / d, (a.y * r - a.x) / d); }\n")
COMPLEX = {
    "add": "(X + Y)", "sub": "(X - Y)", "mul": "cmul_T(X, Y)", "div": "cdiv_T(X, Y)", "neg": "(-X)", "pos": "X",
    "square": "cmul_T(X, X)", "conjugate": "(T)(X.x, -X.y)", "abs": "(T)(hypot(X.x, X.y), 0)",
    "reciprocal": "cdiv_T((T)(1, 0), X)",
    "eq": "(T)(X.x == Y.x && X.y == Y.y, 0)", "ne": "(T)(X.x != Y.x || X.y != Y.y, 0)",
    "isnan": "(T)(isnan(X.x) || isnan(X.y), 0)", "isinf": "(T)(isinf(X.x) || isinf(X.y), 0)",
    "isfinite": "(T)(isfinite(X.x) && isfinite(X.y), 0)", "logical_not": "(T)(X.x == 0 && X.y == 0, 0)",
}


def _complex(op, operands, dts, ct, rt, ctx, out):
    """op with complex operands, computed in ct (complex64 or complex128): the results of COMPLEX,
    stored in rt (a real result is the expression's real part)."""
    if op not in COMPLEX:
        raise DTypeError(11, f"{op} on complex Arrays is not one clrun computes (it has "
                             f"{', '.join(sorted(COMPLEX))})")
    t = N.cl(ct)
    r = t[:-1]
    e = COMPLEX[op]
    dts = [d if isinstance(v, A.Array) else ct for v, d in zip(operands, dts)]  # scalars go in as ct
    for j, (x, d) in enumerate(zip(("X", "Y"), dts)):
        conv = f"convert_{t}(x{j})" if d.kind == "c" else f"(({t})(({r})x{j}, 0))"
        e = e.replace(f"{x}.x", f"{conv}.x").replace(f"{x}.y", f"{conv}.y").replace(x, conv)
    pre = _CPLX_PRE.replace("T", t).replace("R", r) if "cmul_" in e or "cdiv_" in e else ""
    e = e.replace("cmul_T", f"cmul_{t}").replace("cdiv_T", f"cdiv_{t}").replace("(T)", f"({t})")
    ops = [(v, d, None) if isinstance(v, A.Array) else (None, ct, N.host_scalar(v, ct)) for v, d in zip(operands, dts)]
    shape = N.broadcast_shapes(*[np.shape(v) if not isinstance(v, A.Array) else v.shape for v in operands])
    if out is None:
        out = A.Array(ctx, shape, rt)
    elif not isinstance(out, A.Array) or out.ctx is not ctx or N.broadcast_shapes(shape, out.shape) != out.shape:
        raise InvalidArgument(1, f"{op}: out is an Array of the broadcast shape on the operands' context")
    return N.walk(ctx, out, e, ct, ops, stem="clrun_cx", pre=pre)


# families of ops built as one kernel (a switch on the op): one build serves every op of a family
# that computes in the same types for the same operand dtypes
_GROUPS = (("add", "sub", "mul", "floordiv", "mod", "pow", "maximum", "minimum", "and", "or", "xor", "lshift", "rshift", "fmod",
            "arctan2", "hypot", "copysign"),
           ("lt", "le", "gt", "ge", "eq", "ne", "logical_and", "logical_or", "logical_xor"), ("div",),
           ("neg", "pos", "abs", "invert", "sign", "square", "reciprocal"),
           ("sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
            "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "floor", "ceil", "trunc", "rint", "erf", "sigmoid"),
           ("isnan", "isinf", "isfinite", "signbit", "logical_not"))
_GROUP_OF = {op: g for g in _GROUPS for op in g}
_FAMILIES = {}


def _family(op, dts, ct, rt):
    """(the expressions of op's family for these operand dtypes, their helper functions, op's index)."""
    group = _GROUP_OF.get(op, (op,))
    key = (group, dts, ct, rt)
    fam = _FAMILIES.get(key)
    if fam is None:
        table = BINARY if len(dts) == 2 else UNARY
        t = N.ctype(ct)
        exprs, names, pre = [], [], ""
        for m in group:
            try:
                if N.ufunc_types(table[m][0], list(dts)) != (ct, rt):
                    continue
                e = table[m][1](t, ct.kind)
            except TypeError:  # (DTypeError too) not in the family for these types
                continue
            for j, x in enumerate(("X", "Y")[:len(dts)]):
                e = e.replace(x, f"(({t})x{j})")
            e, p = _preamble(e, t)
            if p and p not in pre:
                pre += p
            exprs.append(e)
            names.append(m)
        fam = _FAMILIES[key] = (exprs, pre, {m: i for i, m in enumerate(names)})
    return fam[0], fam[1], fam[2][op]


def where(cond, x, y):
    """np.where(cond, x, y) on the device: cond an Array (any dtype: nonzero is true), x and y Arrays
    or scalars, broadcast together; the type NumPy 2 gives x and y."""
    if not isinstance(cond, A.Array):
        raise InvalidArgument(1, "where: the condition is a clrun.Array")
    ctx = cond.ctx
    for v in (x, y):
        if isinstance(v, A.Array) and v.ctx is not ctx:
            raise InvalidArgument(1, "where: the Arrays are on different contexts")
        if isinstance(v, np.ndarray) and v.ndim:
            raise InvalidArgument(1, "where: a NumPy array: move it to the device first (ctx.asarray(x))")
    strong = [v.dtype for v in (x, y) if isinstance(v, (A.Array, np.ndarray, np.generic))]
    dx, dy = (N.operand_dtype(v, strong, "where") for v in (x, y))
    rt = np.result_type(dx, dy)
    shape = N.broadcast_shapes(cond.shape, *[np.shape(v) if not isinstance(v, A.Array) else v.shape for v in (x, y)])
    t = N.ctype(rt)
    ops = [(cond, cond.dtype, None)]
    for v, d in ((x, dx), (y, dy)):
        ops.append((v, d, None) if isinstance(v, A.Array) else (None, rt, N.host_scalar(v, d)))
    out = A.Array(ctx, shape, rt)
    return N.walk(ctx, out, f"(x0 != 0 ? ({t})x1 : ({t})x2)", rt, ops, stem="clrun_where")
