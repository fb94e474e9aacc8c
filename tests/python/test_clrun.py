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
                                                ("canny.py", ["-"], "edge pixels"), ("arrays.py", [], "sum of relu"),
                                                ("cnn.py", ["--width", "4", "--batch", "32", "--steps", "12", "--train", "384", "--test", "128"],
                                                 "test accuracy")])
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


def test_group_canny_files(ctx, rng, tmp_path):
    """Canny over files on every device of a group: each output equals clrun.canny of its input; a
    bad input fails alone, as a FormatError, in its place."""
    imgs = [(rng.integers(0, 256, (31 + 7 * i, 45 + 3 * i), dtype=np.uint8) // 64 * 64).astype(np.uint8) for i in range(5)]
    ins, outs = [], []
    for i, img in enumerate(imgs):
        clrun.imwrite(tmp_path / f"in{i}.png", img)
        ins.append(tmp_path / f"in{i}.png")
        outs.append(tmp_path / f"out{i}.png")
    (tmp_path / "junk.png").write_bytes(b"not an image")
    ins.insert(2, tmp_path / "junk.png")
    outs.insert(2, tmp_path / "junk-out.png")
    with clrun.Group("all") as g:
        got = g.canny_files(ins, outs, 40, 110, l2=True, jobs=2)
        assert len(got) == len(ins)
        assert isinstance(got[2], clrun.FormatError) and "junk.png" in got[2].message
        assert not (tmp_path / "junk-out.png").exists()
        for i, (r, o) in enumerate(zip(got[:2] + got[3:], outs[:2] + outs[3:])):
            assert r is None
            assert np.array_equal(clrun.imread(o), clrun.canny(ctx, imgs[i], 40, 110, l2=True))
        with pytest.raises(clrun.InvalidArgument):
            g.canny_files(ins, outs[:1], 40, 110)
        with pytest.raises(clrun.InvalidArgument):  # NaN thresholds, an even aperture: the parameters refused
            g.canny_files(ins[:1], outs[:1], float("nan"), 110)
        with pytest.raises(clrun.InvalidArgument):
            g.canny_files(ins[:1], outs[:1], 40, 110, aperture=4)
        assert g.canny_files([], [], 40, 110) == []
    with pytest.raises(clrun.InvalidArgument):  # closed
        g.canny_files(ins, outs, 40, 110)
    # two threads at once, a group each, into outputs of their own: both right
    errs = []

    def batch(tag):
        try:
            with clrun.Group("all") as gt:
                o = [tmp_path / f"t{tag}-{i}.png" for i in range(len(ins))]
                got = gt.canny_files(ins, o, 40, 110, l2=True, jobs=2)
                assert got[2] is not None and all(r is None for j, r in enumerate(got) if j != 2)
                for i, img in enumerate(imgs):
                    assert np.array_equal(clrun.imread(o[i if i < 2 else i + 1]), clrun.canny(ctx, img, 40, 110, l2=True))
        except BaseException as e:  # noqa: B902 - raised in the main thread below
            errs.append(e)

    threads = [threading.Thread(target=batch, args=(t,)) for t in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errs, errs


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


# ---- hardening: what is refused, never computed wrong ------------------------------------------------


def test_kernel_arrays_checked_against_signature_and_range(ctx, rng):
    prog = ctx.program(source=MUL)
    a = rng.standard_normal(400).astype(np.float32)
    dest = np.zeros_like(a)
    for bad in (a.astype(np.int32), a.astype(np.float64), a.astype(np.float16)):
        with pytest.raises(clrun.ArgMismatch, match="gets .* data; the kernel reads float"):
            prog.multiply_them(dest, bad, a, global_size=400)
    with pytest.raises(clrun.ArgMismatch, match="holds 100 elements"):
        prog.multiply_them(dest, a[:100].copy(), a, global_size=400)
    with pytest.raises(clrun.ArgMismatch, match="holds 100 elements"):
        prog.multiply_them(clrun.Out(dest), clrun.In(a), ctx.upload(a[:100]), global_size=400)
    assert isinstance(clrun.ArgMismatch(9, "x"), TypeError) and isinstance(clrun.InvalidArgument(1, "x"), ValueError)
    # a kernel that reads fewer elements than it has work-items says so
    taps = """__kernel void taps(__global float *o, __global const float *w, const uint n)
    { const uint i = get_global_id(0); if (i < n) o[i] = w[i % 3]; }"""
    o, w = np.zeros(64, np.float32), np.arange(3, dtype=np.float32)
    k = ctx.program(source=taps).taps
    with pytest.raises(clrun.ArgMismatch):
        k(o, w, 64, global_size=64)
    k(o, w, 64, global_size=64, check_size=False)
    assert np.array_equal(o, w[np.arange(64) % 3])
    # integer scalars fit their type and are integers; floats do not overflow theirs
    for bad, cls in ((2**32, clrun.InvalidArgument), (-1, clrun.InvalidArgument), (2.5, clrun.ArgMismatch), ("3", clrun.ArgMismatch),
                     (None, clrun.ArgMismatch)):
        with pytest.raises(cls):
            k(o, w, bad, global_size=64, check_size=False)
    src = "__kernel void s(__global float *o, const float x, const short h) { o[0] = x + h; }"
    ks = ctx.program(source=src).s
    with pytest.raises(clrun.InvalidArgument, match="overflows float"):
        ks(o, 1e39, 1, global_size=1)
    with pytest.raises(clrun.InvalidArgument, match="out of the range of short"):
        ks(o, 1.0, 40000, global_size=1)
    ks(o, 2.0, -3, global_size=1)
    assert o[0] == -1.0


@pytest.mark.parametrize("size", [2**40, 2**62, 2**64 - 1, (2**31, 2**31), (2**21, 2**21, 2**21)])
def test_launch_sizes_the_device_cannot_run_are_refused(ctx, size):
    k = ctx.program(source="__kernel void nop(const uint n) { }").nop
    with pytest.raises(clrun.InvalidArgument):
        k(0, global_size=size, local_size=64 if isinstance(size, int) else None)
    with pytest.raises(clrun.InvalidArgument):
        k(0, global_size=size)


@pytest.mark.parametrize("size", [-1, 0, 2**64, 1.5, "8", (1, 2, 3, 4), ()])
def test_launch_sizes_malformed(ctx, size):
    k = ctx.program(source="__kernel void nop(const uint n) { }").nop
    with pytest.raises(clrun.InvalidArgument):
        k(0, global_size=size)


def test_buffers_read_by_numpy_and_images_not_converted(ctx, tmp_path, rng):
    a = rng.standard_normal((3, 5)).astype(np.float32)
    b = ctx.upload(a)
    assert np.array_equal(np.asarray(b), a) and np.asarray(b).shape == (3, 5) and len(b) == 3
    img = rng.integers(0, 256, (20, 30, 3), dtype=np.uint8)
    for bad in (img.astype(np.uint16), img.astype(np.float32), img[..., :2]):
        with pytest.raises(clrun.InvalidArgument):
            clrun.imwrite(str(tmp_path / "x.png"), bad)
        with pytest.raises(clrun.InvalidArgument):
            clrun.canny(ctx, bad, 50, 100)
    smooth = np.broadcast_to((np.arange(30, dtype=np.uint8) * 8)[None, :, None], (20, 30, 3)).copy()
    clrun.imwrite(str(tmp_path / "x.jpg"), smooth)
    assert (tmp_path / "x.jpg").read_bytes()[:3] == b"\xff\xd8\xff"
    assert np.abs(clrun.imread(str(tmp_path / "x.jpg")).astype(int) - smooth).max() <= 8
    with pytest.raises(clrun.InvalidArgument):
        clrun.imwrite(str(tmp_path / "x.bmp"), img)
    assert not (tmp_path / "x.bmp").exists()


def test_group_operands_checked(rng):
    x = rng.standard_normal(5000).astype(np.float32)
    with clrun.Group("0") as g:
        with pytest.raises(clrun.InvalidArgument, match="one dtype and size"):
            g.vec("add", x, x[:100])
        with pytest.raises(clrun.InvalidArgument, match="one dtype and size"):
            g.reduce("dot", x, x[:10])
        with pytest.raises(clrun.InvalidArgument, match="float32 or float16"):
            g.reduce("sum", x.astype(np.float64))
        with pytest.raises(clrun.InvalidArgument):
            g.reduce("dot", x)
        with pytest.raises(clrun.InvalidArgument):
            g.vec("fma", x, x)
        with pytest.raises(clrun.InvalidArgument):
            g.vec("nosuch", x, x)
        assert g.reduce("dot", x, x) == pytest.approx(float(np.dot(x.astype(np.float64), x)), rel=1e-5)
    g.close()
    with pytest.raises(clrun.InvalidArgument, match="closed"):
        g.vec("add", x, x)
    env = dict(os.environ, CLRUN_GROUP_WEIGHTS="0")
    code = "import clrun, numpy as np\ng = clrun.Group('0')\ntry:\n    g.gemm(np.ones((9, 9), np.float32), np.ones((9, 9), np.float32))\n" \
           "except clrun.InvalidArgument as e:\n    print('refused', e)\n"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.path.join(root, "python")
    r = subprocess.run([os.sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert "refused" in r.stdout and "CLRUN_GROUP_WEIGHTS" in r.stdout, r.stdout + r.stderr


def test_sparse_metadata_checked(ctx, rng):
    x = rng.standard_normal((8, 40)).astype(np.float32)
    vals, meta = clrun.sp24_compress(ctx, x)
    bad = meta.copy()
    bad[3, 0] = (bad[3, 0] & ~np.uint32(0xF0)) | np.uint32(0x50)  # group 1 of row 3 names column 1 twice
    with pytest.raises(clrun.FormatError, match="row 3, group 1"):
        clrun.sp24_decompress(ctx, vals, bad, 40)
    with pytest.raises(clrun.FormatError, match="row 3, group 1"):
        clrun.gemm_sp(ctx, vals, bad, rng.standard_normal((40, 6)).astype(np.float32))
    assert np.array_equal(clrun.sp24_decompress(ctx, vals, meta, 40), clrun.sp24_prune(ctx, x))


def test_threads_share_one_context(ctx, rng):
    """Several threads on one Context (and one Kernel): every result exact (the context's lock)."""
    prog = ctx.program(source=MUL)
    errors = []
    data = [rng.integers(-8, 8, 3000).astype(np.float32) for _ in range(4)]
    A = [rng.integers(-3, 4, (40, 40)).astype(np.float32) for _ in range(4)]

    def work(x, a):
        try:
            for _ in range(6):
                d = np.zeros_like(x)
                prog.multiply_them(d, x, x, global_size=x.size)
                assert np.array_equal(d, x * x)
                assert np.array_equal(clrun.mul(ctx, x, x), x * x)
                assert np.array_equal(clrun.gemm(ctx, a, a), a @ a)
                assert clrun.sum(ctx, x) == float(x.astype(np.float64).sum())
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    ts = [threading.Thread(target=work, args=(x, a)) for x, a in zip(data, A)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert not errors, errors


def test_pipeline_callback_exceptions_and_closing(rng):
    frames = [rng.integers(0, 256, (24, 31), dtype=np.uint8) for _ in range(6)]
    with clrun.open(SPEC) as c:
        def boom(tag, edges, err):
            if tag == 1:
                raise RuntimeError("deliver failed")
        p = clrun.CannyPipeline(c, boom, 50, 100, depth=2)
        with pytest.raises(RuntimeError, match="deliver failed"):
            for i, f in enumerate(frames):
                p.send(f, tag=i)
            p.flush()
        p.flush()
        p.close()
        with pytest.raises(clrun.InvalidArgument):
            p.send(frames[0])
        with pytest.raises(clrun.InvalidArgument):
            clrun.CannyPipeline(c, boom, 50, 100).send(frames[0].astype(np.float32))
    for close_ctx in (False, True):  # closing the pipeline, or its context, from its own callback
        c = clrun.open(SPEC)
        seen = []

        def closer(tag, edges, err):
            seen.append(tag)
            if tag == 1:
                (c if close_ctx else p).close()
        p = clrun.CannyPipeline(c, closer, 50, 100, depth=2)
        for i, f in enumerate(frames):
            if not p._h:
                break
            p.send(f, tag=i)
        if p._h:
            p.flush()
        assert seen[:2] == [0, 1] and 1 in seen
        p.close()
        c.close()


def test_bad_python_inputs_raise_clrun_errors(ctx):
    """Every op and constructor turns a bad argument into a clrun.Error (InvalidArgument is also a
    ValueError), never a bare TypeError, IndexError or ctypes error."""
    x = np.zeros(8, np.float32)
    calls = [lambda: clrun.mul(ctx, None, None), lambda: clrun.axpy(ctx, x, x, x), lambda: clrun.cast(ctx, x, x),
             lambda: clrun.quantize(ctx, None, "x"), lambda: clrun.gemm_s8(ctx, 3, "x"), lambda: clrun.calibrate("x"),
             lambda: clrun.sp24_decompress(ctx, x, x, x), lambda: clrun.scale(ctx, None, x), lambda: clrun.open(3.5),
             lambda: clrun.Group(["0"]), lambda: clrun.gemm(ctx, np.zeros(3, np.float32), np.zeros(3, np.float32))]
    for f in calls:
        with pytest.raises(clrun.Error):
            f()
