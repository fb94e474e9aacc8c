"""The classes of silent wrong answers closed in 0.1.0, each tested as a class: reductions of every
dtype against NumPy, closed and freed objects, the extents of every launch path, per-thread streams,
silent conversions, interop handles, NumPy's dot."""
import inspect
import threading
import warnings

import numpy as np
import pytest

import clrun

from conftest import DEVICE, SEED  # noqa: E402 - the seed the rng fixture prints




# ---- 1. every reduction of every dtype ---------------------------------------------------------------------

DTYPES = [np.float32, np.float16, np.float64, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.bool_]
OPS = ["sum", "prod", "max", "min", "argmax", "argmin", "mean", "any", "all", "dot", "norm"]
# documented float error: the library's compensated f32/f16 reductions, double accumulation elsewhere
REL = {2: 2e-3, 4: 2e-6, 8: 1e-12}


def _data(rng, dt, n, special):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind == "f":
        h = (rng.standard_normal(n) * 3).astype(dt)
        if special and n:
            for v in (np.nan, np.inf, -np.inf)[:n]:
                h[rng.integers(0, n)] = v
        return h
    info = np.iinfo(dt)
    h = rng.integers(max(info.min, -100), min(info.max, 100), n, dtype=dt, endpoint=True)
    if special and n:
        h[0], h[-1] = info.min, info.max  # sums and products wrap, as NumPy's
    return h


def _numpy(h, op):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if op == "norm":
            return np.linalg.norm(h)
        if op == "dot":
            return np.dot(h, h)
        return getattr(h, op)()


def _clrun(a, op):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if op == "dot":
            return a.dot(a)
        return getattr(a, op)()


def _agree(h, op, want, got):
    assert np.asarray(got).dtype == np.asarray(want).dtype, f"{op}: type {np.asarray(got).dtype}, NumPy's {np.asarray(want).dtype}"
    if np.asarray(want).dtype.kind != "f":
        assert got == want, f"{op}: {got!r}, NumPy {want!r}"
        return
    w, g = float(want), float(got)
    if np.isfinite(w) and w != 0 and op in ("sum", "mean", "dot", "norm", "prod"):
        w = float(_numpy(h.astype(np.float64), op))  # the exact value's neighbour: NumPy's f32 dot (BLAS) errs more than clrun's
    if op == "norm" and np.isinf(w) and np.asarray(want).dtype == np.float16:
        w = float(np.float16(np.linalg.norm(h.astype(np.float64))))  # documented: f16 squares summed in f32, no overflow
    if np.isnan(w) or np.isinf(w):
        assert (np.isnan(w) and np.isnan(g)) or w == g, f"{op}: {g!r}, NumPy {w!r}"
        return
    rel = REL[np.asarray(want).dtype.itemsize]
    x = h.astype(np.float64)
    scale = {"sum": np.abs(x).sum(), "mean": np.abs(x).mean() if x.size else 0, "dot": (x * x).sum()}.get(op, abs(w))
    if op == "prod":
        rel *= max(1, x.size)  # one rounding a factor in NumPy's order, another in clrun's
    assert abs(w - g) <= rel * max(scale, 1e-30) + (0 if op != "mean" else 1e-300), f"{op}: {g!r}, NumPy {w!r}"


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_reduction_of_every_dtype(ctx, rng, dt):
    """ops × dtypes × sizes (0, 1, odd, large) × values (negative, NaN, ±inf, the type's limits)."""
    for n in (0, 1, 7, 65537):
        for special in (False, True):
            h = _data(rng, dt, n, special)
            a = ctx.asarray(h)
            for op in OPS:
                try:
                    want = _numpy(h, op)
                except ValueError:  # NumPy refuses: the empty max, min, argmax, argmin
                    with pytest.raises(clrun.InvalidArgument):
                        _clrun(a, op)
                    continue
                _agree(h, op, want, _clrun(a, op))


