/* convert.cl — f32 <-> f16 (IEEE binary16) and f32 <-> bf16, round to nearest even, one element per
 * work-item, from element offsets so (source) and d0 (destination); the global size may be rounded up. f16 goes through
 * vstore_half_rte / vload_half (no cl_khr_fp16 needed); bf16 is the top half of an f32 pattern,
 * rounded with integer arithmetic, any NaN giving 0x7FC0 as PyTorch does. */

#include "common.h" /* clrun_bf16_rne */

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
    dst[d0 + i] = clrun_bf16_rne(src[so + i]);
}

__kernel void clrun_bf16_to_f32(__global const ushort *restrict src, const ulong so, __global uint *restrict dst, const ulong d0, const ulong n)
{
    const size_t i = get_global_id(0);
    if (i < n) dst[d0 + i] = (uint)src[so + i] << 16;
}

/* The same four at four elements per work-item (16-byte f32 and 8-byte f16/bf16 accesses), for
 * element offsets that are multiples of 4; the last work-item converts the tail one by one. */
#define TAIL(conv)                                                                                                  \
    const size_t i0 = get_global_id(0) * 4;                                                                         \
    if (i0 >= n) return;                                                                                            \
    if (i0 + 4 > n) {                                                                                               \
        for (size_t i = i0; i < n; i++) conv;                                                                       \
        return;                                                                                                     \
    }

__kernel void clrun_f32_to_f16_x4(__global const float *restrict src, const ulong so, __global ushort *restrict dst, const ulong d0, const ulong n)
{
    TAIL(vstore_half_rte(src[so + i], d0 + i, (__global half *)dst))
    vstorea_half4_rte(*(__global const float4 *)(src + so + i0), (d0 + i0) / 4, (__global half *)dst);
}

__kernel void clrun_f16_to_f32_x4(__global const ushort *restrict src, const ulong so, __global float *restrict dst, const ulong d0, const ulong n)
{
    TAIL(dst[d0 + i] = vload_half(so + i, (__global const half *)src))
    *(__global float4 *)(dst + d0 + i0) = vloada_half4((so + i0) / 4, (__global const half *)src);
}

__kernel void clrun_f32_to_bf16_x4(__global const uint *restrict src, const ulong so, __global ushort *restrict dst, const ulong d0, const ulong n)
{
    TAIL(dst[d0 + i] = clrun_bf16_rne(src[so + i]))
    /* clrun_bf16_rne on the whole vector (four scalar calls gathered into a ushort4 were folded to an
     * undefined store by Oclgrind's LLVM) */
    const uint4 x = *(__global const uint4 *)(src + so + i0);
    const uint4 r = select((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16, (uint4)0x7FC0u, (x & 0x7FFFFFFFu) > 0x7F800000u);
    *(__global ushort4 *)(dst + d0 + i0) = convert_ushort4(r);
}

__kernel void clrun_bf16_to_f32_x4(__global const ushort *restrict src, const ulong so, __global uint *restrict dst, const ulong d0, const ulong n)
{
    TAIL(dst[d0 + i] = (uint)src[so + i] << 16)
    *(__global uint4 *)(dst + d0 + i0) = convert_uint4(*(__global const ushort4 *)(src + so + i0)) << 16;
}

/* dst[z][r][c] = src[off + z·stride + r·ld + c]: matrices of 16-bit elements copied
 * into rows ldd apart (the tensor-core kernels' aligned staging). */
__kernel void clrun_copy_rows16(__global const ushort *src, const ulong off, const uint ld, const ulong stride, const uint rows, const uint cols,
                                __global ushort *dst, const ulong dst_off, const uint ldd)
{
    const uint c = get_global_id(0), r = get_global_id(1), z = get_global_id(2);
    if (c < cols && r < rows) dst[dst_off + ((size_t)z * rows + r) * ldd + c] = src[off + z * stride + (size_t)r * ld + c];
}
