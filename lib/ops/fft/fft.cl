/* fft.cl — what the FFT op adds around VkFFT's generated kernels: the norm's scaling and the
 * spectrum product of a convolution. T is float or double (-DCLRUN_T), T2 its complex pair. */
#ifdef CLRUN_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define T CLRUN_T
#define T2 CLRUN_CAT(CLRUN_T, 2)
#define CLRUN_CAT(a, b) CLRUN_CAT_(a, b)
#define CLRUN_CAT_(a, b) a##b

/* x[off + i] *= s for i < n (n counts scalars: a complex element is two) */
__kernel void clrun_fft_scale(__global T *x, ulong off, ulong n, T s)
{
    const ulong i = get_global_id(0);
    if (i < n) x[off + i] *= s;
}

/* out[i] = a[i] · b[i] · s, complex, for i < n (out may be a or b) */
__kernel void clrun_fft_cmul(__global const T2 *a, ulong a_off, __global const T2 *b, ulong b_off, __global T2 *out, ulong out_off,
                             ulong n, T s)
{
    const ulong i = get_global_id(0);
    if (i >= n) return;
    const T2 x = a[a_off + i], y = b[b_off + i];
    out[out_off + i] = (T2)(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x) * s;
}

/* the imaginary parts a real signal's spectrum cannot have, set to 0 as numpy.fft.irfft ignores
 * them: element 0 of each of `rows` rows of m complex elements and, when the real length is even,
 * element m - 1 */
__kernel void clrun_fft_hermitian(__global T2 *x, ulong rows, ulong m, uint even)
{
    const ulong r = get_global_id(0);
    if (r >= rows) return;
    x[r * m].y = 0;
    if (even) x[r * m + m - 1].y = 0;
}
