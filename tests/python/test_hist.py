"""clrun.bincount / np.bincount and clrun.histogram / np.histogram on Arrays against NumPy's own, bit for
bit: every integer key type, weights of several types, minlength, empty input; histogram of float32,
float64 and integer data with and without range=, weights (NumPy's blocks of 65,536), values on the
edges, outside the range and NaN, density; and the refusals NumPy makes."""
import numpy as np
import pytest

import clrun


@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64])
def test_bincount_equals_numpys(ctx, rng, dt):
    hi = 2 if dt == np.bool_ else 120
    for n in (0, 1, 7, 4099, 70001):
        x = rng.integers(0, hi, n).astype(dt)
        a = ctx.asarray(x)
        assert np.array_equal(np.bincount(a).get(), np.bincount(x))
        assert np.array_equal(clrun.bincount(a, minlength=300).get(), np.bincount(x, minlength=300))
        for wt in (np.float32, np.float64, np.int32):
            w = (rng.standard_normal(n) * 100).astype(wt)
            got, want = np.bincount(a, ctx.asarray(w)).get(), np.bincount(x, w)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_bincount_many_bins_and_refusals(ctx, rng):
    x = rng.integers(0, 50000, 200001)
    assert np.array_equal(np.bincount(ctx.asarray(x)).get(), np.bincount(x))
    with pytest.raises(ValueError):
        np.bincount(ctx.asarray(np.array([1, -1, 3])))
    with pytest.raises(ValueError):
        np.bincount(ctx.asarray(np.array([1, 2])), minlength=-1)
    with pytest.raises(ValueError):
        np.bincount(ctx.asarray(np.array([1, 2])), ctx.asarray(np.ones(3)))
    with pytest.raises(TypeError):
        np.bincount(ctx.asarray(np.array([1.0, 2.0])))
    with pytest.raises(ValueError):
        np.bincount(ctx.asarray(np.ones((2, 2), np.int32)))


def _data(rng, dt, n):
    if np.dtype(dt).kind == "f":
        x = (rng.standard_normal(n) * 2).astype(dt)
        x[rng.integers(0, n, n // 50)] = np.nan if n > 100 else x[0]
        return x
    return rng.integers(-100, 100, n).astype(dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.int64, np.uint8])
def test_histogram_equals_numpys(ctx, rng, dt):
    if dt == np.float64 and not ctx.device.fp64:
        pytest.skip("the device has no fp64 (float64 Arrays have no min or max there)")
    for n in (1, 1000, 70001):
        x = _data(rng, dt, n)
        ranges = [(-1.0, 2.5), (0, 7)] + ([] if np.dtype(dt).kind == "f" and np.isnan(x).any() else [None])
        for rg in ranges:
            for bins in (1, 10, 333):
                edges_probe = np.histogram_bin_edges(x, bins, rg) if rg is not None or not np.isnan(x).any() else None
                if edges_probe is not None and n > 10:  # some values exactly on the edges
                    x[: min(n // 10, bins + 1)] = edges_probe[: min(n // 10, bins + 1)].astype(dt)
                got, ge = np.histogram(ctx.asarray(x), bins=bins, range=rg)
                want, we = np.histogram(x, bins=bins, range=rg)
                assert got.get().tobytes() == want.tobytes() and ge.get().tobytes() == we.tobytes(), (dt, n, rg, bins)
                w = rng.random(n).astype(np.float32)
                got, _ = np.histogram(ctx.asarray(x), bins=bins, range=rg, weights=ctx.asarray(w))
                want, _ = np.histogram(x, bins=bins, range=rg, weights=w)
                assert got.dtype == want.dtype and got.get().tobytes() == want.tobytes(), (dt, n, rg, bins, "weighted")


def test_histogram_density_empty_and_refusals(ctx, rng):
    x = rng.standard_normal(5000).astype(np.float64 if ctx.device.fp64 else np.float32)
    got, _ = np.histogram(ctx.asarray(x), bins=12, density=True)
    want, _ = np.histogram(x, bins=12, density=True)
    np.testing.assert_allclose(got.get(), want, rtol=1e-15)
    got, e = clrun.histogram(ctx.asarray(np.zeros(0, np.float32)), bins=4)
    want, we = np.histogram(np.zeros(0, np.float32), bins=4)
    assert np.array_equal(got.get(), want) and np.array_equal(e.get(), we)
    got, _ = np.histogram(ctx.asarray(x), bins=[-1, 0, 0.5, 3])  # edges as an array: NumPy's own, on a host copy
    assert np.array_equal(got.get(), np.histogram(x, bins=[-1, 0, 0.5, 3])[0])
    with pytest.raises(ValueError):
        np.histogram(ctx.asarray(x), bins=0)
    with pytest.raises(ValueError):
        np.histogram(ctx.asarray(x), bins=3, range=(2, 1))
    with pytest.raises(ValueError):
        np.histogram(ctx.asarray(np.array([1.0, np.inf], np.float32)), bins=3)
