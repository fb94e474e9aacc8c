"""complex64 and complex128 clrun.Arrays against NumPy on fresh data with hostile values (inf, NaN,
signed zeros, division by zero and by tiny and huge numbers): storage, views and their .real/.imag
parts, conversions, + - * / with Arrays and scalars of every kind, conj, abs, angle, comparisons for
equality, NaN tests, sum and mean; every other op refused in words, never computed componentwise."""
import warnings

import numpy as np
import pytest

import clrun


def cdata(rng, shape, dt=np.complex64, hostile=True):
    x = (rng.standard_normal(shape) * 10 + 1j * rng.standard_normal(shape) * 10).astype(dt)
    if hostile and x.size >= 8:
        f = x.reshape(-1)
        picks = rng.choice(f.size, 6, replace=False)
        f[picks] = np.array([complex(np.nan, 1), complex(1, np.inf), complex(-0.0, 0.0), 0, complex(1e30, -1e-30),
                             complex(-np.inf, np.nan)]).astype(dt)
    return x


def close(got, want, rtol):
    g = got.get() if isinstance(got, clrun.Array) else np.asarray(got)
    w = np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
    assert np.allclose(g, w, rtol=rtol, atol=0, equal_nan=True), (g, w)


@pytest.mark.parametrize("dt", (np.complex64, np.complex128))
def test_arithmetic(ctx, rng, dt):
    if dt == np.complex128 and not ctx.device.fp64:
        with pytest.raises(clrun.Unsupported, match="fp64"):
            ctx.asarray(np.ones(3, dt)) + 1
        return
    rt = 1e-5 if dt == np.complex64 else 1e-12
    x, y = cdata(rng, (7, 9), dt), cdata(rng, (7, 9), dt)
    a, b = ctx.asarray(x), ctx.asarray(y)
    assert a.dtype == dt and np.array_equal(a.get(), x, equal_nan=True)
    with np.errstate(all="ignore"):
        close(a + b, x + y, rt)
        close(a - b, x - y, rt)
        close(a * b, x * y, rt)
        close(a / b, x / y, rt)
        close(-a, -x, rt)
        close(a.conj(), np.conj(x), rt)
        close(np.conjugate(a), np.conjugate(x), rt)
        close(abs(a), np.abs(x), rt)
        close(clrun.angle(a), np.angle(x), rt)
        close(a * (2 - 3j), x * dt(2 - 3j), rt)
        close(1 / a, 1 / x, rt)
        close(a + 2.5, x + 2.5, rt)
        r = rng.standard_normal(9).astype(np.float32)
        close(a * ctx.asarray(r), x * r, rt)  # broadcast, a float32 row promoted
        close(ctx.asarray(r) - a, r - x, rt)
        z = ctx.asarray(np.array([1 + 1j, 0, 3e38 + 3e38j, 1e-30 + 1e-30j], dt))
        w = ctx.asarray(np.array([0, 0, 1e-30 + 2e-30j, 1e30 + 1e30j], dt))
        close(z / w, np.array([1 + 1j, 0, 3e38 + 3e38j, 1e-30 + 1e-30j], dt) / np.array([0, 0, 1e-30 + 2e-30j, 1e30 + 1e30j], dt),
              rt)
    assert np.array_equal((a == b).get(), x == y) and np.array_equal((a != a).get(), x != x)
    assert np.array_equal(clrun.isnan(a).get(), np.isnan(x)) and np.array_equal(clrun.isfinite(a).get(), np.isfinite(x))


def test_views_parts_and_conversions(ctx, rng):
    x = cdata(rng, (6, 8))
    a = ctx.asarray(x)
    assert np.array_equal(a.real.get(), x.real, equal_nan=True) and np.array_equal(a.imag.get(), x.imag, equal_nan=True)
    assert np.array_equal(a.T.real.get(), x.T.real, equal_nan=True) and np.array_equal(a[1::2, ::-3].imag.get(), x[1::2, ::-3].imag,
                                                                                            equal_nan=True)
    b, y = ctx.asarray(x), x.copy()
    b.real[2:4] = 7.5
    y.real[2:4] = 7.5
    b.imag = ctx.asarray(np.arange(8, dtype=np.float32))  # broadcast into the view
    y.imag = np.arange(8, dtype=np.float32)
    b[0, 0] = 3 - 4j
    y[0, 0] = 3 - 4j
    assert np.array_equal(b.get(), y, equal_nan=True)
    m = x.real > 0
    assert np.array_equal(a[ctx.asarray(m)].get(), x[m], equal_nan=True)
    assert np.array_equal(a[[0, 3]].get(), x[[0, 3]], equal_nan=True)
    assert np.array_equal(a.reshape(8, 6).get(), x.reshape(8, 6), equal_nan=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's ComplexWarning: the imaginary part is dropped
        for dt in (np.float32, np.float16, np.int32, np.bool_):
            got, want = a.astype(dt).get(), x.astype(dt)
            finite = np.isfinite(x.real) & (np.abs(x.real) < 1e9) if dt == np.int32 else np.ones(x.shape, bool)
            assert got.dtype == want.dtype and np.array_equal(got[finite], want[finite], equal_nan=True), dt
    r = rng.standard_normal((3, 4)).astype(np.float32)
    assert np.array_equal(ctx.asarray(r).astype(np.complex64).get(), r.astype(np.complex64))
    assert np.array_equal(ctx.asarray(r).real.get(), r) and not ctx.asarray(r).imag.get().any()
    with pytest.raises(TypeError):
        ctx.asarray(r)[0, 0] = 1j
    if ctx.device.fp64:
        assert np.array_equal(a.astype(np.complex128).get(), x.astype(np.complex128), equal_nan=True)


def test_sums_and_refusals(ctx, rng):
    x = cdata(rng, (5, 40), hostile=False)
    a = ctx.asarray(x)
    close(a.sum(), x.sum(), 1e-5)
    close(a.sum(axis=0), x.sum(axis=0), 1e-5)
    close(np.mean(a, axis=1, keepdims=True), np.mean(x, axis=1, keepdims=True), 1e-5)
    close(a.mean(), x.mean(), 1e-5)
    for bad in (lambda: a < a, lambda: a.max(), lambda: np.sqrt(a), lambda: a @ a.T, lambda: a.cumsum(), lambda: a.std(),
                lambda: np.sort(a), lambda: a.prod(), lambda: a.argmax(), lambda: a // a, lambda: a.sum(dtype=np.float32)):
        with pytest.raises(clrun.Unsupported):
            bad()
