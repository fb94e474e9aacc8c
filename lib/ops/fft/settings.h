/* settings.h — the FFT op's CLRUN_* variables: rows of lib/settings.h's table, X(ID, kind, lo, hi, form, effect), read
 * through its getters (CLRUN__SET_ID). */
#define CLRUN__SETTINGS_FFT(X)                                                                                                    \
    X(FFT_TWIDDLES, CHOICE, 0, 0, "`table` or `computed`",                                                                        \
      "FFT twiddle factors: `table` (the default) reads them from a table made in double precision; `computed` leaves it to "     \
      "VkFFT, which makes them in the kernels with native sin and cos on most devices (faster on some GPUs, less accurate where " \
      "those are approximate)")
