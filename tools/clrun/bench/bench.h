/* bench.h — shared by `clrun bench`'s files: one file per benchmark (transfer, launch, vector, gemm,
 * mixed, canny), main.c with the command and the helpers. Peers written in Python live in
 * tools/peers/ and run through bench_peer, with an argument vector (never a shell string). */
#ifndef CLRUN_BENCH_H
#define CLRUN_BENCH_H

#include "../cli.h"

/* Every benchmark's name, in the order of `clrun bench --help`: the dispatcher, the top-level help and
 * the messages take it from here. */
#define BENCH_NAMES \
    "transfer, launch, vector, gemm, mixed, canny, pipeline, int8, sparse, overlap, random, scan, sort, hist, fft, conv, cuda"

struct bench_opts {
    const char *spec;
    int json, repeat;
    double size_mib;
    const char *shapes;  /* gemm: "MxNxK,..." */
    int frames, jobs;    /* pipeline: frames on disk, host threads */
    const char *devices; /* gemm, pipeline: a device group (clrun_group_open) to measure too */
};

/* One result: a table row, or with --json a record (extra: more JSON members, may be NULL). */
void record(const struct bench_opts *o, const char *op, const char *impl, size_t size, double ms, double gbps, const char *extra);

/* Run tools/peers/SCRIPT with python3 (then /usr/bin/python3) and args (NULL-terminated), no shell;
 * stdout lines "KEY VALUE" fill vals[i] for keys[i] (NULL-terminated); stderr is dropped. Returns
 * how many keys were found, -1 when the script is not found or no interpreter ran it successfully. */
int bench_peer(const char *script, const char *const *args, const char *const *keys, double *vals);

/* gemm.c, shared with mixed.c */
void gemm_record(const struct bench_opts *o, const char *impl, size_t m, size_t n, size_t k, double ms);
int parse_shapes(const char *list, size_t shapes[16][3], size_t *ns);
clrun_status time_gemm(clrun_ctx *ctx, clrun_gemm_desc *d, clrun_gemm_backend be, int reps, double *ms);

/* canny.c, shared with pipeline.c: a natural-looking w×h 8-bit gray frame (deterministic per seed) */
void bench_make_frame(unsigned char *img, size_t w, size_t h, uint64_t seed);

int bench_transfer(const struct bench_opts *o);
int bench_launch(const struct bench_opts *o);
int bench_vector(const struct bench_opts *o);
int bench_gemm(const struct bench_opts *o);
int bench_mixed(const struct bench_opts *o);
int bench_canny(const struct bench_opts *o);
int bench_pipeline(const struct bench_opts *o);
int bench_int8(const struct bench_opts *o);
int bench_sparse(const struct bench_opts *o);
int bench_overlap(const struct bench_opts *o);
/* blocks.c */
int bench_random(const struct bench_opts *o);
int bench_scan(const struct bench_opts *o);
int bench_sort(const struct bench_opts *o);
int bench_hist(const struct bench_opts *o);
/* fft.c */
int bench_fft(const struct bench_opts *o);
/* conv.c */
int bench_conv(const struct bench_opts *o);
/* cuda.c */
int bench_cuda(const struct bench_opts *o);

#endif
