#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/rng.h"
#include "kernels/dropout.h"
#include "support/testing.h"
#include "unit/kernels/kernel_testing.h"

namespace potop {
namespace {

using testing::random_vector;

TEST(DropoutTest, ZeroProbabilityIsIdentity) {
  const size_t n = 37;
  const auto x = random_vector(n, 1);
  std::vector<float> out(n, 5.0f);
  dropout_forward(out.data(), x.data(), 0.0f, 42, n);
  EXPECT_EQ(out, x);
  auto y = x;
  dropout_forward(y.data(), y.data(), 0.0f, 42, n);
  EXPECT_EQ(y, x);
  const auto dinp0 = random_vector(n, 2);
  auto dinp = dinp0;
  dropout_backward(dinp.data(), x.data(), 0.0f, 42, n);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(dinp[i], dinp0[i] + x[i]);
}

TEST(DropoutTest, MaskFollowsTheCounterAndRate) {
  const size_t n = 100000;
  const uint64_t seed = 1234;
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = 1.0f + static_cast<float>(i % 13);  // never zero
  for (const float p : {0.1f, 0.3f, 0.5f}) {
    std::vector<float> out(n);
    dropout_forward(out.data(), x.data(), p, seed, n);
    const float scale = 1.0f / (1.0f - p);
    size_t dropped = 0;
    for (size_t i = 0; i < n; ++i) {
      const bool keep = counter_uniform(seed, i) >= p;
      ASSERT_EQ(out[i], keep ? x[i] * scale : 0.0f) << "element " << i << " p=" << p;
      dropped += out[i] == 0.0f;
    }
    // Binomial: the standard deviation of the rate is √(p(1-p)/n) < 0.0016; allow ~6σ.
    EXPECT_NEAR(static_cast<double>(dropped) / n, p, 0.01) << "p=" << p;
  }
  // Another seed gives another mask.
  std::vector<float> a(n), b(n);
  dropout_forward(a.data(), x.data(), 0.5f, 1, n);
  dropout_forward(b.data(), x.data(), 0.5f, 2, n);
  EXPECT_NE(a, b);
}

TEST(DropoutTest, BackwardAppliesTheForwardMask) {
  for (const size_t n : {size_t{1}, size_t{17}, size_t{20001}}) {
    const float p = 0.25f;
    const uint64_t seed = 77;
    const auto x = random_vector(n, 3), dout = random_vector(n, 4), dinp0 = random_vector(n, 5);
    // The forward is linear, so its gradient is the forward applied to dout...
    std::vector<float> masked(n);
    dropout_forward(masked.data(), dout.data(), p, seed, n);
    auto dinp = dinp0;
    dropout_backward(dinp.data(), dout.data(), p, seed, n);
    // (up to rounding: the kernel may fuse the multiply-add)...
    for (size_t i = 0; i < n; ++i) {
      ASSERT_NEAR(dinp[i], dinp0[i] + masked[i], 1e-6 * (std::fabs(dinp0[i]) + std::fabs(masked[i]))) << i;
    }
    // ...and passes nothing exactly where the forward dropped the input.
    std::vector<float> out(n);
    dropout_forward(out.data(), x.data(), p, seed, n);
    for (size_t i = 0; i < n; ++i) {
      if (out[i] == 0.0f) {
        ASSERT_EQ(dinp[i], dinp0[i]) << i;
      }
    }
  }
}

TEST(DropoutTest, SameMaskForAnyThreadCount) {
  const size_t n = 50001;  // over the parallel threshold
  const auto x = random_vector(n, 6), dout = random_vector(n, 7);
  auto run = [&](int threads) {
    testing::ScopedThreads scope(threads);
    std::vector<float> result(2 * n, 0.0f);
    dropout_forward(result.data(), x.data(), 0.4f, 99, n);
    dropout_backward(result.data() + n, dout.data(), 0.4f, 99, n);
    return result;
  };
  const auto two = run(2);
  EXPECT_TRUE(testing::bitwise_equal(run(1), two));
  // In place gives the same as out of place.
  auto y = x;
  dropout_forward(y.data(), y.data(), 0.4f, 99, n);
  EXPECT_TRUE(testing::bitwise_equal(std::vector<float>(two.begin(), two.begin() + n), y));
}

TEST(DropoutTest, BackwardGradStoreBothWays) {
  // kAccumulate adds onto what dinp held, kOverwrite ignores it (kernel_testing.h): with and
  // without dropout, serial and parallel.
  for (const size_t n : {size_t{1}, size_t{37}, size_t{50001}}) {
    for (const float p : {0.0f, 0.3f}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " p=" + std::to_string(p));
      const auto dout = random_vector(n, 31);
      EXPECT_TRUE(testing::stores_as_grad_store_says({n}, 1, [&](GradStore store, const std::vector<float*>& g) {
        dropout_backward(g[0], dout.data(), p, 99, n, store);
      }));
    }
  }
}

}  // namespace
}  // namespace potop
