"""Device groups (clrun_group: one context per device, work split by measured speed) and Canny
pipelines (clrun_pipe: frames in flight, results back in order through a callback)."""
import ctypes
from ctypes import byref, c_double, c_size_t, c_void_p

import numpy as np

from . import _lib as L
from ._core import Error, InvalidArgument, _by_status, _check, _Closing, _info, _is_dead, _kill, _raise, _spec
from ._ops import _VEC, _code


class Group(_Closing):
    """A group of devices ("all", "gpu", "cpu", or selection strings "0,2"; None: $CLRUN_DEVICES).
    Its ops take host NumPy arrays and split the work: vec/reduce in ranges, gemm in blocks of rows
    (bit-identical to one device on devices of one kind)."""

    def __init__(self, spec=None):
        h = c_void_p()
        _check(L.group_open(byref(h), _spec(spec)))
        self._h = h.value
        self.devices = [_info(L.ctx_device(L.group_ctx(self._h, i)).contents) for i in range(L.group_size(self._h))]

    def close(self):
        """Close the group's contexts; any use after raises clrun.InvalidArgument."""
        if _is_dead(self):
            return
        if self._h:
            L.group_close(self._h)
            self._h = None
        _kill(self, "the group is closed")

    @property
    def handle(self):
        if not self._h:
            raise InvalidArgument(1, "the group is closed")
        return self._h

    def __len__(self):
        return len(self.devices)

    @property
    def weights(self):
        """The devices' relative speeds (measured at first use unless set)."""
        w = (c_double * len(self))()
        _check(L.group_weights(self.handle, w))
        return list(w)

    @weights.setter
    def weights(self, w):
        if w is not None and len(w) != len(self):
            raise InvalidArgument(1, f"group weights: one per device ({len(self)}), not {len(w)}")
        arr = None if w is None else (c_double * len(self))(*w)
        _check(L.group_set_weights(self.handle, arr))

    def split_rows(self, m):
        if not isinstance(m, (int, np.integer)) or m < 0:
            raise InvalidArgument(1, f"split_rows: a row count, not {m!r}")
        rows = (c_size_t * len(self))()
        _check(L.group_split_rows(self.handle, int(m), rows))
        return list(rows)

    @staticmethod
    def _operands(what, arrs):
        """Host operands of one float dtype (float32 or float16) and one size, C-contiguous."""
        out = [np.ascontiguousarray(x) for x in arrs]
        for x in out:
            if x.dtype not in (np.float32, np.float16):
                raise InvalidArgument(1, f"{what}: float32 or float16 arrays, not {x.dtype}")
        for x in out[1:]:
            if x.dtype != out[0].dtype or x.size != out[0].size:
                raise InvalidArgument(1, f"{what}: the operands must have one dtype and size ({out[0].dtype}, {out[0].size}); "
                                         f"{x.dtype} of {x.size} given")
        return out

    def vec(self, op, a, b=None, c=None, alpha=1.0):
        """An element-wise op ("mul", "add", "sub", "div", "axpy", "scale", "fma") over the group."""
        if op not in _VEC:
            raise InvalidArgument(1, f"group vec: op is one of {', '.join(_VEC)}, not {op!r}")
        need = 1 if op == "scale" else 3 if op == "fma" else 2
        given = [x for x in (a, b, c) if x is not None]
        if len(given) != need or (need >= 2 and b is None) or (need == 3 and c is None):
            raise InvalidArgument(1, f"group vec: {op} takes {need} operand{'s' if need > 1 else ''}")
        arrs = self._operands(f"group {op}", given)
        t = _code(arrs[0].dtype)
        out = np.empty_like(arrs[0])
        ptrs = [x.ctypes.data for x in arrs] + [None] * (3 - len(arrs))
        _check(L.group_vec(self.handle, _VEC[op], t, out.size, float(alpha), out.ctypes.data, *ptrs))
        return out

    def reduce(self, op, x, y=None):
        """"sum", "dot", "norm2", "max", "min" (a float) or "argmax" (an index) over the group."""
        if op not in ("sum", "dot", "norm2", "max", "min", "argmax"):
            raise InvalidArgument(1, f"group reduce: op is sum, dot, norm2, max, min or argmax, not {op!r}")
        if (op == "dot") != (y is not None):
            raise InvalidArgument(1, f"group reduce: {op} takes {'x and y' if op == 'dot' else 'x only'}")
        arrs = self._operands(f"group {op}", [x] if y is None else [x, y])
        xx, yy = arrs[0], arrs[1] if y is not None else None
        v, i = c_double(), c_size_t()
        _check(L.group_reduce(self.handle, op.encode(), _code(xx.dtype), xx.ctypes.data, yy.ctypes.data if yy is not None else None, xx.size,
                              byref(v), byref(i)))
        return i.value if op == "argmax" else v.value

    def canny_files(self, inputs, outputs, low, high, l2=False, aperture=3, blur=0, blur_sigma=0.0, jobs=0):
        """Canny edges of image files (PNG, JPEG, PGM/PPM) into outputs[i] (PNG, PGM), on every device
        of the group at once (clrun_group_canny_files): host threads read, decode, encode and write
        while each device computes; each image goes to the device that would finish it first by the
        weights, and a device that fails gives its images to the others. Returns a list with one entry
        per input: None when its edges were written, else the clrun.Error that stopped it (a
        FormatError or NotFound for an input that cannot be read). Raises only when nothing could run
        (no device, bad arguments)."""
        inputs, outputs = [str(i) for i in inputs], [str(o) for o in outputs]
        if len(inputs) != len(outputs):
            raise InvalidArgument(1, f"canny_files: {len(inputs)} inputs but {len(outputs)} outputs")
        n = len(inputs)
        results = [None] * n

        def on_image(arg, i, st, bad_input, text):
            if st:
                results[i] = _by_status.get(st, Error)(st, text.decode(errors="replace"))

        rep = L.CannyReportC()
        rep.image = L.CANNY_IMAGE(on_image)
        p = L.CannyParamsC(low, high, int(l2), aperture, blur, blur_sigma)
        ins = (ctypes.c_char_p * max(n, 1))(*[s.encode() for s in inputs])
        outs = (ctypes.c_char_p * max(n, 1))(*[s.encode() for s in outputs])
        st = L.group_canny_files(self.handle, byref(p), ins, outs, n, int(jobs), byref(rep))
        if st and all(r is None for r in results):
            _raise(st)
        return results

    def gemm(self, a, b, alpha=1.0, ta=False, tb=False, bf16=False):
        """alpha·op(A)·op(B) in float32 over the group's devices (2-D host arrays)."""
        a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
        if a.dtype != b.dtype or a.ndim != 2 or b.ndim != 2:
            raise InvalidArgument(1, "group gemm: 2-D A and B of one dtype")
        m, k = (a.shape[1], a.shape[0]) if ta else a.shape
        kb, n = (b.shape[1], b.shape[0]) if tb else b.shape
        if k != kb:
            raise InvalidArgument(1, f"group gemm: op(A) is {m}×{k} but op(B) is {kb}×{n}")
        d = L.gemm_desc(_code(a.dtype, bf16), 1, m, n, k, ta, tb)
        d.alpha = alpha
        c = np.empty((m, n), np.float32)
        _check(L.group_gemm(self.handle, byref(d), a.ctypes.data, b.ctypes.data, c.ctypes.data))
        return c


