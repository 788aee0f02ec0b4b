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

// The non-linearity fused with the bias of the linear layer before it (computed without one),
// so the (N, OC) pre-activation is passed over once:
//   pre (N, OC) += bias (OC) (bias may be null);  out = f(pre)
void bias_gelu_forward(float* out, float* pre, const float* bias, int N, int OC);
void bias_relu_forward(float* out, float* pre, const float* bias, int N, int OC);
// dpre (N, OC) = dout ⊙ f'(pre) (written, not accumulated; dpre may alias dout), and
// dbias (OC) += Σ_n dpre in the same pass (dbias may be null). dbias comes out the same for every
// thread count (column_sums.h).
void bias_gelu_backward(float* dpre, float* dbias, const float* dout, const float* pre, int N, int OC);
void bias_relu_backward(float* dpre, float* dbias, const float* dout, const float* pre, int N, int OC);

}  // namespace potop
