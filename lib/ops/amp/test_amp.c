/* test_amp.c — dynamic loss scaling: unscale against a host reference bit for bit (f32, f16, bf16
 * gradients, many buffers per call, infinities and NaNs anywhere), the found-inf flag, and replays
 * of clean and overflowing steps compared with GradScaler's algorithm written out here. */
#include "helpers.h"

#include <float.h>
#include <math.h>

/* GradScaler's update, as torch/amp (_amp_update_scale_) does it */
struct ref {
    float scale;
    int tracker;
};
static void ref_update(struct ref *r, int found, double growth, double backoff, int interval)
{
    if (found) {
        r->scale = (float)(r->scale * backoff);
        r->tracker = 0;
        return;
    }
    int successful = r->tracker + 1;
    if (successful == interval) {
        float grown = (float)(r->scale * growth);
        if (isfinite(grown)) r->scale = grown;
        r->tracker = 0;
    } else {
        r->tracker = successful;
    }
}

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* Gradients of every type in 11 buffers (two launches), some empty, at offsets; a few planted
 * non-finite values when `plant`; unscale and compare every element and the flag. */
static void check_unscale(clrun_ctx *ctx, clrun_scaler *sc, uint64_t *s, int plant, int *found_out)
{
    enum { NB = 11 };
    clrun_grad g[NB];
    void *host[NB];
    int want_found = 0;
    for (int b = 0; b < NB; b++) {
        g[b].type = (clrun_dtype)(b % 3);
        g[b].n = b == 4 ? 0 : 1 + rng_next(s) % 3000;
        g[b].off = rng_next(s) % 5;
        size_t es = g[b].type == CLRUN_F32 ? 4 : 2, total = g[b].off + g[b].n + 3;
        host[b] = malloc(total * es);
        for (size_t i = 0; i < total; i++) {
            float v = rng_float(s) * ldexpf(1.0f, (int)(rng_next(s) % 40) - 20);
            if (plant && b == (int)(rng_next(s) % NB) && rng_next(s) % 500 == 0) v = (rng_next(s) & 1) ? INFINITY : NAN;
            if (i >= g[b].off && i < g[b].off + g[b].n && !isfinite(v)) want_found = 1;
            if (es == 4) ((float *)host[b])[i] = v;
            else ((uint16_t *)host[b])[i] = g[b].type == CLRUN_F16 ? clrun_f32_to_f16(v) : clrun_f32_to_bf16(v);
        }
        /* f16 overflows past 65504: such values are non-finite as stored */
        for (size_t i = g[b].off; es == 2 && i < g[b].off + g[b].n; i++) {
            uint16_t h = ((uint16_t *)host[b])[i];
            float v = g[b].type == CLRUN_F16 ? clrun_f16_to_f32(h) : clrun_bf16_to_f32(h);
            if (!isfinite(v)) want_found = 1;
        }
        CHECK_OK(ctx, clrun_buf_new(ctx, total * es, 0, &g[b].buf));
        CHECK_OK(ctx, clrun_upload(g[b].buf, 0, host[b], total * es));
    }
    CHECK_OK(ctx, clrun_scaler_unscale(ctx, sc, g, NB));
    const float inv = (float)(1.0 / (double)sc->scale);
    for (int b = 0; b < NB; b++) {
        size_t es = g[b].type == CLRUN_F32 ? 4 : 2, total = g[b].off + g[b].n + 3;
        unsigned char *got = malloc(total * es);
        CHECK_OK(ctx, clrun_download(g[b].buf, 0, got, total * es));
        for (size_t i = 0; i < total; i++) {
            int in = i >= g[b].off && i < g[b].off + g[b].n;
            if (es == 4) {
                float x = ((float *)host[b])[i], want = in ? x * inv : x, y = ((float *)got)[i];
                if (bits(y) != bits(want) && !(isnan(y) && isnan(want)))
                    fail_msg("f32 gradient %d element %zu: %a * %a gave %a, want %a", b, i, x, inv, y, want);
            } else {
                uint16_t h = ((uint16_t *)host[b])[i], y = ((uint16_t *)got)[i];
                int f16 = g[b].type == CLRUN_F16;
                float x = f16 ? clrun_f16_to_f32(h) : clrun_bf16_to_f32(h);
                uint16_t want = in ? (f16 ? clrun_f32_to_f16(x * inv) : clrun_f32_to_bf16(x * inv)) : h;
                int nan_y = f16 ? isnan(clrun_f16_to_f32(y)) : isnan(clrun_bf16_to_f32(y));
                if (y != want && !(nan_y && isnan(x)))
                    fail_msg("%s gradient %d element %zu: %a * %a gave 0x%04x, want 0x%04x", f16 ? "f16" : "bf16", b, i, x, inv, y, want);
            }
        }
        free(got);
        free(host[b]);
        clrun_buf_free(g[b].buf);
    }
    *found_out = want_found;
}

static void unscale_matches_reference(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    clrun_scaler sc;
    clrun_scaler_init(&sc);
    assert_true(sc.scale == 65536.0f && sc.growth_factor == 2.0 && sc.backoff_factor == 0.5 && sc.growth_interval == 2000 &&
                sc.growth_tracker == 0);
    const float scales[] = {65536.0f, 3.0f, 1e-30f, 7.0e37f}; /* 1/3 and 1/7e37 are inexact: the reciprocal's rounding shows */
    for (size_t i = 0; i < sizeof scales / sizeof *scales; i++)
        for (int plant = 0; plant < 2; plant++) {
            sc.scale = scales[i];
            int want, found = -1;
            check_unscale(ctx, &sc, &s, plant, &want);
            float before = sc.scale;
            CHECK_OK(ctx, clrun_scaler_update(ctx, &sc, &found));
            assert_int_equal(found, want);
            assert_true(want ? sc.scale == (float)(before * 0.5) : sc.scale == before);
        }
    /* no unscale since the last update: a clean step */
    int found = -1;
    CHECK_OK(ctx, clrun_scaler_update(ctx, &sc, &found));
    assert_int_equal(found, 0);
    clrun_scaler_free(&sc);
    clrun_scaler_free(&sc); /* twice is harmless */
}

