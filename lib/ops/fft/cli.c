/* cli.c — `clrun op fft` (numpy.fft's transforms of an .npy file) and `clrun op fftconvolve`
 * (scipy.signal.fftconvolve of two real .npy files). */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char *fft_help =
    "usage: clrun op fft X.npy -o Y.npy [--inverse] [--real] [--axes A,B,C] [-n N] [--norm backward|ortho|forward]\n"
    "                        [--json] [-d SPEC]\n\n"
    "numpy.fft's transforms on the device (VkFFT): the forward c2c transform of X over the axes (default: the last)\n"
    "as numpy.fft.fftn, the inverse with --inverse (ifftn); with --real, rfftn of real X or, with --inverse, irfftn\n"
    "(the last axis's real length is -n N, else 2(m - 1)). Up to three distinct axes. float32/complex64 data is\n"
    "transformed in single precision (Y complex64 or float32), float64/complex128 and integers in double (needs fp64).\n\n"
    "  -o, --output Y      the result\n"
    "  --inverse           the inverse transform\n"
    "  --real              the real transforms (rfftn; irfftn with --inverse)\n"
    "  --axes LIST         the axes, comma-separated, negative from the end (default: -1)\n"
    "  -n N                with --real --inverse: the real length of the last axis\n"
    "  --norm NAME         backward (default: the inverse scaled by 1/n), ortho, forward\n"
    "  --json              the record {\"op\", \"output\", \"dtype\", \"shape\"} instead of the \"wrote\" line\n\n"
    "Exit codes: 0; 1 runtime failure; 2 bad command line or input (complex X for --real forward, real X for\n"
    "--real --inverse, an empty axis); 3 no device; 11 f64 on a device without fp64, or a build without VkFFT.\n";

static const char *conv_help =
    "usage: clrun op fftconvolve A.npy B.npy -o Y.npy [--mode full|same|valid] [--json] [-d SPEC]\n\n"
    "scipy.signal.fftconvolve of two real arrays of equal dimensions (1 to 3) on the device: both zero-padded to the\n"
    "full size, transformed (rfftn), multiplied, transformed back (irfftn) and cut as --mode says: full (the default),\n"
    "same (A's shape, centred) or valid (where B fits inside A entirely, or A inside B). float32 inputs give float32,\n"
    "float64 float64 (needs fp64).\n\n"
    "  -o, --output Y      the result\n"
    "  --mode M            full, same or valid\n"
    "  --json              the record {\"op\", \"output\", \"dtype\", \"shape\"} instead of the \"wrote\" line\n\n"
    "Exit codes: 0; 1 runtime failure; 2 bad command line or input; 3 no device; 11 f64 without fp64 or no VkFFT.\n";

/* element i of a real array as double */
static double real_at(const clrun_array *a, size_t i)
{
    switch (a->dtype) {
    case CLRUN_F32: return ((const float *)a->data)[i];
    case CLRUN_F64: return ((const double *)a->data)[i];
    case CLRUN_I8: return ((const int8_t *)a->data)[i];
    case CLRUN_I16: return ((const int16_t *)a->data)[i];
    case CLRUN_I32: return ((const int32_t *)a->data)[i];
    case CLRUN_I64: return (double)((const int64_t *)a->data)[i];
    case CLRUN_U8:
    case CLRUN_BOOL: return ((const uint8_t *)a->data)[i];
    case CLRUN_U16: return ((const uint16_t *)a->data)[i];
    case CLRUN_U32: return ((const uint32_t *)a->data)[i];
    case CLRUN_U64: return (double)((const uint64_t *)a->data)[i];
    case CLRUN_F16: return clrun_f16_to_f32(((const uint16_t *)a->data)[i]);
    default: return 0;
    }
}

/* permute the C-order array src (shape sh, nd dims, es-byte elements) by perm into dst: dst's axis
 * k is src's axis perm[k] */
