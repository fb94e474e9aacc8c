/* scan.c — clrun_scan: inclusive and exclusive prefix sums, maxima and minima along rows (scan.cl). */
#include "opkit.h"

#include <stdio.h>

static const struct {
    clrun_dtype t;
    const char *cl, *u, *min, *max;
    int is_float;
} types[] = {
    {CLRUN_I32, "int", "uint", "INT_MIN", "INT_MAX", 0},
    {CLRUN_U32, "uint", "uint", "0u", "UINT_MAX", 0},
    {CLRUN_I64, "long", "ulong", "LONG_MIN", "LONG_MAX", 0},
    {CLRUN_U64, "ulong", "ulong", "0ul", "ULONG_MAX", 0},
    {CLRUN_F32, "float", "float", "0", "0", 1},
    {CLRUN_F64, "double", "double", "0", "0", 1},
};

const char *clrun_scan_op_name(clrun_scan_op op)
{
    switch (op) {
    case CLRUN_SCAN_SUM: return "sum";
    case CLRUN_SCAN_MAX: return "max";
    case CLRUN_SCAN_MIN: return "min";
    }
    return NULL;
}

/* the work-group size: 256, or the device's largest power of two below it (CPUs: 64) */
static size_t group_size(clrun_ctx *ctx)
{
    size_t wg = clrun_ctx_device(ctx)->type == CLRUN_DEVICE_CPU ? 64 : 256, max = clrun_ctx_device(ctx)->max_work_group;
    while (wg > 1 && wg > max) wg >>= 1;
    return wg;
}

/* elements per work-item: a GPU's coalesced 4; a CPU's long runs, since its barriers cost */
static size_t items(clrun_ctx *ctx) { return clrun_ctx_device(ctx)->type == CLRUN_DEVICE_CPU ? 64 : 4; }

static clrun_status scan_rows(clrun_ctx *ctx, int ti, clrun_scan_op op, int exclusive, clrun_buf *in, size_t in_off, clrun_buf *out,
                              size_t out_off, size_t rows, size_t n, int depth)
{
    const size_t wg = group_size(ctx), it = items(ctx), tile = wg * it, tiles = (n + tile - 1) / tile;
    char opts[256], *name;
    snprintf(opts, sizeof opts,
             "-DCLRUN_T=%s -DCLRUN_U=%s -DCLRUN_MIN=%s -DCLRUN_MAX=%s -DCLRUN_OP=%d -DCLRUN_FLOAT=%d -DCLRUN_WG=%zu -DCLRUN_ITEMS=%zu",
             types[ti].cl, types[ti].u, types[ti].min, types[ti].max, (int)op, types[ti].is_float, wg, it);
    clrun_kernel *kr = NULL, *kt = NULL;
    clrun_status st;
    if ((st = clrun__lib_kernel(ctx, "scan", opts, "clrun_scan_tiles", &kt))) return st;
    const clrun__grid g = {2, {tiles * wg, rows, 1}, {wg, 1, 1}};
    if (tiles == 1)
        return CLRUN__RUN(kt, g, ARG_BUF(in), ARG_U64(in_off), ARG_BUF(out), ARG_U64(out_off), ARG_U64(n), ARG_U64(tiles), ARG_BUF(NULL),
                          ARG_U32(exclusive));
    if (depth > 8) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_scan: rows of %zu elements are too long", n);
    name = "clrun_scan_reduce";
    if ((st = clrun__lib_kernel(ctx, "scan", opts, name, &kr))) return st;
    clrun_buf *part = NULL;
    if ((st = clrun_buf_new(ctx, rows * tiles * clrun_dtype_size(types[ti].t), 0, &part))) return st;
    /* the tiles' totals, their exclusive scan (the carry into each tile), then each tile */
    if (!(st = CLRUN__RUN(kr, g, ARG_BUF(in), ARG_U64(in_off), ARG_U64(n), ARG_U64(tiles), ARG_BUF(part))) &&
        !(st = scan_rows(ctx, ti, op, 1, part, 0, part, 0, rows, tiles, depth + 1)))
        st = CLRUN__RUN(kt, g, ARG_BUF(in), ARG_U64(in_off), ARG_BUF(out), ARG_U64(out_off), ARG_U64(n), ARG_U64(tiles), ARG_BUF(part),
                        ARG_U32(exclusive));
    clrun_buf_free(part); /* released once the queued kernels are done with it */
    return st;
}

clrun_status clrun_scan(clrun_ctx *ctx, clrun_scan_op op, int exclusive, clrun_dtype t, clrun_buf *in, size_t in_off, clrun_buf *out,
                        size_t out_off, size_t rows, size_t n)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_scan: ctx is NULL");
    CLRUN__SERIAL(ctx);
    const char *opname = clrun_scan_op_name(op);
    if (!opname) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_scan: unknown op %d (sum, max or min)", (int)op);
    int ti = -1;
    for (int i = 0; i < (int)(sizeof types / sizeof types[0]); i++)
        if (types[i].t == t) ti = i;
    if (ti < 0)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_scan: element type %s: int32, uint32, int64, uint64, float32 or float64",
                           (unsigned)t < CLRUN_DTYPE_COUNT ? clrun_dtype_name(t) : "unknown");
    if (!in || !out) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_scan: %s is NULL", in ? "out" : "in");
    if (t == CLRUN_F64 && !clrun_ctx_device(ctx)->fp64)
        return clrun__fail(ctx, CLRUN_UNSUPPORTED, "clrun_scan: float64 on %s, which has no fp64", clrun_ctx_device(ctx)->name);
    const size_t es = clrun_dtype_size(t);
    if (n && rows > SIZE_MAX / n) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_scan: %zu rows of %zu elements overflow", rows, n);
    const size_t count = rows * n;
    clrun_status st;
    if ((st = clrun__span(ctx, "clrun_scan", "the input", in, in_off, count, es)) ||
        (st = clrun__span(ctx, "clrun_scan", "the output", out, out_off, count, es)))
        return st;
    if (in == out && in_off != out_off && (in_off < out_off ? out_off - in_off : in_off - out_off) < count)
        return clrun__fail(ctx, CLRUN_INVALID_ARG,
                           "clrun_scan: the input and the output overlap at different offsets (in place: one offset)");
    if (rows >= ((size_t)1 << 31)) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_scan: %zu rows: fewer than 2^31", rows);
    if (count == 0) return CLRUN_OK;
    return scan_rows(ctx, ti, op, exclusive ? 1 : 0, in, in_off, out, out_off, rows, n, 0);
}
