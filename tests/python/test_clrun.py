"""The Python bindings (python/clrun) on the test device: every op against NumPy or the formula, the
runtime's objects, errors by class and text, leaks over many contexts, threads. Run by meson test."""
import gc
import os
import subprocess
import threading

import numpy as np
import pytest

import clrun

SPEC = os.environ.get("CLRUN_TEST_DEVICE", "cpu")
MUL = """__kernel void multiply_them(__global float *dest, __global const float *a, __global const float *b)
{ const int i = get_global_id(0); dest[i] = a[i] * b[i]; }"""


@pytest.fixture(scope="module")
def ctx():
    with clrun.open(SPEC) as c:
        yield c


@pytest.fixture
def rng():
    seed = int(os.environ.get("CLRUN_TEST_SEED", "0")) or np.random.SeedSequence().entropy % (2**32)
    print("seed", seed)
    return np.random.default_rng(seed)


def test_devices_and_info(ctx):
    ds = clrun.devices()
    assert ds and all(isinstance(d, clrun.DeviceInfo) for d in ds)
    assert ctx.device in ds and ctx.device.type in ("gpu", "cpu", "accelerator", "other")
    dev, why = clrun.select(SPEC)
    assert dev.index == ctx.device.index and why
    assert clrun.__version__ == clrun.version()


def test_seed_multiply(ctx, rng):
    a, b = rng.standard_normal(400).astype(np.float32), rng.standard_normal(400).astype(np.float32)
    dest = np.zeros_like(a)
    prog = ctx.program(source=MUL)
    prog.multiply_them(clrun.Out(dest), clrun.In(a), clrun.In(b), global_size=400)
    assert np.array_equal(dest, a * b)
    # bare arrays are read and written back; Buffers stay on the device; an event times the launch
    d2 = np.zeros_like(a)
    prog.multiply_them(d2, a, b, global_size=400)
    assert np.array_equal(d2, a * b)
    bd, ba = ctx.empty(400), ctx.upload(a)
    ev = prog.multiply_them(bd, ba, ba, global_size=(400,), local_size=(8,), event=True)
    ev.wait()
    assert ev.ms >= 0 and np.array_equal(bd.download(), a * a)


def test_scalars_local_and_vectors(ctx):
    src = """__kernel void k(__global float *o, const float s, const uint n, const short h, const float4 v, __local float *t)
    { const uint i = get_global_id(0); t[get_local_id(0)] = s * i; barrier(CLK_LOCAL_MEM_FENCE);
      if (i < n) o[i] = t[get_local_id(0)] + h + v.s0 + v.s3; }"""
    out = np.zeros(64, np.float32)
    ctx.program(source=src).k(out, 0.5, 60, -3, np.array([1, 2, 3, 4], np.float32), clrun.Local(64 * 4), global_size=64, local_size=64)
    want = np.where(np.arange(64) < 60, 0.5 * np.arange(64) - 3 + 5, 0).astype(np.float32)
    assert np.array_equal(out, want)


def test_errors_carry_class_and_text(ctx):
    with pytest.raises(clrun.BuildFailed) as e:
        ctx.program(source="__kernel void broken( { }")
    assert e.value.status == 6 and e.value.name == "CLRUN_BUILD_FAILED" and "error" in e.value.message
    with pytest.raises(clrun.NotFound):
        ctx.program(source=MUL).kernel("nope")
    with pytest.raises(clrun.NoDevice):
        clrun.open("no such device anywhere")
    with pytest.raises(clrun.InvalidArgument, match="inner dimensions"):
        clrun.gemm(ctx, np.ones((3, 4), np.float32), np.ones((5, 2), np.float32))
    with pytest.raises(clrun.FileError):
        ctx.program(path="/nonexistent/x.cl")
    with pytest.raises(clrun.ArgMismatch):
        ctx.program(source=MUL).multiply_them(np.zeros(4, np.float32), global_size=4)
    assert issubclass(clrun.BuildFailed, clrun.Error)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.uint16, np.int32, np.float64, np.uint64])
@pytest.mark.parametrize("shape", [(0,), (1,), (7, 3), (2, 3, 4)])
def test_buffers_round_trip(ctx, rng, dtype, shape):
    a = (rng.standard_normal(shape) * 50).astype(dtype)
    b = ctx.upload(a)
    assert b.shape == shape and b.dtype == np.dtype(dtype) and b.nbytes == a.nbytes
    assert np.array_equal(b.download(), a)
    out = np.empty_like(a)
    b.numpy(out=out) if a.size else None
    assert np.array_equal(out, a) or a.size == 0
    with pytest.raises(clrun.InvalidArgument):
        b.upload(np.zeros(a.size + 1, dtype))


