/* sparse.cl — 2:4 structured sparsity (lib/ops/sparse/sparse.c; the layout is in clrun.h): prune, compress,
 * decompress, and the portable sparse GEMM for GPUs (CPUs: lib/ops/gemm/cpu/gemm_cpu.cl, NVIDIA: lib/ops/gemm/nv/gemm_mma_nv.cl with SP=1).
 * ABT (common.h): the element type. Elements are moved as their bit patterns (RAW) and compared by
 * magnitude in f32 (MAG), NaN as infinite. */
#include "common.h"

#if ABT == 0
#define RAW uint
#define MAG(r) mag(as_float(r))
#elif ABT == 1
#define RAW ushort
#define MAG(r) mag(vload_half(0, (__private const half *)&(r)))
#else
#define RAW ushort
#define MAG(r) mag(as_float((uint)(r) << 16))
#endif

static inline float mag(const float x) { return isnan(x) ? INFINITY : fabs(x); }

/* The two kept columns (lo < hi) of the group of 4 at v[0..3], n of them real (1..4; past n: zeros). */
static inline void keep2(const RAW *v, const uint n, uint *lo, uint *hi)
{
    float m[4];
    for (uint c = 0; c < 4; c++) m[c] = c < n ? MAG(v[c]) : 0.0f;
    uint a = 0; /* the largest, the first of equals */
    for (uint c = 1; c < 4; c++)
        if (m[c] > m[a]) a = c;
    uint b = a == 0 ? 1 : 0; /* the largest of the others */
    for (uint c = b + 1; c < 4; c++)
        if (c != a && m[c] > m[b]) b = c;
    *lo = min(a, b), *hi = max(a, b);
}

/* Load group g of a row of k elements at x (past k: zero bits). */
static inline uint load_group(__global const RAW *x, const uint g, const uint k, RAW *v)
{
    const uint n = min(4u, k - 4 * g);
    for (uint c = 0; c < 4; c++) v[c] = c < n ? x[4 * g + c] : (RAW)0;
    return n;
}

/* One work-item per (group, row): zero the group's two smallest elements. */
__kernel void clrun_sp24_prune(__global RAW *x, const ulong off, const uint ld, const uint rows, const uint k)
{
    const uint g = get_global_id(0), r = get_global_id(1);
    if (r >= rows || 4 * g >= k) return;
    __global RAW *row = x + off + (size_t)r * ld;
    RAW v[4];
    uint lo, hi;
    const uint n = load_group(row, g, k, v);
    keep2(v, n, &lo, &hi);
    for (uint c = 0; c < n; c++)
        if (c != lo && c != hi) row[4 * g + c] = 0;
}

/* One work-item per (metadata word, row): groups 8w .. 8w+7. */
__kernel void clrun_sp24_compress(__global const RAW *x, const ulong off, const uint ld, const uint rows, const uint k,
                                  __global RAW *values, __global uint *meta)
{
    const uint w = get_global_id(0), r = get_global_id(1), kv = 2 * ((k + 3) / 4), km = (k + 31) / 32;
    if (r >= rows || w >= km) return;
    __global const RAW *row = x + off + (size_t)r * ld;
    uint word = 0;
    for (uint j = 0; j < 8; j++) {
        const uint g = 8 * w + j;
        if (4 * g >= k) {
            word |= 0x4u << (4 * j);
            continue;
        }
        RAW v[4];
        uint lo, hi;
        const uint n = load_group(row, g, k, v);
        keep2(v, n, &lo, &hi);
        values[(size_t)r * kv + 2 * g] = v[lo];
        values[(size_t)r * kv + 2 * g + 1] = v[hi];
        word |= (lo | hi << 2) << (4 * j);
    }
    meta[(size_t)r * km + w] = word;
}

/* One work-item per (metadata word, row): columns 32w .. 32w+31 of the dense row. */
__kernel void clrun_sp24_decompress(__global const RAW *values, __global const uint *meta, const uint rows, const uint k,
                                    __global RAW *x, const ulong off, const uint ld)
{
    const uint w = get_global_id(0), r = get_global_id(1), kv = 2 * ((k + 3) / 4), km = (k + 31) / 32;
    if (r >= rows || w >= km) return;
    __global RAW *row = x + off + (size_t)r * ld;
    const uint word = meta[(size_t)r * km + w];
    for (uint j = 0; j < 8; j++) {
        const uint g = 8 * w + j;
        if (4 * g >= k) break;
        const uint e = word >> (4 * j), lo = e & 3, hi = (e >> 2) & 3;
        RAW v[4] = {0, 0, 0, 0};
        v[hi] = values[(size_t)r * kv + 2 * g + 1];
        v[lo] = values[(size_t)r * kv + 2 * g];
        for (uint c = 0; c < 4 && 4 * g + c < k; c++) row[4 * g + c] = v[c];
    }
}

/* The portable sparse GEMM (GPUs without sparse tensor cores): a work-item per element of C, one f32
 * sum over the kept elements of A's row in the order of K. */
__kernel __attribute__((reqd_work_group_size(16, 16, 1))) void
clrun_gemm_sp(const uint M, const uint N, const uint K, const float alpha, const float beta, __global const CLRUN_ELT *A0,
              const ulong a_off, const uint lda, const ulong stride_a, __global const uint *meta0, const ulong meta_off,
              __global const CLRUN_ELT *B0, const ulong b_off, const uint ldb, const ulong stride_b, __global float *C0,
              const ulong c_off, const uint ldc, const ulong stride_c)
{
    const uint j = get_global_id(0), i = get_global_id(1), z = get_global_id(2);
    if (i >= M || j >= N) return;
    const uint km = (K + 31) / 32;
    __global const CLRUN_ELT *A = A0 + a_off + z * stride_a + (size_t)i * lda;
    __global const uint *meta = meta0 + meta_off + ((size_t)z * M + i) * km;
    __global const CLRUN_ELT *B = B0 + b_off + z * stride_b;
    float acc = 0.0f;
    for (uint g = 0; 4 * g < K; g++) {
        const uint e = meta[g / 8] >> (4 * (g % 8)), k0 = 4 * g + (e & 3), k1 = 4 * g + ((e >> 2) & 3);
        if (k0 < K) acc = fma(CLRUN_LD(A, 2 * g), CLRUN_BT(k0, j), acc);
        if (k1 < K) acc = fma(CLRUN_LD(A, 2 * g + 1), CLRUN_BT(k1, j), acc);
    }
    __global float *c = C0 + c_off + z * stride_c + (size_t)i * ldc + j;
    *c = beta == 0.0f ? alpha * acc : fma(alpha, acc, beta * *c);
}
