"""clrun.Stream: a queue of the context made current for the Arrays' work in a with block."""
import threading
from ctypes import byref, c_void_p

from . import _lib as L
from ._core import Event, InvalidArgument, _check, _is_dead, _kill
from ._pool import _pool


# ---- streams ----------------------------------------------------------------------------------------


class Stream:
    """A queue of the context (clrun_queue_new): with stream: makes it the queue the context's calls
    enqueue to (the ops, transfers, generated kernels), and restores the previous one after. Work
    on different streams may overlap; order between them comes from events (record, wait_event).
    get(stream=s) and set(..., stream=s) return at once; the host arrays they use are kept until
    synchronize()."""

    _rank = 1.5  # freed after the kernels and before the buffers, when the context closes

    def __init__(self, ctx):
        self.ctx = ctx
        h = c_void_p()
        _check(L.queue_new(ctx.handle, byref(h)), ctx._h)
        self._h = h.value
        self._tls = threading.local()  # per thread: the queues to go back to (the current queue is per thread)
        self._keep = []
        self._lock = threading.Lock()
        ctx._adopt(self)
        ctx._streams = ctx.__dict__.get("_streams", 0) + 1  # no pooled memory while streams live (see _Pool)
        _pool(ctx).release_all()

    @property
    def handle(self):
        if not self._h:
            raise InvalidArgument(1, "the stream is closed")
        return self._h

    @property
    def int_ptr(self):
        """The cl_command_queue as an int (pyopencl.CommandQueue.from_int_ptr)."""
        return L.queue_cl(self.handle)

    def __enter__(self):
        """Make the stream this thread's current queue on the context (other threads keep theirs)."""
        ch = self.ctx.handle
        prev = L.queue_current(ch)
        _check(L.queue_use(ch, self.handle), self.ctx._h)
        stack = self._tls.__dict__.setdefault("prev", [])
        stack.append(prev)
        return self

    def __exit__(self, *exc):
        stack = self._tls.__dict__.get("prev")
        prev = stack.pop() if stack else None
        if self.__dict__.get("_h") and self.ctx._h:
            L.queue_use(self.ctx._h, prev)

    def _async(self, enqueue, keep):
        e = c_void_p()
        with self:
            _check(enqueue(byref(e)), self.ctx._h)
        with self._lock:
            self._keep.append(keep)
        return Event(e.value)

    def record(self):
        """An Event that completes when everything queued on the stream so far has."""
        e = c_void_p()
        _check(L.queue_marker(self.handle, byref(e)), self.ctx._h)
        return Event(e.value)

    def wait_event(self, event):
        """Commands queued on the stream from now on start after event completes."""
        arr = (c_void_p * 1)(event._h)
        _check(L.queue_wait(self.handle, arr, 1), self.ctx._h)

    def synchronize(self):
        """Wait for everything queued on the stream; the host arrays of its transfers are released."""
        _check(L.queue_finish(self.handle), self.ctx._h)
        with self._lock:
            self._keep.clear()

    def close(self):
        self._release()

    def _release(self):
        if _is_dead(self):
            return
        if self._h:
            # clrun_close frees its streams: after it (a context collected with its stream in one
            # cycle, whose weak child list the collector cleared first) the handle is gone already
            if self.ctx.__dict__.get("_h"):
                L.queue_free(self._h)  # waits for the stream's commands; threads that had it current go back to the context's own
            self._h = None
            self._keep.clear()
            self.ctx._streams -= 1
        _kill(self, "the stream is closed")

    def __del__(self):
        try:
            self._release()
        except Exception:
            pass


class Ordered:
    """with ctx.ordered(wait_for=[events]) as o: … — every op, launch and transfer queued in the
    block (on the thread's current queue) starts after the events, and o.event (after the block)
    completes when they all have: PyOpenCL's wait_for= and returned event, and CLBlast's cl_event*,
    for any op without a keyword on each (clrun_queue_wait before, clrun_queue_marker after)."""

    def __init__(self, ctx, wait_for=None):
        self.ctx, self.event = ctx, None
        evs = [] if wait_for is None else [wait_for] if isinstance(wait_for, Event) else list(wait_for)
        for e in evs:
            if not isinstance(e, Event) or not e._h:
                raise InvalidArgument(1, f"wait_for: clrun.Events (not freed), not {e!r}")
        self._events = evs

    def __enter__(self):
        if self._events:
            arr = (c_void_p * len(self._events))(*[e._h for e in self._events])
            _check(L.queue_wait(L.queue_current(self.ctx.handle), arr, len(self._events)), self.ctx._h)
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            e = c_void_p()
            _check(L.queue_marker(L.queue_current(self.ctx.handle), byref(e)), self.ctx._h)
            self.event = Event(e.value)
