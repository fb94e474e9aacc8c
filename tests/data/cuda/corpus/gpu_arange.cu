// PyCUDA test/test_driver.py, test_pass_cai_array (MIT, LICENSES.md): the kernel text as given to SourceModule
    __global__ void gpu_arange(int *x)
    {
      const int i = threadIdx.x;
      x[i] = i;
    }
