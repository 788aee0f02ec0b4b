// Element-wise non-linearities of the feed-forward block: GELU (GPT-2's tanh form) and ReLU.
#pragma once
#include <cstddef>

#include "kernels/grad_store.h"

namespace potop {

// out = 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))  — torch.nn.GELU(approximate="tanh")
void gelu_forward(float* out, const float* inp, size_t n);
// dinp += dout * gelu'(inp)   (= with GradStore::kOverwrite)
void gelu_backward(float* dinp, const float* dout, const float* inp, size_t n,
                   GradStore store = GradStore::kAccumulate);

// out = max(0, x)
void relu_forward(float* out, const float* inp, size_t n);
// dinp += dout * (inp > 0)   (= with GradStore::kOverwrite)
void relu_backward(float* dinp, const float* dout, const float* inp, size_t n,
                   GradStore store = GradStore::kAccumulate);

}  // namespace potop
