/* cli.c — amp has no verb of `clrun op`: a loss scaler steps inside a training loop (clrun_amp_*;
 * examples/mlp runs one), not once from the shell. */
#include "cli.h"

const struct cli_cmd cli_verbs_amp[] = {{0}};
