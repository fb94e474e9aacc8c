"""clrun.nn — a small module layer with PyTorch's names: Sequential, Conv2d, BatchNorm2d, ReLU, GELU,
MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, Flatten, Linear, Dropout, CrossEntropyLoss, and the
optimisers SGD and AdamW.

There is no autograd: every module has forward(x) and backward(grad) (the gradient of its output in,
the gradient of its input out), and backward adds its parameters' gradients to their .grad, as
PyTorch's does (zero_grad() clears them). Parameters are float32 master weights; a module given a
float16 input computes in float16 with float32 accumulation (the weights cast for the call) and
hands float32 gradients back, which is PyTorch's autocast recipe. Parameters live in NumPy until the
first forward (or .to(ctx)) puts them on the input's context. train() and eval() switch batch norm and
dropout; state_dict(), save(path.npz) and load(path.npz) use PyTorch's parameter names.
"""
import math

import numpy as np

from . import functional as F
from .._core import InvalidArgument

__all__ = ["Parameter", "Module", "Sequential", "Conv2d", "BatchNorm2d", "ReLU", "GELU", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d",
           "Flatten", "Linear", "Dropout", "CrossEntropyLoss", "SGD", "AdamW", "functional"]


def _is_array(x):
    from .._array import Array
    return isinstance(x, Array)


class Parameter:
    """A float32 tensor to learn: .data (NumPy until placed on a context, then a clrun.Array) and
    .grad (a float32 Array, or None)."""

    def __init__(self, value):
        self.data = np.ascontiguousarray(value, dtype=np.float32)
        self.grad = None

    @property
    def shape(self):
        return tuple(self.data.shape)

    def to(self, ctx):
        if not _is_array(self.data):
            self.data = ctx.asarray(self.data)
        elif self.data.ctx is not ctx:
            raise InvalidArgument(1, "a parameter already lives on another context")
        return self

    def accumulate(self, g):
        """grad += g (float32), as PyTorch's backward adds to .grad."""
        if g.dtype != np.float32:
            g = g.astype(np.float32)
        self.grad = g if self.grad is None else self.grad + g

    def numpy(self):
        return self.data.get() if _is_array(self.data) else np.array(self.data)


class Module:
    """A layer: forward(x), backward(grad); parameters and buffers by attribute name."""

    def __init__(self):
        self.training = True

    def __call__(self, *args):
        return self.forward(*args)

    def forward(self, x):
        raise NotImplementedError

    def backward(self, grad):
        raise NotImplementedError

    def children(self):
        return [(k, v) for k, v in vars(self).items() if isinstance(v, Module)]

    def named_parameters(self, prefix=""):
        for k, v in vars(self).items():
            if isinstance(v, Parameter):
                yield prefix + k, v
        for k, m in self.children():
            yield from m.named_parameters(prefix + k + ".")

    def parameters(self):
        return [p for _, p in self.named_parameters()]

    def named_buffers(self, prefix=""):
        for k in getattr(self, "_buffers", ()):
            yield prefix + k, getattr(self, k)
        for k, m in self.children():
            yield from m.named_buffers(prefix + k + ".")

    def train(self, mode=True):
        self.training = bool(mode)
        for _, m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def zero_grad(self):
        for p in self.parameters():
            p.grad = None

    def to(self, ctx):
        """Put the parameters and buffers on ctx."""
        for p in self.parameters():
            p.to(ctx)
        for name, b in list(self.named_buffers()):
            if not _is_array(b):
                self._set_buffer(name, ctx.asarray(np.ascontiguousarray(b, dtype=np.float32)))
        return self

    def _set_buffer(self, name, value):
        m = self
        *path, last = name.split(".")
        for k in path:
            m = getattr(m, k)
        setattr(m, last, value)

    def state_dict(self):
        """Every parameter and buffer as NumPy, by PyTorch's names (conv1.weight, bn1.running_mean, ...)."""
        out = {k: p.numpy() for k, p in self.named_parameters()}
        for k, b in self.named_buffers():
            out[k] = b.get() if _is_array(b) else np.array(b)
        return out

    def load_state_dict(self, state):
        """Take values by name; a missing or extra name, or a shape that differs, is refused."""
        own = dict(self.named_parameters())
        bufs = dict(self.named_buffers())
        names = set(own) | set(bufs)
        if set(state) != names:
            missing, extra = sorted(names - set(state)), sorted(set(state) - names)
            raise InvalidArgument(1, f"state_dict: missing {missing}, unexpected {extra}")
        for k, v in state.items():
            v = np.ascontiguousarray(v, dtype=np.float32)
            old = own[k].data if k in own else bufs[k]
            if tuple(v.shape) != tuple(old.shape):
                raise InvalidArgument(1, f"state_dict: {k} has shape {v.shape}, the module {tuple(old.shape)}")
            new = old.ctx.asarray(v) if _is_array(old) else v
            if k in own:
                own[k].data = new
            else:
                self._set_buffer(k, new)

    def save(self, path):
        """np.savez of state_dict()."""
        np.savez(path, **self.state_dict())

    def load(self, path):
        with np.load(path) as z:
            self.load_state_dict({k: z[k] for k in z.files})


