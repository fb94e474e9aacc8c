/* convert.cl — f32 <-> f16 (IEEE binary16) and f32 <-> bf16, round to nearest even, one element per
 * work-item, from element offsets so (source) and d0 (destination); the global size may be rounded up. f16 goes through
 * vstore_half_rte / vload_half (no cl_khr_fp16 needed); bf16 is the top half of an f32 pattern,
 * rounded with integer arithmetic, any NaN giving 0x7FC0 as PyTorch does. */

__kernel void clrun_f32_to_f16(__global const float *restrict src, const ulong so, __global ushort *restrict dst, const ulong d0, const ulong n)
{
    const size_t i = get_global_id(0);
    if (i < n) vstore_half_rte(src[so + i], d0 + i, (__global half *)dst);
}

__kernel void clrun_f16_to_f32(__global const ushort *restrict src, const ulong so, __global float *restrict dst, const ulong d0, const ulong n)
{
    const size_t i = get_global_id(0);
    if (i < n) dst[d0 + i] = vload_half(so + i, (__global const half *)src);
}

__kernel void clrun_f32_to_bf16(__global const uint *restrict src, const ulong so, __global ushort *restrict dst, const ulong d0, const ulong n)
{
    const size_t i = get_global_id(0);
    if (i >= n) return;
    const uint x = src[so + i];
    dst[d0 + i] = (x & 0x7FFFFFFFu) > 0x7F800000u ? (ushort)0x7FC0u : (ushort)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

__kernel void clrun_bf16_to_f32(__global const ushort *restrict src, const ulong so, __global uint *restrict dst, const ulong d0, const ulong n)
{
    const size_t i = get_global_id(0);
    if (i < n) dst[d0 + i] = (uint)src[so + i] << 16;
}
