/* sort.cl — stable least-significant-digit radix sort, 4 bits a pass, portable: a pass is a count
 * kernel (each work-group's digit counts), an exclusive scan of those counts (clrun_scan), and a
 * scatter kernel that writes each element where the scan says. No work-group waits on another, so
 * no device needs forward progress between work-groups.
 *
 * A work-group owns a block of CLRUN_WG · CLRUN_PER elements; work-item t the run of CLRUN_PER from
 * t · CLRUN_PER. Elements keep their order within a digit: the run's order, then the work-items'
 * (a local scan of the counts, digit-major), then the work-groups' (the global scan, digit-major).
 *
 * Keys are moved as stored (their bits unchanged); the digit is taken from an ordering key:
 * unsigned as is, signed with the sign bit flipped, floats so that NaN (any sign or payload) sorts
 * last and -0.0 equals 0.0, as NumPy's sort does; CLRUN_DESC inverts it (largest first, NaN first).
 *
 * Built with:
 *   -DCLRUN_S       the stored key type (uchar, ushort, uint, ulong: floats are read as their bits)
 *   -DCLRUN_BITS    its width (8, 16, 32, 64)
 *   -DCLRUN_KT      0 unsigned, 1 signed, 2 float
 *   -DCLRUN_EXP     floats: the exponent mask (0x7f800000 for float32; 0 otherwise)
 *   -DCLRUN_WG, -DCLRUN_PER
 * and, per pass, the bits of `mode`:
 *   DESC     largest first
 *   IDX      an index (uint, a flat element number) rides with each key
 *   IOTA     this pass reads no index: each element's index is its position
 *   FROMIDX  the digit is of the element's row (index / ncols), not of its key
 *   FINAL    the index is written as a long, index % ncols (the position within its row) */
#if CLRUN_BITS == 64
#define K ulong
#define ONE 1ul
#define ALL (~0ul)
#else
#define K uint
#define ONE 1u
#define ALL ((uint)((1ul << CLRUN_BITS) - 1))
#endif
#define SIGN (ONE << (CLRUN_BITS - 1))
#define S CLRUN_S
#define DESC 1u
#define IDX 2u
#define IOTA 4u
#define FROMIDX 8u
#define FINAL 16u
#define BLOCK (CLRUN_WG * CLRUN_PER)

/* The ordering key of stored bits x. */
static K order_key(K x, uint mode)
{
    K k = x;
#if CLRUN_KT == 1
    k = x ^ SIGN;
#elif CLRUN_KT == 2 /* without branches, so that a CPU compiler vectorises it */
    const K mag = x & (SIGN - ONE);
    const K neg = (K)0 - (x >> (CLRUN_BITS - 1)); /* all ones when negative */
    k = (x ^ (neg | SIGN)) & ALL;                /* negative: inverted, larger magnitude first; else the sign set */
    k = mag == 0 ? SIGN : k;                     /* -0.0 and 0.0: equal */
    k = mag > (K)CLRUN_EXP ? ALL : k;            /* NaN: after everything, all NaNs equal */
#endif
    return mode & DESC ? (~k) & ALL : k;
}

static uint digit_of(__global const S *keys, ulong koff, __global const uint *idx, ulong p, uint shift, ulong ncols, uint mode)
{
    if (mode & FROMIDX) return (uint)(((mode & IOTA ? p : idx[p]) / ncols) >> shift) & 15u;
    return (uint)(order_key((K)keys[koff + p], mode) >> shift) & 15u;
}

/* cnt[d · WG + t]: how many of work-item t's elements have digit d. */
static void count_run(__global const S *keys, ulong koff, __global const uint *idx, ulong n, uint shift, ulong ncols, uint mode,
                      __local uint *cnt)
{
    const uint t = get_local_id(0);
    const ulong base = (ulong)get_group_id(0) * BLOCK + (ulong)t * CLRUN_PER;
    uint c[16];
    for (uint d = 0; d < 16; d++) c[d] = 0;
    for (uint i = 0; i < CLRUN_PER; i++)
        if (base + i < n) c[digit_of(keys, koff, idx, base + i, shift, ncols, mode)]++;
    for (uint d = 0; d < 16; d++) cnt[d * CLRUN_WG + t] = c[d];
}