static void permute(const unsigned char *src, unsigned char *dst, unsigned nd, const size_t *sh, const unsigned *perm, size_t es)
{
    size_t st[CLRUN_MAX_DIMS], idx[CLRUN_MAX_DIMS] = {0}, total = 1;
    for (int k = (int)nd - 1; k >= 0; k--) st[k] = total, total *= sh[k];
    for (size_t i = 0; i < total; i++) {
        size_t off = 0;
        for (unsigned k = 0; k < nd; k++) off += idx[k] * st[perm[k]];
        memcpy(dst + i * es, src + off * es, es);
        for (int k = (int)nd - 1; k >= 0; k--) { /* the next index of dst, in its own shape */
            if (++idx[k] < sh[perm[k]]) break;
            idx[k] = 0;
        }
    }
}

/* transform the packed array x (batch·in_count elements) with plan d: *y malloc'd */
static clrun_status run_plan(clrun_ctx *ctx, const clrun_fft_desc *d, int inverse, const void *x, size_t xbytes, size_t ybytes, void **y)
{
    clrun_fft_plan *p = NULL;
    clrun_buf *bx = NULL, *by = NULL;
    *y = malloc(ybytes ? ybytes : 1);
    clrun_status st = *y ? clrun_fft_plan_new(ctx, d, &p) : CLRUN_HOST_OUT_OF_MEMORY;
    if (!st && !(st = clrun_buf_new(ctx, xbytes, 0, &bx)) && !(st = clrun_buf_new(ctx, ybytes, 0, &by)) &&
        !(st = clrun_upload(bx, 0, x, xbytes)) && !(st = clrun_fft_exec(p, inverse, bx, 0, by, 0)))
        st = clrun_download(by, 0, *y, ybytes);
    clrun_fft_plan_free(p);
    clrun_buf_free(bx), clrun_buf_free(by);
    if (st) free(*y), *y = NULL;
    return st;
}

static int parse_axes(const char *s, int ndim, unsigned *axes, unsigned *nax)
{
    *nax = 0;
    for (const char *p = s; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || *nax >= CLRUN_FFT_MAX_DIMS) return -1;
        if (v < 0) v += ndim;
        if (v < 0 || v >= ndim) return -1;
        for (unsigned k = 0; k < *nax; k++)
            if (axes[k] == (unsigned)v) return -1;
        axes[(*nax)++] = (unsigned)v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return *nax ? 0 : -1;
}

