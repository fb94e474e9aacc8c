"""clrun.cuda: PyCUDA's interface over CUDA kernel text translated to OpenCL C. The seed article's
snippet (tests/data/cuda/article_snippet.py: its text with `pycuda` replaced by `clrun.cuda`) runs
unchanged and exactly; SourceModule's __constant__ globals, dynamic shared memory, mem_alloc memory
and ElementwiseKernel work as PyCUDA's. Where libclang is missing the tests are skipped, saying so."""
import os
import runpy

import numpy as np
import pytest

import clrun

HERE = os.path.dirname(os.path.abspath(__file__))


def _translation_works():
    from clrun.cuda.compiler import translate
    try:
        translate("__global__ void k(float *a) { a[0] = 1.0f; }\n")
        return None
    except clrun.Unsupported as e:
        return str(e)


_why = _translation_works()
pytestmark = pytest.mark.skipif(_why is not None, reason=f"no CUDA kernel text here: {_why}")


def test_article_snippet_runs_unchanged():
    g = runpy.run_path(os.path.join(HERE, "..", "data", "cuda", "article_snippet.py"))
    assert np.array_equal(g["dest"], g["a"] * g["b"])


def test_constant_dynamic_shared_and_mem_alloc(rng):
    import clrun.cuda.driver as drv
    from clrun.cuda import gpuarray
    from clrun.cuda.compiler import SourceModule
    mod = SourceModule("""
__constant__ float coef[4];
extern __shared__ float buf[];
__global__ void scale_sum(float *out, const float *in, int n)
{
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    buf[t] = i < n ? in[i] * coef[blockIdx.x % 4] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t == 0) atomicAdd(out, buf[0]);
}
""", keep=True)
    assert "__local float *buf" in mod.cl_source
    f = mod.get_function("scale_sum")
    g, nbytes = mod.get_global("coef")
    assert nbytes == 16
    c = np.array([1, 2, -3, 0.5], np.float32)
    drv.memcpy_htod(g, c)
    x = rng.standard_normal(1000).astype(np.float32)
    out = drv.mem_alloc(4)
    drv.memcpy_htod(out, np.zeros(1, np.float32))
    f(out, gpuarray.to_gpu(x), np.int32(1000), block=(64, 1, 1), grid=(16, 1), shared=64 * 4)
    res = np.zeros(1, np.float32)
    drv.memcpy_dtoh(res, out)
    want = sum(float(x[i]) * float(c[(i // 64) % 4]) for i in range(1000))
    assert abs(res[0] - want) <= 1e-3 * (1 + abs(want))
    with pytest.raises(drv.LogicError):
        mod.get_global("nope")


def test_elementwise_kernel(rng):
    from clrun.cuda import gpuarray
    from clrun.cuda.elementwise import ElementwiseKernel
    k = ElementwiseKernel("float a, float *x, float *y, float *z", "z[i] = a*x[i] + y[i]", "axpy")
    x = rng.standard_normal(5001).astype(np.float32)
    y = rng.standard_normal(5001).astype(np.float32)
    z = gpuarray.empty(5001, np.float32)
    k(np.float32(2), gpuarray.to_gpu(x), gpuarray.to_gpu(y), z)
    assert np.array_equal(z.get(), np.float32(2) * x + y)


def test_refused_in_words():
    from clrun.cuda.compiler import SourceModule
    with pytest.raises(clrun.BuildFailed, match=r"kernel.cu:1:\d+: template"):
        SourceModule("template <typename T> __global__ void k(T *a) { a[0] = 1; }\n")


def test_mangled_names_and_no_extern_c():
    from clrun.cuda.compiler import SourceModule
    import clrun.cuda.driver as drv
    mod = SourceModule("__global__ void twice(float *a) { a[threadIdx.x] *= 2.0f; }\n", no_extern_c=True)
    f = mod.get_function("_Z5twicePf")
    a = np.arange(8, dtype=np.float32)
    f(drv.InOut(a), block=(8, 1, 1))
    assert np.array_equal(a, np.arange(8, dtype=np.float32) * 2)
