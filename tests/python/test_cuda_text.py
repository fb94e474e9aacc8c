"""clrun.cuda: PyCUDA's interface over CUDA kernel text translated to OpenCL C. The seed article's
snippet (tests/data/cuda/article_snippet.py: its text with `pycuda` replaced by `clrun.cuda`) runs
unchanged and exactly; SourceModule's __constant__ globals, dynamic shared memory, mem_alloc memory
and ElementwiseKernel work as PyCUDA's. Where libclang is missing the tests are skipped, saying so."""
import os
import re
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
    import clrun.cuda.driver as drv
    with pytest.raises(drv.LogicError, match=r"'k<float>' was not instantiated: name it in SourceModule\(\.\.\., name_expressions"):
        SourceModule("template <typename T> __global__ void k(T *a) { a[0] = 1; }\n").get_function("k<float>")
    with pytest.raises(drv.LogicError, match=r"'k' is a template kernel: name an instantiation of it"):
        SourceModule("template <typename T> __global__ void k(T *a) { a[0] = 1; }\n").get_function("k")
    with pytest.raises(clrun.BuildFailed, match=r"kernel.cu:1:\d+: a lambda: OpenCL C has none \(template 'k', instantiated at kernel.cu:2\)"):
        SourceModule("template <typename T> __global__ void k(T *a) { auto f = [](T v) { return v; }; a[0] = f(a[1]); }\n",
                     name_expressions=["k<int>"])
    with pytest.raises(ValueError, match="name_expressions"):
        SourceModule("__global__ void k(float *a) { a[0] = 1; }\n", name_expressions=["k); int x = (1"])
    with pytest.raises(clrun.BuildFailed, match=r"kernel.cu:2:\d+: template 'g' calls template 'f' with its parameter 'U' neither written "
                       r"nor deduced from an argument"):
        SourceModule("template <typename T, typename U = int> __device__ T f(T x) { return x + (U)1; }\n"
                     "template <typename T> __device__ T g(T x) { return f<T>(x); }\n"
                     "extern \"C\" __global__ void k(float *a) { a[0] = g(a[1]); }\n")
    with pytest.raises(clrun.BuildFailed, match=r"explicit specialization of template 'f'"):
        SourceModule("template <typename T> __device__ T f(T x) { return x; }\n"
                     "template <> __device__ float f<float>(float x) { return -x; }\n"
                     "extern \"C\" __global__ void k(float *a) { a[0] = f(a[1]); }\n")
    with pytest.raises(clrun.BuildFailed, match=r"kernel.cu:5:\d+: a variable of type cooperative_groups::thread_block_tile<16> \(grid groups, "
                       r"coalesced groups, tiles other than of 32 threads\)"):
        SourceModule("#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
                     "__global__ void k(float *a)\n{\n  cg::thread_block_tile<16> t = cg::tiled_partition<16>(cg::this_thread_block());\n"
                     "  a[0] = t.shfl_down(a[0], 1);\n}\n")
    with pytest.raises(clrun.BuildFailed, match=r"kernel.cu:3:\d+: a cooperative group other than the thread block and warp tiles as parameter 'g'"):
        SourceModule("#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
                     "__device__ void f(cg::grid_group g) { g.sync(); }\n"
                     "__global__ void k(float *a) { f(cg::this_grid()); }\n")
    with pytest.raises(clrun.BuildFailed, match=r"class template 'Box'"):
        SourceModule("template <typename T> struct Box { T v; };\n__global__ void k(float *a) { Box<float> b; b.v = 1; a[0] = b.v; }\n")


def test_templates_calling_templates(rng):
    """A template's calls of templates, with arguments written in its own parameters (`f<T, N * 1>` is
    refused; `f<T, N>`, `f<T, 3>`) or deduced (`h(x)`), chained through three levels and copied for
    each instantiation of the kernel template at the top."""
    import clrun.cuda.driver as drv
    from clrun.cuda.compiler import SourceModule
    src = ("template <typename T> __device__ T h(T x) { return x * (T)2; }\n"
           "template <typename T, int N> __device__ T f(T x) { return h(x) + (T)N; }\n"
           "template <typename T, int N> __device__ T g(T x) { return f<T, N>(x) - f<T, 3>(x); }\n"
           "template <typename T, int N> __global__ void k(T *a, unsigned n)\n"
           "{\n    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) a[i] = g<T, N>(a[i]) + h<T>(a[i]);\n}\n")
    mod = SourceModule(src, name_expressions=["k<int, 10>", "k<float, -4>", "k<int, 3>"])
    for name, dt, n_ in (("k<int, 10>", np.int32, 10), ("k<float, -4>", np.float32, -4), ("k<int, 3>", np.int32, 3)):
        a = rng.integers(-100, 100, 300).astype(dt)
        want = (2 * a + n_) - (2 * a + 3) + 2 * a
        mod.get_function(name)(drv.InOut(a), np.uint32(a.size), block=(64, 1, 1), grid=(5, 1))
        assert np.array_equal(a, want.astype(dt)), name


