"""clrun.Array against NumPy's rules: broadcasting, NumPy 2's promotion (NEP 50), strided views,
advanced indexing, axis reductions, element-wise functions, NumPy's protocols, printing, pickling,
creation — on fresh random inputs with hostile values (NaN, inf, -0.0, integer extremes, zero
divisors), each result compared with NumPy's (the references computed under NEP 50 where NumPy 1.x
still defaults to the old rules)."""
import contextlib
import copy
import ctypes
import pickle
import threading

import numpy as np
import pytest

import clrun

AxisError = getattr(getattr(np, "exceptions", np), "AxisError", None) or np.AxisError  # NumPy 2: np.exceptions only
FLOATS = (np.float16, np.float32, np.float64)
INTS = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64)


@contextlib.contextmanager
def nep50():
    """NumPy 2's promotion for the references (NumPy 1.24+ can switch to it; 2.x has it already)."""
    old = np._get_promotion_state() if hasattr(np, "_get_promotion_state") else None
    if old is not None:
        np._set_promotion_state("weak")
    try:
        with np.errstate(all="ignore"):
            yield
    finally:
        if old is not None:
            np._set_promotion_state(old)


def data(rng, shape, dt, hostile=True):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind == "f":
        x = (rng.standard_normal(shape) * 10).astype(dt)
        if hostile and x.size >= 8:
            f = x.reshape(-1)
            picks = rng.choice(f.size, 6, replace=False)
            f[picks] = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0]).astype(dt)
        return x
    info = np.iinfo(dt)
    x = rng.integers(max(info.min, -100), min(info.max, 100), shape, dtype=dt, endpoint=True)
    if hostile and x.size >= 4:
        f = x.reshape(-1)
        picks = rng.choice(f.size, 4, replace=False)
        f[picks] = [info.min, info.max, 0, -1 if dt.kind == "i" else 1]
    return x


def same(got, want, zero_sign=True):
    """Equal values (NaN where NaN, signed zeros alike unless zero_sign is False) and equal dtypes."""
    g = np.asarray(got.get() if isinstance(got, clrun.Array) else got)
    w = np.asarray(want)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    assert g.shape == w.shape, (g.shape, w.shape)
    if g.dtype.kind == "f":
        assert np.array_equal(np.isnan(g), np.isnan(w))
        m = ~np.isnan(w)
        assert np.array_equal(g[m], w[m]), (g[m][g[m] != w[m]][:5], w[m][g[m] != w[m]][:5])
        if zero_sign:
            assert np.array_equal(np.signbit(g[m & (w == 0)]), np.signbit(w[m & (w == 0)]))
    else:
        assert np.array_equal(g, w)


def close(got, want, dt):
    g = got.get() if isinstance(got, clrun.Array) else np.asarray(got)
    assert g.dtype == np.asarray(want).dtype
    tol = {np.dtype(np.float16): (4e-3, 1e-3), np.dtype(np.float32): (2e-6 * 8, 1e-6), np.dtype(np.float64): (1e-13, 1e-14)}[np.dtype(dt)]
    assert np.allclose(g, want, rtol=tol[0], atol=tol[1], equal_nan=True), np.max(np.abs(g - want))


# ---- broadcasting and promotion ------------------------------------------------------------------------

EXACT = ("add", "sub", "mul", "floordiv", "mod", "maximum", "minimum", "lt", "le", "gt", "ge", "eq", "ne")
PY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "floordiv": lambda a, b: a // b,
      "mod": lambda a, b: a % b, "div": lambda a, b: a / b, "maximum": np.maximum, "minimum": np.minimum,
      "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
      "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}


@pytest.mark.parametrize("da,db", [(np.float32, np.float32), (np.int8, np.uint8), (np.int32, np.float32), (np.uint64, np.int64),
                                   (np.float16, np.float32), (np.int16, np.float64), (np.bool_, np.int32), (np.int64, np.int64),
                                   (np.uint8, np.uint8), (np.float64, np.float16)])
def test_binary_operators_broadcast_and_promote_as_numpy(ctx, rng, da, db):
    for sa, sb in (((5, 1, 7), (3, 1)), ((4,), (6, 4)), ((), (3, 2)), ((2, 3), (2, 3)), ((0, 3), (3,))):
        x, y = data(rng, sa, da), data(rng, sb, db)
        a, b = ctx.asarray(x), ctx.asarray(y)
        for op in EXACT + ("div",):
            if np.dtype(da) == np.bool_ and np.dtype(db) == np.bool_ and op in ("sub",):
                continue
            with nep50():
                want = PY[op](x, y)
            got = PY[op](a, b)
            if op == "div" and want.dtype == np.float16:
                close(got, want, np.float16)  # NumPy divides float16 in float32 and rounds; so do we, but allow ulps
            else:  # (maximum(0.0, -0.0): NumPy's SIMD loops and its scalar loop disagree on the zero's sign)
                same(got, want, zero_sign=op not in ("maximum", "minimum"))


