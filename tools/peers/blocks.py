"""Peers of `clrun bench random|scan|sort`: on a CUDA device PyTorch (torch.rand, torch.randn,
torch.cumsum, torch.sort — CUB's radix sort), else NumPy on the host (Generator(Philox).random and
.standard_normal, np.cumsum, np.sort).

usage: python3 blocks.py WHAT N REPS cuda|host
WHAT: uniform, normal, scan (int32 keys), sort (uint32 keys), pairs (uint32 keys, uint32 values),
sortf (float32 keys), bincount (int32 keys in [0, 256)). Prints "ms MS": the median of REPS runs after a warm-up (CUDA events on the
GPU). Exits non-zero when the peer is missing.
"""
import statistics
import sys
import time

import numpy as np

what, n, reps, where = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]


def median_ms(fn, sync=None, event=None):
    fn()
    if sync:
        sync()
    t = []
    for _ in range(reps):
        if event:
            e0, e1 = event(), event()
            e0.record()
            fn()
            e1.record()
            sync()
            t.append(e0.elapsed_time(e1))
        else:
            t0 = time.perf_counter()
            fn()
            t.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(t)


if where == "cuda":
    import torch
    assert torch.cuda.is_available()
    dev = "cuda"
    ev = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
    sync = torch.cuda.synchronize
    if what == "uniform":
        ms = median_ms(lambda: torch.rand(n, device=dev), sync, ev)
    elif what == "normal":
        ms = median_ms(lambda: torch.randn(n, device=dev), sync, ev)
    elif what == "scan":
        x = torch.randint(-100, 100, (n,), device=dev, dtype=torch.int32)
        ms = median_ms(lambda: torch.cumsum(x, 0, dtype=torch.int32), sync, ev)
    elif what in ("sort", "pairs", "sortf"):
        x = torch.randint(0, 2 ** 31 - 1, (n,), device=dev, dtype=torch.int64).to(torch.int32) if what != "sortf" else \
            torch.randn(n, device=dev)
        if what == "pairs":  # torch.sort returns values and indices: the key-value sort
            ms = median_ms(lambda: torch.sort(x, stable=True), sync, ev)
        else:
            ms = median_ms(lambda: torch.sort(x, stable=True)[0], sync, ev)
    elif what == "bincount":
        x = torch.randint(0, 256, (n,), device=dev, dtype=torch.int32)
        ms = median_ms(lambda: torch.bincount(x, minlength=256), sync, ev)
    else:
        sys.exit(2)
else:
    rng = np.random.default_rng(1)
    g = np.random.Generator(np.random.Philox(1))
    if what == "uniform":
        ms = median_ms(lambda: g.random(n, dtype=np.float32))
    elif what == "normal":
        ms = median_ms(lambda: g.standard_normal(n, dtype=np.float32))
    elif what == "scan":
        x = rng.integers(-100, 100, n, dtype=np.int32)
        ms = median_ms(lambda: np.cumsum(x, dtype=np.int32))
    elif what == "sort":
        x = rng.integers(0, 2 ** 32, n, dtype=np.uint32)
        ms = median_ms(lambda: np.sort(x))
    elif what == "pairs":
        x = rng.integers(0, 2 ** 32, n, dtype=np.uint32)
        ms = median_ms(lambda: np.argsort(x, kind="stable"))
    elif what == "sortf":
        x = rng.standard_normal(n).astype(np.float32)
        ms = median_ms(lambda: np.sort(x))
    elif what == "bincount":
        x = rng.integers(0, 256, n, dtype=np.int32)
        ms = median_ms(lambda: np.bincount(x, minlength=256))
    else:
        sys.exit(2)
print("ms", ms)
