"""PyTorch's matmul on CUDA (cuBLAS), the peer of `clrun bench mixed`.

usage: python3 torch_gemm.py M N K REPS
Prints "f16 MS" and "f32 MS": the median of REPS products after a warm-up, timed with CUDA events.
Exits non-zero when torch or a CUDA device is missing.
"""
import statistics
import sys

import torch

assert torch.cuda.is_available()
m, n, k, reps = map(int, sys.argv[1:5])
for dt, name in ((torch.float16, 'f16'), (torch.float32, 'f32')):
    a = torch.randn(m, k, device='cuda', dtype=dt)
    b = torch.randn(k, n, device='cuda', dtype=dt)
    torch.matmul(a, b)
    torch.cuda.synchronize()
    t = []
    for _ in range(reps):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        torch.matmul(a, b)
        e1.record()
        torch.cuda.synchronize()
        t.append(e0.elapsed_time(e1))
    print(name, statistics.median(t))
