// Element-wise non-linearities of the feed-forward block: GELU (GPT-2's tanh form), the exact GELU
// (BERT's, with erf) and ReLU; and tanh, of BERT's pooler.
#pragma once
#include <cstddef>

#include "kernels/grad_store.h"

namespace potop {

// out = 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))  — torch.nn.GELU(approximate="tanh")
void gelu_forward(float* out, const float* inp, size_t n);
// dinp (n) += dout * gelu'(inp)   (= with GradStore::kOverwrite, which also lets dinp be dout)
void gelu_backward(float* dinp, const float* dout, const float* inp, size_t n,
                   GradStore store = GradStore::kAccumulate);

// out = 0.5 x (1 + erf(x / √2))  — torch.nn.GELU(), Hugging Face's "gelu" (BERT's)
void gelu_erf_forward(float* out, const float* inp, size_t n);
// dinp (n) += dout * gelu_erf'(inp)   (= with GradStore::kOverwrite, which also lets dinp be dout)
void gelu_erf_backward(float* dinp, const float* dout, const float* inp, size_t n,
                       GradStore store = GradStore::kAccumulate);

// out = max(0, x)
void relu_forward(float* out, const float* inp, size_t n);
// dinp (n) += dout * (inp > 0)   (= with GradStore::kOverwrite, which also lets dinp be dout)
void relu_backward(float* dinp, const float* dout, const float* inp, size_t n,
                   GradStore store = GradStore::kAccumulate);

// out = tanh(x)
void tanh_forward(float* out, const float* inp, size_t n);
// dinp (n) += dout * (1 - tanh²(inp))   (= with GradStore::kOverwrite, which also lets dinp be dout)
void tanh_backward(float* dinp, const float* dout, const float* inp, size_t n,
                   GradStore store = GradStore::kAccumulate);

// The non-linearity fused with the bias of the linear layer before it (computed without one),
// so the (N, OC) pre-activation is passed over once:
//   pre (N, OC) += bias (OC) (bias may be null);  out = f(pre)
void bias_gelu_forward(float* out, float* pre, const float* bias, int N, int OC);
void bias_gelu_erf_forward(float* out, float* pre, const float* bias, int N, int OC);
void bias_relu_forward(float* out, float* pre, const float* bias, int N, int OC);
void bias_tanh_forward(float* out, float* pre, const float* bias, int N, int OC);
// dpre (N, OC) += dout ⊙ f'(pre)  (= with GradStore::kOverwrite), and dbias (OC) += Σ_n dout ⊙ f'(pre)
// in the same pass (dbias may be null; it comes out the same for every thread count, column_sums.h).
// dpre may alias dout only with kOverwrite (checked): the (N, 4C) pre-activation gradient then
// needs no buffer of its own.
void bias_gelu_backward(float* dpre, float* dbias, const float* dout, const float* pre, int N, int OC,
                        GradStore store = GradStore::kAccumulate);
void bias_gelu_erf_backward(float* dpre, float* dbias, const float* dout, const float* pre, int N, int OC,
                            GradStore store = GradStore::kAccumulate);
void bias_relu_backward(float* dpre, float* dbias, const float* dout, const float* pre, int N, int OC,
                        GradStore store = GradStore::kAccumulate);
void bias_tanh_backward(float* dpre, float* dbias, const float* dout, const float* pre, int N, int OC,
                        GradStore store = GradStore::kAccumulate);

}  // namespace potop