@pytest.mark.parametrize("dt", (np.float16, np.float32, np.int8, np.uint16, np.int64, np.uint64, np.bool_))
def test_python_and_numpy_scalars_follow_nep50(ctx, rng, dt):
    x = data(rng, (3, 5), dt)
    a = ctx.asarray(x)
    # (a negative Python int beside an unsigned Array: NumPy 2 raises or compares exactly, which
    # test_python_ints_that_do_not_fit checks; NumPy 1's NEP 50 mode differs there)
    scalars = [True, 3, -2 if np.dtype(dt).kind != "u" else 5, 2.5, np.float32(1.5), np.int16(7), np.float64(0.25), np.uint8(200)]
    for s in scalars:
        for op in ("add", "mul", "lt", "maximum"):
            with nep50():
                try:
                    want = PY[op](x, s)
                except (OverflowError, TypeError) as e:
                    with pytest.raises(type(e)):
                        PY[op](a, s)
                    continue
            same(PY[op](a, s), want, zero_sign=op != "maximum")
            with nep50():
                want_r = PY[op](s, x)
            same(PY[op](s, a), want_r, zero_sign=op != "maximum")


def test_python_ints_that_do_not_fit_raise_or_compare_exactly(ctx):
    a = ctx.asarray(np.array([1, -5, 127], np.int8))
    with pytest.raises(OverflowError):
        a + 300
    same(a < 1000, np.array([True, True, True]))
    same(a == -129, np.array([False, False, False]))
    u = ctx.asarray(np.array([0, 2**63, 2**64 - 1], np.uint64))
    same(u > -1, np.array([True, True, True]))


def test_integer_extremes_and_zero_divisors(ctx):
    for dt in (np.int8, np.int32, np.int64, np.uint8, np.uint64):
        info = np.iinfo(dt)
        vals = np.array([info.min, info.max, 0, 1, 7, info.min + 1] + ([-1, -7] if info.min < 0 else [3, 5]), dt)
        divs = np.array([0, -1 if info.min < 0 else 2, 1, 3, info.max, info.min if info.min else 9] + [2, 0], dt)
        a, b = ctx.asarray(vals), ctx.asarray(divs)
        with np.errstate(all="ignore"):
            for op in ("floordiv", "mod", "add", "sub", "mul"):
                same(PY[op](a, b), PY[op](vals, divs))
            same(-a, -vals)
            same(abs(a), np.abs(vals))
            same(~a, ~vals)
            for sh in (0, 1, 7, 8, 31, 63, 64, 100):
                s = np.array(sh).astype(dt) if sh <= info.max else None
                if s is None:
                    continue
                same(a << s.item(), vals << s)
                same(a >> s.item(), vals >> s)
            same(a & b, vals & divs)
            same(a | b, vals | divs)
            same(a ^ b, vals ^ divs)


