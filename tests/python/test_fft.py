"""clrun.fft against numpy.fft on fresh random data: every function, lengths that are powers of two,
primes and awkward products, chosen axes, n/s cutting and padding, every norm, single and double
precision, Arrays and NumPy input; bad arguments refused as NumPy refuses them."""
import os

import numpy as np
import pytest

import clrun
import clrun.fft as cf

if not clrun._lib.fft_available():
    pytest.skip("this libclrun was built without VkFFT", allow_module_level=True)


def err(got, want):
    return np.linalg.norm(np.asarray(got, np.complex128) - want) / max(np.linalg.norm(want), 1e-300)


def tol(n, single=True):
    return (2e-6 if single else 1e-13) * (np.log2(max(n, 2)) + 1)


def cdata(rng, shape, dt=np.complex64):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)


@pytest.mark.parametrize("n", (1, 2, 7, 16, 31, 100, 257, 1000))
def test_fft_ifft_lengths(ctx, rng, n):
    x = cdata(rng, (3, n))
    for norm in (None, "ortho", "forward"):
        got = cf.fft(x, norm=norm, ctx=ctx)
        assert got.dtype == np.complex64 and got.shape == x.shape
        assert err(got, np.fft.fft(x.astype(np.complex128), norm=norm)) <= tol(n)
        assert err(cf.ifft(got, norm=norm, ctx=ctx), x) <= 2 * tol(n)


def test_n_cuts_and_pads_along_an_axis(ctx, rng):
    x = cdata(rng, (12, 5, 6))
    for n, axis in ((7, 0), (3, 1), (6, -1), (20, 0)):
        assert err(cf.fft(x, n=n, axis=axis, ctx=ctx), np.fft.fft(x, n=n, axis=axis)) <= tol(n)
        assert err(cf.ifft(x, n=n, axis=axis, ctx=ctx), np.fft.ifft(x, n=n, axis=axis)) <= tol(n)


def test_real_transforms(ctx, rng):
    r = rng.standard_normal((4, 6, 10)).astype(np.float32)
    for norm in (None, "ortho", "forward"):
        X = cf.rfft(r, norm=norm, ctx=ctx)
        assert X.dtype == np.complex64 and X.shape == (4, 6, 6)
        assert err(X, np.fft.rfft(r, norm=norm)) <= tol(10)
        back = cf.irfft(X, n=10, norm=norm, ctx=ctx)
        assert back.dtype == np.float32 and err(back, r) <= 2 * tol(10)
    assert err(cf.rfft(r, n=7, axis=1, ctx=ctx), np.fft.rfft(r, n=7, axis=1)) <= tol(7)
    X = np.fft.rfft(r[..., :9]).astype(np.complex64)  # odd length: n says it
    assert err(cf.irfft(X, n=9, ctx=ctx), r[..., :9]) <= tol(9)
    assert err(cf.irfft(X, ctx=ctx), np.fft.irfft(X)) <= tol(8)  # default n = 2(m - 1)
    assert err(cf.rfft(np.array([2.5], np.float32), ctx=ctx), np.fft.rfft([2.5])) == 0


def test_nd_and_axes(ctx, rng):
    y = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    c = cdata(rng, (2, 3, 4, 5))
    assert err(cf.fftn(c, ctx=ctx), np.fft.fftn(c)) <= tol(120)  # four axes: two plans
    assert err(cf.ifftn(c, axes=(0, 2), ctx=ctx), np.fft.ifftn(c, axes=(0, 2))) <= tol(8)
    assert err(cf.fft2(c, ctx=ctx), np.fft.fft2(c)) <= tol(20)
    assert err(cf.ifft2(c, s=(3, 7), ctx=ctx), np.fft.ifft2(c, s=(3, 7))) <= tol(21)
    assert err(cf.rfftn(y, ctx=ctx), np.fft.rfftn(y)) <= tol(120)
    assert err(cf.rfft2(y, axes=(0, 2), ctx=ctx), np.fft.rfft2(y, axes=(0, 2))) <= tol(8)
    X = np.fft.rfftn(y).astype(np.complex64)
    assert err(cf.irfftn(X, s=y.shape, ctx=ctx), y) <= tol(120)
    X2 = np.fft.rfft2(y).astype(np.complex64)
    assert err(cf.irfft2(X2, s=(4, 5), ctx=ctx), y) <= tol(20)


