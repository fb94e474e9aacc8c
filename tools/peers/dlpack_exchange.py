"""The cost of exchanging 1 GiB between clrun and PyTorch through DLPack on NVIDIA (memory shared with
the CUDA driver, $CLRUN_CUDA=1): clrun -> PyTorch (torch.from_dlpack), PyTorch -> clrun on memory
clrun exported (a view), and PyTorch's own tensor -> clrun (one device copy). Median of 20, in ms.

    CLRUN_CUDA=1 python3 tools/peers/dlpack_exchange.py [device]
"""
import os
import statistics
import sys
import time

import numpy as np
import torch

import clrun

os.environ.setdefault("CLRUN_CUDA", "1")
N = 1 << 28  # float32: 1 GiB


def median_ms(f, reps=20):
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        f()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


with clrun.open(sys.argv[1] if len(sys.argv) > 1 else "gpu") as ctx:
    a = ctx.zeros((N,), np.float32)
    print("device", ctx.device.name, "dlpack device", a.__dlpack_device__())
    t = torch.from_dlpack(a)
    same = t.data_ptr()
    print(f"clrun -> torch: {median_ms(lambda: torch.from_dlpack(a)):.3f} ms (no copy: pointer {same:#x})")
    print(f"torch -> clrun, memory clrun exported: {median_ms(lambda: clrun.from_dlpack(t, ctx)):.3f} ms (a view)")
    u = torch.ones(N, device="cuda")
    print(f"torch's own tensor -> clrun: {median_ms(lambda: clrun.from_dlpack(u, ctx), 5):.3f} ms (one device copy)")
    t.add_(1)  # PyTorch writes the shared memory; clrun reads it after
    b = clrun.from_dlpack(t, ctx)
    print("after torch add_: clrun sum", float(b.sum()), "expected", float(N))