class CannyPipeline(_Closing):
    """Canny edges of a stream of frames, several in flight on the device: send(frame, tag) returns
    at once (waiting only when depth frames are in flight); deliver(tag, edges or None, error or
    None) is called in order, from send, poll and flush, in the calling thread.

    An exception raised by deliver is not lost: the call that was delivering (send, poll, flush)
    raises it once the library has returned (the frame's edges were handed to deliver all the same).
    deliver may close the pipeline or its context: that takes effect when deliver returns, and the
    delivering call then returns quietly. Frames are uint8 arrays (H×W or H×W×3, R, G, B); other
    dtypes are refused, never converted."""

    _rank = -1  # released before everything else of its context

    def __init__(self, ctx, deliver, low, high, l2=False, aperture=3, depth=3):
        self.ctx, self._deliver, self._tags, self._next, self._exc = ctx, deliver, {}, 0, None
        self._cb = L.PIPE_DELIVER(self._on_result)  # kept alive as long as the pipeline
        p = L.CannyParamsC(low, high, int(l2), aperture, 0, 0.0)
        h = c_void_p()
        _check(L.pipe_canny(ctx.handle, byref(p), depth, self._cb, None, byref(h)), ctx._h)
        self._h = h.value
        ctx._adopt(self)

    def _on_result(self, arg, tag, st, img):
        try:
            key = tag or 0
            user = self._tags.pop(key, None)
            if st:
                self._deliver(user, None, _by_status.get(st, Error)(st, L.last_error(self.ctx._h).decode(errors="replace")))
                return
            im = img.contents
            raw = (ctypes.c_uint8 * (im.stride * im.height)).from_address(im.data)
            edges = np.frombuffer(raw, np.uint8).reshape(im.height, im.stride)[:, :im.width].copy()
            self._deliver(user, edges, None)
        except BaseException as e:  # noqa: B902 - kept and raised by the delivering call, never swallowed by ctypes
            if self._exc is None:
                self._exc = e

    def _after(self, st):
        """After a delivering call: raise deliver's exception, else the call's failure (unless deliver
        closed the pipeline, which ends it quietly)."""
        e, self._exc = self._exc, None
        if e is not None:
            raise e
        if st and self._h:
            _raise(st, self.ctx._h)

    @property
    def handle(self):
        if not self._h:
            raise InvalidArgument(1, "the pipeline is closed")
        return self._h

    def send(self, frame, tag=None):
        h = self.handle
        a = np.asarray(frame)
        if a.dtype != np.uint8 or a.ndim not in (2, 3) or (a.ndim == 3 and a.shape[2] not in (1, 3)):
            raise InvalidArgument(1, f"CannyPipeline.send: an 8-bit image of H×W or H×W×3 (R, G, B), not {a.dtype} of shape {a.shape}")
        a = np.ascontiguousarray(a)
        ch = 1 if a.ndim == 2 else a.shape[2]
        im = L.ImageC(a.shape[1], a.shape[0], a.shape[1] * ch, ch, a.ctypes.data)
        self._next += 1
        self._tags[self._next] = tag
        st = L.pipe_send(h, byref(im), self._next)
        if st:
            self._tags.pop(self._next, None)
        self._after(st)

    def poll(self):
        n = L.pipe_poll(self.handle)
        self._after(0)
        return n

    def flush(self):
        st = L.pipe_flush(self.handle)
        self._after(st)

    @property
    def pending(self):
        return L.pipe_pending(self._h) if self._h else 0

    def close(self):
        """Free the pipeline (frames not delivered yet are dropped). From deliver: when it returns."""
        if _is_dead(self):
            return
        if self._h:
            # a context collected in one cycle with its pipeline (the collector clears the weak
            # child list first) is closed already: its pipeline's memory went with it at exit
            if self.ctx.__dict__.get("_h"):
                L.pipe_free(self._h)
            self._h = None
            _kill(self, "the pipeline is closed")

    _release = close

    def __exit__(self, *exc):
        if exc[0] is None and self._h:
            self.flush()
        self.close()
