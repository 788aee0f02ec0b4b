// The batched q8_0 / q4_0 kernel (kernels/quant_batch.h): every result bit for bit the scalar
// kernel's of that row (quant_dot_with, kScalar), at any number of rows of x (a partial last tile
// of sixteen included), blocks per row that are or are not whole groups of eight, any thread
// count, and with accumulate; and quant_matmul, which takes it from a few rows on, the same.
#include <gtest/gtest.h>
#include <omp.h>

#include <random>
#include <vector>

#include "kernels/quant.h"
#include "kernels/quant_batch.h"

namespace potop {
namespace {

struct Case {
  QuantType type;
  int N, K, M;
};

std::vector<unsigned char> random_weights(QuantType t, int N, int K, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const size_t rb = quant_row_bytes(t, K);
  std::vector<unsigned char> W(rb * N);
  std::vector<float> row(K);
  for (int n = 0; n < N; ++n) {
    for (float& v : row) v = normal(rng) * (n % 5 == 0 ? 1e-3f : 1.0f);  // small scales too
    quantize_row(t, row.data(), K, W.data() + rb * n);
  }
  return W;
}

// What quant_dot gives for every (m, n), on the scalar kernel.
std::vector<float> scalar_products(QuantType t, const std::vector<unsigned char>& W, int N, int K,
                                   const std::vector<float>& X, int M) {
  const size_t rb = quant_row_bytes(t, K);
  std::vector<float> Y(static_cast<size_t>(M) * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n)
      Y[static_cast<size_t>(m) * N + n] = quant_dot_with(QuantIsa::kScalar, t, W.data() + rb * n, X.data() + static_cast<size_t>(m) * K, K);
  return Y;
}

const Case kCases[] = {
    {QuantType::kQ8_0, 37, 384, 16}, {QuantType::kQ4_0, 37, 384, 16}, {QuantType::kQ8_0, 20, 256, 5},
    {QuantType::kQ4_0, 20, 256, 33}, {QuantType::kQ8_0, 9, 1536, 17},  {QuantType::kQ4_0, 9, 1536, 40},
    {QuantType::kQ8_0, 50, 32, 64},  {QuantType::kQ4_0, 3, 96, 1},
};

TEST(QuantBatchTest, EveryResultIsTheScalarKernelsBitForBit) {
  if (!quant_batch_available()) {
    EXPECT_FALSE(quant_isa_available(QuantIsa::kAvx512Vnni));  // then quant_matmul never calls it
    return;
  }
  std::mt19937 rng(41);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const Case& c : kCases) {
    const std::vector<unsigned char> W = random_weights(c.type, c.N, c.K, rng);
    std::vector<float> X(static_cast<size_t>(c.M) * c.K);
    for (float& v : X) v = normal(rng);
    const std::vector<float> want = scalar_products(c.type, W, c.N, c.K, X, c.M);
    const int nb = c.K / kQuantBlock;
    std::vector<int8_t> q(X.size());
    std::vector<float> d(static_cast<size_t>(c.M) * nb);
    std::vector<int32_t> s(d.size());
    for (int m = 0; m < c.M; ++m)
      quantize_activations(X.data() + static_cast<size_t>(m) * c.K, c.K, q.data() + static_cast<size_t>(m) * c.K,
                           d.data() + static_cast<size_t>(m) * nb, s.data() + static_cast<size_t>(m) * nb);
    for (bool parallel : {false, true}) {
      std::vector<float> Y(want.size(), 0.0f);
      quant_matmul_batch(c.type, W.data(), c.N, c.K, q.data(), d.data(), s.data(), c.M, Y.data(), false, parallel);
      for (size_t i = 0; i < Y.size(); ++i)
        ASSERT_EQ(Y[i], want[i]) << to_string(c.type) << " K " << c.K << " M " << c.M << " at " << i;
      std::vector<float> Z(want.size(), 0.5f);
      quant_matmul_batch(c.type, W.data(), c.N, c.K, q.data(), d.data(), s.data(), c.M, Z.data(), true, parallel);
      for (size_t i = 0; i < Z.size(); ++i) ASSERT_EQ(Z[i], 0.5f + want[i]) << "accumulate at " << i;
    }
  }
}

// quant_matmul through its dispatch, at the row counts serving and beam search give it, on one
// thread and on three: the same bits as one scalar dot product per row.
TEST(QuantBatchTest, QuantMatmulIsTheScalarKernelsAtEveryRowCount) {
  if (!quant_batch_available()) return;  // elsewhere many rows take the panels (quant.h)
  std::mt19937 rng(43);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int threads = omp_get_max_threads();
  for (QuantType t : {QuantType::kQ8_0, QuantType::kQ4_0})
    for (auto [K, M] : {std::pair{384, 16}, {384, 48}, {768, 32}, {1536, 16}, {1536, 64}}) {
      const int N = 70;
      const std::vector<unsigned char> W = random_weights(t, N, K, rng);
      std::vector<float> X(static_cast<size_t>(M) * K);
      for (float& v : X) v = normal(rng);
      const std::vector<float> want = scalar_products(t, W, N, K, X, M);
      for (int nt : {1, 3}) {
        omp_set_num_threads(nt);
        std::vector<float> Y(want.size());
        quant_matmul(t, W.data(), N, K, X.data(), M, Y.data(), false);
        omp_set_num_threads(threads);
        for (size_t i = 0; i < Y.size(); ++i)
          ASSERT_EQ(Y[i], want[i]) << to_string(t) << " K " << K << " M " << M << " threads " << nt << " at " << i;
      }
    }
}

}  // namespace
}  // namespace potop
