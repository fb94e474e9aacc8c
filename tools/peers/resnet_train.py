"""Peer of examples/cnn: the same ResNet-18-style network (28x28x1 input, a 3x3 stem without max
pooling, four stages of two basic blocks of W, 2W, 4W, 8W channels, global average pooling, a
linear layer to 10 classes) trained in PyTorch eager mode with AMP (autocast + GradScaler), SGD with
Nesterov momentum; prints "images_per_s X" over STEPS steps after WARMUP, on random data of the
same shapes (the data loader is not timed, as examples/cnn does not time its host-side batches).

usage: python3 resnet_train.py BATCH WIDTH STEPS [cuda|cpu]
"""
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

batch, width, steps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
dev = sys.argv[4] if len(sys.argv) > 4 else "cuda"


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (self.down(x) if self.down is not None else x))


class Net(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.conv1 = nn.Conv2d(1, w, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(w)
        layers, cin = [], w
        for s in range(4):
            for b in range(2):
                layers.append(Block(cin, w << s, 2 if s > 0 and b == 0 else 1))
                cin = w << s
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(8 * w, 10)

    def forward(self, x):
        x = self.layers(F.relu(self.bn1(self.conv1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


torch.backends.cudnn.benchmark = True
model = Net(width).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)
scaler = torch.cuda.amp.GradScaler(enabled=dev == "cuda")
x = torch.randn(batch, 1, 28, 28, device=dev)
y = torch.randint(0, 10, (batch,), device=dev)


def step():
    opt.zero_grad(set_to_none=True)
    with torch.autocast(device_type=dev, dtype=torch.float16 if dev == "cuda" else torch.bfloat16):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()


sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
for _ in range(10):
    step()
sync()
t0 = time.perf_counter()
for _ in range(steps):
    step()
sync()
print("images_per_s", batch * steps / (time.perf_counter() - t0))
