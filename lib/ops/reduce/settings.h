/* settings.h — the reductions' CLRUN_* variables: rows of lib/settings.h's table, X(ID, kind, lo, hi, form,
 * effect), read through its getters (CLRUN__SET_ID). */
#define CLRUN__SETTINGS_REDUCE(X)                                                                                    \
    X(REDUCE_SHAPE, CHOICE, 0, 0, "`gpu` or `cpu`", "run that shape of the reduction kernels on any device (tests)") \
    X(REDUCE_GROUPS, UINTS, 1, 1, "`N` (1 or more)", "GPU reductions: work-groups per compute unit (default 8), for tuning")
