/* vector.c — element-wise vector ops (lib/ops/vector/vector.cl). */
#include "opkit.h"

#include <string.h>

static const char *const op_names[] = {"mul", "add", "sub", "div", "axpy", "scale", "fma"};
static const char vec_options[] = "-cl-fp32-correctly-rounded-divide-sqrt";

const char *clrun_vec_op_name(clrun_vec_op op) { return (unsigned)op < sizeof op_names / sizeof *op_names ? op_names[op] : NULL; }

static clrun_status check_operand(clrun_ctx *ctx, const char *what, clrun_buf *b, size_t off, size_t n, size_t esize)
{
    if (!b) return clrun__fail(ctx, CLRUN_INVALID_ARG, "vector op: operand %s is NULL", what);
    if (clrun_buf_context(b) != ctx) return clrun__fail(ctx, CLRUN_INVALID_ARG, "vector op: operand %s belongs to another context", what);
    size_t cap = clrun_buf_size(b) / esize;
    if (off > cap || n > cap - off)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "vector op: operand %s: elements [%zu, %zu + %zu) are outside its %zu elements", what,
                           off, off, n, cap);
    return CLRUN_OK;
}

clrun_status clrun_vec(clrun_ctx *ctx, clrun_vec_op op, clrun_dtype t, size_t n, float alpha, clrun_buf *dst, size_t dst_off, clrun_buf *a,
                       size_t a_off, clrun_buf *b, size_t b_off, clrun_buf *c, size_t c_off)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_vec: ctx is NULL");
    CLRUN__SERIAL(ctx);
    clrun_status st;
    const char *name = clrun_vec_op_name(op);
    if (!name) return clrun__fail(ctx, CLRUN_INVALID_ARG, "clrun_vec: unknown op %d", (int)op);
    if (t != CLRUN_F32 && t != CLRUN_F16)
        return clrun__fail(ctx, CLRUN_INVALID_ARG, "%s: element type %s is not supported (f32 or f16)", name, clrun_dtype_name(t));
    int uses_b = op != CLRUN_SCALE, uses_c = op == CLRUN_FMA;
    size_t es = clrun_dtype_size(t);
    if ((st = check_operand(ctx, "dst", dst, dst_off, n, es)) || (st = check_operand(ctx, "a", a, a_off, n, es)) ||
        (uses_b && (st = check_operand(ctx, "b", b, b_off, n, es))) || (uses_c && (st = check_operand(ctx, "c", c, c_off, n, es))))
        return st;
    if (n == 0) return CLRUN_OK;
    if (!uses_b) b = a, b_off = a_off;
    if (!uses_c) c = a, c_off = a_off;
    int v4 = dst_off % 4 == 0 && a_off % 4 == 0 && b_off % 4 == 0 && c_off % 4 == 0;
    char kname[64];
    snprintf(kname, sizeof kname, "clrun_%s_%s%s", name, t == CLRUN_F32 ? "f32" : "f16", v4 ? "v4" : "");
    clrun_kernel *k = NULL;
    if ((st = clrun__lib_kernel(ctx, "vector", vec_options, kname, &k)) != CLRUN_OK) return st;
    const size_t global = v4 ? n / 4 + n % 4 : n;
    return CLRUN__RUN(k, CLRUN__GRID1(global), ARG_BUF(dst), ARG_U64(dst_off), ARG_BUF(a), ARG_U64(a_off), ARG_BUF(b), ARG_U64(b_off),
                      ARG_BUF(c), ARG_U64(c_off), ARG_F32(alpha), ARG_U64(n));
}

clrun_status clrun_mul(clrun_ctx *ctx, clrun_dtype t, size_t n, clrun_buf *dst, clrun_buf *a, clrun_buf *b)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_mul: ctx is NULL");
    CLRUN__SERIAL(ctx);
    return clrun_vec(ctx, CLRUN_MUL, t, n, 0.0f, dst, 0, a, 0, b, 0, NULL, 0);
}

clrun_status clrun_add(clrun_ctx *ctx, clrun_dtype t, size_t n, clrun_buf *dst, clrun_buf *a, clrun_buf *b)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_add: ctx is NULL");
    CLRUN__SERIAL(ctx);
    return clrun_vec(ctx, CLRUN_ADD, t, n, 0.0f, dst, 0, a, 0, b, 0, NULL, 0);
}

clrun_status clrun_axpy(clrun_ctx *ctx, clrun_dtype t, size_t n, float alpha, clrun_buf *x, clrun_buf *y)
{
    if (!ctx) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_axpy: ctx is NULL");
    CLRUN__SERIAL(ctx);
    return clrun_vec(ctx, CLRUN_AXPY, t, n, alpha, y, 0, x, 0, y, 0, NULL, 0);
}
