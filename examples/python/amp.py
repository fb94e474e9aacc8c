"""The seed's mixed-precision training loop: f16 matrix products on the device, f32 master weights,
and dynamic loss scaling with GradScaler's names (scale, unscale_, step, update, get_scale).
A softmax classifier on synthetic data; the loss falls and the accuracy rises.

    python3 examples/python/amp.py [STEPS] [DEVICE]
"""
import sys

import numpy as np

import clrun

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
rng = np.random.default_rng(0)
n, d, classes = 2048, 64, 10
centers = rng.standard_normal((classes, d)).astype(np.float32) * 2
y = rng.integers(0, classes, n)
x = (centers[y] + rng.standard_normal((n, d))).astype(np.float32)
w = np.zeros((d, classes), np.float32)  # f32 master weights

with clrun.open(sys.argv[2] if len(sys.argv) > 2 else None) as ctx:
    scaler = clrun.GradScaler(ctx, init_scale=2.0**16, growth_interval=10)
    xh = ctx.upload(x.astype(np.float16))
    skipped = 0
    for step in range(steps):
        logits = clrun.gemm(ctx, xh, w.astype(np.float16))  # f16 in, f32 out
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        loss = -np.log(p[np.arange(n), y] + 1e-12).mean()
        dlogits = p.copy()
        dlogits[np.arange(n), y] -= 1
        dlogits = scaler.scale(dlogits / n).astype(np.float16)  # the scaled seed of backpropagation, in f16
        grad = ctx.upload(clrun.gemm(ctx, xh, dlogits, ta=True).astype(np.float16))  # f16 gradient: may overflow
        scaler.unscale_([grad])

        def sgd() -> None:
            global w
            w -= 0.5 * grad.download().astype(np.float32)
        if not scaler.step(sgd):
            skipped += 1
        scaler.update()
        if step % 50 == 0 or step == steps - 1:
            acc = (logits.argmax(1) == y).mean()
            print(f"step {step:4d}  loss {loss:.4f}  accuracy {100 * acc:5.1f}%  scale {scaler.get_scale():g}")
    print(f"{skipped} of {steps} steps skipped for overflow")
