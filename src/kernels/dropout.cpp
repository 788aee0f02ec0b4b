// Inverted dropout; the mask of element i is counter_uniform(seed, i) >= p, regenerated in the
// backward pass and independent of how the threads split the work. Like torch, a dropped
// element is multiplied by 0 (so a NaN or inf input stays NaN rather than being hidden).
#include "kernels/dropout.h"

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/rng.h"
#include "core/threads.h"

namespace potop {

namespace {

// counter_uniform(seed, i) = k · 2^-24 with k = hash64(seed, i) >> 40, an integer below 2^24, so
//   counter_uniform(seed, i) >= p  <=>  k >= ceil(p · 2^24)
// exactly. Comparing integers (rather than converting k to float) lets the loop vectorise.
uint64_t keep_threshold(float p) { return static_cast<uint64_t>(std::ceil(static_cast<double>(p) * 16777216.0)); }
inline bool keep(uint64_t seed, size_t i, uint64_t threshold) { return (hash64(seed, i) >> 40) >= threshold; }

// dinp (n) += dout ⊙ keep / (1 - p), or = with kAdd false: one function per store, every argument
// by value (see with_store in grad_store.h).
template <bool kAdd>
void dropout_backward_impl(float* dinp, const float* dout, float p, uint64_t seed, size_t n) {
  if (p == 0.0f) {
#pragma omp parallel for schedule(static) if (n >= kParallelMinFloats)
    for (size_t i = 0; i < n; ++i) store_grad<kAdd>(dinp[i], dout[i]);
    return;
  }
  const float scale = 1.0f / (1.0f - p);
  const uint64_t threshold = keep_threshold(p);
#pragma omp parallel for schedule(static) if (n >= kParallelMinFloats)
  for (size_t i = 0; i < n; ++i) store_grad<kAdd>(dinp[i], dout[i] * (keep(seed, i, threshold) ? scale : 0.0f));
}
}  // namespace

void dropout_forward(float* out, const float* inp, float p, uint64_t seed, size_t n) {
  // out (n), inp (n); out may alias inp
  POTOP_CHECK(p >= 0.0f && p < 1.0f, "dropout probability must be in [0, 1)");
  if (p == 0.0f) {
    if (out != inp) std::memmove(out, inp, n * sizeof(float));
    return;
  }
  const float scale = 1.0f / (1.0f - p);
  const uint64_t threshold = keep_threshold(p);
#pragma omp parallel for schedule(static) if (n >= kParallelMinFloats)
  for (size_t i = 0; i < n; ++i) out[i] = inp[i] * (keep(seed, i, threshold) ? scale : 0.0f);
}

void dropout_backward(float* dinp, const float* dout, float p, uint64_t seed, size_t n, GradStore store) {
  // dinp (n), dout (n)
  // forward: out = inp * keep(i) / (1 - p)
  POTOP_CHECK(p >= 0.0f && p < 1.0f, "dropout probability must be in [0, 1)");
  with_store(store, [&](auto add) { dropout_backward_impl<add>(dinp, dout, p, seed, n); });
}

}  // namespace potop
