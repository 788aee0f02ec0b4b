#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/optimizer.h"
#include "support/testing.h"
#include "unit/kernels/kernel_testing.h"

namespace potop {
namespace {

using testing::random_vector;

// torch.optim.AdamW's update in double, hyperparameters as the decimals the user wrote.
struct AdamWRef {
  double lr, beta1, beta2, eps;
  std::vector<double> p, m, v;
  void step(const std::vector<float>& g, double wd, long t) {
    const double bc1 = 1 - std::pow(beta1, t), bc2 = 1 - std::pow(beta2, t);
    for (size_t i = 0; i < p.size(); ++i) {
      p[i] *= 1 - lr * wd;  // decoupled decay first, on the old parameter
      m[i] = beta1 * m[i] + (1 - beta1) * g[i];
      v[i] = beta2 * v[i] + (1 - beta2) * g[i] * g[i];
      p[i] -= lr * (m[i] / bc1) / (std::sqrt(v[i] / bc2) + eps);
    }
  }
};

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double rtol, const char* what) {
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], rtol * (std::fabs(want[i]) + 1e-30)) << what << "[" << i << "]";
  }
}

TEST(OptimizerTest, AdamWMatchesTorchFormula) {
  struct Config {
    double lr, beta1, beta2, eps, wd;
    float grad_scale;
  };
  // The second is aggressive so that the order of decay and update, and eps, matter.
  for (const Config c : {Config{1e-3, 0.9, 0.99, 1e-8, 0.1, 1.0f}, Config{0.1, 0.8, 0.95, 1e-3, 0.5, 1e-3f},
                         Config{3e-4, 0.9, 0.999, 1e-8, 0.0, 10.0f}}) {
    SCOPED_TRACE("lr=" + std::to_string(c.lr) + " wd=" + std::to_string(c.wd));
    const size_t n = 37;
    AdamWHyper hyper;
    hyper.lr = static_cast<float>(c.lr);
    hyper.beta1 = static_cast<float>(c.beta1);
    hyper.beta2 = static_cast<float>(c.beta2);
    hyper.eps = static_cast<float>(c.eps);
    hyper.weight_decay = 0.7f;  // must be ignored: the argument decides
    auto p = random_vector(n, 1);
    std::vector<float> m(n, 0.0f), v(n, 0.0f);
    AdamWRef ref{c.lr, c.beta1, c.beta2, c.eps, {p.begin(), p.end()}, std::vector<double>(n), std::vector<double>(n)};
    for (long t = 1; t <= 6; ++t) {
      const auto g = random_vector(n, 100 + t, c.grad_scale);
      adamw_update(p.data(), g.data(), m.data(), v.data(), n, hyper, static_cast<float>(c.wd), t);
      ref.step(g, c.wd, t);
      SCOPED_TRACE("t=" + std::to_string(t));
      expect_close(m, ref.m, 1e-5, "m");
      expect_close(v, ref.v, 1e-5, "v");
      expect_close(p, ref.p, 1e-5, "p");
    }
  }
}

TEST(OptimizerTest, AdamWIsTheSameForAnyThreadCount) {
  const size_t n = 40001;  // over the parallel threshold
  const auto g = random_vector(n, 2);
  auto run = [&](int threads) {
    testing::ScopedThreads scope(threads);
    auto p = random_vector(n, 3);
    std::vector<float> m(n, 0.0f), v(n, 0.0f);
    for (long t = 1; t <= 3; ++t) adamw_update(p.data(), g.data(), m.data(), v.data(), n, AdamWHyper{}, 0.1f, t);
    return p;
  };
  EXPECT_TRUE(testing::bitwise_equal(run(1), run(2)));
}

TEST(OptimizerTest, GlobalNormMatchesReferenceAndIsDeterministic) {
  for (const size_t n : {size_t{1}, size_t{17}, size_t{100003}}) {
    const auto g = random_vector(n, 4, 3.0f);
    double ref = 0;
    for (float x : g) ref += static_cast<double>(x) * x;
    ref = std::sqrt(ref);
    testing::ScopedThreads scope(2);
    const double a = global_norm(g.data(), n), b = global_norm(g.data(), n);
    EXPECT_NEAR(a, ref, 1e-12 * ref) << "n=" << n;
    EXPECT_EQ(a, b) << "n=" << n;
  }
  EXPECT_EQ(global_norm(nullptr, 0), 0.0);
}

TEST(OptimizerTest, ClipGradNormScalesOnlyAboveTheLimit) {
  const size_t n = 33;
  const auto g0 = random_vector(n, 5);
  const double norm = global_norm(g0.data(), n);

  auto g = g0;  // below the limit: untouched
  EXPECT_EQ(clip_grad_norm(g.data(), n, norm * 2), norm);
  EXPECT_EQ(g, g0);

  g = g0;  // above: scaled by max_norm / (norm + 1e-6), and the old norm is returned
  const double max_norm = norm / 4;
  EXPECT_EQ(clip_grad_norm(g.data(), n, max_norm), norm);
  const double coef = max_norm / (norm + 1e-6);
  for (size_t i = 0; i < n; ++i) EXPECT_NEAR(g[i], g0[i] * coef, 1e-6 * std::fabs(g0[i]));
  EXPECT_NEAR(global_norm(g.data(), n), max_norm, 1e-5 * max_norm);

  std::vector<float> zeros(n, 0.0f);  // a zero gradient stays zero (no 0/0)
  EXPECT_EQ(clip_grad_norm(zeros.data(), n, 1.0), 0.0);
  EXPECT_EQ(zeros, std::vector<float>(n, 0.0f));
}

}  // namespace
}  // namespace potop