/* counts[d · groups + g]: how many elements of work-group g's block have digit d. */
__kernel __attribute__((reqd_work_group_size(CLRUN_WG, 1, 1))) void clrun_radix_count(__global const S *keys, ulong koff,
                                                                                        __global const uint *idx, ulong n, uint shift,
                                                                                        ulong ncols, uint mode, __global uint *counts)
{
    __local uint cnt[16 * CLRUN_WG];
    count_run(keys, koff, idx, n, shift, ncols, mode, cnt);
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint t = get_local_id(0), g = get_group_id(0), groups = get_num_groups(0);
    for (uint d = t; d < 16; d += CLRUN_WG) {
        uint s = 0;
        for (uint u = 0; u < CLRUN_WG; u++) s += cnt[d * CLRUN_WG + u];
        counts[d * groups + g] = s;
    }
}

/* Each element to offsets[d · groups + g] (the exclusive scan of the counts) plus its rank within
 * the block's digit d. */
__kernel __attribute__((reqd_work_group_size(CLRUN_WG, 1, 1))) void clrun_radix_scatter(
    __global const S *keys, ulong koff, __global const uint *idx, ulong n, uint shift, ulong ncols, uint mode,
    __global const uint *offsets, __global S *okeys, ulong ooff, __global uint *oidx, __global long *oidx64, ulong ioff)
{
    __local uint cnt[16 * CLRUN_WG];
    __local uint part[CLRUN_WG];
    count_run(keys, koff, idx, n, shift, ncols, mode, cnt);
    barrier(CLK_LOCAL_MEM_FENCE);
    /* exclusive scan of cnt (digit-major): each work-item its 16 entries, the work-group the sums */
    const uint t = get_local_id(0), g = get_group_id(0), groups = get_num_groups(0);
    uint mine = 0;
    for (uint j = 0; j < 16; j++) mine += cnt[t * 16 + j];
    part[t] = mine;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < CLRUN_WG; d <<= 1) {
        const uint o = t >= d ? part[t - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        part[t] += o;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint run = part[t] - mine;
    for (uint j = 0; j < 16; j++) {
        const uint c = cnt[t * 16 + j];
        cnt[t * 16 + j] = run;
        run += c;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint pos[16];
    for (uint d = 0; d < 16; d++) pos[d] = offsets[d * groups + g] + cnt[d * CLRUN_WG + t] - cnt[d * CLRUN_WG];
    const ulong base = (ulong)g * BLOCK + (ulong)t * CLRUN_PER;
    for (uint i = 0; i < CLRUN_PER; i++) {
        const ulong p = base + i;
        if (p >= n) break;
        const uint at = pos[digit_of(keys, koff, idx, p, shift, ncols, mode)]++;
        okeys[ooff + at] = keys[koff + p];
        if (mode & IDX) {
            const uint v = mode & IOTA ? (uint)p : idx[p];
            if (mode & FINAL) oidx64[ioff + at] = (long)(v % ncols);
            else oidx[at] = v;
        }
    }
}

/* out[o_off + i] = in[i_off + perm[i]] for i < n: values of CLRUN_S moved by a permutation. */
__kernel void clrun_sort_gather(__global const S *in, ulong i_off, __global const uint *perm, __global S *out, ulong o_off, ulong n)
{
    const ulong i = get_global_id(0);
    if (i < n) out[o_off + i] = in[i_off + perm[i]];
}

/* The first k of each of rows rows of n (keys and long indices) into rows of k. */
__kernel void clrun_sort_take(__global const S *keys, __global const long *idx, ulong n, ulong k, ulong rows, __global S *okeys,
                              ulong ko, __global long *oidx, ulong io)
{
    const ulong i = get_global_id(0);
    if (i >= rows * k) return;
    const ulong r = i / k, j = i % k;
    okeys[ko + i] = keys[r * n + j];
    oidx[io + i] = idx[r * n + j];
}