def test_double_precision_and_integers(ctx, rng):
    if not ctx.device.fp64:
        with pytest.raises(clrun.Unsupported, match="fp64"):
            cf.fft(np.ones(8))
        return
    d = rng.standard_normal((2, 97))
    got = cf.fft(d, ctx=ctx)
    assert got.dtype == np.complex128 and err(got, np.fft.fft(d)) <= tol(97, False)
    i = rng.integers(-50, 50, 64)
    assert err(cf.rfft(i, ctx=ctx), np.fft.rfft(i)) <= tol(64, False)
    assert cf.irfft(np.fft.rfft(d), n=97, ctx=ctx).dtype == np.float64


def test_arrays_and_helpers(ctx, rng):
    r = rng.standard_normal((5, 16)).astype(np.float32)
    a = ctx.asarray(r)
    assert err(cf.rfft(a), np.fft.rfft(r)) <= tol(16)
    assert err(cf.fft(a[:, ::2]), np.fft.fft(r[:, ::2])) <= tol(8)  # a strided view
    assert cf.fft(np.zeros((0, 4), np.complex64), ctx=ctx).shape == (0, 4)
    assert np.array_equal(cf.fftfreq(7, 0.5), np.fft.fftfreq(7, 0.5)) and np.array_equal(cf.rfftfreq(8), np.fft.rfftfreq(8))
    assert np.array_equal(cf.fftshift(np.arange(6)), np.fft.fftshift(np.arange(6)))
    assert np.array_equal(cf.ifftshift(np.arange(6)), np.fft.ifftshift(np.arange(6)))


def test_refusals(ctx, rng):
    x = cdata(rng, (3, 8))
    with pytest.raises(ValueError, match="Invalid number"):
        cf.fft(np.zeros(0, np.complex64), ctx=ctx)
    with pytest.raises(ValueError, match="Invalid number"):
        cf.fft(x, n=0, ctx=ctx)
    with pytest.raises(ValueError, match="norm"):
        cf.fft(x, norm="both", ctx=ctx)
    with pytest.raises(getattr(getattr(np, "exceptions", np), "AxisError")):
        cf.fft(x, axis=2, ctx=ctx)
    with pytest.raises(getattr(getattr(np, "exceptions", np), "AxisError")):
        cf.irfft(x, axis=-3, ctx=ctx)
    with pytest.raises(TypeError, match="real input"):
        cf.rfft(x, ctx=ctx)
    with pytest.raises(ValueError, match="different lengths"):
        cf.fftn(x, s=(3,), axes=(0, 1), ctx=ctx)
    with pytest.raises(ValueError, match="repeated"):
        cf.fftn(x, axes=(1, 1), ctx=ctx)
    with pytest.raises(TypeError):
        cf.fft(np.array(["a", "b"]), ctx=ctx)
    other = clrun.open(os.environ.get("CLRUN_TEST_DEVICE") or None)
    try:
        with pytest.raises(clrun.InvalidArgument, match="another context"):
            cf.fft(ctx.asarray(np.ones(4, np.float32)), ctx=other)
    finally:
        other.close()