def test_template_kernels_by_name_expression(rng):
    """Template kernels instantiated as CuPy's name_expressions ask, and as the source's own explicit
    instantiations do; found by their C++ names (any spacing) and by their mangled names; the
    source's host code (a launching wrapper) left out."""
    import clrun.cuda.driver as drv
    from clrun.cuda.compiler import SourceModule
    src = ("template <typename T, int K, bool NEG> __global__ void axpk(T *y, const T *x, unsigned n)\n"
           "{\n    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "    if (i < n) y[i] = (NEG ? -y[i] : y[i]) + (T)K * x[i];\n}\n"
           "template <typename T> void host(T *y, const T *x, unsigned n) { axpk<T, 1, false><<<(n + 127) / 128, 128>>>(y, x, n); }\n"
           "template __global__ void axpk<double, -3, true>(double *, const double *, unsigned);\n")
    mod = SourceModule(src, name_expressions=["axpk<float, 2, false>", "axpk<int,5,true>"])
    n = 1000
    for name, dt, k, neg in (("axpk< float , 2, false >", np.float32, 2, False), ("axpk<int, 5, true>", np.int32, 5, True),
                             ("_Z4axpkIiLi5ELb1EEvPT_PKS0_j", np.int32, 5, True), ("axpk<double, -3, true>", np.float64, -3, True)):
        if dt == np.float64 and not clrun.open().device.fp64:
            continue
        y, x = (rng.integers(-50, 50, n).astype(dt) for _ in range(2))
        want = (-y if neg else y) + dt(k) * x
        mod.get_function(name)(drv.InOut(y), drv.In(x), np.uint32(n), block=(128, 1, 1), grid=((n + 127) // 128, 1))
        assert np.array_equal(y, want), name


def test_function_templates_instantiated_per_use(rng):
    """Template __device__ functions called from ordinary code: a copy per argument list, explicit
    (f<4, float>) or deduced (g(x)), type and integer parameters (unsigned ones too)."""
    import clrun.cuda.driver as drv
    from clrun.cuda.compiler import SourceModule
    mod = SourceModule("""
template <int B, typename T>
__device__ T f(const T *p, T x) { T s = x; for (int i = 0; i < B; i++) s += p[i]; return s; }
template <typename T> __device__ T twice(T x) { return x * 2; }
template <unsigned int blockSize> __device__ float h(float v) { return blockSize >= 512 ? v : -v; }
extern "C" __global__ void k(float *a, int *b, long long *c)
{
    float a0 = f<4, float>(a, 1.0f);
    int b0 = f<2>(b, 3);
    float a1 = twice(a[2]);
    long long c0 = twice(c[1]);
    float a3 = h<256>(a[4]) + h<1024>(a[5]);
    a[0] = a0; b[0] = b0; a[1] = a1; c[0] = c0; a[3] = a3;
}
""")
    a = rng.standard_normal(8).astype(np.float32)
    b = rng.integers(-100, 100, 4).astype(np.int32)
    c = np.array([0, 3 << 40], np.int64)
    a_, b_ = a.copy(), b.copy()
    mod.get_function("k")(drv.InOut(a), drv.InOut(b), drv.InOut(c), block=(1, 1, 1))
    assert a[0] == np.float32(1) + a_[0] + a_[1] + a_[2] + a_[3]
    assert b[0] == 3 + b_[0] + b_[1] and a[1] == 2 * a_[2] and c[0] == 6 << 40
    assert a[3] == -a_[4] + a_[5]


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
    (tmp_path / "clock.cu").write_text("__global__ void k(int *a)\n{\n  a[0] = (int)clock();\n}\n")
    clock = _cli("run", str(tmp_path / "clock.cu"), "--emit-cl")
    assert clock.returncode == 4 and "clock.cu:3:" in clock.stderr and "clock()" in clock.stderr
    # a template kernel's instantiation, by its C++ name
    (tmp_path / "t.cu").write_text("template <typename T, int S> __global__ void scale(T *a, unsigned n)\n"
                                   "{\n  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] *= S;\n}\n"
                                   "template __global__ void scale<int, -3>(int *, unsigned);\n")
    r = _cli("run", str(tmp_path / "t.cu"), "-k", "scale<int,-3>", "--grid", "2", "--block", "32", "range:i32:50@" + str(tmp_path / "s.npy"), "50")
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(tmp_path / "s.npy"), -3 * np.arange(50, dtype=np.int32))


def test_bench_cuda_translation_gives_the_hand_kernels_bits():
    import json
    r = _cli("bench", "cuda", "--size", "1", "--repeat", "1", "--json")
    assert r.returncode == 0, r.stderr
    recs = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    translated = [x for x in recs if x["impl"].startswith("clrun")]
    assert sorted(x["op"] for x in translated) == ["matmul", "reduce", "saxpy", "transpose"]
    assert all(x["same_bits"] is True and x["translated_over_hand"] > 0 for x in translated)


def test_types_kernel_parameters_and_structs(rng):
    """size_t, bool, long long, <stdint.h> types as kernel parameters (OpenCL refuses some of them as
    spelled); C++'s struct and enum names; file-scope const tables."""
    import clrun.cuda.driver as drv
    from clrun.cuda.compiler import SourceModule
    mod = SourceModule("""
#include <stdint.h>
struct Pair { float x, y; };
enum Mode { ADD, MUL };
const float scale[2] = {2.0f, -0.5f};
__device__ float apply(Pair p, Mode m) { return m == ADD ? p.x + p.y : p.x * p.y; }
__global__ void k(float *out, const Pair *ps, size_t n, bool twice, long long big, unsigned long long ubig,
                  int64_t s64, uint32_t u32, int mode)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long acc = big + (long long)(ubig >> 40) + s64 + u32;
    float v = apply(ps[i], (Mode)mode) * scale[i % 2];
    out[i] = (twice ? 2.0f * v : v) + (float)(acc % 1000);
}
""")
    n = 1000
    ps = np.zeros(n, dtype=[("x", np.float32), ("y", np.float32)])
    ps["x"], ps["y"] = rng.standard_normal(n), rng.standard_normal(n)
    out = np.zeros(n, np.float32)
    big, ubig, s64, u32 = -(1 << 40) - 7, (1 << 63) + (5 << 40), 123456789012, 4000000000
    acc = big + (ubig >> 40) + s64 + u32
    for mode, twice in ((0, True), (1, False)):
        mod.get_function("k")(drv.Out(out), drv.In(ps), np.uintp(n), np.bool_(twice), np.int64(big), np.uint64(ubig),
                              np.int64(s64), np.uint32(u32), np.int32(mode), block=(128, 1, 1), grid=((n + 127) // 128, 1))
        v = (ps["x"] + ps["y"] if mode == 0 else ps["x"] * ps["y"]) * np.where(np.arange(n) % 2 == 0, np.float32(2), np.float32(-0.5))
        want = (np.float32(2) * v if twice else v) + np.float32(int(np.fmod(acc, 1000)))
        assert np.allclose(out, want.astype(np.float32), rtol=1e-6, atol=1e-6), mode


def test_math_library_and_integer_intrinsics(rng):
    """CUDA's single-precision math library and integer intrinsics, against NumPy."""
    import clrun.cuda.driver as drv
    from clrun.cuda.compiler import SourceModule
    names = ["sinf", "cosf", "tanf", "asinf", "acosf", "atanf", "sinhf", "coshf", "tanhf", "expf", "exp2f", "expm1f",
             "logf", "log2f", "log10f", "log1pf", "sqrtf", "rsqrtf", "cbrtf", "fabsf", "floorf", "ceilf", "truncf",
             "roundf", "rintf", "erff", "erfcf", "__expf", "__logf", "__sinf", "__cosf", "__powf_2", "powf_3",
             "fmodf_3", "hypotf_3", "copysignf_m", "fminf_3", "fmaxf_3", "fmaf_2_1", "atan2f_3"]

    def call(n):
        base = n.split("_")[0] if not n.startswith("__") else "__" + n[2:].split("_")[0]
        rest = n[len(base):]
        if rest == "_2":
            return f"{base}(x, 2.0f)"
        if rest == "_3":
            return f"{base}(x, 0.75f)"
        if rest == "_m":
            return f"{base}(2.0f, -x)"
        if rest == "_2_1":
            return f"{base}(x, 2.0f, 1.0f)"
        return f"{base}(x)"
    body = "\n".join(f"    o[{i} * n + i] = {call(nm)};" for i, nm in enumerate(names))
    mod = SourceModule(f"""
__global__ void f(float *o, const float *in, int n)
{{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i];
{body}
}}
__global__ void ints(int *o, const int *in, int n)
{{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i];
    o[8 * i + 0] = abs(v) - 5;
    o[8 * i + 1] = __popc(v);
    o[8 * i + 2] = __clz(v);
    o[8 * i + 3] = __ffs(v);
    o[8 * i + 4] = (int)__brev((unsigned)v);
    o[8 * i + 5] = min(v, 7) + max(v, -7);
    o[8 * i + 6] = __float_as_int((float)v);
    o[8 * i + 7] = (int)__umulhi((unsigned)v, 0x9e3779b9u);
}}
""")
    n = 512
    x = rng.uniform(0.05, 0.95, n).astype(np.float32)  # inside every function's domain
    o = np.zeros(len(names) * n, np.float32)
    mod.get_function("f")(drv.Out(o), drv.In(x), np.int32(n), block=(128, 1, 1), grid=(n // 128, 1))
    x64 = x.astype(np.float64)
    import math
    ref = {"sinf": np.sin, "cosf": np.cos, "tanf": np.tan, "asinf": np.arcsin, "acosf": np.arccos, "atanf": np.arctan,
           "sinhf": np.sinh, "coshf": np.cosh, "tanhf": np.tanh, "expf": np.exp, "exp2f": np.exp2, "expm1f": np.expm1,
           "logf": np.log, "log2f": np.log2, "log10f": np.log10, "log1pf": np.log1p, "sqrtf": np.sqrt,
           "rsqrtf": lambda v: 1 / np.sqrt(v), "cbrtf": np.cbrt, "fabsf": np.abs, "floorf": np.floor, "ceilf": np.ceil,
           "truncf": np.trunc, "roundf": lambda v: np.floor(v + 0.5), "rintf": np.rint,
           "erff": np.vectorize(math.erf), "erfcf": np.vectorize(math.erfc), "__expf": np.exp, "__logf": np.log,
           "__sinf": np.sin, "__cosf": np.cos, "__powf_2": lambda v: v ** 2, "powf_3": lambda v: v ** 0.75,
           "fmodf_3": lambda v: np.fmod(v, 0.75), "hypotf_3": lambda v: np.hypot(v, 0.75),
           "copysignf_m": lambda v: -2.0 + 0 * v, "fminf_3": lambda v: np.minimum(v, 0.75), "fmaxf_3": lambda v: np.maximum(v, 0.75),
           "fmaf_2_1": lambda v: v * 2 + 1, "atan2f_3": lambda v: np.arctan2(v, 0.75)}
    for i, nm in enumerate(names):
        got = o[i * n:(i + 1) * n].astype(np.float64)
        want = ref[nm](x64)
        tol = 2e-3 if nm.startswith("__") else 2e-6  # the fast intrinsics are approximations in CUDA too
        assert np.allclose(got, want, rtol=tol, atol=tol), nm
    v = np.concatenate([rng.integers(-2**31, 2**31, n - 4), [0, -1, 1, -2**31]]).astype(np.int32)
    oi = np.zeros(8 * n, np.int32)
    mod.get_function("ints")(drv.Out(oi), drv.In(v), np.int32(n), block=(128, 1, 1), grid=(n // 128, 1))
    oi = oi.reshape(n, 8)
    u = v.view(np.uint32).astype(np.uint64)
    assert np.array_equal(oi[:, 0], (np.abs(v.astype(np.int64)) - 5).astype(np.int32))
    assert np.array_equal(oi[:, 1], [bin(int(w)).count("1") for w in u])
    assert np.array_equal(oi[:, 2], [32 - int(w).bit_length() for w in u])
    assert np.array_equal(oi[:, 3], [(int(w) & -int(w)).bit_length() for w in u])
    assert np.array_equal(oi[:, 4].view(np.uint32), [int(f"{int(w):032b}"[::-1], 2) for w in u])
    assert np.array_equal(oi[:, 5], np.minimum(v, 7) + np.maximum(v, -7))
    assert np.array_equal(oi[:, 6], v.astype(np.float32).view(np.int32))
    assert np.array_equal(oi[:, 7].view(np.uint32), ((u * 0x9E3779B9) >> 32).astype(np.uint32))


def test_64_bit_atomics(rng):
    """atomicAdd/Max/Min on unsigned long long and long long, atomicAdd on double (compare-and-swap):
    where the device has 64-bit atomics (cl_khr_int64_base_atomics), else the build is refused."""
    import clrun.cuda.driver as drv
    from clrun.cuda.compiler import SourceModule
    import ctypes
    import ctypes.util
    cl = ctypes.CDLL(ctypes.util.find_library("OpenCL") or "libOpenCL.so.1")
    buf, size = ctypes.create_string_buffer(1 << 16), ctypes.c_size_t(0)
    assert cl.clGetDeviceInfo(ctypes.c_void_p(clrun.open().device_int_ptr), ctypes.c_uint(0x1030), ctypes.c_size_t(1 << 16), buf,
                              ctypes.byref(size)) == 0  # CL_DEVICE_EXTENSIONS
    ext = buf.value.decode().split()
    if "cl_khr_int64_base_atomics" not in ext or "cl_khr_int64_extended_atomics" not in ext:
        pytest.skip("the device has no 64-bit atomics")
    src = """
__global__ void k(unsigned long long *c, long long *m, const long long *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(c, (unsigned long long)v[i] & 0xffffull);
    atomicMax(&m[0], v[i]);
    atomicMin(&m[1], v[i]);
}
"""
    if clrun.open().device.fp64:
        src += """
__global__ void d(double *s, const double *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(s, v[i]);
}
"""
    mod = SourceModule(src)
    n = 4096
    v = rng.integers(-2**62, 2**62, n).astype(np.int64)
    c = np.zeros(1, np.uint64)
    m = np.array([-2**63, 2**63 - 1], np.int64)
    mod.get_function("k")(drv.InOut(c), drv.InOut(m), drv.In(v), np.int32(n), block=(256, 1, 1), grid=(n // 256, 1))
    assert c[0] == int((v.view(np.uint64) & 0xFFFF).sum()) and m[0] == v.max() and m[1] == v.min()
    if clrun.open().device.fp64:
        w = rng.integers(-1000, 1000, n).astype(np.float64) / 4  # exact in any order
        s = np.zeros(1, np.float64)
        mod.get_function("d")(drv.InOut(s), drv.In(w), np.int32(n), block=(256, 1, 1), grid=(n // 256, 1))
        assert s[0] == w.sum()


def test_nvcc_options_macros_and_asserts(capfd):
    """PyCUDA's options are nvcc's: -D/-U hold for the CUDA parse and the build, --use_fast_math is
    OpenCL's fast math, code-generation flags are dropped; <float.h>/<math.h> constants and assert."""
    import clrun.cuda.driver as drv
    from clrun.cuda.compiler import SourceModule, cl_options
    assert cl_options(["-DN=2", "-arch=sm_80", "-Xptxas", "-v", "--use_fast_math", "-lineinfo", "-O3", "-U", "X"]) == \
        "-DN=2 -cl-fast-relaxed-math -U X"
    mod = SourceModule("""
#include <float.h>
#include <math.h>
#include <assert.h>
__global__ void k(float *a)
{
#ifdef TWICE
    a[threadIdx.x] = 2 * SCALE * threadIdx.x + (FLT_MAX > 1e38f) + (float)M_PI * 0.0f;
#else
    a[threadIdx.x] = -1.0f;
#endif
    assert(threadIdx.x < 6);
}
""", options=["-DSCALE=3.0f", "-D", "TWICE", "-arch=sm_80", "--use_fast_math"])
    a = np.zeros(8, np.float32)
    mod.get_function("k")(drv.Out(a), block=(8, 1, 1))
    assert np.array_equal(a, 6 * np.arange(8, dtype=np.float32) + 1)
    import ctypes
    ctypes.CDLL(None).fflush(None)  # the device's printf goes through the C library's stdout buffer
    out = capfd.readouterr().out
    assert out.count("assertion") == 2 and "kernel.cu:12: assertion" in out


def test_references_and_functions_copied_per_address_space(rng):
    """Device functions taking references (T &x: a pointer; const T &x: a value) and device functions
    called with pointers into global and shared memory (a copy per combination)."""
    import clrun.cuda.driver as drv
    from clrun.cuda.compiler import SourceModule
    mod = SourceModule("""
struct Acc { float sum; int n; };
__device__ void swap(float &a, float &b) { float t = a; a = b; b = t; }
__device__ void add(Acc &acc, const float &v) { acc.sum += v; acc.n++; }
__device__ void body(float &call, float &put, float s, const float &x) { call = s * x; put = call - s; }
__device__ float total(const float *p, int n) { float s = 0.0f; for (int i = 0; i < n; i++) s += p[i]; return s; }
__global__ void k(float *a, float *b, float *out)
{
    __shared__ float sh[64];
    int i = threadIdx.x;
    sh[i] = a[i];
    __syncthreads();
    if (i % 2 == 0) swap(sh[i], sh[i + 1]);
    __syncthreads();
    float c, p;
    body(c, p, sh[i], 3.0f);
    Acc acc = {0.0f, 0};
    add(acc, c);
    add(acc, p);
    swap(a[i], b[i]);
    __syncthreads();
    out[i] = acc.sum + acc.n + total(sh, 4) + total(b, 2);
}
""")
    a, b = (rng.standard_normal(64).astype(np.float32) for _ in range(2))
    a0, b0 = a.copy(), b.copy()
    out = np.zeros(64, np.float32)
    mod.get_function("k")(drv.InOut(a), drv.InOut(b), drv.Out(out), block=(64, 1, 1))
    sh = a0.reshape(32, 2)[:, ::-1].ravel()
    c = sh * np.float32(3)
    p = c - sh
    want = ((np.float32(0) + c) + p) + np.float32(2) + (((sh[0] + sh[1]) + sh[2]) + sh[3]) + (a0[0] + a0[1])
    assert np.array_equal(a, b0) and np.array_equal(b, a0)
    assert np.allclose(out, want, rtol=1e-6, atol=1e-6)
    with pytest.raises(clrun.BuildFailed, match=r"vector's component passed by reference"):
        SourceModule("__device__ void inc(float &v) { v += 1; }\n"
                     "__global__ void k(float4 *a) { float4 v = a[0]; inc(v.x); a[0] = v; }\n")
    with pytest.raises(clrun.BuildFailed, match=r"kernel.cu:1:\d+: device function 'f' is called with pointers into several"):
        SourceModule("__device__ float f(float *p) { float *q = p + 1; return *q; }\n"
                     "__global__ void k(float *a) { __shared__ float s[2]; s[threadIdx.x] = a[0]; a[1] = f(a) + f(s); }\n")


def test_shared_variables_in_device_functions(rng):
    """__shared__ in device functions: one block-wide variable per kernel that calls the function (as
    in CUDA, the same one at every call), passed to it; refused where a device function calls it."""
    import clrun.cuda.driver as drv
    from clrun.cuda.compiler import SourceModule
    mod = SourceModule("""
__device__ float block_sum(float v)
{
    __shared__ float s[128];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h];
        __syncthreads();
    }
    float r = s[0];
    __syncthreads();
    return r;
}
__device__ int counter()
{
    __shared__ int n;
    if (threadIdx.x == 0) n = 0;
    __syncthreads();
    atomicAdd(&n, 1);
    __syncthreads();
    return n;
}
__global__ void k(const float *in, float *out, int *cnt)
{
    float a = block_sum(in[blockIdx.x * blockDim.x + threadIdx.x]);
    float b = block_sum(2.0f);
    if (threadIdx.x == 0) out[blockIdx.x] = a + b;
    int c = counter();
    if (threadIdx.x == 0) cnt[blockIdx.x] = c;
}
""")
    x = rng.integers(-50, 50, 4 * 128).astype(np.float32)
    out = np.zeros(4, np.float32)
    cnt = np.zeros(4, np.int32)
    mod.get_function("k")(drv.In(x), drv.Out(out), drv.Out(cnt), block=(128, 1, 1), grid=(4, 1))
    assert np.array_equal(out, x.reshape(4, 128).sum(axis=1) + 256) and np.array_equal(cnt, [128] * 4)
    with pytest.raises(clrun.BuildFailed, match=r"kernel.cu:3:\d+: 'f', which has __shared__ variables, is called from a device function"):
        SourceModule("__device__ float f() { __shared__ float s[4]; s[0] = 1; return s[0]; }\n"
                     "__device__ float g() { return f(); }\n"
                     "__global__ void k(float *a) { a[0] = g(); }\n".replace("g() { return f(); }", "g()\n{ return f(); }"))


def test_pycuda_driver_tools_cumath_curandom(rng):
    """The rest of PyCUDA's interface that examples use: warpSize, GPUArray.get(ary), cumath, curandom,
    tools (dtype_to_ctype, context_dependent_memoize), mem_get_info, device attributes."""
    import clrun.cuda.driver as drv
    from clrun.cuda import cumath, curandom, gpuarray, tools
    from clrun.cuda.compiler import SourceModule
    k = SourceModule("__global__ void k(int *a) { a[threadIdx.x] = threadIdx.x % warpSize + 100 * (threadIdx.x / warpSize); }\n")
    a = gpuarray.zeros(96, np.int32)
    k.get_function("k")(a, block=(96, 1, 1))
    into = np.empty(96, np.int32)
    assert a.get(into) is into and np.array_equal(into, np.arange(96) % 32 + 100 * (np.arange(96) // 32))
    x = rng.random(1000).astype(np.float32)
    assert np.allclose(cumath.exp(gpuarray.to_gpu(x)).get(), np.exp(x), rtol=1e-6)
    r1, r2 = curandom.rand((500,)).get(), curandom.rand((500,)).get()
    assert r1.dtype == np.float32 and ((r1 >= 0) & (r1 < 1)).all() and not np.array_equal(r1, r2) and abs(r1.mean() - 0.5) < 0.1
    assert tools.dtype_to_ctype(np.float32) == "float" and tools.dtype_to_ctype(np.uint64) == "unsigned long long"
    calls = []

    @tools.context_dependent_memoize
    def build(n):
        calls.append(n)
        return n * 2
    assert build(3) == 6 and build(3) == 6 and calls == [3]
    free, total = drv.mem_get_info()
    dev = drv.Context._current().get_device()
    assert 0 < free <= total == dev.total_memory()
    assert dev.get_attribute(drv.device_attribute.MAX_THREADS_PER_BLOCK) >= 1 and dev.compute_capability() == (0, 0)
    with pytest.raises(drv.LogicError):
        dev.get_attribute("CLOCK_RATE")


WARP_PROBE = """#if !(defined(CLRUN_NV_PTX) || (defined(cl_khr_subgroup_shuffle) && defined(cl_khr_subgroup_ballot) && \\
      defined(cl_khr_subgroup_non_uniform_vote) && defined(cl_intel_required_subgroup_size)))
#error no warps
#endif
__kernel void k(__global int *a) { a[0] = 1; }
"""


def device_has_warps():
    """Whether the context's device compiles warp intrinsics (NVIDIA, or sub-groups of a required
    size with shuffles, ballots and votes), asked of its OpenCL C compiler directly."""
    import clrun.cuda.autoinit  # noqa: F401
    import clrun.cuda.driver as drv
    c = drv.Context._current()._clrun
    nv = c.device.type == "gpu" and "NVIDIA" in c.device.platform_vendor
    try:
        c.program(source=WARP_PROBE, options="-DCLRUN_NV_PTX=1" if nv else None, name="warp_probe.cl")
        return True
    except clrun.BuildFailed:
        return False


WARP_SOURCE = """
__global__ void warp_ops(const float *x, float *sum, float *scan, int *bcast, unsigned *ballot, int *vote, double *dsum,
                         long long *lx, unsigned *ux)
{
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    int lane = threadIdx.x % warpSize;
    float v = x[t];
    float s = v;
    for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffff, s, o);
    sum[t] = s;
    float c = v;
    for (int d = 1; d < 32; d *= 2) {
        float u = __shfl_up_sync(0xffffffff, c, d);
        if (lane >= d) c += u;
    }
    scan[t] = c;
    bcast[t] = __shfl_sync(0xffffffff, t, 3, 16) + __shfl_xor_sync(0xffffffff, lane, 5);
    ballot[t] = __ballot_sync(0xffffffff, v > 0.5f);
    vote[t] = __any_sync(0xffffffff, v > 0.99f) * 2 + __all_sync(0xffffffff, v >= 0.01f);
    double d = v;
    for (int o = 16; o > 0; o /= 2) d += __shfl_xor_sync(0xffffffff, d, o);
    dsum[t] = d;
    long long q = (long long)t << 33;
    lx[t] = __shfl_down_sync(0xffffffff, q, 1, 8);
    ux[t] = __shfl_up_sync(__activemask(), (unsigned)t * 2654435761u, 2, 4);
    __syncwarp();
}
"""


def _lanes(v, src):
    """v taken, warp by warp, from the lanes src names (a lane's source lane, 32 of them)."""
    return v.reshape(-1, 32)[:, src].reshape(-1)


def test_warp_intrinsics_or_refused(rng):
    """The shuffles (all four, default and narrower widths, 32- and 64-bit values), ballot, votes,
    __activemask and __syncwarp against NumPy's model of a warp; refused at the first use's line
    where the device's compiler has neither inline PTX nor sub-groups of 32."""
    import clrun.cuda.driver as drv
    from clrun.cuda.compiler import SourceModule
    if not device_has_warps():
        with pytest.raises(clrun.BuildFailed, match=r"warp.cu:9:\d+: .*__shfl_down_sync: warp intrinsics need NVIDIA's inline PTX or "
                                                    r"sub-groups of 32"):
            SourceModule(WARP_SOURCE, name="warp.cu")
        return
    f = SourceModule(WARP_SOURCE, name="warp.cu").get_function("warp_ops")
    n = 512
    x = rng.random(n).astype(np.float32)
    x[64:96] = 1.0  # a warp whose votes all say yes
    x[96:128] = 0.0  # … and one where they all say no
    outs = [np.zeros(n, t) for t in (np.float32, np.float32, np.int32, np.uint32, np.int32, np.float64, np.int64, np.uint32)]
    f(drv.In(x), *[drv.Out(o) for o in outs], block=(128, 1, 1), grid=(n // 128, 1))
    s_, scan, bcast, ballot, vote, dsum, lx, ux = outs
    lane, t = np.arange(32), np.arange(n)
    down = lambda d, w=32: np.where(lane % w + d < w, lane + d, lane)  # noqa: E731
    up = lambda d, w=32: np.where(lane % w >= d, lane - d, lane)  # noqa: E731
    xor = lambda m, w=32: np.where((lane ^ m) < (lane & ~(w - 1)) + w, lane ^ m, lane)  # noqa: E731
    s = x.copy()
    for o in (16, 8, 4, 2, 1):
        s = s + _lanes(s, down(o))
    assert np.array_equal(s_, s)
    c = x.copy()
    for d in (1, 2, 4, 8, 16):
        c = np.where(t % 32 >= d, c + _lanes(c, up(d)), c)
    assert np.array_equal(scan, c)
    assert np.array_equal(bcast, _lanes(t, (lane & ~15) + 3) + _lanes(t % 32, xor(5)))
    bits = (x > 0.5).reshape(-1, 32).astype(np.uint64) << np.arange(32, dtype=np.uint64)
    assert np.array_equal(ballot, np.repeat(bits.sum(1).astype(np.uint32), 32))
    any_, all_ = (x > 0.99).reshape(-1, 32).any(1), (x >= 0.01).reshape(-1, 32).all(1)
    assert np.array_equal(vote, np.repeat(any_ * 2 + all_, 32))
    d = x.astype(np.float64)
    for o in (16, 8, 4, 2, 1):
        d = d + _lanes(d, xor(o))
    assert np.array_equal(dsum, d)
    assert np.array_equal(lx, _lanes(t.astype(np.int64) << 33, down(1, 8)))
    assert np.array_equal(ux, _lanes((t * 2654435761) % 2**32, up(2, 4)).astype(np.uint32))


def test_warp_intrinsics_refused_by_form():
    """What the warp forms do not cover is refused in words: an intrinsic not translated, and a
    shuffle on a type no overload takes."""
    from clrun.cuda.compiler import translate
    with pytest.raises(clrun.BuildFailed, match=r"kernel.cu:1:\d+: .*__shfl_down"):
        translate("__global__ void k(float *a) { a[0] = __shfl_down(a[0], 1); }\n")
    with pytest.raises(clrun.BuildFailed, match=r"kernel.cu:2:\d+: error: no matching function for call to '__shfl_sync'"):
        translate("struct P { float x; };\n__global__ void k(P *a) { a[0] = __shfl_sync(0xffffffffu, a[1], 0); }\n")
    with pytest.raises(clrun.BuildFailed, match=r"kernel.cu:1:\d+: __shfl_down_sync on a value whose type is not int, unsigned, float, "
                       r"long long, unsigned long long, double or a template's type parameter"):
        translate("template <typename T> __device__ T f(T *v) { return __shfl_down_sync(0xffffffffu, v[0] * 2, 1); }\n"
                  "__global__ void k(float *a) { a[0] = f(a); }\n")


def test_include_dirs_and_headers_beside_the_file(rng, tmp_path, monkeypatch):
    """A kernel's own headers, as PyCUDA's include_dirs and nvcc's -I find them: pasted in where
    included (include guards and #pragma once honoured, a header including its neighbour), run
    correctly, and errors named at the header's own line; a bare name searches the current
    directory, as nvcc does for a file there."""
    import clrun.cuda.driver as drv
    from clrun.cuda.compiler import SourceModule
    lib = tmp_path / "my lib"
    (lib / "math").mkdir(parents=True)
    (lib / "math" / "axpy.cuh").write_text('#pragma once\n#include "fma3.cuh"\n'
                                           "__device__ inline float axpy(float a, float x, float y) { return fma3(a, x, y); }\n")
    (lib / "math" / "fma3.cuh").write_text("#ifndef FMA3\n#define FMA3\n__device__ inline float fma3(float a, float b, float c)\n"
                                           "{\n    return a * b + c;\n}\n#endif\n")
    (lib / "bad.cuh").write_text("// a mistake on line 3\n__device__ float f(float x)\n{ return x + ; }\n")
    src = '#include "math/axpy.cuh"\n#include <math/axpy.cuh>\n' \
          "__global__ void k(float *y, const float *x, float a)\n" \
          "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    y[i] = axpy(a, x[i], y[i]);\n}\n"
    mod = SourceModule(src, include_dirs=[str(lib)], keep=True)
    assert mod.cl_source.count("inline float axpy") == 1
    assert f'#line 1 "{lib}/math/fma3.cuh"' in mod.cl_source
    x, y = rng.standard_normal(256).astype(np.float32), rng.standard_normal(256).astype(np.float32)
    out = y.copy()
    mod.get_function("k")(drv.InOut(out), drv.In(x), np.float32(1.5), block=(64, 1, 1), grid=(4, 1))
    assert np.allclose(out, 1.5 * x.astype(np.float64) + y, rtol=1e-6, atol=1e-6)  # fused or not, as the device contracts
    with pytest.raises(clrun.BuildFailed, match=re.escape(f"{lib}/bad.cuh:3:") + r"\d+: error: expected expression"):
        SourceModule('#include "bad.cuh"\n__global__ void k(float *a) { a[0] = f(a[0]); }\n', options=["-I", str(lib)])
    with pytest.raises(clrun.BuildFailed, match=r'kernel.cu:1:1: #include "math/axpy.cuh": not found beside the file or in the -I'):
        SourceModule(src)
    monkeypatch.chdir(lib)  # a bare name: its directory is the current one (for quoted names; angled ones want -I)
    mod = SourceModule(src.split("\n", 2)[0] + "\n\n" + src.split("\n", 2)[2], keep=True)
    assert "inline float fma3" in mod.cl_source
    with pytest.raises(clrun.BuildFailed, match=r"kernel.cu:2:1: #include <math/axpy.cuh>: not found in the -I directories"):
        SourceModule(src)


def test_driver_memset_context_and_function_attributes(rng):
    """pycuda.driver's memset_d8/d16/d32 (bounds checked), Context.push/get_current, and a Function's
    attributes as OpenCL reports them (its static shared memory counted)."""
    import clrun.cuda.driver as drv
    from clrun.cuda.compiler import SourceModule
    a = drv.mem_alloc(64)
    drv.memset_d32(a, np.float32(-2.5).view(np.uint32), 16)
    drv.memset_d16(a, 0xBEEF, 2)
    drv.memset_d8_async(a, 7, 1)
    got = np.empty(64, np.uint8)
    drv.memcpy_dtoh(got, a)
    want = np.full(16, -2.5, np.float32).view(np.uint8).copy()
    want[:4] = np.array([0xBEEF, 0xBEEF], np.uint16).view(np.uint8)
    want[0] = 7
    assert np.array_equal(got, want)
    for f, n in ((drv.memset_d32, 17), (drv.memset_d16, 33), (drv.memset_d8, 65), (drv.memset_d8, -1)):
        with pytest.raises(drv.LogicError, match="into an allocation of 64"):
            f(a, 0, n)
    drv.memset_d16(a, -1, 1)  # a negative value as its two's complement, as CUDA's unsigned parameter takes it
    drv.memcpy_dtoh(got, a)
    assert got[0] == got[1] == 0xFF
    with pytest.raises(drv.LogicError, match="into an allocation of 64"):
        drv.memset_d32(a, 0, 1 << 64)
    with pytest.raises(TypeError, match="not an integer"):
        drv.memset_d32(a, float("nan"), 1)
    with pytest.raises(ValueError, match="does not fit 8 bits"):
        drv.memset_d8(a, 256, 1)
    a.free()
    with pytest.raises(drv.LogicError, match="freed"):
        drv.memset_d8(a, 0, 1)
    k = int(rng.integers(8, 64))
    mod = SourceModule(f"__global__ void rev(float *a) {{ __shared__ float s[{k}]; s[threadIdx.x] = a[threadIdx.x]; __syncthreads(); "
                       f"a[threadIdx.x] = s[{k - 1} - threadIdx.x]; }}")
    fn = mod.get_function("rev")
    assert fn.shared_size_bytes >= 4 * k and fn.get_attribute(drv.function_attribute.SHARED_SIZE_BYTES) == fn.shared_size_bytes
    assert fn.max_threads_per_block >= 1 and fn.get_attribute(drv.function_attribute.MAX_THREADS_PER_BLOCK) == fn.max_threads_per_block
    fn.set_cache_config(drv.func_cache.PREFER_SHARED)
    x = rng.standard_normal(k).astype(np.float32)
    y = x.copy()
    fn(drv.InOut(y), block=(k, 1, 1))
    assert np.array_equal(y, x[::-1])
    c = drv.Context.get_current()
    c.push()
    assert drv.Context.get_current() is c
    own = c.get_device().make_context()  # a kernel of a context detached since: its attributes say so
    try:
        gone = SourceModule("__global__ void k(float *a) { a[0] = 1.0f; }").get_function("k")
    finally:
        own.detach()
    assert drv.Context.get_current() is c
    with pytest.raises(clrun.InvalidArgument, match="closed"):
        gone.shared_size_bytes


def test_cg_reduce_on_warp_tiles(rng):
    """cooperative_groups::reduce over a thread_block_tile<32> with each operator (plus, less,
    greater, bit_and, bit_or, bit_xor) on int, unsigned and float, the tile passed on to device
    functions and a template's group parameter; every lane gets its warp's result, as in CUDA,
    checked against NumPy where the device has warps, refused at the line elsewhere. Reduction over
    the whole block, and bitwise operators on floats, are refused by name."""
    import clrun.cuda.driver as drv
    from clrun.cuda.compiler import SourceModule
    src = """#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
template <typename T, typename Group> __device__ T most(Group &g, T v) { return cg::reduce(g, v, cg::greater<T>()); }
__device__ unsigned ors(const cg::thread_block_tile<32> &t, unsigned v) { return cg::reduce(t, v, cg::bit_or<unsigned>()); }
__global__ void k(const int *a, const float *f, int *o, float *of)
{
    cg::thread_block b = cg::this_thread_block();
    cg::thread_block_tile<32> t = cg::tiled_partition<32>(b);
    const int i = blockIdx.x * blockDim.x + threadIdx.x, v = a[i];
    o[8 * i + 0] = cg::reduce(t, v, cg::plus<int>());
    o[8 * i + 1] = cg::reduce(t, v, cg::less<int>());
    o[8 * i + 2] = most(t, v);
    o[8 * i + 3] = cg::reduce(t, v, cg::bit_and<int>());
    o[8 * i + 4] = (int)ors(t, (unsigned)v);
    o[8 * i + 5] = cg::reduce(t, v, cg::bit_xor<int>());
    of[2 * i + 0] = cg::reduce(t, f[i], cg::plus<float>());
    of[2 * i + 1] = most(t, f[i]);
}
"""
    from test_cuda_text import device_has_warps
    if not device_has_warps():
        with pytest.raises(clrun.BuildFailed, match=r"kernel.cu:4:\d+: .*cooperative_groups::reduce: warp intrinsics need"):
            SourceModule(src)
    else:
        n = 4 * 64
        a = rng.integers(-(1 << 20), 1 << 20, n).astype(np.int32)
        f = (rng.integers(-64, 64, n) / 8).astype(np.float32)  # exact sums in any order
        o, of = np.zeros(8 * n, np.int32), np.zeros(2 * n, np.float32)
        SourceModule(src).get_function("k")(drv.In(a), drv.In(f), drv.Out(o), drv.Out(of), block=(64, 1, 1), grid=(4, 1))
        o, of = o.reshape(n, 8), of.reshape(n, 2)
        w, wf = a.reshape(-1, 32), f.reshape(-1, 32)
        for col, want in enumerate((w.sum(axis=1, dtype=np.int32), w.min(axis=1), w.max(axis=1), np.bitwise_and.reduce(w, axis=1),
                                    np.bitwise_or.reduce(w, axis=1), np.bitwise_xor.reduce(w, axis=1))):
            assert np.array_equal(o[:, col], np.repeat(want, 32)), col
        assert np.array_equal(of[:, 0], np.repeat(wf.sum(axis=1), 32)) and np.array_equal(of[:, 1], np.repeat(wf.max(axis=1), 32))
    head = "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\nnamespace cg = cooperative_groups;\n"
    with pytest.raises(clrun.BuildFailed, match=r"kernel.cu:5:\d+: cooperative_groups::reduce over cooperative_groups::thread_block: only warp"):
        SourceModule(head + "__global__ void k(int *a) { cg::thread_block b = cg::this_thread_block();\n"
                     "  a[0] = cg::reduce(b, a[1], cg::plus<int>()); }\n")
    with pytest.raises(clrun.BuildFailed, match=r"kernel.cu:6:\d+: cooperative_groups::reduce with a bitwise operator on a floating-point"):
        SourceModule(head + "__global__ void k(float *a) {\n  cg::thread_block_tile<32> t = cg::tiled_partition<32>(cg::this_thread_block());\n"
                     "  a[0] = cg::reduce(t, a[1], cg::bit_or<float>()); }\n")
    with pytest.raises(clrun.BuildFailed, match=r"kernel.cu:5:\d+: cooperative_groups::plus<float> other than as cg::reduce's operator"):
        SourceModule(head + "template <class Op> __device__ float ap(Op op, float x) { return op(x, x); }\n"
                     "__global__ void k(float *a) { a[0] = ap(cg::plus<float>(), a[1]); }\n")
