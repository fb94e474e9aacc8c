/* batch.c — Canny over files on several devices at once (clrun_canny_files): host threads read and
 * decode the inputs and encode and write the edges while a device pipeline (clrun_pipe_canny) per
 * context computes; each image goes to the device that would finish it first by the weights, and a
 * device that fails gives its images to the others. */
#include "opkit.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The batch:
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
    clrun_status st; /* a failure's status */
    int bad_input;   /* the failure was reading or decoding the input */
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
    const char *const *in, *const *dst;
    struct dev *dev;
    int ndev;
    int n, next_read, sent, ahead, quit;
    clrun_canny_report *report;
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
        const double t0 = now();
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
            f->st = st, f->bad_input = !enc;
        }
        if (enc) clrun_image_free(&f->img);
        pthread_mutex_lock(&b->mu);
        if (!enc && st) release(b, f);
        *(enc ? &f->t_write : &f->t_read) = now() - t0;
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
    if (!d->dead && d->b->report && d->b->report->device) d->b->report->device(d->b->report->arg, (unsigned)(d - d->b->dev), d->err);
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
        f->st = st;
    } else if (st) {
        clrun_image_free(&f->img);
        release(b, f);
        snprintf(f->err, sizeof f->err, "%s: %s", b->in[(intptr_t)tag], clrun_last_error(text_of));
        f->st = st, f->state = F_FAILED;
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
 * pipeline refuses it is dead and the next one is tried. Returns CLRUN_OK, or the status when every
 * device is dead (the frame then failed). */
static clrun_status send_frame(struct batch *b, int i)
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
            if (!f->st) f->st = CLRUN_CL_ERROR;
            clrun_image_free(&f->img);
            release(b, f);
            f->state = F_FAILED;
            const clrun_status st = f->st;
            pthread_cond_broadcast(&b->cv);
            pthread_mutex_unlock(&b->mu);
            return st;
        }
        f->state = F_SENT;
        pthread_mutex_unlock(&b->mu);
        struct dev *d = &b->dev[best];
        clrun_status st = clrun_pipe_send(d->pp, &f->img, (void *)(intptr_t)i);
        if (!st) return d->frames++, CLRUN_OK;
        device_failed(d, clrun_last_error(d->ctx)); /* the pipeline can go on no more */
        pthread_mutex_lock(&b->mu);
        snprintf(f->err, sizeof f->err, "%s: %s", b->in[i], d->err);
        f->st = st;
        pthread_mutex_unlock(&b->mu);
    }
}

/* Send the frames their failed devices gave back; returns CLRUN_OK or the status of a frame no device
 * could take. */
