import numpy as np
import clrun.cuda.autoinit
import clrun.cuda.driver as drv
from clrun.cuda.compiler import SourceModule
from clrun.cuda import gpuarray
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
f = mod.get_function("scale_sum")
g, nb = mod.get_global("coef")
c = np.array([1, 2, 3, 4], np.float32)
drv.memcpy_htod(g, c)
x = np.random.default_rng(3).standard_normal(1000).astype(np.float32)
out = drv.mem_alloc(4); drv.memcpy_htod(out, np.zeros(1, np.float32))
xin = gpuarray.to_gpu(x)
f(out, xin, np.int32(1000), block=(128, 1, 1), grid=(8, 1), shared=128 * 4)
res = np.zeros(1, np.float32); drv.memcpy_dtoh(res, out)
ref = sum(float(x[i]) * c[(i // 128) % 4] for i in range(1000))
print(nb, "bytes; sum", res[0], "ref", ref, "ok", abs(res[0] - ref) < 1e-3 * (1 + abs(ref)))
print(gpuarray.zeros((3,), np.float32).get())
