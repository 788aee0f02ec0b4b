// Element-wise non-linearities of the feed-forward block: GELU (GPT-2's tanh form) and ReLU.
#pragma once
#include <cstddef>

namespace potop {

// out = 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))  — torch.nn.GELU(approximate="tanh")
void gelu_forward(float* out, const float* inp, size_t n);
// dinp += dout * gelu'(inp)
void gelu_backward(float* dinp, const float* dout, const float* inp, size_t n);

// out = max(0, x)
void relu_forward(float* out, const float* inp, size_t n);
// dinp += dout * (inp > 0)
void relu_backward(float* dinp, const float* dout, const float* inp, size_t n);

}  // namespace potop
