"""clrun.Array, the kernel generators and streams, against NumPy on fresh random data."""
import os

import numpy as np
import pytest

import clrun

SIZES = [1, 7, 255, 1001, 4099]


def f32(rng, shape):
    return rng.standard_normal(shape).astype(np.float32)


def transfers(ctx):
    """(uploads, downloads) recorded since profile_start."""
    rec = {k: n for k, n, *_ in ctx.profile()}
    return rec.get("clrun_upload", 0), rec.get("clrun_download", 0)


# ---- creation and transfers -------------------------------------------------------------------------------


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int8, np.uint8, np.int32, np.int64, np.float64, np.bool_, np.uint16])
def test_round_trip_every_dtype(ctx, rng, dt):
    if dt == np.float64 and not ctx.device.fp64:
        pytest.skip("the device has no fp64")
    x = (rng.standard_normal((3, 5, 7)) * 50).astype(dt)
    a = ctx.asarray(x)
    assert isinstance(a, clrun.Array) and a.shape == x.shape and a.dtype == x.dtype and a.ndim == 3 and len(a) == 3
    assert np.array_equal(a.get(), x)
    assert np.array_equal(np.asarray(a), x)  # NumPy reads it
    assert np.array_equal(a.copy().get(), x)


def test_empty_zeros_full_and_set(ctx, rng):
    z = ctx.zeros((4, 3), np.int32)
    assert np.array_equal(z.get(), np.zeros((4, 3), np.int32))
    f = ctx.full(10, 2.5)
    assert np.array_equal(f.get(), np.full(10, 2.5, np.float32))
    e = ctx.empty((2, 2), np.float16)
    x = rng.standard_normal((2, 2)).astype(np.float16)
    e.set(x)
    assert np.array_equal(e.get(), x)
    with pytest.raises(clrun.InvalidArgument):
        e.set(np.zeros((3, 2), np.float16))
    with pytest.raises(clrun.Unsupported):
        ctx.empty(3, np.dtype("U4"))  # strings: no such Array
    assert ctx.zeros(3, np.complex64).get().dtype == np.complex64
    assert ctx.empty((0, 5)).get().shape == (0, 5)


def test_views_share_memory(ctx, rng):
    x = f32(rng, (6, 50))
    a = ctx.asarray(x)
    assert np.array_equal(a[2].get(), x[2])
    assert np.array_equal(a[1:4].get(), x[1:4])
    assert np.array_equal(a[3, 7:33].get(), x[3, 7:33])
    assert np.array_equal(a[-1, -5:].get(), x[-1, -5:])
    assert a[2, 3].shape == () and float(a[2, 3]) == float(x[2, 3])
    assert np.array_equal(a.reshape(-1, 25).get(), x.reshape(-1, 25))
    v = a[2, 11:40]
    v += 1.0  # in place on the view writes the parent's memory
    x[2, 11:40] += np.float32(1.0)
    assert np.array_equal(a.get(), x)
    a[0, :5] = 7.0
    x[0, :5] = 7.0
    a[1] = ctx.asarray(x[5])
    x[1] = x[5]
    assert np.array_equal(a.get(), x)
    w = a[4, 3:]  # a view of a view
    assert np.array_equal(w[2:9].get(), x[4, 5:12])
    for key in ((slice(None), 3), slice(None, None, 2), [0, 1], (Ellipsis, 1)):  # strided views and gathers
        assert np.array_equal(a[key].get(), x[key])
    with pytest.raises(IndexError):
        a[6]


