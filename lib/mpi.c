/* mpi.c — libclrun_mpi (include/clrun_mpi.h): a device per rank, GEMM scattered and gathered with
 * MPI, a shared counter for dynamic dealing. Built only when an MPI is found (-Dmpi). */
#include "clrun_mpi.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

clrun_status clrun_mpi_agree(MPI_Comm comm, clrun_status st)
{
    int mine = (int)st, all = 0;
    if (MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) return CLRUN_IO_ERROR;
    return (clrun_status)all;
}

/* The device indices a group spec names (as clrun_group_open reads it), without opening them. */
static clrun_status candidates(const char *spec, unsigned *idx, unsigned cap, unsigned *n)
{
    unsigned total = 0;
    clrun_status st;
    *n = 0;
    if ((st = clrun_device_count(&total))) return st;
    static const char *const words[] = {"all", "gpu", "accelerator", "cpu"};
    static const clrun_device_type types[] = {0, CLRUN_DEVICE_GPU, CLRUN_DEVICE_ACCELERATOR, CLRUN_DEVICE_CPU};
    for (int w = 0; w < 4; w++) {
        if (strcmp(spec, words[w])) continue;
        for (unsigned i = 0; i < total && *n < cap; i++) {
            clrun_device_info in;
            if ((st = clrun_device_get(i, &in))) return st;
            if (!w || in.type == types[w]) idx[(*n)++] = i;
        }
        return *n ? CLRUN_OK : CLRUN_NO_DEVICE;
    }
    char item[256];
    for (const char *p = spec; *p && *n < cap;) {
        const char *comma = strchr(p, ',');
        const size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (!len || len >= sizeof item) return CLRUN_INVALID_ARG;
        memcpy(item, p, len), item[len] = 0;
        if ((st = clrun_device_select(item, &idx[*n], NULL))) return st;
        (*n)++;
        p = comma ? comma + 1 : p + len;
    }
    return *n ? CLRUN_OK : CLRUN_NO_DEVICE;
}

clrun_status clrun_mpi_open(MPI_Comm comm, const char *spec, clrun_ctx **ctx)
{
    MPI_Comm node;
    int local = 0;
    unsigned *idx = NULL, n = 0, total = 0;
    *ctx = NULL;
    if (clrun_device_count(&total) == CLRUN_OK) { /* at most every device, or one per item of the list */
        const size_t cap = (size_t)total + (spec ? strlen(spec) : 0) + 1;
        idx = malloc(cap * sizeof *idx);
        if (!idx) return CLRUN_HOST_OUT_OF_MEMORY;
    }
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_rank(node, &local);
        MPI_Comm_free(&node);
    }
    const unsigned cap = idx ? (unsigned)(total + (spec ? strlen(spec) : 0) + 1) : 0;
    clrun_status st = idx ? candidates(spec && *spec ? spec : "gpu", idx, cap, &n) : clrun_device_count(&total);
    if (st == CLRUN_NO_DEVICE && !(spec && *spec)) st = candidates("all", idx, cap, &n);
    if (st) {
        free(idx);
        if (!*clrun_last_error(NULL))
            fprintf(stderr, "clrun_mpi_open: no device matches '%s' (clrun devices lists them)\n", spec && *spec ? spec : "gpu");
        return st;
    }
    char one[32];
    snprintf(one, sizeof one, "%u", idx[(unsigned)local % n]);
    free(idx);
    return clrun_open(ctx, one);
}

/* Broadcast `bytes` from root in pieces MPI's int counts can hold. */
static int bcast(void *p, size_t bytes, int root, MPI_Comm comm)
{
    for (size_t off = 0; off < bytes;) {
        const size_t n = bytes - off < (size_t)1 << 30 ? bytes - off : (size_t)1 << 30;
        if (MPI_Bcast((char *)p + off, (int)n, MPI_BYTE, root, comm) != MPI_SUCCESS) return -1;
        off += n;
    }
    return 0;
}

