// RMSNorm (Zhang & Sennrich, 2019), Llama's normalisation: LayerNorm without the mean and the
// bias, so a row is only rescaled, never shifted.
#pragma once

#include "kernels/grad_store.h"

namespace potop {

// out (N, C) = inp ⊙ rstd ⊙ weight, per row n: rstd (N) = 1 / √(Σ_c inp² / C + eps), saved for
// the backward pass.
void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int N, int C, float eps);

// The residual add and the RMSNorm that reads it, one row at a time (the row is still in cache when
// it is normalised): res (N, C) = a + b; out = RMSNorm(res), rstd as above. res may alias a or b.
void residual_rmsnorm_forward(float* res, float* out, float* rstd, const float* a, const float* b, const float* weight,
                              int N, int C, float eps);

// dinp (N, C) += rstd ⊙ (g - norm ⊙ mean_c(g ⊙ norm)), g = dout ⊙ weight, norm = inp ⊙ rstd
//   (= with GradStore::kOverwrite);  dweight (C) += Σ_n norm ⊙ dout, the same for every thread count.
void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                      const float* rstd, int N, int C, GradStore store = GradStore::kAccumulate);

}  // namespace potop
