"""Peer of `clrun bench fft`: torch.fft on a CUDA device (cuFFT), else numpy.fft (pocketfft) on the host.

usage: python3 fft.py KIND SHAPE BATCH REPS cuda|host
KIND: c2c (complex64 forward) or r2c (float32 forward); SHAPE: the transformed lengths, "4096x4096";
BATCH: transforms one after another. Prints "ms MS": the median over REPS rounds after a warm-up of
one transform's time (a round runs 10 back to back between CUDA events on the GPU, one on the host).
Exits non-zero when the peer is missing.
"""
import statistics
import sys
import time

import numpy as np

kind, shape, batch, reps, where = sys.argv[1], tuple(int(v) for v in sys.argv[2].split("x")), int(sys.argv[3]), int(sys.argv[4]), \
    sys.argv[5]
full = ((batch,) if batch > 1 else ()) + shape
axes = tuple(range(-len(shape), 0))
rng = np.random.default_rng(1)
x = rng.standard_normal(full, dtype=np.float32)
if kind == "c2c":
    x = (x + 1j * rng.standard_normal(full, dtype=np.float32)).astype(np.complex64)

if where == "cuda":
    import torch
    assert torch.cuda.is_available()
    t = torch.from_numpy(x).cuda()
    fn = (lambda: torch.fft.fftn(t, dim=axes)) if kind == "c2c" else (lambda: torch.fft.rfftn(t, dim=axes))
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(10):
            fn()
        e1.record()
        torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1) / 10)
else:
    fn = (lambda: np.fft.fftn(x, axes=axes)) if kind == "c2c" else (lambda: np.fft.rfftn(x, axes=axes))
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
print("ms", statistics.median(times))