/* Scatter (dir 0) or gather (dir 1) rows of `row` bytes: rank r's rows[r] rows from first[r]. */
static int rows_move(int dir, char *all, char *mine, size_t row, const int *rows, const int *first, int me, int root, MPI_Comm comm)
{
    MPI_Datatype t;
    if (MPI_Type_contiguous((int)row, MPI_BYTE, &t) != MPI_SUCCESS || MPI_Type_commit(&t) != MPI_SUCCESS) return -1;
    int rc = dir == 0 ? MPI_Scatterv(all, rows, first, t, mine, rows[me], t, root, comm)
                      : MPI_Gatherv(mine, rows[me], t, all, rows, first, t, root, comm);
    MPI_Type_free(&t);
    return rc == MPI_SUCCESS ? 0 : -1;
}

/* This rank's rows of C on its device. */
static clrun_status compute(clrun_ctx *ctx, const clrun_gemm_desc *d, size_t r0, size_t rows, const char *a, const char *b, float *c)
{
    const size_t es = clrun_dtype_size(d->type);
    const size_t a_n = d->k ? (d->trans_a ? d->k * d->m : rows * d->k) : 0, b_n = d->k * d->n, c_n = rows * d->n;
    clrun_buf *ba = NULL, *bb = NULL, *bc = NULL;
    clrun_status st;
    clrun_gemm_desc e = *d;
    if ((a_n && ((st = clrun_buf_new(ctx, a_n * es, 0, &ba)) || (st = clrun_upload(ba, 0, a, a_n * es)))) ||
        (b_n && ((st = clrun_buf_new(ctx, b_n * es, 0, &bb)) || (st = clrun_upload(bb, 0, b, b_n * es)))) ||
        (st = clrun_buf_new(ctx, c_n * 4, 0, &bc)) || (d->beta != 0.0f && (st = clrun_upload(bc, 0, c, c_n * 4))))
        goto done;
    e.m = rows, e.whole_m = d->m, e.a = ba, e.b = bb, e.c = bc, e.a_off = d->trans_a ? r0 : 0, e.b_off = e.c_off = 0, e.batch = 0;
    if (!(st = clrun_gemm(ctx, &e))) st = clrun_download(bc, 0, c, c_n * 4);
done:
    clrun_buf_free(ba), clrun_buf_free(bb), clrun_buf_free(bc);
    return st;
}

