"""clrun.sort, argsort, topk, Array.sort and np.sort/np.argsort on Arrays, against NumPy's stable sort
bit for bit: every key dtype, NaN of both signs, -0.0 and 0.0, infinities, ties; every axis, views,
empty and awkward lengths; and the refusals."""
import os

import numpy as np
import pytest

import clrun

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.float16, np.float32,
          np.float64]


def keys(rng, shape, dt):
    dt = np.dtype(dt)
    n = int(np.prod(shape))
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if rng.integers(2):
            return rng.integers(0, 5, n).astype(dt).reshape(shape)  # ties
        return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True).reshape(shape)
    x = (rng.standard_normal(n) * 100).astype(dt)
    special = np.array([np.nan, -np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0, 1.0], dt)
    pick = rng.integers(0, 3 * len(special), n)
    x[pick < len(special)] = special[pick[pick < len(special)]]
    bits = x.view(np.dtype(f"u{dt.itemsize}"))
    nan = np.isnan(x)
    bits[nan] ^= rng.integers(0, 8, nan.sum()).astype(bits.dtype)  # NaNs of several payloads
    return x.reshape(shape)


def desc_order(x, axis=-1):
    """NumPy's stable order, largest first: NaN before +inf, ties in their order."""
    nan = np.isnan(x)
    return np.lexsort((np.where(nan, 0, -x.astype(np.float64)), ~nan), axis=axis)


def same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dt", DTYPES)
def test_sort_equals_numpys_stable_sort_bit_for_bit(ctx, rng, dt):
    for shape in [(0,), (1,), (2,), (17,), (4097,), (3, 257), (5, 1), (2, 3, 31)]:
        x = keys(rng, shape, dt)
        a = ctx.asarray(x)
        same_bits(np.sort(a).get(), np.sort(x, kind="stable"))
        same_bits(clrun.sort(a, axis=None).get(), np.sort(x, axis=None, kind="stable"))
        assert np.array_equal(np.argsort(a).get(), np.argsort(x, kind="stable"))
        if x.ndim > 1:
            same_bits(np.sort(a, axis=0).get(), np.sort(x, axis=0, kind="stable"))
            assert np.array_equal(a.argsort(axis=0).get(), np.argsort(x, axis=0, kind="stable"))


def test_descending_keeps_ties_in_order_and_nan_first(ctx, rng):
    x = keys(rng, (6, 301), np.float32)
    order = desc_order(x)
    got = clrun.argsort(ctx.asarray(x), descending=True).get()
    assert np.array_equal(got, order)
    same_bits(clrun.sort(ctx.asarray(x), descending=True).get(), np.take_along_axis(x, order, -1))


def test_long_rows_and_many_rows(ctx, rng):
    for shape in [(100003,), (1 << 17,), (4099, 3), (300, 65)]:
        x = keys(rng, shape, np.float32)
        same_bits(np.sort(ctx.asarray(x)).get(), np.sort(x, kind="stable"))
    x = rng.integers(-(1 << 62), 1 << 62, 70001)
    assert np.array_equal(np.argsort(ctx.asarray(x)).get(), np.argsort(x, kind="stable"))


def test_array_sort_in_place_on_views(ctx, rng):
    x = keys(rng, (9, 12), np.float64)
    a = ctx.asarray(x)
    a.sort()
    want = x.copy()
    want.sort(kind="stable")
    same_bits(a.get(), want)
    b = ctx.asarray(x)
    v = b[1::2, ::-1]
    v.sort(axis=0)
    w = x.copy()
    wv = w[1::2, ::-1]
    wv.sort(axis=0, kind="stable")
    same_bits(b.get(), w)  # only the view's elements moved


def test_bfloat16_sorts_as_its_values(ctx, rng):
    f = np.array([3.5, -1.0, np.nan, -0.0, 0.0, 2.0, -np.inf, 1e30], np.float32)
    bits = (f.view(np.uint32) >> 16).astype(np.uint16)
    a = ctx.asarray(bits, bf16=True)
    got = clrun.sort(a).get()
    order = np.argsort(f, kind="stable")
    assert np.array_equal(got.view(np.uint16) if got.dtype != np.uint16 else got, bits[order])


