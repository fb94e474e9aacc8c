/* helpers.h — shared by the cmocka tests. */
#ifndef CLRUN_TEST_HELPERS_H
#define CLRUN_TEST_HELPERS_H

#include <clrun.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

/* Assert a clrun call succeeded; on failure print the context's last error. */
#define CHECK_OK(ctx, call)                                                                                 \
    do {                                                                                                    \
        clrun_status st_ = (call);                                                                          \
        if (st_ != CLRUN_OK) fail_msg("%s -> %s: %s", #call, clrun_status_str(st_), clrun_last_error(ctx)); \
    } while (0)

/* Assert a clrun call failed with `want`, and its text contains `needle`. */
#define CHECK_FAIL(ctx, call, want, needle)                                                                                             \
    do {                                                                                                                                \
        clrun_status st_ = (call);                                                                                                      \
        if (st_ != (want))                                                                                                              \
            fail_msg("%s -> %s, expected %s (%s)", #call, clrun_status_str(st_), clrun_status_str(want), clrun_last_error(ctx));        \
        if (!strstr(clrun_last_error(ctx), (needle))) fail_msg("%s: text \"%s\" lacks \"%s\"", #call, clrun_last_error(ctx), (needle)); \
    } while (0)

/* The device the library tests run on: $CLRUN_TEST_DEVICE, else "cpu" (PoCL in CI). */
static inline const char *test_device(void)
{
    const char *d = getenv("CLRUN_TEST_DEVICE");
    return d && *d ? d : "cpu";
}

/* Group setup/teardown for tests that need one context on the test device: *state is the context. */
static inline int ctx_setup(void **state)
{
    clrun_ctx *ctx = NULL;
    if (clrun_open(&ctx, test_device()) != CLRUN_OK) {
        fprintf(stderr, "%s\n", clrun_last_error(NULL));
        return -1;
    }
    *state = ctx;
    return 0;
}

static inline int ctx_teardown(void **state)
{
    clrun_close(*state);
    return 0;
}

/* Fresh random data per run: seeded from the clock unless CLRUN_TEST_SEED is set; printed. */
static inline uint64_t test_seed(void)
{
    static uint64_t seed;
    if (!seed) {
        const char *s = getenv("CLRUN_TEST_SEED");
        seed = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
        if (!seed) seed = 1;
        fprintf(stderr, "test seed: CLRUN_TEST_SEED=%llu\n", (unsigned long long)seed);
    }
    return seed;
}

static inline uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static inline float rng_float(uint64_t *s) /* uniform in [-1, 1) */
{
    return (float)((rng_next(s) >> 40) * (1.0 / 16777216.0) * 2.0 - 1.0);
}

#endif
