/* settings.h — GEMM's CLRUN_* variables: rows of lib/settings.h's table, X(ID, kind, lo, hi, form, effect), read through
 * its getters (CLRUN__SET_ID). The four tile variables CLRUN_GEMM_TILES replaced stay as RETIRED rows, so that a value
 * left set is refused with the new spelling rather than ignored. */
#define CLRUN__SETTINGS_GEMM(X)                                                                                                   \
    X(GEMM_TILES, TEXT, 0, 0, "`ROW:V,V,...` or `ROW:NAME=V,...`, several joined by `;`",                                         \
      "a GEMM backend's tiles (experiments, `clrun tune`), over the tuning file and the built-in ones: all in order, or some by " \
      "name; the rows and names are listed under GEMM tiles; refused when the device cannot run them")                            \
    X(GEMM_PARAMS, RETIRED, 0, 0, "`CLRUN_GEMM_TILES=gpu-kernel:` and the same values", "no longer read; refused when set")       \
    X(GEMM_CPU_PARAMS, RETIRED, 0, 0, "`CLRUN_GEMM_TILES=cpu-kernel:` and the same values", "no longer read; refused when set")   \
    X(GEMM_MMA_PARAMS, RETIRED, 0, 0, "`CLRUN_GEMM_TILES=mma.sync:` and the same values", "no longer read; refused when set")     \
    X(GEMM_WGMMA_PARAMS, RETIRED, 0, 0, "`CLRUN_GEMM_TILES=wgmma:` and the same values", "no longer read; refused when set")
