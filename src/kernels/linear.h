// Linear layer: out = inp · W + b.
#pragma once

#include "kernels/grad_store.h"

namespace potop {

// How the weight matrix is stored. Hugging Face GPT-2 stores its Conv1D weights as (in, out);
// the tied LM head reuses the token embedding (vocab, C), i.e. (out, in).
enum class WeightLayout { kInOut, kOutIn };

// out (N, OC) = inp (N, C) · W (C, OC) + bias (OC)
// weight: (C, OC) for kInOut, (OC, C) for kOutIn. bias may be null.
void linear_forward(float* out, const float* inp, const float* weight, const float* bias, int N, int C,
                    int OC, WeightLayout layout = WeightLayout::kInOut);

// Differentiates the forward line above:
// dinp (N, C) += dout · Wᵀ   (= with GradStore::kOverwrite)
// dweight += inpᵀ · dout (in the weight's layout);  dbias (OC) += Σ_n dout
// dinp, dweight and dbias may each be null (not wanted); inp is only read for dweight.
void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int C, int OC, WeightLayout layout = WeightLayout::kInOut,
                     GradStore store = GradStore::kAccumulate);

}  // namespace potop
