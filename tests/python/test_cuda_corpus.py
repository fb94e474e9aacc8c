"""The corpus of CUDA kernels gathered from public material (tests/data/cuda/corpus, licences in
LICENSES.md there): each is built unchanged through clrun.cuda and its results compared with NumPy.
Skipped, saying why, where libclrun has no CUDA kernel text."""
import os

import numpy as np
import pytest

import clrun

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "cuda", "corpus")


def _why():
    from clrun.cuda.compiler import translate
    try:
        translate("__global__ void k(float *a) { a[0] = 1.0f; }\n")
    except clrun.Unsupported as e:
        return str(e)
    return None


pytestmark = pytest.mark.skipif(_why() is not None, reason=f"no CUDA kernel text here: {_why()}")


def module(name):
    from clrun.cuda.compiler import SourceModule
    with open(os.path.join(CORPUS, name)) as f:
        return SourceModule(f.read(), name=name)


def test_hello_gpu(rng):
    import clrun.cuda.driver as drv
    f = module("hello_gpu.cu").get_function("multiply_them")
    a, b = (rng.standard_normal(400).astype(np.float32) for _ in range(2))
    dest = np.zeros_like(a)
    f(drv.Out(dest), drv.In(a), drv.In(b), block=(400, 1, 1), grid=(1, 1))
    assert np.array_equal(dest, a * b)


def test_matrixmul_simple(rng):
    import clrun.cuda.driver as drv
    f = module("matrixmul_simple.cu").get_function("MatrixMulKernel")
    a, b = (rng.standard_normal((16, 16)).astype(np.float32) for _ in range(2))
    c = np.zeros((16, 16), np.float32)
    f(drv.In(a), drv.In(b), drv.Out(c), block=(16, 16, 1))
    assert np.allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_matrixmul_tiled(rng):
    from clrun.cuda import gpuarray
    f = module("matrixmul_tiled.cu").get_function("MatrixMulKernel")
    a, b = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2))
    ga, gb, gc = gpuarray.to_gpu(a), gpuarray.to_gpu(b), gpuarray.empty((64, 64), np.float32)
    f(ga, gb, gc, grid=(4, 4), block=(16, 16, 1))
    assert np.allclose(gc.get(), a @ b, rtol=1e-4, atol=1e-4)


def test_matrix_transpose(rng):
    from clrun.cuda import gpuarray
    f = module("matrix_transpose.cu").get_function("transpose")
    a = rng.standard_normal((48, 64)).astype(np.float32)  # height 48, width 64: multiples of the block
    at = gpuarray.empty((64, 48), np.float32)
    f(at, gpuarray.to_gpu(a), np.int32(64), np.int32(48), grid=(4, 3), block=(16, 16, 1))
    assert np.array_equal(at.get(), a.T)


