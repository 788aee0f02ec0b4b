#include "models/bow/additive_score.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace potop {

void additive_score_forward(float* scores, const float* keys, const float* queries, const float* v, int B, int T,
                            int H) {
  const float masked = -std::numeric_limits<float>::infinity();
#pragma omp parallel for collapse(2) schedule(static) if (B * T > 1)
  for (int b = 0; b < B; ++b) {
    for (int t = 0; t < T; ++t) {
      const float* q = queries + (size_t(b) * T + t) * H;
      float* row = scores + (size_t(b) * T + t) * T;
      for (int k = 0; k < T; ++k) {
        if (k >= t) {
          row[k] = masked;
          continue;
        }
        const float* key = keys + (size_t(b) * T + k) * H;
        float s = 0.0f;
        for (int h = 0; h < H; ++h) s += v[h] * std::tanh(key[h] + q[h]);
        row[k] = s;
      }
    }
  }
}

namespace {

// One sequence: its activation gradients, and its share of dv into dv_b (H, zeroed here).
template <bool kAdd>
void additive_score_backward_one(float* dkeys, float* dqueries, float* dv_b, const float* dscores, const float* keys,
                                 const float* queries, const float* v, int T, int H) {
  // Each dkeys row gathers from every later t: sum in a zeroed buffer first, then store.
  std::vector<float> dk(size_t(T) * H, 0.0f), dq(size_t(T) * H, 0.0f);
  std::memset(dv_b, 0, sizeof(float) * size_t(H));
  for (int t = 1; t < T; ++t) {
    const float* q = queries + size_t(t) * H;
    float* dq_t = dq.data() + size_t(t) * H;
    for (int k = 0; k < t; ++k) {
      const float g = dscores[size_t(t) * T + k];
      if (g == 0.0f) continue;
      const float* key = keys + size_t(k) * H;
      float* dk_k = dk.data() + size_t(k) * H;
      for (int h = 0; h < H; ++h) {
        const float a = std::tanh(key[h] + q[h]);
        dv_b[h] += g * a;
        const float dpre = g * v[h] * (1.0f - a * a);  // d tanh(x) = 1 - tanh²(x)
        dk_k[h] += dpre;
        dq_t[h] += dpre;
      }
    }
  }
  for (size_t i = 0; i < size_t(T) * H; ++i) {
    store_grad<kAdd>(dkeys[i], dk[i]);
    store_grad<kAdd>(dqueries[i], dq[i]);
  }
}

}  // namespace

void additive_score_backward(float* dkeys, float* dqueries, float* dv, const float* dscores, const float* keys,
                             const float* queries, const float* v, int B, int T, int H, GradStore store) {
  // dv is summed per sequence, then over sequences in order: deterministic for any thread count.
  std::vector<float> dv_per_b(size_t(B) * H);
  with_store(store, [&](auto add) {
#pragma omp parallel for schedule(static) if (B > 1)
    for (int b = 0; b < B; ++b) {
      const size_t rows = size_t(b) * T;
      additive_score_backward_one<add()>(dkeys + rows * H, dqueries + rows * H, dv_per_b.data() + size_t(b) * H,
                                         dscores + rows * T, keys + rows * H, queries + rows * H, v, T, H);
    }
  });
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) dv[h] += dv_per_b[size_t(b) * H + h];
}

}  // namespace potop
