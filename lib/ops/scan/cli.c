/* cli.c — `clrun op cumsum|cummax|cummin A.npy -o OUT.npy`: along the last axis. */
#include "cli.h"

static int scan(const struct cli_npy *c)
{
    const clrun_array *in = c->in;
    const clrun_dtype t = in[0].dtype;
    if (t != CLRUN_I32 && t != CLRUN_U32 && t != CLRUN_I64 && t != CLRUN_U64 && t != CLRUN_F32 && t != CLRUN_F64)
        return cli_usage_error("op", "%s scans int32, uint32, int64, uint64, float32 or float64 arrays, not %s", c->v->name,
                               clrun_dtype_name(t));
    if (c->grp) return cli_usage_error("op", "%s runs on one device (no --devices)", c->v->name);
    const size_t n = in[0].ndim ? in[0].shape[in[0].ndim - 1] : 1, rows = n ? in[0].count / n : 0;
    clrun_array r = {0};
    if (clrun_array_new(&r, t, in[0].ndim, in[0].shape) != CLRUN_OK) return cli_fail("op", NULL, CLRUN_HOST_OUT_OF_MEMORY);
    clrun_buf *b = NULL;
    clrun_status st = clrun_buf_new(c->ctx, in[0].bytes ? in[0].bytes : 1, 0, &b);
    if (!st && in[0].count) st = clrun_upload(b, 0, in[0].data, in[0].bytes);
    if (!st) st = clrun_scan(c->ctx, (clrun_scan_op)c->v->code, 0, t, b, 0, b, 0, rows, n);
    if (!st && in[0].count) st = clrun_download(b, 0, r.data, r.bytes);
    int rc = 0;
    if (st) rc = cli_op_fail(c->v->name, c->ctx, st);
    else if (clrun_npy_write(c->out, &r) != CLRUN_OK) rc = cli_fail("op", NULL, CLRUN_IO_ERROR);
    else {
        char note[96];
        snprintf(note, sizeof note, "%s, %zu rows of %zu", clrun_dtype_name(t), rows, n);
        cli_op_wrote(c, c->v->name, &r, note);
    }
    clrun_buf_free(b);
    clrun_array_free(&r);
    return rc;
}

const struct cli_cmd cli_verbs_scan[] = {
    {.name = "cumsum", .what = "running sums along the last axis (integers wrap)", .nin = 1, .code = CLRUN_SCAN_SUM, .npy = scan},
    {.name = "cummax", .what = "running maxima along the last axis (NaN propagates)", .nin = 1, .code = CLRUN_SCAN_MAX, .npy = scan},
    {.name = "cummin", .what = "running minima along the last axis", .nin = 1, .code = CLRUN_SCAN_MIN, .npy = scan},
    {0},
};
