// Quantized matrix products against potop's f32 ones (kernels/quant.h, gemv.h, gemm.h): time and
// weight bandwidth of y = W x for f32 (sgemv_rows), f16, q8_0 and q4_0, and of Y = X Wᵀ for a few
// rows, on the shapes of a small model. Each weight matrix is cycled through enough copies that
// the set is well past the last-level cache, as the layers of a model are.
// Where the CPU has AVX-512 VNNI, q8_0 and q4_0 are timed interleaved (quant_interleaved.h) too.
//   quant_kernels [--threads T] [--isa scalar|avx2|avx512|avx512vnni]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/gemv.h"
#include "kernels/quant.h"
#include "kernels/quant_interleaved.h"

namespace {

using potop::QuantIsa;
using potop::QuantType;

constexpr size_t kWorkingSet = size_t{256} << 20;

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Seconds per call of f(copy), the best of five rounds of at least 0.1 s.
template <class F>
double time_it(int copies, F f) {
  int calls = 0;
  double best = 1e30;
  for (int c = 0; c < copies; ++c) f(c);  // warm up
  for (int round = 0; round < 5; ++round) {
    const double t0 = now();
    int n = 0;
    do {
      f((calls + n) % copies);
      ++n;
    } while (now() - t0 < 0.1);
    calls += n;
    best = std::min(best, (now() - t0) / n);
  }
  return best;
}

int copies_for(size_t bytes) { return static_cast<int>(std::clamp<size_t>(kWorkingSet / bytes, 2, 1000)); }

}  // namespace

