"""clrun.nn.functional — the layers of a convolutional network on clrun.Arrays, with PyTorch's names
and arithmetic (torch.nn.functional), each with its backward pass as a function of its own.

Activations are NCHW Arrays of float32 or float16 (float16 computed with float32 accumulation and
rounded once); batch norm's parameters and statistics, logits and losses are float32. Every result is
a new Array on the input's context; nothing leaves the device unless asked. The calls run the C
library's ops (clrun_conv2d_*, clrun_batchnorm_*, ... in clrun.h).
"""
from ctypes import byref

import numpy as np

from .. import _lib as L
from .._core import F16, F32, InvalidArgument, _check

__all__ = ["conv2d", "conv2d_backward_data", "conv2d_backward_weights", "relu", "gelu", "relu_backward", "gelu_backward", "batch_norm",
           "batch_norm_train", "batch_norm_backward", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "pool2d_backward", "linear",
           "linear_backward", "cross_entropy", "cross_entropy_backward", "dropout", "dropout_backward"]

_TYPES = {np.dtype(np.float32): F32, np.dtype(np.float16): F16}


def _array(x, what="x"):
    from .._array import Array
    if not isinstance(x, Array):
        raise InvalidArgument(1, f"{what} is a clrun.Array (ctx.asarray(...)), not {type(x).__name__}")
    return x


def _mem(x):
    """The handle of x's elements from its first byte: x itself when it owns contiguous memory, else a copy."""
    if x._st is not None or x._base is not None:
        x = x.copy()
    h, off = x._mem()
    return x, h


def _code(x, what="x"):
    t = _TYPES.get(x.dtype)
    if t is None or x.bf16:
        raise InvalidArgument(1, f"{what} is float32 or float16, not {'bfloat16' if x.bf16 else x.dtype}")
    return t


def _pair(v, what):
    if isinstance(v, (tuple, list)):
        if len(v) != 2:
            raise ValueError(f"{what} is an int or a pair, not {v!r}")
        return int(v[0]), int(v[1])
    return int(v), int(v)


def _nchw(x, what="x"):
    if x.ndim != 4:
        raise InvalidArgument(1, f"{what} is N×C×H×W, not of shape {x.shape}")
    return x.shape


def _desc(x, w, stride, padding, dilation, groups):
    n, c, h, wd = _nchw(x)
    if w.ndim != 4:
        raise InvalidArgument(1, f"the weight is K×C/groups×R×S, not of shape {w.shape}")
    groups = int(groups)
    if groups < 1 or c % groups or w.shape[0] % groups or w.shape[1] * groups != c:
        raise InvalidArgument(1, f"x has {c} channels; the weight {w.shape} in {groups} groups does not take them")
    d = L.Conv2dDescC()
    d.x = L.Tensor4C(0, _code(x), n, c, h, wd)
    d.k, d.r, d.s = w.shape[0], w.shape[2], w.shape[3]
    d.stride_h, d.stride_w = _pair(stride, "stride")
    d.pad_h, d.pad_w = _pair(padding, "padding")
    d.dilation_h, d.dilation_w = _pair(dilation, "dilation")
    d.groups = groups
    y = L.Tensor4C()
    _check(L.conv2d_shape(x.ctx.handle, byref(d), byref(y)), x.ctx._h)
    return d, (y.n, y.c, y.h, y.w)


