#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "kernels/gemm.h"
#include "unit/kernels/kernel_testing.h"
#include "support/testing.h"

namespace potop {
namespace {

using testing::random_vector;

// C (M, N) = alpha op(A) op(B) + beta C, in double, with row strides as stored.
std::vector<double> reference(bool ta, bool tb, int M, int N, int K, double alpha, const std::vector<float>& A,
                              int lda, const std::vector<float>& B, int ldb, double beta, const std::vector<float>& C,
                              int ldc) {
  std::vector<double> out(C.begin(), C.end());
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double s = 0.0;
      for (int k = 0; k < K; ++k) {
        const double a = ta ? A[static_cast<size_t>(k) * lda + i] : A[static_cast<size_t>(i) * lda + k];
        const double b = tb ? B[static_cast<size_t>(j) * ldb + k] : B[static_cast<size_t>(k) * ldb + j];
        s += a * b;
      }
      out[static_cast<size_t>(i) * ldc + j] = alpha * s + beta * C[static_cast<size_t>(i) * ldc + j];
    }
  }
  return out;
}

TEST(GemmTest, MatchesReferenceForEveryTransposeAndStride) {
  // The last size is over 2^27 multiply-adds: with both libraries built in, oneDNN's path.
  const int sizes[][3] = {{1, 1, 1}, {3, 17, 5}, {33, 1, 7}, {17, 33, 65}, {1, 40, 3}, {520, 260, 1000}};
  for (const auto& s : sizes) {
    const int M = s[0], N = s[1], K = s[2];
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        // Padded strides: the padding must be neither read into the result nor written.
        const int a_rows = ta ? K : M, a_cols = ta ? M : K, lda = a_cols + 3;
        const int b_rows = tb ? N : K, b_cols = tb ? K : N, ldb = b_cols + 2;
        const int ldc = N + 5;
        auto A = random_vector(static_cast<size_t>(a_rows) * lda, 1 + M + ta);
        auto B = random_vector(static_cast<size_t>(b_rows) * ldb, 2 + N + tb);
        auto C = random_vector(static_cast<size_t>(M) * ldc, 3 + K);
        const auto ref = reference(ta, tb, M, N, K, 0.7, A, lda, B, ldb, 0.3, C, ldc);
        sgemm(ta, tb, M, N, K, 0.7f, A.data(), lda, B.data(), ldb, 0.3f, C.data(), ldc);
        SCOPED_TRACE("M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K) +
                     " ta=" + std::to_string(ta) + " tb=" + std::to_string(tb));
        EXPECT_LT(testing::nmse(C.data(), ref.data(), C.size()), 1e-12);
        EXPECT_LT(testing::max_abs_diff(C.data(), ref.data(), C.size()), 1e-4);
        for (int i = 0; i < M; ++i) {
          for (int j = N; j < ldc; ++j) {
            EXPECT_EQ(C[static_cast<size_t>(i) * ldc + j], static_cast<float>(ref[static_cast<size_t>(i) * ldc + j]))
                << "padding of C was written";
          }
        }
      }
    }
  }
}

TEST(GemmTest, BetaZeroOverwritesGarbage) {
  const int M = 5, N = 7, K = 3;
  auto A = random_vector(M * K, 1), B = random_vector(K * N, 2);
  std::vector<float> C(M * N, std::numeric_limits<float>::quiet_NaN());
  std::vector<float> zeros(M * N, 0.0f);
  const auto ref = reference(false, false, M, N, K, 1.0, A, K, B, N, 0.0, zeros, N);
  sgemm(false, false, M, N, K, 1.0f, A.data(), K, B.data(), N, 0.0f, C.data(), N);
  EXPECT_LT(testing::max_abs_diff(C.data(), ref.data(), C.size()), 1e-5);
}

TEST(GemmTest, VectorTimesMatrixLargeEnoughToThread) {
  // M = 1 without transposes goes to sgemv_rows (gemv.h), which splits W's rows over threads
  // once W is large: rows not a multiple of 8 or of the thread count, a padded stride, and
  // beta = 0 over NaN.
  for (int threads : {1, 2, 3}) {
    for (const auto& [K, N] : {std::pair{301, 77}, std::pair{1536, 20}, std::pair{7, 3000}}) {
      SCOPED_TRACE("threads=" + std::to_string(threads) + " K=" + std::to_string(K) + " N=" + std::to_string(N));
      testing::ScopedThreads scope(threads);
      const int ldb = N + 4;
      auto x = random_vector(K, 5), W = random_vector(static_cast<size_t>(K) * ldb, 6), y = random_vector(N, 7);
      auto ref = reference(false, false, 1, N, K, 0.7, x, K, W, ldb, 0.3, y, N);
      sgemm(false, false, 1, N, K, 0.7f, x.data(), K, W.data(), ldb, 0.3f, y.data(), N);
      EXPECT_LT(testing::nmse(y.data(), ref.data(), N), 1e-12);
      std::vector<float> nan(N, std::numeric_limits<float>::quiet_NaN()), zeros(N, 0.0f);
      ref = reference(false, false, 1, N, K, 1.0, x, K, W, ldb, 0.0, zeros, N);
      sgemm(false, false, 1, N, K, 1.0f, x.data(), K, W.data(), ldb, 0.0f, nan.data(), N);
      EXPECT_LT(testing::nmse(nan.data(), ref.data(), N), 1e-12);
    }
  }
}

TEST(GemmTest, EmptySizes) {
  std::vector<float> A(4, 1.0f), B(4, 1.0f), C = {1.0f, 2.0f, 3.0f, 4.0f};
  // M or N zero: nothing to touch.
  sgemm(false, false, 0, 2, 2, 1.0f, A.data(), 2, B.data(), 2, 0.0f, C.data(), 2);
  sgemm(false, false, 2, 0, 2, 1.0f, A.data(), 2, B.data(), 2, 0.0f, C.data(), 2);
  EXPECT_EQ(C, (std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f}));
  // K zero: the product is an empty sum, so C = beta C.
  sgemm(false, false, 2, 2, 0, 1.0f, A.data(), 1, B.data(), 2, 0.5f, C.data(), 2);
  EXPECT_EQ(C, (std::vector<float>{0.5f, 1.0f, 1.5f, 2.0f}));
  sgemm(true, true, 2, 2, 0, 1.0f, A.data(), 2, B.data(), 1, 0.0f, C.data(), 2);
  EXPECT_EQ(C, (std::vector<float>(4, 0.0f)));
}

TEST(GemmTest, BlasNameIsDescriptive) {
  const std::string name = blas_name();
#if POTOP_BLAS_DNNL
  EXPECT_NE(name.find("oneDNN"), std::string::npos) << name;
#endif
#if POTOP_BLAS_OPENBLAS
  EXPECT_NE(name.find("OpenBLAS"), std::string::npos) << name;
#endif
}

}  // namespace
}  // namespace potop
