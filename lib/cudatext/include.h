/* include.h — a user's headers pasted into CUDA kernel text, and lines mapped back (include.c). */
#ifndef CLRUN_CUDATEXT_INCLUDE_H
#define CLRUN_CUDATEXT_INCLUDE_H
#include <stddef.h>

/* Lines of the pasted text from out_line on (1-based) are file's lines from line on. */
struct clrun__inc_seg {
    unsigned out_line, line, file;
};
struct clrun__inc_map {
    struct clrun__inc_seg *seg;
    unsigned nseg;
    char **files; /* files[0]: the main text's name */
    unsigned nfiles;
};

/* src with each #include of a user's file found (beside the including file, then in the -I
 * directories of options) replaced by the file's text, malloc'd, its length in *outlen; map says
 * where each line came from (clrun__inc_map_free). NULL with the reason in err ("NAME:LINE:1: …"),
 * or with err empty when out of memory. */
char *clrun__cuda_expand(const char *src, size_t len, const char *name, const char *options, struct clrun__inc_map *map, size_t *outlen,
                         char *err, size_t errn);
void clrun__inc_map_free(struct clrun__inc_map *map);
/* cl (taken) with each `#line N "NAME"` rewritten to the file and line the pasted text's line N came
 * from; NULL when out of memory (cl freed). */
char *clrun__inc_remap_lines(char *cl, const struct clrun__inc_map *map, const char *name);
/* err with each "NAME:N" rewritten the same way, in place (errn bytes at most). */
void clrun__inc_remap_message(char *err, size_t errn, const struct clrun__inc_map *map, const char *name);
/* options less their -I words (the translation pasted the headers in; the OpenCL C needs none, and
 * a driver may not take a quoted directory), malloc'd; NULL for NULL or out of memory. */
char *clrun__strip_includes(const char *options);
/* name at w with '"' and '\\' escaped (a #line's file name); the end of what was written */
char *clrun__put_quoted(char *w, const char *name);
#endif
