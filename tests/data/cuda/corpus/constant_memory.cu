// From PyCUDA's test/test_driver.py, test_constant_memory (https://github.com/inducer/pycuda, MIT: LICENSES.md);
// its Python string formatting filled in where it had any.
__constant__ float const_array[32];

        __global__ void copy_constant_into_global(float* global_result_array)
        {
            global_result_array[threadIdx.x] = const_array[threadIdx.x];
        }
        