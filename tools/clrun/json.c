/* json.c — the CLI's --json records, written with jansson (Debian: libjansson-dev); one schema per
 * command, in docs/CLI.md. Under --json a failing command ends its records with an error record,
 * {"error": {"exit", "meaning", "message"}}: main() prints it from the exit status and the last
 * "clrun ..." message written to standard error, which is kept as it is written. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_json_mode;
static FILE *records = NULL; /* where the records went: standard output, or standard error (-o -) */

static void emit(FILE *f, json_t *rec, int digits)
{
    if (!rec) return;
    records = f;
    /* one line: ", " and ": " between members */
    char *text = json_dumps(rec, JSON_REAL_PRECISION(digits) | JSON_ENCODE_ANY);
    json_decref(rec);
    if (!text) {
        fputs("{\"error\": {\"exit\": 1, \"meaning\": \"runtime failure\", \"message\": \"out of memory writing JSON\"}}\n", f);
        return;
    }
    fprintf(f, "%s\n", text);
    fflush(f);
    free(text);
}

void cli_json_emit(FILE *f, json_t *rec) { emit(f, rec, 10); }
void cli_json_emit_exact(FILE *f, json_t *rec) { emit(f, rec, 17); }

json_t *cli_json_num(double v)
{
    if (isfinite(v)) return json_real(v);
    return json_string(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"); /* JSON has no inf or NaN */
}

json_t *cli_json_text(const char *s) { return s ? json_string(s) : json_null(); }

json_t *cli_json_shape(const clrun_array *a)
{
    json_t *s = json_array();
    for (unsigned i = 0; i < a->ndim; i++) json_array_append_new(s, json_integer((json_int_t)a->shape[i]));
    return s;
}

json_t *cli_json_wrote(const char *op, const char *out, const clrun_array *a)
{
    return json_pack("{s:s, s:s, s:s, s:o}", "op", op, "output", out, "dtype", clrun_dtype_name(a->dtype), "shape", cli_json_shape(a));
}

/* ---- the error record ------------------------------------------------------------------------ */

static char said[8192]; /* what standard error was given, from the last line that starts with "clrun" */
static size_t nsaid;
static int line_start = 1;
static FILE *real_stderr;

static ssize_t tee_write(void *cookie, const char *buf, size_t size)
{
    (void)cookie;
    size_t done = fwrite(buf, 1, size, real_stderr);
    fflush(real_stderr);
    for (size_t i = 0; i < size; i++) {
        if (line_start && size - i >= 5 && memcmp(buf + i, "clrun", 5) == 0) nsaid = 0; /* a new message */
        if (nsaid < sizeof said - 1) said[nsaid++] = buf[i];
        line_start = buf[i] == '\n';
    }
    return (ssize_t)done;
}

void cli_json_capture_stderr(void)
{
    static cookie_io_functions_t io = {NULL, tee_write, NULL, NULL};
    int fd = dup(fileno(stderr));
    real_stderr = fd >= 0 ? fdopen(fd, "w") : NULL;
    FILE *tee = real_stderr ? fopencookie(NULL, "w", io) : NULL;
    if (!tee) return;
    setvbuf(tee, NULL, _IONBF, 0);
    stderr = tee;
}

static const char *meaning(int rc)
{
    switch (rc) {
    case EXIT_RUNTIME: return "runtime failure";
    case EXIT_USAGE: return "usage error";
    case EXIT_NODEVICE: return "no OpenCL platform or device";
    case EXIT_BUILD: return "kernel build failure";
    case EXIT_CHECK: return "check mismatch";
    case EXIT_TIMEOUT: return "timeout";
    default: return "failure";
    }
}

void cli_json_error(int rc)
{
    size_t n = nsaid;
    while (n && (said[n - 1] == '\n' || said[n - 1] == ' ')) n--;
    said[n] = 0;
    cli_json_emit(records ? records : stdout,
                  json_pack("{s:{s:i, s:s, s:s}}", "error", "exit", rc, "meaning", meaning(rc), "message", n ? said : meaning(rc)));
}
