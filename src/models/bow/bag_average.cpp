#include "models/bow/bag_average.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace potop {

void bag_average_forward(float* out, float* weights, const float* scores, const float* x, int B, int T, int C) {
#pragma omp parallel for collapse(2) schedule(static) if (B * T > 1)
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      const float* s = scores + (size_t(b) * T + t) * T;
      float* w = weights + (size_t(b) * T + t) * T;
      float* o = out + (size_t(b) * T + t) * C;
      std::fill(w, w + T, 0.0f);
      std::fill(o, o + C, 0.0f);
      if (t == 0) continue;  // no earlier word: A = 0
      float max = s[0];
      for (int k = 1; k < t; ++k) max = std::max(max, s[k]);
      double sum = 0.0;
      for (int k = 0; k < t; ++k) sum += w[k] = std::exp(s[k] - max);
      const float inv = static_cast<float>(1.0 / sum);
      for (int k = 0; k < t; ++k) {
        w[k] *= inv;
        const float* xk = x + (size_t(b) * T + k) * C;
        for (int c = 0; c < C; ++c) o[c] += w[k] * xk[c];
      }
    }
  }
}

namespace {

template <bool kAdd>
void bag_average_backward_one(float* dx, float* dscores, const float* dout, const float* weights, const float* x,
                              int T, int C) {
  std::vector<float> gx(dx ? size_t(T) * C : 0, 0.0f), dw(static_cast<size_t>(T));
  for (int t = 0; t < T; ++t) {
    const float* w = weights + size_t(t) * T;
    const float* g = dout + size_t(t) * C;
    if (dscores) {
      float* ds = dscores + size_t(t) * T;
      double dot = 0.0;  // Σ_j w_j dw_j
      for (int k = 0; k < t; ++k) {
        const float* xk = x + size_t(k) * C;
        float d = 0.0f;
        for (int c = 0; c < C; ++c) d += g[c] * xk[c];
        dw[size_t(k)] = d;
        dot += double(w[k]) * d;
      }
      for (int k = 0; k < T; ++k)
        store_grad<kAdd>(ds[k], k < t ? w[k] * (dw[size_t(k)] - static_cast<float>(dot)) : 0.0f);
    }
    if (dx) {
      for (int k = 0; k < t; ++k) {
        float* gk = gx.data() + size_t(k) * C;
        for (int c = 0; c < C; ++c) gk[c] += w[k] * g[c];
      }
    }
  }
  if (dx)
    for (size_t i = 0; i < size_t(T) * C; ++i) store_grad<kAdd>(dx[i], gx[i]);
}

}  // namespace

void bag_average_backward(float* dx, float* dscores, const float* dout, const float* weights, const float* x, int B,
                          int T, int C, GradStore store) {
  with_store(store, [&](auto add) {
#pragma omp parallel for schedule(static) if (B > 1)
    for (int b = 0; b < B; ++b) {
      const size_t rows = size_t(b) * T;
      bag_average_backward_one<add()>(dx ? dx + rows * C : nullptr, dscores ? dscores + rows * T : nullptr,
                                      dout + rows * C, weights + rows * T, x + rows * C, T, C);
    }
  });
}

}  // namespace potop
