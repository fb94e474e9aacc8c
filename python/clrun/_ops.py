"""The kernel library on NumPy arrays and device buffers: each op takes a Context first; inputs may be
NumPy arrays (uploaded for the call) or Buffers (used in place); results come back as NumPy arrays,
or stay on the device as Buffers when every array input was a Buffer."""
import ctypes
from ctypes import byref, c_double, c_float, c_int, c_int32, c_size_t

import numpy as np

from . import _lib as L
from ._core import BF16, F16, F32, I8, Buffer, Error, InvalidArgument, OutOfRange, _as_clrun_errors, _check

_VEC = {"mul": 0, "add": 1, "sub": 2, "div": 3, "axpy": 4, "scale": 5, "fma": 6}
_FLOAT = {np.dtype(np.float32): F32, np.dtype(np.float16): F16}


def _code(dt, bf16=False):
    dt = np.dtype(dt)
    if bf16:
        if dt != np.uint16:
            raise InvalidArgument(1, f"bf16 data is uint16 arrays of bf16 patterns, not {dt}")
        return BF16
    if dt not in _FLOAT:
        raise InvalidArgument(1, f"float32 or float16 arrays (bf16: uint16 with bf16=True), not {dt}")
    return _FLOAT[dt]


def _dev(ctx, x, dtype=None):
    """(Buffer, was it given) for a Buffer or an array-like."""
    if isinstance(x, Buffer):
        if x.ctx is not ctx:
            raise InvalidArgument(1, "a buffer of another context")
        return x, True
    return ctx.upload(_exact(x, dtype)), False


def _exact(x, dtype, what="an input"):
    """x as a C-contiguous array of dtype, converted only where no value changes: integers must fit
    the target (300 is no int8), floats go to integers only when every value is a whole number in
    range (300.7 is refused, never wrapped to 44), and nothing is narrowed silently."""
    a = np.asarray(x)
    if dtype is None or a.dtype == np.dtype(dtype):
        return np.ascontiguousarray(a)
    to = np.dtype(dtype)
    if a.dtype.kind in "iub" and to.kind in "iu":
        info = np.iinfo(to)
        if a.size and (int(a.min()) < info.min or int(a.max()) > info.max):
            raise OutOfRange(1, f"{what} of {a.dtype} holds values from {int(a.min())} to {int(a.max())}, out of {to}'s range "
                                f"({info.min} to {info.max}): never wrapped")
    elif a.dtype.kind == "f" and to.kind in "iu":
        info = np.iinfo(to)
        with np.errstate(invalid="ignore"):
            bad = a.size and (not np.all(np.isfinite(a)) or np.any(a != np.trunc(a)) or a.min() < info.min or a.max() > info.max)
        if bad:
            raise OutOfRange(1, f"{what} of {a.dtype} is not all whole numbers within {to}'s range ({info.min} to {info.max}): "
                                f"quantize it first (clrun.quantize), never wrapped or truncated")
    elif not np.can_cast(a.dtype, to, "same_kind"):
        raise InvalidArgument(1, f"{what} of {a.dtype} where {to} is wanted: convert it first (astype)")
    return np.ascontiguousarray(a, dtype=to)


def _result(buf, keep):
    return buf if keep else buf.download()


# ---- element-wise ops and reductions -------------------------------------------------------------------


