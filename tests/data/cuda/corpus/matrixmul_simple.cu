// From PyCUDA's examples/from-wiki/matrixmul_simple.py (https://github.com/inducer/pycuda, MIT: LICENSES.md);
// its Python string formatting filled in where it had any.

__global__ void MatrixMulKernel(float *a, float *b, float *c)
{
    // 2D Thread ID (assuming that only *one* block will be executed)
    int tx = threadIdx.x;
    int ty = threadIdx.y;

    // Pvalue is used to store the element of the matrix
    // that is computed by the thread
    float Pvalue = 0;

    // Each thread loads one row of M and one column of N,
    //   to produce one element of P.
    for (int k = 0; k < 16; ++k) {
        float Aelement = a[ty * 16 + k];
        float Belement = b[k * 16 + tx];
        Pvalue += Aelement * Belement;
    }

    // Write the matrix to device memory;
    // each thread writes one element
    c[ty * 16 + tx] = Pvalue;
}
