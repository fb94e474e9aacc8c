/* test_rand.c — clrun_rand against Random123's own philox4x32 run on the host (the same header the
 * kernels include): the known-answer vectors, the raw words for fresh seeds, subsequences and
 * offsets (unaligned included) on awkward sizes, streams continued across calls, every
 * distribution's values from its formula (bit for bit but the normal one), the statistics of large
 * samples (moments, chi-square, Kolmogorov–Smirnov), and the refusals. */
#include "helpers.h"

#include <Random123/philox.h>
#include <math.h>

static uint32_t word(uint64_t seed, uint64_t sub, uint64_t j)
{
    const uint64_t q = j / 4;
    philox4x32_ctr_t c = {{(uint32_t)q, (uint32_t)(q >> 32), (uint32_t)sub, (uint32_t)(sub >> 32)}};
    philox4x32_key_t k = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    philox4x32_ctr_t r = philox4x32(c, k);
    return r.v[j % 4];
}

static void *draw(clrun_ctx *ctx, clrun_rand_desc *d, size_t n, size_t es)
{
    clrun_buf *b;
    const size_t pad = n % 2 ? 3 : 4; /* out_off 4: the kernels' aligned 16-byte stores; 3: their element stores */
    CHECK_OK(ctx, clrun_buf_new(ctx, (n + 2 * pad) * es, 0, &b));
    unsigned char *h = malloc((n + 2 * pad) * es);
    memset(h, 0xA5, (n + 2 * pad) * es);
    CHECK_OK(ctx, clrun_upload(b, 0, h, (n + 2 * pad) * es));
    CHECK_OK(ctx, clrun_rand(ctx, d, b, pad, n));
    CHECK_OK(ctx, clrun_download(b, 0, h, (n + 2 * pad) * es));
    for (size_t i = 0; i < pad * es; i++) /* nothing outside [pad, pad + n) written */
        if (h[i] != 0xA5 || h[(n + pad) * es + i] != 0xA5) fail_msg("clrun_rand wrote outside its range (n = %zu)", n);
    clrun_buf_free(b);
    memmove(h, h + pad * es, n * es);
    return h;
}

static void known_answers(void **state)
{
    (void)state;
    /* Random123's kat_vectors for philox4x32 with 10 rounds */
    static const uint32_t in[3][6] = {{0, 0, 0, 0, 0, 0},
                                      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                                      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0}};
    static const uint32_t want[3][4] = {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
                                        {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
                                        {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}};
    clrun_ctx *ctx = *state;
    for (int v = 0; v < 3; v++) {
        philox4x32_ctr_t c = {{in[v][0], in[v][1], in[v][2], in[v][3]}};
        philox4x32_key_t k = {{in[v][4], in[v][5]}};
        philox4x32_ctr_t r = philox4x32(c, k);
        for (int j = 0; j < 4; j++) assert_int_equal(r.v[j], want[v][j]);
        /* the device: block q = ctr (0, 1), subsequence = ctr (2, 3), seed = key (a block past word
         * 2^64 cannot be reached by a word offset) */
        const uint64_t q = in[v][0] | (uint64_t)in[v][1] << 32;
        if (q > UINT64_MAX / 4 - 1) continue;
        clrun_rand_desc d;
        clrun_rand_desc_init(&d, in[v][4] | (uint64_t)in[v][5] << 32, CLRUN_RAND_BITS, CLRUN_U32);
        d.subsequence = in[v][2] | (uint64_t)in[v][3] << 32;
        d.offset = 4 * q;
        uint32_t *w = draw(ctx, &d, 4, 4);
        for (int j = 0; j < 4; j++) assert_int_equal(w[j], want[v][j]);
        free(w);
    }
}

