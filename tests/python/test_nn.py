"""clrun.nn on fresh random data: the functional layers against NumPy references (convolution with
stride, padding, dilation and groups; pooling; batch norm; cross-entropy), every module's gradients
against central finite differences of a whole network's loss, float16 against float32, the
optimisers against their update rules, GradScaler over module gradients, save/load, train/eval;
bad arguments refused."""
import numpy as np
import pytest

import clrun
import clrun.nn.functional as F
from clrun import nn


def conv_ref(x, w, b, stride, pad, dil, groups):
    n, c, h, wd = x.shape
    k, cg, r, s = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    p = (h + 2 * pad - dil * (r - 1) - 1) // stride + 1
    q = (wd + 2 * pad - dil * (s - 1) - 1) // stride + 1
    y = np.zeros((n, k, p, q))
    kg = k // groups
    for g in range(groups):
        for i in range(r):
            for j in range(s):
                patch = xp[:, g * cg:(g + 1) * cg, i * dil:i * dil + stride * (p - 1) + 1:stride, j * dil:j * dil + stride * (q - 1) + 1:stride]
                y[:, g * kg:(g + 1) * kg] += np.einsum("nchw,kc->nkhw", patch, w[g * kg:(g + 1) * kg, :, i, j])
    return y + (0 if b is None else b.reshape(1, -1, 1, 1))


