/* quant.cl — f32 <-> s8 quantization with PyTorch's arithmetic (lib/ops/quant.c).
 * Element i belongs to channel (i / inner) % channels (1 channel: per tensor); inv[c] = 1.0f / scale[c]
 * computed on the host in f32, as PyTorch does. Quantize: q = clamp(zp + rint(x·inv), -128, 127), the
 * sum done in f32 as PyTorch's int64 + float is; NaN gives the zero point. Dequantize: (q - zp)·scale
 * in f32 (exact operands, one rounding). */

__kernel void clrun_quantize(__global const float *x, const ulong x_off, __global char *q, const ulong q_off, const ulong n,
                             __global const float *inv, __global const int *zp, const uint channels, const ulong inner)
{
    const ulong i = get_global_id(0);
    if (i >= n) return;
    const uint c = channels == 1 ? 0 : (uint)((i / inner) % channels);
    const float v = x[x_off + i] * inv[c]; /* one rounding, no fma */
    const float r = (float)zp[c] + rint(v);
    float s = isnan(v) ? (float)zp[c] : clamp(r, -128.0f, 127.0f);
    q[q_off + i] = (char)(int)s;
}

__kernel void clrun_dequantize(__global const char *q, const ulong q_off, __global float *x, const ulong x_off, const ulong n,
                               __global const float *scale, __global const int *zp, const uint channels, const ulong inner)
{
    const ulong i = get_global_id(0);
    if (i >= n) return;
    const uint c = channels == 1 ? 0 : (uint)((i / inner) % channels);
    x[x_off + i] = (float)((int)q[q_off + i] - zp[c]) * scale[c];
}
