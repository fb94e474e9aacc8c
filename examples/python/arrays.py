"""A NumPy script ported to the device by swapping the array module's calls for clrun.Array's:
arrays made on the device, arithmetic, a matrix product, a reduction, a generated kernel, and the
result brought back only at the end.

    python3 examples/python/arrays.py [DEVICE]
"""
import sys

import numpy as np

import clrun

rng = np.random.default_rng(0)
x = rng.standard_normal((512, 256), dtype=np.float32)
w = rng.standard_normal((256, 64), dtype=np.float32)
bias = rng.standard_normal((512, 64), dtype=np.float32)

# the same computation in NumPy, for the check at the end
want = np.maximum(x @ w + bias, np.float32(0)).sum()

relu = clrun.elementwise("float *y, const float *x", "y[i] = fmax(x[i], 0.0f)", name="relu")
with clrun.open(sys.argv[1] if len(sys.argv) > 1 else None) as ctx:
    X, W, B = ctx.asarray(x), ctx.asarray(w), ctx.asarray(bias)
    H = X @ W + B  # on the device: a GEMM and an element-wise add
    Y = ctx.empty(H.shape)
    relu(Y, H)  # a generated kernel
    total = Y.sum()  # the only value that comes back
    half = (X.astype(np.float16) @ W.astype(np.float16)).get()  # f16 inputs, f32 products
    print(f"on {ctx.device.name}: sum of relu(x @ w + b) = {total:.4f} (NumPy {want:.4f}); "
          f"f16 product differs from f32 by at most {float(np.abs(half - x @ w).max()):.3g}")
    assert abs(float(total) - float(want)) <= 1e-4 * float(np.abs(np.maximum(x @ w + bias, 0)).sum())
