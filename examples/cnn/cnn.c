/* cnn.c — a ResNet-18-style network trained on Fashion-MNIST with automatic mixed precision, on one
 * device or data-parallel over several (the library behind examples/cnn/main.c).
 *
 * The network is torchvision's ResNet-18 adapted to 28×28 single-channel images: a 3×3 stem (no
 * max pooling), four stages of two basic blocks (3×3 conv, batch norm, ReLU, 3×3 conv, batch norm,
 * plus the shortcut: identity, or a strided 1×1 conv and batch norm where the shape changes; ReLU of
 * the sum), global average pooling and a linear layer to the 10 classes. It is a list of nodes
 * walked forward and then backward; each node's gradient is written by its first consumer and
 * added to by the others.
 *
 * Mixed precision as torch.cuda.amp does it: f32 master weights; each step casts them to f16 (the
 * conv and linear weights the kernels read); activations in f16 with f32 accumulation; batch
 * norm's parameters and statistics, the logits and the loss in f32; the loss gradient multiplied
 * by the loss scale; the summed gradients unscaled and checked for inf/NaN in one launch, and the
 * step skipped while the scale backs off (clrun_scaler_*: GradScaler's semantics). SGD with
 * Nesterov momentum, weight decay, a linear warm-up and a cosine decay.
 *
 * Data parallel: a step's micro-batches (batch norm's statistics are per micro-batch, as with
 * DistributedDataParallel) are spread over the replicas in order; each replica keeps each of its
 * micro-batches' gradients, and the sum runs as a chain through the replicas in micro-batch order,
 * so every run, on one device or several, adds the same numbers in the same order: the loss curve
 * is the same bits. The running statistics follow the first micro-batch of each step (on the
 * first replica, which evaluates).
 *
 * Activation checkpointing (opts.checkpoint): the inside of every residual block (everything but
 * its output) lives in one shared set of buffers; backward recomputes a block's activations from
 * its input (batch norm with the same statistics, the running ones untouched) just before it
 * walks the block. */
#include "cnn.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

enum op { OP_INPUT, OP_CONV, OP_BN, OP_RELU, OP_ADD, OP_GAP, OP_FC };
enum { MAXN = 96, MAXP = 128, CLASSES = 10, SLOTS = 12 };

struct node {
    enum op op;
    int in0, in1;
    int c, h, w;            /* the output's channels and size (its rows are the micro-batch's) */
    clrun_conv2d_desc conv; /* OP_CONV: x.n is set per call */
    int param;              /* the first parameter (conv, fc: weight; bn: gamma, then beta; fc: then bias) */
    int block, slot;        /* residual block (-1: none); inside it (slot >= 0): the shared buffer's index */
};

struct param {
    size_t off, n; /* in the flat parameter vector (elements) */
    int halved;    /* read by the kernels in the compute type (conv and linear weights) */
    char name[64];
    int ndim, shape[4];
};

struct net {
    struct node node[MAXN];
    int nn, np, blocks;
    struct param param[MAXP];
    size_t total, align; /* elements; offsets are multiples of align */
    char bn_name[MAXN][64];
};

static int add_node(struct net *t, struct node n)
{
    if (t->nn == MAXN) return -1;
    n.block = -1, n.slot = -1;
    t->node[t->nn] = n;
    return t->nn++;
}

static int add_param(struct net *t, const char *name, int halved, int ndim, const int *shape)
{
    struct param *p = &t->param[t->np];
    size_t n = 1;
    for (int k = 0; k < ndim; k++) n *= (size_t)shape[k], p->shape[k] = shape[k];
    p->ndim = ndim, p->n = n, p->halved = halved, p->off = t->total;
    snprintf(p->name, sizeof p->name, "%s", name);
    t->total += (n + t->align - 1) / t->align * t->align;
    return t->np++;
}

static int conv(struct net *t, int in, int k, int r, int stride, const char *name)
{
    const struct node *x = &t->node[in];
    struct node n = {.op = OP_CONV, .in0 = in, .c = k};
    n.conv = (clrun_conv2d_desc){.x = {CLRUN_NCHW, CLRUN_F32, 0, x->c, x->h, x->w},
                                 .k = k,
                                 .r = r,
                                 .s = r,
                                 .stride_h = stride,
                                 .stride_w = stride,
                                 .pad_h = r / 2,
                                 .pad_w = r / 2};
    n.h = (x->h + 2 * (r / 2) - r) / stride + 1, n.w = (x->w + 2 * (r / 2) - r) / stride + 1;
    char pn[64];
    snprintf(pn, sizeof pn, "%s.weight", name);
    n.param = add_param(t, pn, 1, 4, (const int[]){k, x->c, r, r});
    return add_node(t, n);
}

static int bn(struct net *t, int in, const char *name)
{
    const struct node *x = &t->node[in];
    struct node n = {.op = OP_BN, .in0 = in, .c = x->c, .h = x->h, .w = x->w};
    char pn[64];
    snprintf(pn, sizeof pn, "%s.weight", name);
    n.param = add_param(t, pn, 0, 1, &x->c);
    snprintf(pn, sizeof pn, "%s.bias", name);
    add_param(t, pn, 0, 1, &x->c);
    const int i = add_node(t, n);
    if (i >= 0) snprintf(t->bn_name[i], sizeof t->bn_name[i], "%s", name);
    return i;
}

static int unary(struct net *t, enum op op, int in)
{
    const struct node *x = &t->node[in];
    return add_node(t, (struct node){.op = op, .in0 = in, .c = x->c, .h = op == OP_GAP ? 1 : x->h, .w = op == OP_GAP ? 1 : x->w});
}

