/* Test kernels for arguments and launches. */
#ifdef HAVE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

__kernel void scalars(__global ulong *out, char a, uchar b, short c, ushort d, int e, uint f, long g,
                      ulong h, float x
#ifdef HAVE_FP64
                      , double y
#endif
                      , float4 v)
{
    out[0] = (ulong)(long)a;
    out[1] = b;
    out[2] = (ulong)(long)c;
    out[3] = d;
    out[4] = (ulong)(long)e;
    out[5] = f;
    out[6] = (ulong)g;
    out[7] = h;
    out[8] = as_uint(x);
#ifdef HAVE_FP64
    out[9] = as_ulong(y);
#endif
    out[10] = as_uint(v.x) ^ ((ulong)as_uint(v.w) << 32);
}

/* Sum of each work-group's inputs through local memory. */
__kernel void group_sums(__global float *out, __global const float *in, __local float *tmp, const uint n)
{
    const size_t l = get_local_id(0), g = get_global_id(0), ls = get_local_size(0);
    tmp[l] = g < n ? in[g] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        float s = 0.0f;
        for (size_t i = 0; i < ls; i++) s += tmp[i];
        out[get_group_id(0)] = s;
    }
}

/* Writes a code of its 3-D global id, guarded. */
__kernel void ids(__global uint *out, const uint nx, const uint ny, const uint nz)
{
    const uint x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    if (x < nx && y < ny && z < nz) out[(z * ny + y) * nx + x] = x + 1000u * y + 1000000u * z;
}

/* By-value aggregates: a struct with padding and a 3-vector (the size of a 4-vector). */
typedef struct {
    char tag;
    int count;
    float scale;
} padded;
__kernel void aggregates(__global float *out, padded p, float3 v)
{
    out[0] = p.tag;
    out[1] = p.count;
    out[2] = p.scale;
    out[3] = v.x + 2 * v.y + 4 * v.z;
}
