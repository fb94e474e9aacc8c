/* cli.c — `clrun op fft` and `clrun op fftconvolve`. */
#include "cli.h"

const struct cli_cmd cli_verbs_fft[] = {
    {0},
};
