/* multiply.cl — the seed example: dest[i] = a[i] * b[i], one work-item per element.
 * Launched with exactly as many work-items as elements (the seed used one block of 400 threads), so
 * the kernel has no tail guard; give clrun_launch an explicit local size or a global size that fits. */
__kernel void multiply_them(__global float *dest, __global const float *a, __global const float *b)
{
    const size_t i = get_global_id(0);
    dest[i] = a[i] * b[i];
}
