"""Peer of `clrun bench conv`: torch.nn.functional.conv2d and its gradients (cuDNN with
torch.backends.cudnn.benchmark on CUDA, PyTorch's CPU kernels on the host), or without PyTorch on
the host NumPy: im2col and one matrix product per image batch (OpenBLAS where NumPy links it).

usage: python3 conv.py fwd|bwd-data|bwd-weights N C HW K R STRIDE REPS cuda|host f16|f32
Prints "ms MS" (the median over REPS rounds after a warm-up; a round is 10 back to back between CUDA
events on the GPU, one on the host) and "impl I" (1 cuDNN, 2 PyTorch CPU, 3 NumPy). Exits non-zero
when the peer is missing.
"""
import statistics
import sys
import time

import numpy as np

pas, n, c, hw, k, r, stride, reps, where, typ = sys.argv[1], *map(int, sys.argv[2:9]), sys.argv[9], sys.argv[10]
pad = r // 2
p = (hw + 2 * pad - r) // stride + 1
rng = np.random.default_rng(1)
dt = np.float16 if typ == "f16" else np.float32
x = (rng.standard_normal((n, c, hw, hw)) * 0.1).astype(dt)
w = (rng.standard_normal((k, c, r, r)) * 0.1).astype(dt)
dy = (rng.standard_normal((n, k, p, p)) * 0.1).astype(dt)


def timed(fn, sync=lambda: None, per=1):
    fn()
    sync()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(per):
            fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3 / per)
    return statistics.median(times)


try:
    import torch
    import torch.nn.grad as G
    import torch.nn.functional as F
    have_torch = where != "cuda" or torch.cuda.is_available()
except ImportError:
    have_torch = False
    if where == "cuda":
        sys.exit(1)

if have_torch:
    dev = "cuda" if where == "cuda" else "cpu"
    torch.backends.cudnn.benchmark = True
    tx, tw, tdy = (torch.from_numpy(a).to(dev) for a in (x, w, dy))
    fns = {"fwd": lambda: F.conv2d(tx, tw, stride=stride, padding=pad),
           "bwd-data": lambda: G.conv2d_input(tx.shape, tw, tdy, stride=stride, padding=pad),
           "bwd-weights": lambda: G.conv2d_weight(tx, tw.shape, tdy, stride=stride, padding=pad)}
    if dev == "cuda":
        ms = timed(fns[pas], torch.cuda.synchronize, 10)
    else:
        ms = timed(fns[pas])
    print("ms", ms)
    print("impl", 1 if dev == "cuda" else 2)
    sys.exit(0)

# NumPy: im2col (a strided view, copied once), then matrix products in f32
x, w, dy = x.astype(np.float32), w.astype(np.float32), dy.astype(np.float32)
xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))


def im2col():
    s = xp.strides
    v = np.lib.stride_tricks.as_strided(xp, (n, c, r, r, p, p), (s[0], s[1], s[2], s[3], s[2] * stride, s[3] * stride))
    return np.ascontiguousarray(v.transpose(1, 2, 3, 0, 4, 5)).reshape(c * r * r, n * p * p)


def fwd():
    return (w.reshape(k, -1) @ im2col()).reshape(k, n, p, p).transpose(1, 0, 2, 3)


def bwd_weights():
    return (dy.transpose(1, 0, 2, 3).reshape(k, -1) @ im2col().T).reshape(w.shape)


def bwd_data():
    cols = (w.reshape(k, -1).T @ dy.transpose(1, 0, 2, 3).reshape(k, -1)).reshape(c, r, r, n, p, p)
    dx = np.zeros_like(xp)
    for i in range(r):
        for j in range(r):
            dx[:, :, i:i + stride * p:stride, j:j + stride * p:stride] += cols[:, i, j].transpose(1, 0, 2, 3)
    return dx[:, :, pad:pad + hw, pad:pad + hw]


print("ms", timed({"fwd": fwd, "bwd-data": bwd_data, "bwd-weights": bwd_weights}[pas]))
print("impl", 3)
