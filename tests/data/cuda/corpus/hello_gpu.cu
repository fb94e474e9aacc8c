// From PyCUDA's examples/hello_gpu.py (https://github.com/inducer/pycuda, MIT: LICENSES.md).

__global__ void multiply_them(float *dest, float *a, float *b)
{
  const int i = threadIdx.x;
  dest[i] = a[i] * b[i];
}
