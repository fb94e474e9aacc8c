"""The kernel library's low-precision ops on NumPy arrays and Buffers: INT8 (quantize, dequantize,
calibrate, gemm_s8) and 2:4 structured sparsity (sp24_*, gemm_sp); the conventions of _ops.py."""
import ctypes
from ctypes import byref, c_float, c_int32

import numpy as np

from . import _lib as L
from ._core import I8, Buffer, InvalidArgument, _check, _as_clrun_errors
from ._ops import _code, _desc, _dev, _exact, _result


# ---- INT8 -----------------------------------------------------------------------------------------------


def _qparams(scale_, zero_point, axis, shape):
    s = np.atleast_1d(np.asarray(scale_, np.float32))
    z = np.atleast_1d(_exact(0 if zero_point is None else zero_point, np.int32, "the zero point"))
    if axis is None:
        if s.size != 1 or z.size != 1:
            raise InvalidArgument(1, "quantize: one scale and zero point per tensor (or give axis=)")
        ch, inner = 1, 0
    else:
        axis = axis % len(shape)
        ch, inner = shape[axis], int(np.prod(shape[axis + 1:], dtype=np.int64))
        if z.size == 1:
            z = np.full(ch, z[0], np.int32)
        if s.size != ch or z.size != ch:
            raise InvalidArgument(1, f"quantize: axis {axis} has {ch} channels: as many scales and zero points")
    p = L.QParamsC(ch, inner, s.ctypes.data_as(ctypes.POINTER(c_float)), z.ctypes.data_as(ctypes.POINTER(c_int32)))
    return p, (s, z)


