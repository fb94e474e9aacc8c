/* rand.cl — counter-based random numbers: Philox4x32-10 from Random123 (its header, preprocessed for
 * OpenCL at build time, is embedded as random123_philox.h), laid out as cuRAND's Philox4_32_10:
 * key (seed mod 2^32, seed >> 32), counter (q mod 2^32, q >> 32, subsequence mod 2^32,
 * subsequence >> 32) for block q; word j of the stream is word j mod 4 of block j / 4.
 *
 * Work-item i takes the four words woff + 4i .. woff + 4i + 3 (one block, or two when woff is not a
 * multiple of 4) and writes the values they make: one per word (bits, uniform and normal float32/16,
 * Bernoulli), or one per two words (float64, integers). Everything but the normal distribution's
 * log/sin/cos is integer arithmetic and exact conversions (fma for the scaling), so the values are
 * the same bits on every OpenCL implementation, whatever the work-group size. */
#include "random123_philox.h"

static uint4 clrun__philox(ulong q, uint k0, uint k1, ulong sub)
{
    philox4x32_ctr_t c = {{(uint)q, (uint)(q >> 32), (uint)sub, (uint)(sub >> 32)}};
    philox4x32_key_t k = {{k0, k1}};
    philox4x32_ctr_t r = philox4x32_R(philox4x32_rounds, c, k);
    return (uint4)(r.v[0], r.v[1], r.v[2], r.v[3]);
}

/* the four words from word w of the stream */
static uint4 clrun__words(ulong w, uint k0, uint k1, ulong sub)
{
    const uint4 a = clrun__philox(w >> 2, k0, k1, sub);
    const uint r = (uint)(w & 3);
    if (r == 0) return a;
    const uint4 b = clrun__philox((w >> 2) + 1, k0, k1, sub);
    if (r == 1) return (uint4)(a.y, a.z, a.w, b.x);
    if (r == 2) return (uint4)(a.z, a.w, b.x, b.y);
    return (uint4)(a.w, b.x, b.y, b.z);
}

#define CLRUN_RAND_ARGS ulong out_off, ulong n, uint k0, uint k1, ulong sub, ulong woff
#define CLRUN_RAND_WORDS const ulong i = get_global_id(0); const uint4 x = clrun__words(woff + 4 * i, k0, k1, sub)

/* bfloat16 of f, rounded to nearest even (NaN kept a quiet NaN) */
static ushort clrun__bf16(float f)
{
    const uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40);
    return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

__kernel void clrun_rand_bits(__global uint *out, CLRUN_RAND_ARGS)
{
    CLRUN_RAND_WORDS;
    if ((out_off & 3) == 0 && 4 * i + 3 < n) { /* one 16-byte store: coalesced */
        ((__global uint4 *)(out + out_off))[i] = x;
        return;
    }
    const uint v[4] = {x.x, x.y, x.z, x.w};
    for (uint j = 0; j < 4; j++)
        if (4 * i + j < n) out[out_off + 4 * i + j] = v[j];
}

/* Bernoulli: 1 where the word is below thr (p · 2^32, exact); 0 or 1 bytes */
__kernel void clrun_rand_bernoulli(__global uchar *out, CLRUN_RAND_ARGS, ulong thr)
{
    CLRUN_RAND_WORDS;
    const uint v[4] = {x.x, x.y, x.z, x.w};
    for (uint j = 0; j < 4; j++)
        if (4 * i + j < n) out[out_off + 4 * i + j] = (ulong)v[j] < thr ? 1 : 0;
}

/* uniform in [0, 1) from the word's top bits, then low + scale · u in one rounding */
__kernel void clrun_rand_uniform_f32(__global float *out, CLRUN_RAND_ARGS, float low, float scale)
{
    CLRUN_RAND_WORDS;
    const float4 u = fma(convert_float4(x >> 8) * 0x1.0p-24f, (float4)scale, (float4)low);
    if ((out_off & 3) == 0 && 4 * i + 3 < n) { /* one 16-byte store: coalesced */
        ((__global float4 *)(out + out_off))[i] = u;
        return;
    }
    const float v[4] = {u.x, u.y, u.z, u.w};
    for (uint j = 0; j < 4; j++)
        if (4 * i + j < n) out[out_off + 4 * i + j] = v[j];
}

__kernel void clrun_rand_uniform_f16(__global half *out, CLRUN_RAND_ARGS, float low, float scale)
{
    CLRUN_RAND_WORDS;
    const uint v[4] = {x.x, x.y, x.z, x.w};
    for (uint j = 0; j < 4; j++) /* 11 bits: every u is a float16, so [0, 1) stays below 1 */
        if (4 * i + j < n) vstore_half_rte(fma((float)(v[j] >> 21) * 0x1.0p-11f, scale, low), out_off + 4 * i + j, out);
}

__kernel void clrun_rand_uniform_bf16(__global ushort *out, CLRUN_RAND_ARGS, float low, float scale)
{
    CLRUN_RAND_WORDS;
    const uint v[4] = {x.x, x.y, x.z, x.w};
    for (uint j = 0; j < 4; j++) /* 8 bits: every u is a bfloat16 */
        if (4 * i + j < n) out[out_off + 4 * i + j] = clrun__bf16(fma((float)(v[j] >> 24) * 0x1.0p-8f, scale, low));
}

