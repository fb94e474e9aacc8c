/* settings.h — the portable GEMM kernels' CLRUN_* variables: rows of lib/settings.h's table, X(ID, kind, lo, hi, form,
 * effect), read through its getters (CLRUN__SET_ID). */
#define CLRUN__SETTINGS_GEMM_PORTABLE(X)                       \
    X(GEMM_PARAMS, UINTS, 5, 7, "`TM,TN,TK,WM,WN[,VEC[,DB]]`", \
      "GPU GEMM tiles, over the tuning file and the built-in ones (experiments, `clrun tune`); refused when the device cannot run them")
