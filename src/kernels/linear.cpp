// Linear layer on top of sgemm. The bias is written into out first and the GEMM accumulates
// onto it (beta = 1), so out is touched once more than the GEMM needs, not twice.
#include "kernels/linear.h"

#include <algorithm>
#include <cstddef>

#include "kernels/column_sums.h"
#include "kernels/gemm.h"

namespace potop {

void linear_forward(float* out, const float* inp, const float* weight, const float* bias, int N, int C, int OC,
                    WeightLayout layout) {
  // out (N, OC), inp (N, C), weight (C, OC) or (OC, C), bias (OC) or null
  if (bias) {
#pragma omp parallel for schedule(static) if (static_cast<size_t>(N) * OC > 16384)
    for (int n = 0; n < N; ++n) std::copy(bias, bias + OC, out + static_cast<size_t>(n) * OC);
  }
  const float beta = bias ? 1.0f : 0.0f;
  if (layout == WeightLayout::kInOut) {
    sgemm(false, false, N, OC, C, 1.0f, inp, C, weight, OC, beta, out, OC);  // inp · W
  } else {
    sgemm(false, true, N, OC, C, 1.0f, inp, C, weight, C, beta, out, OC);  // inp · (W (OC, C))ᵀ
  }
}

void linear_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, int N, int C, int OC, WeightLayout layout, GradStore store) {
  // dinp (N, C) or null, dweight like weight, dbias (OC) or null, dout (N, OC), inp (N, C)
  // forward: out = inp · W + bias
  if (dinp) {
    // dinp += dout · Wᵀ (or =): beta 0 makes the GEMM ignore what dinp held
    const float beta = store == GradStore::kAccumulate ? 1.0f : 0.0f;
    if (layout == WeightLayout::kInOut) {
      sgemm(false, true, N, C, OC, 1.0f, dout, OC, weight, OC, beta, dinp, C);  // W (C, OC) -> Wᵀ (OC, C)
    } else {
      sgemm(false, false, N, C, OC, 1.0f, dout, OC, weight, C, beta, dinp, C);  // W stored (OC, C) is Wᵀ
    }
  }
  if (dweight) {
    if (layout == WeightLayout::kInOut) {
      sgemm(true, false, C, OC, N, 1.0f, inp, C, dout, OC, 1.0f, dweight, OC);  // dW (C, OC) += inpᵀ · dout
    } else {
      sgemm(true, false, OC, C, N, 1.0f, dout, OC, inp, C, 1.0f, dweight, C);  // dW (OC, C) += doutᵀ · inp
    }
  }
  if (dbias) add_chunk_sums(dbias, dout, N, OC);  // dbias (OC) += Σ_n dout[n], the same for any thread count
}

}  // namespace potop