int main(int argc, char** argv) {
  QuantIsa isa = QuantIsa::kScalar;
  bool isa_given = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--threads") {
      omp_set_num_threads(std::stoi(value));
    } else if (flag == "--isa") {
      const char* names[] = {"scalar", "avx2", "avx512", "avx512vnni"};
      for (int k = 0; k < 4; ++k)
        if (value == names[k]) isa = static_cast<QuantIsa>(k), isa_given = true;
    }
  }
  auto matmul = [&](QuantType t, const void* W, int N, int K, const float* X, int M, float* Y) {
    if (isa_given)
      potop::quant_matmul_with(isa, t, W, N, K, X, M, Y, false);
    else
      potop::quant_matmul(t, W, N, K, X, M, Y, false);
  };
  std::printf("threads %d, kernels %s\n", omp_get_max_threads(), isa_given ? "as given" : potop::quant_isa_name());
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  struct Shape {
    int K, N;  // y (N) = W (N, K) x (K)
  };
  for (Shape s : {Shape{4096, 4096}, Shape{768, 3072}, Shape{3072, 768}, Shape{256, 1152}, Shape{384, 1152}, Shape{512, 1152}, Shape{1536, 384}}) {
    const int K = s.K, N = s.N;
    std::vector<float> w(static_cast<size_t>(N) * K), x(static_cast<size_t>(64) * K);
    for (float& v : w) v = normal(rng);
    for (float& v : x) v = normal(rng);
    std::vector<float> y(static_cast<size_t>(64) * N);
    // f32: W stored (K, N) for sgemv_rows and sgemm.
    const size_t f32_bytes = sizeof(float) * w.size();
    const int f32_copies = copies_for(f32_bytes);
    std::vector<float> wt(static_cast<size_t>(K) * N * f32_copies);
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < K; ++k) wt[static_cast<size_t>(k) * N + n] = w[static_cast<size_t>(n) * K + k];
    for (int c = 1; c < f32_copies; ++c) std::copy_n(wt.begin(), w.size(), wt.begin() + static_cast<ptrdiff_t>(c * w.size()));
    const double f32_gemv = time_it(f32_copies, [&](int c) {
      potop::sgemv_rows(K, N, 1.0f, x.data(), wt.data() + static_cast<size_t>(c) * w.size(), N, 0.0f, y.data());
    });
    std::printf("\nK %d -> N %d\n  gemv  f32   %8.1f us  %6.1f GB/s\n", K, N, 1e6 * f32_gemv, f32_bytes / f32_gemv / 1e9);
    std::vector<double> f32_mm;
    for (int M : {4, 16, 32, 64}) {
      f32_mm.push_back(time_it(f32_copies, [&](int c) {
        potop::sgemm(false, false, M, N, K, 1.0f, x.data(), K, wt.data() + static_cast<size_t>(c) * w.size(), N, 0.0f,
                     y.data(), N);
      }));
    }
    for (QuantType t : {QuantType::kF16, QuantType::kQ8_0, QuantType::kQ4_0}) {
      const size_t bytes = potop::quant_row_bytes(t, K) * N;
      const int copies = copies_for(bytes);
      std::vector<unsigned char> q(bytes * copies);
      for (int n = 0; n < N; ++n) potop::quantize_row(t, w.data() + static_cast<size_t>(n) * K, K, q.data() + n * potop::quant_row_bytes(t, K));
      for (int c = 1; c < copies; ++c) std::memcpy(q.data() + c * bytes, q.data(), bytes);
      const double sec = time_it(copies, [&](int c) { matmul(t, q.data() + c * bytes, N, K, x.data(), 1, y.data()); });
      std::printf("  gemv  %-5s %8.1f us  %6.1f GB/s  %4.2fx f32\n", potop::to_string(t).c_str(), 1e6 * sec, bytes / sec / 1e9,
                  f32_gemv / sec);
      // The same matrix interleaved sixteen rows at a time (quant_interleaved.h), as a model loads it on AVX-512 VNNI.
      std::vector<unsigned char> inter;
      size_t pbytes = 0;
      if (t != QuantType::kF16 && potop::quant_interleaved_available()) {
        const std::vector<uint8_t> one = potop::quant_rows_to_interleaved(t, q.data(), N, K);
        pbytes = one.size();
        inter.resize(pbytes * copies);
        for (int c = 0; c < copies; ++c) std::memcpy(inter.data() + c * pbytes, one.data(), pbytes);
      }
      auto inter_matmul = [&](int c, int M) {
        potop::quant_matmul(t, potop::QuantLayout::kInterleaved, inter.data() + c * pbytes, N, K, x.data(), M, y.data(), false);
      };
      if (pbytes) {
        const double ps = time_it(copies, [&](int c) { inter_matmul(c, 1); });
        std::printf("  gemv  %-5s %8.1f us  %6.1f GB/s  %4.2fx f32  (interleaved)\n", potop::to_string(t).c_str(), 1e6 * ps,
                    bytes / ps / 1e9, f32_gemv / ps);
      }
      int i = 0;
      for (int M : {4, 16, 32, 64}) {
        if (pbytes) {
          const double ps = time_it(copies, [&](int c) { inter_matmul(c, M); });
          std::printf("  M %-3d %-5s %8.1f us  %6.1f GFLOP/s  (interleaved)\n", M, potop::to_string(t).c_str(), 1e6 * ps,
                      2.0 * M * N * K / ps / 1e9);
        }
        const double mm = time_it(copies, [&](int c) { matmul(t, q.data() + c * bytes, N, K, x.data(), M, y.data()); });
        // The alternative for many rows: dequantize W to f32 (N, K), then one sgemm.
        std::vector<float> deq(static_cast<size_t>(N) * K);
        const double dq = time_it(copies, [&](int c) {
          const size_t rb = potop::quant_row_bytes(t, K);
#pragma omp parallel for schedule(static)
          for (int n = 0; n < N; ++n)
            potop::dequantize_row(t, q.data() + c * bytes + n * rb, K, deq.data() + static_cast<size_t>(n) * K);
          potop::sgemm(false, true, M, N, K, 1.0f, x.data(), K, deq.data(), K, 0.0f, y.data(), N);
        });
        std::printf("  M %-3d %-5s %8.1f us  %6.1f GFLOP/s  (f32 sgemm %8.1f us, dequantize+sgemm %8.1f us)\n", M,
                    potop::to_string(t).c_str(), 1e6 * mm, 2.0 * M * N * K / mm / 1e9, 1e6 * f32_mm[i], 1e6 * dq);
        ++i;
      }
    }
  }
  return 0;
}
