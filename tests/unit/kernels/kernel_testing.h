// Helpers shared by the kernel tests: the scalar loss L = Σ w ⊙ out, element-wise gradient
// checks against central differences, and a scoped OpenMP thread count.
#pragma once
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <sstream>
#include <vector>

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
