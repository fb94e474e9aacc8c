"""Device groups (clrun_group: one context per device, work split by measured speed) and Canny
pipelines (clrun_pipe: frames in flight, results back in order through a callback)."""
import ctypes
from ctypes import byref, c_double, c_size_t, c_void_p

import numpy as np

from . import _lib as L
from ._core import InvalidArgument, _check, _Closing, _info, _raise
from ._ops import _VEC, _code


class Group(_Closing):
    """A group of devices ("all", "gpu", "cpu", or selection strings "0,2"; None: $CLRUN_DEVICES).
    Its ops take host NumPy arrays and split the work: vec/reduce in ranges, gemm in blocks of rows
    (bit-identical to one device on devices of one kind)."""

    def __init__(self, spec=None):
        h = c_void_p()
        _check(L.group_open(byref(h), spec.encode() if spec else None))
        self._h = h.value
        self.devices = [_info(L.ctx_device(L.group_ctx(self._h, i)).contents) for i in range(L.group_size(self._h))]

    def close(self):
        if self._h:
            L.group_close(self._h)
            self._h = None

    def __len__(self):
        return len(self.devices)

    @property
    def weights(self):
        """The devices' relative speeds (measured at first use unless set)."""
        w = (c_double * len(self))()
        _check(L.group_weights(self._h, w))
        return list(w)

    @weights.setter
    def weights(self, w):
        arr = None if w is None else (c_double * len(self))(*w)
        _check(L.group_set_weights(self._h, arr))

    def split_rows(self, m):
        rows = (c_size_t * len(self))()
        _check(L.group_split_rows(self._h, m, rows))
        return list(rows)

    def vec(self, op, a, b=None, c=None, alpha=1.0):
        """An element-wise op ("mul", "add", "sub", "div", "axpy", "scale", "fma") over the group."""
        arrs = [np.ascontiguousarray(x) for x in (a, b, c) if x is not None]
        t = _code(arrs[0].dtype)
        out = np.empty_like(arrs[0])
        ptrs = [x.ctypes.data for x in arrs] + [None] * (3 - len(arrs))
        _check(L.group_vec(self._h, _VEC[op], t, out.size, alpha, out.ctypes.data, *ptrs))
        return out

    def reduce(self, op, x, y=None):
        """"sum", "dot", "norm2", "max", "min" (a float) or "argmax" (an index) over the group."""
        x = np.ascontiguousarray(x)
        yy = np.ascontiguousarray(y) if y is not None else None
        v, i = c_double(), c_size_t()
        _check(L.group_reduce(self._h, op.encode(), _code(x.dtype), x.ctypes.data, yy.ctypes.data if yy is not None else None, x.size,
                              byref(v), byref(i)))
        return i.value if op == "argmax" else v.value

    def gemm(self, a, b, alpha=1.0, ta=False, tb=False, bf16=False):
        """alpha·op(A)·op(B) in float32 over the group's devices (2-D host arrays)."""
        a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
        if a.dtype != b.dtype or a.ndim != 2 or b.ndim != 2:
            raise InvalidArgument(1, "group gemm: 2-D A and B of one dtype")
        m, k = (a.shape[1], a.shape[0]) if ta else a.shape
        kb, n = (b.shape[1], b.shape[0]) if tb else b.shape
        if k != kb:
            raise InvalidArgument(1, f"group gemm: op(A) is {m}×{k} but op(B) is {kb}×{n}")
        d = L.GemmDescC()
        d.trans_a, d.trans_b, d.m, d.n, d.k, d.alpha, d.type = int(ta), int(tb), m, n, k, alpha, _code(a.dtype, bf16)
        d.lda, d.ldb, d.ldc = a.shape[1], b.shape[1], n
        c = np.empty((m, n), np.float32)
        _check(L.group_gemm(self._h, byref(d), a.ctypes.data, b.ctypes.data, c.ctypes.data))
        return c


class CannyPipeline(_Closing):
    """Canny edges of a stream of frames, several in flight on the device: send(frame, tag) returns
    at once (waiting only when depth frames are in flight); deliver(tag, edges or None, error or
    None) is called in order, from send, poll and flush, in the calling thread."""

    def __init__(self, ctx, deliver, low, high, l2=False, aperture=3, depth=3):
        self.ctx, self._deliver, self._tags, self._next = ctx, deliver, {}, 0
        self._cb = L.PIPE_DELIVER(self._on_result)  # kept alive as long as the pipeline
        p = L.CannyParamsC(low, high, int(l2), aperture, 0, 0.0)
        h = c_void_p()
        _check(L.pipe_canny(ctx.handle, byref(p), depth, self._cb, None, byref(h)), ctx._h)
        self._h = h.value

    def _on_result(self, arg, tag, st, img):
        key = tag or 0
        user = self._tags.pop(key, None)
        if st:
            from ._core import _by_status, Error
            self._deliver(user, None, _by_status.get(st, Error)(st, L.last_error(self.ctx._h).decode(errors="replace")))
            return
        im = img.contents
        raw = (ctypes.c_uint8 * (im.stride * im.height)).from_address(im.data)
        edges = np.frombuffer(raw, np.uint8).reshape(im.height, im.stride)[:, :im.width].copy()
        self._deliver(user, edges, None)

    def send(self, frame, tag=None):
        a = np.ascontiguousarray(frame, np.uint8)
        if a.ndim not in (2, 3):
            raise InvalidArgument(1, "CannyPipeline.send: an 8-bit image of H×W or H×W×3 (R, G, B)")
        ch = 1 if a.ndim == 2 else a.shape[2]
        im = L.ImageC(a.shape[1], a.shape[0], a.shape[1] * ch, ch, a.ctypes.data)
        self._next += 1
        self._tags[self._next] = tag
        st = L.pipe_send(self._h, byref(im), self._next)
        if st:
            self._tags.pop(self._next, None)
            _raise(st, self.ctx._h)

    def poll(self):
        return L.pipe_poll(self._h)

    def flush(self):
        _check(L.pipe_flush(self._h), self.ctx._h)

    @property
    def pending(self):
        return L.pipe_pending(self._h)

    def close(self):
        if self._h:
            L.pipe_free(self._h)
            self._h = None

    def __exit__(self, *exc):
        if exc[0] is None:
            self.flush()
        self.close()