def test_reductions_of_views_and_comparisons(ctx, rng):
    x = rng.standard_normal((40, 50))
    a = ctx.asarray(x)
    assert a[3:17].sum() == pytest.approx(x[3:17].sum(), rel=1e-12)
    assert a[5].argmin() == x[5].argmin()
    b = ctx.asarray(x.astype(np.float32))
    c = ctx.asarray(np.where(rng.random((40, 50)) < 0.5, x, 0).astype(np.float32))
    assert (b == c).sum() == (x.astype(np.float32) == np.asarray(c.get())).sum()
    assert np.float64([0.1, 0.2, 0.3]).sum() == ctx.asarray(np.float64([0.1, 0.2, 0.3])).sum()
    assert ctx.asarray(np.float64([-5.0, -7.0])).max() == -5.0  # no 0 from a wrong start value
    assert ctx.asarray(np.float64([5.0, 7.0])).min() == 5.0


def test_bfloat16_reductions_are_refused_in_words(ctx):
    a = ctx.asarray(np.ones(4, np.float32)).astype("bfloat16")
    for op in ("sum", "max", "mean", "norm"):
        with pytest.raises(clrun.Unsupported, match="bfloat16"):
            getattr(a, op)()


def test_dot_follows_numpy(ctx, rng):
    x, y, v = rng.standard_normal((5, 7)).astype(np.float32), rng.standard_normal((7, 3)).astype(np.float32), \
        rng.standard_normal(7).astype(np.float32)
    a, b, c = ctx.asarray(x), ctx.asarray(y), ctx.asarray(v)
    r = a.dot(b)  # 2-D · 2-D: the matrix product, not a scalar
    assert isinstance(r, clrun.Array) and r.shape == (5, 3)
    np.testing.assert_allclose(r.get(), x @ y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(a.dot(c).get(), x @ v, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ctx.asarray(rng.standard_normal(5).astype(np.float32)).dot(a).shape, (7,))
    with pytest.raises(clrun.InvalidArgument, match="aligned"):
        a.dot(a)


# ---- 3. closed and freed objects ----------------------------------------------------------------------------


def _public(obj):
    """Every public name of obj's class (methods and properties) but close/free themselves."""
    names = set()
    for cls in type(obj).__mro__:
        names |= {n for n in vars(cls) if not n.startswith("_")}
    names |= {n for n in vars(obj) if not n.startswith("_")}
    return sorted(names - {"close", "free", "closed", "freed"})


def _calls(obj, name):
    """Get the attribute; call it with plausible arguments where it is callable."""
    v = getattr(obj, name)
    if callable(v) and not isinstance(v, type):
        try:
            sig = inspect.signature(v)
            need = [p for p in sig.parameters.values() if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            need = []
        v(*([1] * len(need)))


def _assert_all_refused(obj, what):
    live = []
    for name in _public(obj):
        try:
            _calls(obj, name)
            live.append(name)
        except clrun.Error:
            pass
        except Exception as e:  # noqa: BLE001 - anything but clrun.Error is a finding
            live.append(f"{name} ({type(e).__name__}: {e})")
    assert not live, f"{what}: these still work or fail otherwise after close/free: {live}"


def test_every_method_after_close_or_free_raises():
    c = clrun.open(DEVICE)
    a = c.asarray(np.arange(64, dtype=np.float32))
    v = a[16:32]
    buf = clrun.Buffer(c, (8,), np.float32)
    s = c.stream()
    p = c.program(source="__kernel void k(__global float *x) { x[get_global_id(0)] = 1.0f; }")
    k = p.k
    pipe = clrun.CannyPipeline(c, lambda *x: None, 50, 100)
    c.close()
    for obj, what in ((c, "Context"), (a, "Array"), (v, "view"), (buf, "Buffer"), (s, "Stream"), (p, "Program"), (k, "Kernel"),
                      (pipe, "CannyPipeline")):
        _assert_all_refused(obj, what)
        for op in (lambda o: o + 1, lambda o: -o, lambda o: o * 2, lambda o: len(o), lambda o: bool(o), lambda o: o == o):
            try:
                op(obj)
            except (clrun.Error, TypeError):
                pass
        obj.close() if hasattr(type(obj), "close") else obj.free()  # a second close or free does nothing
        assert "closed" in repr(obj) or "freed" in repr(obj)
    g = clrun.Group(DEVICE or "cpu")
    g.close()
    _assert_all_refused(g, "Group")


def test_views_die_with_their_memory():
    with clrun.open(DEVICE) as c:
        align = max(1, c.device.mem_base_align // 4)
        a = c.asarray(np.zeros(4 * align, np.float32))
        v = a[align:2 * align]
        h = v.handle  # a sub-buffer of its own
        assert h
        a.free()
        other = c.zeros(4 * align)  # the pool hands a's memory out again
        for use in (lambda: v.get(), lambda: v.fill(7), lambda: v.handle, lambda: v + 1, lambda: v.sum()):
            with pytest.raises(clrun.InvalidArgument, match="freed"):
                use()
        assert not other.get().any()
        with pytest.raises(clrun.InvalidArgument):
            c.program(source="__kernel void k(__global float *x) { x[0] = 1.0f; }").k(v, global_size=1)


# ---- 4. extents of every launch path -----------------------------------------------------------------------


def test_generators_check_every_extent(ctx):
    ew = clrun.elementwise("float *y, const float *x", "y[i] = 2.0f * x[i]", name="twice_checked")
    red = clrun.reduction(np.float32, "0", "a + b", "x[i] * y[i]", "const float *x, const float *y", name="dot_checked")
    long_, short = ctx.zeros(100), ctx.zeros(40)
    with pytest.raises(clrun.InvalidArgument, match="40 elements"):
        ew(long_, short)
    with pytest.raises(clrun.InvalidArgument, match="40 elements"):
        red(long_, short)
    with pytest.raises(clrun.InvalidArgument):
        ew(long_, long_, size=101)
    with pytest.raises(clrun.InvalidArgument):
        ew(long_, long_[50:])  # a view by its own extent
    for bad in (-1, 0, 1.5, 2**64, True, "3", None.__class__):
        with pytest.raises(clrun.InvalidArgument):
            ew(long_, long_, size=bad)
        with pytest.raises(clrun.InvalidArgument):
            red(long_, long_, size=bad)
    x = ctx.asarray(np.arange(100, dtype=np.float32))
    ew(long_, x, size=30)
    assert np.array_equal(long_.get()[:30], 2 * np.arange(30)) and not long_.get()[30:].any()
    assert float(red(x, x, size=10).get()) == sum(i * i for i in range(10))


# ---- 5. streams and threads ----------------------------------------------------------------------------------


def test_streams_are_per_thread():
    """Threads with and without streams on one context: every result exact (a context-wide current
    stream once sent other threads' ops to it, and 3-4 of 300 came out wrong)."""
    with clrun.open(DEVICE) as c:
        errors = []

        def work(tid, use_stream):
            r = np.random.default_rng(SEED + tid)
            s = c.stream() if use_stream else None
            try:
                for _ in range(40):
                    x = r.standard_normal(3001).astype(np.float32)
                    if s is not None:
                        with s:
                            got = ((c.asarray(x) * 2.0) + 1.0).get()
                    else:
                        got = ((c.asarray(x) * 2.0) + 1.0).get()
                    if not np.array_equal(got, x * np.float32(2) + np.float32(1)):
                        errors.append(tid)
            except Exception as e:  # noqa: BLE001
                errors.append(f"{tid}: {e}")
            finally:
                if s is not None:
                    s.synchronize()
                    s.close()

        th = [threading.Thread(target=work, args=(t, t % 2 == 0)) for t in range(6)]
        for t in th:
            t.start()
        for t in th:
            t.join()
        assert not errors


def test_thousands_of_streams_are_all_synchronised():
    with clrun.open(DEVICE) as c:
        streams = [c.stream() for _ in range(1500)]
        host = np.arange(1500, dtype=np.int32) * 7 + SEED % 1000
        a = c.zeros(1500, np.int32)
        c.synchronize()  # the zeros, filled on the context's queue, land before any stream writes
        for i, s in enumerate(streams):
            a[i:i + 1].set(host[i:i + 1], stream=s)
        c.synchronize()
        assert np.array_equal(a.get(), host)
        for s in streams:
            s.close()


# ---- 6. silent conversions ------------------------------------------------------------------------------------


def test_no_silent_conversions(ctx, rng):
    h = ctx.asarray(np.ones(8, np.float16))
    with pytest.warns(RuntimeWarning, match="overflow"):
        r = h + 1e6
    assert np.isinf(r.get()).all()  # NumPy 2's answer, with its warning
    for dt in (np.int8, np.uint8, np.int16, np.uint32):
        a = ctx.asarray(np.ones(4, dt))
        with pytest.raises(OverflowError):
            a + (int(np.iinfo(dt).max) + 1)
        with pytest.raises(OverflowError):
            a * (int(np.iinfo(dt).min) - 1)
    for shape in ((2**62, 8), (2**32, 2**32), (2**61, 2**3, 2)):
        with pytest.raises(clrun.InvalidArgument, match="2\\^63"):
            ctx.empty(shape)
    with pytest.raises(clrun.InvalidArgument):
        ctx.empty((2.5, 3))
    with pytest.raises(OverflowError):
        clrun.gemm_s8(ctx, np.full((4, 4), 300.7), np.ones((4, 4), np.int8))
    with pytest.raises(OverflowError):
        clrun.gemm_s8(ctx, np.full((4, 4), 300), np.ones((4, 4), np.int8))
    with pytest.raises(OverflowError):
        clrun.quantize(ctx, np.ones(4, np.float32), 0.1, 2**40)
    q = clrun.gemm_s8(ctx, np.full((4, 4), 3.0), np.ones((4, 4), np.int8))  # whole numbers in range convert exactly
    assert (np.asarray(q) == 12).all()


# ---- 9. interop handles --------------------------------------------------------------------------------------


def test_values_that_cannot_be_handles_are_refused(ctx):
    for bad in (-1, 0, 2**64, 2**70, 3, 4097, 0x7F0000000000, 1.5, "0x10", None):
        with pytest.raises(clrun.InvalidArgument):
            clrun.Context.from_int_ptr(bad, bad)
        with pytest.raises(clrun.InvalidArgument):
            clrun.Buffer.from_int_ptr(ctx, bad, (4,))
    with pytest.raises(clrun.InvalidArgument, match="not a memory object|queue"):
        clrun.Buffer.from_int_ptr(ctx, ctx.queue_int_ptr, (4,))


def test_readable_memory_that_is_no_opencl_object_is_refused(ctx):
    # memory that passes every range and readability check, whose first word even points at
    # readable memory, as an address inside a library would: a driver would jump through it
    import ctypes

    target = (ctypes.c_uint64 * 64)(*range(1, 65))
    fake = (ctypes.c_uint64 * 4)(ctypes.addressof(target), ctypes.addressof(target), 0, 0)
    fake_heap = np.zeros(16, np.uint64)
    fake_heap[:] = fake_heap.ctypes.data
    for bad in (ctypes.addressof(fake), fake_heap.ctypes.data, id(ctx), id(np.float32)):
        with pytest.raises(clrun.InvalidArgument, match="not an OpenCL object"):
            clrun.Context.from_int_ptr(bad, bad)
        with pytest.raises(clrun.InvalidArgument, match="not an OpenCL object"):
            clrun.Context.from_int_ptr(ctx.int_ptr, bad)
        with pytest.raises(clrun.InvalidArgument, match="not an OpenCL object"):
            clrun.Buffer.from_int_ptr(ctx, bad, (4,))
    # the real handles still pass
    with clrun.Context.from_int_ptr(ctx.int_ptr, ctx.device_int_ptr, ctx.queue_int_ptr) as c2:
        assert c2.device.name == ctx.device.name