def test_float_floor_division_and_remainder_are_numpys_divmod(ctx, rng):
    for dt in FLOATS:
        x = data(rng, 400, dt)
        y = data(rng, 400, dt)
        y[:3] = [0.0, -0.0, np.inf]
        a, b = ctx.asarray(x), ctx.asarray(y)
        with np.errstate(all="ignore"):
            same(a // b, x // y)
            same(a % b, x % y)
            if dt != np.float16:
                close(a ** b, x ** y, dt)


def test_in_place_operators_keep_the_type_and_refuse_unsafe_casts(ctx, rng):
    x = data(rng, (4, 6), np.float32, hostile=False)
    a = ctx.asarray(x)
    row = data(rng, 6, np.float32, hostile=False)
    a += ctx.asarray(row)
    x += row
    a *= 2
    x *= 2
    same(a, x)
    i = ctx.asarray(np.arange(6, dtype=np.int32))
    with pytest.raises(TypeError, match="same_kind"):
        i += 1.5
    with pytest.raises(ValueError):
        i += ctx.asarray(np.ones((2, 6), np.int32))  # the result would not fit the left operand's shape
    same(i, np.arange(6, dtype=np.int32))


# ---- views and indexing ----------------------------------------------------------------------------------


KEYS = [(slice(None, None, -1),), (slice(1, None, 2), slice(None, None, -3)), (Ellipsis, 2), (None, slice(None), 1),
        (1, Ellipsis, None), (slice(-2, None), slice(3, 0, -1)), (slice(5, 2),), (0, 0, 0), (-1,), (slice(None), None, slice(None, 2))]


@pytest.mark.parametrize("dt", (np.float32, np.int16, np.float16, np.bool_))
def test_basic_indexing_views_read_and_write_the_same_memory(ctx, rng, dt):
    x = data(rng, (5, 6, 4), dt, hostile=False)
    for key in KEYS:
        a = ctx.asarray(x)
        same(a[key], x[key])
        v = a[key]
        if v.ndim:
            same(v.T, x[key].T)
            same(v.reshape(-1), x[key].reshape(-1))
        y = x.copy()
        val = data(rng, np.shape(y[key])[-1:] if np.ndim(y[key]) else (), dt, hostile=False)
        a[key] = ctx.asarray(val) if np.ndim(val) else val.item() if hasattr(val, "item") else val
        y[key] = val
        same(a, y)


def test_transpose_swapaxes_squeeze_expand_dims(ctx, rng):
    x = data(rng, (2, 1, 3, 4), np.float32)
    a = ctx.asarray(x)
    same(a.transpose(2, 0, 3, 1), x.transpose(2, 0, 3, 1))
    same(a.swapaxes(0, -1), x.swapaxes(0, -1))
    same(a.squeeze(), x.squeeze())
    same(a.squeeze(1), x.squeeze(1))
    same(a.expand_dims((0, 3)), np.expand_dims(x, (0, 3)))
    same(np.transpose(a), x.T)
    same(a.T.reshape(12, 2), x.T.reshape(12, 2))  # a copy: the transpose is not contiguous
    with pytest.raises(ValueError):
        a.squeeze(0)
    with pytest.raises(AxisError):
        a.swapaxes(0, 4)
    with pytest.raises(ValueError):
        a.reshape(5, -1)


def test_advanced_indexing_gathers_and_scatters(ctx, rng):
    x = data(rng, (6, 5, 4), np.float32, hostile=False)
    a = ctx.asarray(x)
    idx = np.array([4, -1, 0, 2, 2])
    for key in ((idx,), (slice(None), idx), (Ellipsis, [3, 0]), (idx[:3], slice(1, None), [1, 2, 3]), (np.array([[1, 2], [0, 5]]),),
                (x[:, :, 0] > 0,), (x > 0.5,), (slice(None, None, -2), [0, 4])):
        same(a[key], x[key])
        y = x.copy()
        b = ctx.asarray(x)
        shape = y[key].shape
        val = data(rng, shape[-1:] if shape else (), np.float32, hostile=False)
        y[key] = val
        b[key] = ctx.asarray(val) if val.ndim else float(val)
        if not any(isinstance(k, np.ndarray) and k.dtype != np.bool_ and len(set(k.ravel() % 6)) < k.size for k in key):
            same(b, y)  # (repeated positions: which value lands is unspecified)
    mask = ctx.asarray(x > 0)
    same(a[mask], x[x > 0])
    with pytest.raises(IndexError, match="out of bounds"):
        a[[0, 6]]
    with pytest.raises(IndexError, match="out of bounds"):
        a[:, [-6]]
    with pytest.raises(IndexError):
        a[x[:3] > 0]
    with pytest.raises(IndexError):
        a[1.5]
    with pytest.raises(IndexError):
        a[0, 0, 0, 0]
    with pytest.raises(IndexError, match="out of bounds"):
        a[[2**63 - 1]]


def test_overlapping_assignment_reads_before_it_writes(ctx, rng):
    x = data(rng, (50, 3), np.int32, hostile=False)
    a = ctx.asarray(x)
    a[1:] = a[:-1]
    x[1:] = x[:-1].copy()
    same(a, x)
    a[::-1] = a
    x[::-1] = x.copy()
    same(a, x)
    a[2:] += a[:-2]
    x[2:] += x[:-2].copy()
    same(a, x)


# ---- reductions along axes -----------------------------------------------------------------------------


@pytest.mark.parametrize("dt", (np.float32, np.float16, np.int32, np.uint8, np.bool_))
def test_axis_reductions(ctx, rng, dt):
    x = data(rng, (7, 5, 6), dt, hostile=False)
    views = [(ctx.asarray(x), x), (ctx.asarray(x)[::-1, 1:, ::2], x[::-1, 1:, ::2])]
    for a, xv in views:
        for axis in (0, 1, -1, (0, 2), (1, 2), None):
            for kd in (False, True):
                for name in ("sum", "prod", "max", "min", "any", "all", "mean"):
                    if name == "prod" and np.dtype(dt).kind == "f":
                        continue
                    with nep50():
                        if dt == np.float16 and name in ("sum", "mean"):  # NumPy adds in float16; clrun in float
                            want = getattr(xv.astype(np.float32), name)(axis=axis, keepdims=kd).astype(np.float16)
                        else:
                            want = getattr(xv, name)(axis=axis, keepdims=kd)
                    got = getattr(a, name)(axis=axis, keepdims=kd)
                    if np.dtype(want.dtype).kind == "f" and name in ("sum", "mean"):
                        # NumPy adds float32 in float32 (pairwise or in order), clrun in double: both within a
                        # few ulps of the sum of magnitudes, not of a sum that cancels
                        mag = np.abs(xv.astype(np.float64)).sum(axis=axis, keepdims=kd)
                        if name == "mean":
                            mag = mag / max(1, xv.size // max(1, np.asarray(mag).size))
                        g = np.asarray(got.get() if isinstance(got, clrun.Array) else got)
                        assert g.dtype == np.asarray(want).dtype
                        assert np.all(np.abs(g.astype(np.float64) - np.asarray(want, np.float64))
                                      <= 16 * np.finfo(want.dtype).eps * mag + np.finfo(want.dtype).tiny), name
                    elif np.dtype(want.dtype).kind == "f":
                        close(got, np.asarray(want), want.dtype)
                    else:
                        same(got, np.asarray(want))
                if dt != np.bool_:
                    for name in ("var", "std"):
                        want = getattr(xv, name)(axis=axis, keepdims=kd, ddof=1) if xv.size else None
                        if want is not None:
                            close(getattr(a, name)(axis=axis, keepdims=kd, ddof=1), np.asarray(want), np.asarray(want).dtype)
            if not isinstance(axis, tuple):
                for name in ("argmax", "argmin"):
                    same(getattr(a, name)(axis=axis), np.asarray(getattr(xv, name)(axis=axis)))


def test_reductions_propagate_nan_and_name_empty_ones(ctx):
    x = np.array([[1.0, np.nan, 3.0], [2.0, 2.0, -np.inf], [5.0, 5.0, 1.0]], np.float32)
    a = ctx.asarray(x)
    for name in ("max", "min", "argmax", "argmin", "sum"):
        same(getattr(a, name)(axis=1), getattr(x, name)(axis=1))
        same(getattr(a, name)(axis=0), getattr(x, name)(axis=0))
    e = ctx.asarray(np.zeros((3, 0), np.float32))
    same(e.sum(axis=1), np.zeros(3, np.float32))
    same(e.prod(axis=1), np.ones(3, np.float32))
    with pytest.raises(ValueError, match="zero-size"):
        e.max(axis=1)
    with pytest.raises(ValueError):
        e.argmax(axis=1)
    with pytest.raises(AxisError):
        a.sum(axis=2)
    with pytest.raises(ValueError):
        a.sum(axis=(0, 0))
    i = ctx.asarray(np.array([[2**62, 2**62, 2**62]], np.int64))
    same(i.sum(axis=1), np.array([2**62, 2**62, 2**62], np.int64).reshape(1, 3).sum(axis=1))  # wraps as NumPy's


# ---- functions --------------------------------------------------------------------------------------------

UNARY = ("sqrt", "exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "floor", "ceil", "rint", "trunc", "abs", "sign",
         "square", "isnan", "isinf", "isfinite", "arctan", "sinh", "log2", "log10")


@pytest.mark.parametrize("dt", (np.float32, np.float64, np.float16, np.int16, np.int32))
def test_unary_functions_as_numpy(ctx, rng, dt):
    x = data(rng, (40, 7), dt)
    if np.dtype(dt).kind == "f":
        x = x / 3
    a = ctx.asarray(x)
    for name in UNARY:
        with nep50():
            want = getattr(np, name)(x)
        got = getattr(np, name)(a)  # __array_ufunc__: on the device
        assert isinstance(got, clrun.Array)
        via = getattr(clrun, name)(a)
        if want.dtype.kind == "f" and name not in ("floor", "ceil", "rint", "trunc", "abs", "sign", "square", "sqrt"):
            close(got, want, want.dtype)
        else:
            same(got, want)
        same(via, got.get())
    y = np.abs(data(rng, 100, np.float32, hostile=False)) / 10
    try:
        from math import erf
        close(clrun.erf(ctx.asarray(y)), np.array([erf(v) for v in y.astype(np.float64)], np.float32), np.float32)
    except ImportError:
        pass
    close(clrun.sigmoid(ctx.asarray(y)), (1 / (1 + np.exp(-y.astype(np.float64)))).astype(np.float32), np.float32)


def test_where_clip_round_maximum_power(ctx, rng):
    x = data(rng, (30, 4), np.float32)
    y = data(rng, (4,), np.float32)
    a, b = ctx.asarray(x), ctx.asarray(y)
    with nep50():
        same(np.where(a > 0, a, b), np.where(x > 0, x, y))
        same(clrun.where(a > 0, a, 0), np.where(x > 0, x, np.float32(0)))
        same(np.clip(a, -1.0, 2.0), np.clip(x, -1.0, 2.0))
        same(np.maximum(a, b), np.maximum(x, y))
        same(np.round(a), np.round(x))
        close(np.round(a, 2), np.round(x, 2), np.float32)
        i = data(rng, 50, np.int32, hostile=False)
        same(clrun.power(ctx.asarray(i), 3), np.power(i, 3))
        same(clrun.where(ctx.asarray(i) > 0, 1, 2.5), np.where(i > 0, 1, 2.5))


def test_numpy_functions_dispatch_to_the_device(ctx, rng):
    x = data(rng, (6, 5), np.float32, hostile=False)
    a = ctx.asarray(x)
    assert isinstance(np.sum(a, axis=0), clrun.Array)
    close(np.sum(a, axis=0), x.sum(axis=0), np.float32)
    close(np.mean(a, axis=1), x.mean(axis=1), np.float32)
    same(np.concatenate([a, a[:2]]), np.concatenate([x, x[:2]]))
    same(np.stack([a, a], axis=1), np.stack([x, x], axis=1))
    same(np.zeros_like(a), np.zeros_like(x))
    same(np.full_like(a, 3), np.full_like(x, 3))
    assert np.shape(a) == (6, 5) and np.ndim(a) == 2
    assert np.allclose(a, x)  # functions without a device version run on the host
    assert float(np.median(a)) == float(np.median(x))
    close(np.add.reduce(a, axis=0), x.sum(axis=0), np.float32)
    with pytest.raises(clrun.InvalidArgument, match="device first"):
        np.ones((6, 5), np.float32) + a


def test_creation_functions(ctx):
    same(ctx.arange(10), np.arange(10))
    same(ctx.arange(0.5, 3.2, 0.3, dtype=np.float32), np.arange(0.5, 3.2, 0.3, dtype=np.float32))
    same(ctx.linspace(-1, 1, 17), np.linspace(-1, 1, 17))
    for n, m, k in ((4, None, 0), (3, 5, 2), (5, 3, -1), (2, 2, 5), (0, 3, 0)):
        same(ctx.eye(n, m, k), np.eye(n, m, k, dtype=np.float32))
    same(ctx.ones((2, 3), np.int8), np.ones((2, 3), np.int8))
    with pytest.raises(ValueError):
        clrun.concatenate([ctx.ones((2, 3)), ctx.ones((2, 4))])
    same(clrun.concatenate([ctx.ones((2, 3), np.int8), ctx.ones((1, 3), np.float32)]), np.ones((3, 3), np.float32))


# ---- printing, pickling, copying -----------------------------------------------------------------------


def test_repr_pickle_copy(ctx, rng):
    x = data(rng, (3, 4), np.float32, hostile=False)
    a = ctx.asarray(x)
    assert repr(a) == "clrun.Array(" + np.array2string(x, separator=", ", prefix="clrun.Array(") + ", dtype=float32)"
    assert str(a) == str(x)
    same(pickle.loads(pickle.dumps(a)), x)
    same(pickle.loads(pickle.dumps(a[:, ::2])), x[:, ::2])
    c, d = copy.copy(a), copy.deepcopy(a)
    a += 1
    same(c, x)
    same(d, x)
    a._release()
    assert "freed" in repr(a)


def test_closed_context_and_threads(rng):
    with clrun.open() as ctx:
        a = ctx.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
        v = a.T
    for f in (lambda: v + 1, lambda: v.sum(axis=0), lambda: v[[0]], lambda: np.sqrt(v)):
        with pytest.raises(clrun.InvalidArgument):
            f()
    with clrun.open() as ctx:
        errors = []

        def work(seed):
            r = np.random.default_rng(seed)
            try:
                for _ in range(8):
                    x = data(r, (9, 7), np.float32, hostile=False)
                    b = ctx.asarray(x)
                    t = x.T + x[0, :, None]  # a sum may cancel: its error bound is the sum of magnitudes
                    g = (b.T + b[0, :, None]).sum(axis=0).get()
                    assert g.dtype == np.float32
                    assert np.all(np.abs(g - t.astype(np.float64).sum(axis=0)) <= 8 * np.finfo(np.float32).eps * np.abs(t).sum(axis=0))
                    same(b[::-2, [1, 3]], x[::-2, [1, 3]])
            except Exception as e:  # noqa: BLE001
                errors.append(e)
        ts = [threading.Thread(target=work, args=(int(rng.integers(1 << 30)),)) for _ in range(3)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert not errors, errors


# ---- generators in PyOpenCL's form, DLPack ---------------------------------------------------------------


def test_generators_take_pyopencls_form_and_return_their_output(ctx, rng):
    x = data(rng, 300, np.float32, hostile=False)
    k = clrun.ElementwiseKernel(ctx, "const float *x, float *z, float a", "z[i] = a * x[i] + 1", "axpb_rules")
    a, z = ctx.asarray(x), ctx.empty(300)
    r = k(a, z, np.float32(2))
    assert r is z
    close(z, x * np.float32(2) + np.float32(1), np.float32)  # (the compiler may fuse a * x + 1: OpenCL allows it)
    r, ev = k(a, z, 3.0, range=range(100), event=True)
    ev.wait()
    want = x * np.float32(2) + np.float32(1)
    want[:100] = x[:100] * np.float32(3) + np.float32(1)
    close(r, want, np.float32)
    same(k(a, z, 0.0, wait_for=[ev]), np.ones(300, np.float32))
    with pytest.raises(clrun.Unsupported):
        k(a, z, 1.0, range=range(5, 10))
    with pytest.raises(clrun.InvalidArgument):
        k(a, z, 1.0, wait_for=["not an event"])
    with pytest.raises(clrun.BuildFailed):
        clrun.ElementwiseKernel(ctx, "float *z", "z[i] = undefined_name", "broken_at_once")  # built at construction
    rk = clrun.ReductionKernel(ctx, np.float32, "0", "a + b", "x[i]", "const float *x", name="sum_rules")
    assert abs(float(rk(a)) - float(x.astype(np.float64).sum())) <= 1e-4 * np.abs(x).sum()
    with pytest.raises(clrun.Unsupported, match="strided"):
        k(a[::2], z[:150], 1.0)


def test_dlpack(ctx, rng):
    x = data(rng, (4, 6), np.float32, hostile=False)
    a = ctx.asarray(x)
    assert a.__dlpack_device__()[0] == 4  # kDLOpenCL
    cap = a[:, ::2].__dlpack__()
    assert type(cap).__name__ == "PyCapsule"
    del cap
    host = np.from_dlpack(type("P", (), {"__dlpack__": lambda s, **k: a.__dlpack__(dl_device=(1, 0)),
                                         "__dlpack_device__": lambda s: (1, 0)})())
    same(host, x)
    same(clrun.from_dlpack(x[::-1], ctx), x[::-1])  # a CPU producer: copied to the device
    assert clrun.from_dlpack(a) is a
    with pytest.raises(clrun.InvalidArgument):
        clrun.from_dlpack([1, 2, 3], ctx)
    with pytest.raises(clrun.Unsupported, match="host"):
        clrun.from_dlpack(type("G", (), {"__dlpack_device__": lambda s: (9, 0)})(), ctx)


class _FakeCuda:
    """A DLPack producer on CUDA device 0 (a made-up address) that counts its deleter's calls and
    records the stream it was asked for."""

    def __init__(self, shape, code=2, bits=32, lanes=1):
        from clrun import _dlpack as D
        self.deleted, self.streams = 0, []
        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        self._m = D._Managed()
        self._m.dl_tensor = D._Tensor(0x7f0000001000, D._Device(2, 0), len(shape), D._DType(code, bits, lanes), self._shape, None, 0)

        def gone(p):
            self.deleted += 1
        self._deleter = D._DELETER(gone)
        self._m.deleter = self._deleter
        self._m.manager_ctx = None

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None, **kw):
        self.streams.append(stream)
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self._m), b"dltensor", None)


