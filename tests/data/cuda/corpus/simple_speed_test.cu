// PyCUDA examples/from-wiki/simple_speed_test.py (MIT, LICENSES.md): the kernel text as given to SourceModule
__global__ void gpusin(float *dest, float *a, int n_iter)
{
  const int i = blockDim.x*blockIdx.x + threadIdx.x;
  for(int n = 0; n < n_iter; n++) {
    a[i] = sin(a[i]);
  }
  dest[i] = a[i];
}