# ---- element-wise -------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", SIZES)
def test_float_ops_exact(ctx, rng, n):
    for dt in (np.float32, np.float16):
        x, y, w = (rng.standard_normal(n) * 4).astype(dt), (rng.standard_normal(n) + 3).astype(dt), rng.standard_normal(n).astype(dt)
        a, b, c = ctx.asarray(x), ctx.asarray(y), ctx.asarray(w)
        with np.errstate(all="ignore"):
            for got, want in ((a + b, x + y), (a - b, x - y), (a * b, x * y), (a / b, x / y), (-a, -x), (a + 1.5, x + dt(1.5)),
                              (2.0 - a, dt(2.0) - x), (a * 3, x * dt(3)), (a / 3, x / dt(3)), (3 / b, dt(3) / y),
                              (clrun.fma(ctx, a, b, c), (x.astype(np.float64) * y + w).astype(dt)),
                              (a < b, x < y), (a >= 0.5, x >= dt(0.5)), (a == a, x == x), (a != b, x != y)):
                assert got.dtype == want.dtype and got.shape == want.shape
                assert np.array_equal(got.get(), want), (dt, n)
        a2 = ctx.asarray(x)
        a2 *= b
        a2 -= 1.0
        assert np.array_equal(a2.get(), x * y - dt(1.0))


@pytest.mark.parametrize("dt", [np.int8, np.int32, np.uint8, np.int64])
def test_integer_ops(ctx, rng, dt):
    info = np.iinfo(dt)
    n = int(rng.integers(1, 3000))
    x = rng.integers(max(info.min, -10**6), min(info.max, 10**6), n, dtype=dt, endpoint=True)
    y = rng.integers(max(info.min, -10**6), min(info.max, 10**6), n, dtype=dt, endpoint=True)
    a, b = ctx.asarray(x), ctx.asarray(y)
    with np.errstate(all="ignore"):
        assert np.array_equal((a + b).get(), x + y)  # wraps as NumPy
        assert np.array_equal((a - b).get(), x - y)
        assert np.array_equal((a * b).get(), x * y)
        assert np.array_equal((a + 3).get(), x + dt(3))
        assert np.array_equal((a > b).get(), x > y)
    assert a.sum() == x.sum() and a.max() == x.max() and a.min() == x.min()
    b_nz = ctx.asarray(np.where(y == 0, 1, y).astype(dt))
    with np.errstate(all="ignore"):
        assert np.array_equal((a / b_nz).get(), x / np.where(y == 0, 1, y).astype(dt))  # true division: float64, as NumPy
        assert (a / b_nz).dtype == np.float64
        assert np.array_equal((a + 1.5).get(), x + 1.5) and (a + 1.5).dtype == np.float64  # NEP 50: a Python float promotes


def test_astype(ctx, rng):
    x = (rng.standard_normal(777) * 300).astype(np.float32)
    x[:4] = [np.inf, -np.inf, 70000.0, 1e-8]
    a = ctx.asarray(x)
    with np.errstate(all="ignore"):
        assert np.array_equal(a.astype(np.float16).get(), x.astype(np.float16))
        assert np.array_equal(a.astype(np.float16).astype(np.float32).get(), x.astype(np.float16).astype(np.float32))
    bf = a.astype("bfloat16")
    assert bf.bf16 and bf.dtype == np.uint16
    u = x.view(np.uint32)
    want = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)  # round to nearest even
    assert np.array_equal(bf.get(), want)
    assert np.array_equal(bf.astype(np.float32).get(), (want.astype(np.uint32) << 16).view(np.float32))
    y = x[4:]  # finite, in range
    assert np.array_equal(ctx.asarray(y).astype(np.int32).get(), y.astype(np.int32))
    small = np.clip(rng.standard_normal(99) * 50, -128.9, 127.9).astype(np.float32)
    assert np.array_equal(ctx.asarray(small).astype(np.int8).get(), small.astype(np.int8))
    big = np.array([1000.0, -1000.0, np.nan], np.float32)
    assert np.array_equal(ctx.asarray(big).astype(np.int8).get(), [127, -128, 0])  # saturated, documented
    i = rng.integers(-2**31, 2**31, 500, dtype=np.int64)
    assert np.array_equal(ctx.asarray(i).astype(np.int32).get(), i.astype(np.int32))  # wraps as NumPy
    assert np.array_equal(ctx.asarray(i).astype(np.float32).get(), i.astype(np.float32))
    assert np.array_equal(ctx.asarray(small).astype(np.bool_).get(), small.astype(np.bool_))


