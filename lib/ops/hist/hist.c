/* hist.c — clrun_bincount, clrun_histogram and clrun_histogram_edges (hist.cl): NumPy's bincount
 * and its histogram with equal-width bins. */
#include "opkit.h"

#include <math.h>
#include <stdio.h>

/* The OpenCL C type of t, and whether it is a signed integer (1), unsigned (0), float (2); NULL for
 * types these calls do not take. */
static const char *cl_type(clrun_dtype t, int *kind)
{
    switch (t) {
    case CLRUN_I8: return *kind = 1, "char";
    case CLRUN_I16: return *kind = 1, "short";
    case CLRUN_I32: return *kind = 1, "int";
    case CLRUN_I64: return *kind = 1, "long";
    case CLRUN_U8:
    case CLRUN_BOOL: return *kind = 0, "uchar";
    case CLRUN_U16: return *kind = 0, "ushort";
    case CLRUN_U32: return *kind = 0, "uint";
    case CLRUN_U64: return *kind = 0, "ulong";
    case CLRUN_F32: return *kind = 2, "float";
    case CLRUN_F64: return *kind = 2, "double";
    default: return NULL;
    }
}

/* Count keys (type t, unsigned 32-bit keys when t is CLRUN_U32 from hist_bin) into cnt (nbins + 1),
 * then either widen the counts into out (w NULL) or sum the weights per bin into out. */
static clrun_status count_and_sum(clrun_ctx *ctx, const char *what, clrun_dtype t, clrun_buf *x, size_t x_off, size_t n, clrun_buf *w,
                                  size_t w_off, clrun_dtype wt, size_t nbins, size_t block, clrun_dtype ot, clrun_buf *out, size_t out_off)
{
    int kind = 0, wkind = 0;
    const char *tn = cl_type(t, &kind), *wn = w ? cl_type(wt, &wkind) : NULL, *on = w ? cl_type(ot, &wkind) : NULL;
    const int fp64 = clrun_ctx_device(ctx)->fp64;
    char opts[200];
    snprintf(opts, sizeof opts, "-DCLRUN_T=%s -DCLRUN_SIGNED=%d%s%s%s%s%s", tn, kind == 1, fp64 ? " -DCLRUN_FP64" : "",
             w ? " -DCLRUN_W=" : "", w ? wn : "", w ? " -DCLRUN_O=" : "", w ? on : "");
    clrun_kernel *kc, *k2, *kz;
    clrun_buf *cnt = NULL, *perm = NULL;
    clrun_status st;
    const size_t wg = 64, groups = (n + wg * 64 - 1) / (wg * 64) < 256 ? (n + wg * 64 - 1) / (wg * 64) : 256;
    if ((st = clrun_buf_new(ctx, (nbins + 1) * 4, 0, &cnt)) || (st = clrun__lib_kernel(ctx, "hist", opts, "clrun_hist_zero", &kz)) ||
        (st = CLRUN__RUN(kz, CLRUN__GRID1(nbins + 1), ARG_BUF(cnt), ARG_U64(nbins + 1))) ||
        (st = clrun__lib_kernel(ctx, "hist", opts, "clrun_bincount_count", &kc)))
        goto done;
    if (n) {
        const clrun__grid g = {1, {(groups ? groups : 1) * wg, 1, 1}, {wg, 1, 1}};
        if ((st = CLRUN__RUN(kc, g, ARG_BUF(x), ARG_U64(x_off), ARG_U64(n), ARG_U64(nbins), ARG_BUF(cnt)))) goto done;
    }
    if (!w) {
        if (!(st = clrun__lib_kernel(ctx, "hist", opts, "clrun_bincount_widen", &k2)))
            st = CLRUN__RUN(k2, CLRUN__GRID1(nbins), ARG_BUF(cnt), ARG_U64(nbins), ARG_BUF(out), ARG_U64(out_off));
        goto done;
    }
    /* weighted: each bin's elements in their order, from a stable sort of the keys */
    if ((st = clrun_scan(ctx, CLRUN_SCAN_SUM, 0, CLRUN_U32, cnt, 0, cnt, 0, 1, nbins + 1)) ||
        (st = clrun_buf_new(ctx, (n ? n : 1) * 8, 0, &perm)) || (n && (st = clrun_argsort(ctx, t, 0, x, x_off, perm, 0, 1, n))) ||
        (st = clrun__lib_kernel(ctx, "hist", opts, "clrun_bincount_sum", &k2)))
        goto done;
    st = CLRUN__RUN(k2, CLRUN__GRID1(nbins), ARG_BUF(cnt), ARG_BUF(perm), ARG_BUF(w), ARG_U64(w_off), ARG_U64(nbins), ARG_U64(block),
                    ARG_BUF(out), ARG_U64(out_off));
done:
    clrun_buf_free(cnt), clrun_buf_free(perm);
    (void)what;
    return st;
}

