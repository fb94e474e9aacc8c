/* cli.c — `clrun op sum|dot|norm2|max|min|argmax A.npy [B.npy]`: the value printed (or --json). */
#include "cli.h"

#include <math.h>
#include <string.h>

enum { SUM, DOT, NORM2, MAX, MIN, ARGMAX };

static int reduction(const struct cli_npy *c)
{
    const clrun_array *in = c->in;
    const clrun_dtype t = in[0].dtype;
    const size_t n = in[0].count, bytes = in[0].bytes ? in[0].bytes : 4;
    const char *name = c->v->name;
    int rc = cli_op_floats(c);
    if (rc) return rc;
    double d = 0;
    float f = 0;
    size_t idx = 0;
    clrun_status st = CLRUN_OK;
    clrun_buf *b[2] = {NULL, NULL};
    if (c->grp) {
        st = clrun_group_reduce(c->grp, name, t, in[0].data, c->v->nin > 1 ? in[1].data : NULL, n, &d, &idx);
    } else {
        for (int i = 0; i < c->v->nin && st == CLRUN_OK; i++)
            if ((st = clrun_buf_new(c->ctx, bytes, 0, &b[i])) == CLRUN_OK && n) st = clrun_upload(b[i], 0, in[i].data, in[i].bytes);
        if (st == CLRUN_OK) switch (c->v->code) {
            case SUM: st = clrun_sum(c->ctx, t, b[0], 0, n, &d); break;
            case DOT: st = clrun_dot(c->ctx, t, b[0], 0, b[1], 0, n, &d); break;
            case NORM2: st = clrun_norm2(c->ctx, t, b[0], 0, n, &d); break;
            case MAX: st = clrun_max(c->ctx, t, b[0], 0, n, &f), d = f; break;
            case MIN: st = clrun_min(c->ctx, t, b[0], 0, n, &f), d = f; break;
            default: st = clrun_argmax(c->ctx, t, b[0], 0, n, &idx); break;
            }
    }
    if (st) rc = c->grp ? cli_op_fail(name, NULL, st) : cli_op_fail(name, c->ctx, st);
    else if (c->json) { /* {"op", "n", "index"} or {"op", "n", "value"}: the value's 17 digits, or "nan", "inf", "-inf" */
        json_t *rec = json_pack("{s:s, s:I}", "op", name, "n", (json_int_t)n);
        if (c->v->code == ARGMAX) json_object_set_new(rec, "index", json_integer((json_int_t)idx));
        else json_object_set_new(rec, "value", isfinite(d) ? json_real(d) : cli_json_num(d));
        cli_json_emit_exact(stdout, rec);
    } else if (c->v->code == ARGMAX) {
        printf("%zu\n", idx);
    } else {
        printf("%.17g\n", d);
    }
    clrun_buf_free(b[0]), clrun_buf_free(b[1]);
    return rc;
}

const struct cli_cmd cli_verbs_reduce[] = {
    {.name = "sum", .what = "sum of the elements (printed)", .nin = 1, .code = SUM, .prints = 1, .npy = reduction},
    {.name = "dot", .what = "sum of a * b (printed)", .nin = 2, .code = DOT, .prints = 1, .npy = reduction},
    {.name = "norm2", .what = "Euclidean norm (printed)", .nin = 1, .code = NORM2, .prints = 1, .npy = reduction},
    {.name = "max", .what = "largest element; NaN if any is NaN (printed)", .nin = 1, .code = MAX, .prints = 1, .npy = reduction},
    {.name = "min", .what = "smallest element; NaN if any is NaN (printed)", .nin = 1, .code = MIN, .prints = 1, .npy = reduction},
    {.name = "argmax",
     .what = "index of the first largest element, or of the first NaN (printed)",
     .nin = 1,
     .code = ARGMAX,
     .prints = 1,
     .npy = reduction},
    {0},
};
