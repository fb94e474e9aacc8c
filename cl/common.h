/* common.h — helpers shared by the kernel library's sources (included with #include "common.h"). */
#ifndef CLRUN_COMMON_H
#define CLRUN_COMMON_H

/* Element (i, p) of op(A) and (p, j) of op(B) for the GEMM kernels: row-major with leading
 * dimensions lda, ldb; TA, TB (0 or 1) say whether A, B are stored transposed. */
#define CLRUN_AT(i, p) (TA ? A[(size_t)(p) * lda + (i)] : A[(size_t)(i) * lda + (p)])
#define CLRUN_BT(p, j) (TB ? B[(size_t)(j) * ldb + (p)] : B[(size_t)(p) * ldb + (j)])
#endif
