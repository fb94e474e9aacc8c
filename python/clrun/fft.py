"""clrun.fft — numpy.fft's functions computed on an OpenCL device by clrun_fft (VkFFT).

The names, arguments and results follow numpy.fft: fft, ifft, rfft, irfft, fft2, ifft2, rfft2,
irfft2, fftn, ifftn, rfftn, irfftn (a, n or s, axis or axes, norm), and the helpers fftfreq,
rfftfreq, fftshift, ifftshift. The input is a clrun.Array or anything np.asarray takes; with NumPy
input the transform runs on ctx= (default: one context on the default device, opened at first use).

Precision follows the input, as NumPy 2 and torch.fft: float32, float16 and complex64 input is
transformed in single precision and gives complex64 (float32 for the irfft family); float64,
complex128 and integer input in double precision (complex128, float64), which needs fp64 on the
device. An Array's transform stays on the device and comes back as an Array (complex64 or
complex128, or real for the irfft family); NumPy input gives NumPy output.

Any length works (VkFFT's Rader and Bluestein algorithms for primes); up to three axes go to the
device as one plan, more as several. Plans and their compiled kernels are cached (clrun_fft_plan_new).
"""
import math
from ctypes import byref, c_void_p

import numpy as np

from . import _lib as L
from ._core import Buffer, InvalidArgument, Unsupported, _check

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]

_NORMS = {None: 0, "backward": 0, "ortho": 1, "forward": 2}
_C2C, _REAL = 0, 1
_shared = None


def _context(a, ctx):
    global _shared
    from ._array import Array
    if isinstance(a, Array):
        if ctx is not None and ctx is not a.ctx:
            raise InvalidArgument(1, "the Array lives on another context than ctx=")
        if a.bf16:
            raise Unsupported(11, "the FFT of a bfloat16 Array: .astype(np.float32) first")
        return a.ctx, a
    if ctx is None:
        if _shared is None:
            from ._core import open as _open
            _shared = _open()
        ctx = _shared
    return ctx, np.asarray(a)


def _norm(norm):
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    return _NORMS[norm]


def _precision(x, ctx):
    """(single precision?, the complex dtype, the real dtype) for input x."""
    if x.dtype.kind not in "biufc":
        raise TypeError(f"the FFT of {x.dtype} data is not defined")
    single = x.dtype in (np.float32, np.float16, np.complex64)
    if not single and not ctx.device.fp64:
        raise Unsupported(11, f"a double-precision FFT ({x.dtype} input) needs fp64, which {ctx.device.name} lacks; "
                              "pass float32 or complex64 data")
    return single, np.dtype(np.complex64 if single else np.complex128), np.dtype(np.float32 if single else np.float64)


def _normalize_axes(x, axes):
    """The axes as non-negative ints; one outside x's dimensions raises NumPy's AxisError."""
    axes = [int(ax) for ax in axes]
    for ax in axes:
        if not -x.ndim <= ax < x.ndim:
            raise np.exceptions.AxisError(ax, x.ndim) if hasattr(np, "exceptions") else np.AxisError(ax, x.ndim)
    return [ax % x.ndim for ax in axes]


def _default_axes(x, s, axes):
    """NumPy's default axes: the last len(s) when s is given, else all of them."""
    if axes is not None:
        return axes
    return list(range(-len(s), 0)) if s is not None else list(range(x.ndim))


def _axes_and_sizes(x, s, axes):
    """NumPy's rules for (s, axes): the axes (normalized) and their lengths."""
    axes = _normalize_axes(x, _default_axes(x, s, axes))
    if s is None:
        s = [x.shape[ax] for ax in axes]
    else:
        s = [int(v) for v in s]
        if len(s) != len(axes):
            raise ValueError("Shape and axes have different lengths.")
    for v in s:
        if v < 1:
            raise ValueError(f"Invalid number of FFT data points ({v}) specified.")
    return axes, s


def _is_array(x):
    from ._array import Array
    return isinstance(x, Array)


def _astype(x, dt):
    return x if x.dtype == dt else x.astype(dt)


def _transpose(x, order):
    return x.transpose(tuple(int(v) for v in order))


def _contiguous(x):
    if _is_array(x):
        from . import _nd as N
        return N.contiguous(x)
    return np.ascontiguousarray(x)


def _fit(x, axes, s):
    """x cut or zero-padded to length s[i] along axes[i] (NumPy's n and s); on the device for Arrays."""
    for ax, n in zip(axes, s):
        have = x.shape[ax]
        if have == n:
            continue
        keep = tuple(slice(0, min(have, n)) if d == ax else slice(None) for d in range(x.ndim))
        if have > n:
            x = x[keep]
            continue
        shape = tuple(n if d == ax else x.shape[d] for d in range(x.ndim))
        z = x.ctx.zeros(shape, x.dtype) if _is_array(x) else np.zeros(shape, x.dtype)
        z[keep] = x
        x = z
    return x