def _vec(ctx, op, a, b=None, c=None, alpha=1.0):
    ins = [x for x in (a, b, c) if x is not None]
    bufs = [_dev(ctx, x) for x in ins]
    dt = bufs[0][0].dtype
    t = _code(dt)
    for bb, _ in bufs:
        if bb.dtype != dt or bb.size != bufs[0][0].size:
            raise InvalidArgument(1, f"{op}: the operands must have one dtype and size ({dt}, {bufs[0][0].size})")
    n = bufs[0][0].size
    out = ctx.empty(bufs[0][0].shape, dt)
    isz = np.dtype(dt).itemsize
    h = [(m[0], m[1] // isz) for m in (bb._mem() for bb, _ in bufs)] + [(None, 0)] * (3 - len(bufs))
    oh, oo = out._mem()
    _check(L.vec(ctx.handle, _VEC[op], t, n, alpha, oh, oo // isz, h[0][0], h[0][1], h[1][0], h[1][1], h[2][0], h[2][1]), ctx._h)
    return _result(out, all(k for _, k in bufs))


def mul(ctx, a, b):
    """a * b, element-wise (float32 or float16; f16 computed in f32, rounded to nearest even)."""
    return _vec(ctx, "mul", a, b)


def add(ctx, a, b):
    return _vec(ctx, "add", a, b)


def sub(ctx, a, b):
    return _vec(ctx, "sub", a, b)


def div(ctx, a, b):
    """a / b, correctly rounded."""
    return _vec(ctx, "div", a, b)


def axpy(ctx, alpha, x, y):
    """alpha * x + y, one rounding."""
    return _vec(ctx, "axpy", x, y, alpha=alpha)


def scale(ctx, alpha, x):
    return _vec(ctx, "scale", x, alpha=alpha)


def fma(ctx, a, b, c):
    """a * b + c, one rounding."""
    return _vec(ctx, "fma", a, b, c)


def _red(ctx, name, x, y=None):
    bx, _ = _dev(ctx, x)
    t = _code(bx.dtype)
    xh, xo = bx._mem()
    xo //= bx.dtype.itemsize
    if name == "dot":
        by, _ = _dev(ctx, y)
        if by.size != bx.size or by.dtype != bx.dtype:
            raise InvalidArgument(1, "dot: x and y must have one dtype and size")
        yh, yo = by._mem()
        r = c_double()
        _check(L.dot(ctx.handle, t, xh, xo, yh, yo // by.dtype.itemsize, bx.size, byref(r)), ctx._h)
        return r.value
    if name in ("sum", "norm2"):
        r = c_double()
        _check(L.red_d[name](ctx.handle, t, xh, xo, bx.size, byref(r)), ctx._h)
        return r.value
    if name in ("max", "min"):
        r = c_float()
        _check(L.red_f[name](ctx.handle, t, xh, xo, bx.size, byref(r)), ctx._h)
        return r.value
    r = c_size_t()
    _check(L.argmax(ctx.handle, t, xh, xo, bx.size, byref(r)), ctx._h)
    return r.value


def sum(ctx, x):  # noqa: A001
    """The sum of the elements, compensated (error about 5e-7 of the sum of magnitudes), as a float."""
    return _red(ctx, "sum", x)


def dot(ctx, x, y):
    return _red(ctx, "dot", x, y)


def norm2(ctx, x):
    return _red(ctx, "norm2", x)


def max(ctx, x):  # noqa: A001
    """The largest element; NaN if any is NaN (as NumPy)."""
    return _red(ctx, "max", x)


def min(ctx, x):  # noqa: A001
    return _red(ctx, "min", x)


def argmax(ctx, x):
    """The index of the first largest element, or of the first NaN (as NumPy)."""
    return _red(ctx, "argmax", x)


# ---- conversions --------------------------------------------------------------------------------------

_CAST = {"f32": (F32, np.float32), "f16": (F16, np.float16), "bf16": (BF16, np.uint16)}


def cast(ctx, x, to, bf16=False):
    """Convert float32 to "f16" or "bf16" (bf16 as uint16 patterns), or either back to "f32", on the device."""
    bx, keep = _dev(ctx, x)
    src = BF16 if (bf16 or (bx.dtype == np.uint16 and to == "f32")) else _code(bx.dtype)
    if to not in _CAST:
        raise InvalidArgument(1, f"cast: to f32, f16 or bf16, not {to!r}")
    code, dt = _CAST[to]
    out = ctx.empty(bx.shape, dt, bf16=code == BF16)
    h, off = bx._mem()
    _check(L.cast(ctx.handle, h, off // bx.dtype.itemsize, src, out.handle, 0, code, bx.size), ctx._h)
    return _result(out, keep)


# ---- matrix multiply ------------------------------------------------------------------------------------


def _mats(a, name):
    if len(a.shape) not in (2, 3):
        raise InvalidArgument(1, f"gemm: {name} must be a 2-D matrix or a 3-D batch of them, not of shape {a.shape}")
    return (a.shape[0] if len(a.shape) == 3 else 1), a.shape[-2], a.shape[-1]


def _desc(ba, bb, bc, ta, tb, alpha, beta, t, backend=0, fast=False):
    na, ar, ac = _mats(ba, "A")
    nb, br, bcn = _mats(bb, "B")
    if na != nb:
        raise InvalidArgument(1, f"gemm: A has {na} matrices and B {nb}")
    m, k = (ac, ar) if ta else (ar, ac)
    kb, n = (bcn, br) if tb else (br, bcn)
    if k != kb:
        raise InvalidArgument(1, f"gemm: op(A) is {m}×{k} but op(B) is {kb}×{n}: the inner dimensions differ")
    d = L.gemm_desc(t, na, m, n, k, ta, tb)
    d.alpha, d.beta, d.backend, d.fast = alpha, beta, backend, int(fast)
    (d.a, ao), (d.b, bo) = ba._mem(), bb._mem()
    d.a_off, d.b_off = ao // ba.dtype.itemsize, bo // bb.dtype.itemsize
    if bc is not None:
        d.c, co = bc._mem()
        d.c_off = co // 4
    return d, na, m, n


def _stored(x):
    """(an Array the GEMM reads, whether it holds the operand transposed): a contiguous Array itself,
    a transposed view of one (a.T, swapaxes(-1, -2)) as its contiguous original with the transpose
    flag (no copy), any other strided view as a contiguous copy."""
    if x.is_contiguous:
        return x, False
    y = x.swapaxes(-1, -2)
    if y.is_contiguous:
        return y, True
    return x.copy(), False


def _gemm_arrays(a, b):
    """a @ b for Arrays (checked by the caller): the product's dtype from the inputs'."""
    ctx = a.ctx
    shape = a.shape[:-1] + (b.shape[-1],)
    (a, ta), (b, tb) = _stored(a), _stored(b)
    if a.dtype == np.int8:
        d, _, _, _ = _desc(a, b, None, ta, tb, 1.0, 0.0, I8)
        out = ctx.empty(shape, np.int32)
        d.c = out.handle
        _check(L.gemm_s8(ctx.handle, byref(d), None), ctx._h)
        return out
    if a.bf16:
        t = BF16
    elif a.dtype in _FLOAT:
        t = _FLOAT[a.dtype]
    else:
        from ._core import Unsupported
        raise Unsupported(11, f"@ on {a.dtype} Arrays: the GEMM takes float32, float16, bfloat16 and int8")
    d, _, _, _ = _desc(a, b, None, ta, tb, 1.0, 0.0, t)
    out = ctx.empty(shape, np.float32)
    d.c = out.handle
    _check(L.gemm(ctx.handle, byref(d)), ctx._h)
    return out


def gemm(ctx, a, b, c=None, alpha=1.0, beta=0.0, ta=False, tb=False, backend="auto", fast=False, bf16=False):
    """alpha·op(A)·op(B) + beta·C in float32. A and B float32 or float16 (bf16: uint16 patterns with
    bf16=True); 3-D arrays are batches. backend: auto, kernel, tensor, wgmma, mma.sync, gpu-kernel, cpu-kernel, clblast
    (clrun_gemm_backend_name's names)."""
    ba, ka = _dev(ctx, a)
    bb, kb = _dev(ctx, b)
    if ba.dtype != bb.dtype:
        raise InvalidArgument(1, f"gemm: A is {ba.dtype} and B {bb.dtype}")
    t = _code(ba.dtype, bf16)
    be = c_int()
    _check(L.gemm_backend_parse(backend.encode(), byref(be)))
    d, batch, m, n = _desc(ba, bb, None, ta, tb, alpha, beta, t, be.value, fast)
    shape = (batch, m, n) if len(ba.shape) == 3 else (m, n)
    if c is not None:
        bc, kc = _dev(ctx, c, np.float32)
        if bc.shape != shape or bc.dtype != np.float32:
            raise InvalidArgument(1, f"gemm: C must be float32 of shape {shape}")
    else:
        if beta != 0.0:
            raise InvalidArgument(1, "gemm: beta needs a C to scale")
        bc, kc = ctx.empty(shape, np.float32), True
    d.c = bc.handle
    _check(L.gemm(ctx.handle, byref(d)), ctx._h)
    return _result(bc, ka and kb and (c is None or kc))


def tensor_cores(ctx):
    """Whether gemm(backend="tensor") runs here (NVIDIA's tensor cores through inline PTX)."""
    return bool(L.gemm_tensor_cores(ctx.handle))


def tensor_kernel(ctx, dtype=np.float16, bf16=False):
    """Which tensor-core kernel runs products of this input type: "wgmma" (Hopper), "mma.sync", or
    None where there are no tensor cores. dtype: float32, float16 (bf16=True: bf16) or int8."""
    code = I8 if np.dtype(dtype) == np.int8 else _code(dtype, bf16)
    k = L.gemm_tensor_kernel(ctx.handle, code)
    return k.decode() if k else None


# ---- Canny --------------------------------------------------------------------------------------------


def canny(ctx, img, low, high, l2=False, aperture=3, blur=0, blur_sigma=0.0, bgr=False):
    """Canny edges of an 8-bit image (H×W, or H×W×3 with R, G, B; bgr=True for OpenCV's B, G, R order),
    equal byte for byte to cv2.Canny(img, low, high, apertureSize=aperture, L2gradient=l2). A uint8
    clrun.Array (R, G, B) stays on the device: the edges come back as an Array."""
    if isinstance(img, Buffer) and hasattr(img, "bf16"):
        return _canny_array(ctx, img, low, high, l2, aperture, blur, blur_sigma)
    a = np.asarray(img)
    if a.dtype != np.uint8 or a.ndim not in (2, 3) or (a.ndim == 3 and a.shape[2] not in (1, 3)):
        raise InvalidArgument(1, f"canny: an 8-bit image of H×W or H×W×3, not {a.dtype} of shape {a.shape}")
    if a.ndim == 3 and a.shape[2] == 3 and bgr:
        a = a[..., ::-1]
    a = np.ascontiguousarray(a)
    h, w = a.shape[:2]
    ch = 1 if a.ndim == 2 else a.shape[2]
    src = ctx.upload(a)
    out = ctx.empty((h, w), np.uint8)
    p = L.CannyParamsC(low, high, int(l2), aperture, blur, blur_sigma)
    _check(L.canny(ctx.handle, src.handle, 0, w * ch, w, h, ch, out.handle, 0, w, byref(p)), ctx._h)
    return out.download()


def _canny_array(ctx, img, low, high, l2, aperture, blur, blur_sigma):
    if img.ctx is not ctx:
        raise InvalidArgument(1, "canny: an Array of another context")
    if img.dtype != np.uint8 or img.ndim not in (2, 3) or (img.ndim == 3 and img.shape[2] not in (1, 3)):
        raise InvalidArgument(1, f"canny: an 8-bit image of H×W or H×W×3, not {img.dtype} of shape {img.shape}")
    h, w = img.shape[:2]
    ch = 1 if img.ndim == 2 else img.shape[2]
    out = ctx.empty((h, w), np.uint8)
    p = L.CannyParamsC(low, high, int(l2), aperture, blur, blur_sigma)
    sh, so = img._mem()
    _check(L.canny(ctx.handle, sh, so, w * ch, w, h, ch, out.handle, 0, w, byref(p)), ctx._h)
    return out


def imread(path):
    """An image file (PNG, JPEG, PGM/PPM) as a uint8 array, H×W or H×W×3 (R, G, B), as clrun reads it."""
    im = L.ImageC()
    _check(L.image_read(str(path).encode(), byref(im)))
    h, w, ch = im.height, im.width, im.channels
    try:
        raw = (ctypes.c_uint8 * (im.stride * h)).from_address(im.data)
        a = np.frombuffer(raw, np.uint8).reshape(h, im.stride)[:, :w * ch].copy()
    finally:
        L.image_free(byref(im))
    return a.reshape(h, w, ch) if ch == 3 else a.reshape(h, w)


def imwrite(path, img):
    """Write a uint8 H×W or H×W×3 (R, G, B) array as PNG, JPEG (.jpg, .jpeg) or PGM/PPM (.pgm, .ppm,
    .pnm), by the name's extension; other formats' names are refused. Other dtypes are refused,
    never converted."""
    a = np.asarray(img)
    if a.dtype != np.uint8 or a.ndim not in (2, 3) or (a.ndim == 3 and a.shape[2] not in (1, 3)):
        raise InvalidArgument(1, f"imwrite: an 8-bit image of H×W or H×W×3 (R, G, B), not {a.dtype} of shape {a.shape}")
    a = np.ascontiguousarray(a)
    ch = 1 if a.ndim == 2 else a.shape[2]
    im = L.ImageC(a.shape[1], a.shape[0], a.shape[1] * ch, ch, a.ctypes.data)
    _check(L.image_write(str(path).encode(), byref(im)))


# ---- every op raises clrun.Error ------------------------------------------------------------------------

_as_clrun_errors(globals(), __name__)
