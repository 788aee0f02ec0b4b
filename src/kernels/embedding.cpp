// Token + position embeddings and the sinusoidal position table.
#include "kernels/embedding.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "core/error.h"

namespace potop {

void embedding_forward(float* out, const int* tokens, const float* wte, const float* wpe, int B, int T, int C,
                       int pos0, float scale) {
  // out (B, T, C), tokens (B, T), wte (V, C), wpe (>= pos0 + T, C) or null
#pragma omp parallel for schedule(static) if (static_cast<size_t>(B) * T * C > 16384)
  for (int bt = 0; bt < B * T; ++bt) {
    const int t = bt % T;
    const int token = tokens[bt];
    POTOP_CHECK(token >= 0, "negative token id");
    float* __restrict o = out + static_cast<size_t>(bt) * C;
    const float* __restrict e = wte + static_cast<size_t>(token) * C;
    if (wpe) {
      const float* __restrict p = wpe + static_cast<size_t>(pos0 + t) * C;
      for (int c = 0; c < C; ++c) o[c] = scale * e[c] + p[c];
    } else {
      for (int c = 0; c < C; ++c) o[c] = scale * e[c];
    }
  }
}

void embedding_backward(float* dwte, float* dwpe, const float* dout, const int* tokens, int B, int T, int C,
                        float scale) {
  // dwte (V, C), dwpe (T, C) or null, dout (B, T, C), tokens (B, T)
  // forward: out[b, t] = scale · wte[tokens[b, t]] + wpe[pos0 + t]
  // dwte[tokens[b, t]] += scale · dout[b, t]: rows may repeat a token, so threads split the channels
  // (not the rows) and each walks all rows in order — race-free and the same for any thread count.
  const bool parallel = static_cast<size_t>(B) * T * C > 16384;
#pragma omp parallel if (parallel)
  {
    const int nthreads = omp_get_num_threads(), tid = omp_get_thread_num();
    const int per = ((C + nthreads - 1) / nthreads + 15) / 16 * 16;  // whole 64-byte lines per thread
    const int c0 = std::min(C, tid * per), c1 = std::min(C, c0 + per);
    for (int bt = 0; bt < B * T && c0 < c1; ++bt) {
      const float* __restrict d = dout + static_cast<size_t>(bt) * C;
      float* __restrict g = dwte + static_cast<size_t>(tokens[bt]) * C;
      for (int c = c0; c < c1; ++c) g[c] += scale * d[c];
    }
  }
  if (dwpe) {
    // dwpe[t] += Σ_b dout[b, t], b in order.
#pragma omp parallel for schedule(static) if (parallel)
    for (int t = 0; t < T; ++t) {
      float* __restrict g = dwpe + static_cast<size_t>(t) * C;
      for (int b = 0; b < B; ++b) {
        const float* __restrict d = dout + (static_cast<size_t>(b) * T + t) * C;
        for (int c = 0; c < C; ++c) g[c] += d[c];
      }
    }
  }
}

void sinusoidal_positions(float* table, int T, int C) {
  // table (T, C): PE(pos, 2i) = sin(pos / 10000^(2i/C)), PE(pos, 2i+1) = cos(pos / 10000^(2i/C))
#pragma omp parallel for schedule(static) if (static_cast<size_t>(T) * C > 16384)
  for (int pos = 0; pos < T; ++pos) {
    float* row = table + static_cast<size_t>(pos) * C;
    for (int c = 0; c < C; ++c) {
      const int two_i = c & ~1;
      const double angle = pos / std::pow(10000.0, static_cast<double>(two_i) / C);
      row[c] = static_cast<float>((c & 1) ? std::cos(angle) : std::sin(angle));
    }
  }
}

}  // namespace potop
