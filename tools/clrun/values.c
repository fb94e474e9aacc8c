/* values.c — text to typed values with range checks, for the run grammar and .sim files. */
#include "values.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* one line per type, kept as written: */
/* clang-format off */

/* Integers are decimal (a leading zero is not octal: "010" is 10), hexadecimal with a 0x prefix, or
 * with VALUE_HEX hexadecimal throughout. */
static int int_base(const char *s, int flags)
{
    if (flags & VALUE_HEX) return 16;
    while (*s == ' ') s++;
    if (*s == '-' || *s == '+') s++;
    return s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10;
}

int parse_value(clrun_dtype t, const char *s, void *out, int flags)
{
    const int hex = int_base(s ? s : "", flags) == 16;
    char *end = NULL;
    if (!s || !*s) return -1;
    errno = 0;
    switch (t) {
    case CLRUN_F16:
    case CLRUN_BF16:
    case CLRUN_F32:
    case CLRUN_F64: {
        double d = strtod(s, &end);
        if (*end || end == s) return -1;
        if (t == CLRUN_F64) memcpy(out, &d, 8);
        else if (t == CLRUN_F32) {
            float f = (float)d;
            if (isinf(f) && !isinf(d)) return -1;
            memcpy(out, &f, 4);
        } else {
            uint16_t h = t == CLRUN_F16 ? clrun_f32_to_f16((float)d) : clrun_f32_to_bf16((float)d);
            memcpy(out, &h, 2);
        }
        return 0;
    }
    case CLRUN_I8:
    case CLRUN_I16:
    case CLRUN_I32:
    case CLRUN_I64: {
        long long v = strtoll(s, &end, hex ? 16 : 10);
        if (*end || end == s || errno == ERANGE) return -1;
        size_t n = clrun_dtype_size(t);
        long long lo = n == 8 ? INT64_MIN : -(1LL << (8 * n - 1)), hi = n == 8 ? INT64_MAX : (1LL << (8 * n - 1)) - 1;
        if (v < lo || v > hi) return -1;
        if (n == 1) *(int8_t *)out = (int8_t)v;
        else if (n == 2) { int16_t x = (int16_t)v; memcpy(out, &x, 2); }
        else if (n == 4) { int32_t x = (int32_t)v; memcpy(out, &x, 4); }
        else { int64_t x = v; memcpy(out, &x, 8); }
        return 0;
    }
    case CLRUN_U8:
    case CLRUN_U16:
    case CLRUN_U32:
    case CLRUN_U64:
    case CLRUN_BOOL: {
        while (*s == ' ') s++;
        size_t n = clrun_dtype_size(t);
        unsigned long long v;
        if (*s == '-') { /* VALUE_WRAP: modulo 2^bits, as Oclgrind reads a negative unsigned value */
            long long sv = strtoll(s, &end, hex ? 16 : 10);
            if (!(flags & VALUE_WRAP) || t == CLRUN_BOOL || *end || end == s + 1 || errno == ERANGE) return -1;
            v = (unsigned long long)sv & (n == 8 ? ~0ULL : (1ULL << (8 * n)) - 1);
        } else {
            v = strtoull(s, &end, hex ? 16 : 10);
            if (*end || end == s || errno == ERANGE) return -1;
        }
        if (t == CLRUN_BOOL && v > 1) return -1;
        if (n < 8 && v > (1ULL << (8 * n)) - 1) return -1;
        if (n == 1) *(uint8_t *)out = (uint8_t)v;
        else if (n == 2) { uint16_t x = (uint16_t)v; memcpy(out, &x, 2); }
        else if (n == 4) { uint32_t x = (uint32_t)v; memcpy(out, &x, 4); }
        else { uint64_t x = v; memcpy(out, &x, 8); }
        return 0;
    }
    default: return -1;
    }
}

