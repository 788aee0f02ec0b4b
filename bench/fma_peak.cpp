// The FMA peak of this CPU, measured: every thread runs 10 independent chains of 8-wide fused
// multiply-adds (enough to cover the FMA latency × the number of FMA pipes on current x86
// cores), so the loop is bound only by FMA throughput. Compiled for AVX2+FMA whatever the
// build's -march; returns 0 on a CPU without them.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>

namespace potop::bench {

namespace {

__attribute__((target("avx2,fma"))) float fma_chains(long iters) {
  __m256 a0 = _mm256_set1_ps(0.1f), a1 = _mm256_set1_ps(0.2f), a2 = _mm256_set1_ps(0.3f), a3 = _mm256_set1_ps(0.4f),
         a4 = _mm256_set1_ps(0.5f), a5 = _mm256_set1_ps(0.6f), a6 = _mm256_set1_ps(0.7f), a7 = _mm256_set1_ps(0.8f),
         a8 = _mm256_set1_ps(0.9f), a9 = _mm256_set1_ps(1.0f);
  __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
  asm("" : "+x"(x), "+x"(y));  // not constants the compiler could fold
  for (long i = 0; i < iters; ++i) {
    a0 = _mm256_fmadd_ps(a0, x, y), a1 = _mm256_fmadd_ps(a1, x, y), a2 = _mm256_fmadd_ps(a2, x, y);
    a3 = _mm256_fmadd_ps(a3, x, y), a4 = _mm256_fmadd_ps(a4, x, y), a5 = _mm256_fmadd_ps(a5, x, y);
    a6 = _mm256_fmadd_ps(a6, x, y), a7 = _mm256_fmadd_ps(a7, x, y), a8 = _mm256_fmadd_ps(a8, x, y);
    a9 = _mm256_fmadd_ps(a9, x, y);
  }
  const __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                                 _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)),
                                               _mm256_add_ps(a8, a9)));
  return _mm256_cvtss_f32(s);
}

constexpr double kFlopsPerIter = 10 * 8 * 2;  // chains × lanes × (multiply + add)

}  // namespace

// GFLOP/s of `threads` threads running the chains together for about `seconds`; best of 5.
double fma_peak_gflops(int threads, double seconds) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return 0.0;
  using clock = std::chrono::steady_clock;
  long iters = 1 << 20;
  for (;;) {  // calibrate: about a fifth of the time per repetition
    const auto t0 = clock::now();
    volatile float sink = fma_chains(iters);
    (void)sink;
    if (std::chrono::duration<double>(clock::now() - t0).count() > seconds / 50) break;
    iters *= 2;
  }
  iters *= 10;
  double best = 0.0;
  for (int rep = 0; rep < 5; ++rep) {
    float sink = 0.0f;
    const auto t0 = clock::now();
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    sink += fma_chains(iters);
    const double dt = std::chrono::duration<double>(clock::now() - t0).count();
    best = std::max(best, threads * iters * kFlopsPerIter / dt / 1e9 + 0.0f * sink);
  }
  return best;
}

}  // namespace potop::bench
