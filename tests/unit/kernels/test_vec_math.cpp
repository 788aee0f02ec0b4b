#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/vec_math.h"

namespace potop {
namespace {

TEST(VecMathTest, ExpIsWithinAnUlpOverItsRange) {
  const int n = 1 << 20;
  double worst = 0;
  float worst_x = 0;
  for (int i = 0; i <= n; ++i) {
    const float x = -87.0f + 175.0f * static_cast<float>(i) / n;
    const double want = std::exp(static_cast<double>(x));
    const double rel = std::fabs(exp_vec(x) - want) / want;
    if (rel > worst) worst = rel, worst_x = x;
  }
  EXPECT_LT(worst, 1.5e-7) << "at x = " << worst_x;  // 2^-23 ≈ 1.2e-7 is one ulp at the top of a binade
  EXPECT_EQ(exp_vec(0.0f), 1.0f);
  EXPECT_EQ(exp_vec(-0.0f), 1.0f);
}

TEST(VecMathTest, ExpEdgeValues) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(exp_vec(-kInf), 0.0f);  // softmax relies on this for masked entries
  EXPECT_EQ(exp_vec(-100.0f), 0.0f);
  EXPECT_TRUE(std::isfinite(exp_vec(kInf)));  // saturates instead of overflowing
  EXPECT_GT(exp_vec(kInf), 1e38f);
  EXPECT_TRUE(std::isnan(exp_vec(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_NEAR(exp_vec(-87.0f), std::exp(-87.0), 1e-6 * std::exp(-87.0));
}

TEST(VecMathTest, ExpVectorisedLoopMatchesScalarCalls) {
  // The same function inlined into a (vectorised) loop and called one value at a time.
  std::vector<float> x(1001), y(1001);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -90.0f + 0.18f * static_cast<float>(i);
  for (size_t i = 0; i < x.size(); ++i) y[i] = exp_vec(x[i]);
  for (size_t i = 0; i < x.size(); i += 37) {
    volatile float xi = x[i];
    EXPECT_EQ(y[i], exp_vec(xi)) << x[i];
  }
}

}  // namespace
}  // namespace potop
