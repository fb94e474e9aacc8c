/* cli.c — `clrun op canny`: Canny edges of PNG, JPEG and PGM/PPM images, one file or many into a folder. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char *canny_help =
    "usage: clrun op canny IN.png... -o OUT [--low T] [--high T] [--l2] [--aperture 3|5|7]\n"
    "                     [--blur K[,SIGMA]] [--overwrite] [--json] [-d SPEC]\n\n"
    "Canny edges of 8-bit images, equal byte for byte to OpenCV's cv2.Canny(img, low, high,\n"
    "apertureSize, L2gradient) on the image cv2.imread gives (PNG of any bit depth, 16-bit and\n"
    "alpha reduced as imread does; JPEG; binary PGM/PPM). Color images use, per pixel, the channel with the\n"
    "largest gradient. Edges are written as 8-bit gray (0 or 255): PNG, or PGM when OUT ends in .pgm.\n"
    "With one input OUT is the output file; with several, OUT is a folder (created when missing) that\n"
    "gets NAME.png for each input NAME.ext. Outputs that would collide (two inputs of one NAME) or\n"
    "land on an input are refused before anything is written, unless --overwrite allows the latter.\n"
    "OUT - writes the edges of one input to standard output (PNG). Several inputs stream: images are\n"
    "read and decoded, and edges encoded and written, on --jobs threads, while the device pipeline\n"
    "(clrun_pipe_canny) uploads, runs Canny on and downloads up to 3 frames at once, in order; a file\n"
    "that fails is reported by name and the others are still done (the exit status then says the worst\n"
    "failure, after a count).\n\n"
    "  -o, --output OUT    output file, or folder for several inputs\n"
    "  --overwrite         an output may replace one of the inputs\n"
    "  --low T, --high T   hysteresis thresholds (default 50 and 100; swapped when low > high)\n"
    "  --l2                gradient magnitude sqrt(dx²+dy²) instead of |dx|+|dy|\n"
    "  --aperture N        Sobel aperture: 3 (default), 5 or 7\n"
    "  --blur K[,SIGMA]    Gaussian pre-blur, as cv2.GaussianBlur(img, (K, K), SIGMA) first: K 3, 5 or 7;\n"
    "                      SIGMA 0 (the default) is OpenCV's own kernel for K; off by default, as in OpenCV\n"
    "  -d, --device SPEC   device (default: $CLRUN_DEVICE, else the best)\n"
    "  --devices GROUP     several devices (all, gpu, cpu, or selection strings 0,2; default\n"
    "                      $CLRUN_DEVICES), a pipeline each: each image goes to the device that would\n"
    "                      finish it first by the devices' measured speeds, so a slow one takes few or\n"
    "                      none; a device that fails takes no more and its images go to the others\n"
    "  --timeout S         end the command (exit 6) when an image takes more than S seconds (default 600,\n"
    "                      0: none)\n"
    "  -j, --jobs N        threads that read, decode, encode and write images while the device works\n"
    "                      (default: the machine's cores plus one; several inputs only)\n"
    "  --json              one record per input, in order, on standard output (standard error with -o -):\n"
    "                      {\"op\": \"canny\", \"input\", \"output\"}, a failure adding \"error\" and \"exit\"\n"
    "  -q, --quiet         no \"IN -> OUT\" lines and no progress line (shown on a terminal for batches\n"
    "                      that run longer than a second: images done, images/s, time left)\n"
    "  --stages            after the run, the time per stage on stderr: finding the devices and opening\n"
    "                      one (the first image also loads the kernels); reading\n"
    "                      and decoding (summed over threads); the main thread's time in the device\n"
    "                      pipeline (sending frames, waiting for edges) and the device time of the\n"
    "                      kernels; encoding and writing (summed over threads)\n"
    "  --help              this text\n\n"
    "Exit codes: 0; 1 runtime failure; 2 bad command line or input file; 3 no device; 4 kernel build failure; 6 timeout.\n";

/* OUT/NAME.png for input path in */
static void out_path(char *buf, size_t size, const char *dir, const char *in)
{
    const char *base = strrchr(in, '/');
    base = base ? base + 1 : in;
    const char *dot = strrchr(base, '.');
    int len = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
    snprintf(buf, size, "%s/%.*s.png", dir, len, base);
}