def test_cli_fft_and_fftconvolve(ctx, rng, tmp_path):
    import subprocess
    exe = os.environ.get("CLRUN_EXE")
    if not exe:
        pytest.skip("CLRUN_EXE is not set")

    def run(*args):
        dev = ["-d", os.environ["CLRUN_TEST_DEVICE"]] if os.environ.get("CLRUN_TEST_DEVICE") else []
        return subprocess.run([exe, "op", *args, *dev], capture_output=True, text=True)

    x = cdata(rng, (3, 5, 8))
    np.save(tmp_path / "x.npy", x)
    assert run("fft", str(tmp_path / "x.npy"), "-o", str(tmp_path / "y.npy"), "--axes", "0,2").returncode == 0
    assert err(np.load(tmp_path / "y.npy"), np.fft.fftn(x, axes=(0, 2))) <= tol(24)
    r = rng.standard_normal((4, 9)).astype(np.float32)
    np.save(tmp_path / "r.npy", r)
    assert run("fft", str(tmp_path / "r.npy"), "-o", str(tmp_path / "R.npy"), "--real", "--norm", "ortho").returncode == 0
    R = np.load(tmp_path / "R.npy")
    assert R.dtype == np.complex64 and err(R, np.fft.rfft(r, norm="ortho")) <= tol(9)
    assert run("fft", str(tmp_path / "R.npy"), "-o", str(tmp_path / "b.npy"), "--real", "--inverse", "-n", "9", "--norm",
               "ortho").returncode == 0
    assert err(np.load(tmp_path / "b.npy"), r) <= tol(9)
    bad = run("fft", str(tmp_path / "r.npy"), "-o", str(tmp_path / "no.npy"), "--real", "--inverse")
    assert bad.returncode == 2 and "complex spectrum" in bad.stderr and not (tmp_path / "no.npy").exists()
    a, b = rng.standard_normal((20, 13)).astype(np.float32), rng.standard_normal((5, 4)).astype(np.float32)
    np.save(tmp_path / "a.npy", a), np.save(tmp_path / "k.npy", b)
    full = np.zeros((24, 16))
    for i in range(5):
        for j in range(4):
            full[i:i + 20, j:j + 13] += float(b[i, j]) * a
    for mode, want in (("full", full), ("same", full[2:22, 1:14]), ("valid", full[4:20, 3:13])):
        p = run("fftconvolve", str(tmp_path / "a.npy"), str(tmp_path / "k.npy"), "-o", str(tmp_path / "c.npy"), "--mode", mode)
        assert p.returncode == 0, p.stderr
        got = np.load(tmp_path / "c.npy")
        assert got.shape == want.shape and got.dtype == np.float32 and err(got, want) <= 1e-5


def test_arrays_stay_on_the_device(ctx, rng):
    c = cdata(rng, (3, 6, 10))
    a = ctx.asarray(c)
    for fn, want in ((cf.fft, np.fft.fft(c)), (cf.ifft, np.fft.ifft(c))):
        got = fn(a)
        assert isinstance(got, clrun.Array) and got.dtype == np.complex64 and err(got.get(), want) <= tol(10)
    got = cf.fftn(a, s=(4, 7), axes=(0, 2))  # cut and padded on the device
    assert isinstance(got, clrun.Array) and err(got.get(), np.fft.fftn(c, s=(4, 7), axes=(0, 2))) <= tol(28)
    r = rng.standard_normal((5, 12)).astype(np.float32)
    R = cf.rfft(ctx.asarray(r), norm="ortho")
    assert isinstance(R, clrun.Array) and R.dtype == np.complex64 and err(R.get(), np.fft.rfft(r, norm="ortho")) <= tol(12)
    back = cf.irfft(R, n=12, norm="ortho")
    assert isinstance(back, clrun.Array) and back.dtype == np.float32 and err(back.get(), r) <= tol(12)
    # the spectrum is an Array like any other: a product of spectra, then back (a circular convolution)
    k = rng.standard_normal(12).astype(np.float32)
    conv = cf.irfft(cf.rfft(ctx.asarray(r)) * cf.rfft(ctx.asarray(k)), n=12)
    want = np.fft.irfft(np.fft.rfft(r) * np.fft.rfft(k), n=12)
    assert err(conv.get(), want) <= 1e-5