def test_dlpack_cuda_producer_refused_or_copied(ctx):
    """A CUDA producer: asked for stream 1; its tensor deleted exactly once whatever happens; a type
    clrun lacks refused in words; off NVIDIA, refused for want of a CUDA driver."""
    bad = _FakeCuda((4, 4), code=2, bits=32, lanes=4)
    with pytest.raises(clrun.Unsupported, match="lanes"):
        clrun.from_dlpack(bad, ctx)
    assert bad.deleted == 1 and bad.streams == [1]
    odd = _FakeCuda((3,), code=2, bits=24)
    with pytest.raises(clrun.Unsupported, match="24 bits"):
        clrun.from_dlpack(odd, ctx)
    assert odd.deleted == 1
    dev = ctx.device
    f = _FakeCuda((1000,))
    if dev.type == "gpu" and "NVIDIA" in dev.platform_vendor:
        with pytest.raises(clrun.InvalidArgument, match="CUDA"):  # the made-up address: the driver refuses it
            clrun.from_dlpack(f, ctx)
    else:
        with pytest.raises(clrun.Unsupported, match="NVIDIA GPUs only"):
            clrun.from_dlpack(f, ctx)
    assert f.deleted == 1
    empty = _FakeCuda((0, 5))  # nothing to copy: an empty Array anywhere
    e = clrun.from_dlpack(empty, ctx)
    assert e.shape == (0, 5) and e.dtype == np.float32 and empty.deleted == 1


