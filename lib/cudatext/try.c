#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "translate.h"
int main(int argc, char **argv)
{
    FILE *f = fopen(argv[1], "rb");
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    char err[1024];
    char *o = clrun__cuda_translate(buf, n, argv[1], err, sizeof err);
    if (!o) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    fputs(o, stdout);
    free(o);
    (void)argc;
    return 0;
}
