/* data.c — Fashion-MNIST's idx files, read with zlib (the files are gzip'd). */
#include "cnn.h"

#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

static unsigned be32(const unsigned char *p) { return (unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | p[3]; }

/* the body of an idx file: magic 0x0000080D (D dimensions of unsigned bytes), the sizes, the bytes */
static unsigned char *read_idx(const char *path, int dims, unsigned *count, unsigned *each)
{
    gzFile f = gzopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cnn: cannot open %s (Debian's dataset-fashion-mnist installs it)\n", path);
        return NULL;
    }
    unsigned char head[16];
    unsigned char *body = NULL;
    const int hl = 4 + 4 * dims;
    if (gzread(f, head, (unsigned)hl) != hl || be32(head) != 0x800u + (unsigned)dims) {
        fprintf(stderr, "cnn: %s is not an idx file of %d dimension%s of bytes\n", path, dims, dims == 1 ? "" : "s");
        gzclose(f);
        return NULL;
    }
    *count = be32(head + 4), *each = 1;
    for (int k = 1; k < dims; k++) *each *= be32(head + 4 + 4 * k);
    const size_t bytes = (size_t)*count * *each;
    if (*count > 1000000 || *each > 4096 || !(body = malloc(bytes ? bytes : 1)) || gzread(f, body, (unsigned)bytes) != (int)bytes) {
        fprintf(stderr, "cnn: %s: %u records of %u bytes could not be read\n", path, *count, *each);
        free(body), body = NULL;
    }
    gzclose(f);
    return body;
}

int cnn_data_read(const char *dir, const char *which, struct cnn_data *d)
{
    char path[4096];
    unsigned n, each, nl, one;
    *d = (struct cnn_data){0};
    snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte.gz", dir, which);
    if (!(d->images = read_idx(path, 3, &n, &each))) return -1;
    if (each != 28 * 28) {
        fprintf(stderr, "cnn: %s holds %u-pixel images, not 28×28\n", path, each);
        return cnn_data_free(d), -1;
    }
    snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte.gz", dir, which);
    if (!(d->labels = read_idx(path, 1, &nl, &one))) return cnn_data_free(d), -1;
    if (nl != n) {
        fprintf(stderr, "cnn: %u images but %u labels in %s\n", n, nl, dir);
        return cnn_data_free(d), -1;
    }
    for (unsigned i = 0; i < n; i++)
        if (d->labels[i] > 9) {
            fprintf(stderr, "cnn: label %u of image %u in %s is not a class 0-9\n", d->labels[i], i, path);
            return cnn_data_free(d), -1;
        }
    d->n = (int)n;
    return 0;
}

void cnn_data_free(struct cnn_data *d)
{
    free(d->images), free(d->labels);
    *d = (struct cnn_data){0};
}
