// Layer normalisation over the last dimension (biased variance, as torch.nn.LayerNorm).
#include "kernels/layernorm.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "kernels/column_sums.h"

namespace potop {

namespace {

// One row: o = LN(x), returning mean and rstd through m and s; `sum` is Σ x, already known.
inline void normalize_row(float* __restrict o, float& m, float& s, const float* __restrict x, float sum,
                          const float* weight, const float* bias, int C, float eps) {
  m = sum / C;
  float sq = 0.0f;  // two passes: Σ (x - mean)² does not cancel the way Σx² - C·mean² does
#pragma omp simd reduction(+ : sq)
  for (int c = 0; c < C; ++c) sq += (x[c] - m) * (x[c] - m);
  s = 1.0f / std::sqrt(sq / C + eps);
  const float mm = m, ss = s;
  if (bias) {
    for (int c = 0; c < C; ++c) o[c] = (x[c] - mm) * ss * weight[c] + bias[c];
  } else {
    for (int c = 0; c < C; ++c) o[c] = (x[c] - mm) * ss * weight[c];
  }
}

}  // namespace

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                       const float* bias, int N, int C, float eps) {
  // out (N, C), mean (N), rstd (N), inp (N, C), weight (C), bias (C) or null
#pragma omp parallel for schedule(static) if (static_cast<size_t>(N) * C > 16384)
  for (int n = 0; n < N; ++n) {
    const float* x = inp + static_cast<size_t>(n) * C;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int c = 0; c < C; ++c) sum += x[c];
    normalize_row(out + static_cast<size_t>(n) * C, mean[n], rstd[n], x, sum, weight, bias, C, eps);
  }
}

void residual_layernorm_forward(float* res, float* out, float* mean, float* rstd, const float* a, const float* b,
                                const float* weight, const float* bias, int N, int C, float eps) {
  // res (N, C), out (N, C), mean (N), rstd (N), a (N, C), b (N, C), weight (C), bias (C) or null
#pragma omp parallel for schedule(static) if (static_cast<size_t>(N) * C > 16384)
  for (int n = 0; n < N; ++n) {
    const size_t row = static_cast<size_t>(n) * C;
    float* r = res + row;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int c = 0; c < C; ++c) {
      r[c] = a[row + c] + b[row + c];
      sum += r[c];
    }
    normalize_row(out + row, mean[n], rstd[n], r, sum, weight, bias, C, eps);
  }
}

void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                        const float* weight, const float* mean, const float* rstd, int N, int C, GradStore store) {
  // dinp (N, C), dweight (C), dbias (C) or null, dout (N, C), inp (N, C), weight (C), mean (N), rstd (N)
  // forward: out = norm * weight + bias, norm = (inp - mean) * rstd
  // One pass over the rows: each row's dinp, and its share of dweight = Σ_n norm ⊙ dout and
  // dbias = Σ_n dout summed in fixed row chunks (column_sums.h: the same for every thread count).
  float* const sums_into[] = {dweight, dbias};
  with_store(store, [&](auto add) {
    chunked_row_sums(N, C, sums_into, static_cast<size_t>(N) * C > 16384, [&](int r0, int r1, float* const* sums) {
      float* __restrict acc_w = sums[0];
      float* __restrict acc_b = sums[1];
      for (int n = r0; n < r1; ++n) {
        const float* __restrict x = inp + static_cast<size_t>(n) * C;
        const float* __restrict d = dout + static_cast<size_t>(n) * C;
        float* __restrict g = dinp + static_cast<size_t>(n) * C;
        const float m = mean[n], s = rstd[n];
        // dinp += rstd * (dnorm - mean_c(dnorm) - norm * mean_c(dnorm ⊙ norm)), dnorm = dout ⊙ weight
        float dnorm_mean = 0.0f, dnorm_norm_mean = 0.0f;
#pragma omp simd reduction(+ : dnorm_mean, dnorm_norm_mean)
        for (int c = 0; c < C; ++c) {
          const float dnorm = weight[c] * d[c];
          dnorm_mean += dnorm;
          dnorm_norm_mean += dnorm * (x[c] - m) * s;
        }
        dnorm_mean /= C;
        dnorm_norm_mean /= C;
        for (int c = 0; c < C; ++c) {
          const float norm = (x[c] - m) * s;
          store_grad<add>(g[c], (weight[c] * d[c] - dnorm_mean - norm * dnorm_norm_mean) * s);
          acc_w[c] += norm * d[c];
          acc_b[c] += d[c];
        }
      }
    });
  });
}

}  // namespace potop