class Sequential(Module):
    """Modules one after another; backward walks them in reverse."""

    def __init__(self, *modules):
        super().__init__()
        for i, m in enumerate(modules):
            if not isinstance(m, Module):
                raise TypeError(f"Sequential takes Modules, not {type(m).__name__}")
            setattr(self, str(i), m)
        self._order = [str(i) for i in range(len(modules))]

    def children(self):
        return [(k, getattr(self, k)) for k in self._order]

    def __getitem__(self, i):
        return getattr(self, self._order[i])

    def __len__(self):
        return len(self._order)

    def forward(self, x):
        for _, m in self.children():
            x = m(x)
        return x

    def backward(self, grad):
        for _, m in reversed(self.children()):
            grad = m.backward(grad)
        return grad


def _rng(seed):
    return np.random.default_rng(seed)


def _weight_for(p, x):
    """p's values in x's type, on x's context."""
    p.to(x.ctx)
    return p.data if x.dtype == np.float32 else p.data.astype(x.dtype)


class Conv2d(Module):
    """torch.nn.Conv2d (NCHW), PyTorch's initialisation (uniform in ±1/sqrt(fan in))."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, seed=None):
        super().__init__()
        kh, kw = F._pair(kernel_size, "kernel_size")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{in_channels} and {out_channels} channels are not multiples of {groups} groups")
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        fan_in = in_channels // groups * kh * kw
        r, bound = _rng(seed), 1 / math.sqrt(fan_in)
        self.weight = Parameter(r.uniform(-bound, bound, (out_channels, in_channels // groups, kh, kw)))
        self.bias = Parameter(r.uniform(-bound, bound, out_channels)) if bias else None

    def _args(self):
        return dict(stride=self.stride, padding=self.padding, dilation=self.dilation, groups=self.groups)

    def forward(self, x):
        w = _weight_for(self.weight, x)
        b = _weight_for(self.bias, x) if self.bias is not None else None
        self._x, self._w = x, w
        return F.conv2d(x, w, b, **self._args())

    def backward(self, grad):
        dw, db = F.conv2d_backward_weights(self._x, grad, self.weight.shape, bias=self.bias is not None, **self._args())
        self.weight.accumulate(dw)
        if self.bias is not None:
            self.bias.accumulate(db)
        dx = F.conv2d_backward_data(grad, self._w, self._x.shape, **self._args())
        self._x = self._w = None
        return dx


class BatchNorm2d(Module):
    """torch.nn.BatchNorm2d: weight 1, bias 0, running mean 0 and variance 1; momentum 0.1, eps 1e-5."""

    _buffers = ("running_mean", "running_var")

    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight, self.bias = Parameter(np.ones(num_features)), Parameter(np.zeros(num_features))
        self.running_mean = np.zeros(num_features, np.float32)
        self.running_var = np.ones(num_features, np.float32)

    def forward(self, x):
        if not _is_array(self.running_mean):
            self.to(x.ctx)
        self.weight.to(x.ctx), self.bias.to(x.ctx)
        if self.training:
            y, self._sm, self._si = F.batch_norm_train(x, self.running_mean, self.running_var, self.weight.data, self.bias.data,
                                                       self.momentum, self.eps)
            self._x = x
            return y
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight.data, self.bias.data, False, self.momentum, self.eps)

    def backward(self, grad):
        if getattr(self, "_x", None) is None:
            raise InvalidArgument(1, "BatchNorm2d.backward needs a forward in training mode first")
        dx, dg, db = F.batch_norm_backward(self._x, grad, self._sm, self._si, self.weight.data, self.eps)
        self.weight.accumulate(dg)
        self.bias.accumulate(db)
        self._x = None
        return dx


class ReLU(Module):
    def forward(self, x):
        self._x = x
        return F.relu(x)

    def backward(self, grad):
        return F.relu_backward(self._x, grad)


class GELU(Module):
    """torch.nn.GELU (approximate "none" or "tanh")."""

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"approximate is 'none' or 'tanh', not {approximate!r}")
        self.approximate = approximate

    def forward(self, x):
        self._x = x
        return F.gelu(x, self.approximate)

    def backward(self, grad):
        return F.gelu_backward(self._x, grad, self.approximate)


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, x):
        self._x = x
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding)

    def backward(self, grad):
        return F.pool2d_backward(self._x, grad, self.kernel_size, self.stride, self.padding, max=True)


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, count_include_pad=True):
        super().__init__()
        self.kernel_size, self.stride, self.padding, self.count_include_pad = kernel_size, stride, padding, count_include_pad

    def forward(self, x):
        self._x = x
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding, self.count_include_pad)

    def backward(self, grad):
        return F.pool2d_backward(self._x, grad, self.kernel_size, self.stride, self.padding, max=False,
                                 count_include_pad=self.count_include_pad)


class AdaptiveAvgPool2d(Module):
    """Global average pooling (output size 1)."""

    def __init__(self, output_size=1):
        super().__init__()
        if F._pair(output_size, "output_size") != (1, 1):
            raise ValueError("AdaptiveAvgPool2d: output size 1 (global average pooling)")

    def forward(self, x):
        self._x = x
        return F.adaptive_avg_pool2d(x, 1)

    def backward(self, grad):
        return F.pool2d_backward(self._x, grad, (self._x.shape[2], self._x.shape[3]), None, 0, max=False)


class Flatten(Module):
    """N×... → N×(the rest)."""

    def forward(self, x):
        self._shape = x.shape
        return x.reshape(x.shape[0], -1)

    def backward(self, grad):
        return grad.reshape(self._shape)


class Linear(Module):
    """torch.nn.Linear: weight out×in; the output is float32 (logits) whatever the input's type."""

    def __init__(self, in_features, out_features, bias=True, seed=None):
        super().__init__()
        r, bound = _rng(seed), 1 / math.sqrt(in_features)
        self.weight = Parameter(r.uniform(-bound, bound, (out_features, in_features)))
        self.bias = Parameter(r.uniform(-bound, bound, out_features)) if bias else None

    def forward(self, x):
        w = _weight_for(self.weight, x)
        if self.bias is not None:
            self.bias.to(x.ctx)
        self._x, self._w = x, w
        return F.linear(x, w, self.bias.data if self.bias is not None else None)

    def backward(self, grad):
        dx, dw, db = F.linear_backward(self._x, self._w, grad, bias=self.bias is not None)
        self.weight.accumulate(dw)
        if self.bias is not None:
            self.bias.accumulate(db)
        return dx


