#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/softmax.h"
#include "support/testing.h"
#include "unit/kernels/kernel_testing.h"

namespace potop {
namespace {

using testing::added;
using testing::gradient_matches;
using testing::random_vector;
using testing::weighted_sum;

constexpr float kInf = std::numeric_limits<float>::infinity();

// Row-wise softmax in double.
std::vector<double> softmax_ref(const std::vector<float>& x, int N, int V) {
  std::vector<double> p(x.size());
  for (int n = 0; n < N; ++n) {
    const float* row = x.data() + static_cast<size_t>(n) * V;
    double mx = -INFINITY, sum = 0;
    for (int v = 0; v < V; ++v) mx = std::max(mx, static_cast<double>(row[v]));
    for (int v = 0; v < V; ++v) sum += std::exp(row[v] - mx);
    for (int v = 0; v < V; ++v) p[static_cast<size_t>(n) * V + v] = std::exp(row[v] - mx) / sum;
  }
  return p;
}

TEST(SoftmaxTest, ForwardMatchesReference) {
  struct Case {
    int N, V;
    float scale, offset;
  };
  for (const Case k : {Case{1, 1, 1, 0}, Case{3, 17, 1, 0}, Case{2, 33, 30, 0}, Case{4, 9, 3, 1000}}) {
    SCOPED_TRACE("N=" + std::to_string(k.N) + " V=" + std::to_string(k.V) + " scale=" + std::to_string(k.scale));
    auto x = random_vector(static_cast<size_t>(k.N) * k.V, 1, k.scale);
    for (auto& v : x) v += k.offset;  // large logits must not overflow
    std::vector<float> out(x.size());
    softmax_forward(out.data(), x.data(), k.N, k.V);
    const auto ref = softmax_ref(x, k.N, k.V);
    EXPECT_LT(testing::max_abs_diff(out.data(), ref.data(), x.size()), 1e-6);
    EXPECT_LT(testing::nmse(out.data(), ref.data(), x.size()), 1e-12);
    // In place.
    softmax_forward(x.data(), x.data(), k.N, k.V);
    EXPECT_EQ(x, out);
  }
}

TEST(SoftmaxTest, NegativeInfinityGetsZeroProbability) {
  std::vector<float> x = {1.0f, -kInf, 2.0f, -kInf,  // a masked row
                          -kInf, -kInf, -kInf, -kInf};  // nothing visible: all zeros, no NaN
  std::vector<float> out(8);
  softmax_forward(out.data(), x.data(), 2, 4);
  const double e = std::exp(-1.0);
  EXPECT_NEAR(out[0], e / (1 + e), 1e-7);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_NEAR(out[2], 1 / (1 + e), 1e-7);
  EXPECT_EQ(out[3], 0.0f);
  for (int v = 4; v < 8; ++v) EXPECT_EQ(out[v], 0.0f);
}

TEST(SoftmaxTest, BackwardMatchesFiniteDifferencesAndAccumulates) {
  for (const auto& [N, V] : {std::pair{1, 1}, std::pair{1, 17}, std::pair{3, 5}, std::pair{2, 33}}) {
    SCOPED_TRACE("N=" + std::to_string(N) + " V=" + std::to_string(V));
    const size_t n = static_cast<size_t>(N) * V;
    auto x = random_vector(n, 11, 2.0f), dout = random_vector(n, 12);
    std::vector<float> out(n);
    auto loss = [&] {
      softmax_forward(out.data(), x.data(), N, V);
      return weighted_sum(out.data(), dout.data(), n);
    };
    loss();
    const auto probs = out;
    const auto dinp0 = random_vector(n, 13);
    auto dinp = dinp0;
    softmax_backward(dinp.data(), dout.data(), probs.data(), N, V);
    EXPECT_TRUE(gradient_matches(loss, x.data(), added(dinp, dinp0).data(), n, 1e-2f, 1e-4, 1e-2));
  }
}

TEST(CrossEntropyTest, ForwardMatchesReference) {
  struct Case {
    int N, V;
    float scale, offset;
  };
  for (const Case k : {Case{1, 1, 1, 0}, Case{5, 17, 1, 0}, Case{3, 33, 40, 0}, Case{4, 1000, 2, 1e4}}) {
    SCOPED_TRACE("N=" + std::to_string(k.N) + " V=" + std::to_string(k.V));
    auto logits = random_vector(static_cast<size_t>(k.N) * k.V, 1, k.scale);
    for (auto& v : logits) v += k.offset;
    std::vector<int> targets(k.N);
    for (int n = 0; n < k.N; ++n) targets[n] = (n * 7 + 3) % k.V;
    if (k.N > 2) targets[1] = -1;  // padding
    std::vector<float> losses(k.N, 5.0f), probs(logits.size());
    crossentropy_forward(losses.data(), probs.data(), logits.data(), targets.data(), k.N, k.V);

    std::vector<double> ref_losses(k.N);
    for (int n = 0; n < k.N; ++n) {
      const float* row = logits.data() + static_cast<size_t>(n) * k.V;
      double mx = -INFINITY, sum = 0;
      for (int v = 0; v < k.V; ++v) mx = std::max(mx, static_cast<double>(row[v]));
      for (int v = 0; v < k.V; ++v) sum += std::exp(row[v] - mx);
      ref_losses[n] = targets[n] < 0 ? 0.0 : std::log(sum) + mx - row[targets[n]];
    }
    const auto ref_probs = softmax_ref(logits, k.N, k.V);
    EXPECT_LT(testing::max_abs_diff(losses.data(), ref_losses.data(), k.N), 1e-5);
    EXPECT_LT(testing::max_abs_diff(probs.data(), ref_probs.data(), probs.size()), 1e-6);
    if (k.N > 2) {
      EXPECT_EQ(losses[1], 0.0f);
    }

    // probs may alias logits.
    std::vector<float> losses2(k.N);
    crossentropy_forward(losses2.data(), logits.data(), logits.data(), targets.data(), k.N, k.V);
    EXPECT_EQ(losses2, losses);
    EXPECT_EQ(logits, probs);
  }
}

TEST(CrossEntropyTest, BackwardMatchesFiniteDifferencesAndOverwrites) {
  for (const auto& [N, V] : {std::pair{1, 1}, std::pair{1, 17}, std::pair{4, 5}, std::pair{3, 33}}) {
    SCOPED_TRACE("N=" + std::to_string(N) + " V=" + std::to_string(V));
    const size_t n = static_cast<size_t>(N) * V;
    auto logits = random_vector(n, 21, 2.0f);
    std::vector<int> targets(N);
    for (int r = 0; r < N; ++r) targets[r] = (r * 5 + 1) % V;
    if (N > 2) targets[2] = -1;
    const auto dlosses = random_vector(N, 22);  // L = Σ_n dlosses ⊙ losses
    std::vector<float> losses(N), probs(n);
    auto loss = [&] {
      crossentropy_forward(losses.data(), probs.data(), logits.data(), targets.data(), N, V);
      return weighted_sum(losses.data(), dlosses.data(), N);
    };
    loss();
    std::vector<float> dlogits(n, 1234.0f);  // garbage: with kOverwrite the backward writes, not adds
    crossentropy_backward(dlogits.data(), probs.data(), targets.data(), dlosses.data(), N, V, GradStore::kOverwrite);
    EXPECT_TRUE(gradient_matches(loss, logits.data(), dlogits.data(), n, 1e-2f, 1e-4, 1e-2));
    if (N > 2) {
      for (int v = 0; v < V; ++v) EXPECT_EQ(dlogits[2 * V + v], 0.0f);
    }
    // dlogits may alias probs (with kOverwrite).
    loss();
    crossentropy_backward(probs.data(), probs.data(), targets.data(), dlosses.data(), N, V, GradStore::kOverwrite);
    EXPECT_EQ(probs, dlogits);
  }
}

// Label smoothing ε: loss = -Σ_v q_v log p_v with q = (1-ε)·onehot + ε/V, against a double
// reference, and its gradient p - q against finite differences, accumulating and overwriting.
TEST(CrossEntropyTest, LabelSmoothingMatchesDefinitionAndFiniteDifferences) {
  const float eps = 0.1f;
  for (const auto& [N, V] : {std::pair{1, 1}, std::pair{1, 17}, std::pair{5, 7}}) {
    SCOPED_TRACE("N=" + std::to_string(N) + " V=" + std::to_string(V));
    const size_t n = static_cast<size_t>(N) * V;
    auto logits = random_vector(n, 41, 2.0f);
    std::vector<int> targets(N);
    for (int r = 0; r < N; ++r) targets[r] = (r * 3 + 2) % V;
    if (N > 2) targets[1] = -1;
    const auto dlosses = random_vector(N, 42);
    std::vector<float> losses(N), probs(n);
    auto loss = [&] {
      crossentropy_forward(losses.data(), probs.data(), logits.data(), targets.data(), N, V, eps);
      return weighted_sum(losses.data(), dlosses.data(), N);
    };
    loss();
    for (int r = 0; r < N; ++r) {
      const float* row = logits.data() + size_t(r) * V;
      double mx = -INFINITY, sum = 0, ref = 0;
      for (int v = 0; v < V; ++v) mx = std::max(mx, double(row[v]));
      for (int v = 0; v < V; ++v) sum += std::exp(row[v] - mx);
      for (int v = 0; v < V; ++v) {
        const double q = (v == targets[r] ? 1.0 - eps : 0.0) + double(eps) / V;
        ref -= q * (row[v] - mx - std::log(sum));
      }
      EXPECT_NEAR(losses[r], targets[r] < 0 ? 0.0 : ref, 1e-5) << "row " << r;
    }
    std::vector<float> dlogits(n, 1234.0f);
    crossentropy_backward(dlogits.data(), probs.data(), targets.data(), dlosses.data(), N, V, GradStore::kOverwrite,
                          eps);
    EXPECT_TRUE(gradient_matches(loss, logits.data(), dlogits.data(), n, 1e-2f, 1e-4, 1e-2));
    loss();  // the probabilities of the unperturbed logits again
    const auto base = random_vector(n, 43);
    auto summed = base;
    crossentropy_backward(summed.data(), probs.data(), targets.data(), dlosses.data(), N, V, GradStore::kAccumulate,
                          eps);
    for (size_t i = 0; i < n; ++i) EXPECT_NEAR(summed[i], base[i] + dlogits[i], 1e-6) << i;
  }
}

TEST(SoftmaxTest, BackwardGradStoreBothWays) {
  // kAccumulate adds onto what dinp held, kOverwrite ignores it (kernel_testing.h); the last size
  // runs on several threads.
  for (const auto& [N, V] : {std::pair{1, 1}, std::pair{3, 17}, std::pair{70, 301}}) {
    SCOPED_TRACE("N=" + std::to_string(N) + " V=" + std::to_string(V));
    const size_t n = static_cast<size_t>(N) * V;
    const auto x = random_vector(n, 31, 2.0f), dout = random_vector(n, 32);
    std::vector<float> probs(n);
    softmax_forward(probs.data(), x.data(), N, V);
    EXPECT_TRUE(testing::stores_as_grad_store_says({n}, 1, [&](GradStore store, const std::vector<float*>& g) {
      softmax_backward(g[0], dout.data(), probs.data(), N, V, store);
    }));
  }
}

TEST(CrossEntropyTest, BackwardGradStoreBothWays) {
  // Targets first, last and in between, and a padding row (no gradient: kAccumulate leaves the
  // row as it was, kOverwrite zeroes it).
  for (const auto& [N, V] : {std::pair{1, 1}, std::pair{5, 17}, std::pair{40, 301}}) {
    SCOPED_TRACE("N=" + std::to_string(N) + " V=" + std::to_string(V));
    const size_t n = static_cast<size_t>(N) * V;
    const auto logits = random_vector(n, 33, 2.0f), dlosses = random_vector(N, 34);
    std::vector<int> targets(N);
    for (int r = 0; r < N; ++r) targets[r] = r == 0 ? V - 1 : (r * 7) % V;
    if (N > 2) targets[2] = -1;
    std::vector<float> losses(N), probs(n);
    crossentropy_forward(losses.data(), probs.data(), logits.data(), targets.data(), N, V);
    EXPECT_TRUE(testing::stores_as_grad_store_says({n}, 1, [&](GradStore store, const std::vector<float*>& g) {
      crossentropy_backward(g[0], probs.data(), targets.data(), dlosses.data(), N, V, store);
    }));
    // The default store is kAccumulate, as everywhere: onto zeros it gives kOverwrite's values (up
    // to the sign of a zero). In place (kOverwrite) gives the same bits as into another buffer.
    std::vector<float> by_default(n, 0.0f), set(n, 1.0f), inplace = probs;
    crossentropy_backward(by_default.data(), probs.data(), targets.data(), dlosses.data(), N, V);
    crossentropy_backward(set.data(), probs.data(), targets.data(), dlosses.data(), N, V, GradStore::kOverwrite);
    crossentropy_backward(inplace.data(), inplace.data(), targets.data(), dlosses.data(), N, V, GradStore::kOverwrite);
    EXPECT_EQ(by_default, set);
    EXPECT_TRUE(testing::bitwise_equal(inplace, set));
  }
}

TEST(CrossEntropyDeathTest, InPlaceOnlyWithOverwrite) {
  // dlogits = probs is allowed with kOverwrite only: summing into probs while reading it is a caller bug.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const int N = 2, V = 5;
  std::vector<float> probs(N * V, 0.2f), dlosses(N, 1.0f);
  const std::vector<int> targets = {1, 3};
  EXPECT_DEATH(crossentropy_backward(probs.data(), probs.data(), targets.data(), dlosses.data(), N, V,
                                     GradStore::kAccumulate),
               "only as the same buffer");
  EXPECT_DEATH(crossentropy_backward(probs.data() + 1, probs.data(), targets.data(), dlosses.data(), 1, V,
                                     GradStore::kOverwrite),
               "only as the same buffer");
}

}  // namespace
}  // namespace potop
