/* vector.cl — element-wise vector ops: mul add sub div axpy scale fma, f32 and f16 storage.
 *
 * Every kernel has one signature, so the host drives them all alike:
 *   (d, d_off, a, a_off, b, b_off, c, c_off, alpha, n)      offsets and n in elements
 * and computes d[i] = EXPR(x = a[i], y = b[i], z = c[i], alpha) for i < n; operands an op does not
 * use are never read (the compiler drops the dead loads). Arithmetic is f32; f16 data is converted
 * with vload_half / vstore_half_rte (no cl_khr_fp16 needed). axpy and fma round once (fma()).
 *
 * Work-item mapping: the scalar kernels (suffix _f32, _f16) take one element per work-item and any
 * offsets. The vector kernels (_f32v4, _f16v4) take four elements per work-item with 16-byte (f32) or
 * 8-byte (f16) loads and stores; the host uses them when every offset is a multiple of 4, and they
 * finish the n % 4 tail in the work-items after the last full vector (global = n/4 + n%4).
 * The vector kernels say so (vec_type_hint(float4)): Intel's CPU compiler, which otherwise packs
 * work-items into SIMD lanes, then keeps one work-item's float4 per register (`clrun bench vector`
 * there, 16 Mi f32: mul 11.0-12.0 ms -> 6.5-6.6, past its plain float4 kernel's 8.2; PoCL unchanged
 * at 6.2-6.6; GPUs ignore the hint).
 * Shaped for every device; no tuning parameters. Build with -cl-fp32-correctly-rounded-divide-sqrt
 * so that div is IEEE-exact. */

#define CLRUN_EW(NAME, EXPR)                                                                          \
    __kernel void clrun_##NAME##_f32(__global float *d, ulong d_off, __global const float *a, ulong a_off,   \
                                     __global const float *b, ulong b_off, __global const float *c,          \
                                     ulong c_off, float alpha, ulong n)                                      \
    {                                                                                                        \
        const size_t i = get_global_id(0);                                                                   \
        if (i >= n) return;                                                                                  \
        const float x = a[a_off + i], y = b[b_off + i], z = c[c_off + i];                                    \
        d[d_off + i] = (EXPR);                                                                               \
    }                                                                                                        \
    __kernel __attribute__((vec_type_hint(float4))) void clrun_##NAME##_f32v4(__global float *d, ulong d_off, __global const float *a, ulong a_off, \
                                       __global const float *b, ulong b_off, __global const float *c,        \
                                       ulong c_off, float alpha, ulong n)                                    \
    {                                                                                                        \
        const size_t i = get_global_id(0), n4 = n >> 2;                                                      \
        if (i < n4) {                                                                                        \
            const float4 x = ((__global const float4 *)(a + a_off))[i];                                      \
            const float4 y = ((__global const float4 *)(b + b_off))[i];                                      \
            const float4 z = ((__global const float4 *)(c + c_off))[i];                                      \
            ((__global float4 *)(d + d_off))[i] = (EXPR);                                                    \
        } else {                                                                                             \
            const size_t j = (n4 << 2) + (i - n4);                                                           \
            if (j >= n) return;                                                                              \
            const float x = a[a_off + j], y = b[b_off + j], z = c[c_off + j];                                \
            d[d_off + j] = (EXPR);                                                                           \
        }                                                                                                    \
    }                                                                                                        \
    __kernel void clrun_##NAME##_f16(__global half *d, ulong d_off, __global const half *a, ulong a_off,     \
                                     __global const half *b, ulong b_off, __global const half *c,            \
                                     ulong c_off, float alpha, ulong n)                                      \
    {                                                                                                        \
        const size_t i = get_global_id(0);                                                                   \
        if (i >= n) return;                                                                                  \
        const float x = vload_half(a_off + i, a), y = vload_half(b_off + i, b), z = vload_half(c_off + i, c); \
        vstore_half_rte((EXPR), d_off + i, d);                                                               \
    }                                                                                                        \
    __kernel __attribute__((vec_type_hint(float4))) void clrun_##NAME##_f16v4(__global half *d, ulong d_off, __global const half *a, ulong a_off,   \
                                       __global const half *b, ulong b_off, __global const half *c,          \
                                       ulong c_off, float alpha, ulong n)                                    \
    {                                                                                                        \
        const size_t i = get_global_id(0), n4 = n >> 2;                                                      \
        if (i < n4) {                                                                                        \
            const float4 x = vloada_half4(i, a + a_off), y = vloada_half4(i, b + b_off),                     \
                         z = vloada_half4(i, c + c_off);                                                     \
            vstorea_half4_rte((EXPR), i, d + d_off);                                                         \
        } else {                                                                                             \
            const size_t j = (n4 << 2) + (i - n4);                                                           \
            if (j >= n) return;                                                                              \
            const float x = vload_half(a_off + j, a), y = vload_half(b_off + j, b),                          \
                        z = vload_half(c_off + j, c);                                                        \
            vstore_half_rte((EXPR), d_off + j, d);                                                           \
        }                                                                                                    \
    }

CLRUN_EW(mul, x * y)
CLRUN_EW(add, x + y)
CLRUN_EW(sub, x - y)
CLRUN_EW(div, x / y)
CLRUN_EW(axpy, fma(alpha, x, y))   /* d = alpha * a + b, one rounding; d may be b (y = a·x + y) */
CLRUN_EW(scale, alpha * x)
CLRUN_EW(fma, fma(x, y, z))