def test_ordered_blocks_wait_for_events_and_give_one(ctx, rng):
    x = data(rng, (64, 64), np.float32, hostile=False)
    a = ctx.asarray(x)
    with ctx.ordered() as first:
        b = a @ a
        c = b + a.T
    assert first.event is not None
    s = ctx.stream()
    with s, ctx.ordered(wait_for=[first.event]) as second:
        d = c * 2  # on another queue (the stream, current first): ordered after the first block only through its event
    second.event.wait()
    want = (x.astype(np.float64) @ x + x.T) * 2
    assert np.allclose(d.get(), want, rtol=1e-4, atol=1e-3)
    with pytest.raises(clrun.InvalidArgument):
        ctx.ordered(wait_for=[object()])


def test_library_ops_take_strided_views(ctx, rng):
    x = data(rng, (48, 32), np.float32, hostile=False)
    y = data(rng, (48, 40), np.float32, hostile=False)
    a, b = ctx.asarray(x), ctx.asarray(y)
    ref = x.T.astype(np.float64) @ y
    assert np.allclose((a.T @ b).get(), ref, rtol=1e-4, atol=1e-3)  # a transposed view: the GEMM's transpose flag
    assert np.allclose((b.T @ a).get(), y.T.astype(np.float64) @ x, rtol=1e-4, atol=1e-3)
    assert np.allclose((a[::2].T @ b[::2]).get(), x[::2].T.astype(np.float64) @ y[::2], rtol=1e-4, atol=1e-3)  # a copy first
    assert np.allclose(np.dot(a[:, 3], b[:, 5]), np.dot(x[:, 3].astype(np.float64), y[:, 5]), rtol=1e-4, atol=1e-3)
    same(a.T.astype(np.float16), x.T.astype(np.float16))
    s = ctx.stream()
    out = a[::-1, 1::3].get(stream=s)
    s.synchronize()
    same(out, x[::-1, 1::3])
    v = ctx.asarray(np.zeros((48, 32), np.float32))
    v[:, ::2].set(x[:, ::2], stream=s)
    s.synchronize()
    w = np.zeros_like(x)
    w[:, ::2] = x[:, ::2]
    same(v, w)


