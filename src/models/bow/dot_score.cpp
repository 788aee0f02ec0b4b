#include "models/bow/dot_score.h"

#include <limits>
#include <vector>

namespace potop {

void dot_score_forward(float* scores, const float* x, float scale, int B, int T, int C) {
  const float masked = -std::numeric_limits<float>::infinity();
#pragma omp parallel for collapse(2) schedule(static) if (B * T > 1)
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      const float* q = x + (size_t(b) * T + t) * C;
      float* row = scores + (size_t(b) * T + t) * T;
      for (int k = 0; k < T; ++k) {
        if (k >= t) {
          row[k] = masked;
          continue;
        }
        const float* key = x + (size_t(b) * T + k) * C;
        float s = 0.0f;
        for (int c = 0; c < C; ++c) s += key[c] * q[c];
        row[k] = scale * s;
      }
    }
  }
}

namespace {

template <bool kAdd>
void dot_score_backward_one(float* dx, const float* dscores, const float* x, float scale, int T, int C) {
  std::vector<float> g(size_t(T) * C, 0.0f);  // row t gathers from its keys and from later queries
  for (int t = 1; t < T; ++t) {
    const float* q = x + size_t(t) * C;
    float* gq = g.data() + size_t(t) * C;
    for (int k = 0; k < t; ++k) {
      const float d = scale * dscores[size_t(t) * T + k];
      if (d == 0.0f) continue;
      const float* key = x + size_t(k) * C;
      float* gk = g.data() + size_t(k) * C;
      for (int c = 0; c < C; ++c) {
        gq[c] += d * key[c];
        gk[c] += d * q[c];
      }
    }
  }
  for (size_t i = 0; i < size_t(T) * C; ++i) store_grad<kAdd>(dx[i], g[i]);
}

}  // namespace

void dot_score_backward(float* dx, const float* dscores, const float* x, float scale, int B, int T, int C,
                        GradStore store) {
  with_store(store, [&](auto add) {
#pragma omp parallel for schedule(static) if (B > 1)
    for (int b = 0; b < B; ++b) {
      const size_t rows = size_t(b) * T;
      dot_score_backward_one<add()>(dx + rows * C, dscores + rows * T, x + rows * C, scale, T, C);
    }
  });
}

}  // namespace potop
