"""Time per call from Python of the seed's multiply (400 floats, a cached kernel, arrays in and out):
clrun's bindings against PyOpenCL on the same device, in one run, interleaved.

usage: python3 tools/peers/py_call_overhead.py [CALLS] [ROUNDS]   (PYTHONPATH=python, CLRUN_LIBRARY set)
Prints the median µs a call of each way over many short interleaved samples, and the ratios.
"""
import statistics
import sys
import time

import numpy as np

import clrun

SRC = """__kernel void multiply_them(__global float *dest, __global const float *a, __global const float *b)
{ const int i = get_global_id(0); dest[i] = a[i] * b[i]; }"""
calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
a, b = np.random.randn(400).astype(np.float32), np.random.randn(400).astype(np.float32)
dest = np.zeros_like(a)


def clrun_setup():
    ctx = clrun.open("cpu")
    k = ctx.program(source=SRC).multiply_them

    def call():
        k(clrun.Out(dest), clrun.In(a), clrun.In(b), global_size=400)
    ba, bb, bd = ctx.upload(a), ctx.upload(b), ctx.empty(400)

    def call_buffers():  # the C API's sequence: upload, launch, download (buffers kept)
        ba.upload(a)
        bb.upload(b)
        k(bd, ba, bb, global_size=400, wait=False)
        bd.download(dest)
    return ctx, call, call_buffers


def pyopencl_setup():
    import pyopencl as cl
    dev = [d for p in cl.get_platforms() for d in p.get_devices(cl.device_type.CPU)][0]
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SRC).build()
    knl = prg.multiply_them
    mf = cl.mem_flags

    def call():  # PyCUDA's drv.In/Out written in PyOpenCL: buffers per call, copy in, launch, copy out
        ba = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
        bb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
        bd = cl.Buffer(ctx, mf.WRITE_ONLY, dest.nbytes)
        knl(q, (400,), None, bd, ba, bb)
        cl.enqueue_copy(q, dest, bd)
    ba, bb, bd = (cl.Buffer(ctx, mf.READ_WRITE, a.nbytes) for _ in range(3))

    def call_buffers():
        cl.enqueue_copy(q, ba, a)
        cl.enqueue_copy(q, bb, b)
        knl(q, (400,), None, bd, ba, bb)
        cl.enqueue_copy(q, dest, bd)
    return ctx, call, call_buffers


def per_call(fn):
    fn()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls * 1e6


_, c_call, c_buf = clrun_setup()
_, p_call, p_buf = pyopencl_setup()
# many short samples, the four ways interleaved: this machine's scatter hits them alike
fns = {"clrun": c_call, "pyopencl": p_call, "clrun buffers": c_buf, "pyopencl buffers": p_buf}
res = {k: [] for k in fns}
batch = max(calls // 20, 20)
for r in range(rounds * 20):
    for k, fn in fns.items():
        fn()
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        res[k].append((time.perf_counter() - t0) / batch * 1e6)
m = {k: statistics.median(v) for k, v in res.items()}
print(f"{rounds * 20} samples of {batch} calls each, interleaved")
print("median µs a call: " + ", ".join(f"{k} {v:.1f}" for k, v in m.items()))
print(f"clrun / pyopencl: arrays in and out {m['clrun'] / m['pyopencl']:.2f}×, kept buffers {m['clrun buffers'] / m['pyopencl buffers']:.2f}×")