@pytest.mark.parametrize("dt", (np.int32, np.uint8, np.int64, np.float32, np.float64, np.bool_, np.float16))
def test_cumsum_and_running_extremes(ctx, rng, dt):
    for shape, axis in (((1025,), None), ((3, 1031), 1), ((1500, 3), 0), ((4, 5, 6), -2), ((0, 4), 1), ((2, 0), 1)):
        x = data(rng, shape, dt, hostile=False)
        a = ctx.asarray(x)
        with nep50():
            want = np.cumsum(x, axis=axis)
        got = np.cumsum(a, axis=axis)
        assert isinstance(got, clrun.Array)
        if dt == np.float16:  # computed in float32, rounded once per element (NumPy adds in float16)
            close(got, np.cumsum(x.astype(np.float32), axis=axis).astype(np.float16), np.float16)
        elif want.dtype.kind == "f":  # (added in tiles, not left to right: within a few ulps of the running sum of magnitudes)
            mag = np.cumsum(np.abs(x).astype(np.float64), axis=axis)
            g = got.get()
            assert g.dtype == want.dtype and np.all(np.abs(g - want) <= 8 * np.finfo(dt).eps * mag + 1e-30)
        else:
            same(got, want)
        if dt in (np.int32, np.int64):
            same(a[::-1].cumsum(axis=0), np.cumsum(x[::-1], axis=0))
        if dt != np.bool_ and dt != np.float16 and x.ndim:
            ax = -1 if axis is None else axis
            with nep50():
                same(np.maximum.accumulate(a, axis=ax), np.maximum.accumulate(x, axis=ax))
                same(np.minimum.accumulate(a, axis=ax), np.minimum.accumulate(x, axis=ax))
    i = ctx.asarray(np.array([2**31 - 1, 1, 2**31 - 1], np.int32))
    same(clrun.cumsum(i, dtype=np.int32), np.cumsum(np.array([2**31 - 1, 1, 2**31 - 1], np.int32), dtype=np.int32))  # wraps
    same(clrun.cumsum(ctx.asarray(np.arange(5, dtype=np.int64)), exclusive=True), np.array([0, 0, 1, 3, 6]))
    f = ctx.asarray(np.array([1.0, np.nan, 3.0], np.float32))
    same(clrun.cummax(f), np.maximum.accumulate(np.array([1.0, np.nan, 3.0], np.float32)))


