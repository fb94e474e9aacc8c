/* amp.cl — loss scaling: check gradients for inf/NaN and multiply them by the inverse scale, up to
 * 8 buffers per launch. Slot k covers elements [end_{k-1}, end_k) of the launch's range; its
 * elements are at off_k.. in buffer g_k, of type (types >> 2k) & 3: 0 f32, 1 f16, 2 bf16. Values
 * are multiplied in f32 and rounded to nearest even on store, as PyTorch's unscale does; a
 * non-finite value sets *found (every writer stores 1, so no atomics are needed). */

#include "common.h"

static inline float load_elt(__global void *g, size_t j, uint t)
{
    if (t == 1) return vload_half(j, (__global half *)g);
    if (t == 2) return as_float((uint)((__global ushort *)g)[j] << 16);
    return ((__global float *)g)[j];
}

static inline void store_elt(__global void *g, size_t j, uint t, float v)
{
    if (t == 1) {
        vstore_half_rte(v, j, (__global half *)g);
    } else if (t == 2) {
        ((__global ushort *)g)[j] = clrun_bf16_rne(as_uint(v));
    } else {
        ((__global float *)g)[j] = v;
    }
}

#define SLOT_ARGS(k) __global void *g##k, const ulong off##k, const ulong end##k
#define SLOT(k)                                                                                                     \
    if (i < end##k) {                                                                                               \
        const uint t = (types >> (2 * k)) & 3u;                                                                     \
        const size_t j = off##k + (i - start);                                                                      \
        const float v = load_elt(g##k, j, t);                                                                       \
        if (!isfinite(v)) *found = 1;                                                                               \
        store_elt(g##k, j, t, v * inv_scale);                                                                       \
        return;                                                                                                     \
    }                                                                                                               \
    start = end##k;

__kernel void clrun_unscale(const float inv_scale, __global int *found, const uint types, SLOT_ARGS(0), SLOT_ARGS(1), SLOT_ARGS(2),
                            SLOT_ARGS(3), SLOT_ARGS(4), SLOT_ARGS(5), SLOT_ARGS(6), SLOT_ARGS(7))
{
    const size_t i = get_global_id(0);
    size_t start = 0;
    SLOT(0) SLOT(1) SLOT(2) SLOT(3) SLOT(4) SLOT(5) SLOT(6) SLOT(7)
}
