/* Test kernels for the clrun CLI. */
__kernel void axpb(__global float *dst, __global const float *x, const float a, const float b, const uint n)
{
    const size_t i = get_global_id(0);
    if (i < n) dst[i] = a * x[i] + b;
}

/* Copies nbytes bytes whatever the element type. */
__kernel void copy_bytes(__global void *dst, __global const void *src, const uint nbytes)
{
    const size_t i = get_global_id(0);
    if (i < nbytes) ((__global uchar *)dst)[i] = ((__global const uchar *)src)[i];
}

/* Sums each work-group's inputs through local memory into out[group]. */
__kernel void group_sums(__global float *out, __global const float *in, __local float *tmp)
{
    const size_t l = get_local_id(0), ls = get_local_size(0);
    tmp[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        float s = 0.0f;
        for (size_t i = 0; i < ls; i++) s += tmp[i];
        out[get_group_id(0)] = s;
    }
}

/* 2-D: out[y][x] = x + 1000 y. */
__kernel void ids2(__global int *out, const uint w)
{
    out[get_global_id(1) * w + get_global_id(0)] = (int)(get_global_id(0) + 1000 * get_global_id(1));
}

/* For .sim files: c = a + b, with a scale and a NULL-able pointer. */
__kernel void vecadd(__global const float *a, __global const float *b, __global float *c, const int scale,
                     __local float *scratch, __global int *maybe_null)
{
    const size_t i = get_global_id(0);
    scratch[get_local_id(0)] = a[i];
    c[i] = (scratch[get_local_id(0)] + b[i]) * scale;
    if (maybe_null) maybe_null[i] = 1;
}

/* spins until p[0] is not 0 (never, when it is zeros): --timeout */
__kernel void spin(volatile __global int *p)
{
    while (p[0] == 0) {
    }
}

/* writes through a NULL pointer: a crash on a CPU device, named by clrun */
__kernel void crash(__global int *p, const int off)
{
    __global int *q = off ? p : (__global int *)0;
    q[get_global_id(0)] = 1;
}

/* By-value vectors and structs (clrun run's TYPE:V,V,... and .sim's by-value arguments). */
typedef struct {
    float a, b, c;
} abc;
__kernel void byvalue(__global float *out, float4 v, int3 w, abc s, __global const uchar *unused)
{
    out[0] = v.x + 2 * v.y + 4 * v.z + 8 * v.w;
    out[1] = w.x + 10 * w.y + 100 * w.z;
    out[2] = s.a * s.b + s.c;
}
