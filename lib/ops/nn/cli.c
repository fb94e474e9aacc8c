/* cli.c — `clrun op relu|gelu|gelu_tanh X.npy -o Y.npy`: torch.nn.functional's activations. */
#include "cli.h"

static int act(const struct cli_npy *c)
{
    const clrun_array *in = c->in;
    const clrun_dtype t = in[0].dtype;
    if (t != CLRUN_F32 && t != CLRUN_F16)
        return cli_usage_error("op", "%s takes a float32 or float16 array, not %s", c->v->name, clrun_dtype_name(t));
    if (c->grp) return cli_usage_error("op", "%s runs on one device (no --devices)", c->v->name);
    clrun_array r = {0};
    if (clrun_array_new(&r, t, in[0].ndim, in[0].shape) != CLRUN_OK) return cli_fail("op", NULL, CLRUN_HOST_OUT_OF_MEMORY);
    clrun_buf *b = NULL;
    clrun_status st = clrun_buf_new(c->ctx, in[0].bytes ? in[0].bytes : 1, 0, &b);
    if (!st && in[0].count) st = clrun_upload(b, 0, in[0].data, in[0].bytes);
    if (!st) st = clrun_act_forward(c->ctx, (clrun_act)c->v->code, t, in[0].count, b, b);
    if (!st && in[0].count) st = clrun_download(b, 0, r.data, r.bytes);
    int rc = 0;
    if (st) rc = cli_op_fail(c->v->name, c->ctx, st);
    else if (clrun_npy_write(c->out, &r) != CLRUN_OK) rc = cli_fail("op", NULL, CLRUN_IO_ERROR);
    else cli_op_wrote(c, c->v->name, &r, clrun_dtype_name(t));
    clrun_buf_free(b);
    clrun_array_free(&r);
    return rc;
}

const struct cli_cmd cli_verbs_nn[] = {
    {.name = "relu", .what = "max(x, 0), as torch.nn.functional.relu", .nin = 1, .code = CLRUN_ACT_RELU, .npy = act},
    {.name = "gelu", .what = "x·Φ(x) with erf, as torch.nn.functional.gelu", .nin = 1, .code = CLRUN_ACT_GELU, .npy = act},
    {.name = "gelu_tanh", .what = "gelu's tanh form (approximate=\"tanh\")", .nin = 1, .code = CLRUN_ACT_GELU_TANH, .npy = act},
    {0},
};
