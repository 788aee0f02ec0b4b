#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/embedding.h"
#include "support/testing.h"
#include "unit/kernels/kernel_testing.h"

namespace potop::test_embedding {
namespace {

using testing::added;
using testing::gradient_matches;
using testing::random_vector;
using testing::weighted_sum;

std::vector<int> random_tokens(size_t n, int V, uint64_t seed) {
  Rng rng(seed);
  std::vector<int> t(n);
  for (auto& x : t) x = static_cast<int>(rng.below(V));
  return t;
}

TEST(EmbeddingTest, ForwardMatchesReference) {
  struct Case {
    int B, T, C, V, pos0;
  };
  for (const Case k : {Case{1, 1, 1, 1, 0}, Case{2, 3, 17, 5, 2}, Case{3, 5, 33, 4, 0}}) {
    for (bool positions : {true, false}) {
      SCOPED_TRACE("B=" + std::to_string(k.B) + " T=" + std::to_string(k.T) + " C=" + std::to_string(k.C) +
                   (positions ? " wpe" : " no wpe"));
      auto tokens = random_tokens(static_cast<size_t>(k.B) * k.T, k.V, 1);
      auto wte = random_vector(static_cast<size_t>(k.V) * k.C, 2);
      auto wpe = random_vector(static_cast<size_t>(k.pos0 + k.T) * k.C, 3);
      std::vector<float> out(static_cast<size_t>(k.B) * k.T * k.C, 99.0f);
      embedding_forward(out.data(), tokens.data(), wte.data(), positions ? wpe.data() : nullptr, k.B, k.T, k.C,
                        k.pos0);
      std::vector<double> ref(out.size());
      for (int b = 0; b < k.B; ++b) {
        for (int t = 0; t < k.T; ++t) {
          for (int c = 0; c < k.C; ++c) {
            const size_t i = (static_cast<size_t>(b) * k.T + t) * k.C + c;
            ref[i] = static_cast<double>(wte[static_cast<size_t>(tokens[b * k.T + t]) * k.C + c]) +
                     (positions ? wpe[static_cast<size_t>(k.pos0 + t) * k.C + c] : 0.0);
          }
        }
      }
      EXPECT_LT(testing::max_abs_diff(out.data(), ref.data(), out.size()), 1e-6);
    }
  }
}

TEST(EmbeddingTest, BackwardMatchesFiniteDifferencesAndAccumulates) {
  // Few token ids, so rows repeat tokens and their gradients must add up.
  struct Case {
    int B, T, C, V;
  };
  for (const Case k : {Case{1, 1, 1, 1}, Case{2, 3, 17, 3}, Case{3, 4, 5, 7}}) {
    SCOPED_TRACE("B=" + std::to_string(k.B) + " T=" + std::to_string(k.T) + " C=" + std::to_string(k.C));
    const size_t n_out = static_cast<size_t>(k.B) * k.T * k.C;
    auto tokens = random_tokens(static_cast<size_t>(k.B) * k.T, k.V, 11);
    auto wte = random_vector(static_cast<size_t>(k.V) * k.C, 12);
    auto wpe = random_vector(static_cast<size_t>(k.T) * k.C, 13);
    auto dout = random_vector(n_out, 14);
    std::vector<float> out(n_out);
    auto loss = [&] {
      embedding_forward(out.data(), tokens.data(), wte.data(), wpe.data(), k.B, k.T, k.C);
      return weighted_sum(out.data(), dout.data(), n_out);
    };
    const auto dwte0 = random_vector(wte.size(), 15), dwpe0 = random_vector(wpe.size(), 16);
    auto dwte = dwte0, dwpe = dwpe0;
    embedding_backward(dwte.data(), dwpe.data(), dout.data(), tokens.data(), k.B, k.T, k.C);
    EXPECT_TRUE(gradient_matches(loss, wte.data(), added(dwte, dwte0).data(), wte.size(), 1e-2f, 1e-3, 1e-3));
    EXPECT_TRUE(gradient_matches(loss, wpe.data(), added(dwpe, dwpe0).data(), wpe.size(), 1e-2f, 1e-3, 1e-3));

    // Without trained positions only dwte is touched, and identically.
    auto dwte_only = dwte0;
    embedding_backward(dwte_only.data(), nullptr, dout.data(), tokens.data(), k.B, k.T, k.C);
    EXPECT_EQ(dwte_only, dwte);
  }
}

// The paper's √C scale on a table shared with the output projection: out = s·wte[tok] + wpe[t],
// whose gradient is s·dout for the table and dout for the positions.
TEST(EmbeddingTest, ScaledBackwardMatchesFiniteDifferences) {
  const int B = 2, T = 3, C = 9, V = 4;
  const float scale = 3.0f;
  const size_t n_out = static_cast<size_t>(B) * T * C;
  auto tokens = random_tokens(static_cast<size_t>(B) * T, V, 31);
  auto wte = random_vector(static_cast<size_t>(V) * C, 32);
  auto wpe = random_vector(static_cast<size_t>(T + 2) * C, 33);
  auto dout = random_vector(n_out, 34);
  std::vector<float> out(n_out);
  auto loss = [&] {
    embedding_forward(out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C, /*pos0=*/2, scale);
    return weighted_sum(out.data(), dout.data(), n_out);
  };
  loss();
  EXPECT_FLOAT_EQ(out[C + 1], scale * wte[size_t(tokens[1]) * C + 1] + wpe[size_t(3) * C + 1]);
  std::vector<float> dwte(wte.size(), 0.0f), dwpe(static_cast<size_t>(T) * C, 0.0f);
  embedding_backward(dwte.data(), dwpe.data(), dout.data(), tokens.data(), B, T, C, scale);
  EXPECT_TRUE(gradient_matches(loss, wte.data(), dwte.data(), wte.size(), 1e-2f, 1e-3, 1e-3));
  // dwpe holds rows pos0.. of the table: compare them with the table's rows 2..4.
  EXPECT_TRUE(gradient_matches(loss, wpe.data() + 2 * C, dwpe.data(), dwpe.size(), 1e-2f, 1e-3, 1e-3));
}

TEST(EmbeddingTest, BackwardIsTheSameForAnyThreadCount) {
  const int B = 4, T = 64, C = 97, V = 7;  // over the parallel threshold; many repeated tokens
  auto tokens = random_tokens(static_cast<size_t>(B) * T, V, 21);
  auto dout = random_vector(static_cast<size_t>(B) * T * C, 22);
  auto run = [&](int threads) {
    testing::ScopedThreads scope(threads);
    std::vector<float> grads(static_cast<size_t>(V + T) * C, 0.0f);  // dwte then dwpe
    embedding_backward(grads.data(), grads.data() + static_cast<size_t>(V) * C, dout.data(), tokens.data(), B, T, C);
    return grads;
  };
  const auto two = run(2);
  EXPECT_TRUE(testing::bitwise_equal(two, run(2)));
  EXPECT_TRUE(testing::bitwise_equal(two, run(1)));
  EXPECT_TRUE(testing::bitwise_equal(two, run(3)));
}

TEST(EmbeddingTest, SinusoidalPositionsMatchFormula) {
  for (const int C : {1, 2, 17, 33, 64}) {
    const int T = 37;
    std::vector<float> table(static_cast<size_t>(T) * C);
    sinusoidal_positions(table.data(), T, C);
    std::vector<double> ref(table.size());
    for (int pos = 0; pos < T; ++pos) {
      for (int i = 0; 2 * i < C; ++i) {
        const double angle = pos / std::pow(10000.0, 2.0 * i / C);
        ref[static_cast<size_t>(pos) * C + 2 * i] = std::sin(angle);
        if (2 * i + 1 < C) ref[static_cast<size_t>(pos) * C + 2 * i + 1] = std::cos(angle);
      }
    }
    EXPECT_LT(testing::max_abs_diff(table.data(), ref.data(), table.size()), 1e-6) << "C=" << C;
    // Position 0 is (0, 1, 0, 1, ...).
    for (int c = 0; c < C; ++c) EXPECT_EQ(table[c], c % 2 ? 1.0f : 0.0f);
  }
}

}  // namespace
}  // namespace potop::test_embedding