def _same(a, b, what):
    if a.dtype != b.dtype or a.ctx is not b.ctx:
        raise InvalidArgument(1, f"{what}: the Arrays are of one type on one context ({a.dtype} and {b.dtype})")


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.nn.functional.conv2d: x N×C×H×W, weight K×C/groups×R×S, bias K (x's type)."""
    x, w = _array(x), _array(weight, "weight")
    _same(x, w, "conv2d")
    d, yshape = _desc(x, w, stride, padding, dilation, groups)
    x, xh = _mem(x)
    w, wh = _mem(w)
    bh = None
    if bias is not None:
        b = _array(bias, "bias")
        _same(x, b, "conv2d")
        if b.size != d.k:
            raise InvalidArgument(1, f"the bias has {b.size} elements, the weight {d.k} filters")
        b, bh = _mem(b)
    y = x.ctx.empty(yshape, x.dtype)
    _check(L.conv2d_forward(x.ctx.handle, byref(d), xh, wh, bh, y._mem()[0]), x.ctx._h)
    return y


def conv2d_backward_data(grad_output, weight, input_shape, stride=1, padding=0, dilation=1, groups=1):
    """The gradient with respect to the input (torch.nn.grad.conv2d_input)."""
    dy, w = _array(grad_output, "grad_output"), _array(weight, "weight")
    _same(dy, w, "conv2d_backward_data")
    n, c, h, wd = (int(v) for v in input_shape)
    x = dy.ctx.empty((n, c, h, wd), dy.dtype)  # dx: its shape and type describe the input too
    d, yshape = _desc(x, w, stride, padding, dilation, groups)
    if tuple(dy.shape) != tuple(yshape):
        raise InvalidArgument(1, f"grad_output has shape {dy.shape}; the convolution gives {yshape}")
    dy, dyh = _mem(dy)
    w, wh = _mem(w)
    _check(L.conv2d_backward_data(x.ctx.handle, byref(d), dyh, wh, x._mem()[0]), x.ctx._h)
    return x


def conv2d_backward_weights(x, grad_output, weight_shape, stride=1, padding=0, dilation=1, groups=1, bias=False):
    """The gradients of the weight (and with bias=True of the bias): (dw, db or None)."""
    x, dy = _array(x), _array(grad_output, "grad_output")
    _same(x, dy, "conv2d_backward_weights")
    w = x.ctx.empty(tuple(int(v) for v in weight_shape), x.dtype)
    d, yshape = _desc(x, w, stride, padding, dilation, groups)
    if tuple(dy.shape) != tuple(yshape):
        raise InvalidArgument(1, f"grad_output has shape {dy.shape}; the convolution gives {yshape}")
    x, xh = _mem(x)
    dy, dyh = _mem(dy)
    db = x.ctx.empty((d.k,), x.dtype) if bias else None
    _check(L.conv2d_backward_weights(x.ctx.handle, byref(d), xh, dyh, w._mem()[0], db._mem()[0] if db is not None else None), x.ctx._h)
    return w, db


_ACTS = {"relu": 0, "gelu": 1, "gelu_tanh": 2}


def _act(name, x):
    x = _array(x)
    t = _code(x)
    x, xh = _mem(x)
    y = x.ctx.empty(x.shape, x.dtype)
    _check(L.act_forward(x.ctx.handle, _ACTS[name], t, x.size, xh, y._mem()[0]), x.ctx._h)
    return y


def _act_back(name, x, grad):
    x, dy = _array(x), _array(grad, "grad")
    _same(x, dy, name)
    if x.shape != dy.shape:
        raise InvalidArgument(1, f"{name}_backward: x {x.shape} and grad {dy.shape} differ")
    t = _code(x)
    x, xh = _mem(x)
    dy, dyh = _mem(dy)
    dx = x.ctx.empty(x.shape, x.dtype)
    _check(L.act_backward(x.ctx.handle, _ACTS[name], t, x.size, xh, dyh, dx._mem()[0]), x.ctx._h)
    return dx


def relu(x):
    """max(x, 0) (NaN stays NaN)."""
    return _act("relu", x)


def gelu(x, approximate="none"):
    """x·Φ(x); approximate="tanh" the tanh form, as torch.nn.functional.gelu."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate is 'none' or 'tanh', not {approximate!r}")
    return _act("gelu" if approximate == "none" else "gelu_tanh", x)


def relu_backward(x, grad):
    """grad where x > 0, else 0."""
    return _act_back("relu", x, grad)


def gelu_backward(x, grad, approximate="none"):
    return _act_back("gelu" if approximate == "none" else "gelu_tanh", x, grad)


def _f32(v, c, what):
    if v is None:
        return None, None
    v = _array(v, what)
    if v.dtype != np.float32 or v.size != c:
        raise InvalidArgument(1, f"{what} holds {c} float32 values, not {v.size} {v.dtype}")
    if v._st is not None or v._base is not None:
        raise InvalidArgument(1, f"{what} is a view; pass an Array that owns its memory (it may be updated in place)")
    return v, v._mem()[0]


def _bn(x, weight, bias, running_mean, running_var, training, momentum, eps, save_mean=None, save_invstd=None):
    n, c, h, w = _nchw(x)
    bn = L.BatchnormC()
    bn.training, bn.momentum, bn.eps = int(bool(training)), float(momentum), float(eps)
    _, bn.gamma = _f32(weight, c, "weight")
    _, bn.beta = _f32(bias, c, "bias")
    _, bn.running_mean = _f32(running_mean, c, "running_mean")
    _, bn.running_var = _f32(running_var, c, "running_var")
    _, bn.save_mean = _f32(save_mean, c, "save_mean")
    _, bn.save_invstd = _f32(save_invstd, c, "save_invstd")
    return bn, L.Tensor4C(0, _code(x), n, c, h, w)


def batch_norm_train(x, running_mean, running_var, weight=None, bias=None, momentum=0.1, eps=1e-5):
    """Training-mode batch norm: (y, save_mean, save_invstd); the running statistics (when not None)
    are updated in place, as torch.nn.functional.batch_norm(training=True) does."""
    x = _array(x)
    c = _nchw(x)[1]
    sm, si = x.ctx.empty((c,), np.float32), x.ctx.empty((c,), np.float32)
    bn, t = _bn(x, weight, bias, running_mean, running_var, True, momentum, eps, sm, si)
    x, xh = _mem(x)
    y = x.ctx.empty(x.shape, x.dtype)
    _check(L.batchnorm_forward(x.ctx.handle, byref(t), byref(bn), xh, y._mem()[0]), x.ctx._h)
    return y, sm, si


def batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """torch.nn.functional.batch_norm over (N, H, W) per channel."""
    if training:
        return batch_norm_train(x, running_mean, running_var, weight, bias, momentum, eps)[0]
    x = _array(x)
    if running_mean is None or running_var is None:
        raise InvalidArgument(1, "batch_norm in evaluation needs running_mean and running_var")
    bn, t = _bn(x, weight, bias, running_mean, running_var, False, momentum, eps)
    x, xh = _mem(x)
    y = x.ctx.empty(x.shape, x.dtype)
    _check(L.batchnorm_forward(x.ctx.handle, byref(t), byref(bn), xh, y._mem()[0]), x.ctx._h)
    return y


def batch_norm_backward(x, grad, save_mean, save_invstd, weight=None, eps=1e-5):
    """From a training forward's saved statistics: (dx, dweight, dbias), the last two float32."""
    x, dy = _array(x), _array(grad, "grad")
    _same(x, dy, "batch_norm_backward")
    c = _nchw(x)[1]
    bn, t = _bn(x, weight, None, None, None, True, 0.1, eps, save_mean, save_invstd)
    x, xh = _mem(x)
    dy, dyh = _mem(dy)
    dx, dg, db = x.ctx.empty(x.shape, x.dtype), x.ctx.empty((c,), np.float32), x.ctx.empty((c,), np.float32)
    _check(L.batchnorm_backward(x.ctx.handle, byref(t), byref(bn), xh, dyh, dx._mem()[0], dg._mem()[0], db._mem()[0]), x.ctx._h)
    return dx, dg, db


def _pool_desc(x, is_max, kernel_size, stride, padding, count_include_pad=True):
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(stride, "stride") if stride is not None else (kh, kw)
    ph, pw = _pair(padding, "padding")
    p = L.PoolDescC(int(is_max), kh, kw, sh, sw, ph, pw, int(bool(count_include_pad)))
    n, c, h, w = _nchw(x)
    t, y = L.Tensor4C(0, _code(x), n, c, h, w), L.Tensor4C()
    _check(L.pool_shape(x.ctx.handle, byref(t), byref(p), byref(y)), x.ctx._h)
    return p, t, (y.n, y.c, y.h, y.w)


def _pool(x, is_max, kernel_size, stride, padding, count_include_pad=True):
    x = _array(x)
    p, t, yshape = _pool_desc(x, is_max, kernel_size, stride, padding, count_include_pad)
    x, xh = _mem(x)
    y = x.ctx.empty(yshape, x.dtype)
    _check(L.pool_forward(x.ctx.handle, byref(t), byref(p), xh, y._mem()[0]), x.ctx._h)
    return y


def max_pool2d(x, kernel_size, stride=None, padding=0):
    """torch.nn.functional.max_pool2d (floor mode, no dilation)."""
    return _pool(x, True, kernel_size, stride, padding)


def avg_pool2d(x, kernel_size, stride=None, padding=0, count_include_pad=True):
    """torch.nn.functional.avg_pool2d (floor mode)."""
    return _pool(x, False, kernel_size, stride, padding, count_include_pad)


def adaptive_avg_pool2d(x, output_size=1):
    """Global average pooling (output_size 1: N×C×1×1)."""
    if _pair(output_size, "output_size") != (1, 1):
        raise InvalidArgument(1, "adaptive_avg_pool2d: output_size 1 (global average pooling)")
    x = _array(x)
    return _pool(x, False, (x.shape[2], x.shape[3]), None, 0)


def pool2d_backward(x, grad, kernel_size, stride=None, padding=0, max=True, count_include_pad=True):
    """dx of max_pool2d (max=True: each window's first largest element takes its gradient) or avg_pool2d."""
    x, dy = _array(x), _array(grad, "grad")
    _same(x, dy, "pool2d_backward")
    p, t, yshape = _pool_desc(x, max, kernel_size, stride, padding, count_include_pad)
    if tuple(dy.shape) != tuple(yshape):
        raise InvalidArgument(1, f"grad has shape {dy.shape}; the pooling gives {yshape}")
    x, xh = _mem(x)
    dy, dyh = _mem(dy)
    dx = x.ctx.empty(x.shape, x.dtype)
    _check(L.pool_backward(x.ctx.handle, byref(t), byref(p), xh, dyh, dx._mem()[0]), x.ctx._h)
    return dx


def _rows(x, what):
    if x.ndim != 2:
        raise InvalidArgument(1, f"{what} is rows×features, not of shape {x.shape} (reshape it)")
    return x.shape


def linear(x, weight, bias=None):
    """torch.nn.functional.linear: x rows×in, weight out×in (x's type), bias out (float32); a float32 result."""
    x, w = _array(x), _array(weight, "weight")
    _same(x, w, "linear")
    rows, fin = _rows(x, "x")
    out = w.shape[0]
    if w.ndim != 2 or w.shape[1] != fin:
        raise InvalidArgument(1, f"the weight is {out}×{fin}, not of shape {w.shape}")
    b, bh = _f32(bias, out, "bias") if bias is not None else (None, None)
    x, xh = _mem(x)
    w, wh = _mem(w)
    y = x.ctx.empty((rows, out), np.float32)
    _check(L.linear_forward(x.ctx.handle, _code(x), rows, fin, out, xh, wh, bh, y._mem()[0]), x.ctx._h)
    return y


def linear_backward(x, weight, grad, bias=True):
    """From grad (rows×out, float32): (dx in x's type, dweight float32, dbias float32 or None)."""
    x, w, dy = _array(x), _array(weight, "weight"), _array(grad, "grad")
    rows, fin = _rows(x, "x")
    out = w.shape[0]
    if tuple(dy.shape) != (rows, out) or dy.dtype != np.float32:
        raise InvalidArgument(1, f"grad is {rows}×{out} float32, not {dy.shape} {dy.dtype}")
    x, xh = _mem(x)
    w, wh = _mem(w)
    dy, dyh = _mem(dy)
    dx, dw = x.ctx.empty(x.shape, x.dtype), x.ctx.empty((out, fin), np.float32)
    db = x.ctx.empty((out,), np.float32) if bias else None
    _check(L.linear_backward(x.ctx.handle, _code(x), rows, fin, out, xh, wh, dyh, dx._mem()[0], dw._mem()[0],
                             db._mem()[0] if db is not None else None), x.ctx._h)
    return dx, dw, db


def _labels(target, rows, ctx):
    """target (an Array, or anything np.asarray takes) as an int32 Array of rows labels."""
    from .._array import Array
    if isinstance(target, Array):
        if target.dtype.kind not in "iu":
            raise InvalidArgument(1, f"target holds class indices (integers), not {target.dtype}")
        t = target if target.dtype == np.int32 else target.astype(np.int32)
    else:
        arr = np.asarray(target)
        if arr.dtype.kind not in "iu":
            raise InvalidArgument(1, f"target holds class indices (integers), not {arr.dtype}")
        t = ctx.asarray(arr.astype(np.int32).ravel())
    if t.size != rows:
        raise InvalidArgument(1, f"target has {t.size} labels for {rows} rows")
    return t


def _xent(logits, target, grad_scale, want_grad):
    z = _array(logits, "logits")
    rows, classes = _rows(z, "logits")
    if z.dtype != np.float32:
        z = z.astype(np.float32)
    lab = _labels(target, rows, z.ctx)
    z, zh = _mem(z)
    lab, lh = _mem(lab)
    loss = z.ctx.empty((rows,), np.float32)
    dz = z.ctx.empty((rows, classes), np.float32) if want_grad else None
    _check(L.cross_entropy(z.ctx.handle, rows, classes, zh, lh, float(grad_scale), loss._mem()[0], dz._mem()[0] if dz is not None else None,
                           None), z.ctx._h)
    return loss, dz


def cross_entropy(logits, target, reduction="mean"):
    """Softmax cross-entropy of rows×classes logits against class indices: a NumPy float32 for "mean"
    and "sum" (Array.mean's and .sum's), the rows' losses as an Array for "none" (log-sum-exp from
    each row's maximum)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"reduction is 'mean', 'sum' or 'none', not {reduction!r}")
    loss, _ = _xent(logits, target, 1.0, False)
    return loss if reduction == "none" else loss.mean() if reduction == "mean" else loss.sum()


def cross_entropy_backward(logits, target, reduction="mean", scale=1.0):
    """The gradient of cross_entropy with respect to the logits (float32), times scale (a loss
    scale under mixed precision)."""
    rows = _rows(_array(logits, "logits"), "logits")[0]
    gs = float(scale) / rows if reduction == "mean" else float(scale)
    return _xent(logits, target, gs, True)[1]


def dropout(x, p=0.5, training=True, seed=0, offset=0):
    """torch.nn.functional.dropout: (y, mask) with mask a uint8 Array (None when not training or p
    is 0); the mask is Philox's Bernoulli stream of seed from word offset (clrun_rand)."""
    x = _array(x)
    if not 0 <= p < 1:
        raise ValueError(f"dropout probability is in [0, 1), not {p}")
    if not training or p == 0:
        return x.copy(), None
    t = _code(x)
    x, xh = _mem(x)
    r = L.RandDescC()
    L.rand_desc_init(byref(r), int(seed), 4, 8)
    r.offset = int(offset)
    mask, y = x.ctx.empty(x.shape, np.uint8), x.ctx.empty(x.shape, x.dtype)
    _check(L.dropout(x.ctx.handle, t, x.size, float(p), byref(r), xh, mask._mem()[0], y._mem()[0]), x.ctx._h)
    return y, mask


def dropout_backward(grad, mask, p=0.5):
    dy, m = _array(grad, "grad"), _array(mask, "mask")
    if m.dtype != np.uint8 or m.size != dy.size:
        raise InvalidArgument(1, "mask is dropout's uint8 mask of the same size")
    t = _code(dy)
    dy, dyh = _mem(dy)
    m, mh = _mem(m)
    dx = dy.ctx.empty(dy.shape, dy.dtype)
    _check(L.dropout_backward(dy.ctx.handle, t, dy.size, float(p), mh, dyh, dx._mem()[0]), dy.ctx._h)
    return dx
