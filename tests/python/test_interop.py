"""clrun and PyOpenCL on each other's objects (clrun_ctx_wrap, clrun_buf_wrap, the int_ptr handles):
PyOpenCL's context and arrays handed to clrun's ops and the results read back through PyOpenCL, and
clrun's context and buffers handed to a PyOpenCL kernel."""
import os

import numpy as np
import pytest

import clrun

cl = pytest.importorskip("pyopencl", reason="Debian's python3-pyopencl (tools/bootstrap.sh test installs it)")
import pyopencl.array as cla  # noqa: E402


def _device():
    spec = os.environ.get("CLRUN_TEST_DEVICE") or "cpu"
    with clrun.open(spec) as c:
        return c.device_int_ptr  # a root device: valid after the context closes


def test_pyopencl_objects_in_clrun():
    rng = np.random.default_rng()
    dev = cl.Device.from_int_ptr(_device())
    pctx = cl.Context([dev])
    q = cl.CommandQueue(pctx)
    a = rng.integers(-4, 5, (37, 53)).astype(np.float32)
    b = rng.integers(-4, 5, (53, 29)).astype(np.float32)
    da, db = cla.to_device(q, a), cla.to_device(q, b)
    dc = cla.zeros(q, (37, 29), np.float32)
    ctx = clrun.Context.from_int_ptr(pctx, dev, q)
    assert ctx.int_ptr == pctx.int_ptr and ctx.queue_int_ptr == q.int_ptr
    ba = clrun.Buffer.from_int_ptr(ctx, da.data, a.shape, np.float32)
    bb = clrun.Buffer.from_int_ptr(ctx, db.data, b.shape, np.float32)
    bc = clrun.Buffer.from_int_ptr(ctx, dc.data, (37, 29), np.float32)
    clrun.gemm(ctx, ba, bb, c=bc)  # into PyOpenCL's C, on PyOpenCL's queue
    assert clrun.sum(ctx, bb) == pytest.approx(float(b.sum()), abs=0)
    ba.free(), bb.free(), bc.free()
    ctx.close()
    np.testing.assert_array_equal(dc.get(), a @ b)  # small integers: exact; read after clrun let go
    da2 = da * 2  # PyOpenCL keeps working on its objects
    np.testing.assert_array_equal(da2.get(), a * 2)


def test_clrun_objects_in_pyopencl():
    with clrun.open(os.environ.get("CLRUN_TEST_DEVICE") or "cpu") as ctx:
        x = np.arange(1000, dtype=np.float32)
        bx = ctx.upload(x)
        pctx = cl.Context.from_int_ptr(ctx.int_ptr)
        q = cl.CommandQueue.from_int_ptr(ctx.queue_int_ptr)
        mem = cl.Buffer.from_int_ptr(bx.int_ptr)
        prg = cl.Program(pctx, "__kernel void twice(__global float *x) { x[get_global_id(0)] *= 2.0f; }").build()
        prg.twice(q, (1000,), None, mem)
        q.finish()
        np.testing.assert_array_equal(bx.download(), 2 * x)
        del mem, prg, q, pctx  # PyOpenCL's references go; clrun's objects live on
        np.testing.assert_array_equal(bx.download(), 2 * x)


def test_handles_refused():
    with clrun.open(os.environ.get("CLRUN_TEST_DEVICE") or "cpu") as ctx:
        with pytest.raises(clrun.InvalidArgument):
            clrun.Buffer.from_int_ptr(ctx, 0, (4,))
        with pytest.raises(clrun.InvalidArgument):
            clrun.Context.from_int_ptr("context", ctx.device_int_ptr)
        other = cl.Context([cl.Device.from_int_ptr(ctx.device_int_ptr)])
        mem = cl.Buffer(other, cl.mem_flags.READ_WRITE, 64)
        with pytest.raises(clrun.InvalidArgument, match="another OpenCL context"):
            clrun.Buffer.from_int_ptr(ctx, mem, (16,))