/* the basic block: its output node; its inside marked with the block's number and slots */
static int block(struct net *t, int in, int ch, int stride, const char *name)
{
    const int first = t->nn;
    char n[64];
    snprintf(n, sizeof n, "%s.conv1", name);
    int a = conv(t, in, ch, 3, stride, n);
    snprintf(n, sizeof n, "%s.bn1", name);
    a = unary(t, OP_RELU, bn(t, a, n));
    snprintf(n, sizeof n, "%s.conv2", name);
    a = conv(t, a, ch, 3, 1, n);
    snprintf(n, sizeof n, "%s.bn2", name);
    a = bn(t, a, n);
    int sc = in;
    if (stride != 1 || t->node[in].c != ch) {
        snprintf(n, sizeof n, "%s.downsample.0", name);
        sc = conv(t, in, ch, 1, stride, n);
        snprintf(n, sizeof n, "%s.downsample.1", name);
        sc = bn(t, sc, n);
    }
    const struct node *x = &t->node[a];
    const int sum = add_node(t, (struct node){.op = OP_ADD, .in0 = a, .in1 = sc, .c = x->c, .h = x->h, .w = x->w});
    for (int i = first; i <= sum; i++) t->node[i].block = t->blocks, t->node[i].slot = i - first;
    const int out = unary(t, OP_RELU, sum); /* the block's output: kept, but its backward needs the inside */
    if (out >= 0) t->node[out].block = t->blocks;
    t->blocks++;
    return out;
}

static void build(struct net *t, int width, size_t align)
{
    memset(t, 0, sizeof *t);
    t->align = align;
    int x = add_node(t, (struct node){.op = OP_INPUT, .c = 1, .h = 28, .w = 28});
    x = unary(t, OP_RELU, bn(t, conv(t, x, width, 3, 1, "conv1"), "bn1"));
    for (int s = 0; s < 4; s++)
        for (int b = 0; b < 2; b++) {
            char name[32];
            snprintf(name, sizeof name, "layer%d.%d", s + 1, b);
            x = block(t, x, width << s, s > 0 && b == 0 ? 2 : 1, name);
        }
    x = unary(t, OP_GAP, x);
    struct node fc = {.op = OP_FC, .in0 = x, .c = CLASSES, .h = 1, .w = 1};
    fc.param = add_param(t, "fc.weight", 1, 2, (const int[]){CLASSES, t->node[x].c});
    add_param(t, "fc.bias", 0, 1, (const int[]){CLASSES});
    add_node(t, fc);
}

/* ---- one replica: a device's copy of everything ------------------------------------------------ */

struct replica {
    clrun_ctx *ctx;
    int mb0, mbs; /* its micro-batches: mb0 .. mb0 + mbs of the step's */
    clrun_buf *master, *half, *mom, *gsum, **gloc;
    clrun_buf *mview[MAXP], *hview[MAXP], **gview; /* gview[j · np + p] */
    clrun_buf *out[MAXN], *grad[MAXN], *smean[MAXN], *sinv[MAXN], *rmean[MAXN], *rvar[MAXN];
    clrun_buf *pool[2][SLOTS]; /* checkpointing: the inside of a block, shared (activations, gradients) */
    clrun_buf *tmp, *tmpw, **x, **labels, **loss, **pred;
    clrun_scaler sc;
    double act_bytes;
};

/* a buffer of zeros (bytes rounded up to 4) */
static clrun_status new_zero(clrun_ctx *ctx, size_t bytes, clrun_buf **b)
{
    bytes = bytes ? (bytes + 3) / 4 * 4 : 4;
    clrun_status st = clrun_buf_new(ctx, bytes, 0, b);
    const uint32_t z = 0;
    return st ? st : clrun_buf_fill(*b, &z, 4, 0, bytes);
}

static size_t numel(const struct node *n, int rows) { return (size_t)rows * n->c * n->h * n->w; }

