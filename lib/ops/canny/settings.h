/* settings.h — Canny's CLRUN_* variables: rows of lib/settings.h's table, X(ID, kind, lo, hi, form,
 * effect), read through its getters (CLRUN__SET_ID). */
#define CLRUN__SETTINGS_CANNY(X)                                                                                \
    X(CANNY_SHAPE, CHOICE, 0, 0, "`gpu` or `cpu`", "run that shape of the Canny kernels on any device (tests)") \
    X(CANNY_TILE, UINTS, 3, 3, "`BXxBYxPY`",                                                                    \
      "the GPU shape's Canny tile: work-group BX × BY (BX·BY at most 1024), PY rows per work-item (at most 16); default `32x8x4`")