def test_game_of_life(rng):
    import clrun.cuda.driver as drv
    f = module("game_of_life.cu").get_function("step")
    n = 32
    c = (rng.random((n, n)) < 0.3).astype(np.int32)
    m = np.zeros_like(c)
    f(drv.In(c), drv.Out(m), block=(8, 8, 1), grid=(4, 4))
    count = sum(np.roll(np.roll(c, dy, 0), dx, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx)
    want = np.where(count == 3, 1, np.where(count == 2, c, 0))
    assert np.array_equal(m, want)


def test_rgb2gray(rng):
    import clrun.cuda.driver as drv
    if not clrun.open().device.fp64:
        pytest.skip("the kernel's constants are doubles and this device has no fp64")
    f = module("simple_rgb2gray.cu").get_function("rgb2gray")
    r, g, b = (rng.random((256, 256)).astype(np.float32) for _ in range(3))
    dest = np.zeros_like(r)
    f(drv.Out(dest), drv.In(r), drv.In(g), drv.In(b), block=(256, 1, 1), grid=(256, 1))
    want = (0.299 * r.astype(np.float64) + 0.587 * g + 0.114 * b).astype(np.float32)
    assert np.allclose(dest, want, rtol=1e-6, atol=1e-6)


def test_manhattan_distance(rng):
    import clrun.cuda.driver as drv
    f = module("manhattan_distance.cu").get_function("diffusion")
    w = 7
    res = rng.integers(-50, 50, (w, w)).astype(np.int32)
    want = ((res - 1.0) + (res - 2.0) + (res - 3.0)).astype(np.int32)
    f(drv.InOut(res), np.int32(w), np.int32(w), np.float32(1), np.float32(2), np.float32(3), block=(w, w, 1))
    assert np.array_equal(res, want)


def test_doublify_prepared(rng):
    import clrun.cuda.driver as drv
    a = rng.standard_normal((4, 4)).astype(np.float32)
    a_gpu = drv.mem_alloc(a.size * a.dtype.itemsize)
    drv.memcpy_htod(a_gpu, a)
    func = module("doublify.cu").get_function("doublify")
    func.prepare("P")
    func.prepared_call((1, 1), (4, 4, 1), a_gpu, shared_size=20)
    out = np.empty_like(a)
    drv.memcpy_dtoh(out, a_gpu)
    assert np.array_equal(out, 2 * a)


def test_constant_memory(rng):
    import clrun.cuda.driver as drv
    mod = module("constant_memory.cu")
    f = mod.get_function("copy_constant_into_global")
    const_array, nbytes = mod.get_global("const_array")
    assert nbytes == 128
    host = rng.integers(0, 255, 32).astype(np.float32)
    result = drv.mem_alloc_like(host)
    drv.memcpy_htod(const_array, host)
    f(result, grid=(1, 1), block=(32, 1, 1))
    back = np.zeros_like(host)
    drv.memcpy_dtoh(back, result)
    assert np.array_equal(back, host)


def test_large_smem():
    from clrun.cuda import gpuarray
    f = module("large_smem.cu").get_function("kernel")  # "kernel": a word OpenCL C reserves
    arg = gpuarray.zeros((4000,), dtype=np.float32)  # as PyCUDA's test: float memory to an int*
    f(arg, block=(1, 1, 1))
    assert arg.get().view(np.int32)[0] == 0


def test_vector_add(rng):
    from clrun.cuda import gpuarray
    f = module("vectorAdd_kernel.cu").get_function("VecAdd_kernel")
    n = 50000
    a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    c = gpuarray.empty(n, np.float32)
    f(gpuarray.to_gpu(a), gpuarray.to_gpu(b), c, np.int32(n), block=(256, 1, 1), grid=((n + 255) // 256, 1))
    assert np.array_equal(c.get(), a + b)


def test_simple_atomic_intrinsics():
    """NVIDIA's sample: every atomic on one word each, from 256 threads (its computeGold's checks)."""
    import clrun.cuda.driver as drv
    f = module("simpleAtomicIntrinsics_kernel.cu").get_function("testKernel")
    n = 256
    data = np.zeros(11, np.int32)
    data[8] = data[10] = 0xFF
    f(drv.InOut(data), block=(64, 1, 1), grid=(n // 64, 1))
    tids = np.arange(n, dtype=np.int64)
    assert data[0] == 10 * n and data[1] == -10 * n
    assert 0 <= data[2] < n and data[3] == n - 1 and data[4] == 0
    assert data[5] == n % 18 and data[6] == (138 - n % 138) % 138
    assert 0 <= data[7] < n
    want_and = 0xFF
    for t in tids:
        want_and &= int(2 * t + 7)
    want_xor = 0xFF
    for t in tids:
        want_xor ^= int(t)
    assert data[8] == want_and and data[9] == -1 and data[10] == want_xor


REFUSED = [
    ("clock_kernel.cu", r"clock_kernel.cu:\d+:\d+: clock\(\)"),
    ("simpleVote_kernel.cu", r"simpleVote_kernel.cu:\d+:\d+: warp intrinsic __any_sync"),
    ("simpleTexture_kernel.cu", r"simpleTexture_kernel.cu:\d+:\d+: texture and surface access \(tex2D\)"),
    ("reduction_kernel.cu", r"reduction_kernel.cu:\d+:\d+: #include <cooperative_groups.h>"),
    ("inlinePTX_kernel.cu", r"inlinePTX_kernel.cu:\d+:\d+: an asm statement"),
    ("matrixMul_kernel.cu", r"matrixMul_kernel.cu:\d+:\d+: template 'matrixMul'"),
]


@pytest.mark.parametrize("name,message", REFUSED)
def test_refused_by_construct(name, message):
    """Kernels of the corpus clrun cannot translate: refused, naming the file, line and construct."""
    with pytest.raises(clrun.BuildFailed, match=message):
        module(name)


def test_corpus_coverage():
    """Every kernel file of the corpus is in a test here, run or refused."""
    run = {"hello_gpu.cu", "matrixmul_simple.cu", "matrixmul_tiled.cu", "matrix_transpose.cu", "game_of_life.cu",
           "simple_rgb2gray.cu", "manhattan_distance.cu", "doublify.cu", "constant_memory.cu", "large_smem.cu",
           "vectorAdd_kernel.cu", "simpleAtomicIntrinsics_kernel.cu"}
    files = {f for f in os.listdir(CORPUS) if f.endswith(".cu")}
    assert files == run | {n for n, _ in REFUSED}
    print(f"corpus: {len(run)} of {len(files)} run ({100 * len(run) // len(files)}%), {len(REFUSED)} refused by construct")
