#include "kernels/pool_rows.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace potop {

void gather_rows_forward(float* out, const float* x, const int* index, int M, int C) {
#pragma omp parallel for schedule(static) if (size_t(M) * C > 65536)
  for (int i = 0; i < M; ++i) std::memcpy(out + size_t(i) * C, x + size_t(index[i]) * C, sizeof(float) * C);
}

void gather_rows_backward(float* dx, const float* dout, const int* index, int M, int C, int dx_rows,
                          GradStore store) {
  if (store == GradStore::kOverwrite) std::memset(dx, 0, sizeof(float) * size_t(dx_rows) * C);
  // In index order, one row at a time: a repeated index adds its gradients in a fixed order.
  for (int i = 0; i < M; ++i) {
    POTOP_CHECK(index[i] >= 0 && index[i] < dx_rows, "gather_rows_backward: index outside the rows");
    float* d = dx + size_t(index[i]) * C;
    const float* g = dout + size_t(i) * C;
    for (int c = 0; c < C; ++c) d[c] += g[c];
  }
}

namespace {
int length_of(const int* lengths, int b, int T) { return lengths ? std::clamp(lengths[b], 1, T) : T; }
}  // namespace

void mean_rows_forward(float* out, const float* x, const int* lengths, int B, int T, int C) {
#pragma omp parallel for schedule(static) if (size_t(B) * T * C > 65536)
  for (int b = 0; b < B; ++b) {
    const int n = length_of(lengths, b, T);
    float* o = out + size_t(b) * C;
    std::fill_n(o, C, 0.0f);
    for (int t = 0; t < n; ++t) {
      const float* r = x + (size_t(b) * T + t) * C;
      for (int c = 0; c < C; ++c) o[c] += r[c];
    }
    const float inv = 1.0f / float(n);
    for (int c = 0; c < C; ++c) o[c] *= inv;
  }
}

void mean_rows_backward(float* dx, const float* dout, const int* lengths, int B, int T, int C, GradStore store) {
#pragma omp parallel for schedule(static) if (size_t(B) * T * C > 65536)
  for (int b = 0; b < B; ++b) {
    const int n = length_of(lengths, b, T);
    const float inv = 1.0f / float(n);
    const float* g = dout + size_t(b) * C;
    for (int t = 0; t < T; ++t) {
      float* d = dx + (size_t(b) * T + t) * C;
      if (t >= n) {
        if (store == GradStore::kOverwrite) std::fill_n(d, C, 0.0f);
        continue;
      }
      for (int c = 0; c < C; ++c) d[c] = (store == GradStore::kOverwrite ? 0.0f : d[c]) + g[c] * inv;
    }
  }
}

}  // namespace potop
