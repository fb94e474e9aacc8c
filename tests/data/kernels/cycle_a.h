#include "cycle_b.h"