def test_errors_name_what_is_missing(ctx, rng):
    a, b = ctx.asarray(f32(rng, (4, 5))), ctx.asarray(f32(rng, 5))
    with pytest.raises(ValueError, match="broadcast"):
        a + ctx.asarray(f32(rng, 4))
    with pytest.raises(TypeError, match="same_kind"):
        ai = ctx.asarray(np.ones(5, np.int32))
        ai += b
    with pytest.raises(clrun.InvalidArgument, match="asarray"):
        a + np.ones((4, 5), np.float32)
    with pytest.raises(clrun.Unsupported, match="bf16"):
        a.astype("bf16") + a.astype("bf16")
    with pytest.raises(clrun.Unsupported, match="host"):
        list(a)
    with pytest.raises(clrun.Unsupported):
        a @ b
    with clrun.open(os.environ.get("CLRUN_TEST_DEVICE") or None) as other:
        with pytest.raises(clrun.InvalidArgument, match="different contexts"):
            a + other.asarray(np.zeros((4, 5), np.float32))


# ---- reductions and matmul ----------------------------------------------------------------------------


@pytest.mark.parametrize("n", SIZES)
def test_reductions(ctx, rng, n):
    x, y = f32(rng, n), f32(rng, n)
    a, b = ctx.asarray(x), ctx.asarray(y)
    mag = np.abs(x.astype(np.float64)).sum()
    assert abs(a.sum() - x.astype(np.float64).sum()) <= 1e-6 * mag + 1e-30
    assert a.max() == x.max() and a.min() == x.min() and a.argmax() == x.argmax()
    assert abs(a.dot(b) - x.astype(np.float64) @ y) <= 1e-6 * np.abs(x.astype(np.float64) * y).sum() + 1e-30
    assert abs(a.norm() - np.linalg.norm(x.astype(np.float64))) <= 1e-6 * np.linalg.norm(x.astype(np.float64))
    h = ctx.asarray(x.astype(np.float16))
    assert h.max() == x.astype(np.float16).max() and h.argmax() == x.astype(np.float16).argmax()


def test_matmul(ctx, rng):
    m, k, n = (int(v) for v in rng.integers(1, 90, 3))
    x, y = f32(rng, (m, k)), f32(rng, (k, n))
    ref = x.astype(np.float64) @ y
    c = ctx.asarray(x) @ ctx.asarray(y)
    assert c.dtype == np.float32 and c.shape == (m, n)
    assert np.abs(c.get() - ref).max() <= 1e-5 * (np.abs(x).astype(np.float64) @ np.abs(y)).max() + 1e-30
    xh, yh = x.astype(np.float16), y.astype(np.float16)
    ch = ctx.asarray(xh) @ ctx.asarray(yh)
    assert ch.dtype == np.float32
    assert np.allclose(ch.get(), xh.astype(np.float64) @ yh.astype(np.float64), rtol=1e-4, atol=1e-4)
    bx, by = ctx.asarray(x).astype("bf16"), ctx.asarray(y).astype("bf16")
    f = lambda u: (u.astype(np.uint32) << 16).view(np.float32).astype(np.float64)  # noqa: E731
    assert np.allclose((bx @ by).get(), f(bx.get()) @ f(by.get()), rtol=1e-4, atol=1e-4)
    q, r = rng.integers(-128, 128, (m, k), dtype=np.int8), rng.integers(-128, 128, (k, n), dtype=np.int8)
    ci = ctx.asarray(q) @ ctx.asarray(r)
    assert ci.dtype == np.int32 and np.array_equal(ci.get(), q.astype(np.int32) @ r.astype(np.int32))
    bt = f32(rng, (3, m, k)), f32(rng, (3, k, n))
    cb = ctx.asarray(bt[0]) @ ctx.asarray(bt[1])
    assert cb.shape == (3, m, n) and np.allclose(cb.get(), bt[0] @ bt[1], rtol=1e-4, atol=1e-4)
    big = ctx.asarray(f32(rng, (4, m, k)))  # a view's offset reaches the GEMM
    assert np.allclose((big[2] @ ctx.asarray(y)).get(), big.get()[2] @ y, rtol=1e-4, atol=1e-4)


