// Layer normalisation over the last dimension.
#pragma once

#include "kernels/grad_store.h"

namespace potop {

constexpr float kLayerNormEps = 1e-5f;  // GPT-2's and PyTorch's default; BERT's is 1e-12

// out (N, C) = (inp - mean) * rstd * weight + bias, per row n:
//   mean (N) = Σ_c inp / C;  rstd (N) = 1 / sqrt(Σ_c (inp - mean)² / C + eps)
// mean and rstd are saved for the backward pass (which needs no eps). bias may be null (a model
// without biases).
void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                       const float* bias, int N, int C, float eps = kLayerNormEps);

// The residual add and the LayerNorm that reads it, one row at a time (the row is still in cache
// when it is normalised): res (N, C) = a + b; out = LN(res), mean and rstd as above. res may alias
// a or b. Its backward is layernorm_backward on res into d res, the gradient of the
// residual stream, which then flows on unchanged to both a and b.
void residual_layernorm_forward(float* res, float* out, float* mean, float* rstd, const float* a, const float* b,
                                const float* weight, const float* bias, int N, int C, float eps = kLayerNormEps);

// dinp (N, C) += rstd ⊙ (dnorm - mean_c(dnorm) - norm ⊙ mean_c(dnorm ⊙ norm)), dnorm = dout ⊙ weight,
//   norm = (inp - mean) ⊙ rstd   (= with GradStore::kOverwrite)
// dweight (C) += Σ_n norm ⊙ dout;  dbias (C) += Σ_n dout (may be null)
void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                        const float* weight, const float* mean, const float* rstd, int N, int C,
                        GradStore store = GradStore::kAccumulate);

}  // namespace potop
