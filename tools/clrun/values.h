/* values.h — typed values from and to text. */
#ifndef CLRUN_VALUES_H
#define CLRUN_VALUES_H
#include <clrun.h>
#include <stdio.h>

enum {
    VALUE_HEX = 1, /* integers in base 16 */
    VALUE_WRAP = 2 /* a negative value of an unsigned type wraps modulo 2^bits (Oclgrind's .sim files) */
};
/* Parse text as one value of type t into out (clrun_dtype_size(t) bytes). Integers are decimal (a
 * leading zero is not octal), or hexadecimal with a 0x prefix or with VALUE_HEX. Returns 0, or -1
 * when the text is not a number or is out of the type's range. */
int parse_value(clrun_dtype t, const char *s, void *out, int flags);
double value_as_double(clrun_dtype t, const void *p);
/* Store d as type t (integers truncated toward zero); -1, storing nothing, when it does not fit the
 * type (or is NaN for an integer type): the conversion would be undefined. */
int value_from_double(clrun_dtype t, double d, void *p);
void value_print(FILE *f, clrun_dtype t, const void *p);
#endif
