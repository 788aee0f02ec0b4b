#include "bandwidth.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <memory>

namespace potop::bench {

namespace {
constexpr std::size_t kLanes = 64;
}  // namespace

double measure_read_bandwidth_gbs(int threads, std::size_t bytes, double seconds) {
  const std::size_t n = bytes / sizeof(float);
  std::unique_ptr<float[]> data(new float[n]);
  // First touch by the threads that will read, so each share's pages are placed near its reader.
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<float>(i & 7);

  using clock = std::chrono::steady_clock;
  double best = 0.0;
  volatile float sink = 0.0f;  // keeps the sums from being optimised away
  const auto start = clock::now();
  for (int pass = 0; pass < 3 || std::chrono::duration<double>(clock::now() - start).count() < seconds; ++pass) {
    const auto t0 = clock::now();
    float sum = 0.0f;
    const float* p = data.get();
#pragma omp parallel num_threads(threads) reduction(+ : sum)
    {
      // This thread's contiguous share, summed into 64 independent lanes so that the loop is
      // limited by loads, not by the latency of one chain of additions.
      const std::size_t nt = static_cast<std::size_t>(omp_get_num_threads());
      const std::size_t t = static_cast<std::size_t>(omp_get_thread_num());
      const std::size_t begin = n * t / nt / kLanes * kLanes, end = n * (t + 1) / nt / kLanes * kLanes;
      float lanes[kLanes] = {};
      for (std::size_t i = begin; i < end; i += kLanes) {
        for (std::size_t j = 0; j < kLanes; ++j) lanes[j] += p[i + j];
      }
      for (std::size_t j = 0; j < kLanes; ++j) sum += lanes[j];
    }
    const double s = std::chrono::duration<double>(clock::now() - t0).count();
    sink = sink + sum;
    best = std::max(best, static_cast<double>(n * sizeof(float)) / s / 1e9);
  }
  return best;
}

}  // namespace potop::bench
