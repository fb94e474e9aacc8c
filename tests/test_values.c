/* test_values.c — typed values from text (tools/clrun/values.c), as `clrun run` and .sim files read
 * them: decimal (a leading zero is not octal), 0x for hexadecimal, the .sim's hex attribute, and in
 * .sim files negative values of unsigned types wrapping as Oclgrind reads them. */
#include "helpers.h"

#include <math.h>
#include "../tools/clrun/values.h"

static uint64_t as_u64(clrun_dtype t, const void *p)
{
    uint64_t v = 0;
    memcpy(&v, p, clrun_dtype_size(t)); /* little-endian */
    return v;
}

static void decimal_hex_wrap(void **state)
{
    (void)state;
    unsigned char b[8];
    static const struct {
        clrun_dtype t;
        const char *text;
        int flags, ok;
        uint64_t want;
    } cases[] = {
        {CLRUN_I32, "010", 0, 1, 10},
        {CLRUN_U32, "010", 0, 1, 10},
        {CLRUN_U16, "0x10", 0, 1, 16},
        {CLRUN_I32, "-0x10", 0, 1, (uint32_t)-16},
        {CLRUN_U8, "ff", VALUE_HEX, 1, 255},
        {CLRUN_U8, "10", VALUE_HEX, 1, 16},
        {CLRUN_U8, "-1", 0, 0, 0},
        {CLRUN_U8, "-1", VALUE_WRAP, 1, 255},
        {CLRUN_U32, "-1", VALUE_WRAP, 1, 0xFFFFFFFFu},
        {CLRUN_U64, "-2", VALUE_WRAP, 1, ~1ULL},
        {CLRUN_BOOL, "-1", VALUE_WRAP, 0, 0},
        {CLRUN_U8, "256", VALUE_WRAP, 0, 0},
        {CLRUN_I8, "-129", 0, 0, 0},
        {CLRUN_I8, "-128", 0, 1, 0x80},
        {CLRUN_U16, "08", 0, 1, 8},
        {CLRUN_U16, "-", VALUE_WRAP, 0, 0},
        {CLRUN_I32, "12abc", 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        memset(b, 0, sizeof b);
        int r = parse_value(cases[i].t, cases[i].text, b, cases[i].flags);
        if ((r == 0) != cases[i].ok)
            fail_msg("%s '%s' flags %d: %s", clrun_dtype_name(cases[i].t), cases[i].text, cases[i].flags, r ? "refused" : "accepted");
        if (r == 0 && as_u64(cases[i].t, b) != cases[i].want)
            fail_msg("%s '%s': got %llu, want %llu", clrun_dtype_name(cases[i].t), cases[i].text, (unsigned long long)as_u64(cases[i].t, b),
                     (unsigned long long)cases[i].want);
    }
    float f;
    assert_int_equal(parse_value(CLRUN_F32, "010.5", &f, 0), 0);
    assert_true(f == 10.5f);
}

/* Values computed by range: and rand: are stored only when they fit the type (a conversion out of
 * range is undefined behaviour in C). */
static void from_double_in_range(void **state)
{
    (void)state;
    unsigned char b[8];
    static const struct {
        clrun_dtype t;
        double d;
        int ok;
    } cases[] = {
        {CLRUN_U8, 255.9, 1},  {CLRUN_U8, 256.0, 0},     {CLRUN_U8, -1.0, 0},    {CLRUN_U8, -0.5, 1},    {CLRUN_I8, -128.0, 1},
        {CLRUN_I8, -129.0, 0}, {CLRUN_I64, 9.3e18, 0},   {CLRUN_U64, 1.8e19, 1}, {CLRUN_U64, 1.9e19, 0}, {CLRUN_I32, NAN, 0},
        {CLRUN_F32, 1e39, 0},  {CLRUN_F32, INFINITY, 1}, {CLRUN_F16, 1e300, 0},  {CLRUN_F64, 1e300, 1},  {CLRUN_BOOL, 7.0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        if ((value_from_double(cases[i].t, cases[i].d, b) == 0) != cases[i].ok)
            fail_msg("%s from %g should be %s", clrun_dtype_name(cases[i].t), cases[i].d, cases[i].ok ? "stored" : "refused");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(decimal_hex_wrap), cmocka_unit_test(from_double_in_range)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
