/* Included from main.cl as "sub/scale.h"; includes "../offset.h" relative to itself. */
#include "../offset.h"
#define TEST_SCALE(x) ((x)*3.0f)
