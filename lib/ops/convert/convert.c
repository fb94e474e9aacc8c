/* convert.c — clrun_cast: f32 <-> f16 and f32 <-> bf16 on the device (lib/ops/convert/convert.cl). */
#include "opkit.h"

clrun_status clrun_cast(clrun_ctx *ctx, clrun_buf *src, size_t src_off, clrun_dtype from, clrun_buf *dst, size_t dst_off, clrun_dtype to,
                        size_t n)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_cast: ctx is NULL");
    CLRUN__SERIAL(ctx);
    const char *kname = NULL;
    if (clrun__float_code(from) < 0 || clrun__float_code(to) < 0)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "cast: unknown type (%d to %d); casts take f32, f16 and bf16", (int)from, (int)to);
    if (from == CLRUN_F32 && to == CLRUN_F16) kname = "clrun_f32_to_f16";
    else if (from == CLRUN_F16 && to == CLRUN_F32) kname = "clrun_f16_to_f32";
    else if (from == CLRUN_F32 && to == CLRUN_BF16) kname = "clrun_f32_to_bf16";
    else if (from == CLRUN_BF16 && to == CLRUN_F32) kname = "clrun_bf16_to_f32";
    else
        return clrun__fail(ctx, CLRUN_UNSUPPORTED, "cast: %s to %s is not a conversion clrun has (f32 <-> f16, f32 <-> bf16)",
                           clrun_dtype_name(from), clrun_dtype_name(to));
    if (n == 0) return CLRUN_OK;
    if (!src || !dst) return clrun__fail(ctx, CLRUN_INVALID_ARG, "cast: NULL buffer");
    const size_t ss = clrun_dtype_size(from), ds = clrun_dtype_size(to);
    if (src_off > SIZE_MAX / ss - n || (src_off + n) * ss > clrun_buf_size(src))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "cast: %zu %s elements from element %zu run past the source buffer of %zu bytes", n,
                           clrun_dtype_name(from), src_off, clrun_buf_size(src));
    if (dst_off > SIZE_MAX / ds - n || (dst_off + n) * ds > clrun_buf_size(dst))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "cast: %zu %s elements from element %zu run past the destination buffer of %zu bytes", n,
                           clrun_dtype_name(to), dst_off, clrun_buf_size(dst));
    clrun_status st;
    clrun_kernel *k;
    size_t g = n;
    char name4[40];
    if (src_off % 4 == 0 && dst_off % 4 == 0) { /* four per work-item, in aligned vectors */
        snprintf(name4, sizeof name4, "%s_x4", kname);
        kname = name4, g = (n + 3) / 4;
    }
    if ((st = clrun__lib_kernel(ctx, "convert", NULL, kname, &k))) return st;
    return CLRUN__RUN(k, CLRUN__GRID1(g), ARG_BUF(src), ARG_U64(src_off), ARG_BUF(dst), ARG_U64(dst_off), ARG_U64(n));
}
