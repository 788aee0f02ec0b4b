// GELU (tanh approximation, as GPT-2 and torch.nn.GELU(approximate="tanh")) and ReLU.
//
// GELU is evaluated through the identity 1 + tanh(u) = 2 σ(2u) = 2 / (1 + e^(-2u)):
//   out = x σ(2u) = x / (1 + e^(-2u)).
// It is the same function, but has no cancellation in 1 + tanh(u) for negative x (where the tanh
// form loses most of its digits), and exp_vec lets the loop vectorise.
#pragma GCC optimize("no-trapping-math")  // see vec_math.h
#include "kernels/activation.h"

#include "kernels/vec_math.h"

namespace potop {

namespace {
constexpr float kGeluScale = 0.7978845608028654f;  // √(2/π)
constexpr float kGeluCubic = 0.044715f;
constexpr size_t kParallelMin = 1 << 14;  // below this, a parallel region costs more than it saves

// e^(-2u), u = √(2/π) (x + 0.044715 x³), and σ(2u) = 1 / (1 + e^(-2u)). Where e^(-2u) > e^85,
// σ is flushed to 0 (gelu(x) = x σ underflows anyway, x < -10.5) rather than becoming subnormal
// (slow) or, with e saturated, leaving x σ non-zero for huge |x|.
struct GeluTerms {
  float e, s;
};
inline GeluTerms gelu_terms(float x) {
  const float t = -2.0f * kGeluScale * (x + kGeluCubic * x * x * x);
  const float e = exp_vec(t);
  const float s = 1.0f / (1.0f + e);
  return {e, t > 85.0f ? 0.0f : s};
}
}  // namespace

void gelu_forward(float* out, const float* inp, size_t n) {
  // out (n), inp (n); out may alias inp
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (size_t i = 0; i < n; ++i) {
    const float x = inp[i];
    out[i] = x * gelu_terms(x).s;  // 0.5 x (1 + tanh u) = x σ(2u)
  }
}

namespace {
template <bool kAdd>
void gelu_backward_impl(float* dinp, const float* dout, const float* inp, size_t n) {
  // dinp (n), dout (n), inp (n)
  // forward: out = 0.5 x (1 + tanh(u)), u = √(2/π) (x + 0.044715 x³)
  // gelu'(x) = 0.5 (1 + tanh u) + 0.5 x (1 - tanh² u) u',  u' = √(2/π) (1 + 3 · 0.044715 x²)
  // With s = σ(2u) = 1 / (1 + e), e = e^(-2u): 1 + tanh u = 2s, 1 - tanh² u = 4 s (1 - s), 1 - s = e s,
  // so gelu'(x) = s (1 + 2 x e s u').
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (size_t i = 0; i < n; ++i) {
    const float x = inp[i];
    const auto [e, s] = gelu_terms(x);
    const float es = e * s;  // 1 - s, without its cancellation as s -> 1
    const float du = kGeluScale * (1.0f + 3.0f * kGeluCubic * x * x);
    const float g = dout[i] * (s * (1.0f + 2.0f * x * es * du));
    dinp[i] = kAdd ? dinp[i] + g : g;
  }
}
}  // namespace

void gelu_backward(float* dinp, const float* dout, const float* inp, size_t n, GradStore store) {
  if (store == GradStore::kAccumulate) gelu_backward_impl<true>(dinp, dout, inp, n);
  else gelu_backward_impl<false>(dinp, dout, inp, n);
}

void relu_forward(float* out, const float* inp, size_t n) {
  // out (n), inp (n); out may alias inp
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (size_t i = 0; i < n; ++i) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

void relu_backward(float* dinp, const float* dout, const float* inp, size_t n, GradStore store) {
  // dinp (n), dout (n), inp (n)
  // forward: out = max(0, x)
  const bool add = store == GradStore::kAccumulate;
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (size_t i = 0; i < n; ++i) dinp[i] = (add ? dinp[i] : 0.0f) + (inp[i] > 0.0f ? dout[i] : 0.0f);
}

}  // namespace potop