clrun_status clrun_mpi_gemm(MPI_Comm comm, int root, clrun_ctx *ctx, const clrun_gemm_desc *d, const void *a, const void *b, float *c)
{
    int me = 0, P = 1;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    /* the product, from root: m n k ta tb fast type, alpha beta, and root's verdict on it */
    long h[9] = {0};
    float ab[2] = {0, 0};
    if (me == root) {
        const int bad = !d || !c || d->a || d->b || d->c || d->batch > 1 || (d->k && (!a || !b)) || !clrun_dtype_size(d->type) ||
                        d->ldc != d->n || (d->k && (d->lda != (d->trans_a ? d->m : d->k) || d->ldb != (d->trans_b ? d->k : d->n))) ||
                        d->a_off || d->b_off || d->c_off || (d->m ? (d->m + 127) / 128 : 0) > INT_MAX;
        h[8] = bad ? CLRUN_INVALID_ARG : CLRUN_OK;
        if (!bad)
            h[0] = (long)d->m, h[1] = (long)d->n, h[2] = (long)d->k, h[3] = d->trans_a, h[4] = d->trans_b, h[5] = d->fast, h[6] = d->type,
            ab[0] = d->alpha, ab[1] = d->beta;
        if (bad)
            fprintf(stderr, "clrun_mpi_gemm: the descriptor or arrays are not as clrun_mpi_gemm takes them (host arrays, packed rows, "
                            "no offsets or batches)\n");
    }
    if (MPI_Bcast(h, 9, MPI_LONG, root, comm) != MPI_SUCCESS || MPI_Bcast(ab, 2, MPI_FLOAT, root, comm) != MPI_SUCCESS)
        return CLRUN_IO_ERROR;
    if (h[8]) return (clrun_status)h[8];
    clrun_gemm_desc e = {0};
    e.m = (size_t)h[0], e.n = (size_t)h[1], e.k = (size_t)h[2], e.trans_a = (int)h[3], e.trans_b = (int)h[4], e.fast = (int)h[5];
    e.type = (clrun_dtype)h[6], e.alpha = ab[0], e.beta = ab[1];
    e.lda = e.trans_a ? e.m : e.k, e.ldb = e.trans_b ? e.k : e.n, e.ldc = e.n;
    if (!e.m || !e.n) return CLRUN_OK;
    const size_t es = clrun_dtype_size(e.type), blocks = (e.m + 127) / 128;
    int *rows = calloc((size_t)P, sizeof *rows), *first = calloc((size_t)P, sizeof *first);
    char *mya = NULL, *myb = NULL;
    float *myc = NULL;
    clrun_status st = rows && first ? CLRUN_OK : CLRUN_HOST_OUT_OF_MEMORY;
    for (int r = 0; rows && first && r < P; r++) { /* blocks dealt evenly in rank order */
        const size_t b0 = blocks * (size_t)r / (size_t)P, b1 = blocks * (size_t)(r + 1) / (size_t)P;
        const size_t r0 = b0 * 128, r1 = b1 * 128 < e.m ? b1 * 128 : e.m;
        first[r] = (int)r0, rows[r] = (int)(r1 > r0 ? r1 - r0 : 0);
    }
    const size_t mine = st ? 0 : (size_t)rows[me];
    if (!st) {
        mya = malloc((e.trans_a ? e.k * e.m : mine * e.k) * es + 1), myb = me == root ? (char *)b : malloc(e.k * e.n * es + 1);
        myc = malloc(mine * e.n * 4 + 4);
        if (!mya || !myb || !myc) st = CLRUN_HOST_OUT_OF_MEMORY;
    }
    if ((st = clrun_mpi_agree(comm, st))) goto done;
    /* A: rows scattered, or all of it when transposed; B to all; C's rows when beta reads them */
    if (e.k && e.trans_a) {
        if (me == root) memcpy(mya, a, e.k * e.m * es);
        if (bcast(mya, e.k * e.m * es, root, comm)) st = CLRUN_IO_ERROR;
    } else if (e.k && rows_move(0, (char *)a, mya, e.k * es, rows, first, me, root, comm)) {
        st = CLRUN_IO_ERROR;
    }
    if (st) goto done;
    if ((e.k && bcast(myb, e.k * e.n * es, root, comm)) ||
        (e.beta != 0.0f && rows_move(0, (char *)c, (char *)myc, e.n * 4, rows, first, me, root, comm))) {
        st = CLRUN_IO_ERROR;
        goto done;
    }
    st = mine ? compute(ctx, &e, (size_t)first[me], mine, mya, myb, myc) : CLRUN_OK;
    if (st) fprintf(stderr, "clrun_mpi_gemm: rank %d: %s\n", me, clrun_last_error(ctx));
    if ((st = clrun_mpi_agree(comm, st))) goto done;
    if (rows_move(1, (char *)c, (char *)myc, e.n * 4, rows, first, me, root, comm)) st = CLRUN_IO_ERROR;
done:
    free(rows), free(first), free(mya), free(myc);
    if (me != root) free(myb);
    return st;
}

struct clrun_mpi_counter {
    MPI_Win win;
    long *base;
    int root;
};

clrun_status clrun_mpi_counter_new(MPI_Comm comm, int root, clrun_mpi_counter **out)
{
    int me = 0;
    MPI_Comm_rank(comm, &me);
    clrun_mpi_counter *c = calloc(1, sizeof *c);
    clrun_status st = c ? CLRUN_OK : CLRUN_HOST_OUT_OF_MEMORY;
    if ((st = clrun_mpi_agree(comm, st))) return free(c), st;
    c->root = root;
    if (MPI_Win_allocate(me == root ? (MPI_Aint)sizeof(long) : 0, sizeof(long), MPI_INFO_NULL, comm, &c->base, &c->win) != MPI_SUCCESS)
        return free(c), CLRUN_IO_ERROR;
    if (me == root) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, root, 0, c->win);
        *c->base = 0;
        MPI_Win_unlock(root, c->win);
    }
    MPI_Barrier(comm);
    *out = c;
    return CLRUN_OK;
}

long clrun_mpi_counter_take(clrun_mpi_counter *c, long step)
{
    long got = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, c->root, 0, c->win);
    MPI_Fetch_and_op(&step, &got, MPI_LONG, c->root, 0, MPI_SUM, c->win);
    MPI_Win_unlock(c->root, c->win);
    return got;
}

void clrun_mpi_counter_free(clrun_mpi_counter *c)
{
    if (!c) return;
    MPI_Win_free(&c->win);
    free(c);
}