static void raw_words_everywhere(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    const size_t sizes[] = {0, 1, 2, 3, 4, 5, 7, 63, 64, 65, 257, 4097, 100003};
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        const uint64_t seed = rng_next(&s), sub = z % 3 ? rng_next(&s) : 0, off = z % 2 ? rng_next(&s) % 1000003 : 4 * (z % 5);
        clrun_rand_desc d;
        clrun_rand_desc_init(&d, seed, CLRUN_RAND_BITS, CLRUN_U32);
        d.subsequence = sub, d.offset = off;
        uint32_t *w = draw(ctx, &d, sizes[z], 4);
        for (size_t i = 0; i < sizes[z]; i++)
            if (w[i] != word(seed, sub, off + i))
                fail_msg("seed %llu sub %llu offset %llu: word %zu differs", (unsigned long long)seed, (unsigned long long)sub,
                         (unsigned long long)off, i);
        assert_int_equal(d.offset, off + (sizes[z] + 3) / 4 * 4);
        free(w);
    }
    /* a stream continued over calls is the stream drawn at once */
    clrun_rand_desc a, b;
    clrun_rand_desc_init(&a, 99, CLRUN_RAND_BITS, CLRUN_U32);
    b = a;
    uint32_t *all = draw(ctx, &a, 40, 4), *p1 = draw(ctx, &b, 12, 4), *p2 = draw(ctx, &b, 28, 4);
    assert_memory_equal(all, p1, 12 * 4);
    assert_memory_equal(all + 12, p2, 28 * 4);
    assert_int_equal(a.offset, b.offset);
    free(all), free(p1), free(p2);
}

static void distributions_from_their_formulas(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    const uint64_t seed = rng_next(&s), off = rng_next(&s) % 99991;
    const size_t n = 10007;
    clrun_rand_desc d;
    /* uniform float32 in [-2.5, 4): fma(u, 6.5, -2.5), u the top 24 bits */
    clrun_rand_desc_init(&d, seed, CLRUN_RAND_UNIFORM, CLRUN_F32);
    d.a = -2.5, d.b = 4.0, d.offset = off;
    float *f = draw(ctx, &d, n, 4);
    for (size_t i = 0; i < n; i++) {
        const float want = fmaf((float)(word(seed, 0, off + i) >> 8) * 0x1.0p-24f, 6.5f, -2.5f);
        if (memcmp(&f[i], &want, 4)) fail_msg("uniform f32 %zu: %.9g, want %.9g", i, f[i], want);
        assert_true(f[i] >= -2.5f && f[i] < 4.0f);
    }
    free(f);
    /* [0, 1) in float16 and bfloat16: below 1, from 11 and 8 bits */
    clrun_rand_desc_init(&d, seed, CLRUN_RAND_UNIFORM, CLRUN_F16);
    uint16_t *h = draw(ctx, &d, n, 2);
    for (size_t i = 0; i < n; i++) assert_true(clrun_f16_to_f32(h[i]) == (float)(word(seed, 0, i) >> 21) * 0x1.0p-11f);
    free(h);
    clrun_rand_desc_init(&d, seed, CLRUN_RAND_UNIFORM, CLRUN_BF16);
    h = draw(ctx, &d, n, 2);
    for (size_t i = 0; i < n; i++) assert_true(clrun_bf16_to_f32(h[i]) == (float)(word(seed, 0, i) >> 24) * 0x1.0p-8f);
    free(h);
    /* integers in [-1000, 7): low + the top 64 bits of w64 · range; two words per value */
    clrun_rand_desc_init(&d, seed, CLRUN_RAND_INTEGERS, CLRUN_I32);
    d.low = -1000, d.high = 7, d.offset = off;
    int32_t *iv = draw(ctx, &d, n, 4);
    for (size_t i = 0; i < n; i++) {
        const uint64_t w = (uint64_t)word(seed, 0, off + 2 * i) << 32 | word(seed, 0, off + 2 * i + 1);
        const int32_t want = (int32_t)(-1000 + (int64_t)(((unsigned __int128)w * 1007u) >> 64));
        assert_int_equal(iv[i], want);
    }
    assert_int_equal(d.offset, off + (n + 1) / 2 * 4);
    free(iv);
    /* the whole 64-bit range: the raw words */
    clrun_rand_desc_init(&d, seed, CLRUN_RAND_INTEGERS, CLRUN_U64);
    d.low = d.high = 0;
    uint64_t *u64 = draw(ctx, &d, 33, 8);
    for (size_t i = 0; i < 33; i++) assert_true(u64[i] == ((uint64_t)word(seed, 0, 2 * i) << 32 | word(seed, 0, 2 * i + 1)));
    free(u64);
    /* Bernoulli(0.3): the word below 0.3 · 2^32 */
    clrun_rand_desc_init(&d, seed, CLRUN_RAND_BERNOULLI, CLRUN_U8);
    d.a = 0.3;
    uint8_t *bv = draw(ctx, &d, n, 1);
    for (size_t i = 0; i < n; i++) assert_int_equal(bv[i], (uint64_t)word(seed, 0, i) < (uint64_t)ldexp(0.3, 32));
    free(bv);
    /* normal float32: Box–Muller from word pairs, within a few ulps of the host's libm */
    clrun_rand_desc_init(&d, seed, CLRUN_RAND_NORMAL, CLRUN_F32);
    d.a = 1.5, d.b = 2.0;
    f = draw(ctx, &d, n, 4);
    for (size_t i = 0; i < n; i++) {
        const size_t p = i / 2 * 2;
        const float u = fmaf((float)word(seed, 0, p), 0x1.0p-32f, 0x1.0p-33f);
        const float v = fmaf((float)word(seed, 0, p + 1), 0x1.921fb6p-30f, 0x1.921fb6p-31f);
        const double r = sqrt(-2.0 * log((double)u)) * (i % 2 ? cos((double)v) : sin((double)v));
        if (!(fabs(f[i] - (1.5 + 2.0 * r)) <= 1e-5 * (1 + fabs(r)) * 4)) fail_msg("normal %zu: %.9g, want %.9g", i, f[i], 1.5 + 2.0 * r);
    }
    free(f);
}

