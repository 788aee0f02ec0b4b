#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/layernorm.h"
#include "support/testing.h"
#include "unit/kernels/kernel_testing.h"

namespace potop {
namespace {

using testing::added;
using testing::gradient_matches;
using testing::random_vector;
using testing::weighted_sum;

struct Case {
  int N, C;
};
const Case kCases[] = {{1, 1}, {1, 17}, {3, 3}, {5, 17}, {4, 33}, {2, 64}};

std::string describe(const Case& k) { return "N=" + std::to_string(k.N) + " C=" + std::to_string(k.C); }

TEST(LayerNormTest, ForwardMatchesReference) {
  for (const Case& k : {Case{1, 1}, Case{3, 3}, Case{5, 17}, Case{4, 33}, Case{2, 768}}) {
    for (bool use_bias : {true, false}) {
      SCOPED_TRACE(describe(k) + (use_bias ? " bias" : " no bias"));
      const size_t n = static_cast<size_t>(k.N) * k.C;
      auto inp = random_vector(n, 1, 2.0f);
      for (size_t i = 0; i < n; ++i) inp[i] += 3.0f;  // a mean far from 0
      auto w = random_vector(k.C, 2), b = random_vector(k.C, 3);
      std::vector<float> out(n), mean(k.N), rstd(k.N);
      layernorm_forward(out.data(), mean.data(), rstd.data(), inp.data(), w.data(), use_bias ? b.data() : nullptr,
                        k.N, k.C);
      std::vector<double> ref(n), ref_mean(k.N), ref_rstd(k.N);
      for (int r = 0; r < k.N; ++r) {
        const float* x = inp.data() + static_cast<size_t>(r) * k.C;
        double m = 0, var = 0;
        for (int c = 0; c < k.C; ++c) m += x[c];
        m /= k.C;
        for (int c = 0; c < k.C; ++c) var += (x[c] - m) * (x[c] - m);
        var /= k.C;  // biased, as torch.nn.LayerNorm
        const double s = 1.0 / std::sqrt(var + static_cast<double>(kLayerNormEps));
        ref_mean[r] = m;
        ref_rstd[r] = s;
        for (int c = 0; c < k.C; ++c) ref[static_cast<size_t>(r) * k.C + c] = (x[c] - m) * s * w[c] + (use_bias ? b[c] : 0.0);
      }
      EXPECT_LT(testing::nmse(out.data(), ref.data(), n), 1e-11);
      EXPECT_LT(testing::max_abs_diff(out.data(), ref.data(), n), 1e-4);
      EXPECT_LT(testing::max_abs_diff(mean.data(), ref_mean.data(), k.N), 1e-5);
      EXPECT_LT(testing::nmse(rstd.data(), ref_rstd.data(), k.N), 1e-11);
    }
  }
}

TEST(LayerNormTest, BackwardMatchesFiniteDifferencesAndAccumulates) {
  for (const Case& k : kCases) {
    SCOPED_TRACE(describe(k));
    const size_t n = static_cast<size_t>(k.N) * k.C;
    auto inp = random_vector(n, 11);
    auto w = random_vector(k.C, 12), b = random_vector(k.C, 13);
    auto dout = random_vector(n, 14);
    std::vector<float> out(n), mean(k.N), rstd(k.N);
    auto loss = [&] {
      layernorm_forward(out.data(), mean.data(), rstd.data(), inp.data(), w.data(), b.data(), k.N, k.C);
      return weighted_sum(out.data(), dout.data(), n);
    };
    loss();  // mean and rstd of the unperturbed input
    const auto saved_mean = mean, saved_rstd = rstd;
    const auto dinp0 = random_vector(n, 15), dw0 = random_vector(k.C, 16), db0 = random_vector(k.C, 17);
    auto dinp = dinp0, dw = dw0, db = db0;
    layernorm_backward(dinp.data(), dw.data(), db.data(), dout.data(), inp.data(), w.data(), saved_mean.data(),
                       saved_rstd.data(), k.N, k.C);
    EXPECT_TRUE(gradient_matches(loss, inp.data(), added(dinp, dinp0).data(), n, 1e-3f, 5e-3, 1e-2));
    EXPECT_TRUE(gradient_matches(loss, w.data(), added(dw, dw0).data(), k.C, 1e-2f, 2e-3, 1e-3));
    EXPECT_TRUE(gradient_matches(loss, b.data(), added(db, db0).data(), k.C, 1e-2f, 2e-3, 1e-3));

    // Without a bias the other gradients are unchanged.
    auto dinp_nb = dinp0, dw_nb = dw0;
    layernorm_backward(dinp_nb.data(), dw_nb.data(), nullptr, dout.data(), inp.data(), w.data(), saved_mean.data(),
                       saved_rstd.data(), k.N, k.C);
    EXPECT_EQ(dinp_nb, dinp);
    EXPECT_EQ(dw_nb, dw);
  }
}

TEST(LayerNormTest, BackwardIsTheSameForAnyThreadCount) {
  const int N = 64, C = 333;  // over the parallel threshold, C not a multiple of the block
  const size_t n = static_cast<size_t>(N) * C;
  auto inp = random_vector(n, 21), w = random_vector(C, 22), b = random_vector(C, 23), dout = random_vector(n, 24);
  std::vector<float> out(n), mean(N), rstd(N);
  layernorm_forward(out.data(), mean.data(), rstd.data(), inp.data(), w.data(), b.data(), N, C);
  auto run = [&](int threads) {
    testing::ScopedThreads scope(threads);
    std::vector<float> grads(n + 2 * C, 0.0f);  // dinp, dweight, dbias
    layernorm_backward(grads.data(), grads.data() + n, grads.data() + n + C, dout.data(), inp.data(), w.data(),
                       mean.data(), rstd.data(), N, C);
    return grads;
  };
  const auto two = run(2);
  EXPECT_TRUE(testing::bitwise_equal(two, run(2)));
  EXPECT_TRUE(testing::bitwise_equal(two, run(1)));
}

TEST(LayerNormTest, ResidualLayerNormIsAddThenLayerNorm) {
  // The fused kernel gives exactly what the add followed by layernorm_forward gives, also in place.
  for (const Case& k : kCases) {
    for (bool use_bias : {true, false}) {
      SCOPED_TRACE(describe(k) + (use_bias ? " bias" : " no bias"));
      const size_t n = static_cast<size_t>(k.N) * k.C;
      const auto a = random_vector(n, 11, 2.0f), b = random_vector(n, 12), w = random_vector(k.C, 13),
                 bias = random_vector(k.C, 14);
      const float* bp = use_bias ? bias.data() : nullptr;
      std::vector<float> sum(n), out(n), mean(k.N), rstd(k.N);
      for (size_t i = 0; i < n; ++i) sum[i] = a[i] + b[i];
      layernorm_forward(out.data(), mean.data(), rstd.data(), sum.data(), w.data(), bp, k.N, k.C);
      std::vector<float> res(n), fused(n), fmean(k.N), frstd(k.N);
      residual_layernorm_forward(res.data(), fused.data(), fmean.data(), frstd.data(), a.data(), b.data(), w.data(), bp,
                                 k.N, k.C);
      EXPECT_TRUE(testing::bitwise_equal(res, sum));
      EXPECT_TRUE(testing::bitwise_equal(fused, out));
      EXPECT_TRUE(testing::bitwise_equal(fmean, mean));
      EXPECT_TRUE(testing::bitwise_equal(frstd, rstd));
      std::vector<float> inplace = a;  // res aliasing a
      residual_layernorm_forward(inplace.data(), fused.data(), fmean.data(), frstd.data(), inplace.data(), b.data(),
                                 w.data(), bp, k.N, k.C);
      EXPECT_TRUE(testing::bitwise_equal(inplace, sum));
      EXPECT_TRUE(testing::bitwise_equal(fused, out));
    }
  }
}

TEST(LayerNormTest, BackwardGradStoreBothWays) {
  // dinp by the store (kernel_testing.h); dweight and dbias, parameter gradients, always summed into.
  // The last case runs on several threads.
  for (const Case& k : {Case{1, 1}, Case{5, 17}, Case{64, 333}}) {
    SCOPED_TRACE(describe(k));
    const size_t n = static_cast<size_t>(k.N) * k.C;
    const auto inp = random_vector(n, 31), w = random_vector(k.C, 32), b = random_vector(k.C, 33),
               dout = random_vector(n, 34);
    std::vector<float> out(n), mean(k.N), rstd(k.N);
    layernorm_forward(out.data(), mean.data(), rstd.data(), inp.data(), w.data(), b.data(), k.N, k.C);
    const size_t C = static_cast<size_t>(k.C);
    EXPECT_TRUE(testing::stores_as_grad_store_says({n, C, C}, 1, [&](GradStore store, const std::vector<float*>& g) {
      layernorm_backward(g[0], g[1], g[2], dout.data(), inp.data(), w.data(), mean.data(), rstd.data(), k.N, k.C,
                         store);
    }));
  }
}

}  // namespace
}  // namespace potop