static clrun_status replica_init(struct replica *r, const struct net *t, const struct cnn_opts *o, const float *w0)
{
    clrun_status st;
    const clrun_dtype T = o->type;
    const size_t es = clrun_dtype_size(T), micro = (size_t)o->micro;
    if ((st = clrun_buf_new_from(r->ctx, w0, t->total * 4, 0, &r->master)) || (st = new_zero(r->ctx, t->total * 4, &r->mom)) ||
        (st = new_zero(r->ctx, t->total * 4, &r->gsum)))
        return st;
    if (T != CLRUN_F32 && (st = new_zero(r->ctx, t->total * es, &r->half))) return st;
    if (!(r->gloc = calloc((size_t)r->mbs, sizeof *r->gloc)) || !(r->gview = calloc((size_t)r->mbs * t->np, sizeof *r->gview)) ||
        !(r->x = calloc((size_t)r->mbs, sizeof *r->x)) || !(r->labels = calloc((size_t)r->mbs, sizeof *r->labels)) ||
        !(r->loss = calloc((size_t)r->mbs, sizeof *r->loss)) || !(r->pred = calloc((size_t)r->mbs, sizeof *r->pred)))
        return CLRUN_HOST_OUT_OF_MEMORY;
    for (int p = 0; p < t->np; p++) {
        const struct param *q = &t->param[p];
        if ((st = clrun_buf_sub(r->master, q->off * 4, q->n * 4, &r->mview[p]))) return st;
        if (q->halved && T != CLRUN_F32 && (st = clrun_buf_sub(r->half, q->off * es, q->n * es, &r->hview[p]))) return st;
    }
    for (int j = 0; j < r->mbs; j++) {
        if ((st = new_zero(r->ctx, t->total * 4, &r->gloc[j])) || (st = clrun_buf_new(r->ctx, micro * 28 * 28 * es, 0, &r->x[j])) ||
            (st = clrun_buf_new(r->ctx, micro * 4, 0, &r->labels[j])) || (st = clrun_buf_new(r->ctx, micro * 4, 0, &r->loss[j])) ||
            (st = clrun_buf_new(r->ctx, micro * 4, 0, &r->pred[j])))
            return st;
        for (int p = 0; p < t->np; p++)
            if ((st = clrun_buf_sub(r->gloc[j], t->param[p].off * 4, t->param[p].n * 4, &r->gview[(size_t)j * t->np + p]))) return st;
    }
    /* activations and their gradients: the inside of a block in the shared slots when checkpointing */
    size_t slot_max[SLOTS] = {0}, big = 0, bigw = 0;
    for (int i = 0; i < t->nn; i++) {
        const struct node *n = &t->node[i];
        const size_t e = numel(n, o->micro) * (n->op == OP_FC ? 4 : es);
        if (n->op != OP_FC && numel(n, o->micro) > big) big = numel(n, o->micro);
        if (n->op == OP_CONV && t->param[n->param].n > bigw) bigw = t->param[n->param].n;
        if (o->checkpoint && n->slot >= 0) {
            if (e > slot_max[n->slot]) slot_max[n->slot] = e;
            continue;
        }
        if (n->op == OP_INPUT) continue; /* the micro-batch's x */
        if ((st = clrun_buf_new(r->ctx, e, 0, &r->out[i])) || (st = clrun_buf_new(r->ctx, e, 0, &r->grad[i]))) return st;
        r->act_bytes += 2.0 * (double)e;
    }
    for (int s = 0; o->checkpoint && s < SLOTS; s++)
        if (slot_max[s]) {
            if ((st = clrun_buf_new(r->ctx, slot_max[s], 0, &r->pool[0][s])) ||
                (st = clrun_buf_new(r->ctx, slot_max[s], 0, &r->pool[1][s])))
                return st;
            r->act_bytes += 2.0 * (double)slot_max[s];
        }
    for (int i = 0; i < t->nn; i++) {
        const struct node *n = &t->node[i];
        if (o->checkpoint && n->slot >= 0) r->out[i] = r->pool[0][n->slot], r->grad[i] = r->pool[1][n->slot];
        if (n->op == OP_BN) {
            const size_t c = (size_t)n->c * 4;
            float *ones = malloc(c);
            if (!ones) return CLRUN_HOST_OUT_OF_MEMORY;
            for (int k = 0; k < n->c; k++) ones[k] = 1.0f;
            if ((st = clrun_buf_new(r->ctx, c, 0, &r->smean[i])) || (st = clrun_buf_new(r->ctx, c, 0, &r->sinv[i])) ||
                (st = new_zero(r->ctx, c, &r->rmean[i])) || (st = clrun_buf_new_from(r->ctx, ones, c, 0, &r->rvar[i]))) {
                free(ones);
                return st;
            }
            free(ones);
        }
    }
    r->act_bytes += (double)big * es + (double)bigw * es;
    if ((st = clrun_buf_new(r->ctx, big * es, 0, &r->tmp)) || (st = clrun_buf_new(r->ctx, bigw * es, 0, &r->tmpw))) return st;
    clrun_scaler_init(&r->sc);
    if (o->growth_interval) r->sc.growth_interval = o->growth_interval;
    return CLRUN_OK;
}

static void replica_free(struct replica *r, const struct net *t)
{
    for (int p = 0; p < MAXP; p++) clrun_buf_free(r->mview[p]), clrun_buf_free(r->hview[p]);
    for (int j = 0; r->gview && j < r->mbs * t->np; j++) clrun_buf_free(r->gview[j]);
    for (int j = 0; j < r->mbs; j++) {
        if (r->gloc) clrun_buf_free(r->gloc[j]);
        if (r->x) clrun_buf_free(r->x[j]), clrun_buf_free(r->labels[j]), clrun_buf_free(r->loss[j]), clrun_buf_free(r->pred[j]);
    }
    for (int i = 1; i < MAXN; i++) { /* node 0's output is x */
        if (t->node[i].slot < 0 || !r->pool[0][t->node[i].slot]) clrun_buf_free(r->out[i]), clrun_buf_free(r->grad[i]);
        clrun_buf_free(r->smean[i]), clrun_buf_free(r->sinv[i]), clrun_buf_free(r->rmean[i]), clrun_buf_free(r->rvar[i]);
    }
    for (int s = 0; s < SLOTS; s++) clrun_buf_free(r->pool[0][s]), clrun_buf_free(r->pool[1][s]);
    clrun_buf_free(r->master), clrun_buf_free(r->half), clrun_buf_free(r->mom), clrun_buf_free(r->gsum), clrun_buf_free(r->tmp);
    clrun_buf_free(r->tmpw);
    clrun_scaler_free(&r->sc);
    free(r->gloc), free(r->gview), free(r->x), free(r->labels), free(r->loss), free(r->pred);
}

/* ---- forward and backward ------------------------------------------------------------------------- */

static clrun_tensor4 shape(const struct node *n, clrun_dtype T, int rows) { return (clrun_tensor4){CLRUN_NCHW, T, rows, n->c, n->h, n->w}; }

static clrun_buf *weight(const struct replica *r, const struct cnn_opts *o, int p)
{
    return o->type == CLRUN_F32 ? r->mview[p] : r->hview[p];
}

/* nodes [from, to) (only those of block `only` when only >= 0) on x: mode 0 evaluation, 1 training
 * (running statistics updated), 2 training without touching them */
