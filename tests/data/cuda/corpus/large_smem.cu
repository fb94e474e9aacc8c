// From PyCUDA's test/test_driver.py, test_large_smem (https://github.com/inducer/pycuda, MIT: LICENSES.md);
// its Python string formatting filled in where it had any.
#include <stdio.h>

        __global__ void kernel(int *d_data)
        {
        __shared__ int sdata[4000];
        sdata[threadIdx.x] = threadIdx.x;
        d_data[threadIdx.x] = sdata[threadIdx.x];
        }
        