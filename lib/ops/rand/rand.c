/* rand.c — clrun_rand: Philox4x32-10 (Random123) streams and their distributions (rand.cl). */
#include "opkit.h"

#include <math.h>
#include <string.h>

void clrun_rand_desc_init(clrun_rand_desc *d, uint64_t seed, clrun_rand_dist dist, clrun_dtype type)
{
    if (!d) return;
    memset(d, 0, sizeof *d);
    d->seed = seed, d->dist = dist, d->type = type;
    d->a = dist == CLRUN_RAND_BERNOULLI ? 0.5 : 0.0;
    d->b = 1.0;
    d->low = 0, d->high = (int64_t)1 << 31;
}

static int two_words(const clrun_rand_desc *d)
{
    return d->dist == CLRUN_RAND_INTEGERS || ((d->dist == CLRUN_RAND_UNIFORM || d->dist == CLRUN_RAND_NORMAL) && d->type == CLRUN_F64);
}

uint64_t clrun_rand_words(const clrun_rand_desc *d, size_t n)
{
    if (!d) return 0;
    const uint64_t per = two_words(d) ? 2 : 4; /* values per group of four words */
    return ((uint64_t)n + per - 1) / per * 4;
}

/* The kernel for d, or NULL with the reason in *why. */
static const char *kernel_name(const clrun_rand_desc *d, const char **why)
{
    const clrun_dtype t = d->type;
    switch (d->dist) {
    case CLRUN_RAND_BITS:
        if (t == CLRUN_U32) return "clrun_rand_bits";
        *why = "bits are uint32 words";
        return NULL;
    case CLRUN_RAND_BERNOULLI:
        if (t == CLRUN_U8 || t == CLRUN_BOOL) return "clrun_rand_bernoulli";
        *why = "Bernoulli values are uint8 or bool";
        return NULL;
    case CLRUN_RAND_UNIFORM:
    case CLRUN_RAND_NORMAL: {
        static const char *const names[2][4] = {
            {"clrun_rand_uniform_f32", "clrun_rand_uniform_f16", "clrun_rand_uniform_bf16", "clrun_rand_uniform_f64"},
            {"clrun_rand_normal_f32", "clrun_rand_normal_f16", "clrun_rand_normal_bf16", "clrun_rand_normal_f64"}};
        if (t == CLRUN_F32 || t == CLRUN_F16 || t == CLRUN_BF16 || t == CLRUN_F64)
            return names[d->dist == CLRUN_RAND_NORMAL][t == CLRUN_F32 ? 0 : t == CLRUN_F16 ? 1 : t == CLRUN_BF16 ? 2 : 3];
        *why = "uniform and normal values are float32, float16, bfloat16 or float64";
        return NULL;
    }
    case CLRUN_RAND_INTEGERS:
        if (t == CLRUN_I32) return "clrun_rand_integers_i32";
        if (t == CLRUN_U32) return "clrun_rand_integers_u32";
        if (t == CLRUN_I64) return "clrun_rand_integers_i64";
        if (t == CLRUN_U64) return "clrun_rand_integers_u64";
        *why = "integers are int32, uint32, int64 or uint64";
        return NULL;
    }
    *why = "an unknown distribution";
    return NULL;
}

/* Whether every value of [low, high) fits type t. */
static int range_fits(clrun_dtype t, int64_t low, int64_t high)
{
    switch (t) {
    case CLRUN_I32: return low >= INT32_MIN && high - 1 <= INT32_MAX;
    case CLRUN_U32: return low >= 0 && high - 1 <= (int64_t)UINT32_MAX;
    case CLRUN_U64: return low >= 0;
    default: return 1;
    }
}

