/* tmap_nv.cl — the device address of a buffer, for tensor maps (lib/ops/gemm/nv/tmap_nv.c): the
 * address NVIDIA's driver gives the buffer, which the CUDA driver's encoder takes as the tensor's
 * global address. */
__kernel void clrun_buf_address(__global const uchar *p, __global ulong *out) { out[0] = (ulong)p; }
