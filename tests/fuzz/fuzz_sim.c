/* fuzz_sim.c — libFuzzer target for the .sim parser. The kernel signature it parses against is a
 * fixed mix of every argument kind: float* (global), uchar* (constant), __local, int, ulong. */
#include "../../tools/clrun/sim.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const clrun_arg_info sig[] = {
        {CLRUN_ARG_GLOBAL, "float*", "a"}, {CLRUN_ARG_CONSTANT, "uchar*", "b"}, {CLRUN_ARG_LOCAL, "float*", "tmp"},
        {CLRUN_ARG_VALUE, "int", "n"},     {CLRUN_ARG_VALUE, "ulong", "m"},     {CLRUN_ARG_GLOBAL, "void*", "v"},
    };
    struct sim_parser p;
    struct sim_head h;
    if (sim_open(&p, (const char *)data, size, &h) == 0) {
        for (unsigned i = 0; i < sizeof sig / sizeof *sig; i++) {
            struct sim_arg a;
            int rc = sim_next_arg(&p, i, &sig[i], &a);
            sim_arg_free(&a);
            if (rc) break;
        }
        sim_finish(&p);
    }
    sim_close(&p);
    return 0;
}
