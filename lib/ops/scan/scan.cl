/* scan.cl — prefix scans (sum, max, min) along rows, reduce-then-scan: no work-group ever waits on
 * another, so no device needs forward progress between work-groups.
 *
 * Built per element type and op: -DCLRUN_T (the OpenCL C type), -DCLRUN_OP (0 sum, 1 max, 2 min),
 * -DCLRUN_FLOAT (1 for float and double), -DCLRUN_WG (the work-group size, a power of two),
 * -DCLRUN_ITEMS (elements per work-item: 4 on GPUs, more on CPUs, where barriers cost). A tile is
 * CLRUN_WG · CLRUN_ITEMS elements of one row: work-item l scans its run, the work-group scans the items' totals
 * in local memory (Hillis–Steele), and the carry of the tiles before it is added. Sums of integers
 * wrap (computed unsigned); max and min propagate NaN. */
#if CLRUN_FLOAT && defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#define T CLRUN_T
#define ITEMS CLRUN_ITEMS
#define TILE (CLRUN_WG * ITEMS)

#if CLRUN_OP == 0
#if CLRUN_FLOAT
#define COMBINE(a, b) ((a) + (b))
#else /* wrapping, as NumPy's */
#define COMBINE(a, b) ((T)((CLRUN_U)(a) + (CLRUN_U)(b)))
#endif
#define IDENTITY ((T)0)
#elif CLRUN_FLOAT
#define COMBINE(a, b) (isnan(a) ? (a) : isnan(b) ? (b) : CLRUN_OP == 1 ? ((a) >= (b) ? (a) : (b)) : ((a) <= (b) ? (a) : (b)))
#define IDENTITY (CLRUN_OP == 1 ? (T)(-INFINITY) : (T)(INFINITY))
#else
#define COMBINE(a, b) (CLRUN_OP == 1 ? ((a) >= (b) ? (a) : (b)) : ((a) <= (b) ? (a) : (b)))
#define IDENTITY (CLRUN_OP == 1 ? CLRUN_MIN : CLRUN_MAX)
#endif

/* the work-group's inclusive scan of v (one value per work-item), through sh */
static T group_scan(T v, __local T *sh)
{
    const uint l = get_local_id(0);
    sh[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < CLRUN_WG; d <<= 1) {
        const T o = l >= d ? sh[l - d] : IDENTITY;
        barrier(CLK_LOCAL_MEM_FENCE);
        v = l >= d ? COMBINE(o, v) : v;
        sh[l] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return v;
}

/* the total of each tile: part[row · tiles + tile] */
__kernel __attribute__((reqd_work_group_size(CLRUN_WG, 1, 1))) void clrun_scan_reduce(__global const T *in, ulong in_off, ulong n,
                                                                                         ulong tiles, __global T *part)
{
    __local T sh[CLRUN_WG];
    const ulong tile = get_group_id(0), row = get_group_id(1);
    const ulong base = tile * TILE + (ulong)get_local_id(0) * ITEMS;
    __global const T *x = in + in_off + row * n;
    T acc = IDENTITY;
    for (uint j = 0; j < ITEMS; j++)
        if (base + j < n) acc = COMBINE(acc, x[base + j]);
    acc = group_scan(acc, sh);
    if (get_local_id(0) == CLRUN_WG - 1) part[row * tiles + tile] = acc;
}

/* each tile scanned, the carry of the tiles before it (carry: an exclusive scan of the tiles'
 * totals, NULL when a row is one tile) combined in front; exclusive 1: element i gets the scan of
 * the elements before it */
__kernel __attribute__((reqd_work_group_size(CLRUN_WG, 1, 1))) void clrun_scan_tiles(__global const T *in, ulong in_off, __global T *out,
                                                                                        ulong out_off, ulong n, ulong tiles,
                                                                                        __global const T *carry, uint exclusive)
{
    __local T sh[CLRUN_WG];
    const ulong tile = get_group_id(0), row = get_group_id(1);
    const uint l = get_local_id(0);
    const ulong base = tile * TILE + (ulong)l * ITEMS;
    __global const T *x = in + in_off + row * n;
    __global T *y = out + out_off + row * n;
    T v[ITEMS];
    T acc = IDENTITY;
    for (uint j = 0; j < ITEMS; j++) {
        v[j] = base + j < n ? x[base + j] : IDENTITY;
        acc = COMBINE(acc, v[j]);
    }
    const T incl = group_scan(acc, sh);
    T run = l ? sh[l - 1] : IDENTITY; /* the items before this one, in the tile */
    if (carry) run = COMBINE(carry[row * tiles + tile], run);
    for (uint j = 0; j < ITEMS; j++) {
        const T next = COMBINE(run, v[j]);
        if (base + j < n) y[base + j] = exclusive ? run : next;
        run = next;
    }
    (void)incl;
}
