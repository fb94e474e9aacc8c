"""A ResNet-18-style network trained on Fashion-MNIST with clrun.nn and mixed precision: the article's
PyTorch loop (autocast + GradScaler) with clrun's names, and an explicit backward pass instead of
autograd. f32 master weights, f16 activations, SGD with Nesterov momentum and a cosine schedule;
per epoch the loss, the accuracy on held-out images, images/s and the loss scale; the weights saved
as .npz (PyTorch's names) and evaluated.

    python3 examples/python/cnn.py [--epochs N] [--steps N] [--width W] [--batch B] [--train N] [--test N]
                                   [--save FILE.npz] [--min-accuracy PCT] [--data DIR] [DEVICE]

The data set is Debian's dataset-fashion-mnist (gzip'd idx files, read here with gzip and NumPy).
"""
import argparse
import gzip
import os
import sys
import time

from typing import Any

import numpy as np
import numpy.typing as npt

import clrun
from clrun import nn


def read_idx(path: str) -> npt.NDArray[np.uint8]:
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims))
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


class BasicBlock(nn.Module):
    """conv-bn-relu-conv-bn plus the shortcut (identity, or a strided 1x1 conv and bn), then ReLU."""

    def __init__(self, cin: int, cout: int, stride: int, seed: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False, seed=seed)
        self.bn1, self.relu1 = nn.BatchNorm2d(cout), nn.ReLU()
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False, seed=seed + 1)
        self.bn2, self.relu2 = nn.BatchNorm2d(cout), nn.ReLU()
        self.downsample: Any = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False, seed=seed + 2), nn.BatchNorm2d(cout))

    def forward(self, x: clrun.Array) -> clrun.Array:
        y = self.bn2(self.conv2(self.relu1(self.bn1(self.conv1(x)))))
        out: clrun.Array = self.relu2(y + (self.downsample(x) if self.downsample is not None else x))
        return out

    def backward(self, grad: clrun.Array) -> clrun.Array:
        g = self.relu2.backward(grad)
        a = self.conv1.backward(self.bn1.backward(self.relu1.backward(self.conv2.backward(self.bn2.backward(g)))))
        dx: clrun.Array = a + (self.downsample.backward(g) if self.downsample is not None else g)
        return dx


def resnet18(width: int) -> nn.Sequential:
    layers: list[nn.Module] = [nn.Conv2d(1, width, 3, 1, 1, bias=False, seed=1), nn.BatchNorm2d(width), nn.ReLU()]
    cin = width
    for s in range(4):
        for b in range(2):
            layers.append(BasicBlock(cin, width << s, 2 if s > 0 and b == 0 else 1, seed=10 * (2 * s + b) + 10))
            cin = width << s
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8 * width, 10, seed=2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--steps", type=int, default=0, help="stop after this many steps")
    ap.add_argument("--width", type=int, default=16)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--train", type=int, default=60000)
    ap.add_argument("--test", type=int, default=10000)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--save")
    ap.add_argument("--min-accuracy", type=float, default=-1)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("device", nargs="?")
    a = ap.parse_args()
    try:
        xtr, ytr = read_idx(os.path.join(a.data, "train-images-idx3-ubyte.gz")), read_idx(os.path.join(a.data, "train-labels-idx1-ubyte.gz"))
        xte, yte = read_idx(os.path.join(a.data, "t10k-images-idx3-ubyte.gz")), read_idx(os.path.join(a.data, "t10k-labels-idx1-ubyte.gz"))
    except OSError as e:
        sys.exit(f"cnn.py: {e} (Debian's dataset-fashion-mnist installs the data set)")

    def norm(img: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
        return ((img.astype(np.float32) / 255 - 0.2860) / 0.3530).reshape(-1, 1, 28, 28)

    xtr, ytr, xte, yte = xtr[:a.train], ytr[:a.train], xte[:a.test], yte[:a.test]
    per_epoch = len(xtr) // a.batch
    total = a.steps or per_epoch * a.epochs
    rng = np.random.default_rng(2026)
    with clrun.open(a.device) as ctx:
        print(f"device: {ctx.device.name}; ResNet-18 (width {a.width}), batch {a.batch}, f16 activations, f32 master weights")
        net, lossf = resnet18(a.width), nn.CrossEntropyLoss()
        opt = nn.SGD(net.parameters(), lr=a.lr, momentum=0.9, weight_decay=5e-4, nesterov=True)
        scaler = clrun.GradScaler(ctx)                                 # scaler = GradScaler()
        step, t0, acc = 0, 0.0, 0.0
        while step < total:
            order = rng.permutation(len(xtr))
            losses = []
            for b in range(per_epoch):
                if step == total:
                    break
                idx = order[b * a.batch:(b + 1) * a.batch]
                x = ctx.asarray(norm(xtr[idx]).astype(np.float16))   # with autocast(): f16 activations
                opt.zero_grad()                                       # optimizer.zero_grad()
                loss = lossf(net(x), ytr[idx])                        # loss = criterion(model(inputs), targets)
                net.backward(lossf.backward(scale=scaler.get_scale()))  # scaler.scale(loss).backward()
                scaler.unscale_([p.grad for p in net.parameters() if p.grad is not None])
                warm = max(total // 10, 1)
                opt.lr = a.lr * ((step + 1) / warm if step < warm else 0.5 * (1 + np.cos(np.pi * (step - warm) / max(total - warm, 1))))
                scaler.step(opt.step)                                 # scaler.step(optimizer)
                scaler.update()                                       # scaler.update()
                losses.append(float(loss))
                step += 1
                if step == 1:
                    t0 = time.perf_counter()
            acc = evaluate(ctx, net, norm(xte), yte)
            ips = (step - 1) * a.batch / (time.perf_counter() - t0) if step > 1 else 0
            print(f"cnn.py     step {step:5d}  loss {np.mean(losses):.4f}  test {100 * acc:5.2f}%  {ips:7.0f} images/s  scale {scaler.get_scale():g}")
        if a.save:
            net.save(a.save)
            print(f"cnn.py     weights written to {a.save}")
        if 100 * acc < a.min_accuracy:
            sys.exit(f"cnn.py: test accuracy {100 * acc:.2f}% is below {a.min_accuracy}%")
        print(f"cnn.py     test accuracy {100 * acc:.2f}%")


def evaluate(ctx: clrun.Context, net: nn.Module, x: npt.NDArray[np.float32], y: npt.NDArray[np.uint8], batch: int = 256) -> float:
    net.eval()
    right = 0
    for b in range(0, len(x), batch):
        logits = np.asarray(net(ctx.asarray(x[b:b + batch].astype(np.float16))).get())
        right += int((logits.argmax(1) == y[b:b + batch]).sum())
    net.train()
    return right / len(x)


if __name__ == "__main__":
    main()
