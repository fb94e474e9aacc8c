#include "does_not_exist.h"
__kernel void k(__global int *p) { p[0] = 1; }