@pytest.mark.parametrize("stride,pad,dil,groups", [(1, 1, 1, 1), (2, 0, 1, 1), (1, 2, 2, 1), (2, 1, 1, 2), (1, 1, 1, 6)])
def test_conv2d_against_numpy(ctx, rng, stride, pad, dil, groups):
    x = rng.standard_normal((2, 6, 9, 8)).astype(np.float32)
    w = rng.standard_normal((12 if groups != 6 else 6, 6 // groups, 3, 3)).astype(np.float32)
    b = rng.standard_normal(w.shape[0]).astype(np.float32)
    got = F.conv2d(ctx.asarray(x), ctx.asarray(w), ctx.asarray(b), stride, pad, dil, groups).get()
    want = conv_ref(x, w, b, stride, pad, dil, groups)
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 1e-5 * (1 + np.abs(want).max())
    # the backward passes: <dy, conv(x)> is linear in x and in w, so their gradients are exact
    dy = rng.standard_normal(want.shape).astype(np.float32)
    dx = F.conv2d_backward_data(ctx.asarray(dy), ctx.asarray(w), x.shape, stride, pad, dil, groups).get()
    dw, db = F.conv2d_backward_weights(ctx.asarray(x), ctx.asarray(dy), w.shape, stride, pad, dil, groups, bias=True)
    for _ in range(6):
        i = tuple(rng.integers(0, d) for d in x.shape)
        e = np.zeros_like(x)
        e[i] = 1
        assert dx[i] == pytest.approx(np.sum(dy * conv_ref(e, w, None, stride, pad, dil, groups)), rel=1e-4, abs=1e-4)
        j = tuple(rng.integers(0, d) for d in w.shape)
        e = np.zeros_like(w)
        e[j] = 1
        assert dw.get()[j] == pytest.approx(np.sum(dy * conv_ref(x, e, None, stride, pad, dil, groups)), rel=1e-4, abs=1e-4)
    assert np.allclose(db.get(), dy.sum(axis=(0, 2, 3)), rtol=1e-5, atol=1e-4)


def test_pooling_batch_norm_and_cross_entropy_against_numpy(ctx, rng):
    x = rng.standard_normal((3, 4, 7, 6)).astype(np.float32)
    xa = ctx.asarray(x)
    mp = F.max_pool2d(xa, 2).get()
    assert np.array_equal(mp, x[:, :, :6, :6].reshape(3, 4, 3, 2, 3, 2).max(axis=(3, 5)))
    ap = F.avg_pool2d(xa, 3, stride=2, padding=1, count_include_pad=False).get()
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=np.nan)
    want = np.stack([np.stack([np.nanmean(xp[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3], axis=(2, 3)) for j in range(ap.shape[3])], -1)
                     for i in range(ap.shape[2])], -2)
    assert np.allclose(ap, want, atol=1e-6)
    assert np.allclose(F.adaptive_avg_pool2d(xa).get()[:, :, 0, 0], x.mean(axis=(2, 3)), atol=1e-6)
    rm, rv = ctx.zeros((4,), np.float32), ctx.asarray(np.ones(4, np.float32))
    g, b = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    y = F.batch_norm(xa, rm, rv, ctx.asarray(g), ctx.asarray(b), training=True).get()
    mu, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    want = (x - mu.reshape(1, -1, 1, 1)) / np.sqrt(var.reshape(1, -1, 1, 1) + 1e-5) * g.reshape(1, -1, 1, 1) + b.reshape(1, -1, 1, 1)
    assert np.allclose(y, want, atol=1e-5)
    assert np.allclose(rm.get(), 0.1 * mu, atol=1e-6) and np.allclose(rv.get(), 0.9 + 0.1 * x.var(axis=(0, 2, 3), ddof=1), atol=1e-5)
    z = (rng.standard_normal((5, 7)) * 30).astype(np.float32)
    t = rng.integers(0, 7, 5)
    zz = z.astype(np.float64)
    lse = zz.max(1) + np.log(np.exp(zz - zz.max(1, keepdims=True)).sum(1))
    assert F.cross_entropy(ctx.asarray(z), t) == pytest.approx(np.mean(lse - zz[np.arange(5), t]), rel=1e-5)
    grad = F.cross_entropy_backward(ctx.asarray(z), t, scale=8.0).get()
    soft = np.exp(zz - lse[:, None])
    soft[np.arange(5), t] -= 1
    assert np.allclose(grad, soft * 8 / 5, atol=1e-6)


def small_net():
    return nn.Sequential(nn.Conv2d(3, 6, 3, padding=1, seed=1), nn.BatchNorm2d(6), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(6, 8, 3, stride=2, padding=1, bias=False, seed=2), nn.GELU(), nn.AvgPool2d(2),
                         nn.Conv2d(8, 8, 1, groups=2, seed=4), nn.GELU("tanh"), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(8, 5, seed=3))


def smooth_net():
    """small_net with its kinks (ReLU, max pooling) smoothed, so that central differences converge at
    every point; ReLU's and max pooling's backward passes are checked against references in test_nn.c"""
    return nn.Sequential(nn.Conv2d(3, 6, 3, padding=1, seed=1), nn.BatchNorm2d(6), nn.GELU(), nn.AvgPool2d(2),
                         nn.Conv2d(6, 8, 3, stride=2, padding=1, bias=False, seed=2), nn.GELU(), nn.AvgPool2d(2),
                         nn.Conv2d(8, 8, 1, groups=2, seed=4), nn.GELU("tanh"), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(8, 5, seed=3))


def test_module_gradients_against_finite_differences(ctx, rng):
    net, lossf = smooth_net(), nn.CrossEntropyLoss()
    x = ctx.asarray(rng.standard_normal((4, 3, 12, 12)).astype(np.float32))
    t = rng.integers(0, 5, 4)
    lossf(net(x), t)
    net.backward(lossf.backward())
    grads = {k: p.grad.get() for k, p in net.named_parameters()}

    def loss():
        return float(lossf(net(x), t))

    for name, p in net.named_parameters():
        base = p.numpy()
        for _ in range(3):
            i = tuple(rng.integers(0, d) for d in base.shape)
            h = 1e-2
            vals = []
            for sgn in (1, -1):
                v = base.copy()
                v[i] += sgn * h
                p.data = ctx.asarray(v)
                vals.append(loss())
            p.data = ctx.asarray(base)
            fd = (vals[0] - vals[1]) / (2 * h)
            assert grads[name][i] == pytest.approx(fd, rel=5e-2, abs=2e-3), name


def test_float16_follows_float32_and_grads_stay_float32(ctx, rng):
    net, lossf = small_net(), nn.CrossEntropyLoss()
    x = rng.standard_normal((4, 3, 12, 12)).astype(np.float32)
    y32 = net(ctx.asarray(x)).get()
    y16 = net(ctx.asarray(x.astype(np.float16)))
    assert y16.dtype == np.float32  # logits
    assert np.abs(y16.get() - y32).max() <= 3e-2 * (1 + np.abs(y32).max())
    lossf(y16, [0, 1, 2, 3])
    net.backward(lossf.backward(scale=1024.0))
    assert all(p.grad.dtype == np.float32 for p in net.parameters())


def test_grad_scaler_over_module_gradients(ctx, rng):
    x, t = ctx.asarray(rng.standard_normal((2, 3, 12, 12)).astype(np.float32)), [1, 4]
    ref, lossf = small_net(), nn.CrossEntropyLoss()
    lossf(ref(x), t)
    ref.backward(lossf.backward())
    net = small_net()
    scaler = clrun.amp.GradScaler(ctx, init_scale=256.0)
    lossf(net(x), t)
    net.backward(lossf.backward(scale=scaler.get_scale()))
    scaler.unscale_([p.grad for p in net.parameters()])
    for (k, a), (_, b) in zip(ref.named_parameters(), net.named_parameters()):
        assert np.allclose(a.grad.get(), b.grad.get(), rtol=1e-4, atol=1e-6), k
    assert scaler.step(lambda: None)
    scaler.update()


def test_optimisers_follow_pytorch_rules(ctx, rng):
    w0, g = rng.standard_normal(50).astype(np.float32), rng.standard_normal(50).astype(np.float32)
    p = nn.Parameter(w0).to(ctx)
    opt = nn.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)
    buf, w = None, w0.astype(np.float64)
    for _ in range(3):
        p.grad = ctx.asarray(g)
        opt.step()
        d = g + 0.01 * w
        buf = d if buf is None else 0.9 * buf + d
        w = w - 0.1 * (d + 0.9 * buf)
    assert np.allclose(p.numpy(), w, rtol=1e-5, atol=1e-6)
    q = nn.Parameter(w0).to(ctx)
    adam = nn.AdamW([q], lr=0.01, weight_decay=0.1)
    m = v = np.zeros(50)
    w = w0.astype(np.float64)
    for step in range(1, 4):
        q.grad = ctx.asarray(g)
        adam.step()
        w *= 1 - 0.01 * 0.1
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g.astype(np.float64) ** 2
        w -= 0.01 / (1 - 0.9 ** step) * m / (np.sqrt(v) / np.sqrt(1 - 0.999 ** step) + 1e-8)
    assert np.allclose(q.numpy(), w, rtol=1e-5, atol=1e-6)