class Dropout(Module):
    """torch.nn.Dropout: in training, each element kept with probability 1 - p and scaled by 1/(1 - p);
    the masks come from Philox streams of seed, one step of the stream per call."""

    def __init__(self, p=0.5, seed=0):
        super().__init__()
        if not 0 <= p < 1:
            raise ValueError(f"dropout probability is in [0, 1), not {p}")
        self.p, self.seed, self._offset = p, seed, 0

    def forward(self, x):
        y, self._mask = F.dropout(x, self.p, self.training, self.seed, self._offset)
        self._offset += x.size
        return y

    def backward(self, grad):
        return grad.copy() if self._mask is None else F.dropout_backward(grad, self._mask, self.p)


class CrossEntropyLoss(Module):
    """torch.nn.CrossEntropyLoss (mean or sum): forward(logits, target) gives the loss (a NumPy float32);
    backward(scale=1) the gradient of the logits, times scale (the loss scale under mixed precision)."""

    def __init__(self, reduction="mean"):
        super().__init__()
        if reduction not in ("mean", "sum"):
            raise ValueError(f"reduction is 'mean' or 'sum', not {reduction!r}")
        self.reduction = reduction

    def forward(self, logits, target):
        self._z, self._t = logits, target
        return F.cross_entropy(logits, target, self.reduction)

    def backward(self, scale=1.0):
        return F.cross_entropy_backward(self._z, self._t, self.reduction, scale)


def _params(params):
    params = list(params)
    for p in params:
        if not isinstance(p, Parameter):
            raise TypeError(f"optimisers take Parameters, not {type(p).__name__}")
    return params


class SGD:
    """torch.optim.SGD (momentum, dampening, weight decay, Nesterov) over float32 Parameters."""

    def __init__(self, params, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        from .. import _lib as L
        self.params, self._o = _params(params), L.SgdC(lr, momentum, dampening, weight_decay, int(bool(nesterov)))
        self._buf = {}

    @property
    def lr(self):
        return self._o.lr

    @lr.setter
    def lr(self, v):
        self._o.lr = float(v)

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        from ctypes import byref

        from .. import _lib as L
        from .._core import _check
        for p in self.params:
            if p.grad is None:
                continue
            d, g = F._mem(p.data)[1], F._mem(p.grad)[1]
            first = id(p) not in self._buf
            buf = None
            if self._o.momentum != 0:
                if first:
                    self._buf[id(p)] = p.data.ctx.empty(p.shape, np.float32)
                buf = self._buf[id(p)]._mem()[0]
            _check(L.sgd_step(p.data.ctx.handle, byref(self._o), p.data.size, d, g, buf, int(first)), p.data.ctx._h)


class AdamW:
    """torch.optim.AdamW (decoupled weight decay, amsgrad off) over float32 Parameters."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        from .. import _lib as L
        self.params, self._o = _params(params), L.AdamwC(lr, betas[0], betas[1], eps, weight_decay)
        self._state = {}

    @property
    def lr(self):
        return self._o.lr

    @lr.setter
    def lr(self, v):
        self._o.lr = float(v)

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        from ctypes import byref

        from .. import _lib as L
        from .._core import _check
        for p in self.params:
            if p.grad is None:
                continue
            st = self._state.get(id(p))
            if st is None:
                st = self._state[id(p)] = [0, p.data.ctx.zeros(p.shape, np.float32), p.data.ctx.zeros(p.shape, np.float32)]
            st[0] += 1
            _check(L.adamw_step(p.data.ctx.handle, byref(self._o), p.data.size, F._mem(p.data)[1], F._mem(p.grad)[1], st[1]._mem()[0],
                                st[2]._mem()[0], st[0]), p.data.ctx._h)
