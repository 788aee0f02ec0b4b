#include "kernels/gemv.h"

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/scratch.h"

namespace potop {

namespace {

// acc (N) += Σ_{k in [k0, k1)} x[k] · W[k, :]. Eight rows per pass over acc: a pass then reads
// acc once for eight rows' worth of multiply-adds.
void accumulate_rows(float* __restrict acc, const float* __restrict x, const float* __restrict W, size_t ldw, int k0,
                     int k1, int N) {
  int k = k0;
  for (; k + 8 <= k1; k += 8) {
    const float* r = W + k * ldw;
    const float a0 = x[k], a1 = x[k + 1], a2 = x[k + 2], a3 = x[k + 3];
    const float a4 = x[k + 4], a5 = x[k + 5], a6 = x[k + 6], a7 = x[k + 7];
#pragma omp simd
    for (int n = 0; n < N; ++n) {
      acc[n] += (a0 * r[n] + a1 * r[ldw + n] + a2 * r[2 * ldw + n] + a3 * r[3 * ldw + n]) +
                (a4 * r[4 * ldw + n] + a5 * r[5 * ldw + n] + a6 * r[6 * ldw + n] + a7 * r[7 * ldw + n]);
    }
  }
  for (; k < k1; ++k) {
    const float* r = W + k * ldw;
    const float a = x[k];
#pragma omp simd
    for (int n = 0; n < N; ++n) acc[n] += a * r[n];
  }
}

}  // namespace

void sgemv_rows(int K, int N, float alpha, const float* x, const float* W, int ldw, float beta, float* y) {
  // x (K), W (K, N) with row stride ldw, y (N)
  // Below ~64 KiB of weights a parallel region costs more than it saves.
  const bool parallel = static_cast<size_t>(K) * N >= (1 << 14) && !omp_in_parallel();
  const int threads = parallel ? std::min(omp_get_max_threads(), std::max(1, K / 8)) : 1;
  struct Partials;
  float* parts = thread_scratch<Partials>(0, static_cast<size_t>(threads) * N);  // (threads, N), the caller's
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    float* acc = parts + static_cast<size_t>(t) * N;
    std::fill_n(acc, N, 0.0f);
    accumulate_rows(acc, x, W, static_cast<size_t>(ldw), static_cast<int>(int64_t{t} * K / nt),
                    static_cast<int>(int64_t{t + 1} * K / nt), N);
#pragma omp barrier
#pragma omp for schedule(static)
    for (int n = 0; n < N; ++n) {
      float s = 0.0f;
      for (int q = 0; q < nt; ++q) s += parts[static_cast<size_t>(q) * N + n];
      // beta == 0 overwrites y, even NaN, as BLAS does
      y[n] = beta == 0.0f ? alpha * s : alpha * s + beta * y[n];
    }
  }
}

}  // namespace potop