static clrun_status forward(struct replica *r, const struct net *t, const struct cnn_opts *o, clrun_buf *x, int rows, int mode, int from,
                            int to, int only)
{
    const clrun_dtype T = o->type;
    clrun_status st = CLRUN_OK;
    for (int i = from; i < to && !st; i++) {
        const struct node *n = &t->node[i];
        if (only >= 0 && (n->block != only || n->slot < 0)) continue;
        const struct node *a = &t->node[n->in0];
        const clrun_tensor4 at = shape(a, T, rows);
        switch (n->op) {
        case OP_INPUT: r->out[i] = x; break;
        case OP_CONV: {
            clrun_conv2d_desc d = n->conv;
            d.x.n = rows, d.x.type = T;
            st = clrun_conv2d_forward(r->ctx, &d, r->out[n->in0], weight(r, o, n->param), NULL, r->out[i]);
            break;
        }
        case OP_BN: {
            const clrun_batchnorm b = {mode != 0,
                                       0.1f,
                                       1e-5f,
                                       r->mview[n->param],
                                       r->mview[n->param + 1],
                                       mode == 2 ? NULL : r->rmean[i],
                                       mode == 2 ? NULL : r->rvar[i],
                                       r->smean[i],
                                       r->sinv[i]};
            st = clrun_batchnorm_forward(r->ctx, &at, &b, r->out[n->in0], r->out[i]);
            break;
        }
        case OP_RELU: st = clrun_act_forward(r->ctx, CLRUN_ACT_RELU, T, numel(n, rows), r->out[n->in0], r->out[i]); break;
        case OP_ADD: st = clrun_add(r->ctx, T, numel(n, rows), r->out[i], r->out[n->in0], r->out[n->in1]); break;
        case OP_GAP: {
            const clrun_pool_desc p = {.kh = a->h, .kw = a->w, .count_include_pad = 1};
            st = clrun_pool_forward(r->ctx, &at, &p, r->out[n->in0], r->out[i]);
            break;
        }
        case OP_FC:
            st = clrun_linear_forward(r->ctx, T, (size_t)rows, (size_t)a->c, CLASSES, r->out[n->in0], weight(r, o, n->param),
                                      r->mview[n->param + 1], r->out[i]);
            break;
        }
    }
    return st;
}

/* where node i's backward writes the gradient of its input `in`: straight into grad[in] the first
 * time, else into tmp (then added) */
static clrun_buf *dest(struct replica *r, const int *have, int in) { return have[in] ? r->tmp : r->grad[in]; }

static clrun_status settle(struct replica *r, const struct net *t, const struct cnn_opts *o, int *have, int in, int rows)
{
    if (!have[in]) return have[in] = 1, CLRUN_OK;
    return clrun_add(r->ctx, o->type, numel(&t->node[in], rows), r->grad[in], r->grad[in], r->tmp);
}

/* the backward pass of micro-batch j from the loss gradient in grad[last]: the parameters'
 * gradients into gview[j] */
static clrun_status backward(struct replica *r, const struct net *t, const struct cnn_opts *o, int j, int rows)
{
    const clrun_dtype T = o->type;
    int have[MAXN] = {0};
    clrun_status st = CLRUN_OK;
    clrun_buf **g = r->gview + (size_t)j * t->np;
    int recomputed = -1;
    for (int i = t->nn - 1; i > 0 && !st; i--) {
        const struct node *n = &t->node[i], *a = &t->node[n->in0];
        if (o->checkpoint && n->block >= 0 && n->block != recomputed) { /* this block's inside, again */
            recomputed = n->block;
            if ((st = forward(r, t, o, NULL, rows, 2, 0, i + 1, n->block))) break;
        }
        const clrun_tensor4 at = shape(a, T, rows);
        switch (n->op) {
        case OP_INPUT: break;
        case OP_FC:
            st = clrun_linear_backward(r->ctx, T, (size_t)rows, (size_t)a->c, CLASSES, r->out[n->in0], weight(r, o, n->param), r->grad[i],
                                       dest(r, have, n->in0), g[n->param], g[n->param + 1]);
            if (!st) st = settle(r, t, o, have, n->in0, rows);
            break;
        case OP_GAP: {
            const clrun_pool_desc p = {.kh = a->h, .kw = a->w, .count_include_pad = 1};
            st = clrun_pool_backward(r->ctx, &at, &p, NULL, r->grad[i], dest(r, have, n->in0));
            if (!st) st = settle(r, t, o, have, n->in0, rows);
            break;
        }
        case OP_RELU:
            st = clrun_act_backward(r->ctx, CLRUN_ACT_RELU, T, numel(n, rows), r->out[n->in0], r->grad[i], dest(r, have, n->in0));
            if (!st) st = settle(r, t, o, have, n->in0, rows);
            break;
        case OP_ADD:
            for (int k = 0; k < 2 && !st; k++) {
                const int in = k ? n->in1 : n->in0;
                st = clrun_buf_copy(dest(r, have, in), 0, r->grad[i], 0, numel(n, rows) * clrun_dtype_size(T));
                if (!st) st = settle(r, t, o, have, in, rows);
            }
            break;
        case OP_BN: {
            const clrun_batchnorm b = {1, 0.1f, 1e-5f, r->mview[n->param], r->mview[n->param + 1], NULL, NULL, r->smean[i], r->sinv[i]};
            st = clrun_batchnorm_backward(r->ctx, &at, &b, r->out[n->in0], r->grad[i], dest(r, have, n->in0), g[n->param], g[n->param + 1]);
            if (!st) st = settle(r, t, o, have, n->in0, rows);
            break;
        }
        case OP_CONV: {
            clrun_conv2d_desc d = n->conv;
            d.x.n = rows, d.x.type = T;
            clrun_buf *dw = T == CLRUN_F32 ? g[n->param] : r->tmpw;
            st = clrun_conv2d_backward_weights(r->ctx, &d, r->out[n->in0], r->grad[i], dw, NULL);
            if (!st && T != CLRUN_F32) st = clrun_cast(r->ctx, dw, 0, T, g[n->param], 0, CLRUN_F32, t->param[n->param].n);
            if (!st && t->node[n->in0].op != OP_INPUT) {
                st = clrun_conv2d_backward_data(r->ctx, &d, r->grad[i], weight(r, o, n->param), dest(r, have, n->in0));
                if (!st) st = settle(r, t, o, have, n->in0, rows);
            }
            break;
        }
        }
    }
    return st;
}