/* Replays: runs of clean and overflowing steps through the device, scale and tracker after each
 * step equal to the reference's; factors that are not powers of two; growth past FLT_MAX refused. */
static void replay_sequences(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    const struct {
        float scale;
        double growth, backoff;
        int interval, steps;
    } cases[] = {{65536.0f, 2.0, 0.5, 3, 60}, {65536.0f, 2.0, 0.5, 1, 20}, {1024.0f, 1.7, 0.3, 4, 60}, {2.5e38f, 2.0, 0.5, 2, 12}};
    float data[64];
    clrun_buf *buf;
    CHECK_OK(ctx, clrun_buf_new(ctx, sizeof data, 0, &buf));
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        clrun_scaler sc;
        clrun_scaler_init(&sc);
        sc.scale = cases[c].scale, sc.growth_factor = cases[c].growth, sc.backoff_factor = cases[c].backoff;
        sc.growth_interval = cases[c].interval;
        struct ref r = {sc.scale, 0};
        for (int step = 0; step < cases[c].steps; step++) {
            int overflow = c == 3 ? 0 : rng_next(&s) % 4 == 0;
            for (int i = 0; i < 64; i++) data[i] = rng_float(&s) * 100;
            if (overflow) data[rng_next(&s) % 64] = (rng_next(&s) & 1) ? -INFINITY : NAN;
            CHECK_OK(ctx, clrun_upload(buf, 0, data, sizeof data));
            clrun_grad g = {buf, 0, 64, CLRUN_F32};
            int found = -1;
            CHECK_OK(ctx, clrun_scaler_unscale(ctx, &sc, &g, 1));
            CHECK_OK(ctx, clrun_scaler_update(ctx, &sc, &found));
            ref_update(&r, overflow, cases[c].growth, cases[c].backoff, cases[c].interval);
            assert_int_equal(found, overflow);
            if (bits(sc.scale) != bits(r.scale) || sc.growth_tracker != r.tracker)
                fail_msg("case %zu step %d: scale %a tracker %d, GradScaler has %a and %d", c, step, sc.scale, sc.growth_tracker, r.scale,
                         r.tracker);
        }
        if (c == 3) assert_true(sc.scale == 2.5e38f); /* growing would overflow f32: never grew */
        clrun_scaler_free(&sc);
    }
    /* the default interval: 2000 clean steps grow the scale once (host only: no unscale) */
    clrun_scaler sc;
    clrun_scaler_init(&sc);
    for (int i = 0; i < 1999; i++) CHECK_OK(ctx, clrun_scaler_update(ctx, &sc, NULL));
    assert_true(sc.scale == 65536.0f && sc.growth_tracker == 1999);
    CHECK_OK(ctx, clrun_scaler_update(ctx, &sc, NULL));
    assert_true(sc.scale == 131072.0f && sc.growth_tracker == 0);
    clrun_buf_free(buf);
}

static void refusals(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_scaler sc;
    clrun_scaler_init(&sc);
    clrun_buf *buf;
    CHECK_OK(ctx, clrun_buf_new(ctx, 64, 0, &buf));
    clrun_grad g = {buf, 0, 17, CLRUN_F32};
    CHECK_FAIL(ctx, clrun_scaler_unscale(ctx, &sc, &g, 1), CLRUN_INVALID_ARG, "runs past its buffer");
    g.n = 32, g.type = CLRUN_F16;
    CHECK_OK(ctx, clrun_scaler_unscale(ctx, &sc, &g, 1)); /* 32 f16 fit */
    g.type = (clrun_dtype)9;
    CHECK_FAIL(ctx, clrun_scaler_unscale(ctx, &sc, &g, 1), CLRUN_INVALID_ARG, "unknown type");
    CHECK_FAIL(ctx, clrun_scaler_unscale(ctx, &sc, NULL, 2), CLRUN_INVALID_ARG, "NULL");
    sc.scale = INFINITY;
    CHECK_FAIL(ctx, clrun_scaler_unscale(ctx, &sc, &g, 1), CLRUN_INVALID_ARG, "positive finite");
    sc.scale = 0;
    CHECK_FAIL(ctx, clrun_scaler_unscale(ctx, &sc, &g, 1), CLRUN_INVALID_ARG, "positive finite");
    sc.scale = 1;
    sc.growth_factor = 1.0;
    CHECK_FAIL(ctx, clrun_scaler_update(ctx, &sc, NULL), CLRUN_INVALID_ARG, "growth factor");
    sc.growth_factor = 2, sc.backoff_factor = 1.0;
    CHECK_FAIL(ctx, clrun_scaler_update(ctx, &sc, NULL), CLRUN_INVALID_ARG, "backoff");
    sc.backoff_factor = 0.5, sc.growth_interval = 0;
    CHECK_FAIL(ctx, clrun_scaler_update(ctx, &sc, NULL), CLRUN_INVALID_ARG, "interval");
    CHECK_FAIL(ctx, clrun_scaler_update(ctx, NULL, NULL), CLRUN_INVALID_ARG, "NULL");
    clrun_scaler_free(&sc);
    clrun_buf_free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(unscale_matches_reference), cmocka_unit_test(replay_sequences),
                                       cmocka_unit_test(refusals)};
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
