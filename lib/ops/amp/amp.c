/* amp.c — dynamic loss scaling with PyTorch GradScaler's semantics: unscale (one launch per 8
 * gradient buffers, lib/ops/amp/amp.cl) and the scale's update on the host. */
#include "opkit.h"

#include <math.h>

#define SLOTS 8

void clrun_scaler_init(clrun_scaler *s)
{
    if (s) *s = (clrun_scaler){65536.0f, 2.0, 0.5, 2000, 0, NULL};
}

void clrun_scaler_free(clrun_scaler *s)
{
    if (!s) return;
    clrun_buf_free(s->found_inf);
    s->found_inf = NULL;
}

/* the scaler's flag buffer, made (and zeroed) on first use */
static clrun_status flag(clrun_ctx *ctx, clrun_scaler *s)
{
    clrun_status st;
    const int zero = 0;
    if (s->found_inf && clrun_buf_context(s->found_inf) != ctx)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "scaler: its found-inf flag belongs to another context; clrun_scaler_free it first");
    if (!s->found_inf && ((st = clrun_buf_new(ctx, sizeof(int), 0, &s->found_inf)) ||
                          (st = clrun_buf_fill(s->found_inf, &zero, sizeof zero, 0, sizeof zero))))
        return st;
    return CLRUN_OK;
}

clrun_status clrun_scaler_unscale(clrun_ctx *ctx, clrun_scaler *s, const clrun_grad *grads, size_t count)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_scaler_unscale: ctx is NULL");
    CLRUN__SERIAL(ctx);
    clrun_status st;
    if (!ctx || !s) return clrun__fail(ctx, CLRUN_INVALID_ARG, "scaler: NULL %s", ctx ? "scaler" : "context");
    if (!(s->scale > 0.0f) || !isfinite(s->scale))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "scaler: scale %g is not a positive finite number", (double)s->scale);
    if (count && !grads) return clrun__fail(ctx, CLRUN_INVALID_ARG, "scaler: %zu gradients but the array is NULL", count);
    for (size_t i = 0; i < count; i++) {
        const clrun_grad *g = &grads[i];
        if (clrun__float_code(g->type) < 0)
            return clrun__fail(ctx, CLRUN_INVALID_ARG, "scaler: gradient %zu has unknown type %d", i, (int)g->type);
        if (g->n == 0) continue;
        if (!g->buf) return clrun__fail(ctx, CLRUN_INVALID_ARG, "scaler: gradient %zu has no buffer", i);
        const size_t es = clrun_dtype_size(g->type);
        if (g->off > SIZE_MAX / es - g->n || (g->off + g->n) * es > clrun_buf_size(g->buf))
            return clrun__fail(ctx, CLRUN_INVALID_ARG,
                               "scaler: gradient %zu (%zu elements from element %zu) runs past its buffer of %zu bytes", i, g->n, g->off,
                               clrun_buf_size(g->buf));
    }
    if ((st = flag(ctx, s))) return st;                /* cleared by update: it collects every unscale since */
    const float inv = (float)(1.0 / (double)s->scale); /* as PyTorch: the reciprocal in double, then f32 */
    clrun_kernel *k;
    if ((st = clrun__lib_kernel(ctx, "amp", NULL, "clrun_unscale", &k))) return st;
    for (size_t first = 0; first < count; first += SLOTS) {
        /* (inv_scale, found_inf, types, then per slot: buffer, offset, end) */
        clrun__arg args[3 + 3 * SLOTS];
        size_t total = 0;
        cl_uint types = 0;
        for (unsigned slot = 0; slot < SLOTS; slot++) {
            const clrun_grad *g = first + slot < count ? &grads[first + slot] : NULL;
            if (g && g->n) {
                if (total > SIZE_MAX - g->n) return clrun__fail(ctx, CLRUN_INVALID_ARG, "scaler: the gradients' sizes overflow");
                total += g->n;
                types |= (cl_uint)clrun__float_code(g->type) << (2 * slot);
            }
            /* an empty or unused slot ends where the previous one did and is never reached */
            args[3 + 3 * slot] = ARG_BUF(g && g->n ? g->buf : s->found_inf);
            args[4 + 3 * slot] = ARG_U64(g && g->n ? g->off : 0);
            args[5 + 3 * slot] = ARG_U64(total);
        }
        args[0] = ARG_F32(inv), args[1] = ARG_BUF(s->found_inf), args[2] = ARG_U32(types);
        if (total && (st = clrun__launch(k, CLRUN__GRID1(total), args, sizeof args / sizeof *args))) return st;
    }
    return CLRUN_OK;
}

clrun_status clrun_scaler_update(clrun_ctx *ctx, clrun_scaler *s, int *found_inf)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_scaler_update: ctx is NULL");
    CLRUN__SERIAL(ctx);
    clrun_status st;
    if (!ctx || !s) return clrun__fail(ctx, CLRUN_INVALID_ARG, "scaler: NULL %s", ctx ? "scaler" : "context");
    if (!(s->growth_factor > 1.0) || !isfinite(s->growth_factor) || !(s->backoff_factor > 0.0) || !(s->backoff_factor < 1.0) ||
        s->growth_interval < 1)
        return clrun__fail(ctx, CLRUN_INVALID_ARG,
                           "scaler: growth factor %g must be > 1, backoff factor %g in (0, 1) and growth interval %d at least 1",
                           s->growth_factor, s->backoff_factor, s->growth_interval);
    int found = 0;
    if (s->found_inf) {
        const int zero = 0;
        if ((st = flag(ctx, s)) || (st = clrun_download(s->found_inf, 0, &found, sizeof found)) ||
            (st = clrun_buf_fill(s->found_inf, &zero, sizeof zero, 0, sizeof zero))) /* the next update without an unscale is clean */
            return st;
    }
    if (found) {
        s->scale = (float)((double)s->scale * s->backoff_factor);
        s->growth_tracker = 0;
    } else if (s->growth_tracker + 1 == s->growth_interval) { /* ==, as PyTorch */
        const float grown = (float)((double)s->scale * s->growth_factor);
        if (isfinite(grown)) s->scale = grown;
        s->growth_tracker = 0;
    } else {
        s->growth_tracker++;
    }
    if (found_inf) *found_inf = found != 0;
    return CLRUN_OK;
}