/* ---- data ------------------------------------------------------------------------------------------ */

static uint64_t next(uint64_t *s)
{
    uint64_t x = *s += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static double uniform(uint64_t *s) { return (double)(next(s) >> 11) * 0x1p-53; }

/* images idx[0 .. rows) normalised as torchvision's Fashion-MNIST recipe ((x/255 - 0.2860)/0.3530),
 * shifted and flipped when aug is not NULL, in the compute type */
static void batch_of(const struct cnn_data *d, const int *idx, int rows, clrun_dtype T, uint64_t *aug, void *x, int32_t *lab)
{
    for (int i = 0; i < rows; i++) {
        const unsigned char *img = d->images + (size_t)idx[i] * 784;
        int dx = 0, dy = 0, flip = 0;
        if (aug) dx = (int)(next(aug) % 5) - 2, dy = (int)(next(aug) % 5) - 2, flip = (int)(next(aug) & 1);
        for (int y = 0; y < 28; y++)
            for (int xx = 0; xx < 28; xx++) {
                const int sy = y + dy, sx0 = xx + dx, sx = flip ? 27 - sx0 : sx0;
                const float p = sy < 0 || sy > 27 || sx < 0 || sx > 27 ? 0.0f : img[sy * 28 + sx] / 255.0f;
                const float v = (p - 0.2860f) / 0.3530f;
                const size_t e = (size_t)i * 784 + (size_t)y * 28 + (size_t)xx;
                if (T == CLRUN_F16) ((uint16_t *)x)[e] = clrun_f32_to_f16(v);
                else ((float *)x)[e] = v;
            }
        lab[i] = d->labels[idx[i]];
    }
}

/* ---- weights out ---------------------------------------------------------------------------------------- */

/* one .npy member (f32, shape) into a stored (uncompressed) zip: NumPy's .npz */
struct zip {
    FILE *f;
    unsigned char *dir;
    size_t dir_len, count;
    long pos;
};

static void le16(unsigned char *p, unsigned v) { p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8); }
static void le32(unsigned char *p, unsigned long v) { le16(p, (unsigned)(v & 0xFFFF)), le16(p + 2, (unsigned)(v >> 16)); }

