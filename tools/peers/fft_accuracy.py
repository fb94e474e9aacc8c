"""The accuracy side of issue-style FFT targets: clrun.fft against cuFFT (torch.fft) on the same inputs,
both measured as the relative L2 error against NumPy's transform in float64.

usage: python3 fft_accuracy.py [DEVICE]   (with clrun importable: PYTHONPATH=python, CLRUN_LIBRARY=...)
Prints one line per length: "N clrun_err cufft_err ratio", then the worst ratio over the lengths
2..4096 (every length up to 512, then every 13th) and the powers of two up to 2^24. Without torch and
CUDA, only clrun's errors are printed.
"""
import sys

import numpy as np

import clrun
import clrun.fft as cf

try:
    import torch
    cuda = torch.cuda.is_available()
except ImportError:
    cuda = False

ctx = clrun.open(sys.argv[1] if len(sys.argv) > 1 else None)
rng = np.random.default_rng(5)
lengths = list(range(2, 513)) + list(range(513, 4097, 13)) + [2 ** k for k in range(13, 25)]
worst, worst_n, rows = 0.0, None, []
for n in lengths:
    batch = max(1, min(8, (1 << 20) // n))
    x = (rng.standard_normal((batch, n)) + 1j * rng.standard_normal((batch, n))).astype(np.complex64)
    ref = np.fft.fft(x.astype(np.complex128))
    den = np.linalg.norm(ref)
    e_clrun = np.linalg.norm(cf.fft(x, ctx=ctx) - ref) / den
    if cuda:
        g = torch.fft.fft(torch.from_numpy(x).cuda()).cpu().numpy()
        e_cu = np.linalg.norm(g - ref) / den
        ratio = e_clrun / e_cu
        if ratio > worst:
            worst, worst_n = ratio, n
        print(f"{n} {e_clrun:.3e} {e_cu:.3e} {ratio:.3f}", flush=True)
    else:
        print(f"{n} {e_clrun:.3e}", flush=True)
if cuda:
    print(f"worst ratio {worst:.3f} at n = {worst_n} over {len(lengths)} lengths")
