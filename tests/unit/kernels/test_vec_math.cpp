#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/vec_math.h"

namespace potop::test_vec_math {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

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
  EXPECT_EQ(exp_vec(-kInf), 0.0f);  // softmax relies on this for masked entries
  EXPECT_EQ(exp_vec(-100.0f), 0.0f);
  EXPECT_TRUE(std::isfinite(exp_vec(kInf)));  // saturates instead of overflowing
  EXPECT_GT(exp_vec(kInf), 1e38f);
  EXPECT_TRUE(std::isnan(exp_vec(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_NEAR(exp_vec(-87.0f), std::exp(-87.0), 1e-6 * std::exp(-87.0));
}

// exp_vec on floats one at a time. noinline, so that it stays the scalar instantiation's code:
// inlined into the caller's loop, g++ could vectorise it.
[[gnu::noinline]] float scalar_exp(float x) { return exp_vec(x); }

TEST(VecMathTest, ExpOnVectorsIsExpOnEachLaneBitForBit) {
  // attention.cpp computes exp_vec on vfloat; softmax and GELU on float. Both instantiate one
  // template, so every lane must give exactly the bits of the scalar call. Inputs: a walk over
  // the whole float line by bit pattern (every binade, both signs, subnormals, NaNs), every float
  // near the clamp edges and near 0, and the specials.
  std::vector<float> x;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 997) x.push_back(std::bit_cast<float>(uint32_t(bits)));
  for (const float edge : {-87.3f, 88.3f, 0.0f, -0.0f, -87.0f, -88.0f}) {
    float lo = edge, hi = edge;
    for (int i = 0; i < 4096; ++i) {
      lo = std::nextafter(lo, -kInf), hi = std::nextafter(hi, kInf);
      x.push_back(lo), x.push_back(hi);
    }
    x.push_back(edge);
  }
  for (const float special : {kInf, -kInf, std::numeric_limits<float>::quiet_NaN(),
                              -std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::signaling_NaN(),
                              std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest(),
                              std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min()}) {
    x.push_back(special);
  }
  while (x.size() % kLanes) x.push_back(0.0f);

  size_t mismatches = 0;
  std::string first;
  for (size_t i = 0; i < x.size(); i += kLanes) {
    vfloat v;
    std::memcpy(&v, &x[i], sizeof v);
    const vfloat e = exp_vec(v);
    for (int l = 0; l < kLanes; ++l) {
      const float want = scalar_exp(x[i + l]);
      if (std::bit_cast<uint32_t>(e[l]) != std::bit_cast<uint32_t>(want) && mismatches++ == 0) {
        std::ostringstream msg;
        msg << "exp_vec(" << x[i + l] << ") is " << want << " (0x" << std::hex << std::bit_cast<uint32_t>(want)
            << ") as a float but " << e[l] << " (0x" << std::bit_cast<uint32_t>(e[l]) << ") in lane " << std::dec << l
            << " of a vfloat";
        first = msg.str();
      }
    }
  }
  EXPECT_EQ(mismatches, 0u) << "of " << x.size() << " inputs; the first: " << first;
}

}  // namespace
}  // namespace potop::test_vec_math
