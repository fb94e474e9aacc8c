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


def _cli(*args, cwd=None):
    import subprocess
    exe = os.environ.get("CLRUN_EXE")
    if not exe:
        pytest.skip("CLRUN_EXE is not set")
    dev = ["-d", os.environ["CLRUN_TEST_DEVICE"]] if os.environ.get("CLRUN_TEST_DEVICE") else []
    return subprocess.run([exe, *args, *dev], capture_output=True, text=True, cwd=cwd, timeout=600)


def test_cli_runs_a_cu_file_in_cuda_launch_shape(rng, tmp_path):
    (tmp_path / "k.cu").write_text("extern \"C\" __global__ void mul(float *d, const float *a, const float *b)\n"
                                   "{\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  d[i] = a[i] * b[i];\n}\n")
    a, b = (rng.standard_normal(96).astype(np.float32) for _ in range(2))
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    np.save(tmp_path / "want.npy", a * b)
    r = _cli("run", str(tmp_path / "k.cu"), "-k", "mul", "--grid", "3", "--block", "32", "out:f32:96@" + str(tmp_path / "d.npy"),
             str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), "--check", "0=" + str(tmp_path / "want.npy"), "--rtol", "0", "--atol", "0")
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(tmp_path / "d.npy"), a * b)
    emitted = _cli("run", str(tmp_path / "k.cu"), "--emit-cl")
    assert emitted.returncode == 0 and "__kernel void mul(__global float *d" in emitted.stdout
    # a compile error names the CUDA file's line; a refused construct its line and name; distinct exits
    (tmp_path / "bad.cu").write_text("__global__ void k(float *a)\n{\n  a[0] = 1.0f\n}\n")
    bad = _cli("run", str(tmp_path / "bad.cu"), "-k", "k", "--grid", "1", "--block", "1", "out:f32:1")
    assert bad.returncode == 4 and "bad.cu:3:" in bad.stderr
    (tmp_path / "warp.cu").write_text("__global__ void k(int *a)\n{\n  a[0] = __ballot_sync(0xffffffffu, a[1]);\n}\n")
    warp = _cli("run", str(tmp_path / "warp.cu"), "--emit-cl")
    assert warp.returncode == 4 and "warp.cu:3:" in warp.stderr and "__ballot_sync" in warp.stderr


def test_bench_cuda_translation_gives_the_hand_kernels_bits():
    import json
    r = _cli("bench", "cuda", "--size", "1", "--repeat", "1", "--json")
    assert r.returncode == 0, r.stderr
    recs = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    translated = [x for x in recs if x["impl"].startswith("clrun")]
    assert sorted(x["op"] for x in translated) == ["matmul", "reduce", "saxpy", "transpose"]
    assert all(x["same_bits"] is True and x["translated_over_hand"] > 0 for x in translated)
