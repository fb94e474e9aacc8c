// From PyCUDA's examples/from-wiki/matrixmul_tiled.py (https://github.com/inducer/pycuda, MIT: LICENSES.md);
// its Python string formatting filled in where it had any.

__global__ void MatrixMulKernel(float *A, float *B, float *C)
{

  const uint wA = 64;
  const uint wB = 64;

  // Block index
  const uint bx = blockIdx.x;
  const uint by = blockIdx.y;

  // Thread index
  const uint tx = threadIdx.x;
  const uint ty = threadIdx.y;

  // Index of the first sub-matrix of A processed by the block
  const uint aBegin = wA * 16 * by;
  // Index of the last sub-matrix of A processed by the block
  const uint aEnd = aBegin + wA - 1;
  // Step size used to iterate through the sub-matrices of A
  const uint aStep = 16;

  // Index of the first sub-matrix of B processed by the block
  const uint bBegin = 16 * bx;
  // Step size used to iterate through the sub-matrices of B
  const uint bStep = 16 * wB;

  // The element of the block sub-matrix that is computed
  // by the thread
  float Csub = 0;
  // Loop over all the sub-matrices of A and B required to
  // compute the block sub-matrix
  for (int a = aBegin, b = bBegin;
       a <= aEnd;
       a += aStep, b += bStep)
    {
      // Shared memory for the sub-matrix of A
      __shared__ float As[16][16];
      // Shared memory for the sub-matrix of B
      __shared__ float Bs[16][16];

      // Load the matrices from global memory to shared memory
      // each thread loads one element of each matrix
      As[ty][tx] = A[a + wA * ty + tx];
      Bs[ty][tx] = B[b + wB * ty + tx];
      // Synchronize to make sure the matrices are loaded
      __syncthreads();

      // Multiply the two matrices together;
      // each thread computes one element
      // of the block sub-matrix
      for (int k = 0; k < 16; ++k)
        Csub += As[ty][k] * Bs[k][tx];

      // Synchronize to make sure that the preceding
      // computation is done before loading two new
      // sub-matrices of A and B in the next iteration
      __syncthreads();
    }

  // Write the block sub-matrix to global memory;
  // each thread writes one element
  const uint c = wB * 16 * by + 16 * bx;
  C[c + wB * ty + tx] = Csub;
}
