#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <string>
#include <vector>

#include "core/rng.h"
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

// global_norm's documented summation order (src/kernels/optimizer.cpp), written out here: from
// 2^14 values on (kParallelMin there), `threads` static shares of ⌈n / threads⌉ values, each summed
// in double, the partials added in thread order; below that, one share. Within a share the kernel
// lets the compiler vectorise (omp simd reduction, FMA), so that order is unspecified: the inputs
// compared bit for bit below have share sums that no order within a share can change.
double documented_global_norm(const std::vector<float>& g, int threads) {
  const size_t n = g.size();
  const size_t shares = n >= (size_t{1} << 14) ? static_cast<size_t>(threads) : 1;
  const size_t per = (n + shares - 1) / shares;
  double total = 0.0;
  for (size_t t = 0; t < shares; ++t) {
    const size_t i0 = std::min(n, t * per), i1 = std::min(n, i0 + per);
    double s = 0.0;
    for (size_t i = i0; i < i1; ++i) s += static_cast<double>(g[i]) * g[i];
    total += s;
  }
  return std::sqrt(total);
}

double global_norm_at(const std::vector<float>& g, int threads) {
  testing::ScopedThreads scope(threads);
  return global_norm(g.data(), g.size());
}

// Bit for bit, on values k/256 (k = ±1..±64, never 0): every square and every partial sum is
// exact in double, so any order gives the exact sum; a value dropped or counted twice, or a sum
// kept in float (this one needs 28 bits, float has 24), changes the result.
TEST(OptimizerTest, GlobalNormIsExactOnExactlySummableValues) {
  for (const size_t n : {size_t{1}, size_t{17}, size_t{100003}}) {
    Rng rng(6);
    std::vector<float> g(n);
    for (float& x : g) x = static_cast<float>(static_cast<int>(rng.below(64)) + 1) / 256.0f * (rng.below(2) ? 1 : -1);
    for (const int threads : {1, 2, 3}) {
      const double got = global_norm_at(g, threads), want = documented_global_norm(g, threads);
      EXPECT_EQ(got, want) << "n=" << n << " threads=" << threads << ": " << std::setprecision(17) << got << " vs "
                           << want;  // == on finite non-zero doubles is bit equality
    }
  }
}

// Bit for bit, on values whose result shows where the shares end and in which order the partials
// are added. Squares: B = (1.5 * 2^30)^2 at index 0 and 64 at the last index of share 0, which
// sums to B (64 is below half of B's ulp, 512); 64 at the first two and the last two indices of
// every other share, 256 per share. Added in thread order, each 256 is a tie that rounds back to
// the even B, so the norm is exactly 1.5 * 2^30. Moving the first boundary one index early (the 64
// into share 1) gives one ulp more, and so do, at 3 threads, the partials added in reverse and the
// second boundary one index off either way (OpenMP's own static schedule puts it one early).
// (Not 2^30: there a one-ulp change of the sum would be lost in the square root.)
TEST(OptimizerTest, GlobalNormAddsThreadSharesInTheDocumentedOrder) {
  const size_t n = 100003;
  for (const int threads : {2, 3}) {
    const size_t per = (n + threads - 1) / threads;
    std::vector<float> g(n, 0.0f);
    g[0] = 0x1.8p30f;
    g[per - 1] = 8.0f;
    for (size_t t = 1; t < static_cast<size_t>(threads); ++t) {
      const size_t first = t * per, last = std::min(n, first + per) - 1;
      g[first] = g[first + 1] = g[last - 1] = g[last] = 8.0f;
    }
    const double want = documented_global_norm(g, threads);
    ASSERT_EQ(want, 0x1.8p30) << "the input no longer shows the order (threads=" << threads << ")";
    const double got = global_norm_at(g, threads);
    EXPECT_EQ(got, want) << "threads=" << threads << ": " << std::setprecision(17) << got << " is "
                         << (got - want) / (std::nextafter(want, 2 * want) - want) << " ulp off";
  }
}

// Any values: the norm at 1 and 2 threads is √Σg² to double rounding, and the two thread counts
// agree closely: they only group the same double sums differently. Measured at n = 100003: 8e-16
// apart where the sums are vectorised (release), 9e-15 where they run in order (the sanitizer
// build's -O2), hence 1e-13; losing or repeating a typical value moves the norm by ~5e-6.
TEST(OptimizerTest, GlobalNormMatchesReferenceAtOneAndTwoThreads) {
  for (const size_t n : {size_t{1}, size_t{17}, size_t{100003}}) {
    const auto g = random_vector(n, 4, 3.0f);
    double ref = 0;
    for (float x : g) ref += static_cast<double>(x) * x;
    ref = std::sqrt(ref);
    const double one = global_norm_at(g, 1), two = global_norm_at(g, 2);
    EXPECT_NEAR(one, ref, 1e-12 * ref) << "n=" << n;
    EXPECT_NEAR(two, ref, 1e-12 * ref) << "n=" << n;
    EXPECT_NEAR(one, two, 1e-13 * ref) << "n=" << n;
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
