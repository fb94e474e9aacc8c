/* s8_epilogue.h — how the INT8 GEMM kernels (gemm_s8.cl, gemm_cpu.cl with S8, gemm_mma_nv.cl with
 * ABT 3) store an element of C from its exact int32 sum (lib/ops/gemm/). EPI 1: C is f32,
 * C = (float)acc · row_scale[i] · col_scale[j] + bias[j], then ReLU when flags & 1, each operation
 * rounded apart (the includer sets FP_CONTRACT OFF); EPI 0: C is int32, C = acc (+ C when flags & 2). */
#ifndef CLRUN_S8_EPILOGUE_H
#define CLRUN_S8_EPILOGUE_H
#ifndef EPI
#define EPI 0
#endif

inline void clrun_s8_store(__global void *Cv, const ulong at, const int acc, const uint i, const uint j, __global const float *rs,
                           __global const float *cs, __global const float *bias, const int flags)
{
#if EPI
    float v = (float)acc;
    if (rs) v = v * rs[i];
    if (cs) v = v * cs[j];
    if (bias) v = v + bias[j];
    if (flags & 1) v = fmax(v, 0.0f);
    ((__global float *)Cv)[at] = v;
#else
    __global int *C = (__global int *)Cv;
    C[at] = (flags & 2) ? C[at] + acc : acc;
#endif
}
#endif
