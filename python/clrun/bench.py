"""python -m clrun.bench: clrun.Array against CuPy and PyOpenCL's pyopencl.array, side by side in one run.

    python -m clrun.bench [-d DEVICE] [--size N] [--chain N] [--gemm N] [--repeat R] [--json]

Each row is the median of R timed runs after a warm-up, the device finished after each (CuPy:
its device synchronised). A peer that is not installed (or has no device) is named as missing.
  - add: c = a + b on N float32 elements: time and bandwidth (12 bytes per element), and per call
    on 4096 elements (the Python layer's cost); the C API through ctypes as the floor.
  - matmul: a @ b, float32 and float16 (clrun: float32 result; CuPy: float16 result, cuBLAS),
    square of the --gemm size: TFLOP/s.
  - chain: float((a * b + c).sum()) on --chain elements.
Defaults: on GPUs N = 256 Mi, chain 64 Mi, gemm 8192; otherwise 4 Mi, 1 Mi, 512.
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np

import clrun
from clrun import _lib as L


def _median(fn, sync, repeat):
    fn()
    sync()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def _per_call(fn, sync, calls):
    fn()
    sync()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def _cupy():
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        return cupy
    except Exception as e:  # not installed, or no CUDA device
        return str(e).splitlines()[0] if str(e) else type(e).__name__


def _pyopencl(ctx):
    try:
        import pyopencl as cl
        import pyopencl.array as cla
    except Exception as e:
        return str(e).splitlines()[0]
    try:  # the same device as clrun's context, through its raw handles
        pctx = cl.Context.from_int_ptr(ctx.int_ptr)
        q = cl.CommandQueue(pctx, cl.Device.from_int_ptr(ctx.device_int_ptr))
        return cl, cla, pctx, q
    except Exception as e:
        return str(e).splitlines()[0]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m clrun.bench", description=__doc__.split("\n")[0])
    ap.add_argument("-d", "--device", default=None)
    ap.add_argument("--size", type=int, default=None)
    ap.add_argument("--chain", type=int, default=None)
    ap.add_argument("--gemm", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rows = []

    def row(bench, impl, **fig):
        r = {"bench": bench, "impl": impl, **fig}
        rows.append(r)
        if args.json:
            print(json.dumps(r), flush=True)
        else:
            figs = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in fig.items())
            print(f"{bench:8s} {impl:34s} {figs}", flush=True)

    with clrun.open(args.device) as ctx:
        gpu = ctx.device.type == "gpu"
        n = args.size or (256 << 20 if gpu else 4 << 20)
        nc = args.chain or (64 << 20 if gpu else 1 << 20)
        ng = args.gemm or (8192 if gpu else 512)
        R = max(1, args.repeat)
        if not args.json:
            print(f"device: {ctx.device.name} ({ctx.device.platform_name}); add {n}, chain {nc}, gemm {ng}³, median of {R}")
        cp = _cupy() if gpu else "not a GPU run"
        po = _pyopencl(ctx)
        rng = np.random.default_rng(0)
        sync = ctx.finish

        # ---- add
        x = rng.standard_normal(n, dtype=np.float32)
        y = rng.standard_normal(n, dtype=np.float32)
        a, b = ctx.asarray(x), ctx.asarray(y)
        t = _median(lambda: a + b, sync, R)
        row("add", "clrun.Array a + b", ms=t * 1e3, GBps=12.0 * n / t / 1e9)
        c = ctx.empty(n)
        ah, bh, ch = a._mem()[0], b._mem()[0], c._mem()[0]
        t = _median(lambda: L.vec(ctx.handle, 1, 0, n, 1.0, ch, 0, ah, 0, bh, 0, None, 0), sync, R)
        row("add", "C API clrun_vec (ctypes)", ms=t * 1e3, GBps=12.0 * n / t / 1e9)
        del c
        if isinstance(cp, str):
            row("add", "CuPy a + b", missing=cp)
        else:
            ca, cb = cp.asarray(x), cp.asarray(y)
            t = _median(lambda: ca + cb, cp.cuda.Device().synchronize, R)
            row("add", "CuPy a + b", ms=t * 1e3, GBps=12.0 * n / t / 1e9)
            del ca, cb
        if isinstance(po, str):
            row("add", "pyopencl.array a + b", missing=po)
        else:
            cl, cla, pctx, q = po
            pa, pb = cla.to_device(q, x), cla.to_device(q, y)
            t = _median(lambda: pa + pb, q.finish, R)
            row("add", "pyopencl.array a + b", ms=t * 1e3, GBps=12.0 * n / t / 1e9)
            del pa, pb
        del a, b
        small = 4096
        sa, sb = ctx.asarray(x[:small]), ctx.asarray(y[:small])
        calls = 2000 if gpu else 500
        t_arr = _per_call(lambda: sa + sb, sync, calls)
        row("add", f"clrun.Array a + b, {small} per call", us=t_arr * 1e6)
        sc = ctx.empty(small)
        sah, sbh, sch = sa._mem()[0], sb._mem()[0], sc._mem()[0]
        t_c = _per_call(lambda: L.vec(ctx.handle, 1, 0, small, 1.0, sch, 0, sah, 0, sbh, 0, None, 0), sync, calls)
        row("add", f"C API clrun_vec (ctypes), {small} per call", us=t_c * 1e6)
        if not isinstance(po, str):
            pa, pb = cla.to_device(q, x[:small]), cla.to_device(q, y[:small])
            t_p = _per_call(lambda: pa + pb, q.finish, calls)
            row("add", f"pyopencl.array a + b, {small} per call", us=t_p * 1e6, clrun_ratio=t_arr / t_p)
        if not isinstance(cp, str):
            ca, cb = cp.asarray(x[:small]), cp.asarray(y[:small])
            t_q = _per_call(lambda: ca + cb, cp.cuda.Device().synchronize, calls)
            row("add", f"CuPy a + b, {small} per call", us=t_q * 1e6)
        del x, y

        # ---- matmul
        for dt in (np.float32, np.float16):
            m = rng.standard_normal((ng, ng), dtype=np.float32).astype(dt)
            flop = 2.0 * ng ** 3
            A = ctx.asarray(m)
            t = _median(lambda: A @ A, sync, R)
            row("matmul", f"clrun.Array a @ a {np.dtype(dt).name}", ms=t * 1e3, TFLOPs=flop / t / 1e12)
            d = L.gemm_desc(0 if dt == np.float32 else 1, 1, ng, ng, ng)  # the same product through the C API, into a C made once
            Cd = ctx.empty((ng, ng))
            d.a = d.b = A.handle
            d.c = Cd.handle
            be = L.gemm_resolve(ctx.handle, d)
            t = _median(lambda: L.gemm(ctx.handle, d), sync, R)
            row("matmul", f"C API clrun_gemm {np.dtype(dt).name} (ctypes)", ms=t * 1e3, TFLOPs=flop / t / 1e12,
                backend=L.gemm_backend_name(be).decode())
            del Cd
            if not isinstance(cp, str):
                C = cp.asarray(m)
                t = _median(lambda: C @ C, cp.cuda.Device().synchronize, R)
                row("matmul", f"CuPy a @ a {np.dtype(dt).name} (cuBLAS)", ms=t * 1e3, TFLOPs=flop / t / 1e12)
                del C
            del A

        # ---- chain
        x, y, z = (rng.standard_normal(nc, dtype=np.float32) for _ in range(3))
        a, b, c = ctx.asarray(x), ctx.asarray(y), ctx.asarray(z)
        t = _median(lambda: float((a * b + c).sum()), sync, R)
        row("chain", "clrun.Array float((a*b + c).sum())", ms=t * 1e3)
        if not isinstance(cp, str):
            ca, cb, cc = cp.asarray(x), cp.asarray(y), cp.asarray(z)
            t2 = _median(lambda: float((ca * cb + cc).sum()), cp.cuda.Device().synchronize, R)
            row("chain", "CuPy float((a*b + c).sum())", ms=t2 * 1e3, clrun_ratio=t / t2)
        if not isinstance(po, str):
            pa, pb, pc = (cla.to_device(q, v) for v in (x, y, z))
            t3 = _median(lambda: float(cla.sum(pa * pb + pc).get()), q.finish, R)
            row("chain", "pyopencl.array float(sum(a*b + c))", ms=t3 * 1e3, clrun_ratio=t / t3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
