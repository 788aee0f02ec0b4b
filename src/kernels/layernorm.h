// Layer normalisation over the last dimension.
#pragma once

namespace potop {

constexpr float kLayerNormEps = 1e-5f;

// out (N, C) = (inp - mean) * rstd * weight + bias, per row n:
//   mean (N) = Σ_c inp / C;  rstd (N) = 1 / sqrt(Σ_c (inp - mean)² / C + eps)
// mean and rstd are saved for the backward pass. bias may be null (a model without biases).
void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                       const float* bias, int N, int C);

// Gradients accumulate (+=). dbias may be null.
void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                        const float* weight, const float* mean, const float* rstd, int N, int C);

}  // namespace potop