/* Refuse, before anything is written, two outputs of one name and an output that is an input. */
static int check_outputs(char (*dst)[4400], int nin, char **in, int overwrite)
{
    for (int i = 0; i < nin; i++) {
        if (strcmp(dst[i], "-") == 0) continue;
        for (int j = 0; j < i; j++)
            if (cli_same_file(dst[i], dst[j]))
                return cli_usage_error("op canny", "%s and %s would both write %s; give them different names or run them apart", in[j],
                                       in[i], dst[i]);
        for (int j = 0; j < nin && !overwrite; j++)
            if (cli_same_file(dst[i], in[j]))
                return cli_usage_error("op canny", "the edges of %s would replace the input %s (--overwrite allows it)", in[i], in[j]);
    }
    return 0;
}

/* ---- the batch: host threads around device pipelines ----
 *
 * Frame i goes READ (a worker reads and decodes it) -> DECODED -> the main thread sends it, in order,
 * into the pipeline (clrun_pipe_canny) of one of the devices -> SENT (its decoded image kept until
 * the edges come back) -> the pipeline delivers its edges (in the main thread) -> ENCODE (a worker
 * encodes and writes them) -> DONE. With several devices, each frame goes to the device that would
 * finish it first by the devices' weights ((frames waiting + 1) / weight, ties to the lower index),
 * so a slow device takes few frames or none. A device that fails (not one image's own failure)
 * takes no more frames, and its frames go to the others. Workers take encodes first (they free
 * memory), and read at most `ahead` frames past the last one sent, so memory stays bounded. Errors
 * are kept per frame and printed in order at the end. */
enum frame_state { F_WAIT, F_READING, F_DECODED, F_SENT, F_ENCODE, F_WRITING, F_DONE, F_FAILED };

struct frame {
    enum frame_state state;
    clrun_image img; /* decoded input, then the edges */
    int rc;          /* exit code of a failure */
    int retry;       /* its device failed: send it again */
    char err[1400];
    double t_read, t_write;
    size_t hold; /* bytes of decoded input reserved for it (batch.held) */
};

struct batch;
struct dev {
    struct batch *b;
    clrun_ctx *ctx;
    clrun_pipe *pp;
    double w;
    int dead, frames; /* frames: sent to it */
    char err[600];
};

struct batch {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct frame *f;
    char **in;
    char (*dst)[4400];
    struct dev *dev;
    int ndev;
    int n, next_read, sent, ahead, quit;
    size_t held; /* decoded input bytes reserved by frames being read or kept until their edges return */
};

/* Decoded input a batch keeps at once: frames past the next one to send wait to be read while
 * more would pass this, whatever their files claim (each image's size from its header). */
#define BATCH_BYTES ((size_t)1 << 30)

/* Frame f's decoded input is gone (b->mu held): its reservation goes back. */
static void release(struct batch *b, struct frame *f)
{
    b->held -= f->hold;
    f->hold = 0;
    pthread_cond_broadcast(&b->cv);
}

