/* settings.h — every CLRUN_* environment variable libclrun reads, in one table with one policy
 * (lib/settings.c); not installed.
 *
 * Policy: a variable that is unset or empty is unset. A value of the wrong form is refused with
 * CLRUN_INVALID_ARG and a text that names the variable, its value and the expected form: by the
 * getter that reads it, and by clrun_open, which checks every variable first. Calls that cannot fail
 * (clrun_cache_dir, the verbose flag) take a malformed value as unset. Values are read when used, so
 * a program may change them between calls. README.md's table of variables is checked against this
 * one by tests/test_settings.c. */
#ifndef CLRUN_SETTINGS_H
#define CLRUN_SETTINGS_H

#include "clrun.h"

/* Kinds: TEXT any string; FLAG 1/0 (also yes/no, true/false, on/off); CHOICE one word of the form's
 * `a`, `b` list; UINTS unsigned decimals separated by the form's separator (',' or 'x'), between
 * `lo` and `hi` of them; RETIRED a variable no longer read, refused when set, its form saying what
 * replaces it. X(ID, kind, lo, hi, form, effect); form and effect are docs/CLI.md markdown. */
/* The core's variables; each op folder with variables of its own keeps them in its settings.h as
 * the rows of a macro CLRUN__SETTINGS_<FOLDER>(X), named in its meson.build (op_settings), and the
 * build chains them into CLRUN__OP_SETTINGS (op_settings.h, generated). */
#define CLRUN__CORE_SETTINGS(X)                                                                                                         \
    X(DEVICE, TEXT, 0, 0, "a selection string", "default device: `PLATFORM:DEVICE`, an index, a name, `gpu`, `cpu` or `accelerator`")   \
    X(DEVICES, TEXT, 0, 0, "a group",                                                                                                   \
      "default device group (`clrun_group_open`, `--devices`): `all`, `gpu`, `cpu` or selection strings `0,2`")                         \
    X(GROUP_WEIGHTS, UINTS, 1, 8, "`W,W,...`",                                                                                          \
      "device groups: the devices' relative speeds, one integer per device in group order (0: give it nothing), instead of measuring "  \
      "them")                                                                                                                           \
    X(CACHE_DIR, TEXT, 0, 0, "a folder", "binary cache folder (else `$XDG_CACHE_HOME/clrun`, else `~/.cache/clrun`)")                   \
    X(NO_CACHE, FLAG, 0, 0, "`1` or `0`", "`1`: no binary cache")                                                                       \
    X(KERNEL_DIR, TEXT, 0, 0, "a folder", "load the kernel library's sources from this folder instead of the embedded copy")            \
    X(VERBOSE, FLAG, 0, 0, "`1` or `0`", "`1`: say on stderr when the cache misses, is corrupt or cannot be written")                   \
    X(STAGING, CHOICE, 0, 0, "`1`, `0` or `force`",                                                                                     \
      "transfers from ordinary memory: `1` staged when it pays (default), `0` straight to the driver, `force` always staged")           \
    X(PROFILE, FLAG, 0, 0, "`1` or `0`",                                                                                                \
      "`1`: every context records each kernel's device time and prints the table to stderr at `clrun_close`")                           \
    X(CUDA, FLAG, 0, 0, "`1` or `0`",                                                                                                   \
      "`1`: on NVIDIA GPUs, buffers from 4 MiB shared with the CUDA driver (`clrun_buf_cuda_address`) and kernels launched through it " \
      "where their probe passes (docs/CUDA.md); read once per context")                                                                 \
    X(CUDA_SYNC, CHOICE, 0, 0, "`semaphore` or `finish`",                                                                               \
      "kernels launched through the CUDA driver: ordered with the OpenCL queue by external semaphores (default, where the driver "      \
      "has them) or by finishing the queue before and the stream after")

#include "op_settings.h"

#define CLRUN__SETTINGS(X) CLRUN__CORE_SETTINGS(X) CLRUN__OP_SETTINGS(X)

typedef enum clrun__setting {
#define CLRUN__SETTING_ENUM(id, kind, lo, hi, form, effect) CLRUN__SET_##id,
    CLRUN__SETTINGS(CLRUN__SETTING_ENUM)
#undef CLRUN__SETTING_ENUM
        CLRUN__SET_COUNT
} clrun__setting;

#define CLRUN__SETTING_MAX_UINTS 8

/* The variable's name ("CLRUN_DEVICE"), its form and its effect (markdown, as the README's table). */
const char *clrun__setting_name(clrun__setting id);
const char *clrun__setting_form(clrun__setting id);
const char *clrun__setting_effect(clrun__setting id);

/* A TEXT setting's value, or NULL when unset or empty. */
const char *clrun__setting_text(clrun__setting id);
/* A FLAG: *on is 1 or 0 (unset: 0). */
clrun_status clrun__setting_flag(clrun_ctx *ctx, clrun__setting id, int *on);
/* A FLAG for calls that cannot fail: 1 only when set to a true value. */
int clrun__setting_on(clrun__setting id);
/* A CHOICE: *choice is the index of the value in the form's list, -1 when unset. */
clrun_status clrun__setting_choice(clrun_ctx *ctx, clrun__setting id, int *choice);
/* UINTS: v[0 .. *count) (at most CLRUN__SETTING_MAX_UINTS); *count is 0 when unset. */
clrun_status clrun__setting_uints(clrun_ctx *ctx, clrun__setting id, unsigned *v, unsigned *count);
/* Refuse a well-formed value that the op cannot use here: "CLRUN_X=value: why" as CLRUN_INVALID_ARG. */
clrun_status clrun__setting_refuse(clrun_ctx *ctx, clrun__setting id, const char *why);
/* Check every setting's form; the first malformed one is refused (ctx may be NULL). */
clrun_status clrun__settings_check(clrun_ctx *ctx);

#endif
