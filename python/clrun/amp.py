"""Dynamic loss scaling with PyTorch's GradScaler's names and semantics, over the C scaler
(clrun_scaler: the unscale and the inf/NaN check run on the device)."""
from ctypes import byref, c_int

import numpy as np

from . import _lib as L
from ._core import BF16, F16, F32, Buffer, InvalidArgument, _check


class GradScaler:
    """scale(loss) → loss × scale; unscale_(grads) divides device gradients (Buffers of float32,
    float16, or uint16 bf16 patterns with bf16=True) by the scale and checks them for inf/NaN;
    step(fn) calls fn() unless a gradient was not finite (returns whether it ran); update() moves the
    scale: ×backoff_factor after an overflow, ×growth_factor after growth_interval clean steps."""

    def __init__(self, ctx, init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
        self.ctx, self.enabled = ctx, enabled
        self._s = L.ScalerC()
        L.scaler_init(byref(self._s))
        self._s.scale, self._s.growth_factor, self._s.backoff_factor = init_scale, growth_factor, backoff_factor
        self._s.growth_interval = growth_interval
        self._pending = None  # (found_inf, the scaler's state after the update) between step and update
        self._live = True
        ctx._adopt(self)  # its device memory is freed before its context's

    _rank = 2

    def _release(self):
        if getattr(self, "_live", False):
            self._live = False
            L.scaler_free(byref(self._s))

    def __del__(self):
        try:
            self._release()
        except Exception:
            pass

    def get_scale(self):
        return float(self._s.scale) if self.enabled else 1.0

    def scale(self, x):
        """x × the current scale (a number or an array; f32 arithmetic, as PyTorch's)."""
        if not self.enabled:
            return x
        return np.float32(x) * np.float32(self._s.scale) if np.isscalar(x) else np.asarray(x, np.float32) * np.float32(self._s.scale)

    def unscale_(self, grads, bf16=False):
        """Divide the gradients by the scale on the device and record whether any is inf or NaN."""
        if not self.enabled:
            return
        gs = (L.GradC * len(grads))()
        for i, g in enumerate(grads):
            if not isinstance(g, Buffer):
                raise InvalidArgument(1, "unscale_: gradients are device Buffers (ctx.upload(...))")
            t = BF16 if bf16 else {np.dtype(np.float32): F32, np.dtype(np.float16): F16}.get(g.dtype)
            if t is None:
                raise InvalidArgument(1, f"unscale_: float32 or float16 gradients (bf16: uint16 with bf16=True), not {g.dtype}")
            gs[i] = L.GradC(g.handle, 0, g.size, t)
        _check(L.scaler_unscale(self.ctx.handle, byref(self._s), gs, len(grads)), self.ctx._h)

    def _resolve(self):
        if self._pending is None:
            before = (self._s.scale, self._s.growth_tracker)
            found = c_int()
            _check(L.scaler_update(self.ctx.handle, byref(self._s), byref(found)), self.ctx._h)
            self._pending = (bool(found.value), (self._s.scale, self._s.growth_tracker))
            self._s.scale, self._s.growth_tracker = before  # the scale moves at update(), as PyTorch's does
        return self._pending[0]

    def step(self, fn, *args, **kwargs):
        """Call fn(*args, **kwargs) unless the unscaled gradients held inf or NaN; True when it ran."""
        if not self.enabled:
            fn(*args, **kwargs)
            return True
        if self._resolve():
            return False
        fn(*args, **kwargs)
        return True

    def update(self):
        """Move the scale for the next step (backoff after an overflow, growth after an interval of clean steps)."""
        if not self.enabled:
            return
        self._resolve()
        self._s.scale, self._s.growth_tracker = self._pending[1]
        self._pending = None

    def state_dict(self):
        return {"scale": self.get_scale(), "growth_factor": self._s.growth_factor, "backoff_factor": self._s.backoff_factor,
                "growth_interval": self._s.growth_interval, "_growth_tracker": self._s.growth_tracker}
