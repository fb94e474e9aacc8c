/* cli.c — `clrun op twice X.npy -o Y.npy`. */
#include "cli.h"

static int twice(const struct cli_npy *c)
{
    const clrun_array *x = &c->in[0];
    if (x->dtype != CLRUN_F32) return fprintf(stderr, "clrun op twice: float32 input, not %s\n", clrun_dtype_name(x->dtype)), EXIT_USAGE;
    if (c->grp) return fprintf(stderr, "clrun op twice: one device (-d)\n"), EXIT_USAGE;
    clrun_array r = {0};
    clrun_buf *bx = NULL, *by = NULL;
    clrun_status st;
    int rc = EXIT_OK;
    const size_t bytes = x->bytes ? x->bytes : 4;
    if ((st = clrun_array_new(&r, CLRUN_F32, x->ndim, x->shape)) || (st = clrun_buf_new(c->ctx, bytes, 0, &bx)) ||
        (st = clrun_buf_new(c->ctx, bytes, 0, &by)) || (x->count && (st = clrun_upload(bx, 0, x->data, x->bytes))) ||
        (st = clrun_twice(c->ctx, bx, by, x->count)) || (x->count && (st = clrun_download(by, 0, r.data, r.bytes))))
        rc = cli_fail("op", c->ctx, st);
    else if (clrun_npy_write(c->out, &r)) rc = cli_fail("op", NULL, CLRUN_IO_ERROR);
    else cli_op_wrote(c, "twice", &r, "float32");
    clrun_buf_free(bx), clrun_buf_free(by), clrun_array_free(&r);
    return rc;
}

const struct cli_cmd cli_verbs_twice[] = {
    {.name = "twice", .what = "2 * x (the recipe's example op)", .nin = 1, .npy = twice},
    {0},
};