def test_pinned_host_arrays(ctx, rng):
    h = ctx.host_array((1000, 3), np.float32)
    h[:] = rng.standard_normal((1000, 3))
    b = ctx.upload(h)
    assert np.array_equal(b.download(), h)
    v = h[10:20]
    del h
    gc.collect()
    assert v.shape == (10, 3) and np.isfinite(v).all()  # a view keeps the pinned memory


def test_vector_ops_bit_exact(ctx, rng):
    a, b, c = (rng.standard_normal(1001).astype(np.float32) for _ in range(3))
    assert np.array_equal(clrun.mul(ctx, a, b), a * b)
    assert np.array_equal(clrun.add(ctx, a, b), a + b)
    assert np.array_equal(clrun.sub(ctx, a, b), a - b)
    assert np.array_equal(clrun.div(ctx, a, b), a / b)
    assert np.array_equal(clrun.scale(ctx, 0.5, a), np.float32(0.5) * a)
    fma = (a.astype(np.float64) * b + c).astype(np.float32)
    assert np.array_equal(clrun.fma(ctx, a, b, c), fma)
    h = a.astype(np.float16), b.astype(np.float16)
    assert np.array_equal(clrun.mul(ctx, *h), (h[0].astype(np.float32) * h[1]).astype(np.float16))
    ba, bb = ctx.upload(a), ctx.upload(b)
    r = clrun.add(ctx, ba, bb)
    assert isinstance(r, clrun.Buffer) and np.array_equal(r.download(), a + b)


def test_reductions(ctx, rng):
    x, y = rng.standard_normal(100003).astype(np.float32), rng.standard_normal(100003).astype(np.float32)
    S = np.abs(x.astype(np.float64)).sum()
    assert abs(clrun.sum(ctx, x) - x.astype(np.float64).sum()) <= 1e-6 * S
    assert abs(clrun.dot(ctx, x, y) - x.astype(np.float64) @ y) <= 1e-6 * np.abs(x.astype(np.float64) * y).sum()
    assert abs(clrun.norm2(ctx, x) - np.linalg.norm(x.astype(np.float64))) <= 1e-6 * np.linalg.norm(x)
    assert clrun.max(ctx, x) == x.max() and clrun.min(ctx, x) == x.min() and clrun.argmax(ctx, x) == int(np.argmax(x))
    x[77] = np.nan
    assert np.isnan(clrun.max(ctx, x)) and clrun.argmax(ctx, x) == 77


def test_cast(ctx, rng):
    x = np.concatenate([rng.standard_normal(1000).astype(np.float32) * 1e3, np.float32([np.inf, -np.inf, np.nan, 65520, 1e-8])])
    assert np.array_equal(clrun.cast(ctx, x, "f16"), x.astype(np.float16), equal_nan=True)
    h = x.astype(np.float16)
    assert np.array_equal(clrun.cast(ctx, h, "f32"), h.astype(np.float32), equal_nan=True)
    bf = clrun.cast(ctx, x, "bf16")
    assert bf.dtype == np.uint16
    back = clrun.cast(ctx, bf, "f32")
    fin = np.isfinite(x)
    assert np.all(np.abs(back[fin] - x[fin]) <= np.abs(x[fin]) * 2.0**-8)


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_gemm(ctx, rng, ta, tb):
    m, n, k = 37, 29, 53
    A = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    B = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    C0 = rng.standard_normal((m, n)).astype(np.float32)
    want = 1.5 * (A.T if ta else A).astype(np.float64) @ (B.T if tb else B) - 0.5 * C0
    got = clrun.gemm(ctx, A, B, C0, alpha=1.5, beta=-0.5, ta=ta, tb=tb)
    mag = 1.5 * np.abs(A.T if ta else A) @ np.abs(B.T if tb else B) + 0.5 * np.abs(C0)
    assert np.all(np.abs(got - want) <= 4 * (k + 2) * 2.0**-24 * mag)
    h = clrun.gemm(ctx, A.astype(np.float16), B.astype(np.float16), ta=ta, tb=tb)
    wh = (A.T if ta else A).astype(np.float16).astype(np.float64) @ (B.T if tb else B).astype(np.float16)
    assert np.all(np.abs(h - wh) <= 4 * (k + 2) * 2.0**-24 * np.abs(wh).max() * 10)
    batch = clrun.gemm(ctx, np.stack([A, 2 * A]), np.stack([B, B]), ta=ta, tb=tb)
    assert batch.shape == (2, m, n) and np.allclose(batch[1], 2 * batch[0], rtol=1e-6, atol=1e-5)