def _run(ctx, x, kind, inverse, nax, norm, single, last_real=None):
    """One plan over the last nax axes of the contiguous x (every leading axis a batch): c2c, r2c
    (kind _REAL, forward) or c2r (kind _REAL, inverse; last_real the real length of the last axis)."""
    shape = x.shape
    lead = shape[:x.ndim - nax]
    batch = math.prod(lead)
    dims = list(shape[x.ndim - nax:])
    if kind == _REAL and inverse:
        dims[-1] = last_real
    cdims = list(dims)
    if kind == _REAL:
        cdims[-1] = dims[-1] // 2 + 1
    cdt, rdt = (np.complex64, np.float32) if single else (np.complex128, np.float64)
    out_shape = tuple(lead) + tuple(dims if kind == _REAL and inverse else cdims)
    out_dt = rdt if kind == _REAL and inverse else cdt
    if batch == 0:
        return ctx.zeros(out_shape, out_dt) if _is_array(x) else np.zeros(out_shape, out_dt)
    if kind == _REAL and dims[-1] == 1:  # one element along the last axis: the complex transform of it
        if inverse:
            return _astype(_contiguous(_run(ctx, x, _C2C, True, nax, norm, single).real), np.dtype(rdt))
        return _run(ctx, _astype(x, np.dtype(cdt)), _C2C, False, nax, norm, single)
    d = L.FftDescC(kind=kind, precision=0 if single else 3, ndim=nax, batch=batch, norm=norm, inplace=0)
    for i, v in enumerate(dims):
        d.shape[i] = v
    plan = c_void_p()
    _check(L.fft_plan_new(ctx.handle, byref(d), byref(plan)), ctx._h)
    try:
        if _is_array(x):
            from ._array import Array
            src = _contiguous(x)
            dst = Array(ctx, out_shape, out_dt)
            (sh, so), (dh, do) = src._mem(), dst._mem()
            _check(L.fft_exec(plan, 1 if inverse else 0, sh, so // src.itemsize, dh, do // dst.itemsize), ctx._h)
            return dst
        src = Buffer(ctx, x.shape, x.dtype, src=np.ascontiguousarray(x))
        dst = Buffer(ctx, out_shape, out_dt)
        _check(L.fft_exec(plan, 1 if inverse else 0, src.handle, 0, dst.handle, 0), ctx._h)
        out = dst.download()
        src.free(), dst.free()
        return out
    finally:
        L.fft_plan_free(plan)


def _c2c(x, axes, norm, inverse, ctx, single):
    """The c2c transform of the complex x over axes, three axes per plan."""
    x = _astype(x, np.dtype(np.complex64 if single else np.complex128))
    todo = list(axes)
    while todo:
        group, todo = todo[-3:], todo[:-3]
        rest = [ax for ax in range(x.ndim) if ax not in group]
        order = rest + group
        yt = _run(ctx, _contiguous(_transpose(x, order)), _C2C, inverse, len(group), norm, single)
        x = _transpose(yt, np.argsort(order))
    return _contiguous(x)


def _cn(a, s, axes, norm, inverse, ctx, what):
    ctx, x = _context(a, ctx)
    nrm = _norm(norm)
    single, _, _ = _precision(x, ctx)
    axes, s = _axes_and_sizes(x, s, axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{what}: repeated axes")
    x = _fit(x, axes, s)
    if not axes:
        return _astype(x, np.dtype(np.complex64 if single else np.complex128)).copy()
    return _c2c(x, axes, nrm, inverse, ctx, single)


def _rn(a, s, axes, norm, ctx, what):
    ctx, x = _context(a, ctx)
    nrm = _norm(norm)
    if x.dtype.kind == "c":
        raise TypeError(f"{what} takes real input (its {x.dtype} has imaginary parts); use fft/fftn for complex data")
    single, _, rdt = _precision(x, ctx)
    axes, s = _axes_and_sizes(x, s, axes)
    if not axes:
        raise ValueError(f"{what}: no axes to transform")
    if len(set(axes)) != len(axes):
        raise ValueError(f"{what}: repeated axes")
    x = _fit(_astype(x, rdt), axes, s)
    last, others = axes[-1], axes[:-1]
    group = others[-2:] + [last]  # the real axis and up to two more in one plan
    rest = [ax for ax in range(x.ndim) if ax not in group]
    order = rest + group
    y = _transpose(_run(ctx, _contiguous(_transpose(x, order)), _REAL, False, len(group), nrm, single), np.argsort(order))
    if others[:-2]:
        y = _c2c(y, others[:-2], nrm, False, ctx, single)
    return _contiguous(y)


def _irn(a, s, axes, norm, ctx, what):
    ctx, x = _context(a, ctx)
    nrm = _norm(norm)
    single, cdt, _ = _precision(x, ctx)
    axes = _normalize_axes(x, _default_axes(x, s, axes))
    if s is None:  # the last axis's real length: 2·(m - 1)
        s = [x.shape[ax] for ax in axes[:-1]] + ([2 * (x.shape[axes[-1]] - 1)] if axes else [])
    else:
        s = [int(v) for v in s]
        if len(s) != len(axes):
            raise ValueError("Shape and axes have different lengths.")
    if not axes:
        raise ValueError(f"{what}: no axes to transform")
    if len(set(axes)) != len(axes):
        raise ValueError(f"{what}: repeated axes")
    for v in s:
        if v < 1:
            raise ValueError(f"Invalid number of data points ({v}) specified")
    last, others = axes[-1], axes[:-1]
    x = _fit(_astype(x, cdt), axes, s[:-1] + [s[-1] // 2 + 1])
    if others:  # NumPy's order: the c2c inverses first, then the 1-D c2r (which ignores the imaginary parts of 0 and n/2)
        x = _c2c(x, others, nrm, True, ctx, single)
    group = [last]
    rest = [ax for ax in range(x.ndim) if ax not in group]
    order = rest + group
    y = _run(ctx, _contiguous(_transpose(x, order)), _REAL, True, len(group), nrm, single, last_real=s[-1])
    return _contiguous(_transpose(y, np.argsort(order)))


def fft(a, n=None, axis=-1, norm=None, ctx=None):
    """The 1-D discrete Fourier transform along axis (numpy.fft.fft)."""
    return _cn(a, None if n is None else [n], [axis], norm, False, ctx, "fft")


def ifft(a, n=None, axis=-1, norm=None, ctx=None):
    """The 1-D inverse transform along axis (numpy.fft.ifft)."""
    return _cn(a, None if n is None else [n], [axis], norm, True, ctx, "ifft")


def fftn(a, s=None, axes=None, norm=None, ctx=None):
    """The N-D transform over axes (all by default; numpy.fft.fftn)."""
    return _cn(a, s, axes, norm, False, ctx, "fftn")


def ifftn(a, s=None, axes=None, norm=None, ctx=None):
    """The N-D inverse transform (numpy.fft.ifftn)."""
    return _cn(a, s, axes, norm, True, ctx, "ifftn")


def fft2(a, s=None, axes=(-2, -1), norm=None, ctx=None):
    """The 2-D transform over the last two axes (numpy.fft.fft2)."""
    return _cn(a, s, axes, norm, False, ctx, "fft2")


def ifft2(a, s=None, axes=(-2, -1), norm=None, ctx=None):
    """The 2-D inverse transform (numpy.fft.ifft2)."""
    return _cn(a, s, axes, norm, True, ctx, "ifft2")


def rfft(a, n=None, axis=-1, norm=None, ctx=None):
    """The transform of real input, the n//2 + 1 non-negative frequencies (numpy.fft.rfft)."""
    return _rn(a, None if n is None else [n], [axis], norm, ctx, "rfft")


def irfft(a, n=None, axis=-1, norm=None, ctx=None):
    """The inverse of rfft: n real values (default 2·(m - 1)) (numpy.fft.irfft)."""
    return _irn(a, None if n is None else [n], [axis], norm, ctx, "irfft")


def rfftn(a, s=None, axes=None, norm=None, ctx=None):
    """The N-D transform of real input (numpy.fft.rfftn)."""
    return _rn(a, s, axes, norm, ctx, "rfftn")


def irfftn(a, s=None, axes=None, norm=None, ctx=None):
    """The inverse of rfftn (numpy.fft.irfftn)."""
    return _irn(a, s, axes, norm, ctx, "irfftn")


def rfft2(a, s=None, axes=(-2, -1), norm=None, ctx=None):
    """The 2-D transform of real input (numpy.fft.rfft2)."""
    return _rn(a, s, axes, norm, ctx, "rfft2")


def irfft2(a, s=None, axes=(-2, -1), norm=None, ctx=None):
    """The inverse of rfft2 (numpy.fft.irfft2)."""
    return _irn(a, s, axes, norm, ctx, "irfft2")


fftfreq = np.fft.fftfreq
rfftfreq = np.fft.rfftfreq
fftshift = np.fft.fftshift
ifftshift = np.fft.ifftshift
