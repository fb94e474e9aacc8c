"""The per-context memory pool of clrun.Array."""
import threading
from ctypes import byref, c_void_p

from . import _lib as L
from ._core import _check


# ---- the memory pool --------------------------------------------------------------------------------


class _Pool:
    """Device memory of Arrays that were collected, kept per size for the next Array of that size
    (allocation on some drivers costs more than a small kernel). Only while the context has no
    Stream: with one queue, whatever runs next on the memory is queued after what used it. A Stream
    made empties the pool, and while one lives, memory is given back to the driver instead (which
    frees it once the commands using it finish). Bounded: a quarter of the device's memory; freed
    when the context closes."""
    _rank = 2.5  # after the Arrays (which return their memory here as the context closes)

    def __init__(self, ctx):
        self.ctx = ctx
        self.lock = threading.Lock()
        self.free = {}  # nbytes -> [handle]
        self.held = 0
        self.cap = ctx.device.global_mem // 4
        ctx._adopt(self)

    def take(self, nbytes):
        with self.lock:
            lst = self.free.get(nbytes)
            if lst:
                self.held -= nbytes
                return lst.pop()
        h = c_void_p()
        ch = self.ctx.handle  # raises once the context is closed
        st = L.buf_new(ch, nbytes, 0, byref(h))
        if st == 5 and self.held:  # out of device memory: give the pool back and try once more
            self.release_all()
            st = L.buf_new(ch, nbytes, 0, byref(h))
        _check(st, self.ctx._h)
        return h.value

    def give(self, h, nbytes):
        if not self.ctx._h:
            return
        if self.held + nbytes > self.cap or self.ctx.__dict__.get("_streams"):
            L.buf_free(h)
            return
        with self.lock:
            self.free.setdefault(nbytes, []).append(h)
            self.held += nbytes

    def release_all(self):
        with self.lock:
            for lst in self.free.values():
                for h in lst:
                    L.buf_free(h)
            self.free.clear()
            self.held = 0

    def _release(self):
        self.release_all()


def _pool(ctx):
    p = ctx.__dict__.get("_pool")
    if p is None:
        p = ctx._pool = _Pool(ctx)
    return p
