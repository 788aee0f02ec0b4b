// q8_0 / q4_0 matrices in stripes of sixteen rows (kernels/quant_interleaved.h): the rearrangement
// round-trips byte for byte (the last stripe's padding included), and every product through the
// stripes is, where the CPU has the VNNI kernel, the scalar kernel's of that row on the rows layout,
// bit for bit (elsewhere the stripes go back to rows, and the product is the rows layout's, bit for
// bit: an AVX2 CPU's many rows of x go through f32 panels, not the scalar kernel): at any number
// of rows of x, N with and without a partial last stripe, blocks per row that are or are not whole
// groups of eight, any thread count, and with accumulate.
#include <gtest/gtest.h>
#include <omp.h>

#include <random>
#include <vector>

#include "kernels/quant.h"
#include "kernels/quant_interleaved.h"

namespace potop {
namespace {

std::vector<uint8_t> random_weights(QuantType t, int N, int K, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const size_t rb = quant_row_bytes(t, K);
  std::vector<uint8_t> W(rb * N);
  std::vector<float> row(K);
  for (int n = 0; n < N; ++n) {
    for (float& v : row) v = normal(rng) * (n % 5 == 0 ? 1e-3f : 1.0f);  // small scales too
    quantize_row(t, row.data(), K, W.data() + rb * n);
  }
  return W;
}

// What quant_dot gives for every (m, n), on the scalar kernel and the rows layout.
std::vector<float> scalar_products(QuantType t, const std::vector<uint8_t>& W, int N, int K, const std::vector<float>& X,
                                   int M) {
  const size_t rb = quant_row_bytes(t, K);
  std::vector<float> Y(static_cast<size_t>(M) * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n)
      Y[static_cast<size_t>(m) * N + n] =
          quant_dot_with(QuantIsa::kScalar, t, W.data() + rb * n, X.data() + static_cast<size_t>(m) * K, K);
  return Y;
}

TEST(QuantInterleavedTest, RowsToStripesAndBackAreTheSameBytes) {
  std::mt19937 rng(7);
  for (QuantType t : {QuantType::kQ8_0, QuantType::kQ4_0})
    for (auto [N, K] : {std::pair{1, 32}, {16, 64}, {17, 384}, {40, 96}}) {
      const std::vector<uint8_t> W = random_weights(t, N, K, rng);
      const std::vector<uint8_t> P = quant_rows_to_interleaved(t, W.data(), N, K);
      EXPECT_EQ(P.size(), quant_interleaved_bytes(t, N, K));
      EXPECT_EQ(P.size(), static_cast<size_t>((N + 15) / 16 * 16) * quant_row_bytes(t, K));
      EXPECT_EQ(quant_interleaved_to_rows(t, P.data(), N, K), W) << to_string(t) << " N " << N << " K " << K;
      // The padding rows are zero bytes: read back as rows, they dequantize to 0.
      const int padded = (N + 15) / 16 * 16;
      const std::vector<uint8_t> all = quant_interleaved_to_rows(t, P.data(), padded, K);
      std::vector<float> row(K);
      for (int n = N; n < padded; ++n) {
        dequantize_row(t, all.data() + static_cast<size_t>(n) * quant_row_bytes(t, K), K, row.data());
        for (float v : row) ASSERT_EQ(v, 0.0f);
      }
    }
}

TEST(QuantInterleavedTest, EveryProductIsTheScalarKernelsBitForBit) {
  struct Case {
    QuantType type;
    int N, K, M;
  };
  const Case cases[] = {
      {QuantType::kQ8_0, 37, 384, 1},  {QuantType::kQ4_0, 37, 384, 1},  {QuantType::kQ8_0, 16, 256, 5},
      {QuantType::kQ4_0, 20, 256, 33}, {QuantType::kQ8_0, 9, 1536, 17}, {QuantType::kQ4_0, 48, 1536, 4},
      {QuantType::kQ8_0, 50, 32, 64},  {QuantType::kQ4_0, 3, 96, 2},    {QuantType::kQ4_0, 70, 544, 7},
      {QuantType::kQ8_0, 64, 160, 3},
  };
  std::mt19937 rng(41);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int threads = omp_get_max_threads();
  for (const Case& c : cases) {
    const std::vector<uint8_t> W = random_weights(c.type, c.N, c.K, rng);
    const std::vector<uint8_t> P = quant_rows_to_interleaved(c.type, W.data(), c.N, c.K);
    std::vector<float> X(static_cast<size_t>(c.M) * c.K);
    for (float& v : X) v = normal(rng);
    std::vector<float> want(static_cast<size_t>(c.M) * c.N);
    if (quant_interleaved_available())
      want = scalar_products(c.type, W, c.N, c.K, X, c.M);
    else
      quant_matmul(c.type, QuantLayout::kRows, W.data(), c.N, c.K, X.data(), c.M, want.data(), false);
    for (int nt : {1, 3}) {
      omp_set_num_threads(nt);
      std::vector<float> Y(want.size(), 0.0f);
      quant_matmul(c.type, QuantLayout::kInterleaved, P.data(), c.N, c.K, X.data(), c.M, Y.data(), false);
      std::vector<float> Z(want.size(), 0.5f);
      quant_matmul(c.type, QuantLayout::kInterleaved, P.data(), c.N, c.K, X.data(), c.M, Z.data(), true);
      omp_set_num_threads(threads);
      for (size_t i = 0; i < Y.size(); ++i)
        ASSERT_EQ(Y[i], want[i]) << to_string(c.type) << " N " << c.N << " K " << c.K << " M " << c.M << " threads "
                                 << nt << " at " << i;
      for (size_t i = 0; i < Z.size(); ++i) ASSERT_EQ(Z[i], 0.5f + want[i]) << "accumulate at " << i;
    }
  }
}

// The kernel itself where the CPU has it (quant_matmul above falls back to rows elsewhere).
TEST(QuantInterleavedTest, TheVnniKernelIsUsedWhereTheCpuHasIt) {
  EXPECT_EQ(quant_interleaved_available(), quant_isa_available(QuantIsa::kAvx512Vnni));
  const QuantLayout want = quant_interleaved_available() ? QuantLayout::kInterleaved : QuantLayout::kRows;
  EXPECT_EQ(quant_best_layout(QuantType::kQ8_0), want);
  EXPECT_EQ(quant_best_layout(QuantType::kQ4_0), want);
  EXPECT_EQ(quant_best_layout(QuantType::kF16), QuantLayout::kRows);
}

}  // namespace
}  // namespace potop
