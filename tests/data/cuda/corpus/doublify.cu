// From PyCUDA's test/test_driver.py, test_prepared_invocation (https://github.com/inducer/pycuda, MIT: LICENSES.md);
// its Python string formatting filled in where it had any.
__global__ void doublify(float *a)
            {
              int idx = threadIdx.x + threadIdx.y*blockDim.x;
              a[idx] *= 2;
            }
            