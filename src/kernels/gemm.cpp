// sgemm through the configured BLAS (POTOP_BLAS): oneDNN's dnnl_sgemm, OpenBLAS's cblas_sgemm,
// or, by default, both, each GEMM going to the one that is faster for its size on this CPU. Both
// are row-major here and both run on the OpenMP runtime our own kernels use.
#include "kernels/gemm.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "kernels/gemv.h"

#if POTOP_BLAS_DNNL
#include <dnnl.h>
#endif
#if POTOP_BLAS_OPENBLAS
#include <cblas.h>
#endif

namespace potop {

namespace {

#if POTOP_BLAS_DNNL && POTOP_BLAS_OPENBLAS
// With both libraries, a GEMM of at least this many multiply-adds (M·N·K) goes to oneDNN, a
// smaller one to OpenBLAS. Measured here (docs/performance.md), with the training step's own
// shapes, alternating builds: oneDNN was faster on every run of the 6-layer, 384-wide model
// (GEMMs of 3·10⁸ multiply-adds and up, +7%), OpenBLAS on every run of the 128-wide one (10⁷
// and below, +10%; oneDNN's small Aᵀ·B products, the weight gradients, were slow).
constexpr double kDnnlMinMultiplyAdds = 1 << 27;

// On a CPU with AVX-512, oneDNN takes every size but matrix-vector products: its JIT kernels use
// the 512-bit units whatever the environment says, while OpenBLAS 0.3.21 runs the kernels
// OPENBLAS_CORETYPE names, and the machines of this project set it to Haswell (AVX2). Measured on
// the Zen 5 machine (busy, so ranges; docs/performance.md): the small model's GEMM set ran at
// 55-66 GFLOP/s through oneDNN, 48-59 through OpenBLAS's own AVX-512 choice (the variable unset),
// 25-34 through its Haswell kernels; a 1-thread training step of the small model took 43-77 ms
// instead of 84-109.
bool dnnl_for_every_size() {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  return avx512;
}
#endif

#if POTOP_BLAS_DNNL
void dnnl_gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
               int ldb, float beta, float* C, int ldc) {
  const dnnl_status_t status = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', M, N, K, alpha, A, lda, B, ldb,
                                          beta, C, ldc);
  POTOP_CHECK(status == dnnl_success, "dnnl_sgemm failed with status " + std::to_string(static_cast<int>(status)));
}
#endif

#if POTOP_BLAS_OPENBLAS
void openblas_gemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda,
                   const float* B, int ldb, float beta, float* C, int ldc) {
  if (M == 1 || N == 1) {
    // A matrix-vector product (generation at batch 1): OpenBLAS's sgemm would pack the whole
    // matrix first, its sgemv streams it once, about twice as fast. beta == 0 must overwrite
    // even NaN, which gemv's scaling of y does not promise: clear C first.
    if (beta == 0.0f) {
      for (int i = 0; i < M; ++i) std::fill_n(C + static_cast<size_t>(i) * ldc, N, 0.0f);
    }
    if (M == 1) {  // C (1, N) = x · op(B): x is A's only row (or column)
      const int incx = trans_a ? lda : 1;
      if (trans_b) cblas_sgemv(CblasRowMajor, CblasNoTrans, N, K, alpha, B, ldb, A, incx, beta, C, 1);
      else cblas_sgemv(CblasRowMajor, CblasTrans, K, N, alpha, B, ldb, A, incx, beta, C, 1);
    } else {  // C (M, 1) = op(A) · x: x is B's only column (or row)
      const int incx = trans_b ? 1 : ldb;
      if (trans_a) cblas_sgemv(CblasRowMajor, CblasTrans, K, M, alpha, A, lda, B, incx, beta, C, ldc);
      else cblas_sgemv(CblasRowMajor, CblasNoTrans, M, K, alpha, A, lda, B, incx, beta, C, ldc);
    }
    return;
  }
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, M, N, K,
              alpha, A, lda, B, ldb, beta, C, ldc);
}
#endif

}  // namespace

void sgemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, const float* A, int lda,
           const float* B, int ldb, float beta, float* C, int ldc) {
  POTOP_CHECK(M >= 0 && N >= 0 && K >= 0, "negative GEMM size");
  if (M == 0 || N == 0) return;
  if (K == 0) {
    // op(A)·op(B) is an empty sum: C = beta * C (beta == 0 overwrites, even NaN).
    for (int i = 0; i < M; ++i) {
      float* c = C + static_cast<size_t>(i) * ldc;
      for (int j = 0; j < N; ++j) c[j] = beta == 0.0f ? 0.0f : beta * c[j];
    }
    return;
  }
  if (M == 1 && !trans_a && !trans_b) {
    // x (1, K) · B (K, N): batch-1 generation through every kInOut weight (gemv.h)
    sgemv_rows(K, N, alpha, A, B, ldb, beta, C);
    return;
  }
#if POTOP_BLAS_DNNL && POTOP_BLAS_OPENBLAS
  const bool matrix_vector = M == 1 || N == 1;  // OpenBLAS's sgemv streams the matrix once
  if ((dnnl_for_every_size() && !matrix_vector) || static_cast<double>(M) * N * K >= kDnnlMinMultiplyAdds) {
    dnnl_gemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  } else {
    openblas_gemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  }
#elif POTOP_BLAS_DNNL
  dnnl_gemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#else
  openblas_gemm(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#endif
}

const char* blas_name() {
  static const std::string name = [] {
    std::string s;
#if POTOP_BLAS_OPENBLAS
    s = openblas_get_config();
    while (!s.empty() && s.back() == ' ') s.pop_back();
    const int parallel = openblas_get_parallel();
    s += parallel == OPENBLAS_OPENMP ? " (openmp)" : parallel == OPENBLAS_THREAD ? " (pthreads)" : " (serial)";
#endif
#if POTOP_BLAS_DNNL
    const dnnl_version_t* v = dnnl_version();
    const std::string dnnl =
        "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
    if (s.empty()) s = dnnl;
#if POTOP_BLAS_OPENBLAS
    else if (dnnl_for_every_size()) s = dnnl + " for every GEMM (AVX-512), matrix-vector products " + s;
    else s = dnnl + " for GEMMs of 2^27+ multiply-adds, else " + s;
#endif
#endif
    return s;
  }();
  return name.c_str();
}

}  // namespace potop
