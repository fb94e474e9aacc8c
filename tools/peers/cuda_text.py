"""Peer of `clrun bench cuda`: the bench's CUDA source run natively through CuPy's RawKernel, with the
launch shapes clrun uses (tools/clrun/bench/cuda.c).

usage: python3 cuda_text.py SOURCE.cu KERNEL N REPS
KERNEL: saxpy or reduce (N elements), matmul or transpose (N×N). Prints "ms MS": the median over REPS
samples of the time per launch (CUDA events, each sample launches enough times to last ~10 ms),
after a warm-up. Exits non-zero when CuPy or a CUDA device is missing.
"""
import statistics
import sys

import cupy as cp
import numpy as np

path, kernel, n, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
with open(path) as f:
    fn = cp.RawModule(code=f.read()).get_function(kernel)

x = cp.random.default_rng(1).standard_normal(n * n if kernel in ("matmul", "transpose") else n, dtype=cp.float32)
if kernel == "saxpy":
    y = x.copy()
    launch = lambda: fn(((n + 255) // 256,), (256,), (np.int32(n), np.float32(2.5), x, y))  # noqa: E731
elif kernel == "matmul":
    c = cp.empty_like(x)
    launch = lambda: fn((n // 16, n // 16), (16, 16), (x, x, c, np.int32(n)))  # noqa: E731
elif kernel == "reduce":
    out = cp.empty((n + 511) // 512, cp.float32)
    launch = lambda: fn(((n + 511) // 512,), (256,), (x, out, np.int32(n)))  # noqa: E731
elif kernel == "transpose":
    o = cp.empty_like(x)
    launch = lambda: fn((n // 32, n // 32), (32, 8), (o, x, np.int32(n), np.int32(n)))  # noqa: E731
else:
    sys.exit(f"cuda_text.py: unknown kernel {kernel}")

e0, e1 = cp.cuda.Event(), cp.cuda.Event()
launch()
e0.record()
launch()
e1.record()
e1.synchronize()
one = cp.cuda.get_elapsed_time(e0, e1)
per = 1 if one > 10 else min(1000, int(10 / max(one, 1e-3)) + 1)
t = []
for _ in range(reps):
    e0.record()
    for _ in range(per):
        launch()
    e1.record()
    e1.synchronize()
    t.append(cp.cuda.get_elapsed_time(e0, e1) / per)
print("ms", statistics.median(t))
