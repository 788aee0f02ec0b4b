// GELU (tanh approximation, as GPT-2 and torch.nn.GELU(approximate="tanh")), the exact GELU (erf,
// as BERT and torch.nn.GELU()) and ReLU.
//
// GELU is evaluated through the identity 1 + tanh(u) = 2 σ(2u) = 2 / (1 + e^(-2u)):
//   out = x σ(2u) = x / (1 + e^(-2u)).
// It is the same function, but has no cancellation in 1 + tanh(u) for negative x (where the tanh
// form loses most of its digits), and exp_vec lets the loop vectorise.
#pragma GCC optimize("no-trapping-math")  // see vec_math.h
#include "kernels/activation.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/scratch.h"
#include "core/threads.h"
#include "kernels/column_sums.h"
#include "kernels/vec_math.h"

namespace potop {

namespace {
constexpr float kGeluScale = 0.7978845608028654f;  // √(2/π)
constexpr float kGeluCubic = 0.044715f;

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

inline float gelu(float x) { return x * gelu_terms(x).s; }  // 0.5 x (1 + tanh u) = x σ(2u)

// gelu'(x). With u = √(2/π) (x + 0.044715 x³): gelu(x) = 0.5 x (1 + tanh u), so
// gelu'(x) = 0.5 (1 + tanh u) + 0.5 x (1 - tanh² u) u',  u' = √(2/π) (1 + 3 · 0.044715 x²).
// With s = σ(2u) = 1 / (1 + e), e = e^(-2u): 1 + tanh u = 2s, 1 - tanh² u = 4 s (1 - s), 1 - s = e s,
// so gelu'(x) = s (1 + 2 x e s u').
inline float gelu_grad(float x) {
  const auto [e, s] = gelu_terms(x);
  const float es = e * s;  // 1 - s, without its cancellation as s -> 1
  const float du = kGeluScale * (1.0f + 3.0f * kGeluCubic * x * x);
  return s * (1.0f + 2.0f * x * es * du);
}

// The exact GELU, x Φ(x) with Φ the normal distribution's CDF: Φ(x) = 0.5 (1 + erf(x/√2)), written
// 0.5 erfc(-x/√2), which keeps its digits where 1 + erf(x/√2) would cancel (x < 0).
// gelu_erf'(x) = Φ(x) + x φ(x), φ(x) = e^(-x²/2) / √(2π).
constexpr float kSqrtHalf = 0.70710678118654752f;       // 1/√2
constexpr float kInvSqrt2Pi = 0.39894228040143268f;     // 1/√(2π)
inline float gelu_erf(float x) { return 0.5f * x * std::erfc(-x * kSqrtHalf); }
inline float gelu_erf_grad(float x) {
  return 0.5f * std::erfc(-x * kSqrtHalf) + x * kInvSqrt2Pi * std::exp(-0.5f * x * x);
}

inline float relu(float x) { return x > 0.0f ? x : 0.0f; }

// 1 - tanh²(x) as 1 / cosh²(x): relatively exact in the tails, where 1 - t² would cancel to 0
// (cosh overflows to inf past |x| ≈ 44, and the gradient to its limit, 0).
inline float tanh_grad(float x) {
  const float c = std::cosh(x);
  return 1.0f / (c * c);
}

// dinp (n) += grad(dout, inp), or = with kAdd false: one function per store, every argument by
// value (see with_store in grad_store.h).
template <bool kAdd, class G>
void elementwise_backward(float* dinp, const float* dout, const float* inp, size_t n, G grad) {
#pragma omp parallel for schedule(static) if (n >= kParallelMinFloats)
  for (size_t i = 0; i < n; ++i) store_grad<kAdd>(dinp[i], grad(dout[i], inp[i]));
}

template <class F>
void bias_activation_forward(float* out, float* pre, const float* bias, int N, int OC, F f) {
  // out (N, OC), pre (N, OC), bias (OC) or null
#pragma omp parallel for schedule(static) if (static_cast<size_t>(N) * OC >= kParallelMinFloats)
  for (int n = 0; n < N; ++n) {
    float* p = pre + static_cast<size_t>(n) * OC;
    float* o = out + static_cast<size_t>(n) * OC;
    if (bias) {
      for (int c = 0; c < OC; ++c) {
        const float x = p[c] + bias[c];
        p[c] = x;
        o[c] = f(x);
      }
    } else {
      for (int c = 0; c < OC; ++c) o[c] = f(p[c]);
    }
  }
}

// grad(dout, pre) = dout · f'(pre)
template <class G>
void bias_activation_backward(float* dpre, float* dbias, const float* dout, const float* pre, int N, int OC,
                              GradStore store, G grad) {
  // dpre (N, OC), dbias (OC) or null, dout (N, OC), pre (N, OC); dpre may be dout with kOverwrite
  const size_t n_all = static_cast<size_t>(N) * OC;
  POTOP_CHECK(dpre == dout ? store == GradStore::kOverwrite : !overlap(dpre, dout, n_all),
              "bias-activation backward: dpre may share memory with dout only as the same buffer, with kOverwrite");
  // Without a bias the chunk sums are still made, so the loop needs no test, and then dropped.
  float* const sums_into[] = {dbias};
  chunked_row_sums(N, OC, sums_into, n_all >= kParallelMinFloats, [&](int r0, int r1, float* const* sums) {
    float* acc = sums[0];  // dbias's share of this chunk
    // kAccumulate: the row's gradient goes to a buffer of its own first and is added to dpre
    // after. Stored as is, v keeps the bits it has with kOverwrite, and so does dbias: summed
    // straight into dpre and acc, g++ would fuse the multiply in v into both sums.
    struct RowTag;
    float* row = store == GradStore::kAccumulate ? thread_scratch<RowTag>(0, OC) : nullptr;
    for (int n = r0; n < r1; ++n) {
      const float* x = pre + static_cast<size_t>(n) * OC;
      const float* d = dout + static_cast<size_t>(n) * OC;
      float* g = dpre + static_cast<size_t>(n) * OC;
      float* v_to = row ? row : g;
      for (int c = 0; c < OC; ++c) {
        const float v = grad(d[c], x[c]);  // read before v_to (which may be d) is written
        v_to[c] = v;
        acc[c] += v;
      }
      if (row) {
        for (int c = 0; c < OC; ++c) g[c] += row[c];
      }
    }
  });
}

}  // namespace

void bias_gelu_forward(float* out, float* pre, const float* bias, int N, int OC) {
  bias_activation_forward(out, pre, bias, N, OC, [](float x) { return gelu(x); });
}
void bias_gelu_erf_forward(float* out, float* pre, const float* bias, int N, int OC) {
  bias_activation_forward(out, pre, bias, N, OC, [](float x) { return gelu_erf(x); });
}
void bias_relu_forward(float* out, float* pre, const float* bias, int N, int OC) {
  bias_activation_forward(out, pre, bias, N, OC, [](float x) { return relu(x); });
}
void bias_tanh_forward(float* out, float* pre, const float* bias, int N, int OC) {
  bias_activation_forward(out, pre, bias, N, OC, [](float x) { return std::tanh(x); });
}
void bias_gelu_backward(float* dpre, float* dbias, const float* dout, const float* pre, int N, int OC,
                        GradStore store) {
  // forward: out = gelu(pre), pre = in·W + bias
  bias_activation_backward(dpre, dbias, dout, pre, N, OC, store, [](float d, float x) { return d * gelu_grad(x); });
}
void bias_gelu_erf_backward(float* dpre, float* dbias, const float* dout, const float* pre, int N, int OC,
                            GradStore store) {
  // forward: out = gelu_erf(pre), pre = in·W + bias
  bias_activation_backward(dpre, dbias, dout, pre, N, OC, store,
                           [](float d, float x) { return d * gelu_erf_grad(x); });
}
void bias_relu_backward(float* dpre, float* dbias, const float* dout, const float* pre, int N, int OC,
                        GradStore store) {
  // forward: out = max(0, pre), pre = in·W + bias
  bias_activation_backward(dpre, dbias, dout, pre, N, OC, store, [](float d, float x) { return x > 0.0f ? d : 0.0f; });
}

void bias_tanh_backward(float* dpre, float* dbias, const float* dout, const float* pre, int N, int OC,
                        GradStore store) {
  // forward: out = tanh(pre), pre = in·W + bias
  bias_activation_backward(dpre, dbias, dout, pre, N, OC, store, [](float d, float x) { return d * tanh_grad(x); });
}

void gelu_forward(float* out, const float* inp, size_t n) {
  // out (n), inp (n); out may alias inp
#pragma omp parallel for schedule(static) if (n >= kParallelMinFloats)
  for (size_t i = 0; i < n; ++i) out[i] = gelu(inp[i]);
}

void gelu_backward(float* dinp, const float* dout, const float* inp, size_t n, GradStore store) {
  // dinp (n), dout (n), inp (n); dinp may be dout with kOverwrite
  // forward: out = 0.5 x (1 + tanh(u)), u = √(2/π) (x + 0.044715 x³)
  POTOP_CHECK(dinp == dout ? store == GradStore::kOverwrite : !overlap(dinp, dout, n),
              "gelu_backward: dinp may share memory with dout only as the same buffer, with kOverwrite");
  with_store(store, [&](auto add) {
    elementwise_backward<add>(dinp, dout, inp, n, [](float d, float x) { return d * gelu_grad(x); });
  });
}

void gelu_erf_forward(float* out, const float* inp, size_t n) {
  // out (n), inp (n); out may alias inp
#pragma omp parallel for schedule(static) if (n >= kParallelMinFloats)
  for (size_t i = 0; i < n; ++i) out[i] = gelu_erf(inp[i]);
}

void gelu_erf_backward(float* dinp, const float* dout, const float* inp, size_t n, GradStore store) {
  // dinp (n), dout (n), inp (n); dinp may be dout with kOverwrite
  // forward: out = x Φ(x)
  POTOP_CHECK(dinp == dout ? store == GradStore::kOverwrite : !overlap(dinp, dout, n),
              "gelu_erf_backward: dinp may share memory with dout only as the same buffer, with kOverwrite");
  with_store(store, [&](auto add) {
    elementwise_backward<add>(dinp, dout, inp, n, [](float d, float x) { return d * gelu_erf_grad(x); });
  });
}

void relu_forward(float* out, const float* inp, size_t n) {
  // out (n), inp (n); out may alias inp
#pragma omp parallel for schedule(static) if (n >= kParallelMinFloats)
  for (size_t i = 0; i < n; ++i) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

void relu_backward(float* dinp, const float* dout, const float* inp, size_t n, GradStore store) {
  // dinp (n), dout (n), inp (n); dinp may be dout with kOverwrite
  // forward: out = max(0, x)
  POTOP_CHECK(dinp == dout ? store == GradStore::kOverwrite : !overlap(dinp, dout, n),
              "relu_backward: dinp may share memory with dout only as the same buffer, with kOverwrite");
  with_store(store, [&](auto add) {
    elementwise_backward<add>(dinp, dout, inp, n, [](float d, float x) { return x > 0.0f ? d : 0.0f; });
  });
}

void tanh_forward(float* out, const float* inp, size_t n) {
  // out (n), inp (n); out may alias inp
#pragma omp parallel for schedule(static) if (n >= kParallelMinFloats)
  for (size_t i = 0; i < n; ++i) out[i] = std::tanh(inp[i]);
}

void tanh_backward(float* dinp, const float* dout, const float* inp, size_t n, GradStore store) {
  // dinp (n), dout (n), inp (n); dinp may be dout with kOverwrite
  POTOP_CHECK(dinp == dout ? store == GradStore::kOverwrite : !overlap(dinp, dout, n),
              "tanh_backward: dinp may share memory with dout only as the same buffer, with kOverwrite");
  with_store(store, [&](auto add) {
    elementwise_backward<add>(dinp, dout, inp, n, [](float d, float x) { return d * tanh_grad(x); });
  });
}

}  // namespace potop
