/* sim.h — parser for Oclgrind's kernel simulation files (.sim), as oclgrind-kernel reads them:
 *
 *   PROGRAM.cl          # the kernel source ('#' starts a comment anywhere)
 *   KERNEL
 *   X Y Z               # NDRange
 *   X Y Z               # work-group size (must divide the NDRange)
 *   <size=BYTES [TYPE] [fill=V | range=START:INC:END] [dump] [hex] [ro] [wo] [noinit] | null>
 *   values...           # one header per kernel argument, values follow when neither fill, range,
 *                       # noinit nor null is given (and the argument is not __local)
 *
 * TYPE is char uchar short ushort int uint long ulong float double; the default comes from the
 * kernel's signature (a vector's element type; a struct needs TYPE). A by-value argument's values are
 * its bytes (a float4 is <size=16> and four floats; a struct is its members' values, padding
 * included), passed with the size given. size=0 is valid for buffers only: the kernel gets a valid
 * pointer to an empty buffer. An argument holds at most SIM_MAX_BYTES. The parser is separate from
 * running, so it can be tested and fuzzed alone. */
#ifndef CLRUN_SIM_H
#define CLRUN_SIM_H
#include <clrun.h>

/* Largest argument a .sim file may declare (bytes); larger buffers come from `clrun run`'s forms. */
#define SIM_MAX_BYTES (1 << 30)

enum sim_kind { SIM_BUFFER, SIM_LOCAL, SIM_VALUE, SIM_NULL };

struct sim_head {
    char program[1024];
    char kernel[256];
    size_t ndrange[3], wgsize[3];
};

struct sim_arg {
    enum sim_kind kind;
    clrun_dtype type;
    size_t size;           /* bytes */
    clrun_array data;      /* contents for buffers and values (bytes == size); empty otherwise */
    int dump, hex, ro, wo; /* hex: values read, and dumped, in hexadecimal */
    int noinit;            /* a buffer left as the device allocates it (never written before the run) */
};

struct sim_parser {
    char *text; /* comments blanked */
    size_t len, pos;
    unsigned line;
    char err[600];
};

/* Parse the four head sections. Returns 0, or -1 with p->err set ("line N: ..."). */
int sim_open(struct sim_parser *p, const char *text, size_t len, struct sim_head *h);
/* Parse argument `index` given what the kernel says of it. Returns 0 or -1 (p->err). */
int sim_next_arg(struct sim_parser *p, unsigned index, const clrun_arg_info *info, struct sim_arg *out);
/* 0 when only whitespace is left, else -1 (p->err). */
int sim_finish(struct sim_parser *p);
void sim_close(struct sim_parser *p);
void sim_arg_free(struct sim_arg *a);
#endif
