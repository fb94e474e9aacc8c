/* hooks.c — the kernel library's build hooks (opkit.h, clrun__build_hook), one line each: the core
 * hands a program to the hook whose option it carries, after building it from source. */
#include "opkit.h"

#include <stddef.h>

extern const clrun__build_hook clrun__nv_ptx_hook; /* gemm/nv/ptx.c: -clrun-ptx-rewrite */

const clrun__build_hook *const clrun__build_hooks[] = {&clrun__nv_ptx_hook, NULL};