double value_as_double(clrun_dtype t, const void *p)
{
    switch (t) {
    case CLRUN_F16: { uint16_t h; memcpy(&h, p, 2); return clrun_f16_to_f32(h); }
    case CLRUN_BF16: { uint16_t h; memcpy(&h, p, 2); return clrun_bf16_to_f32(h); }
    case CLRUN_F32: { float f; memcpy(&f, p, 4); return f; }
    case CLRUN_F64: { double d; memcpy(&d, p, 8); return d; }
    case CLRUN_I8: return *(const int8_t *)p;
    case CLRUN_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case CLRUN_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case CLRUN_I64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case CLRUN_U8:
    case CLRUN_BOOL: return *(const uint8_t *)p;
    case CLRUN_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case CLRUN_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case CLRUN_U64: { uint64_t v; memcpy(&v, p, 8); return (double)v; }
    default: return NAN;
    }
}

int value_from_double(clrun_dtype t, double d, void *p)
{
    /* an integer type holds d when d truncated toward zero lies in its range: lo < d < hi */
    static const double lo[CLRUN_DTYPE_COUNT] = {[CLRUN_I8] = -129.0, [CLRUN_I16] = -32769.0, [CLRUN_I32] = -2147483649.0,
                                                 [CLRUN_U8] = -1.0,   [CLRUN_U16] = -1.0,     [CLRUN_U32] = -1.0,
                                                 [CLRUN_U64] = -1.0},
                        hi[CLRUN_DTYPE_COUNT] = {[CLRUN_I8] = 128.0,   [CLRUN_I16] = 32768.0,   [CLRUN_I32] = 2147483648.0,
                                                 [CLRUN_I64] = 9223372036854775808.0, [CLRUN_U8] = 256.0, [CLRUN_U16] = 65536.0,
                                                 [CLRUN_U32] = 4294967296.0, [CLRUN_U64] = 18446744073709551616.0};
    const int integer = t >= CLRUN_I8 && t <= CLRUN_U64;
    if (integer && !(t == CLRUN_I64 ? d >= -9223372036854775808.0 && d < hi[t] : d > lo[t] && d < hi[t])) return -1; /* NaN too */
    if ((t == CLRUN_F32 || t == CLRUN_F16 || t == CLRUN_BF16) && isfinite(d) && fabs(d) > FLT_MAX) return -1;
    switch (t) {
    case CLRUN_F16: { uint16_t h = clrun_f32_to_f16((float)d); memcpy(p, &h, 2); break; }
    case CLRUN_BF16: { uint16_t h = clrun_f32_to_bf16((float)d); memcpy(p, &h, 2); break; }
    case CLRUN_F32: { float f = (float)d; memcpy(p, &f, 4); break; }
    case CLRUN_F64: memcpy(p, &d, 8); break;
    case CLRUN_I8: *(int8_t *)p = (int8_t)d; break;
    case CLRUN_I16: { int16_t v = (int16_t)d; memcpy(p, &v, 2); break; }
    case CLRUN_I32: { int32_t v = (int32_t)d; memcpy(p, &v, 4); break; }
    case CLRUN_I64: { int64_t v = (int64_t)d; memcpy(p, &v, 8); break; }
    case CLRUN_U8: *(uint8_t *)p = (uint8_t)d; break;
    case CLRUN_BOOL: *(uint8_t *)p = d != 0; break;
    case CLRUN_U16: { uint16_t v = (uint16_t)d; memcpy(p, &v, 2); break; }
    case CLRUN_U32: { uint32_t v = (uint32_t)d; memcpy(p, &v, 4); break; }
    case CLRUN_U64: { uint64_t v = (uint64_t)d; memcpy(p, &v, 8); break; }
    default: return -1;
    }
    return 0;
}

void value_print(FILE *f, clrun_dtype t, const void *p)
{
    double d = value_as_double(t, p);
    if (t == CLRUN_I64) { int64_t v; memcpy(&v, p, 8); fprintf(f, "%lld", (long long)v); }
    else if (t == CLRUN_U64) { uint64_t v; memcpy(&v, p, 8); fprintf(f, "%llu", (unsigned long long)v); }
    else if (t == CLRUN_F16 || t == CLRUN_BF16 || t == CLRUN_F32 || t == CLRUN_F64) fprintf(f, "%.9g", d);
    else fprintf(f, "%.0f", d);
}
/* clang-format on */