def test_topk_as_torch(ctx, rng):
    x = keys(rng, (7, 50), np.float32)
    for largest in (True, False):
        v, i = clrun.topk(ctx.asarray(x), 5, largest=largest)
        order = (desc_order(x) if largest else np.argsort(x, axis=-1, kind="stable"))[:, :5]
        assert np.array_equal(i.get(), order)
        same_bits(v.get(), np.take_along_axis(x, order, -1))
    v, i = ctx.asarray(x).topk(3, axis=0)
    order = desc_order(x, axis=0)[:3]
    assert v.shape == (3, 50) and np.array_equal(i.get(), order)
    v, i = clrun.topk(ctx.asarray(x), 0)
    assert v.shape == (7, 0) and i.shape == (7, 0)


def test_refusals(ctx):
    a = ctx.asarray(np.arange(10, dtype=np.float32))
    with pytest.raises(clrun.InvalidArgument):
        clrun.topk(a, 11)
    with pytest.raises(clrun.InvalidArgument):
        clrun.topk(a, -1)
    with pytest.raises(np.exceptions.AxisError if hasattr(np, "exceptions") else np.AxisError):
        clrun.sort(ctx.zeros((), np.float32))
    with pytest.raises(np.exceptions.AxisError if hasattr(np, "exceptions") else np.AxisError):
        np.sort(a, axis=1)
    with pytest.raises(clrun.Unsupported):
        np.sort(a, order="x")
    with pytest.raises(ValueError):
        np.sort(a, kind="bogosort")
    with clrun.open(None if not hasattr(ctx, "_spec") else ctx._spec) as other:
        b = other.asarray(np.arange(3, dtype=np.int32))
    with pytest.raises(clrun.InvalidArgument):
        clrun.sort(b)  # its context is closed


def _cli(*args):
    import os
    import subprocess
    exe = os.environ.get("CLRUN_EXE")
    if not exe:
        pytest.skip("CLRUN_EXE (the clrun command of the build) is not set")
    return subprocess.run([exe, *map(str, args)], capture_output=True, text=True)


def test_cli_sort_argsort_topk_bincount(ctx, rng, tmp_path):
    dev = ["-d", os.environ["CLRUN_TEST_DEVICE"]] if os.environ.get("CLRUN_TEST_DEVICE") else []
    x = keys(rng, (5, 301), np.float32)
    np.save(tmp_path / "x.npy", x)
    assert _cli("op", "sort", tmp_path / "x.npy", "-o", tmp_path / "s.npy", *dev).returncode == 0
    same_bits(np.load(tmp_path / "s.npy"), np.sort(x, kind="stable"))
    assert _cli("op", "argsort", tmp_path / "x.npy", "-o", tmp_path / "a.npy", "--descending", *dev).returncode == 0
    assert np.array_equal(np.load(tmp_path / "a.npy"), desc_order(x))
    r = _cli("op", "topk", tmp_path / "x.npy", "--k", 4, "-o", tmp_path / "v.npy", "--indices", tmp_path / "i.npy", *dev)
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(tmp_path / "i.npy"), desc_order(x)[:, :4])
    assert _cli("op", "topk", tmp_path / "x.npy", "--k", 302, "-o", tmp_path / "v.npy", *dev).returncode == 2
    k = rng.integers(0, 40, 1000).astype(np.int16)
    w = rng.standard_normal(1000)
    np.save(tmp_path / "k.npy", k)
    np.save(tmp_path / "w.npy", w)
    r = _cli("op", "bincount", tmp_path / "k.npy", "-o", tmp_path / "b.npy", "--minlength", 50, *dev)
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(tmp_path / "b.npy"), np.bincount(k, minlength=50))
    if ctx.device.fp64:
        assert _cli("op", "bincount", tmp_path / "k.npy", "-o", tmp_path / "bw.npy", "--weights", tmp_path / "w.npy", *dev).returncode == 0
        assert np.load(tmp_path / "bw.npy").tobytes() == np.bincount(k, w).tobytes()
    np.save(tmp_path / "neg.npy", np.array([3, -1], np.int32))
    assert _cli("op", "bincount", tmp_path / "neg.npy", "-o", tmp_path / "b.npy", *dev).returncode == 2
