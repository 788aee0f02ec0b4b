// The one place potop calls a BLAS library. Everything else multiplies matrices through here,
// so the backend is a single switch, chosen at configure time by POTOP_BLAS: OpenBLAS, oneDNN,
// or both (the default), each GEMM then going to the library measured faster for its size.
#pragma once

namespace potop {

// Row-major single-precision GEMM:
//   C (M, N) = alpha * op(A) (M, K) · op(B) (K, N) + beta * C
// op(X) is X or Xᵀ; lda/ldb/ldc are row strides in floats of A, B, C as stored.
void sgemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda,
           const float* B, int ldb, float beta, float* C, int ldc);

// Name of the backend, for logs and benchmarks, e.g. "OpenBLAS 0.3.21 ... (openmp)" or
// "oneDNN 2.6.3 for GEMMs of 2^27+ multiply-adds, else OpenBLAS ...".
const char* blas_name();

}  // namespace potop
