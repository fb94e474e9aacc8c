"""PyTorch's INT8 GEMM (torch._int_mm: cuBLASLt, s8 x s8 -> s32) and 2:4 sparse f16 GEMM
(torch.sparse.to_sparse_semi_structured: cuSPARSELt or CUTLASS) on CUDA, peers of `clrun bench
int8` and `clrun bench sparse`.

usage: python3 torch_int8.py M N K REPS
Prints "int8 MS" (A M x K row-major times B K x N, B's storage N x K as cuBLASLt wants it), "f16 MS"
(dense matmul of the same shape) and "sparse MS" (A pruned 2:4, semi-structured) when each is
available: the median of REPS products after a warm-up, timed with CUDA events. Exits non-zero when
torch or a CUDA device is missing.
"""
import statistics
import sys

import torch

assert torch.cuda.is_available()
m, n, k, reps = map(int, sys.argv[1:5])


def median_ms(fn):
    fn()
    torch.cuda.synchronize()
    t = []
    for _ in range(reps):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        fn()
        e1.record()
        torch.cuda.synchronize()
        t.append(e0.elapsed_time(e1))
    return statistics.median(t)


try:
    a8 = torch.randint(-128, 128, (m, k), device='cuda', dtype=torch.int8)
    b8 = torch.randint(-128, 128, (n, k), device='cuda', dtype=torch.int8).t()
    print('int8', median_ms(lambda: torch._int_mm(a8, b8)))
except Exception:  # an older torch, or a shape cuBLASLt refuses
    pass
a = torch.randn(m, k, device='cuda', dtype=torch.float16)
b = torch.randn(k, n, device='cuda', dtype=torch.float16)
print('f16', median_ms(lambda: torch.matmul(a, b)))
try:
    from torch.sparse import to_sparse_semi_structured
    mask = torch.tensor([1, 1, 0, 0], device='cuda', dtype=torch.bool).repeat(m, k // 4)
    sa = to_sparse_semi_structured(a.masked_fill(~mask, 0))
    print('sparse', median_ms(lambda: torch.mm(sa, b)))
except Exception:
    pass
