/* cli.c — `clrun op mul|add|sub|div|axpy|scale|fma A.npy [B.npy [C.npy]] -o OUT.npy`. */
#include "cli.h"

#include <stdlib.h>

static int elementwise(const struct cli_npy *c)
{
    const clrun_array *in = c->in;
    const int nin = c->v->nin;
    const clrun_dtype t = in[0].dtype;
    const size_t n = in[0].count, bytes = in[0].bytes ? in[0].bytes : 4;
    int rc = cli_op_floats(c);
    if (rc) return rc;
    clrun_array r = {0};
    if (clrun_array_new(&r, t, in[0].ndim, in[0].shape) != CLRUN_OK) return cli_fail("op", NULL, CLRUN_HOST_OUT_OF_MEMORY);
    clrun_status st = CLRUN_OK;
    clrun_buf *b[4] = {NULL, NULL, NULL, NULL};
    if (c->grp) { /* ranges over the group's devices */
        st = clrun_group_vec(c->grp, (clrun_vec_op)c->v->code, t, n, c->alpha, r.data, in[0].data, nin > 1 ? in[1].data : NULL,
                             nin > 2 ? in[2].data : NULL);
    } else {
        for (int i = 0; i < nin && st == CLRUN_OK; i++)
            if ((st = clrun_buf_new(c->ctx, bytes, 0, &b[i])) == CLRUN_OK && n) st = clrun_upload(b[i], 0, in[i].data, in[i].bytes);
        if (st == CLRUN_OK) st = clrun_buf_new(c->ctx, bytes, 0, &b[3]);
        if (st == CLRUN_OK &&
            (st = clrun_vec(c->ctx, (clrun_vec_op)c->v->code, t, n, c->alpha, b[3], 0, b[0], 0, b[1] ? b[1] : b[0], 0, b[2] ? b[2] : b[0],
                            0)) == CLRUN_OK &&
            n)
            st = clrun_download(b[3], 0, r.data, r.bytes);
    }
    if (st) rc = c->grp ? cli_op_fail(c->v->name, NULL, st) : cli_fail("op", c->ctx, st);
    else if (clrun_npy_write(c->out, &r) != CLRUN_OK) rc = cli_fail("op", NULL, CLRUN_IO_ERROR);
    else {
        char note[96];
        snprintf(note, sizeof note, "%s, %zu elements", clrun_dtype_name(t), n);
        cli_op_wrote(c, c->v->name, &r, note);
    }
    for (int i = 0; i < 4; i++) clrun_buf_free(b[i]);
    clrun_array_free(&r);
    return rc;
}

const struct cli_cmd cli_verbs_vector[] = {
    {.name = "mul", .what = "a * b, element-wise", .nin = 2, .code = CLRUN_MUL, .npy = elementwise},
    {.name = "add", .what = "a + b", .nin = 2, .code = CLRUN_ADD, .npy = elementwise},
    {.name = "sub", .what = "a - b", .nin = 2, .code = CLRUN_SUB, .npy = elementwise},
    {.name = "div", .what = "a / b", .nin = 2, .code = CLRUN_DIV, .npy = elementwise},
    {.name = "axpy", .what = "alpha * x + y (--alpha)", .nin = 2, .code = CLRUN_AXPY, .npy = elementwise},
    {.name = "scale", .what = "alpha * x (--alpha)", .nin = 1, .code = CLRUN_SCALE, .npy = elementwise},
    {.name = "fma", .what = "a * b + c, one rounding", .nin = 3, .code = CLRUN_FMA, .npy = elementwise},
    {0},
};
