/* hist.cl — bincount and histogram. Counts: each work-group counts in local memory (when the bins
 * fit) and adds its counts to the global ones with atomics, so counts are exact whatever the order.
 * Weighted sums: a stable sort of the keys (clrun_argsort) groups each bin's elements in their
 * original order, and one work-item per bin adds them in that order in double, as NumPy's bincount
 * does (histogram: in blocks of 65,536 elements, each block's sum rounded to the weights' type and
 * added in it, as np.histogram does).
 *
 * Built with -DCLRUN_T (the key or element type), -DCLRUN_SIGNED (1 for signed keys), and for the
 * weighted sums -DCLRUN_W (the weights' type), -DCLRUN_O (the sums' type); for histogram's bins
 * -DCLRUN_F (the bin type: float or double), -DCLRUN_M (the type of the scale's product). */
#if defined(CLRUN_FP64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#define T CLRUN_T
#define LOCAL_BINS 2048 /* counters in local memory: bins + 1 (the slot of keys below 0) at most */
#define DROP 0xffffffffu

/* cnt[0 .. m) = 0 (a kernel, not clEnqueueFillBuffer, which Oclgrind's checker does not see) */
__kernel void clrun_hist_zero(__global uint *cnt, ulong m)
{
    const ulong i = get_global_id(0);
    if (i < m) cnt[i] = 0;
}

/* cnt[0]: keys below 0; cnt[1 + b]: keys equal to b, for b < nbins; keys ≥ nbins are not counted. */
__kernel void clrun_bincount_count(__global const T *x, ulong xoff, ulong n, ulong nbins, __global uint *cnt)
{
    __local uint lc[LOCAL_BINS];
    const int in_local = nbins + 1 <= LOCAL_BINS;
    const uint l = get_local_id(0), wg = get_local_size(0);
    if (in_local) {
        for (uint b = l; b < nbins + 1; b += wg) lc[b] = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
        const T v = x[xoff + i];
#if CLRUN_SIGNED
        const int below = v < 0;
#else
        const int below = 0;
#endif
        const ulong u = (ulong)v;
        if (!below && u >= nbins) continue;
        const uint slot = below ? 0u : (uint)u + 1u;
        if (in_local) atomic_inc(&lc[slot]);
        else atomic_inc(&cnt[slot]);
    }
    if (in_local) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint b = l; b < nbins + 1; b += wg)
            if (lc[b]) atomic_add(&cnt[b], lc[b]);
    }
}

/* out[ooff + b] = cnt[1 + b]: the counts as int64 */
__kernel void clrun_bincount_widen(__global const uint *cnt, ulong nbins, __global long *out, ulong ooff)
{
    const ulong b = get_global_id(0);
    if (b < nbins) out[ooff + b] = (long)cnt[1 + b];
}

#ifdef CLRUN_W
/* Bin b's sum: the weights of positions perm[at[b] .. at[b + 1]) (at: the inclusive scan of cnt, so
 * at[b] counts the keys below b), in that order, in double; with block ≠ 0, each block of `block`
 * positions summed apart, rounded to CLRUN_O and added in it. */
__kernel void clrun_bincount_sum(__global const uint *at, __global const long *perm, __global const CLRUN_W *w, ulong woff, ulong nbins,
                                 ulong block, __global CLRUN_O *out, ulong ooff)
{
    const ulong b = get_global_id(0);
    if (b >= nbins) return;
    const uint from = at[b], to = at[b + 1];
    CLRUN_O total = 0;
    /* volatile: added one by one in this order (Intel's CPU compiler otherwise vectorises the loop
     * into partial sums, which changes the last bits against NumPy's) */
    volatile double part = 0;
    ulong cur = to > from ? (ulong)perm[from] / (block ? block : 1) : 0;
    for (uint i = from; i < to; i++) {
        const ulong p = (ulong)perm[i];
        if (block && p / block != cur) {
            total = (CLRUN_O)(total + (CLRUN_O)part);
            part = 0, cur = p / block;
        }
        part += (double)w[woff + p];
    }
    out[ooff + b] = block ? (CLRUN_O)(total + (CLRUN_O)part) : (CLRUN_O)part;
}
#endif

#ifdef CLRUN_F
/* np.histogram's bin of each element (DROP outside [edges[0], edges[nbins]] or NaN): the index from
 * (x - edges[0]) · scale, truncated, then moved by one where the edges say so. */
#ifdef CLRUN_FP64
#define SCALE_T double
#else
#define SCALE_T float /* float32 bins on a device without fp64: the product is in float anyway */
#endif
__kernel void clrun_hist_bin(__global const T *x, ulong xoff, ulong n, ulong nbins, __global const CLRUN_F *edges, SCALE_T scale,
                             __global uint *bin)
{
    const ulong i = get_global_id(0);
    if (i >= n) return;
    const CLRUN_F v = (CLRUN_F)x[xoff + i], lo = edges[0], hi = edges[nbins];
    if (!(v >= lo && v <= hi)) {
        bin[i] = DROP;
        return;
    }
    const CLRUN_F d = v - lo;
    long k = (long)((CLRUN_M)d * (CLRUN_M)scale);
    if (k >= (long)nbins) k = (long)nbins - 1;
    if (k > 0 && v < edges[k]) k--;
    if (k < (long)nbins - 1 && v >= edges[k + 1]) k++;
    bin[i] = (uint)k;
}
#endif