static int cmd_op_fft(int argc, char **argv)
{
    const char *spec = NULL, *out = NULL, *axes_s = "-1", *norm_s = "backward", *n_s = NULL;
    int inverse = 0, real = 0;
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"device", required_argument, NULL, 'd'}, {"inverse", no_argument, NULL, 'i'},
        {"real", no_argument, NULL, 'r'},         {"axes", required_argument, NULL, 'a'},   {"norm", required_argument, NULL, 'N'},
        {"json", no_argument, NULL, 'j'},         {"help", no_argument, NULL, 'h'},         {0}};
    struct cli_opts opt = {.sub = "op fft", .help = fft_help, .first = 2};
    int c;
    while ((c = cli_next_opt(&opt, argc, argv, "o:d:n:h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        if (c == 'o') out = optarg;
        else if (c == 'd') spec = optarg;
        else if (c == 'i') inverse = 1;
        else if (c == 'r') real = 1;
        else if (c == 'a') axes_s = optarg;
        else if (c == 'N') norm_s = optarg;
        else if (c == 'n') n_s = optarg;
    }
    if (argc - optind != 1) return cli_usage_error("op fft", "fft takes one input file (X.npy)");
    if (!out) return cli_usage_error("op fft", "no output file (-o Y.npy)");
    clrun_fft_norm norm = CLRUN_FFT_NORM_BACKWARD;
    while (clrun_fft_norm_name(norm) && strcmp(clrun_fft_norm_name(norm), norm_s)) norm = (clrun_fft_norm)(norm + 1);
    if (!clrun_fft_norm_name(norm)) return cli_usage_error("op fft", "--norm is backward, ortho or forward, not '%s'", norm_s);
    if (n_s && !(real && inverse)) return cli_usage_error("op fft", "-n goes with --real --inverse (the real length of the last axis)");
    clrun_array x = {0}, y = {0};
    clrun_status st = clrun_npy_read(argv[optind], &x);
    if (st) return fprintf(stderr, "clrun op fft: %s\n", clrun_last_error(NULL)), cli_exit_code(st);
    unsigned axes[CLRUN_FFT_MAX_DIMS], nax = 0;
    int rc = 0;
    const int cplx = x.dtype == CLRUN_C64 || x.dtype == CLRUN_C128;
    const int single = x.dtype == CLRUN_F32 || x.dtype == CLRUN_F16 || x.dtype == CLRUN_C64;
    if (!x.ndim) rc = cli_usage_error("op fft", "X is a scalar: the transform wants at least one axis");
    else if (parse_axes(axes_s, (int)x.ndim, axes, &nax))
        rc = cli_usage_error("op fft", "--axes wants 1 to %d distinct axes of X's %u, comma-separated, not '%s'", CLRUN_FFT_MAX_DIMS,
                             x.ndim, axes_s);
    else if (x.dtype == CLRUN_BF16) rc = cli_usage_error("op fft", "X's type %s has no transform", clrun_dtype_name(x.dtype));
    else if (real && !inverse && cplx) rc = cli_usage_error("op fft", "--real transforms real X, and X is %s", clrun_dtype_name(x.dtype));
    else if (real && inverse && !cplx)
        rc = cli_usage_error("op fft", "--real --inverse (irfftn) transforms a complex spectrum, and X is %s", clrun_dtype_name(x.dtype));
    for (unsigned k = 0; !rc && k < nax; k++)
        if (!x.shape[axes[k]]) rc = cli_usage_error("op fft", "axis %u of X is empty", axes[k]);
    /* the permutation that puts the axes last, in their order */
    unsigned perm[CLRUN_MAX_DIMS], np = 0, inv[CLRUN_MAX_DIMS];
    for (unsigned k = 0; k < x.ndim; k++) {
        int moved = 0;
        for (unsigned j = 0; j < nax; j++) moved |= axes[j] == k;
        if (!moved) perm[np++] = k;
    }
    for (unsigned j = 0; j < nax; j++) perm[np++] = axes[j];
    for (unsigned k = 0; k < x.ndim; k++) inv[perm[k]] = k;
    size_t psh[CLRUN_MAX_DIMS], batch = 1;
    for (unsigned k = 0; k < x.ndim; k++) psh[k] = x.shape[perm[k]];
    for (unsigned k = 0; k + nax < x.ndim; k++) batch *= psh[k];
    const clrun_dtype prec = single ? CLRUN_F32 : CLRUN_F64, ct = single ? CLRUN_C64 : CLRUN_C128, rt = prec;
    const size_t res = single ? 4 : 8, ces = 2 * res;
    clrun_fft_desc d = {.kind = real ? CLRUN_FFT_REAL : CLRUN_FFT_C2C, .precision = prec, .ndim = nax, .batch = batch, .norm = norm};
    for (unsigned j = 0; j < nax; j++) d.shape[j] = psh[x.ndim - nax + j];
    if (!rc && real && inverse) {
        size_t n = 2 * (d.shape[nax - 1] - 1);
        if (n_s) {
            char *end;
            unsigned long long v = strtoull(n_s, &end, 10);
            if (!*n_s || *end || *n_s == '-' || !v || v > 0xFFFFFFFFull)
                rc = cli_usage_error("op fft", "-n wants a positive length, not '%s'", n_s);
            n = (size_t)v;
        }
        if (!rc && n / 2 + 1 != d.shape[nax - 1])
            rc = cli_usage_error("op fft", "a real length of %zu wants %zu complex elements on the last axis; X has %zu", n, n / 2 + 1,
                                 d.shape[nax - 1]);
        if (!rc && !n) rc = cli_usage_error("op fft", "the last axis gives a real length of 0");
        d.shape[nax - 1] = n;
    }
    /* X in the transform's element type, its axes permuted */
    const size_t count = x.count, ies = real && !inverse ? res : ces;
    unsigned char *conv = !rc ? malloc(count * ies + 1) : NULL, *perm_x = !rc ? malloc(count * ies + 1) : NULL;
    if (!rc && (!conv || !perm_x)) rc = cli_fail("op fft", NULL, CLRUN_HOST_OUT_OF_MEMORY);
    for (size_t i = 0; !rc && i < count; i++) {
        double re = 0, im = 0;
        if (x.dtype == CLRUN_C64) re = ((const float *)x.data)[2 * i], im = ((const float *)x.data)[2 * i + 1];
        else if (x.dtype == CLRUN_C128) re = ((const double *)x.data)[2 * i], im = ((const double *)x.data)[2 * i + 1];
        else re = real_at(&x, i);
        if (single) {
            float v[2] = {(float)re, (float)im};
            memcpy(conv + i * ies, v, ies);
        } else {
            double v[2] = {re, im};
            memcpy(conv + i * ies, v, ies);
        }
    }
    clrun_ctx *ctx = NULL;
    void *yr = NULL;
    size_t ysh[CLRUN_MAX_DIMS];
    memcpy(ysh, psh, sizeof psh);
    if (!rc) {
        permute(conv, perm_x, x.ndim, x.shape, perm, ies);
        if (real) ysh[x.ndim - 1] = inverse ? d.shape[nax - 1] : d.shape[nax - 1] / 2 + 1;
        size_t ycount = 1;
        for (unsigned k = 0; k < x.ndim; k++) ycount *= ysh[k];
        const size_t yes = real && inverse ? res : ces;
        rc = cli_open("op fft", spec, &ctx);
        if (!rc && count && (st = run_plan(ctx, &d, inverse, perm_x, count * ies, ycount * yes, &yr))) rc = cli_op_fail("fft", ctx, st);
        size_t oshape[CLRUN_MAX_DIMS];
        for (unsigned k = 0; k < x.ndim; k++) oshape[k] = ysh[inv[k]];
        if (!rc && (st = clrun_array_new(&y, real && inverse ? rt : ct, x.ndim, oshape))) rc = cli_fail("op fft", NULL, st);
        if (!rc && ycount) { /* back to X's axis order: y's axis k is the permuted array's axis inv[k] */
            permute(yr, y.data, x.ndim, ysh, inv, yes);
        }
    }
    if (!rc && (st = clrun_npy_write(out, &y))) rc = (fprintf(stderr, "clrun op fft: %s\n", clrun_last_error(NULL)), cli_exit_code(st));
    if (!rc) {
        if (cli_json_mode) cli_json_emit(cli_notes(out), cli_json_wrote("fft", out, &y));
        else
            fprintf(cli_notes(out), "wrote %s (%s%s%s, norm %s)\n", out, inverse ? "inverse " : "", real ? "real " : "", "transform",
                    norm_s);
    }
    free(conv), free(perm_x), free(yr);
    clrun_array_free(&x), clrun_array_free(&y);
    clrun_close(ctx);
    return rc;
}

static int cmd_op_fftconvolve(int argc, char **argv)
{
    const char *spec = NULL, *out = NULL, *mode = "full";
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'}, {"device", required_argument, NULL, 'd'},
                                         {"mode", required_argument, NULL, 'm'},   {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},         {0}};
    struct cli_opts opt = {.sub = "op fftconvolve", .help = conv_help, .first = 2};
    int c;
    while ((c = cli_next_opt(&opt, argc, argv, "o:d:h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        if (c == 'o') out = optarg;
        else if (c == 'd') spec = optarg;
        else if (c == 'm') mode = optarg;
    }
    if (argc - optind != 2) return cli_usage_error("op fftconvolve", "fftconvolve takes two input files (A.npy B.npy)");
    if (!out) return cli_usage_error("op fftconvolve", "no output file (-o Y.npy)");
    const int m = !strcmp(mode, "full") ? 0 : !strcmp(mode, "same") ? 1 : !strcmp(mode, "valid") ? 2 : -1;
    if (m < 0) return cli_usage_error("op fftconvolve", "--mode is full, same or valid, not '%s'", mode);
    clrun_array a = {0}, b = {0}, y = {0};
    clrun_status st = clrun_npy_read(argv[optind], &a);
    if (!st) st = clrun_npy_read(argv[optind + 1], &b);
    if (st) return clrun_array_free(&a), fprintf(stderr, "clrun op fftconvolve: %s\n", clrun_last_error(NULL)), cli_exit_code(st);
    int rc = 0;
    const unsigned nd = a.ndim;
    if (a.ndim != b.ndim || !nd || nd > CLRUN_FFT_MAX_DIMS)
        rc = cli_usage_error("op fftconvolve", "A and B need the same number of dimensions, 1 to %d (they have %u and %u)",
                             CLRUN_FFT_MAX_DIMS, a.ndim, b.ndim);
    for (const clrun_array *p = &a; !rc && p; p = p == &a ? &b : NULL)
        if (p->dtype == CLRUN_C64 || p->dtype == CLRUN_C128 || p->dtype == CLRUN_BF16)
            rc = cli_usage_error("op fftconvolve", "the inputs are real; one is %s", clrun_dtype_name(p->dtype));
    if (!rc && (!a.count || !b.count)) rc = cli_usage_error("op fftconvolve", "an input is empty");
    int a_big = 1, b_big = 1;
    for (unsigned k = 0; !rc && k < nd; k++) a_big &= a.shape[k] >= b.shape[k], b_big &= b.shape[k] >= a.shape[k];
    if (!rc && m == 2 && !a_big && !b_big)
        rc = cli_usage_error("op fftconvolve", "--mode valid wants one input at least as large as the other on every axis");
    const int single = !rc && a.dtype != CLRUN_F64 && b.dtype != CLRUN_F64 && a.dtype != CLRUN_I64 && b.dtype != CLRUN_I64 &&
                       a.dtype != CLRUN_U64 && b.dtype != CLRUN_U64 && a.dtype != CLRUN_I32 && b.dtype != CLRUN_I32 &&
                       a.dtype != CLRUN_U32 && b.dtype != CLRUN_U32;
    size_t full[CLRUN_FFT_MAX_DIMS], total = 1, ctotal = 1;
    for (unsigned k = 0; !rc && k < nd; k++)
        full[k] = a.shape[k] + b.shape[k] - 1, total *= full[k], ctotal *= k == nd - 1 ? full[k] / 2 + 1 : full[k];
    const size_t res = single ? 4 : 8;
    double *pa = NULL, *pb = NULL;
    unsigned char *ra = NULL, *rb = NULL;
    void *fa = NULL, *fb = NULL, *conv = NULL;
    clrun_ctx *ctx = NULL;
    if (!rc) {
        pa = calloc(total, sizeof *pa), pb = calloc(total, sizeof *pb), ra = malloc(total * res), rb = malloc(total * res);
        if (!pa || !pb || !ra || !rb) rc = cli_fail("op fftconvolve", NULL, CLRUN_HOST_OUT_OF_MEMORY);
    }
    for (int w = 0; !rc && w < 2; w++) { /* zero-pad A and B to the full shape */
        const clrun_array *src = w ? &b : &a;
        double *dst = w ? pb : pa;
        size_t idx[CLRUN_FFT_MAX_DIMS] = {0};
        for (size_t i = 0; i < src->count; i++) {
            size_t off = 0;
            for (unsigned k = 0; k < nd; k++) off = off * full[k] + idx[k];
            dst[off] = real_at(src, i);
            for (int k = (int)nd - 1; k >= 0; k--) {
                if (++idx[k] < src->shape[k]) break;
                idx[k] = 0;
            }
        }
        unsigned char *r = w ? rb : ra;
        for (size_t i = 0; i < total; i++) {
            if (single) ((float *)r)[i] = (float)dst[i];
            else ((double *)r)[i] = dst[i];
        }
    }
    clrun_fft_desc d = {.kind = CLRUN_FFT_REAL, .precision = single ? CLRUN_F32 : CLRUN_F64, .ndim = nd, .batch = 1};
    for (unsigned k = 0; k < nd; k++) d.shape[k] = full[k];
    if (!rc && full[nd - 1] < 2) d.kind = CLRUN_FFT_C2C; /* a last axis of one element: see below */
    if (!rc) rc = cli_open("op fftconvolve", spec, &ctx);
    if (!rc && d.kind == CLRUN_FFT_C2C) { /* both inputs of one element on the last axis: the direct sum is tiny */
        /* full[nd-1] == 1 means both have one element there; convolve the leading axes directly */
        double *acc = calloc(total, sizeof *acc);
        if (!acc) rc = cli_fail("op fftconvolve", NULL, CLRUN_HOST_OUT_OF_MEMORY);
        for (size_t i = 0; !rc && i < total; i++)
            for (size_t j = 0; j < total; j++) {
                size_t ii = i, jj = j, ok = 1, off = 0, mul = 1;
                for (int k = (int)nd - 1; k >= 0; k--) {
                    const size_t ai = ii % full[k], bj = jj % full[k];
                    ii /= full[k], jj /= full[k];
                    if (ai + bj >= full[k]) ok = 0;
                    off += (ai + bj) * mul, mul *= full[k];
                }
                if (ok) acc[off] += pa[i] * pb[j];
            }
        conv = acc;
    } else if (!rc) {
        const size_t cb = ctotal * 2 * res;
        if ((st = run_plan(ctx, &d, 0, ra, total * res, cb, &fa)) || (st = run_plan(ctx, &d, 0, rb, total * res, cb, &fb)))
            rc = cli_op_fail("fftconvolve", ctx, st);
        for (size_t i = 0; !rc && i < ctotal; i++) { /* the spectra's product, in double */
            if (single) {
                float *x = (float *)fa + 2 * i, *z = (float *)fb + 2 * i;
                const double re = (double)x[0] * z[0] - (double)x[1] * z[1], im = (double)x[0] * z[1] + (double)x[1] * z[0];
                x[0] = (float)re, x[1] = (float)im;
            } else {
                double *x = (double *)fa + 2 * i, *z = (double *)fb + 2 * i;
                const double re = x[0] * z[0] - x[1] * z[1], im = x[0] * z[1] + x[1] * z[0];
                x[0] = re, x[1] = im;
            }
        }
        void *back = NULL;
        if (!rc && (st = run_plan(ctx, &d, 1, fa, cb, total * res, &back))) rc = cli_op_fail("fftconvolve", ctx, st);
        if (!rc) {
            double *acc = malloc(total * sizeof *acc);
            if (!acc) rc = cli_fail("op fftconvolve", NULL, CLRUN_HOST_OUT_OF_MEMORY);
            for (size_t i = 0; !rc && i < total; i++) acc[i] = single ? ((float *)back)[i] : ((double *)back)[i];
            conv = acc;
        }
        free(back);
    }
    /* cut the full result as the mode says */
    size_t osh[CLRUN_FFT_MAX_DIMS], start[CLRUN_FFT_MAX_DIMS];
    for (unsigned k = 0; !rc && k < nd; k++) {
        if (m == 0) osh[k] = full[k], start[k] = 0;
        else if (m == 1) osh[k] = a.shape[k], start[k] = (full[k] - a.shape[k]) / 2;
        else {
            const size_t big = a_big ? a.shape[k] : b.shape[k], small = a_big ? b.shape[k] : a.shape[k];
            osh[k] = big - small + 1, start[k] = small - 1;
        }
    }
    if (!rc && (st = clrun_array_new(&y, single ? CLRUN_F32 : CLRUN_F64, nd, osh))) rc = cli_fail("op fftconvolve", NULL, st);
    for (size_t i = 0; !rc && i < y.count; i++) {
        size_t rem = i, off = 0, mul = 1;
        for (int k = (int)nd - 1; k >= 0; k--) {
            off += (rem % osh[k] + start[k]) * mul;
            rem /= osh[k], mul *= full[k];
        }
        const double v = ((double *)conv)[off];
        if (single) ((float *)y.data)[i] = (float)v;
        else ((double *)y.data)[i] = v;
    }
    if (!rc && (st = clrun_npy_write(out, &y)))
        rc = (fprintf(stderr, "clrun op fftconvolve: %s\n", clrun_last_error(NULL)), cli_exit_code(st));
    if (!rc) {
        if (cli_json_mode) cli_json_emit(cli_notes(out), cli_json_wrote("fftconvolve", out, &y));
        else fprintf(cli_notes(out), "wrote %s (mode %s)\n", out, mode);
    }
    free(pa), free(pb), free(ra), free(rb), free(fa), free(fb), free(conv);
    clrun_array_free(&a), clrun_array_free(&b), clrun_array_free(&y);
    clrun_close(ctx);
    return rc;
}

const struct cli_cmd cli_verbs_fft[] = {
    {.name = "fft", .what = "numpy.fft's fftn/ifftn/rfftn/irfftn over up to three axes (VkFFT)", .run = cmd_op_fft},
    {.name = "fftconvolve", .what = "scipy.signal.fftconvolve of two real arrays, modes full/same/valid", .run = cmd_op_fftconvolve},
    {0},
};