@pytest.mark.parametrize("dt", (np.float32, np.int64, np.uint8, np.float16))
def test_device_masks_select_and_assign(ctx, rng, dt):
    x = data(rng, (37, 29), dt, hostile=False)
    a = ctx.asarray(x)
    for m in (x > x.flat[5], np.zeros_like(x, bool), np.ones_like(x, bool)):
        same(a[ctx.asarray(m)], x[m])
        same(a.T[ctx.asarray(m.T)], x.T[m.T])  # strided Array and mask
        b, y = ctx.asarray(x), x.copy()
        b[ctx.asarray(m)] = 7
        y[m] = 7
        same(b, y)
        vals = data(rng, (int(m.sum()),), dt, hostile=False)
        b[ctx.asarray(m)] = ctx.asarray(vals)
        y[m] = vals
        same(b, y)
    m = x > x.flat[5]
    k = int(m.sum())
    for wrong in (k + 2, k - 1 if k > 2 else k + 3):  # never the count, nor 1 (which broadcasts): NumPy refuses both
        with pytest.raises(ValueError, match="cannot assign"):
            a[ctx.asarray(m)] = ctx.asarray(np.zeros(wrong, dt))
        with pytest.raises(ValueError, match="cannot assign"):
            a[ctx.asarray(m)] = np.zeros(wrong, dt)
    with pytest.raises(ValueError, match="0 or 1-dimensional"):
        a[ctx.asarray(m)] = ctx.asarray(x)  # a's own shape does not broadcast to the selection
    # a row of a's last length is one value per True element when the count matches, as NumPy
    row = data(rng, (x.shape[-1],), dt, hostile=False)
    m = np.zeros_like(x, bool)
    m.flat[rng.choice(x.size, x.shape[-1], replace=False)] = True
    b, y = ctx.asarray(x), x.copy()
    b[ctx.asarray(m)] = ctx.asarray(row)
    y[m] = row
    same(b, y)
    b[ctx.asarray(m)] = ctx.asarray(row[:1])  # one value broadcasts
    y[m] = row[:1]
    same(b, y)
    b[ctx.asarray(m)] = row[::-1]  # a host run counts as one too
    y[m] = row[::-1]
    same(b, y)


def test_asarray_keeps_zero_dimensions(ctx):
    for v in (np.float32(3), np.array(2.5), 7, True, np.array(-4, np.int16)):
        a = ctx.asarray(v)
        want = np.asarray(v)
        assert a.shape == want.shape == () and a.dtype == want.dtype and a.get() == want
    z = ctx.zeros((), np.float32)
    z.set(np.float32(1.5))
    assert z.get() == 1.5 and (z + ctx.asarray([1.0, 2.0])).shape == (2,)
    with pytest.raises(clrun.InvalidArgument):
        z.set(np.ones(1, np.float32))  # (1,) into (): shapes differ, as NumPy's refuses


def test_float64_without_fp64_is_refused_in_words(ctx):
    a = ctx.asarray(np.arange(5.0))
    if ctx.device.fp64:
        assert a.min() == 0.0 and a.max() == 4.0
        return
    with pytest.raises(clrun.Unsupported, match="no fp64"):  # not a compiler's build log
        a.min()
