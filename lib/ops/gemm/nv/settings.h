/* settings.h — NVIDIA's GEMM kernels' CLRUN_* variables: rows of lib/settings.h's table, X(ID, kind, lo, hi, form,
 * effect), read through its getters (CLRUN__SET_ID). */
#define CLRUN__SETTINGS_GEMM_NV(X)                                                                                                       \
    X(NO_TENSOR, FLAG, 0, 0, "`1` or `0`", "`1`: never use the tensor-core kernel (`auto` takes the portable ones)")                     \
    X(NO_WGMMA, FLAG, 0, 0, "`1` or `0`", "`1`: never use the Hopper wgmma kernel (the `mma.sync` one takes its products)")              \
    X(NO_TMA, FLAG, 0, 0, "`1` or `0`", "`1`: never load the CUDA driver for tensor maps (the wgmma kernel then loads with `cp.async`)") \
    X(WGMMA_CUDA_TILES, UINTS, 8, 8, "`BM,BN,WG,WN,STAGES,WAIT,KB,WS`",                                                                  \
      "the wgmma kernel's tiles when it is launched through the CUDA driver (up to 227 KiB of shared memory; WS 1), over the "           \
      "built-in ones")
