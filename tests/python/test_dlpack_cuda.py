"""DLPack with PyTorch and CuPy on memory shared with the CUDA driver (NVIDIA, $CLRUN_CUDA=1): Arrays
exported as CUDA memory without a copy (pointers compared), CUDA tensors taken back as views of that
memory or copied, writes on either side ordered. Elsewhere (no NVIDIA GPU, no PyTorch with CUDA) the
tests are reported skipped with the reason."""
import os

import numpy as np
import pytest

import clrun

from conftest import DEVICE

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("PyTorch sees no CUDA device", allow_module_level=True)

BIG = 3 << 20  # float32 elements: 12 MiB, past the 4 MiB from which buffers are shared


@pytest.fixture(scope="module")
def cctx():
    old = os.environ.get("CLRUN_CUDA")
    os.environ["CLRUN_CUDA"] = "1"
    try:
        with clrun.open(DEVICE) as c:
            probe = c.empty((BIG,), np.float32)
            if probe.__dlpack_device__()[0] != 2:
                pytest.skip(f"memory of {c.device.name} is not shared with CUDA here (see CLRUN_VERBOSE=1)")
            yield c
    finally:
        if old is None:
            os.environ.pop("CLRUN_CUDA", None)
        else:
            os.environ["CLRUN_CUDA"] = old


def cuda_address(a):
    from clrun import _dlpack
    return _dlpack._cuda(a)[0]


def test_export_shares_memory(cctx, rng):
    x = rng.standard_normal(BIG).astype(np.float32)
    a = cctx.asarray(x)
    t = torch.from_dlpack(a)
    assert t.is_cuda and t.data_ptr() == cuda_address(a)
    assert np.array_equal(t.cpu().numpy(), x)
    v = a[1000:1000 + 4096 * 256].reshape(4096, 256)[:, 3:]
    tv = torch.from_dlpack(v)
    assert tv.data_ptr() == cuda_address(a) + (1000 + 3) * 4 and tv.stride() == (256, 1)
    assert np.array_equal(tv.cpu().numpy(), x[1000:1000 + 4096 * 256].reshape(4096, 256)[:, 3:])


def test_writes_on_either_side_are_ordered(cctx, rng):
    x = rng.integers(-1000, 1000, BIG).astype(np.float32)
    a = cctx.asarray(x)
    b = a * 2  # clrun's kernel, queued
    tb = torch.from_dlpack(b)  # the queue finished: PyTorch's stream reads what it wrote
    assert np.array_equal((tb + 1).cpu().numpy(), x * 2 + 1)
    tb.mul_(3)  # PyTorch writes on its stream
    c = clrun.from_dlpack(tb)  # the same memory, no copy, after PyTorch's write
    assert cuda_address(c) == cuda_address(b)
    assert np.array_equal((c + 0).get(), x * 6)


def test_foreign_tensors_are_copied(cctx, rng):
    for dtype, np_dtype in ((torch.float32, np.float32), (torch.float16, np.float16), (torch.int32, np.int32)):
        u = (torch.randn(1500, 700, device="cuda") * 100).to(dtype)
        for view in (u, u.t(), u[:, ::3], u[7:9], u[5], torch.empty(0, 3, device="cuda", dtype=dtype)):
            got = clrun.from_dlpack(view, cctx).get()
            assert got.dtype == np_dtype and np.array_equal(got, view.cpu().numpy())
    w = torch.randn(4096, 1024, device="cuda").to(torch.bfloat16)
    g = clrun.from_dlpack(w, cctx)
    assert g.bf16 and np.array_equal(g.get(), w.view(torch.int16).cpu().numpy().view(np.uint16))
    # written on PyTorch's stream just before: the copy waits for it
    big = torch.zeros(BIG, device="cuda")
    big.add_(5)
    assert float(clrun.from_dlpack(big, cctx).get().min()) == 5.0


def test_cupy(cctx, rng):
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    x = rng.standard_normal(BIG).astype(np.float32)
    a = cctx.asarray(x)
    ca = cupy.from_dlpack(a)
    assert ca.data.ptr == cuda_address(a)
    assert np.array_equal(cupy.asnumpy(ca * 2), x * 2)
    cb = cupy.arange(12345, dtype=cupy.float32)
    assert np.array_equal(clrun.from_dlpack(cb, cctx).get(), np.arange(12345, dtype=np.float32))


def test_stream_argument(cctx):
    a = cctx.zeros((BIG,), np.float32)
    with pytest.raises(ValueError, match="ambiguous"):
        a.__dlpack__(stream=0)
    with pytest.raises(TypeError):
        a.__dlpack__(stream="default")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        t = torch.from_dlpack(a)  # PyTorch passes its current stream
        assert float(t.sum()) == 0.0
