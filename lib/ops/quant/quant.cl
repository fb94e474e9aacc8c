/* quant.cl — f32 <-> s8 quantization with PyTorch's arithmetic (lib/ops/quant/quant.c).
 * Element i belongs to channel (i / inner) % channels (1 channel: per tensor); inv[c] = 1.0f / scale[c]
 * computed on the host in f32, as PyTorch does. Quantize: q = clamp(zp + rint(x·inv), -128, 127), the
 * sum done in f32 as PyTorch's int64 + float is; NaN gives the zero point. Dequantize: (q - zp)·scale
 * in f32 (exact operands, one rounding).
 *
 * VEC 4 (the host's choice when both offsets are multiples of 4): a work-item takes 4 consecutive
 * elements, one float4 and one char4 (a warp moves 512 and 128 contiguous bytes); VEC 1 one element.
 * The channel index is computed in 32 bits when the range allows (64-bit division is slow on GPUs).
 * Per tensor (channels 1) the scale and zero point come as arguments (inv0 or scale0, zp0) and the
 * buffers are NULL. */
#ifndef VEC
#define VEC 1
#endif

static inline uint chan(const ulong i, const uint channels, const ulong inner, const int small)
{
    if (channels == 1) return 0;
    return small ? (uint)i / (uint)inner % channels : (uint)((i / inner) % channels);
}

/* The channels of elements i .. i+3: one division, then steps along the axis. */
static inline uint4 chan4(const ulong i, const uint channels, const ulong inner, const int small)
{
    if (channels == 1) return (uint4)(0);
    ulong blk = small ? (uint)i / (uint)inner : i / inner, rem = i - blk * inner;
    uint c = small ? (uint)blk % channels : (uint)(blk % channels), out[4];
    for (int k = 0; k < 4; k++) {
        out[k] = c;
        if (++rem == inner) rem = 0, c = c + 1 == channels ? 0 : c + 1;
    }
    return (uint4)(out[0], out[1], out[2], out[3]);
}

static inline char quant1(const float x, const float inv, const int zp)
{
    const float v = x * inv; /* one rounding, no fma */
    const float r = (float)zp + rint(v);
    return (char)(int)(isnan(v) ? (float)zp : clamp(r, -128.0f, 127.0f));
}

__kernel void clrun_quantize(__global const float *x, const ulong x_off, __global char *q, const ulong q_off, const ulong n,
                             __global const float *inv, __global const int *zp, const float inv0, const int zp0, const uint channels,
                             const ulong inner)
{
    const ulong i = get_global_id(0) * VEC;
    const int small = n <= 0xFFFFFFFFul && inner <= 0xFFFFFFFFul;
    if (i >= n) return;
#if VEC == 4
    if (i + 4 <= n && channels == 1) { /* per tensor: the numbers are arguments */
        const float4 v = *(__global const float4 *)(x + x_off + i);
        *(__global char4 *)(q + q_off + i) = (char4)(quant1(v.s0, inv0, zp0), quant1(v.s1, inv0, zp0), quant1(v.s2, inv0, zp0), quant1(v.s3, inv0, zp0));
        return;
    }
    if (i + 4 <= n) {
        const float4 v = *(__global const float4 *)(x + x_off + i);
        const uint4 cc = chan4(i, channels, inner, small);
        const uint c0 = cc.s0, c1 = cc.s1, c2 = cc.s2, c3 = cc.s3;
        *(__global char4 *)(q + q_off + i) =
            (char4)(quant1(v.s0, inv[c0], zp[c0]), quant1(v.s1, inv[c1], zp[c1]), quant1(v.s2, inv[c2], zp[c2]), quant1(v.s3, inv[c3], zp[c3]));
        return;
    }
#endif
    for (ulong j = i; j < min(n, i + VEC); j++) {
        const uint c = chan(j, channels, inner, small);
        q[q_off + j] = channels == 1 ? quant1(x[x_off + j], inv0, zp0) : quant1(x[x_off + j], inv[c], zp[c]);
    }
}

__kernel void clrun_dequantize(__global const char *q, const ulong q_off, __global float *x, const ulong x_off, const ulong n,
                               __global const float *scale, __global const int *zp, const float scale0, const int zp0,
                               const uint channels, const ulong inner)
{
    const ulong i = get_global_id(0) * VEC;
    const int small = n <= 0xFFFFFFFFul && inner <= 0xFFFFFFFFul;
    if (i >= n) return;
#if VEC == 4
    if (i + 4 <= n && channels == 1) {
        const int4 v = convert_int4(*(__global const char4 *)(q + q_off + i));
        *(__global float4 *)(x + x_off + i) = (float4)((float)(v.s0 - zp0) * scale0, (float)(v.s1 - zp0) * scale0, (float)(v.s2 - zp0) * scale0,
                                                       (float)(v.s3 - zp0) * scale0);
        return;
    }
    if (i + 4 <= n) {
        const int4 v = convert_int4(*(__global const char4 *)(q + q_off + i));
        const uint4 cc = chan4(i, channels, inner, small);
        const uint c0 = cc.s0, c1 = cc.s1, c2 = cc.s2, c3 = cc.s3;
        *(__global float4 *)(x + x_off + i) = (float4)((float)(v.s0 - zp[c0]) * scale[c0], (float)(v.s1 - zp[c1]) * scale[c1],
                                                       (float)(v.s2 - zp[c2]) * scale[c2], (float)(v.s3 - zp[c3]) * scale[c3]);
        return;
    }
#endif
    for (ulong j = i; j < min(n, i + VEC); j++) {
        const uint c = chan(j, channels, inner, small);
        x[x_off + j] = channels == 1 ? (float)((int)q[q_off + j] - zp0) * scale0 : (float)((int)q[q_off + j] - zp[c]) * scale[c];
    }
}
