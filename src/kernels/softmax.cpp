// Row-wise softmax and the fused softmax + cross-entropy over the vocabulary.
#pragma GCC optimize("no-trapping-math")  // see vec_math.h
#include "kernels/softmax.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "core/error.h"
#include "kernels/vec_math.h"

namespace potop {

namespace {

// p (V) = softmax(x) with the row maximum subtracted; p may alias x. Returns the maximum and
// the sum of exp(x - max) (in double), from which log Σ exp(x) = max + log(sum). A row that is
// all -inf has no finite entry to normalise by: it becomes all zeros and sum = 0.
struct RowStats {
  float max;
  double sum;
};

RowStats softmax_row(float* p, const float* x, int V) {
  float mx = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : mx)
  for (int v = 0; v < V; ++v) mx = x[v] > mx ? x[v] : mx;
  if (mx == -std::numeric_limits<float>::infinity()) {
    for (int v = 0; v < V; ++v) p[v] = 0.0f;
    return {mx, 0.0};
  }
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (int v = 0; v < V; ++v) {
    const float e = exp_vec(x[v] - mx);  // exp_vec(-inf) = 0
    p[v] = e;
    sum += e;
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int v = 0; v < V; ++v) p[v] *= inv;
  return {mx, sum};
}

// The backward kernels' loops, one function per store, every argument by value (see with_store in
// grad_store.h).
template <bool kAdd>
void softmax_backward_impl(float* dinp, const float* dout, const float* out, int N, int V) {
#pragma omp parallel for schedule(static) if (static_cast<size_t>(N) * V > 8192)
  for (int n = 0; n < N; ++n) {
    const float* __restrict d = dout + static_cast<size_t>(n) * V;
    const float* __restrict y = out + static_cast<size_t>(n) * V;
    float* __restrict g = dinp + static_cast<size_t>(n) * V;
    float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
    for (int v = 0; v < V; ++v) dot += d[v] * y[v];
    for (int v = 0; v < V; ++v) store_grad<kAdd>(g[v], y[v] * (d[v] - dot));
  }
}

template <bool kAdd>
void crossentropy_backward_impl(float* dlogits, const float* probs, const int* targets, const float* dlosses, int N,
                                int V, float eps) {
  const float off = eps / static_cast<float>(V);  // q_v off the target
  const float on = 1.0f - eps + off;               // q_target
#pragma omp parallel for schedule(static) if (static_cast<size_t>(N) * V > 8192)
  for (int n = 0; n < N; ++n) {
    const float* p = probs + static_cast<size_t>(n) * V;
    float* g = dlogits + static_cast<size_t>(n) * V;
    const int target = targets[n];
    if (target < 0) {  // padding: no gradient
      if constexpr (!kAdd) std::fill_n(g, V, 0.0f);
      continue;
    }
    const float dl = dlosses[n];
    if constexpr (kAdd) {
      // (p - onehot) dl in one pass: the target's entry cannot be put right afterwards, as below.
      // p - 0 is p, so every entry is the value the overwrite gives.
      for (int v = 0; v < V; ++v) g[v] += (p[v] - (v == target ? on : off)) * dl;
    } else {
      const float p_target = p[target];  // read before g (which may be p) overwrites it
      for (int v = 0; v < V; ++v) g[v] = (p[v] - off) * dl;
      g[target] = (p_target - on) * dl;
    }
  }
}

}  // namespace

void softmax_forward(float* out, const float* inp, int N, int V) {
  // out (N, V), inp (N, V); out may alias inp
#pragma omp parallel for schedule(static) if (static_cast<size_t>(N) * V > 8192)
  for (int n = 0; n < N; ++n) {
    softmax_row(out + static_cast<size_t>(n) * V, inp + static_cast<size_t>(n) * V, V);
  }
}

void softmax_backward(float* dinp, const float* dout, const float* out, int N, int V, GradStore store) {
  // dinp (N, V), dout (N, V), out (N, V)
  // forward: out = exp(inp - max) / Σ exp(inp - max)
  with_store(store, [&](auto add) { softmax_backward_impl<add>(dinp, dout, out, N, V); });
}

void crossentropy_forward(float* losses, float* probs, const float* logits, const int* targets, int N, int V,
                          float label_smoothing) {
  // losses (N), probs (N, V), logits (N, V), targets (N); probs may alias logits
  const double eps = label_smoothing;
#pragma omp parallel for schedule(static) if (static_cast<size_t>(N) * V > 8192)
  for (int n = 0; n < N; ++n) {
    const float* x = logits + static_cast<size_t>(n) * V;
    const int target = targets[n];
    POTOP_CHECK(target < V, "target id out of range");
    const float target_logit = target >= 0 ? x[target] : 0.0f;  // read before probs overwrites it
    double mean_logit = 0.0;  // also read before: Σ_v -log p_v / V = lse - mean(x)
    if (eps > 0.0 && target >= 0) {
      for (int v = 0; v < V; ++v) mean_logit += x[v];
      mean_logit /= V;
    }
    const RowStats stats = softmax_row(probs + static_cast<size_t>(n) * V, x, V);
    if (target < 0) {
      losses[n] = 0.0f;
    } else if (stats.sum == 0.0) {
      losses[n] = std::numeric_limits<float>::infinity();  // every logit is -inf
    } else {
      // -log softmax(x)[target] = log Σ_v exp(x_v - max) - (x_target - max)
      const double lse = std::log(stats.sum) + stats.max;
      const double nll = lse - static_cast<double>(target_logit);
      losses[n] = static_cast<float>(eps > 0.0 ? (1.0 - eps) * nll + eps * (lse - mean_logit) : nll);
    }
  }
}

void crossentropy_backward(float* dlogits, const float* probs, const int* targets, const float* dlosses, int N,
                           int V, GradStore store, float label_smoothing) {
  // dlogits (N, V), probs (N, V), targets (N), dlosses (N); dlogits may be probs with kOverwrite
  // forward: losses[n] = -log probs[n, target[n]], probs = softmax(logits)
  POTOP_CHECK(dlogits == probs ? store == GradStore::kOverwrite
                               : !overlap(dlogits, probs, static_cast<size_t>(N) * V),
              "crossentropy_backward: dlogits may share memory with probs only as the same buffer, with kOverwrite");
  POTOP_CHECK(label_smoothing >= 0.0f && label_smoothing < 1.0f, "label smoothing outside [0, 1)");
  with_store(store, [&](auto add) {
    crossentropy_backward_impl<add>(dlogits, probs, targets, dlosses, N, V, label_smoothing);
  });
}

}  // namespace potop
