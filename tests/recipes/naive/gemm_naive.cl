/* gemm_naive.cl — one element of C per work-item (the recipe's example backend), f32, A and B as
 * stored (no transposes), the GPU-shaped kernels' argument list. */
__kernel void clrun_gemm_naive(uint M, uint N, uint K, float alpha, float beta, __global const float *A, ulong a_off, uint lda,
                               ulong stride_a, __global const float *B, ulong b_off, uint ldb, ulong stride_b, __global float *C,
                               ulong c_off, uint ldc, ulong stride_c)
{
    const size_t j = get_global_id(0), i = get_global_id(1), z = get_global_id(2);
    if (i >= M || j >= N) return;
    A += a_off + z * stride_a, B += b_off + z * stride_b, C += c_off + z * stride_c;
    float s = 0.0f;
    for (uint k = 0; k < K; k++) s = fma(A[i * lda + k], B[k * ldb + j], s);
    C[i * ldc + j] = alpha * s + (beta != 0.0f ? beta * C[i * ldc + j] : 0.0f);
}