def test_tensor_kernel_names(ctx):
    kinds = {clrun.tensor_kernel(ctx, t, bf16) for t, bf16 in ((np.float16, False), (np.uint16, True), (np.float32, False), (np.int8, False))}
    if clrun.tensor_cores(ctx):
        assert kinds <= {"wgmma", "mma.sync"} and clrun.tensor_kernel(ctx, np.float32) == "mma.sync"
    else:
        assert kinds == {None}
    with pytest.raises(clrun.InvalidArgument):
        clrun.tensor_kernel(ctx, np.float64)


def test_canny_equals_cli(ctx, rng, tmp_path):
    img = (rng.integers(0, 256, (67, 91), dtype=np.uint8) // 64 * 64).astype(np.uint8)
    edges = clrun.canny(ctx, img, 50, 100)
    assert edges.dtype == np.uint8 and edges.shape == img.shape and set(np.unique(edges)) <= {0, 255}
    exe = os.environ.get("CLRUN_EXE")
    if exe:  # the same input through the CLI: the same bytes
        clrun.imwrite(tmp_path / "in.png", img)
        assert np.array_equal(clrun.imread(tmp_path / "in.png"), img)
        subprocess.run([exe, "op", "canny", str(tmp_path / "in.png"), "-o", str(tmp_path / "out.png"), "-d", SPEC, "-q"], check=True,
                       capture_output=True)
        assert np.array_equal(clrun.imread(tmp_path / "out.png"), edges)
    rgb = rng.integers(0, 256, (40, 50, 3), dtype=np.uint8)
    assert np.array_equal(clrun.canny(ctx, rgb[..., ::-1], 30, 90, bgr=True), clrun.canny(ctx, rgb, 30, 90))


def test_quantize_and_int8_gemm(ctx, rng):
    x = (rng.standard_normal((4, 6, 5)) * 40).astype(np.float32)
    q = clrun.quantize(ctx, x, 0.25, -3)
    want = np.clip(-3 + np.rint(x * np.float32(1 / np.float32(0.25))), -128, 127).astype(np.int8)
    assert np.array_equal(q, want)
    assert np.array_equal(clrun.dequantize(ctx, q, 0.25, -3), (q.astype(np.float32) + 3) * np.float32(0.25))
    s = np.float32([0.5, 0.25, 1, 2, 4, 8])
    qc = clrun.quantize(ctx, x, s, 0, axis=1)
    assert np.array_equal(qc, np.clip(np.rint(x * (np.float32(1) / s)[None, :, None]), -128, 127).astype(np.int8))
    sc, zp = clrun.calibrate(x, symmetric=True)
    assert zp == 0 and sc > 0
    a = rng.integers(-128, 128, (19, 40), dtype=np.int8)
    b = rng.integers(-128, 128, (40, 11), dtype=np.int8)
    assert np.array_equal(clrun.gemm_s8(ctx, a, b), a.astype(np.int64) @ b)
    assert np.array_equal(clrun.gemm_s8(ctx, a, np.ascontiguousarray(b.T), tb=True), a.astype(np.int64) @ b)
    rs, cs = rng.random(19).astype(np.float32), rng.random(11).astype(np.float32)
    f = clrun.gemm_s8(ctx, a, b, row_scale=rs, col_scale=cs, relu=True)
    ref = np.maximum((a.astype(np.int64) @ b).astype(np.float32) * rs[:, None] * cs[None, :], 0)
    assert np.array_equal(f, ref)


def test_sparsity(ctx, rng):
    A = rng.standard_normal((33, 70)).astype(np.float16)
    P = clrun.sp24_prune(ctx, A)
    grp = np.pad(P, ((0, 0), (0, 2))).reshape(33, -1, 4)
    assert ((grp != 0).sum(-1) <= 2).all()
    vals, meta = clrun.sp24_compress(ctx, A)
    assert vals.shape == (33, 36) and meta.shape == (33, 3) and meta.dtype == np.uint32
    assert np.array_equal(clrun.sp24_decompress(ctx, vals, meta, 70), P)
    B = rng.standard_normal((70, 21)).astype(np.float16)
    C = clrun.gemm_sp(ctx, vals, meta, B)
    ref = P.astype(np.float64) @ B
    assert np.all(np.abs(C - ref) <= 37 * 2.0**-23 * (np.abs(P.astype(np.float64)) @ np.abs(B)) + 1e-30)


def test_grad_scaler_semantics(ctx):
    s = clrun.GradScaler(ctx, init_scale=8.0, growth_interval=2)
    assert s.get_scale() == 8.0 and s.scale(2.0) == 16.0
    g = ctx.upload(np.float32([16, 8]))
    s.unscale_([g])
    assert s.step(lambda: None) and np.array_equal(g.download(), np.float32([2, 1]))
    assert s.get_scale() == 8.0  # the scale moves at update(), as PyTorch's
    s.update()
    g = ctx.upload(np.float32([1, 1]))
    s.unscale_([g])
    s.step(lambda: None)
    s.update()
    assert s.get_scale() == 16.0  # two clean steps: grown
    bad = ctx.upload(np.float16([1, np.inf]))
    s.unscale_([bad])
    ran = []
    assert not s.step(lambda: ran.append(1)) and not ran
    s.update()
    assert s.get_scale() == 8.0  # backed off


def test_profiling(ctx, rng):
    ctx.profile_start()
    clrun.mul(ctx, rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32))
    rows = ctx.profile()
    ctx.profile_stop()
    assert rows and rows[0][1] >= 1 and rows[0][2] >= 0


