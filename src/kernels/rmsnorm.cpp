#include "kernels/rmsnorm.h"

#include <cmath>
#include <cstddef>

#include "core/threads.h"
#include "kernels/column_sums.h"

namespace potop {

namespace {

// One row: o = RMSNorm(x), its 1/rms into s.
inline void normalize_row(float* __restrict o, float& s, const float* __restrict x, const float* weight, int C,
                          float eps) {
  float sq = 0.0f;
#pragma omp simd reduction(+ : sq)
  for (int c = 0; c < C; ++c) sq += x[c] * x[c];
  s = 1.0f / std::sqrt(sq / C + eps);
  const float ss = s;
  for (int c = 0; c < C; ++c) o[c] = weight[c] * (x[c] * ss);
}

}  // namespace

void rmsnorm_forward(float* out, float* rstd, const float* inp, const float* weight, int N, int C, float eps) {
#pragma omp parallel for schedule(static) if (static_cast<size_t>(N) * C > kParallelMinFloats)
  for (int n = 0; n < N; ++n)
    normalize_row(out + static_cast<size_t>(n) * C, rstd[n], inp + static_cast<size_t>(n) * C, weight, C, eps);
}

void residual_rmsnorm_forward(float* res, float* out, float* rstd, const float* a, const float* b, const float* weight,
                              int N, int C, float eps) {
#pragma omp parallel for schedule(static) if (static_cast<size_t>(N) * C > kParallelMinFloats)
  for (int n = 0; n < N; ++n) {
    const size_t row = static_cast<size_t>(n) * C;
    float* r = res + row;
#pragma omp simd
    for (int c = 0; c < C; ++c) r[c] = a[row + c] + b[row + c];
    normalize_row(out + row, rstd[n], r, weight, C, eps);
  }
}

void rmsnorm_backward(float* dinp, float* dweight, const float* dout, const float* inp, const float* weight,
                      const float* rstd, int N, int C, GradStore store) {
  // forward: out = weight ⊙ norm, norm = inp · s, s = (Σ inp² / C + eps)^(-1/2)
  //   => d inp = s · g + inp · ∂s/∂inp · Σ_c g ⊙ inp = s · (g - norm · mean_c(g ⊙ norm)), g = dout ⊙ weight
  float* const sums_into[] = {dweight};
  with_store(store, [&](auto add) {
    chunked_row_sums(N, C, sums_into, static_cast<size_t>(N) * C > kParallelMinFloats, [&](int r0, int r1, float* const* sums) {
      float* __restrict acc_w = sums[0];
      for (int n = r0; n < r1; ++n) {
        const float* __restrict x = inp + static_cast<size_t>(n) * C;
        const float* __restrict d = dout + static_cast<size_t>(n) * C;
        float* __restrict g = dinp + static_cast<size_t>(n) * C;
        const float s = rstd[n];
        float gn_mean = 0.0f;
#pragma omp simd reduction(+ : gn_mean)
        for (int c = 0; c < C; ++c) gn_mean += weight[c] * d[c] * x[c] * s;
        gn_mean /= C;
        for (int c = 0; c < C; ++c) {
          const float norm = x[c] * s;
          store_grad<add>(g[c], (weight[c] * d[c] - norm * gn_mean) * s);
          acc_w[c] += norm * d[c];
        }
      }
    });
  });
}

}  // namespace potop