static uint64_t bits_of(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

clrun_status clrun_rand(clrun_ctx *ctx, clrun_rand_desc *d, clrun_buf *out, size_t out_off, size_t n)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_rand: ctx is NULL");
    CLRUN__SERIAL(ctx);
    if (!d) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_rand: the descriptor is NULL");
    const char *why = NULL, *name = kernel_name(d, &why);
    if (!name)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_rand: %s, not %s", why,
                           (unsigned)d->type < CLRUN_DTYPE_COUNT ? clrun_dtype_name(d->type) : "an unknown type");
    if (!out) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_rand: out is NULL");
    const size_t es = d->type == CLRUN_BOOL ? 1 : clrun_dtype_size(d->type), cap = clrun_buf_size(out) / es;
    if (out_off > cap || n > cap - out_off)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_rand: elements %zu..%zu past the output's %zu", out_off, out_off + n, cap);
    const double a = d->a, b = d->b;
    if (d->dist == CLRUN_RAND_UNIFORM && !(isfinite(a) && isfinite(b) && a <= b && isfinite(b - a)))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_rand: uniform in [%g, %g): finite bounds, low <= high", a, b);
    if (d->dist == CLRUN_RAND_NORMAL && !(isfinite(a) && isfinite(b) && b >= 0))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_rand: normal with mean %g and standard deviation %g: finite, the deviation >= 0",
                           a, b);
    if (d->dist == CLRUN_RAND_BERNOULLI && !(a >= 0 && a <= 1))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_rand: Bernoulli with probability %g: from 0 to 1", a);
    const int full64 = d->dist == CLRUN_RAND_INTEGERS && d->type == CLRUN_U64 && d->low == 0 && d->high == 0;
    if (d->dist == CLRUN_RAND_INTEGERS && !full64 && (d->high <= d->low || !range_fits(d->type, d->low, d->high)))
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_rand: integers in [%lld, %lld) as %s: low < high, both within the type",
                           (long long)d->low, (long long)d->high, clrun_dtype_name(d->type));
    const uint64_t words = clrun_rand_words(d, n);
    if (d->offset > UINT64_MAX - words) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_rand: the stream's 2^64 words are used up");
    if (d->type == CLRUN_F64 && !clrun_ctx_device(ctx)->fp64)
        return clrun__fail(ctx, CLRUN_UNSUPPORTED, "clrun_rand: float64 on %s, which has no fp64", clrun_ctx_device(ctx)->name);
    if (n == 0) return CLRUN_OK;
    clrun_kernel *k = NULL;
    clrun_status st = clrun__lib_kernel(ctx, "rand", NULL, name, &k);
    if (st) return st;
    const size_t items = (size_t)(words / 4);
    const uint32_t k0 = (uint32_t)d->seed, k1 = (uint32_t)(d->seed >> 32);
    const uint64_t sub = d->subsequence, off = d->offset;
    switch (d->dist) {
    case CLRUN_RAND_BITS:
        st = CLRUN__RUN(k, CLRUN__GRID1(items), ARG_BUF(out), ARG_U64(out_off), ARG_U64(n), ARG_U32(k0), ARG_U32(k1), ARG_U64(sub),
                        ARG_U64(off));
        break;
    case CLRUN_RAND_BERNOULLI: { /* a word below p·2^32: exact for any p (2^32 when p is 1) */
        const uint64_t thr = a >= 1 ? (uint64_t)1 << 32 : (uint64_t)ldexp(a, 32);
        st = CLRUN__RUN(k, CLRUN__GRID1(items), ARG_BUF(out), ARG_U64(out_off), ARG_U64(n), ARG_U32(k0), ARG_U32(k1), ARG_U64(sub),
                        ARG_U64(off), ARG_U64(thr));
        break;
    }
    case CLRUN_RAND_INTEGERS: {
        const uint64_t range = full64 ? 0 : (uint64_t)d->high - (uint64_t)d->low;
        st = CLRUN__RUN(k, CLRUN__GRID1(items), ARG_BUF(out), ARG_U64(out_off), ARG_U64(n), ARG_U32(k0), ARG_U32(k1), ARG_U64(sub),
                        ARG_U64(off), ARG_U64((uint64_t)d->low), ARG_U64(range));
        break;
    }
    default: { /* uniform: low, scale = b - a; normal: loc a, scale b */
        const double lo = a, sc = d->dist == CLRUN_RAND_UNIFORM ? b - a : b;
        if (d->type == CLRUN_F64)
            st = CLRUN__RUN(k, CLRUN__GRID1(items), ARG_BUF(out), ARG_U64(out_off), ARG_U64(n), ARG_U32(k0), ARG_U32(k1), ARG_U64(sub),
                            ARG_U64(off), ARG_U64(bits_of(lo)), ARG_U64(bits_of(sc)));
        else
            st = CLRUN__RUN(k, CLRUN__GRID1(items), ARG_BUF(out), ARG_U64(out_off), ARG_U64(n), ARG_U32(k0), ARG_U32(k1), ARG_U64(sub),
                            ARG_U64(off), ARG_F32((float)lo), ARG_F32((float)sc));
        break;
    }
    }
    if (st == CLRUN_OK) d->offset = off + words;
    return st;
}