/* The checks both calls share. */
static clrun_status common(clrun_ctx *ctx, const char *what, clrun_dtype t, int want_float, clrun_buf *x, size_t x_off, size_t n,
                           clrun_buf *w, size_t w_off, clrun_dtype wt, size_t nbins)
{
    int kind = -1, wkind;
    clrun_status st;
    if (!cl_type(t, &kind) || (kind == 2 && !want_float))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: %s of type %s: %s", what, want_float ? "elements" : "keys",
                           (unsigned)t < CLRUN_DTYPE_COUNT ? clrun_dtype_name(t) : "unknown",
                           want_float ? "float32, float64 or an integer type" : "an integer type or bool");
    if ((st = clrun__span(ctx, what, "x", x, x_off, n, clrun_dtype_size(t)))) return st;
    if (w) {
        if (!cl_type(wt, &wkind))
            return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: weights of type %s: float32, float64, an integer type or bool", what,
                               (unsigned)wt < CLRUN_DTYPE_COUNT ? clrun_dtype_name(wt) : "unknown");
        if ((st = clrun__span(ctx, what, "weights", w, w_off, n, clrun_dtype_size(wt)))) return st;
    }
    if (n >= ((size_t)1 << 32)) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: %zu elements: fewer than 2^32", what, n);
    if (nbins == 0 || nbins >= ((size_t)1 << 31)) return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: %zu bins: 1 to 2^31 - 1", what, nbins);
    if (!clrun_ctx_device(ctx)->fp64 && (w || (want_float && t != CLRUN_F32)))
        return clrun__fail(ctx, CLRUN_UNSUPPORTED, "%s: %s on %s, which has no fp64", what,
                           w ? "weighted sums (in float64)" : "float64 bins (those of float64 and integer elements)",
                           clrun_ctx_device(ctx)->name);
    return CLRUN_OK;
}

clrun_status clrun_bincount(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t x_off, size_t n, clrun_buf *w, size_t w_off, clrun_dtype wt,
                            size_t nbins, clrun_buf *out, size_t out_off)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_bincount: ctx is NULL");
    CLRUN__SERIAL(ctx);
    clrun_status st;
    if ((st = common(ctx, "clrun_bincount", t, 0, x, x_off, n, w, w_off, wt, nbins)) ||
        (st = clrun__span(ctx, "clrun_bincount", "out", out, out_off, nbins, 8)))
        return st;
    return count_and_sum(ctx, "clrun_bincount", t, x, x_off, n, w, w_off, wt, nbins, 0, CLRUN_F64, out, out_off);
}

void clrun_histogram_edges(double lo, double hi, size_t nbins, int f64, void *edges)
{
    if (!edges || nbins == 0) return;
    const double delta = hi - lo, step = delta / (double)nbins; /* np.linspace(lo, hi, nbins + 1) in float64 */
    for (size_t i = 0; i <= nbins; i++) {
        double v = step == 0 ? (double)i / (double)nbins * delta + lo : (double)i * step + lo;
        if (i == nbins) v = hi;
        if (f64) ((double *)edges)[i] = v;
        else ((float *)edges)[i] = (float)v;
    }
}

clrun_status clrun_histogram(clrun_ctx *ctx, clrun_dtype t, clrun_buf *x, size_t x_off, size_t n, clrun_buf *w, size_t w_off,
                             clrun_dtype wt, size_t nbins, clrun_buf *edges, double scale, unsigned flags, clrun_buf *out, size_t out_off)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_histogram: ctx is NULL");
    CLRUN__SERIAL(ctx);
    clrun_status st;
    int kind;
    if ((st = common(ctx, "clrun_histogram", t, 1, x, x_off, n, w, w_off, wt, nbins))) return st;
    cl_type(t, &kind);
    const int f64 = t != CLRUN_F32; /* the bin type: float32 for float32 elements, float64 otherwise */
    if (w && (wt == CLRUN_F16 || wt == CLRUN_BF16))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_histogram: weights of type %s (sums are kept in the weights' type)",
                           clrun_dtype_name(wt));
    if ((st = clrun__span(ctx, "clrun_histogram", "edges", edges, 0, nbins + 1, f64 ? 8 : 4)) ||
        (st = clrun__span(ctx, "clrun_histogram", "out", out, out_off, nbins, w ? clrun_dtype_size(wt) : 8)))
        return st;
    if (!(scale > 0) || !isfinite(scale))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_histogram: scale %g: positive and finite (nbins / (hi - lo))", scale);
    int tk;
    char opts[160];
    const int fp64 = clrun_ctx_device(ctx)->fp64;
    if (!fp64 && (flags & CLRUN_HIST_SCALE_F64))
        return clrun__fail(ctx, CLRUN_UNSUPPORTED, "clrun_histogram: CLRUN_HIST_SCALE_F64 on %s, which has no fp64",
                           clrun_ctx_device(ctx)->name);
    snprintf(opts, sizeof opts, "-DCLRUN_T=%s -DCLRUN_SIGNED=0%s -DCLRUN_F=%s -DCLRUN_M=%s", cl_type(t, &tk), fp64 ? " -DCLRUN_FP64" : "",
             f64 ? "double" : "float", f64 || (flags & CLRUN_HIST_SCALE_F64) ? "double" : "float");
    clrun_kernel *k;
    clrun_buf *bin = NULL;
    if ((st = clrun_buf_new(ctx, (n ? n : 1) * 4, 0, &bin))) return st;
    if (n && (st = clrun__lib_kernel(ctx, "hist", opts, "clrun_hist_bin", &k)) == CLRUN_OK)
        st = CLRUN__RUN(k, CLRUN__GRID1(n), ARG_BUF(x), ARG_U64(x_off), ARG_U64(n), ARG_U64(nbins), ARG_BUF(edges),
                        fp64 ? ARG_F64(scale) : ARG_F32(scale), ARG_BUF(bin));
    if (!st) st = count_and_sum(ctx, "clrun_histogram", CLRUN_U32, bin, 0, n, w, w_off, wt, nbins, 65536, wt, out, out_off);
    clrun_buf_free(bin);
    return st;
}
