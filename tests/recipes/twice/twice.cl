/* twice.cl — y = 2x (the recipe's example op). */
#include "common.h"

__kernel void clrun_twice_f32(__global const float *x, __global float *y, ulong n)
{
    const size_t i = get_global_id(0);
    if (i < n) y[i] = 2.0f * x[i];
}
