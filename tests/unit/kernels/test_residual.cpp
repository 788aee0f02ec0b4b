#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/residual.h"
#include "support/testing.h"
#include "unit/kernels/kernel_testing.h"

namespace potop {
namespace {

using testing::random_vector;

TEST(ResidualTest, ForwardAddsAndMayWorkInPlace) {
  for (const size_t n : {size_t{1}, size_t{17}, size_t{70001}}) {
    const auto a = random_vector(n, 1), b = random_vector(n, 2);
    std::vector<float> out(n);
    residual_forward(out.data(), a.data(), b.data(), n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], a[i] + b[i]) << i;
    auto x = a;
    residual_forward(x.data(), x.data(), b.data(), n);  // x += b
    EXPECT_EQ(x, out);
  }
}

TEST(ResidualTest, BackwardAccumulatesIntoBoth) {
  for (const size_t n : {size_t{1}, size_t{33}, size_t{70001}}) {
    const auto dout = random_vector(n, 3), da0 = random_vector(n, 4), db0 = random_vector(n, 5);
    auto da = da0, db = db0;
    residual_backward(da.data(), db.data(), dout.data(), n);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(da[i], da0[i] + dout[i]) << i;
      ASSERT_EQ(db[i], db0[i] + dout[i]) << i;
    }
  }
}

TEST(ResidualTest, BackwardGradStoreBothWays) {
  // da and db both by the store (kernel_testing.h), serial and parallel.
  for (const size_t n : {size_t{1}, size_t{33}, size_t{70001}}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const auto dout = random_vector(n, 6);
    EXPECT_TRUE(testing::stores_as_grad_store_says({n, n}, 2, [&](GradStore store, const std::vector<float*>& g) {
      residual_backward(g[0], g[1], dout.data(), n, store);
    }));
  }
}

}  // namespace
}  // namespace potop
