/* vector.cl — element-wise vector ops on f32.
 * Work-item mapping: one element per work-item; kernels guard their tail (i >= n), so any global
 * size >= n works. No tuning parameters yet; shaped for every device. */
#include "common.h"

__kernel void clrun_mul_f32(__global float *restrict dst, __global const float *restrict a,
                            __global const float *restrict b, const ulong n)
{
    size_t i = CLRUN_GID;
    if (i < n) dst[i] = a[i] * b[i];
}
