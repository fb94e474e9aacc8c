/* settings.h — the CPU-shaped GEMM kernel's CLRUN_* variables: rows of lib/settings.h's table, X(ID, kind, lo, hi, form,
 * effect), read through its getters (CLRUN__SET_ID). */
#define CLRUN__SETTINGS_GEMM_CPU(X) \
    X(GEMM_CPU_PARAMS, UINTS, 2, 2, "`VW,RM`", "CPU GEMM kernel: vector width (4, 8 or 16), rows per work-item (1 to 32)")