def test_canny_on_the_device(ctx, rng):
    img = (rng.random((61, 83)) * 255).astype(np.uint8)
    a = ctx.asarray(img)
    e = a.canny(50, 100)
    assert isinstance(e, clrun.Array) and e.dtype == np.uint8
    assert np.array_equal(e.get(), clrun.canny(ctx, img, 50, 100))


# ---- chains stay on the device --------------------------------------------------------------------------


def test_chains_never_touch_the_host(ctx, rng):
    n = int(rng.integers(1000, 100000))
    x, y, w = f32(rng, n), f32(rng, n), f32(rng, n)
    a, b, c = ctx.asarray(x), ctx.asarray(y), ctx.asarray(w)
    ctx.profile_start()
    try:
        d = (a * b + c) * 0.5 - a
        e = d.astype(np.float16).astype(np.float32)
        s = e.sum()
        ups, downs = transfers(ctx)
    finally:
        ctx.profile_stop()
    assert ups == 0 and downs <= 1  # the sum's result only
    want = ((x * y + w) * np.float32(0.5) - x).astype(np.float16).astype(np.float32)
    assert abs(s - want.astype(np.float64).sum()) <= 1e-6 * np.abs(want.astype(np.float64)).sum()


# ---- generators ---------------------------------------------------------------------------------------


def test_elementwise_generator(ctx, rng):
    n = int(rng.integers(1, 5000))
    x, y = f32(rng, n), f32(rng, n)
    lin = clrun.elementwise("float *z, const float *x, const float *y, float a, int k", "z[i] = a * x[i] + y[i] + (float)k",
                            name="lin")
    a, b, z = ctx.asarray(x), ctx.asarray(y), ctx.empty(n)
    lin(z, a, b, 2.0, 3)
    assert np.allclose(z.get(), np.float32(2) * x + y + 3, rtol=1e-6, atol=1e-6)
    lin(z[1:], a[:-1], b[1:], 1.0, 0)  # views: their offsets are passed
    assert np.allclose(z.get()[1:], x[:-1] + y[1:], rtol=1e-6, atol=1e-6)
    half = clrun.elementwise("half *h, float *out", "out[i] = 2.0f * vload_half(i, h)", name="twice_half")
    hx = x.astype(np.float16)
    out = ctx.empty(n)
    half(ctx.asarray(hx), out)
    assert np.array_equal(out.get(), 2 * hx.astype(np.float32))
    with pytest.raises(clrun.ArgMismatch):
        lin(z, a, b, 2.0)
    with pytest.raises(clrun.ArgMismatch, match="float64|float32"):
        lin(z, ctx.asarray(x.astype(np.float16)), b, 1.0, 0)
    with pytest.raises(clrun.InvalidArgument, match="range"):
        lin(z, a, b, 1.0, 2**40)
    with pytest.raises(clrun.InvalidArgument):
        clrun.elementwise("float *z, matrix m", "z[i] = 0")
    bad = clrun.elementwise("float *z", "z[i] = undefined_thing", name="bad")
    with pytest.raises(clrun.BuildFailed, match="undefined_thing"):
        bad(z)