static clrun_status resend(struct batch *b)
{
    clrun_status rc = CLRUN_OK;
    for (int again = 1; again;) {
        again = 0;
        for (int i = 0; i < b->sent; i++) {
            pthread_mutex_lock(&b->mu);
            const int r = b->f[i].retry;
            pthread_mutex_unlock(&b->mu);
            if (r) {
                const clrun_status e = send_frame(b, i);
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

/* The first failed frame's text (after the batch). */
static const char *first_error(const struct batch *b)
{
    for (int i = 0; i < b->n; i++)
        if (b->f[i].state != F_DONE && b->f[i].err[0]) return b->f[i].err;
    return "unknown";
}

clrun_status clrun_canny_files(clrun_ctx *const *ctx, const double *w, unsigned nctx_, const clrun_canny_params *p, const char *const *in,
                               const char *const *dst, size_t n_, unsigned jobs_, clrun_canny_report *report)
{
    if (!ctx || !nctx_ || !p || (n_ && (!in || !dst)))
        return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_canny_files: NULL contexts, parameters, inputs or outputs, or no context");
    if (nctx_ > 1024 || n_ > INT_MAX / 2) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_canny_files: too many contexts or images");
    for (unsigned k = 0; k < nctx_; k++)
        if (!ctx[k]) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_canny_files: context %u is NULL", k);
        else if (w && !(w[k] >= 0 && w[k] < 1e300))
            return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_canny_files: weight %u is not a finite number >= 0", k);
    for (size_t i = 0; i < n_; i++)
        if (!in[i] || !dst[i]) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_canny_files: input or output %zu is NULL", i);
    if (report) report->read_s = report->device_s = report->write_s = 0, report->written = 0;
    if (report && report->sent) memset(report->sent, 0, nctx_ * sizeof *report->sent);
    if (!n_) return CLRUN_OK;
    const int nctx = (int)nctx_, n = (int)n_, jobs = jobs_ ? (int)(jobs_ < 256 ? jobs_ : 256) : 4;
    double t[5] = {0};
    struct batch b = {.in = in, .dst = dst, .n = n, .ahead = jobs + PIPE_DEPTH * nctx, .ndev = nctx, .report = report};
    pthread_t *th = calloc((size_t)jobs, sizeof *th);
    b.dev = calloc((size_t)nctx, sizeof *b.dev);
    if (!th || !b.dev || !(b.f = calloc((size_t)n, sizeof *b.f))) {
        free(th), free(b.dev);
        return clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "canny files: out of memory");
    }
    pthread_mutex_init(&b.mu, NULL);
    pthread_cond_init(&b.cv, NULL);
    int started = 0;
    clrun_status rc = CLRUN_OK;
    clrun_status first = CLRUN_OK; /* the first pipeline refused: bad parameters refuse them all */
    for (int k = 0; k < nctx && !rc; k++) {
        b.dev[k] = (struct dev){&b, ctx[k], NULL, w ? w[k] : 1.0, 0, 0, {0}};
        clrun_status st = clrun_pipe_canny(ctx[k], p, PIPE_DEPTH, batch_deliver, &b.dev[k], &b.dev[k].pp);
        if (st) device_failed(&b.dev[k], clrun_last_error(ctx[k]));
        if (st && !first) first = st;
    }
    int alive = 0;
    for (int k = 0; k < nctx; k++) alive += !b.dev[k].dead;
    if (!alive) rc = clrun__fail(NULL, first, "canny files: no device can run Canny: %s", b.dev[0].err);
    while (!rc && started < jobs && pthread_create(&th[started], NULL, batch_worker, &b) == 0) started++;
    if (!rc && !started) rc = clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "canny files: cannot start a thread");
    const int setup_failed = rc != CLRUN_OK; /* then no image is reported: the status says it all */
    char setup_err[1024] = "";
    if (setup_failed) snprintf(setup_err, sizeof setup_err, "%s", clrun_last_error(NULL));
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
        const double t0 = now();
        rc = resend(&b);
        if (!rc && decoded) rc = send_frame(&b, i);
        t[3] += now() - t0;
        if (report && report->progress) report->progress(report->arg, (size_t)i + 1, (size_t)n);
    }
    const double t0 = now();
    for (int more = 1; more;) { /* flush every pipeline; a device failing now gives its frames to the others */
        for (int k = 0; k < nctx; k++)
            if (b.dev[k].pp) clrun_pipe_flush(b.dev[k].pp); /* a failure was delivered with its frame */
        more = 0;
        for (int i = 0; i < b.sent; i++) more |= b.f[i].retry;
        if (more) {
            const clrun_status e = resend(&b);
            if (e && !rc) rc = e;
        }
    }
    t[3] += now() - t0;
    for (int k = 0; k < nctx; k++) clrun_pipe_free(b.dev[k].pp);
    pthread_mutex_lock(&b.mu);
    b.sent = n, b.quit = 1;
    if (rc) b.next_read = n; /* no more reads after every device failed */
    pthread_cond_broadcast(&b.cv);
    pthread_mutex_unlock(&b.mu);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    size_t written = 0;
    for (int i = 0; i < n; i++) { /* in order: what happened to each frame */
        struct frame *f = &b.f[i];
        t[2] += f->t_read, t[4] += f->t_write;
        if (f->state != F_DONE && f->state != F_FAILED && !f->st) /* never sent: every device had failed */
            f->st = rc ? rc : CLRUN_CL_ERROR, snprintf(f->err, sizeof f->err, "%s: not done (no device was left)", in[i]);
        if (f->state == F_DONE) written++;
        if (report && report->image && !setup_failed)
            report->image(report->arg, (size_t)i, f->state == F_DONE ? CLRUN_OK : f->st, f->bad_input, f->err);
        if (f->state != F_DONE && !rc) rc = f->st;
        if (f->state != F_DONE) clrun_image_free(&f->img);
    }
    if (report) {
        report->read_s = t[2], report->device_s = t[3], report->write_s = t[4], report->written = written;
        for (int k = 0; k < nctx && report->sent; k++) report->sent[k] = (size_t)b.dev[k].frames;
    }
    if (setup_failed) clrun__fail(NULL, rc, "%s", setup_err); /* the callbacks may have called clrun, which replaced it */
    else if (rc)
        clrun__fail(NULL, rc, "canny files: %zu of %d images failed or were not done (the first: %s)", (size_t)n - written, n,
                    first_error(&b));
    pthread_mutex_destroy(&b.mu);
    pthread_cond_destroy(&b.cv);
    free(b.f), free(b.dev);
    free(th);
    return rc;
}

clrun_status clrun_group_canny_files(clrun_group *g, const clrun_canny_params *p, const char *const *inputs, const char *const *outputs,
                                     size_t n, unsigned jobs, clrun_canny_report *report)
{
    if (!g) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_group_canny_files: g is NULL");
    const unsigned nd = clrun_group_size(g);
    clrun_ctx **ctx = calloc(nd, sizeof *ctx);
    double *w = calloc(nd, sizeof *w);
    clrun_status st = !ctx || !w ? clrun__fail(NULL, CLRUN_HOST_OUT_OF_MEMORY, "canny files: out of memory") : clrun_group_weights(g, w);
    for (unsigned k = 0; !st && k < nd; k++) ctx[k] = clrun_group_ctx(g, k);
    if (!st) st = clrun_canny_files(ctx, w, nd, p, inputs, outputs, n, jobs, report);
    free(ctx), free(w);
    return st;
}