def quantize(ctx, x, scale, zero_point=0, axis=None):
    """float32 -> int8 as torch.quantize_per_tensor / quantize_per_channel (qint8) compute it."""
    bx, keep = _dev(ctx, x, np.float32)
    p, hold = _qparams(scale, zero_point, axis, bx.shape)
    out = ctx.empty(bx.shape, np.int8)
    h, off = bx._mem()
    _check(L.quantize(ctx.handle, h, off // 4, out.handle, 0, bx.size, byref(p)), ctx._h)
    return _result(out, keep)


def dequantize(ctx, q, scale, zero_point=0, axis=None):
    """int8 -> float32: (q - zero_point) · scale, as torch.dequantize."""
    bq, keep = _dev(ctx, q, np.int8)
    p, hold = _qparams(scale, zero_point, axis, bq.shape)
    out = ctx.empty(bq.shape, np.float32)
    h, off = bq._mem()
    _check(L.dequantize(ctx.handle, h, off, out.handle, 0, bq.size, byref(p)), ctx._h)
    return _result(out, keep)


def calibrate(x, axis=None, symmetric=False, percentile=100.0):
    """Scales and zero points from the data, as torch.ao.quantization's MinMaxObserver for qint8."""
    a = np.ascontiguousarray(x, np.float32)
    if axis is None:
        ch, inner = 1, 0
    else:
        axis = axis % a.ndim
        ch, inner = a.shape[axis], int(np.prod(a.shape[axis + 1:], dtype=np.int64))
    s = np.empty(ch, np.float32)
    z = np.empty(ch, np.int32)
    _check(L.quant_calibrate(a.ctypes.data, a.size, ch, inner, int(symmetric), percentile, s.ctypes.data_as(ctypes.POINTER(c_float)),
                             z.ctypes.data_as(ctypes.POINTER(c_int32))))
    return (float(s[0]), int(z[0])) if axis is None else (s, z)


def gemm_s8(ctx, a, b, ta=False, tb=False, row_scale=None, col_scale=None, bias=None, relu=False):
    """int8 × int8 → int32, exact; with row_scale/col_scale/bias/relu the fused f32 epilogue of an INT8
    linear layer: relu(acc · row_scale[i] · col_scale[j] + bias[j])."""
    ba, ka = _dev(ctx, a, np.int8)
    bb, kb = _dev(ctx, b, np.int8)
    d, batch, m, n = _desc(ba, bb, None, ta, tb, 1.0, 0.0, I8)
    epi = row_scale is not None or col_scale is not None or bias is not None or relu
    shape = (batch, m, n) if len(ba.shape) == 3 else (m, n)
    out = ctx.empty(shape, np.float32 if epi else np.int32)
    d.c = out.handle
    e, hold = None, []
    if epi:
        e = L.S8EpilogueC()
        for field, v, cnt in (("row_scale", row_scale, m), ("col_scale", col_scale, n), ("bias", bias, n)):
            if v is not None:
                bv, _ = _dev(ctx, v, np.float32)
                if bv.size != cnt:
                    raise InvalidArgument(1, f"gemm_s8: {field} holds {cnt} floats")
                hold.append(bv)
                setattr(e, field, bv.handle)
        e.relu = int(relu)
    _check(L.gemm_s8(ctx.handle, byref(d), byref(e) if e is not None else None), ctx._h)
    return _result(out, ka and kb)


# ---- 2:4 sparsity -------------------------------------------------------------------------------------


def _rows(shape):
    return int(np.prod(shape[:-1], dtype=np.int64)), shape[-1]


def _meta_checked(ctx, meta, rows, k):
    """The metadata on the device: a host array is checked first (clrun_sp24_meta_check: two distinct
    columns per group, as sp24_compress writes them), since the ops would read a bad group differently."""
    if isinstance(meta, Buffer):
        return _dev(ctx, meta)
    m = np.asarray(meta)
    if m.dtype != np.uint32:
        raise InvalidArgument(1, f"2:4 metadata is uint32 words, not {m.dtype}")
    m = np.ascontiguousarray(m)
    if m.size != rows * L.sp24_km(k):
        raise InvalidArgument(1, f"2:4 metadata for {rows} rows and K = {k}: {rows} rows of {L.sp24_km(k)} words, not {m.size} words")
    _check(L.sp24_meta_check(m.ctypes.data, rows, k, None, None))
    return _dev(ctx, m)


def sp24_prune(ctx, x, bf16=False):
    """x pruned to 2:4 along its last axis (in each group of 4 the 2 of largest magnitude)."""
    bx, keep = _dev(ctx, x)
    t = _code(bx.dtype, bf16)
    rows, k = _rows(bx.shape)
    out = ctx.empty(bx.shape, bx.dtype)
    _check(L.buf_copy(out.handle, 0, bx.handle, 0, bx.nbytes), ctx._h)
    _check(L.sp24_prune(ctx.handle, t, out.handle, 0, k, rows, k), ctx._h)
    return _result(out, keep)


def sp24_compress(ctx, x, bf16=False):
    """(values, metadata) of x pruned to 2:4 along its last axis: values rows of 2·ceil(K/4) elements,
    metadata rows of ceil(K/32) uint32 words (the layout NVIDIA's mma.sp reads; clrun.h)."""
    bx, keep = _dev(ctx, x)
    t = _code(bx.dtype, bf16)
    rows, k = _rows(bx.shape)
    kv, km = L.sp24_kv(k), L.sp24_km(k)
    vals = ctx.empty(bx.shape[:-1] + (kv,), bx.dtype)
    meta = ctx.empty(bx.shape[:-1] + (km,), np.uint32)
    if rows and k:
        _check(L.sp24_compress(ctx.handle, t, bx.handle, 0, k, rows, k, vals.handle, meta.handle), ctx._h)
    return _result(vals, keep), _result(meta, keep)


def sp24_decompress(ctx, values, meta, k, bf16=False):
    """The dense matrix (last axis k) that values and meta encode; zeros where pruned."""
    bv, kv_ = _dev(ctx, values)
    t = _code(bv.dtype, bf16)
    rows, kv = _rows(bv.shape)
    if kv != L.sp24_kv(k):
        raise InvalidArgument(1, f"sp24_decompress: for K = {k}, rows of {L.sp24_kv(k)} values and {L.sp24_km(k)} metadata words")
    bm, km_ = _meta_checked(ctx, meta, rows, k)
    if bm.size != rows * L.sp24_km(k):
        raise InvalidArgument(1, f"sp24_decompress: for K = {k}, rows of {L.sp24_kv(k)} values and {L.sp24_km(k)} metadata words")
    out = ctx.zeros(bv.shape[:-1] + (k,), bv.dtype)
    if rows and k:
        _check(L.sp24_decompress(ctx.handle, t, bv.handle, bm.handle, rows, k, out.handle, 0, k), ctx._h)
    return _result(out, kv_ and km_)


def gemm_sp(ctx, values, meta, b, alpha=1.0, tb=False, bf16=False):
    """alpha · A · op(B) in float32 with A 2:4 compressed (values, meta from sp24_compress)."""
    bv, kv_ = _dev(ctx, values)
    bb, kb = _dev(ctx, b)
    if bv.dtype != bb.dtype:
        raise InvalidArgument(1, "gemm_sp: the values and B must have one dtype")
    t = _code(bv.dtype, bf16)
    if len(bv.shape) != 2 or len(bb.shape) != 2:
        raise InvalidArgument(1, "gemm_sp: 2-D matrices")
    m = bv.shape[0]
    k, n = (bb.shape[1], bb.shape[0]) if tb else bb.shape
    bm, km_ = _meta_checked(ctx, meta, m, k)
    d = L.gemm_desc(t, 1, m, n, k, False, tb)
    d.alpha, d.a, d.lda, d.b = alpha, bv.handle, bv.shape[1], bb.handle  # A: the compressed values' rows
    out = ctx.empty((m, n), np.float32)
    d.c = out.handle
    _check(L.gemm_sp(ctx.handle, byref(d), bm.handle, 0), ctx._h)
    return _result(out, kv_ and km_ and kb)


_as_clrun_errors(globals(), __name__)