def test_reduction_generator(ctx, rng):
    n = int(rng.integers(1, 70000))
    x, y = f32(rng, n), f32(rng, n)
    dot = clrun.reduction(np.float32, "0", "a + b", "x[i] * y[i]", "const float *x, const float *y", name="mydot")
    r = dot(ctx.asarray(x), ctx.asarray(y))
    assert isinstance(r, clrun.Array) and r.shape == ()
    ref = x.astype(np.float64) @ y
    assert abs(float(r) - ref) <= 1e-5 * np.abs(x.astype(np.float64) * y).sum() + 1e-30
    assert float(dot(ctx.asarray(x), ctx.asarray(y))) == float(r)  # deterministic
    i = rng.integers(-1000, 1000, n, dtype=np.int32)
    mx = clrun.reduction(np.int32, "INT_MIN", "max(a, b)", "abs(x[i])", "const int *x", name="maxabs")
    assert int(mx(ctx.asarray(i))) == np.abs(i).max()
    cnt = clrun.reduction(np.int64, "0", "a + b", "x[i] > t ? 1 : 0", "const float *x, float t", name="count_over")
    assert int(cnt(ctx.asarray(x), 0.5)) == int((x > np.float32(0.5)).sum())
    with pytest.raises(clrun.Unsupported):
        clrun.reduction(np.float16, "0", "a + b", "x[i]", "const half *x")


# ---- streams ------------------------------------------------------------------------------------------


def test_streams(ctx, rng):
    n = 1 << 16
    x, y = f32(rng, n), f32(rng, n)
    s1, s2 = ctx.stream(), ctx.stream()
    a = ctx.asarray(x, stream=s1)
    b = ctx.asarray(y, stream=s1)
    with s1:
        c = a * b
    done = s1.record()
    s2.wait_event(done)  # s2's work starts after s1's
    with s2:
        d = c + a
        out = d.get(stream=s2)  # returns at once
    s2.synchronize()
    assert np.array_equal(out, x * y + x)
    ctx.synchronize()
    s1.close()
    s2.close()
    with pytest.raises(clrun.InvalidArgument):
        s1.synchronize()


def test_raw_kernels_take_arrays(ctx, rng):
    x = f32(rng, 256)
    prog = ctx.program(source="__kernel void twice(__global float *x) { x[get_global_id(0)] *= 2.0f; }")
    a = ctx.asarray(x)
    prog.twice(a, global_size=256)
    assert np.array_equal(a.get(), 2 * x)
    align = ctx.device.mem_base_align
    if align % 4 == 0 and align // 4 < 256:
        v = a[align // 4:]  # an aligned view: a sub-buffer of its own
        prog.twice(v, global_size=v.size)
        assert np.array_equal(a.get()[align // 4:], 4 * x[align // 4:])
    with pytest.raises(clrun.InvalidArgument, match="mem_base_align"):
        prog.twice(a[1:], global_size=255)


def test_no_pooled_memory_while_streams_live():
    """The memory pool never hands one stream memory another may still use (see _array._Pool)."""
    with clrun.open(os.environ.get("CLRUN_TEST_DEVICE") or None) as c:
        x = c.empty(1000)
        del x
        assert c._pool.held == 4000  # kept for the next Array of that size
        s = c.stream()
        assert c._pool.held == 0  # emptied when a stream is made
        with s:
            y = c.zeros(1000) + 1.0
        del y
        assert c._pool.held == 0  # and given back to the driver while one lives
        s.close()
        z = c.empty(1000)
        del z
        assert c._pool.held == 4000


def test_empty_views_at_their_buffers_end(ctx):
    """An empty view whose offset is its buffer's end: every op gives an empty result, no span error."""
    for dt in (np.float32, np.float16):
        a = ctx.asarray(np.zeros((2, 0), dt))
        v = a[1]
        for r in (v * 28, v + v, v - v, v * v, -v, v / 2, abs(v), v.sum(), v.copy()):
            assert np.asarray(r.get() if isinstance(r, clrun.Array) else r).size in (0, 1)