def test_save_load_and_modes(ctx, rng, tmp_path):
    x = ctx.asarray(rng.standard_normal((4, 3, 12, 12)).astype(np.float32))
    net = small_net()
    net(x)  # training: the running statistics move
    net.eval()
    y = net(x).get()
    assert np.array_equal(net(x).get(), y)  # evaluation uses the running statistics, repeatably
    net.save(tmp_path / "m.npz")
    other = small_net()
    other[0].weight.data = np.zeros(other[0].weight.shape, np.float32)
    other.load(tmp_path / "m.npz")
    other.eval()
    assert np.array_equal(other(x).get(), y)
    net.train()
    assert not np.allclose(net(x).get(), y)
    with pytest.raises(clrun.InvalidArgument, match="missing"):
        other.load_state_dict({"0.weight": np.zeros((6, 3, 3, 3))})


def test_dropout_masks(ctx, rng):
    x = ctx.asarray(rng.standard_normal((64, 128)).astype(np.float32))
    d = nn.Dropout(0.25, seed=3)
    y = d(x).get()
    kept = y != 0
    assert 0.70 < kept.mean() < 0.80
    assert np.allclose(y[kept], x.get()[kept] / 0.75)
    dx = d.backward(ctx.asarray(np.ones((64, 128), np.float32))).get()
    assert np.array_equal(dx != 0, kept)
    assert not np.array_equal(d(x).get() != 0, kept)  # the next call draws the next masks
    d.eval()
    assert np.array_equal(d(x).get(), x.get())


def test_refusals(ctx, rng):
    x = ctx.asarray(rng.standard_normal((2, 4, 5, 5)).astype(np.float32))
    with pytest.raises(clrun.InvalidArgument, match="channels"):
        F.conv2d(x, ctx.asarray(np.zeros((3, 3, 3, 3), np.float32)))
    with pytest.raises(clrun.InvalidArgument, match="clrun.Array"):
        F.relu(np.zeros(3, np.float32))
    with pytest.raises(clrun.InvalidArgument, match="float32 or float16"):
        F.relu(ctx.asarray(np.zeros(3, np.int32)))
    with pytest.raises(clrun.InvalidArgument, match="integers"):
        F.cross_entropy(ctx.asarray(np.zeros((2, 3), np.float32)), np.array([0.5, 1.0]))
    with pytest.raises(clrun.InvalidArgument, match="larger"):
        F.max_pool2d(x, 7)
    with pytest.raises(ValueError):
        nn.Dropout(1.0)