static int zip_npy(struct zip *z, const char *name, const float *data, int ndim, const int *shape)
{
    char head[256], dims[96] = "";
    size_t n = 1;
    for (int k = 0; k < ndim; k++) {
        char one[24];
        snprintf(one, sizeof one, "%d%s", shape[k], ndim == 1 ? "," : k + 1 < ndim ? ", " : "");
        strcat(dims, one), n *= (size_t)shape[k];
    }
    int hl = snprintf(head + 10, sizeof head - 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", dims);
    while ((10 + hl + 1) % 64) head[10 + hl++] = ' ';
    head[10 + hl++] = '\n';
    memcpy(head, "\x93NUMPY\x01\x00", 8), le16((unsigned char *)head + 8, (unsigned)hl);
    const size_t size = 10 + (size_t)hl + 4 * n;
    unsigned long crc = crc32(0L, (const Bytef *)head, (uInt)(10 + hl));
    crc = crc32(crc, (const Bytef *)data, (uInt)(4 * n));
    char fname[64];
    snprintf(fname, sizeof fname, "%s.npy", name);
    const unsigned nl = (unsigned)strlen(fname);
    unsigned char lh[30] = {0x50, 0x4b, 0x03, 0x04, 20};
    le32(lh + 14, crc), le32(lh + 18, (unsigned long)size), le32(lh + 22, (unsigned long)size), le16(lh + 26, nl);
    unsigned char *dir = realloc(z->dir, z->dir_len + 46 + nl);
    if (!dir) return -1;
    z->dir = dir;
    unsigned char *c = z->dir + z->dir_len;
    memset(c, 0, 46);
    memcpy(c, "\x50\x4b\x01\x02\x14\x00\x14\x00", 8);
    le32(c + 16, crc), le32(c + 20, (unsigned long)size), le32(c + 24, (unsigned long)size), le16(c + 28, nl),
        le32(c + 42, (unsigned long)z->pos);
    memcpy(c + 46, fname, nl);
    z->dir_len += 46 + nl, z->count++;
    if (fwrite(lh, 1, 30, z->f) != 30 || fwrite(fname, 1, nl, z->f) != nl || fwrite(head, 1, 10 + (size_t)hl, z->f) != 10 + (size_t)hl ||
        fwrite(data, 4, n, z->f) != n)
        return -1;
    z->pos += (long)(30 + nl + size);
    return 0;
}

static int save(const char *path, const struct net *t, struct replica *r)
{
    float *w = malloc(t->total * 4 + 4), *stat = malloc(8 * 512 * 4 * 2 + 4);
    struct zip z = {fopen(path, "wb"), NULL, 0, 0, 0};
    int rc = !w || !stat || !z.f || clrun_download(r->master, 0, w, t->total * 4) != CLRUN_OK;
    for (int p = 0; !rc && p < t->np; p++) rc = zip_npy(&z, t->param[p].name, w + t->param[p].off, t->param[p].ndim, t->param[p].shape);
    for (int i = 0; !rc && i < t->nn; i++) {
        if (t->node[i].op != OP_BN) continue;
        const int c = t->node[i].c;
        char name[64];
        rc = clrun_download(r->rmean[i], 0, stat, (size_t)c * 4) != CLRUN_OK ||
             clrun_download(r->rvar[i], 0, stat + c, (size_t)c * 4) != CLRUN_OK;
        snprintf(name, sizeof name, "%s.running_mean", t->bn_name[i]);
        if (!rc) rc = zip_npy(&z, name, stat, 1, &c);
        snprintf(name, sizeof name, "%s.running_var", t->bn_name[i]);
        if (!rc) rc = zip_npy(&z, name, stat + c, 1, &c);
    }
    if (!rc) {
        unsigned char end[22] = {0x50, 0x4b, 0x05, 0x06};
        le16(end + 8, (unsigned)z.count), le16(end + 10, (unsigned)z.count), le32(end + 12, (unsigned long)z.dir_len),
            le32(end + 16, (unsigned long)z.pos);
        rc = fwrite(z.dir, 1, z.dir_len, z.f) != z.dir_len || fwrite(end, 1, 22, z.f) != 22;
    }
    if (z.f && fclose(z.f)) rc = 1;
    if (rc) fprintf(stderr, "cnn: could not write the weights to %s\n", path);
    free(w), free(stat), free(z.dir);
    return rc;
}

/* ---- training ------------------------------------------------------------------------------------------------ */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* test accuracy on replica r, in evaluation mode, micro-batches of o->micro */
static clrun_status evaluate(struct replica *r, const struct net *t, const struct cnn_opts *o, const struct cnn_data *test, double *acc)
{
    const int n = o->test_limit && o->test_limit < test->n ? o->test_limit : test->n;
    int *idx = malloc(sizeof(int) * (size_t)o->micro), *pred = malloc(sizeof(int) * (size_t)o->micro), right = 0;
    int32_t *lab = malloc(sizeof(int32_t) * (size_t)o->micro);
    void *x = malloc((size_t)o->micro * 784 * 4);
    clrun_status st = idx && pred && lab && x ? CLRUN_OK : CLRUN_HOST_OUT_OF_MEMORY;
    for (int b = 0; !st && b < n; b += o->micro) {
        const int rows = n - b < o->micro ? n - b : o->micro;
        for (int i = 0; i < rows; i++) idx[i] = b + i;
        batch_of(test, idx, rows, o->type, NULL, x, lab);
        if ((st = clrun_upload(r->x[0], 0, x, (size_t)rows * 784 * clrun_dtype_size(o->type))) ||
            (st = clrun_upload(r->labels[0], 0, lab, (size_t)rows * 4)) || (st = forward(r, t, o, r->x[0], rows, 0, 0, t->nn, -1)) ||
            (st = clrun_cross_entropy(r->ctx, (size_t)rows, CLASSES, r->out[t->nn - 1], r->labels[0], 1, NULL, NULL, r->pred[0])) ||
            (st = clrun_download(r->pred[0], 0, pred, (size_t)rows * 4)))
            break;
        for (int i = 0; i < rows; i++) right += pred[i] == lab[i];
    }
    *acc = n ? (double)right / n : 0;
    free(idx), free(pred), free(lab), free(x);
    return st;
}

int cnn_train(clrun_ctx *const *ctxs, int P, const struct cnn_data *train, const struct cnn_data *test, const struct cnn_opts *opts,
              struct cnn_result *res)
{
    return cnn_train_peers(ctxs, P, NULL, train, test, opts, res);
}

int cnn_train_peers(clrun_ctx *const *ctxs, int P, const struct cnn_peers *peers, const struct cnn_data *train, const struct cnn_data *test,
                    const struct cnn_opts *opts, struct cnn_result *res)
{
    struct cnn_opts o = *opts;
    if (!o.width) o.width = 64;
    if (!o.epochs) o.epochs = 10;
    if (!o.batch) o.batch = 256;
    if (!o.micro) o.micro = o.batch;
    if (!o.lr) o.lr = 0.1f;
    if (!o.weight_decay) o.weight_decay = 5e-4f;
    if (!o.seed) o.seed = 2026;
    o.type = o.f32 ? CLRUN_F32 : CLRUN_F16;
    memset(res, 0, sizeof *res);
    const int mbs = o.batch / o.micro, ntrain = o.train_limit && o.train_limit < train->n ? o.train_limit : train->n;
    const int rank = peers ? peers->rank : 0, ranks = peers ? peers->size : 1, talk = rank == 0;
    const int m0 = mbs * rank / ranks, mine = mbs * (rank + 1) / ranks - m0; /* this process's micro-batches */
    if (!talk) o.quiet = 1;
    if (o.width < 1 || o.width > 512 || o.micro < 2 || o.batch % o.micro || P < 1 || P > mine || ntrain < o.batch) {
        fprintf(stderr,
                "cnn: width %d (1-512), batch %d, micro-batch %d (at least 2, dividing the batch), %d device%s (at most the %d "
                "micro-batches), %d "
                "training images (at least a batch)\n",
                o.width, o.batch, o.micro, P, P == 1 ? "" : "s", mbs, ntrain);
        return 1;
    }
    size_t align = 64; /* elements: every parameter's offset a multiple of the devices' base alignment in f16 and f32 */
    for (int p = 0; p < P; p++)
        while (align * 2 < clrun_ctx_device(ctxs[p])->mem_base_align) align *= 2;
    static struct net t;
    build(&t, o.width, align);
    const int per_epoch = ntrain / o.batch, total_steps = o.steps ? o.steps : per_epoch * o.epochs;
    struct replica *rep = calloc((size_t)P, sizeof *rep);
    float *w0 = calloc(t.total + 1, 4), *host = malloc(t.total * 4 + 4), *lrow = malloc(sizeof(float) * (size_t)o.batch),
          *rrow = malloc(sizeof(float) * (size_t)o.batch);
    int *order = malloc(sizeof(int) * (size_t)ntrain), *pred = malloc(sizeof(int) * (size_t)o.batch), rc = 1, failed = 0;
    int32_t *lab = malloc(sizeof(int32_t) * (size_t)o.batch);
    void *xb = malloc((size_t)o.batch * 784 * 4);
    res->losses = calloc((size_t)total_steps + 1, sizeof(double));
    clrun_status st = CLRUN_OK;
    if (!rep || !w0 || !host || !lrow || !rrow || !order || !pred || !lab || !xb || !res->losses) {
        fprintf(stderr, "cnn: out of memory\n");
        goto done;
    }
    /* weights as torchvision initialises them: conv Kaiming-normal (fan out, ReLU), batch norm 1 and
     * 0, linear uniform in ±1/sqrt(fan in) */
    uint64_t rs = o.seed;
    for (int p = 0; p < t.np; p++) {
        const struct param *q = &t.param[p];
        const int is_bn = strstr(q->name, "bn") || strstr(q->name, "downsample.1");
        for (size_t i = 0; i < q->n; i++) {
            float v;
            if (q->ndim == 4) {
                const double sd = sqrt(2.0 / ((double)q->shape[0] * q->shape[2] * q->shape[3]));
                v = (float)(sd * sqrt(-2 * log(1 - uniform(&rs))) * cos(6.283185307179586 * uniform(&rs)));
            } else if (is_bn) v = strstr(q->name, ".weight") ? 1.0f : 0.0f;
            else v = (float)((uniform(&rs) * 2 - 1) / sqrt((double)t.param[t.np - 2].shape[1]));
            w0[q->off + i] = v;
        }
    }
    for (int p = 0; p < P; p++) {
        rep[p].ctx = ctxs[p], rep[p].mb0 = m0 + mine * p / P, rep[p].mbs = m0 + mine * (p + 1) / P - rep[p].mb0;
        if ((st = replica_init(&rep[p], &t, &o, w0))) {
            failed = p;
            goto fail;
        }
    }
    if (!o.quiet) {
        printf("cnn        ResNet-18 (width %d) on %d Fashion-MNIST images, batch %d in micro-batches of %d, %s%s on %d device%s\n",
               o.width, ntrain, o.batch, o.micro, o.type == CLRUN_F16 ? "f16 with f32 master weights" : "f32",
               o.checkpoint ? ", activation checkpointing" : "", P * ranks, P * ranks == 1 ? "" : "s");
        size_t count = 0;
        for (int p = 0; p < t.np; p++) count += t.param[p].n;
        printf("cnn        %zu weights; activations and their gradients: %.1f MB per device\n", count, rep[0].act_bytes / 1e6);
    }
    for (int i = 0; i < ntrain; i++) order[i] = i;
    uint64_t shuffle = o.seed ^ 0x5DEECE66Dull, aug = o.seed ^ 0xA076;
    const clrun_dtype T = o.type;
    const size_t es = clrun_dtype_size(T);
    int step = 0, taken = 0, epoch = 0;
    double t_first = 0, loss_sum = 0;
    int loss_n = 0, right = 0, seen = 0;
    while (step < total_steps) {
        const int pos = step % per_epoch;
        if (pos == 0) { /* a new epoch: shuffle (Fisher–Yates) */
            for (int i = ntrain - 1; i > 0; i--) {
                const int j = (int)(next(&shuffle) % (uint64_t)(i + 1)), k = order[i];
                order[i] = order[j], order[j] = k;
            }
            loss_sum = 0, loss_n = 0, right = 0, seen = 0;
        }
        batch_of(train, order + (size_t)pos * o.batch, o.batch, T, o.augment ? &aug : NULL, xb, lab);
        const float scale = rep[0].sc.scale;
        /* every replica: f16 weights, then its micro-batches forward and backward */
        for (int p = 0; p < P && !st; p++) {
            struct replica *r = &rep[p];
            if (T != CLRUN_F32 && (st = clrun_cast(r->ctx, r->master, 0, CLRUN_F32, r->half, 0, T, t.total))) break;
            for (int j = 0; j < r->mbs && !st; j++) {
                const int mb = r->mb0 + j;
                if ((st = clrun_upload(r->x[j], 0, (char *)xb + (size_t)mb * o.micro * 784 * es, (size_t)o.micro * 784 * es)) ||
                    (st = clrun_upload(r->labels[j], 0, lab + (size_t)mb * o.micro, (size_t)o.micro * 4)) ||
                    (st = forward(r, &t, &o, r->x[j], o.micro, mb == 0 ? 1 : 2, 0, t.nn, -1)) ||
                    (st = clrun_cross_entropy(r->ctx, (size_t)o.micro, CLASSES, r->out[t.nn - 1], r->labels[j], scale / (float)o.batch,
                                              r->loss[j], r->grad[t.nn - 1], r->pred[j])) ||
                    (st = backward(r, &t, &o, j, o.micro)))
                    break;
            }
            if (st) failed = p;
        }
        if (st) goto fail;
        /* the gradients summed in micro-batch order: a chain through the replicas (and the ranks) */
        if (peers && rank > 0 && peers->recv(peers->arg, host, t.total)) {
            fprintf(stderr, "cnn: rank %d could not receive the gradients\n", rank);
            goto done;
        }
        for (int p = 0; p < P && !st; p++) {
            struct replica *r = &rep[p];
            int j = 0;
            if (p == 0 && rank == 0) st = clrun_buf_copy(r->gsum, 0, r->gloc[0], 0, t.total * 4), j = 1;
            else st = clrun_upload(r->gsum, 0, host, t.total * 4);
            for (; j < r->mbs && !st; j++) st = clrun_add(r->ctx, CLRUN_F32, t.total, r->gsum, r->gsum, r->gloc[j]);
            if (!st && (P > 1 || ranks > 1)) st = clrun_download(r->gsum, 0, host, t.total * 4);
            if (st) failed = p;
        }
        if (st) goto fail;
        if (peers && ((rank + 1 < ranks && peers->send(peers->arg, host, t.total)) || peers->bcast_last(peers->arg, host, t.total))) {
            fprintf(stderr, "cnn: rank %d could not exchange the gradients\n", rank);
            goto done;
        }
        for (int p = 0; p < P && !st; p++)
            if ((p + 1 < P || rank + 1 < ranks) && (st = clrun_upload(rep[p].gsum, 0, host, t.total * 4))) failed = p;
        if (st) goto fail;
        /* unscale and check; one decision for all (every replica holds the same sum) */
        int found_any = 0;
        for (int p = 0; p < P; p++) {
            const clrun_grad g = {rep[p].gsum, 0, t.total, CLRUN_F32};
            int found = 0;
            if ((st = clrun_scaler_unscale(rep[p].ctx, &rep[p].sc, &g, 1)) || (st = clrun_scaler_update(rep[p].ctx, &rep[p].sc, &found))) {
                failed = p;
                goto fail;
            }
            found_any |= found;
        }
        const int warm = total_steps / 10 > 200 ? 200 : total_steps / 10 + 1;
        const double lr =
            step < warm
                ? o.lr * (step + 1) / warm
                : o.lr * 0.5 * (1 + cos(3.141592653589793 * (step - warm) / (double)(total_steps - warm > 0 ? total_steps - warm : 1)));
        const clrun_sgd sgd = {(float)lr, 0.9f, 0, o.weight_decay, 1};
        for (int p = 0; p < P && !found_any; p++)
            if ((st = clrun_sgd_step(rep[p].ctx, &sgd, t.total, rep[p].master, rep[p].gsum, rep[p].mom, taken == 0))) {
                failed = p;
                goto fail;
            }
        taken += !found_any, res->skipped += found_any;
        /* the step's loss and right answers, summed in row order (over the ranks too) */
        double sl = 0, sr = 0;
        int have = 0;
        for (int p = 0; p < P; p++)
            for (int j = 0; j < rep[p].mbs; j++, have += o.micro) {
                if ((st = clrun_download(rep[p].loss[j], 0, lrow + have, (size_t)o.micro * 4)) ||
                    (st = clrun_download(rep[p].pred[j], 0, pred, (size_t)o.micro * 4))) {
                    failed = p;
                    goto fail;
                }
                const int mb = rep[p].mb0 + j;
                for (int i = 0; i < o.micro; i++) rrow[have + i] = pred[i] == lab[mb * o.micro + i];
            }
        if (peers) {
            if (peers->rows(peers->arg, lrow, rrow, have, &sl, &sr)) {
                fprintf(stderr, "cnn: rank %d could not exchange the losses\n", rank);
                goto done;
            }
        } else
            for (int i = 0; i < have; i++) sl += lrow[i], sr += rrow[i];
        right += (int)sr;
        seen += o.batch;
        res->losses[step] = sl / o.batch;
        loss_sum += sl / o.batch, loss_n++;
        if (step == 0) t_first = now();
        step++;
        if (step % per_epoch == 0 || step == total_steps) {
            epoch++;
            const double el = now() - t_first;
            res->images_per_s = step > 1 ? (double)(step - 1) * o.batch / el : 0;
            double acc = 0;
            if (test && rank == 0 && (st = evaluate(&rep[0], &t, &o, test, &acc))) goto fail;
            if (peers && peers->bcast0(peers->arg, &acc)) {
                fprintf(stderr, "cnn: rank %d could not receive the accuracy\n", rank);
                goto done;
            }
            res->test_accuracy = acc, res->train_loss = loss_sum / loss_n;
            if (!o.quiet)
                printf("cnn        epoch %2d  step %5d  loss %.4f  train %5.1f%%  test %5.2f%%  %8.0f images/s  scale %g\n", epoch, step,
                       loss_sum / loss_n, 100.0 * right / seen, 100 * acc, res->images_per_s, (double)rep[0].sc.scale);
        }
    }
    res->steps = taken;
    res->activation_mb = rep[0].act_bytes / 1e6;
    if (!o.quiet)
        printf("cnn        %d steps (%d skipped: inf/NaN in the f16 gradients), test accuracy %.2f%%, %.0f images/s\n", step, res->skipped,
               100 * res->test_accuracy, res->images_per_s);
    rc = o.save && rank == 0 ? save(o.save, &t, &rep[0]) : 0;
    if (!rc && o.save && !o.quiet) printf("cnn        weights written to %s\n", o.save);
    goto done;
fail:
    fprintf(stderr, "cnn: %s\n", clrun_last_error(rep[failed].ctx));
    rc = 1;
done:
    for (int p = 0; rep && p < P; p++) replica_free(&rep[p], &t);
    free(rep), free(w0), free(host), free(lrow), free(rrow), free(order), free(pred), free(lab), free(xb);
    return rc;
}
