/* values.h — typed values from and to text. */
#ifndef CLRUN_VALUES_H
#define CLRUN_VALUES_H
#include <clrun.h>
#include <stdio.h>

/* Parse text as one value of type t into out (clrun_dtype_size(t) bytes). hex: integers in base 16.
 * Returns 0, or -1 when the text is not a number or is out of the type's range. */
int parse_value(clrun_dtype t, const char *s, void *out, int hex);
double value_as_double(clrun_dtype t, const void *p);
void value_from_double(clrun_dtype t, double d, void *p);
void value_print(FILE *f, clrun_dtype t, const void *p);
#endif
