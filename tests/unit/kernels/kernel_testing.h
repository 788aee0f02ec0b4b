// Helpers shared by the kernel tests: the scalar loss L = Σ w ⊙ out, element-wise gradient
// checks against central differences, the check of a backward kernel's GradStore, and a scoped
// OpenMP thread count.
#pragma once
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <limits>
#include <sstream>
#include <vector>

#include "kernels/grad_store.h"
#include "support/testing.h"

namespace potop::testing {

// L = Σ w ⊙ out in double, so dL/dout = w.
inline double weighted_sum(const float* out, const float* w, size_t n) {
  double s = 0.0;
  for (size_t i = 0; i < n; ++i) s += static_cast<double>(w[i]) * out[i];
  return s;
}

// after - before, element-wise: what a backward pass added to a pre-filled gradient buffer.
inline std::vector<float> added(const std::vector<float>& after, const std::vector<float>& before) {
  std::vector<float> d(after.size());
  for (size_t i = 0; i < after.size(); ++i) d[i] = after[i] - before[i];
  return d;
}

// Checks grad (n) against central differences of loss with respect to x, element by element:
// |fd - grad| <= atol + rtol |fd|. Names the first few elements that fail.
inline ::testing::AssertionResult gradient_matches(const std::function<double()>& loss, float* x, const float* grad,
                                                   size_t n, float h, double atol, double rtol) {
  std::ostringstream msg;
  int failures = 0;
  for (size_t i = 0; i < n; ++i) {
    const double fd = central_difference(loss, x, i, h);
    if (std::fabs(fd - grad[i]) > atol + rtol * std::fabs(fd)) {
      if (failures < 5) msg << "\n  [" << i << "] analytic " << grad[i] << " vs finite difference " << fd;
      ++failures;
    }
  }
  if (failures == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << failures << " of " << n << " gradient elements differ:" << msg.str();
}

// Checks that a backward kernel stores its gradients as grad_store.h says. run(store, bufs) calls
// the kernel with its gradient outputs at bufs, of the given sizes: the first n_act are activation
// gradients, the rest parameter gradients. With g what the kernel gives onto zeros (kAccumulate
// onto a zeroed buffer: "zero, then accumulate"):
//  - kOverwrite gives g whatever the buffer held (NaN here): the same value, bit for bit but for
//    the sign of a zero (0 + -0 is +0);
//  - kAccumulate onto non-zero garbage G gives G + g, to within the rounding of the multiply-add
//    that g++ fuses (grad_store.h);
//  - parameter gradients accumulate with either store: from the same garbage, the same bits, and
//    G + g to within rounding.
inline ::testing::AssertionResult stores_as_grad_store_says(
    const std::vector<size_t>& sizes, size_t n_act, const std::function<void(GradStore, const std::vector<float*>&)>& run) {
  using Buffers = std::vector<std::vector<float>>;
  auto pointers = [](Buffers& b) {
    std::vector<float*> p;
    for (auto& v : b) p.push_back(v.data());
    return p;
  };
  Buffers zeros, garbage;
  for (size_t i = 0; i < sizes.size(); ++i) {
    zeros.emplace_back(sizes[i], 0.0f);
    garbage.push_back(random_vector(sizes[i], 1000 + i, 3.0f));
    for (float& x : garbage.back()) x += x < 0.0f ? -0.5f : 0.5f;  // no zeros: G + g = g would hide an overwrite
  }
  Buffers accumulated = garbage, overwritten = garbage;
  for (size_t i = 0; i < n_act; ++i) overwritten[i].assign(sizes[i], std::numeric_limits<float>::quiet_NaN());
  run(GradStore::kAccumulate, pointers(zeros));
  run(GradStore::kAccumulate, pointers(accumulated));
  run(GradStore::kOverwrite, pointers(overwritten));

  auto same_bits = [](float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; };
  for (size_t i = 0; i < sizes.size(); ++i) {
    for (size_t j = 0; j < sizes[i]; ++j) {
      const float g = zeros[i][j];
      // G + g within a few roundings: 2^-22 (|G| + |g|), where forgetting G (or g) misses by |G| (or |g|).
      const float want = garbage[i][j] + g;
      const bool near = std::fabs(accumulated[i][j] - want) <= 0x1p-22f * (std::fabs(garbage[i][j]) + std::fabs(g));
      if (i < n_act) {
        if (!near) {
          return ::testing::AssertionFailure() << "kAccumulate, activation gradient " << i << "[" << j << "]: "
                                               << accumulated[i][j] << ", expected " << garbage[i][j] << " + " << g
                                               << " = " << garbage[i][j] + g;
        }
        if (!(overwritten[i][j] == g)) {  // == : false for NaN, true for 0 == -0
          return ::testing::AssertionFailure() << "kOverwrite, activation gradient " << i << "[" << j << "]: "
                                               << overwritten[i][j] << ", expected " << g
                                               << " (zero, then accumulate)";
        }
      } else {
        if (!same_bits(overwritten[i][j], accumulated[i][j])) {
          return ::testing::AssertionFailure() << "parameter gradient " << i << "[" << j << "] with kOverwrite: "
                                               << overwritten[i][j] << ", with kAccumulate " << accumulated[i][j]
                                               << " (parameter gradients always accumulate)";
        }
        if (!near) {
          return ::testing::AssertionFailure() << "parameter gradient " << i << "[" << j << "]: " << accumulated[i][j]
                                               << ", expected " << garbage[i][j] << " + " << g << " = " << want;
        }
      }
    }
  }
  return ::testing::AssertionSuccess();
}

// Runs a scope with n OpenMP threads and restores the previous count afterwards.
class ScopedThreads {
 public:
  explicit ScopedThreads(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~ScopedThreads() { omp_set_num_threads(saved_); }
  ScopedThreads(const ScopedThreads&) = delete;
  ScopedThreads& operator=(const ScopedThreads&) = delete;

 private:
  int saved_;
};

}  // namespace potop::testing
