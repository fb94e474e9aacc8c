/* Test kernel: includes resolve relative to the including file. */
#include "sub/scale.h"

__kernel void scale_add(__global float *dst, __global const float *src, const uint n)
{
    const size_t i = get_global_id(0);
    if (i < n) dst[i] = TEST_SCALE(src[i]) + TEST_OFFSET;
}
