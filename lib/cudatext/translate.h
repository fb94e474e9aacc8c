/* translate.h — CUDA kernel text to OpenCL C 1.2 (translate.c). */
#ifndef CLRUN_CUDATEXT_TRANSLATE_H
#define CLRUN_CUDATEXT_TRANSLATE_H
#include <stddef.h>

/* OpenCL C for the CUDA source src (len bytes, named name in messages), malloc'd; NULL with the reason
 * — "name:line:col: …", the user's own lines — in err. options (may be NULL): build options, whose
 * -D and -U hold for the parse too. */
char *clrun__cuda_translate(const char *src, size_t len, const char *name, const char *options, char *err, size_t errn);
#endif