static void *batch_worker(void *arg)
{
    struct batch *b = arg;
    pthread_mutex_lock(&b->mu);
    for (;;) {
        int i = -1, enc = 0;
        for (int j = 0; j < b->sent && i < 0; j++)
            if (b->f[j].state == F_ENCODE) i = j, enc = 1;
        if (i < 0 && b->next_read < b->n && b->next_read < b->sent + b->ahead) i = b->next_read++;
        if (i < 0) {
            if (b->quit) break;
            pthread_cond_wait(&b->cv, &b->mu);
            continue;
        }
        struct frame *f = &b->f[i];
        f->state = enc ? F_WRITING : F_READING;
        pthread_mutex_unlock(&b->mu);
        const double t0 = cli_now();
        clrun_status st = CLRUN_OK;
        if (!enc) { /* reserve the decoded bytes first: frames past the next to send wait for memory */
            clrun_image shape;
            st = clrun_image_info(b->in[i], &shape);
            pthread_mutex_lock(&b->mu);
            if (!st) {
                const size_t need = shape.stride * shape.height;
                while (b->held && b->held + need > BATCH_BYTES && i != b->sent && !b->quit) pthread_cond_wait(&b->cv, &b->mu);
                b->held += need, f->hold = need;
            }
            pthread_mutex_unlock(&b->mu);
        }
        if (!st) st = enc ? clrun_image_write(b->dst[i], &f->img) : clrun_image_read(b->in[i], &f->img);
        if (st) {
            snprintf(f->err, sizeof f->err, "%s", clrun_last_error(NULL));
            f->rc = !enc && (st == CLRUN_NOT_FOUND || st == CLRUN_FORMAT_ERROR) ? EXIT_USAGE : cli_exit_code(st);
        }
        if (enc) clrun_image_free(&f->img);
        pthread_mutex_lock(&b->mu);
        if (!enc && st) release(b, f);
        *(enc ? &f->t_write : &f->t_read) = cli_now() - t0;
        f->state = st ? F_FAILED : enc ? F_DONE : F_DECODED;
        pthread_cond_broadcast(&b->cv);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/* A device failed: it takes no more frames (the main thread; its text kept for the report). */
static void device_failed(struct dev *d, const char *text)
{
    if (!d->dead) snprintf(d->err, sizeof d->err, "%s: %s", clrun_ctx_device(d->ctx)->name, text);
    d->dead = 1;
}

/* A pipeline's callback (in the main thread): keep a copy of the edges for a worker to encode. */
static void batch_deliver(void *arg, void *tag, clrun_status st, const clrun_image *edges)
{
    struct dev *d = arg;
    struct batch *b = d->b;
    struct frame *f = &b->f[(intptr_t)tag];
    clrun_image copy = {0};
    const clrun_ctx *text_of = d->ctx; /* the pipeline's failures are the context's; clrun_image_new's the thread's */
    const int own = st == CLRUN_INVALID_ARG || st == CLRUN_FORMAT_ERROR; /* the image's own failure, else the device's */
    if (!st && (st = clrun_image_new(&copy, edges->width, edges->height, 1)) != CLRUN_OK) text_of = NULL;
    for (size_t y = 0; !st && y < edges->height; y++) memcpy(copy.data + y * copy.stride, edges->data + y * edges->stride, edges->width);
    if (st && !own && text_of) device_failed(d, clrun_last_error(text_of));
    pthread_mutex_lock(&b->mu);
    if (st && !own && text_of) {
        f->retry = 1; /* the main thread sends it to another device */
        snprintf(f->err, sizeof f->err, "%s: %s", b->in[(intptr_t)tag], d->err);
        f->rc = cli_exit_code(st);
    } else if (st) {
        clrun_image_free(&f->img);
        release(b, f);
        snprintf(f->err, sizeof f->err, "%s: %s", b->in[(intptr_t)tag], clrun_last_error(text_of));
        f->rc = cli_exit_code(st), f->state = F_FAILED;
    } else {
        clrun_image_free(&f->img);
        release(b, f);
        f->img = copy, f->state = F_ENCODE;
    }
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

/* Frames a device pipeline holds at once: enough to overlap one frame's upload, Canny and download
 * with the next's. */
enum { PIPE_DEPTH = 3 };

/* Send frame i (decoded, image kept) to the device that would finish it first; a device whose
 * pipeline refuses it is dead and the next one is tried. Returns 0, or the exit code when every
 * device is dead (the frame then failed). */
static int send_frame(struct batch *b, int i)
{
    struct frame *f = &b->f[i];
    for (;;) {
        int best = -1;
        double cost = 0;
        for (int k = 0; k < b->ndev; k++) {
            const struct dev *d = &b->dev[k];
            const double c = (clrun_pipe_pending(d->pp) + 1) / d->w;
            if (!d->dead && d->w > 0 && (best < 0 || c < cost)) best = k, cost = c;
        }
        pthread_mutex_lock(&b->mu);
        f->retry = 0;
        if (best < 0) { /* no device left */
            if (!f->err[0]) snprintf(f->err, sizeof f->err, "%s: no device is left to run it", b->in[i]);
            if (!f->rc) f->rc = EXIT_RUNTIME;
            clrun_image_free(&f->img);
            release(b, f);
            f->state = F_FAILED;
            const int rc = f->rc;
            pthread_cond_broadcast(&b->cv);
            pthread_mutex_unlock(&b->mu);
            return rc;
        }
        f->state = F_SENT;
        pthread_mutex_unlock(&b->mu);
        struct dev *d = &b->dev[best];
        clrun_status st = clrun_pipe_send(d->pp, &f->img, (void *)(intptr_t)i);
        if (!st) return d->frames++, 0;
        device_failed(d, clrun_last_error(d->ctx)); /* the pipeline can go on no more */
        pthread_mutex_lock(&b->mu);
        snprintf(f->err, sizeof f->err, "%s: %s", b->in[i], d->err);
        f->rc = cli_exit_code(st);
        pthread_mutex_unlock(&b->mu);
    }
}

/* Send the frames their failed devices gave back; returns 0 or the exit code of a frame no device
 * could take. */
static int resend(struct batch *b)
{
    int rc = 0;
    for (int again = 1; again;) {
        again = 0;
        for (int i = 0; i < b->sent; i++) {
            pthread_mutex_lock(&b->mu);
            const int r = b->f[i].retry;
            pthread_mutex_unlock(&b->mu);
            if (r) {
                const int e = send_frame(b, i);
                if (e && !rc) rc = e;
                again = 1;
            }
        }
    }
    return rc;
}

static void poll_all(struct batch *b)
{
    for (int k = 0; k < b->ndev; k++) clrun_pipe_poll(b->dev[k].pp);
}

/* --json: one record per input, in order, on standard output (standard error when the edges go
 * there): {"op": "canny", "input", "output"}, and for a failure "error" (the text) and "exit" (its
 * exit status) too. */
static void json_record(const char *in, const char *out, const char *err, int rc)
{
    json_t *rec = json_pack("{s:s, s:s, s:s}", "op", "canny", "input", in, "output", out);
    if (err) json_object_update_new(rec, json_pack("{s:s, s:i}", "error", err, "exit", rc));
    cli_json_emit(cli_notes(out), rec);
}

int canny_batch(clrun_ctx *const *ctx, const double *w, int nctx, const clrun_canny_params *p, char **in, char (*dst)[4400], int n,
                int jobs, int quiet, double t[5], int *done)
{
    const double start = cli_now();
    double shown = 0;
    const int progress = !quiet && isatty(STDERR_FILENO); /* a progress line on a terminal, once the batch has run a second */
    struct batch b = {.in = in, .dst = dst, .n = n, .ahead = jobs + PIPE_DEPTH * nctx, .ndev = nctx};
    pthread_t *th = calloc((size_t)jobs, sizeof *th);
    b.dev = calloc((size_t)nctx, sizeof *b.dev);
    if (!th || !b.dev || !(b.f = calloc((size_t)n, sizeof *b.f))) {
        free(th), free(b.dev);
        return fprintf(stderr, "clrun op canny: out of memory\n"), EXIT_RUNTIME;
    }
    pthread_mutex_init(&b.mu, NULL);
    pthread_cond_init(&b.cv, NULL);
    int started = 0, rc = 0, failed = 0;
    for (int k = 0; k < nctx && !rc; k++) {
        b.dev[k] = (struct dev){&b, ctx[k], NULL, w ? w[k] : 1.0, 0, 0, {0}};
        if (clrun_pipe_canny(ctx[k], p, PIPE_DEPTH, batch_deliver, &b.dev[k], &b.dev[k].pp))
            device_failed(&b.dev[k], clrun_last_error(ctx[k]));
    }
    int alive = 0;
    for (int k = 0; k < nctx; k++) alive += !b.dev[k].dead;
    if (!alive) rc = (fprintf(stderr, "clrun op canny: %s\n", b.dev[0].err), EXIT_RUNTIME);
    while (!rc && started < jobs && pthread_create(&th[started], NULL, batch_worker, &b) == 0) started++;
    if (!rc && !started) rc = (fprintf(stderr, "clrun op canny: cannot start a thread\n"), EXIT_RUNTIME);
    for (int i = 0; i < n && !rc; i++) {
        struct frame *f = &b.f[i];
        pthread_mutex_lock(&b.mu);
        while (f->state != F_DECODED && f->state != F_FAILED) {
            int pending = 0;
            for (int k = 0; k < nctx; k++) pending += (int)clrun_pipe_pending(b.dev[k].pp);
            if (!pending) {
                pthread_cond_wait(&b.cv, &b.mu);
                continue;
            }
            /* results may come back while the frame decodes: hand them to the encoders meanwhile */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 2000000;
            if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
            pthread_cond_timedwait(&b.cv, &b.mu, &ts);
            pthread_mutex_unlock(&b.mu);
            poll_all(&b);
            pthread_mutex_lock(&b.mu);
        }
        const int decoded = f->state == F_DECODED;
        b.sent = i + 1;
        pthread_cond_broadcast(&b.cv);
        pthread_mutex_unlock(&b.mu);
        cli_progress(); /* the time limit counts per image */
        const double t0 = cli_now();
        rc = resend(&b);
        if (!rc && decoded) rc = send_frame(&b, i);
        t[3] += cli_now() - t0;
        const double el = cli_now() - start;
        if (progress && el >= 1 && el - shown >= 0.25) {
            shown = el;
            fprintf(stderr, "\r%d/%d images, %.1f/s, %.0f s left   ", i + 1, n, (i + 1) / el, (n - i - 1) * el / (i + 1));
        }
    }
    const double t0 = cli_now();
    for (int more = 1; more;) { /* flush every pipeline; a device failing now gives its frames to the others */
        for (int k = 0; k < nctx; k++)
            if (b.dev[k].pp) clrun_pipe_flush(b.dev[k].pp); /* a failure was delivered with its frame */
        more = 0;
        for (int i = 0; i < b.sent; i++) more |= b.f[i].retry;
        if (more) {
            const int e = resend(&b);
            if (e && !rc) rc = e;
        }
    }
    t[3] += cli_now() - t0;
    for (int k = 0; k < nctx; k++) clrun_pipe_free(b.dev[k].pp);
    if (shown > 0) fprintf(stderr, "\r%*s\r", 60, "");
    pthread_mutex_lock(&b.mu);
    b.sent = n, b.quit = 1;
    if (rc) b.next_read = n; /* no more reads after every device failed */
    pthread_cond_broadcast(&b.cv);
    pthread_mutex_unlock(&b.mu);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    for (int k = 0; k < nctx; k++) /* a device that failed while others took its frames: said once */
        if (b.dev[k].dead && nctx > 1) fprintf(stderr, "clrun op canny: device %d failed and took no more images: %s\n", k, b.dev[k].err);
    for (int k = 0; k < nctx && nctx > 1 && !quiet; k++) /* how the frames were dealt */
        fprintf(stderr, "device %d, %s: %d image%s sent\n", k, clrun_ctx_device(b.dev[k].ctx)->name, b.dev[k].frames,
                b.dev[k].frames == 1 ? "" : "s");
    for (int i = 0; i < n; i++) { /* in order: what happened to each frame */
        struct frame *f = &b.f[i];
        t[2] += f->t_read, t[4] += f->t_write;
        if (f->state == F_DONE && ++*done && quiet == CANNY_JSON) json_record(in[i], dst[i], NULL, 0);
        else if (f->state == F_DONE && !quiet && n > 1) printf("%s -> %s\n", in[i], dst[i]);
        else if (f->state == F_FAILED) {
            fprintf(stderr, "clrun op canny: %s\n", f->err), failed++; /* the text names the file */
            if (quiet == CANNY_JSON) json_record(in[i], dst[i], f->err, f->rc);
        }
        if (f->state == F_FAILED && f->rc > rc) rc = f->rc;
        if (f->state != F_DONE) clrun_image_free(&f->img);
    }
    if (n > 1 && (failed || *done < n))
        fprintf(stderr, "clrun op canny: %d of %d images failed%s\n", n - *done, n, *done + failed < n ? " or were not done" : "");
    pthread_mutex_destroy(&b.mu);
    pthread_cond_destroy(&b.cv);
    free(b.f), free(b.dev);
    free(th);
    return rc;
}

#ifdef CLRUN_HAVE_MPI
#include <clrun_mpi.h>

/* The batch over the ranks of mpirun: each rank opens the device at its local rank (-d: among
 * those SPEC names), then takes chunks of `jobs` files from a counter on rank 0 until none are left,
 * each chunk a canny_batch; rank 0 prints one summary line. A rank without a device makes every
 * rank end with its status. */
static int canny_ranks(const char *spec, const clrun_canny_params *p, char **in, char (*dst)[4400], int n, int jobs, int quiet)
{
    clrun_ctx *ctx = NULL;
    clrun_status st = clrun_mpi_open(MPI_COMM_WORLD, spec, &ctx);
    int rc = st ? cli_fail("op canny", NULL, st) : 0;
    if ((rc = cli_mpi_max(rc))) return clrun_close(ctx), rc;
    clrun_mpi_counter *counter = NULL;
    if ((st = clrun_mpi_counter_new(MPI_COMM_WORLD, 0, &counter))) return clrun_close(ctx), cli_fail("op canny", NULL, st);
    int done = 0, taken = 0;
    double t[5] = {0};
    for (;;) {
        const long start = clrun_mpi_counter_take(counter, jobs);
        if (start < 0 || start >= n) break;
        const int count = (int)(n - start < jobs ? n - start : jobs), before = done;
        const int e = canny_batch(&ctx, NULL, 1, p, in + start, dst + start, count, jobs, quiet, t, &done);
        taken += count;
        if (e > rc) rc = e;
        if (e && done - before == 0 && e != EXIT_USAGE) break; /* the device failed: take no more */
    }
    clrun_mpi_counter_free(counter);
    clrun_close(ctx);
    const int all_done = cli_mpi_sum(done), all_taken = cli_mpi_sum(taken);
    rc = cli_mpi_max(rc);
    if (cli_mpi_rank() == 0)
        fprintf(stderr, "clrun op canny: %d images on %d ranks: %d written, %d failed%s\n", n, cli_mpi_size(), all_done, n - all_done,
                all_taken < n ? " or were not done" : "");
    return rc;
}
#endif

static int cmd_op_canny(int argc, char **argv)
{
    const char *spec = NULL, *out = NULL, *devices = NULL;
    clrun_canny_params p = {50.0, 100.0, 0, 3, 0, 0.0};
    int overwrite = 0, stages = 0, quiet = 0;
    long jobs = sysconf(_SC_NPROCESSORS_ONLN) + 1; /* one more than the cores covers the waits on files and on the device */
    static const struct option opts[] = {
        {"overwrite", no_argument, NULL, 'W'},    {"stages", no_argument, NULL, 'S'},         {"jobs", required_argument, NULL, 'j'},
        {"quiet", no_argument, NULL, 'q'},        {"devices", required_argument, NULL, 'G'},  {"output", required_argument, NULL, 'o'},
        {"device", required_argument, NULL, 'd'}, {"low", required_argument, NULL, 'L'},      {"high", required_argument, NULL, 'H'},
        {"l2", no_argument, NULL, '2'},           {"aperture", required_argument, NULL, 'A'}, {"blur", required_argument, NULL, 'B'},
        {"help", no_argument, NULL, 'h'},         {"json", no_argument, NULL, 'J'},           {0}};
    int c;
    struct cli_opts opt = {.sub = "op canny", .help = canny_help, .first = 2};
    while ((c = cli_next_opt(&opt, argc, argv, "o:d:j:qh", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        char *end = NULL;
        if (c == 'o') out = optarg;
        else if (c == 'd') spec = optarg;
        else if (c == 'G') devices = optarg;
        else if (c == '2') p.l2 = 1;
        else if (c == 'W') overwrite = 1;
        else if (c == 'S') stages = 1;
        else if (c == 'q' && quiet != CANNY_JSON) quiet = 1;
        else if (c == 'J') quiet = CANNY_JSON;
        else if (c == 'j') {
            jobs = strtol(optarg, &end, 10);
            if (!*optarg || *end || jobs < 1 || jobs > 1024) return cli_usage_error("op canny", "--jobs wants 1 to 1024, not '%s'", optarg);
        } else if (c == 'L' || c == 'H') {
            double v = strtod(optarg, &end);
            if (!*optarg || *end || !isfinite(v))
                return cli_usage_error("op canny", "--%s wants a number, not '%s'", c == 'L' ? "low" : "high", optarg);
            *(c == 'L' ? &p.low : &p.high) = v;
        } else if (c == 'A') {
            long v = strtol(optarg, &end, 10);
            if (!*optarg || *end || (v != 3 && v != 5 && v != 7))
                return cli_usage_error("op canny", "--aperture wants 3, 5 or 7, not '%s'", optarg);
            p.aperture = (int)v;
        } else if (c == 'B') {
            long k = strtol(optarg, &end, 10);
            double sigma = 0;
            if (*end == ',') sigma = strtod(end + 1, &end);
            if (!*optarg || *end || (k != 1 && k != 3 && k != 5 && k != 7) || !(sigma >= 0))
                return cli_usage_error("op canny", "--blur wants K or K,SIGMA with K 3, 5 or 7, not '%s'", optarg);
            p.blur = (int)k, p.blur_sigma = sigma;
        }
    }
    int nin = argc - optind;
    if (nin < 1) return cli_usage_error("op canny", "no input image");
    if (!out) return cli_usage_error("op canny", "no output (-o OUT.png, or -o FOLDER for several inputs)");
    if (nin > 1 && strcmp(out, "-") == 0) return cli_usage_error("op canny", "-o - takes one input; several need a folder");
    char(*dsts)[4400] = malloc((size_t)nin * sizeof *dsts);
    if (!dsts) return (fprintf(stderr, "clrun op canny: out of memory\n"), EXIT_RUNTIME);
    for (int i = 0; i < nin; i++) {
        if (nin > 1) out_path(dsts[i], sizeof dsts[i], out, argv[optind + i]);
        else snprintf(dsts[i], sizeof dsts[i], "%s", out);
    }
    int rc = check_outputs(dsts, nin, argv + optind, overwrite);
    if (!rc && nin > 1 && mkdir(out, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "clrun op canny: cannot create folder %s: %s\n", out, strerror(errno));
        rc = EXIT_RUNTIME;
    }
#ifdef CLRUN_HAVE_MPI
    if (!rc && cli_mpi_size() > 1) { /* under mpirun: the files dealt over the ranks */
        if (devices) rc = cli_usage_error("op canny", "under mpirun each rank takes one device (-d limits the candidates); not --devices");
        if (!rc) rc = canny_ranks(spec, &p, argv + optind, dsts, nin, jobs > 1 ? (int)jobs : 1, quiet);
        free(dsts);
        return rc;
    }
#endif
    clrun_ctx *ctx = NULL, *list[64], *const *ctxs = &ctx;
    clrun_group *grp = NULL;
    double t[5] = {cli_now(), 0, 0, 0, 0}, w[64]; /* --stages: open, read, Canny, write; t[0] the start */
    int nctx = 1;
    unsigned ndev = 0;
    if (!rc && devices && spec) rc = cli_usage_error("op canny", "give -d (one device) or --devices (a group), not both");
    if (!rc && stages) clrun_device_count(&ndev); /* the platforms' start-up, timed apart (cli_open reports a failure) */
    const double found = cli_now() - t[0];
    if (!rc && devices) {
        clrun_status st = clrun_group_open(&grp, devices);
        if (st == CLRUN_INVALID_ARG) rc = cli_usage_error("op canny", "%s", clrun_last_error(NULL));
        else if (st) rc = cli_fail("op canny", NULL, st);
        else if (clrun_group_size(grp) > 64) rc = cli_usage_error("op canny", "at most 64 devices");
        else if ((st = clrun_group_weights(grp, w))) rc = cli_fail("op canny", NULL, st);
        if (!rc) {
            nctx = (int)clrun_group_size(grp);
            for (int k = 0; k < nctx; k++) list[k] = clrun_group_ctx(grp, (unsigned)k);
            ctxs = list;
        }
    } else if (!rc) {
        rc = cli_open("op canny", spec, &ctx);
    }
    for (int k = 0; k < nctx && !rc && stages; k++)
        if (clrun_profile_start(ctxs[k]) != CLRUN_OK) rc = cli_fail("op canny", ctxs[k], CLRUN_CL_ERROR);
    t[1] = cli_now() - t[0];
    int done = 0;
    if (!rc)
        rc = canny_batch(ctxs, grp ? w : NULL, nctx, &p, argv + optind, dsts, nin, nin > 1 && jobs > 1 ? (int)jobs : 1, quiet, t, &done);
    if (!rc && nin == 1 && quiet != CANNY_JSON) fprintf(cli_notes(out), "wrote %s\n", out);
    if (stages && (ctx || grp) && done) {
        double dev = 0;
        for (int k = 0; k < nctx; k++) {
            const clrun_profile_entry *e = NULL;
            size_t ne = 0;
            if (clrun_profile_read(ctxs[k], &e, &ne) == CLRUN_OK)
                for (size_t j = 0; j < ne; j++) dev += e[j].total_ms;
        }
        fprintf(stderr,
                "stages over %d image%s, %.1f ms in all: find the devices %.1f ms and open %s %.1f ms (once); per image: read and "
                "decode %.2f ms, "
                "the device pipeline %.2f ms (waits included; kernels %.3f ms of device time), encode and write %.2f ms\n",
                done, done == 1 ? "" : "s", (cli_now() - t[0]) * 1e3, found * 1e3, nctx > 1 ? "them" : "one", (t[1] - found) * 1e3,
                t[2] * 1e3 / done, t[3] * 1e3 / done, dev / done, t[4] * 1e3 / done);
    }
    clrun_group_close(grp);
    clrun_close(ctx);
    free(dsts);
    return rc;
}

const struct cli_cmd cli_verbs_canny[] = {
    {"canny", "Canny edges of PNG, JPEG and PGM/PPM images, as cv2.Canny (clrun op canny --help; name it first)", cmd_op_canny, 0, 0, 0, 0,
     NULL, NULL},
    {0},
};