def _rss_kib():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))


def test_no_leaks_over_many_contexts():
    def once():
        with clrun.open(SPEC) as c:
            b = c.upload(np.ones(100000, np.float32))
            clrun.sum(c, b)
            c.program(source=MUL).multiply_them(np.zeros(8, np.float32), np.ones(8, np.float32), np.ones(8, np.float32), global_size=8)
    for _ in range(5):
        once()
    gc.collect()
    before = _rss_kib()
    for _ in range(40):
        once()
    gc.collect()
    assert _rss_kib() - before < 20 * 1024, "RSS grew by more than 20 MiB over 40 contexts"


def test_closed_context_refuses(rng):
    c = clrun.open(SPEC)
    b = c.upload(np.ones(4, np.float32))
    k = c.program(source=MUL).multiply_them
    c.close()
    with pytest.raises(clrun.InvalidArgument):
        b.download()
    with pytest.raises(clrun.InvalidArgument):
        k(np.zeros(4, np.float32), np.ones(4, np.float32), np.ones(4, np.float32), global_size=4)


def test_threads_one_context_each(rng):
    errors, data = [], [rng.standard_normal(5000).astype(np.float32) for _ in range(4)]

    def work(x):
        try:
            with clrun.open(SPEC) as c:
                for _ in range(5):
                    assert np.array_equal(clrun.mul(c, x, x), x * x)
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    ts = [threading.Thread(target=work, args=(x,)) for x in data]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert not errors, errors


@pytest.mark.parametrize("script,args,expect", [("multiply.py", [], "max |dest - a*b| = 0.0"), ("amp.py", ["60"], "steps skipped"),
                                                ("canny.py", ["-"], "edge pixels")])
def test_seed_examples_run(script, args, expect):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "python"))
    r = subprocess.run([os.sys.executable, os.path.join(root, "examples", "python", script)] + args + [SPEC], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert expect in r.stdout


def test_group_equals_one_device(ctx, rng):
    with clrun.Group("all") as g:
        assert len(g) >= 1 and all(isinstance(d, clrun.DeviceInfo) for d in g.devices)
        g.weights = [1] * len(g)
        assert sum(g.split_rows(1000)) == 1000
        A, B = rng.standard_normal((300, 70)).astype(np.float32), rng.standard_normal((70, 50)).astype(np.float32)
        assert np.array_equal(g.gemm(A, B), clrun.gemm(ctx, A, B))
        x, y = rng.standard_normal(10007).astype(np.float32), rng.standard_normal(10007).astype(np.float32)
        assert np.array_equal(g.vec("mul", x, y), x * y)
        assert abs(g.reduce("sum", x) - x.astype(np.float64).sum()) <= 1e-6 * np.abs(x).sum()
        assert g.reduce("argmax", x) == int(np.argmax(x))


def test_canny_pipeline_in_order(ctx, rng):
    frames = [(rng.integers(0, 256, (30 + 7 * i, 40 + 5 * i), dtype=np.uint8) // 50 * 50).astype(np.uint8) for i in range(7)]
    got = []
    with clrun.CannyPipeline(ctx, lambda tag, edges, err: got.append((tag, edges, err)), 50, 100, depth=3) as p:
        for i, f in enumerate(frames):
            p.send(f, tag=i)
            assert p.pending <= 3
    assert [t for t, _, _ in got] == list(range(7))
    for (t, edges, err), f in zip(got, frames):
        assert err is None and np.array_equal(edges, clrun.canny(ctx, f, 50, 100))