/* standard normal pairs by Box–Muller as cuRAND's curand_normal4: from words x, y,
 * u = x 2^-32 + 2^-33 in (0, 1], v = y 2^-32 2π + 2^-32 π; sqrt(-2 ln u) (sin v, cos v) */
static float2 clrun__box_muller(uint a, uint b)
{
    const float u = fma((float)a, 0x1.0p-32f, 0x1.0p-33f);
    const float v = fma((float)b, 0x1.921fb6p-30f, 0x1.921fb6p-31f);
    const float s = sqrt(-2.0f * log(u));
    return (float2)(s * sin(v), s * cos(v));
}

#define CLRUN_NORMAL4 const float2 p = clrun__box_muller(x.x, x.y), q = clrun__box_muller(x.z, x.w); \
    const float z[4] = {p.x, p.y, q.x, q.y}

__kernel void clrun_rand_normal_f32(__global float *out, CLRUN_RAND_ARGS, float loc, float scale)
{
    CLRUN_RAND_WORDS;
    CLRUN_NORMAL4;
    if ((out_off & 3) == 0 && 4 * i + 3 < n) { /* one 16-byte store: coalesced */
        ((__global float4 *)(out + out_off))[i] = fma((float4)(z[0], z[1], z[2], z[3]), (float4)scale, (float4)loc);
        return;
    }
    for (uint j = 0; j < 4; j++)
        if (4 * i + j < n) out[out_off + 4 * i + j] = fma(z[j], scale, loc);
}

__kernel void clrun_rand_normal_f16(__global half *out, CLRUN_RAND_ARGS, float loc, float scale)
{
    CLRUN_RAND_WORDS;
    CLRUN_NORMAL4;
    for (uint j = 0; j < 4; j++)
        if (4 * i + j < n) vstore_half_rte(fma(z[j], scale, loc), out_off + 4 * i + j, out);
}

__kernel void clrun_rand_normal_bf16(__global ushort *out, CLRUN_RAND_ARGS, float loc, float scale)
{
    CLRUN_RAND_WORDS;
    CLRUN_NORMAL4;
    for (uint j = 0; j < 4; j++)
        if (4 * i + j < n) out[out_off + 4 * i + j] = clrun__bf16(fma(z[j], scale, loc));
}

/* integers in [low, low + range): the top 64 bits of (two words as a 64-bit number) · range, so
 * no modulo bias (the bias left is below range / 2^64); two words per value */
#define CLRUN_INTEGERS(T, NAME)                                                                              \
    __kernel void NAME(__global T *out, CLRUN_RAND_ARGS, ulong low, ulong range)                              \
    {                                                                                                        \
        CLRUN_RAND_WORDS;                                                                                    \
        const ulong w0 = ((ulong)x.x << 32) | x.y, w1 = ((ulong)x.z << 32) | x.w;                            \
        if (2 * i < n) out[out_off + 2 * i] = (T)(low + (range ? mul_hi(w0, range) : w0));                  \
        if (2 * i + 1 < n) out[out_off + 2 * i + 1] = (T)(low + (range ? mul_hi(w1, range) : w1));          \
    }
CLRUN_INTEGERS(int, clrun_rand_integers_i32)
CLRUN_INTEGERS(uint, clrun_rand_integers_u32)
CLRUN_INTEGERS(long, clrun_rand_integers_i64)
CLRUN_INTEGERS(ulong, clrun_rand_integers_u64)

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
/* float64: 53 bits from two words (27 + 26, as NumPy's random_standard_uniform did); two words per value */
static double clrun__u53(uint a, uint b) { return ((double)(a >> 5) * 67108864.0 + (double)(b >> 6)) * 0x1.0p-53; }

__kernel void clrun_rand_uniform_f64(__global double *out, CLRUN_RAND_ARGS, ulong low_bits, ulong scale_bits)
{
    CLRUN_RAND_WORDS;
    const double low = as_double(low_bits), scale = as_double(scale_bits);
    if (2 * i < n) out[out_off + 2 * i] = fma(clrun__u53(x.x, x.y), scale, low);
    if (2 * i + 1 < n) out[out_off + 2 * i + 1] = fma(clrun__u53(x.z, x.w), scale, low);
}

/* a pair from four words: u in (0, 1) (53 bits and half a step), v in (0, 2π) */
__kernel void clrun_rand_normal_f64(__global double *out, CLRUN_RAND_ARGS, ulong loc_bits, ulong scale_bits)
{
    CLRUN_RAND_WORDS;
    const double loc = as_double(loc_bits), scale = as_double(scale_bits);
    const double u = clrun__u53(x.x, x.y) + 0x1.0p-54, v = (clrun__u53(x.z, x.w) + 0x1.0p-54) * 6.283185307179586;
    const double s = sqrt(-2.0 * log(u));
    if (2 * i < n) out[out_off + 2 * i] = fma(s * sin(v), scale, loc);
    if (2 * i + 1 < n) out[out_off + 2 * i + 1] = fma(s * cos(v), scale, loc);
}
#endif
