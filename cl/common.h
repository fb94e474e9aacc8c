/* common.h — helpers shared by the kernel library's sources (included with #include "common.h"). */
#ifndef CLRUN_COMMON_H
#define CLRUN_COMMON_H
/* Global id of dimension 0 as a size_t, for guarded element-wise loops. */
#define CLRUN_GID ((size_t)get_global_id(0))
#endif
