// The one place potop calls a BLAS library. Everything else multiplies matrices through here,
// so the backend (OpenBLAS or oneDNN, chosen at configure time by POTOP_BLAS) is a single switch.
#pragma once

namespace potop {

// Row-major single-precision GEMM:
//   C (M, N) = alpha * op(A) (M, K) · op(B) (K, N) + beta * C
// op(X) is X or Xᵀ; lda/ldb/ldc are row strides in floats of A, B, C as stored.
void sgemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda,
           const float* B, int ldb, float beta, float* C, int ldc);

// Name of the backend, for logs and benchmarks: "OpenBLAS 0.3.21 (openmp)" or "oneDNN 2.7.3".
const char* blas_name();

}  // namespace potop
