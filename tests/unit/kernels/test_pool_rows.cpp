// The pooling kernels (kernels/pool_rows.h): gather_rows and mean_rows against a direct
// reference, their backward passes against central differences, and their GradStore semantics
// (kOverwrite zeroes the rows no index or length reaches).
#include "kernels/pool_rows.h"

#include <gtest/gtest.h>

#include <vector>

#include "unit/kernels/kernel_testing.h"

namespace potop {
namespace {

constexpr int kB = 3, kT = 5, kC = 7;

TEST(PoolRows, GatherPicksTheRowsAndItsGradientMatchesFiniteDifferences) {
  std::vector<float> x = testing::random_vector(size_t(kB) * kT * kC, 1);
  const std::vector<int> index = {0, 2 * kT - 1, 0, 14};  // a repeated index adds up
  const int M = int(index.size());
  std::vector<float> out(size_t(M) * kC);
  gather_rows_forward(out.data(), x.data(), index.data(), M, kC);
  for (int i = 0; i < M; ++i)
    for (int c = 0; c < kC; ++c) EXPECT_EQ(out[size_t(i) * kC + c], x[size_t(index[size_t(i)]) * kC + c]);
  const std::vector<float> w = testing::random_vector(out.size(), 2);
  std::vector<float> dx(x.size(), 0.0f);
  gather_rows_backward(dx.data(), w.data(), index.data(), M, kC, kB * kT);
  auto loss = [&] {
    gather_rows_forward(out.data(), x.data(), index.data(), M, kC);
    return testing::weighted_sum(out.data(), w.data(), out.size());
  };
  EXPECT_TRUE(testing::gradient_matches(loss, x.data(), dx.data(), x.size(), 1e-2f, 1e-4, 1e-3));
  EXPECT_TRUE(testing::stores_as_grad_store_says({x.size()}, 1, [&](GradStore s, const std::vector<float*>& g) {
    gather_rows_backward(g[0], w.data(), index.data(), M, kC, kB * kT, s);
  }));
}

TEST(PoolRows, MeanOverTheRealTokensAndItsGradientMatchesFiniteDifferences) {
  std::vector<float> x = testing::random_vector(size_t(kB) * kT * kC, 3);
  const std::vector<int> lengths = {kT, 1, 3};
  std::vector<float> out(size_t(kB) * kC);
  mean_rows_forward(out.data(), x.data(), lengths.data(), kB, kT, kC);
  for (int b = 0; b < kB; ++b)
    for (int c = 0; c < kC; ++c) {
      double sum = 0;
      for (int t = 0; t < lengths[size_t(b)]; ++t) sum += x[(size_t(b) * kT + t) * kC + c];
      EXPECT_NEAR(out[size_t(b) * kC + c], sum / lengths[size_t(b)], 1e-6);
    }
  const std::vector<float> w = testing::random_vector(out.size(), 4);
  std::vector<float> dx(x.size(), 0.0f);
  mean_rows_backward(dx.data(), w.data(), lengths.data(), kB, kT, kC);
  auto loss = [&] {
    mean_rows_forward(out.data(), x.data(), lengths.data(), kB, kT, kC);
    return testing::weighted_sum(out.data(), w.data(), out.size());
  };
  EXPECT_TRUE(testing::gradient_matches(loss, x.data(), dx.data(), x.size(), 1e-2f, 1e-4, 1e-3));
  EXPECT_EQ(dx[(size_t(1) * kT + 1) * kC], 0.0f);  // padding gets nothing
  EXPECT_TRUE(testing::stores_as_grad_store_says({x.size()}, 1, [&](GradStore s, const std::vector<float*>& g) {
    mean_rows_backward(g[0], w.data(), lengths.data(), kB, kT, kC, s);
  }));
  // Without lengths: every position.
  mean_rows_forward(out.data(), x.data(), nullptr, kB, kT, kC);
  double sum = 0;
  for (int t = 0; t < kT; ++t) sum += x[size_t(t) * kC];
  EXPECT_NEAR(out[0], sum / kT, 1e-6);
}

}  // namespace
}  // namespace potop
