/* nv.h — what the NVIDIA family's files share (lib/ops/gemm/nv/). */
#ifndef CLRUN_GEMM_NV_H
#define CLRUN_GEMM_NV_H

#include "../gemm.h"

/* 1 where NVIDIA's matrix-unit kernels are worth probing: an NVIDIA GPU, $CLRUN_NO_TENSOR unset. */
int clrun__gemm_nv_candidate(clrun_ctx *ctx);

#endif
