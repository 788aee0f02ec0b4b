// The GEMM ceiling of a model (gemm_ceiling.h): its linear layers' products through potop's one
// BLAS entry point, kernels/gemm.h, with the shapes and transposes a training step uses.
#include "gemm_ceiling.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "kernels/gemm.h"

namespace potop::bench {

namespace {

// One product C (M, N) = op(A) · op(B) with inner dimension K.
struct Gemm {
  bool trans_a, trans_b;
  int M, N, K;
  double flops() const { return 2.0 * M * N * K; }
};

// A linear layer y (rows, out) = x (rows, in) · W (in, out) costs three GEMMs in a step:
// forward y = x·W, input gradient dx = dy·Wᵀ, weight gradient dW = xᵀ·dy.
void add_linear(std::vector<Gemm>& gemms, int rows, int in, int out) {
  gemms.push_back({false, false, rows, out, in});
  gemms.push_back({false, true, rows, in, out});
  gemms.push_back({true, false, in, out, rows});
}

std::vector<Gemm> step_gemms(const GPTConfig& c, int rows) {
  std::vector<Gemm> gemms;
  const int C = c.n_embd;
  for (int layer = 0; layer < c.n_layer; ++layer) {
    add_linear(gemms, rows, C, 3 * C);  // qkv
    add_linear(gemms, rows, C, C);      // attention output projection
    add_linear(gemms, rows, C, 4 * C);  // fc
    add_linear(gemms, rows, 4 * C, C);  // fc projection
  }
  add_linear(gemms, rows, C, c.vocab_size);  // LM head (tied to the token embedding)
  return gemms;
}

// Runs every GEMM once on this thread's own buffers.
void run_all(const std::vector<Gemm>& gemms, std::vector<float>& a, std::vector<float>& b, std::vector<float>& out) {
  for (const Gemm& g : gemms) {
    const int lda = g.trans_a ? g.M : g.K, ldb = g.trans_b ? g.K : g.N;
    sgemm(g.trans_a, g.trans_b, g.M, g.N, g.K, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, out.data(), g.N);
  }
}

}  // namespace

double gemm_ceiling_gflops(const GPTConfig& config, int rows, int threads, double seconds) {
  const std::vector<Gemm> gemms = step_gemms(config, rows);
  size_t a_size = 0, b_size = 0, out_size = 0;
  double flops = 0;
  for (const Gemm& g : gemms) {
    a_size = std::max(a_size, size_t(g.M) * g.K);
    b_size = std::max(b_size, size_t(g.K) * g.N);
    out_size = std::max(out_size, size_t(g.M) * g.N);
    flops += g.flops();
  }
  // Seconds for `reps` runs of the whole set on every thread at once.
  auto time_reps = [&](int reps) {
    using Clock = std::chrono::steady_clock;
    Clock::time_point t0;
#pragma omp parallel num_threads(threads)
    {
      // Each thread's own buffers, first touched by it; their values do not change the speed.
      std::vector<float> a(a_size, 0.5f), b(b_size, 0.25f), out(out_size);
      run_all(gemms, a, b, out);  // warm-up: BLAS's own buffers, the caches
#pragma omp barrier
#pragma omp single
      t0 = Clock::now();  // the single's barrier starts every thread together
      for (int r = 0; r < reps; ++r) run_all(gemms, a, b, out);
    }
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  int reps = 1;
  while (time_reps(reps) < seconds / 3) reps *= 2;
  double best = 0;
  for (int attempt = 0; attempt < 3; ++attempt) best = std::max(best, threads * reps * flops / time_reps(reps) / 1e9);
  return best;
}

}  // namespace potop::bench
