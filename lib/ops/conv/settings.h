/* settings.h — the convolution op's CLRUN_* variables: rows of lib/settings.h's table, X(ID, kind, lo, hi, form, effect), read
 * through its getters (CLRUN__SET_ID). */
#define CLRUN__SETTINGS_CONV(X)                                                                                               \
    X(CONV_ALGO, CHOICE, 0, 0, "`auto`, `implicit` or `gemm`",                                                                \
      "how convolutions run when the call leaves it to clrun (`CLRUN_CONV_AUTO`): `implicit` clrun's implicit-GEMM kernels, " \
      "`gemm` im2col in chunks and `clrun_gemm`, `auto` (the default) the measured choice")