/* the standard normal CDF */
static double phi(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

static int cmp_f(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void statistics_of_large_samples(void **state)
{
    clrun_ctx *ctx = *state;
    uint64_t s = test_seed();
    const size_t n = 1 << 20;
    clrun_rand_desc d;
    clrun_rand_desc_init(&d, rng_next(&s), CLRUN_RAND_UNIFORM, CLRUN_F32);
    float *u = draw(ctx, &d, n, 4);
    double m = 0, v = 0;
    size_t bins[64] = {0};
    for (size_t i = 0; i < n; i++) m += u[i], bins[(size_t)(u[i] * 64)]++;
    m /= (double)n;
    for (size_t i = 0; i < n; i++) v += (u[i] - m) * (u[i] - m);
    v /= (double)n;
    assert_true(fabs(m - 0.5) < 5 * sqrt(1.0 / 12 / n)); /* five standard errors */
    assert_true(fabs(v - 1.0 / 12) < 0.002);
    double chi = 0, e = (double)n / 64;
    for (int b = 0; b < 64; b++) chi += (bins[b] - e) * (bins[b] - e) / e;
    assert_true(chi < 120); /* 63 degrees of freedom: p below 1e-5 past 120 */
    free(u);
    clrun_rand_desc_init(&d, rng_next(&s), CLRUN_RAND_NORMAL, CLRUN_F32);
    float *z = draw(ctx, &d, n, 4);
    m = v = 0;
    double k3 = 0;
    for (size_t i = 0; i < n; i++) m += z[i];
    m /= (double)n;
    for (size_t i = 0; i < n; i++) v += (z[i] - m) * (z[i] - m), k3 += pow(z[i] - m, 3);
    v /= (double)n, k3 /= (double)n;
    assert_true(fabs(m) < 5 / sqrt((double)n));
    assert_true(fabs(v - 1) < 0.01);
    assert_true(fabs(k3) < 0.02);
    qsort(z, n, 4, cmp_f); /* Kolmogorov–Smirnov against the normal CDF */
    double dmax = 0;
    for (size_t i = 0; i < n; i++) {
        const double c = phi(z[i]);
        dmax = fmax(dmax, fmax(fabs(c - (double)i / n), fabs(c - (double)(i + 1) / n)));
    }
    assert_true(dmax * sqrt((double)n) < 1.95); /* p = 0.001 */
    free(z);
}

static void refusals(void **state)
{
    clrun_ctx *ctx = *state;
    clrun_buf *b;
    CHECK_OK(ctx, clrun_buf_new(ctx, 64, 0, &b));
    clrun_rand_desc d;
    clrun_rand_desc_init(&d, 1, CLRUN_RAND_UNIFORM, CLRUN_I32);
    CHECK_FAIL(ctx, clrun_rand(ctx, &d, b, 0, 4), CLRUN_INVALID_ARG, "float32");
    clrun_rand_desc_init(&d, 1, CLRUN_RAND_UNIFORM, CLRUN_F32);
    d.a = 2, d.b = 1;
    CHECK_FAIL(ctx, clrun_rand(ctx, &d, b, 0, 4), CLRUN_INVALID_ARG, "low <= high");
    d.a = 0, d.b = INFINITY;
    CHECK_FAIL(ctx, clrun_rand(ctx, &d, b, 0, 4), CLRUN_INVALID_ARG, "finite");
    clrun_rand_desc_init(&d, 1, CLRUN_RAND_INTEGERS, CLRUN_I32);
    d.low = 5, d.high = 5;
    CHECK_FAIL(ctx, clrun_rand(ctx, &d, b, 0, 4), CLRUN_INVALID_ARG, "low < high");
    d.low = 0, d.high = (int64_t)1 << 40;
    CHECK_FAIL(ctx, clrun_rand(ctx, &d, b, 0, 4), CLRUN_INVALID_ARG, "within the type");
    clrun_rand_desc_init(&d, 1, CLRUN_RAND_BERNOULLI, CLRUN_U8);
    d.a = 1.5;
    CHECK_FAIL(ctx, clrun_rand(ctx, &d, b, 0, 4), CLRUN_INVALID_ARG, "probability");
    clrun_rand_desc_init(&d, 1, CLRUN_RAND_BITS, CLRUN_U32);
    CHECK_FAIL(ctx, clrun_rand(ctx, &d, b, 10, 7), CLRUN_INVALID_ARG, "past the output");
    CHECK_FAIL(ctx, clrun_rand(ctx, &d, b, SIZE_MAX, 2), CLRUN_INVALID_ARG, "past the output");
    d.offset = UINT64_MAX - 2;
    CHECK_FAIL(ctx, clrun_rand(ctx, &d, b, 0, 8), CLRUN_INVALID_ARG, "used up");
    assert_int_equal(d.offset, UINT64_MAX - 2); /* unchanged by a refusal */
    CHECK_FAIL(ctx, clrun_rand(ctx, NULL, b, 0, 4), CLRUN_INVALID_ARG, "NULL");
    CHECK_FAIL(ctx, clrun_rand(ctx, &d, NULL, 0, 4), CLRUN_INVALID_ARG, "NULL");
    assert_int_equal(clrun_rand(NULL, &d, b, 0, 4), CLRUN_INVALID_ARG);
    d.offset = 0;
    CHECK_OK(ctx, clrun_rand(ctx, &d, b, 0, 0)); /* nothing drawn, nothing used */
    assert_int_equal(d.offset, 0);
    clrun_buf_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(known_answers),
        cmocka_unit_test(raw_words_everywhere),
        cmocka_unit_test(distributions_from_their_formulas),
        cmocka_unit_test(statistics_of_large_samples),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, ctx_setup, ctx_teardown);
}
