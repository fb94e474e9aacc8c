/* tuning.c — the tuning file `clrun tune gemm` writes (one per device, in the cache folder) and the
 * shape classes it is keyed by. */
#include "gemm.h"

#include <string.h>

const char *clrun_gemm_tuning_path(const clrun_ctx *ctx, char *buf, size_t size)
{
    if (!ctx) return NULL;
    char dir[4096];
    if (!clrun_cache_dir(dir, sizeof dir)) return NULL;
    unsigned long long h = 1469598103934665603ull; /* FNV-1a of what identifies the device */
    const clrun_device_info *in = clrun_ctx_device(ctx);
    const char *parts[] = {in->platform_name, in->name, in->version, in->driver_version};
    for (int i = 0; i < 4; i++)
        for (const char *p = parts[i]; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    int n = snprintf(buf, size, "%s/tune-gemm-%016llx.txt", dir, h);
    return n > 0 && (size_t)n < size ? buf : NULL;
}

static const char *const class_names[] = {"small", "large", "small-fast", "large-fast"};

struct tuning_state {
    int read; /* 0 not yet, 1 read (found or not) */
    clrun__gemm_tuning t;
};
static const char tuning_key = 0;

/* Read the file: lines "CLASS TM,TN,TK,WM,WN,VEC,DB [BACKEND]", CLASS one of class_names, BACKEND
 * gpu-kernel, cpu-kernel or clblast (f32 products were measured); and "KIND BM,BN,WG,WN,STAGES,
 * WAIT,KB,WS" for the wgmma kernel, KIND wgmma (f16/bf16), wgmma-s8 or wgmma-sp (2:4), for products
 * under 2^39 flops, or with "-large" the rest. The tiles are checked by their kernel's file when
 * used. Lines it does not understand are skipped. */
static void read_file(clrun_ctx *ctx, clrun__gemm_tuning *t)
{
    char path[4200], line[256];
    FILE *f = clrun_gemm_tuning_path(ctx, path, sizeof path) ? fopen(path, "r") : NULL;
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        unsigned v[8];
        char kind[16] = "";
        if (sscanf(line, "%15s %u,%u,%u,%u,%u,%u,%u,%u", kind, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 9 &&
            strncmp(kind, "wgmma", 5) == 0) {
            static const char *const kinds[] = {"wgmma", "wgmma-s8", "wgmma-sp"};
            for (int k = 0; k < 3; k++)
                for (int band = 0; band < 2; band++) {
                    char want[24];
                    snprintf(want, sizeof want, "%s%s", kinds[k], band ? "-large" : "");
                    if (!strcmp(kind, want)) memcpy(t->wg[k][band], v, sizeof t->wg[k][band]);
                }
            continue;
        }
        char cls[16] = "", be[16] = ""; /* a blank line leaves them empty */
        int got = sscanf(line, "%15s %u,%u,%u,%u,%u,%u,%u %15s", cls, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], be);
        int c = -1;
        for (int i = 0; i < 4; i++)
            if (strcmp(cls, class_names[i]) == 0) c = i;
        if (got < 8 || c < 0) continue;
        memcpy(t->params[c], v, sizeof t->params[c]);
        clrun_gemm_backend b;
        /* any row of backends.def; whether it runs here is asked when it is chosen */
        if (got == 9 && clrun_gemm_backend_parse(be, &b) == CLRUN_OK && clrun__gemm_row(b)) t->backend[c] = b;
    }
    fclose(f);
}

const clrun__gemm_tuning *clrun__gemm_tuned(clrun_ctx *ctx)
{
    struct tuning_state *s = clrun__op_state(ctx, &tuning_key, sizeof *s, NULL);
    if (s && !s->read) {
        s->read = 1;
        read_file(ctx, &s->t);
    }
    return s ? &s->t : NULL;
}

/* Large when the product has at least two 128×128 tiles per compute unit; the fast ones apart. */
int clrun__gemm_class(const clrun_ctx *ctx, const clrun_gemm_desc *d)
{
    const size_t m = d->whole_m > d->m ? d->whole_m : d->m; /* a block of rows: the whole product's class */
    size_t tiles128 = ((m + 127) / 128) * ((d->n + 127) / 128);
    return (tiles128 >= 2 * (size_t)clrun_ctx_device(ctx)->compute_units) + 2 * (d->fast != 0);
}
