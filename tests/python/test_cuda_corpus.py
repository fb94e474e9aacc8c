"""The corpus of CUDA kernels gathered from public material (tests/data/cuda/corpus, licences in
LICENSES.md there): each is built unchanged through clrun.cuda and its results compared with NumPy.
Skipped, saying why, where libclrun has no CUDA kernel text."""
import os
import re

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


def test_shared_memory_reverse(rng):
    """NVIDIA's blog (CUDA C++ series, shared memory): static and dynamic shared arrays."""
    import clrun.cuda.driver as drv
    mod = module("shared_memory_reverse.cu")
    n = 64
    a = rng.integers(-1000, 1000, n).astype(np.int32)
    for name, shared in (("staticReverse", 0), ("dynamicReverse", n * 4)):
        d = a.copy()
        mod.get_function(name)(drv.InOut(d), np.int32(n), block=(n, 1, 1), shared=shared)
        assert np.array_equal(d, a[::-1]), name


def test_blog_transpose(rng):
    """NVIDIA's blog (efficient matrix transpose): the copies and the three transposes, 32x32 tiles of 32x8 threads."""
    from clrun.cuda import gpuarray
    mod = module("blog_transpose.cu")
    n = 96
    a = rng.standard_normal((n, n)).astype(np.float32)
    ga = gpuarray.to_gpu(a)
    for name, want in (("copy", a), ("copySharedMem", a), ("transposeNaive", a.T), ("transposeCoalesced", a.T),
                       ("transposeNoBankConflicts", a.T)):
        out = gpuarray.zeros((n, n), np.float32)
        mod.get_function(name)(out, ga, grid=(n // 32, n // 32), block=(32, 8, 1))
        assert np.array_equal(out.get(), want), name


def test_finite_difference(rng):
    """NVIDIA's blog (finite difference methods): eighth-order derivatives along x, y and z of a periodic 64^3
    field, with small and large pencils; the stencil's coefficients are __constant__ scalars set from the host."""
    import clrun.cuda.driver as drv
    mod = module("finite_difference.cu")
    m, sp, lp = 64, 4, 32
    f = rng.standard_normal((m, m, m)).astype(np.float32)  # [z][y][x]
    dsinv = np.float32(m - 1)
    coef = [np.float32(4 / 5) * dsinv, np.float32(-1 / 5) * dsinv, np.float32(4 / 105) * dsinv, np.float32(-1 / 280) * dsinv]
    for axis_name in "xyz":
        for c, name in zip(coef, "abcd"):
            ptr, nbytes = mod.get_global(f"c_{name}{axis_name}")
            assert nbytes == 4
            drv.memcpy_htod(ptr, np.array([c], np.float32))
    shapes = {"derivative_x": ((m // sp, m), (m, sp, 1), 2), "derivative_x_lPencils": ((m // lp, m), (m, sp, 1), 2),
              "derivative_y": ((m // sp, m), (sp, m, 1), 1), "derivative_y_lPencils": ((m // lp, m), (lp, m * sp // lp, 1), 1),
              "derivative_z": ((m // sp, m), (sp, m, 1), 0), "derivative_z_lPencils": ((m // lp, m), (lp, m * sp // lp, 1), 0)}
    for name, (grid, block, axis) in shapes.items():
        p = np.concatenate([np.take(f, range(m - 5, m - 1), axis), f, np.take(f, range(1, 5), axis)], axis)  # period m - 1
        sh = lambda o: np.take(p, range(4 + o, 4 + o + m), axis)  # noqa: E731
        want = sum(c * (sh(k + 1) - sh(-k - 1)) for k, c in enumerate(coef))
        df = np.zeros_like(f)
        mod.get_function(name)(drv.In(f), drv.Out(df), grid=grid, block=block)
        assert np.allclose(df, want, rtol=1e-5, atol=2e-3), name


def test_samples_intro(rng):
    """Kernels of NVIDIA's introductory samples (simpleZeroCopy, asyncAPI, simpleMultiCopy, cudaOpenMP,
    simpleMultiGPU), each run as its sample runs it."""
    import clrun.cuda.driver as drv
    mod = module("samples_intro.cu")
    n = 1 << 14
    a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    c = np.zeros_like(a)
    mod.get_function("vectorAddGPU")(drv.In(a), drv.In(b), drv.InOut(c), np.int32(n - 3), block=(256, 1, 1), grid=(n // 256, 1))
    assert np.array_equal(c[:-3], (a + b)[:-3]) and not c[-3:].any()
    g = rng.integers(-100, 100, n).astype(np.int32)
    want = g + 26
    mod.get_function("increment_kernel")(drv.InOut(g), np.int32(26), block=(512, 1, 1), grid=(n // 512, 1))
    assert np.array_equal(g, want)
    out = np.zeros_like(g)
    mod.get_function("incKernel")(drv.InOut(out), drv.In(g), np.int32(n - 5), np.int32(3), block=(128, 1, 1), grid=(n // 128, 1))
    assert np.array_equal(out[:-5], g[:-5] + 1) and not out[-5:].any()
    h = g.copy()
    mod.get_function("kernelAddConstant")(drv.InOut(h), np.int32(-7), block=(128, 1, 1), grid=(n // 128, 1))
    assert np.array_equal(h, g - 7)
    threads = 32 * 256
    part = np.zeros(threads, np.float32)
    x = rng.standard_normal(n * 3 + 11).astype(np.float32)
    mod.get_function("reduceKernel")(drv.Out(part), drv.In(x), np.int32(x.size), block=(256, 1, 1), grid=(32, 1))
    want = np.zeros(threads, np.float32)
    for pos in range(0, x.size, threads):  # each thread's sum in its own order
        chunk = x[pos:pos + threads]
        want[:chunk.size] += chunk
    assert np.array_equal(part, want)


def test_matrix_mul_sample_templates(rng):
    """NVIDIA's matrixMul sample (its NVRTC form): a template __device__ function with __shared__ tiles,
    instantiated for three block sizes by extern "C" kernels taking size_t widths."""
    from clrun.cuda import gpuarray
    mod = module("matrixMul_kernel.cu")
    h, w = 64, 96
    a = rng.standard_normal((h, 64)).astype(np.float32)
    b = rng.standard_normal((64, w)).astype(np.float32)
    ga, gb = gpuarray.to_gpu(a), gpuarray.to_gpu(b)
    for bs in (8, 16, 32):
        c = gpuarray.zeros((h, w), np.float32)
        mod.get_function(f"matrixMul_bs{bs}_64bit")(c, ga, gb, np.uint64(64), np.uint64(w), grid=(w // bs, h // bs), block=(bs, bs, 1))
        assert np.allclose(c.get(), a @ b, rtol=1e-4, atol=1e-4), bs


def test_cpp_function_templates(rng):
    """PyCUDA's wiki example: a template __device__ function with a deduced argument, no_extern_c=1."""
    from clrun.cuda import gpuarray
    from clrun.cuda.compiler import SourceModule
    with open(os.path.join(CORPUS, "cpp_function_templates.cu")) as f:
        func = SourceModule(f.read(), no_extern_c=1).get_function("func")
    n = 5
    x = np.asarray(rng.random(n), np.float32)
    x_gpu = gpuarray.to_gpu(x)
    func(x_gpu.gpudata, np.uint32(n), block=(n, 1, 1))
    assert np.array_equal(x_gpu.get(), (x.astype(np.float64) + 1.0).astype(np.float32))


def test_simple_speed_test(rng):
    """PyCUDA's wiki example: sin() of a float, repeated in place."""
    import clrun.cuda.driver as drv
    f = module("simple_speed_test.cu").get_function("gpusin")
    a = rng.standard_normal(1024).astype(np.float32)
    want = a.copy()
    for _ in range(20):
        want = np.sin(want)
    dest = np.zeros_like(a)
    f(drv.Out(dest), drv.In(a), np.int32(20), grid=(4, 1), block=(256, 1, 1))
    assert np.allclose(dest, want, rtol=1e-5, atol=1e-6)


def test_kernel_concurrency(rng):
    """PyCUDA's wiki example: two streams each running the kernel on its own data."""
    import clrun.cuda.driver as drv
    f = module("kernel_concurrency.cu").get_function("my_kernel")
    data = [rng.standard_normal(400).astype(np.float32) for _ in range(2)]
    d_data = [drv.mem_alloc(d.nbytes) for d in data]
    streams = [drv.Stream() for _ in data]
    for k in range(2):
        drv.memcpy_htod(d_data[k], data[k])
        f(d_data[k], block=(400, 1, 1), stream=streams[k])
    for k in range(2):
        out = np.empty_like(data[k])
        drv.memcpy_dtoh(out, d_data[k])
        assert np.array_equal(out, data[k] * 2)


def test_gpu_arange():
    """PyCUDA's test_driver (test_pass_cai_array)."""
    from clrun.cuda import gpuarray
    x = gpuarray.zeros(1024, np.int32)
    module("gpu_arange.cu").get_function("gpu_arange")(x, grid=(1,), block=(1024, 1, 1))
    assert np.array_equal(x.get(), np.arange(1024, dtype=np.int32))


def test_scalar_prod(rng):
    """NVIDIA's scalarProd sample: a block-level cooperative group (cg::sync) and a shared reduction."""
    import clrun.cuda.driver as drv
    f = module("scalarProd_kernel.cu").get_function("scalarProdGPU")
    vectors, elements = 64, 4096
    a, b = (rng.random((vectors, elements)).astype(np.float32) for _ in range(2))
    c = np.zeros(vectors, np.float32)
    f(drv.Out(c), drv.In(a), drv.In(b), np.int32(vectors), np.int32(elements), grid=(128, 1), block=(256, 1, 1))
    assert np.allclose(c, (a.astype(np.float64) * b).sum(axis=1), rtol=1e-5)


def _fwht(x):
    """The Walsh-Hadamard transform of each row (Sylvester's order), as the sample's fwtCPU."""
    x = x.astype(np.float64).copy()
    n, h = x.shape[-1], 1
    while h < n:
        y = x.reshape(x.shape[0], -1, 2, h)
        x = np.stack([y[:, :, 0] + y[:, :, 1], y[:, :, 0] - y[:, :, 1]], axis=2).reshape(x.shape)
        h *= 2
    return x


def test_fast_walsh_transform(rng):
    """NVIDIA's fastWalshTransform sample, driven as its fwtBatchGPU and modulateGPU drive it: radix-4
    passes in global memory, then the rest in dynamic shared memory under a cooperative group."""
    import clrun.cuda.driver as drv
    mod = module("fastWalshTransform_kernel.cu")
    batch1, batch2, modulate = (mod.get_function(n) for n in ("fwtBatch1Kernel", "fwtBatch2Kernel", "modulateKernel"))
    log2n, m = 13, 1
    data = rng.integers(-8, 9, (m, 1 << log2n)).astype(np.float32)  # exact sums
    d = drv.mem_alloc(data.nbytes)
    drv.memcpy_htod(d, data)
    n, lg, mm = 1 << log2n, log2n, m
    grid = ((1 << log2n) // (4 * 256), m)
    while lg > 11:
        batch2(d, d, np.int32(n // 4), grid=grid, block=(256, 1, 1))
        lg, n, mm = lg - 2, n >> 2, mm << 2
    batch1(d, d, np.int32(lg), grid=(mm, 1), block=(n // 4, 1, 1), shared=n * 4)
    out = np.empty_like(data)
    drv.memcpy_dtoh(out, d)
    assert np.array_equal(out, _fwht(data).astype(np.float32))
    a, b = (rng.standard_normal(5000).astype(np.float32) for _ in range(2))
    a0 = a.copy()
    modulate(drv.InOut(a), drv.In(b), np.int32(5000), grid=(128, 1), block=(256, 1, 1))
    assert np.allclose(a, a0 * (b * (np.float32(1) / np.float32(5000))), rtol=1e-6, atol=1e-7)


def test_convolution_separable(rng):
    """NVIDIA's convolutionSeparable sample: row and column passes of a radius-8 filter held in a
    __constant__ array (set through get_global), shared-memory tiles with halos, a cooperative group."""
    import clrun.cuda.driver as drv
    mod = module("convolutionSeparable.cu")
    r, w, h = 8, 256, 128
    k = rng.random(2 * r + 1).astype(np.float32)
    k /= k.sum()
    c_kernel, nbytes = mod.get_global("c_Kernel")
    assert nbytes == k.nbytes
    drv.memcpy_htod(c_kernel, k)
    src = rng.standard_normal((h, w)).astype(np.float32)
    rows, cols = np.zeros_like(src), np.zeros_like(src)
    mod.get_function("convolutionRowsKernel")(drv.Out(rows), drv.In(src), np.int32(w), np.int32(h), np.int32(w),
                                              grid=(w // (8 * 16), h // 4), block=(16, 4, 1))
    mod.get_function("convolutionColumnsKernel")(drv.Out(cols), drv.In(rows), np.int32(w), np.int32(h), np.int32(w),
                                                 grid=(w // 16, h // (8 * 8)), block=(16, 8, 1))
    pad = np.pad(src.astype(np.float64), ((0, 0), (r, r)))
    want_rows = sum(k[r - j] * pad[:, r + j:r + j + w] for j in range(-r, r + 1))
    pad = np.pad(want_rows, ((r, r), (0, 0)))
    want = sum(k[r - j] * pad[r + j:r + j + h, :] for j in range(-r, r + 1))
    assert np.allclose(rows, want_rows, rtol=1e-5, atol=1e-5) and np.allclose(cols, want, rtol=1e-5, atol=1e-5)


def test_scan_sample(rng):
    """NVIDIA's scan sample, driven as its scanExclusiveShort and scanExclusiveLarge drive it: uint4
    loads, device functions taking shared memory and the thread block's handle, a two-level scan."""
    import clrun.cuda.driver as drv
    mod = module("scan_sample.cu")
    short, short2, update = (mod.get_function(n) for n in ("scanExclusiveShared", "scanExclusiveShared2", "uniformUpdate"))

    def exclusive(x, n):
        r = x.reshape(-1, n).astype(np.uint64)
        return (np.cumsum(r, axis=1) - r).astype(np.uint32).ravel()
    batch, n = 4, 1024
    src = rng.integers(0, 1 << 10, batch * n).astype(np.uint32)
    dst = np.zeros_like(src)
    short(drv.Out(dst), drv.In(src), np.uint32(n), grid=(batch * n // 1024, 1), block=(256, 1, 1))
    assert np.array_equal(dst, exclusive(src, n))
    batch, n = 2, 8192
    src = rng.integers(0, 1 << 10, batch * n).astype(np.uint32)
    d_src, d_dst = drv.to_device(src), drv.mem_alloc(src.nbytes)
    blocks = batch * n // 1024
    d_buf = drv.mem_alloc(blocks * 4)
    short(d_dst, d_src, np.uint32(1024), grid=(blocks, 1), block=(256, 1, 1))
    short2(d_buf, d_dst, d_src, np.uint32(blocks), np.uint32(n // 1024), grid=((blocks + 255) // 256, 1), block=(256, 1, 1))
    update(d_dst, d_buf, grid=(blocks, 1), block=(256, 1, 1))
    dst = np.empty_like(src)
    drv.memcpy_dtoh(dst, d_dst)
    assert np.array_equal(dst, exclusive(src, n))


def test_simple_vote():
    """NVIDIA's simpleVote sample (its host code's checks): __any_sync and __all_sync over warps of
    inputs all zero, all one and mixed, and its directed test across three warps; refused naming the
    first use where the device has no warps (no inline PTX, no sub-groups of 32)."""
    import clrun.cuda.driver as drv
    from test_cuda_text import device_has_warps
    if not device_has_warps():
        with pytest.raises(clrun.BuildFailed, match=r"simpleVote_kernel.cu:\d+:\d+: .*__any_sync: warp intrinsics need"):
            module("simpleVote_kernel.cu")
        return
    m = module("simpleVote_kernel.cu")
    n = 32 * 6
    inp = np.zeros(n, np.uint32)
    inp[32:64] = 1  # a warp all one
    inp[64 + 5] = 7  # one lane of a warp
    inp[96:128:2] = 1  # half a warp
    inp[160:192] = 3  # another warp all set
    for kname, fn in (("VoteAnyKernel1", np.any), ("VoteAllKernel2", np.all)):
        res = np.full(n, 9, np.uint32)
        m.get_function(kname)(drv.In(inp), drv.Out(res), np.int32(n), block=(n, 1, 1), grid=(1, 1))
        want = np.repeat(fn(inp.reshape(-1, 32) != 0, axis=1), 32)
        assert np.array_equal(res != 0, want), kname
    info = np.zeros(3 * 96, np.uint8)
    m.get_function("VoteAnyKernel3")(drv.InOut(info), np.int32(32), block=(96, 1, 1), grid=(1, 1))
    tx = np.arange(96)
    warp_any = np.repeat((tx >= 48).reshape(-1, 32).any(1), 32)
    warp_all = np.repeat((tx >= 48).reshape(-1, 32).all(1), 32)
    assert np.array_equal(info.reshape(-1, 3), np.stack([warp_any, tx >= 48, warp_all], 1).astype(np.uint8))


def test_reduction_sample(rng):
    """NVIDIA's reduction sample, unchanged (its host code, launching wrappers and explicit
    instantiations included): the template kernels reduce0 to reduce3 instantiated as CuPy's
    name_expressions ask, for int, float and double, each block's sum as the sample's host checks it;
    the dynamic shared memory through its SharedMemory<T> class; reduce4 to reduce7 (a warp tile's
    shuffles, shuffles on the template's type in a template it calls) and cg_reduce (cg::reduce on a
    warp tile passed to a template's group parameter) where the device has warps, refused elsewhere.
    multi_warp_cg_reduce (tiles of 64 over block_tile_memory) is refused, naming the construct,
    where instantiated."""
    import clrun.cuda.driver as drv
    from clrun.cuda.compiler import SourceModule
    with open(os.path.join(CORPUS, "reduction_kernel.cu")) as f:
        src = f.read()
    types = [("int", np.int32), ("float", np.float32)] + ([("double", np.float64)] if clrun.open().device.fp64 else [])
    mod = SourceModule(src, name="reduction_kernel.cu", name_expressions=[f"reduce{k}<{t}>" for k in range(4) for t, _ in types])
    threads, blocks = 128, 12
    for k in range(4):
        per = threads * (2 if k == 3 else 1)  # reduce3 adds two elements as it loads
        for t, dt in types:
            x = rng.integers(-1000, 1000, blocks * per - 37).astype(dt)  # the last block partial
            out = np.zeros(blocks, dt)
            mod.get_function(f"reduce{k}<{t}>")(drv.In(x), drv.Out(out), np.uint32(x.size), block=(threads, 1, 1), grid=(blocks, 1),
                                                shared=threads * x.itemsize)
            want = np.pad(x, (0, 37)).reshape(blocks, per).sum(axis=1, dtype=dt)
            assert np.array_equal(out, want), f"reduce{k}<{t}>"
    # reduce4 to reduce6: the last warp through a thread_block_tile<32>'s shuffles, on the template's type
    from test_cuda_text import device_has_warps
    warp = [f"reduce4<{t}, {threads}>" for t, _ in types] + [f"reduce5<{t}, {threads}>" for t, _ in types] + \
        [f"reduce6<{t}, {threads}, {p}>" for t, _ in types for p in ("true", "false")]
    if not device_has_warps():
        with pytest.raises(clrun.BuildFailed, match=r"reduction_kernel.cu:\d+:\d+: .*thread_block_tile<32>: warp intrinsics need"):
            SourceModule(src, name="reduction_kernel.cu", name_expressions=warp[:1])
    else:
        mod = SourceModule(src, name="reduction_kernel.cu", name_expressions=warp)
        for expr in warp:
            t, dt = next((t, dt) for t, dt in types if f"<{t}," in expr)
            six = expr.startswith("reduce6")
            grid = 5 if six else blocks  # reduce6 strides over the grid
            x = rng.integers(-1000, 1000, blocks * 2 * threads - (0 if "true" in expr else 61)).astype(dt)
            out = np.zeros(grid, dt)
            mod.get_function(expr)(drv.In(x), drv.Out(out), np.uint32(x.size), block=(threads, 1, 1), grid=(grid, 1),
                                   shared=threads * x.itemsize)
            if six:
                assert out.sum(dtype=dt) == x.sum(dtype=dt), expr
            else:
                assert np.array_equal(out, np.pad(x, (0, blocks * 2 * threads - x.size)).reshape(blocks, -1).sum(axis=1, dtype=dt)), expr
        # reduce7: warpReduceSum<T> (a template calling a template) on the ballot of the warps' sums; 1024 threads, so that
        # every shuffle's mask holds the lanes it reads (with fewer, the sample reads lanes outside it: undefined in CUDA)
        seven = [f"reduce7<{t}, 1024, {p}>" for t, _ in types for p in ("true", "false")]
        mod = SourceModule(src, name="reduction_kernel.cu", name_expressions=seven)
        for expr in seven:
            dt = next(dt for t, dt in types if f"<{t}," in expr)
            x = rng.integers(-1000, 1000, 3 * 2 * 1024 - (0 if "true" in expr else 611)).astype(dt)
            out = np.zeros(2, dt)
            mod.get_function(expr)(drv.In(x), drv.Out(out), np.uint32(x.size), block=(1024, 1, 1), grid=(2, 1), shared=32 * x.itemsize)
            assert out.sum(dtype=dt) == x.sum(dtype=dt), expr
        # cg_reduce: cg::reduce(tile, v, cg::plus<T>()) in cg_reduce_n<T, Group>, the tile passed as its Group & parameter
        red = [f"cg_reduce<{t}>" for t, _ in types]
        mod = SourceModule(src, name="reduction_kernel.cu", name_expressions=red)
        for expr in red:
            dt = next(dt for t, dt in types if f"<{t}>" in expr)
            x = rng.integers(-1000, 1000, 7 * 256 - 19).astype(dt)
            out = np.zeros(3, dt)
            mod.get_function(expr)(drv.In(x), drv.Out(out), np.uint32(x.size), block=(256, 1, 1), grid=(3, 1), shared=256 * x.itemsize)
            assert out.sum(dtype=dt) == x.sum(dtype=dt), expr
    if not device_has_warps():
        with pytest.raises(clrun.BuildFailed, match=r"reduction_kernel.cu:\d+:\d+: .*cooperative_groups::reduce: warp intrinsics need"):
            SourceModule(src, name="reduction_kernel.cu", name_expressions=["cg_reduce<int>"])
    for expr, construct in (("multi_warp_cg_reduce<float, 128, 64>", "cooperative_groups::this_thread_block (collectives, multi-warp"),):
        with pytest.raises(clrun.BuildFailed, match=r"reduction_kernel.cu:\d+:\d+: " + re.escape(construct)):
            SourceModule(src, name="reduction_kernel.cu", name_expressions=[expr])


def test_inline_ptx():
    """NVIDIA's inlinePTX sample: an asm statement reading %laneid. Kept as PTX for NVIDIA's
    compiler; elsewhere the build fails at its line, naming it."""
    import clrun.cuda.driver as drv
    dev = clrun.open().device
    if not (dev.type == "gpu" and "NVIDIA" in dev.platform_vendor):
        with pytest.raises(clrun.BuildFailed, match=r"inlinePTX_kernel.cu:\d+:\d+: (error: )?\"an asm statement \(inline PTX\) runs on "
                                                     r"NVIDIA's OpenCL only"):
            module("inlinePTX_kernel.cu")
        return
    n = 1000
    d = np.full(n, -1, np.int32)
    module("inlinePTX_kernel.cu").get_function("sequence_gpu")(drv.InOut(d), np.int32(n), block=(256, 1, 1), grid=(4, 1))
    assert np.array_equal(d, np.arange(n, dtype=np.int32) % 32)


REFUSED = [
    ("clock_kernel.cu", r"clock_kernel.cu:\d+:\d+: clock\(\)"),
    ("simpleTexture_kernel.cu", r"simpleTexture_kernel.cu:\d+:\d+: texture and surface access \(tex2D\)"),
    ("demo_struct.cu", r"demo_struct.cu:4:\d+: pointer member 'ptr'"),
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
           "vectorAdd_kernel.cu", "simpleAtomicIntrinsics_kernel.cu", "shared_memory_reverse.cu", "blog_transpose.cu",
           "finite_difference.cu", "samples_intro.cu", "matrixMul_kernel.cu",
           "cpp_function_templates.cu", "simple_speed_test.cu", "kernel_concurrency.cu", "gpu_arange.cu",
           "scalarProd_kernel.cu", "fastWalshTransform_kernel.cu",
           "convolutionSeparable.cu", "scan_sample.cu"}
    partial = {"reduction_kernel.cu": 4}  # of its 10 kernels, reduce0 to reduce3 run (test_reduction_sample), reduce4 to 7 and cg_reduce where warps
    files = {f for f in os.listdir(CORPUS) if f.endswith(".cu")}
    warps = {"simpleVote_kernel.cu"}  # run where the device has warps, else refused (test_simple_vote)
    nvidia = {"inlinePTX_kernel.cu"}  # run on NVIDIA's OpenCL, else refused (test_inline_ptx)
    assert files == run | warps | nvidia | set(partial) | {n for n, _ in REFUSED}

    def kernels(names):  # __global__ functions, templates included
        import re
        return sum(len(re.findall(r"\b__global__\b", open(os.path.join(CORPUS, n)).read())) for n in names)
    from test_cuda_text import device_has_warps
    if device_has_warps():
        run = run | warps
        partial["reduction_kernel.cu"] += 5
    dev = clrun.open().device
    if dev.type == "gpu" and "NVIDIA" in dev.platform_vendor:
        run = run | nvidia
    kr, kall = kernels(run) + sum(partial.values()), kernels(files)
    print(f"corpus: {len(run)} of {len(files)} files run whole ({100 * len(run) // len(files)}%), {len(partial)} in part, "
          f"{len(files) - len(run) - len(partial)} refused by construct; {kr} of {kall} kernels ({100 * kr // kall}%)")
