#include "cycle_a.h"
__kernel void k(__global int *p) { p[0] = 1; }
