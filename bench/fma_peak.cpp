// The FMA peak of this CPU, measured with the widest fused multiply-add it has: AVX-512 (16
// lanes) where the CPU supports it, else AVX2 (8 lanes), else SSE multiply + add (4 lanes, no
// FMA). Every thread runs 12 independent chains, enough to cover the FMA latency (4-5 cycles)
// × the number of FMA pipes (2) of current x86 cores, so the loop is bound only by throughput.
// Each variant is compiled for its own ISA whatever the build's -march and chosen at run time.
//
// Measuring the widest one matters: a CPU with full-width 512-bit units does twice the work per
// FMA that an AVX2 chain measures, and a peak taken with AVX2 there is half the real one.
//
// The clock is measured too, by a chain of dependent integer adds (one per cycle on every x86
// core), so the peak can also be given per cycle: 2 pipes × 16 lanes × 2 = 64 FLOP/cycle for
// two 512-bit FMA units, 32 for two 256-bit ones; a frequency-independent figure that says what
// the core is, where GFLOP/s also says how fast it ran that day.
#include "fma_peak.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace potop::bench {

namespace {

constexpr int kChains = 12;

// One FMA variant: a vector type and its set1 / fmadd / horizontal-sum, each for its own ISA.
#define POTOP_FMA_CHAINS(NAME, TARGET, VEC, SET1, FMA, FIRST)                      \
  __attribute__((target(TARGET))) float NAME(long iters) {                           \
    VEC a[kChains];                                                                  \
    for (int c = 0; c < kChains; ++c) a[c] = SET1(0.1f * float(c + 1));              \
    VEC x = SET1(0.999999f), y = SET1(1e-7f);                                        \
    asm("" : "+v"(x), "+v"(y)); /* not constants the compiler could fold */          \
    for (long i = 0; i < iters; ++i) {                                               \
      _Pragma("GCC unroll 12") for (int c = 0; c < kChains; ++c) a[c] = FMA(a[c], x, y); \
    }                                                                                \
    float sum = 0.0f;                                                                \
    for (int c = 0; c < kChains; ++c) sum += FIRST(a[c]);                            \
    return sum;                                                                      \
  }

#define POTOP_SSE_MULADD(a, x, y) _mm_add_ps(_mm_mul_ps(a, x), y)
POTOP_FMA_CHAINS(chains_avx512, "avx512f", __m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_cvtss_f32)
POTOP_FMA_CHAINS(chains_avx2, "avx2,fma", __m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_cvtss_f32)
POTOP_FMA_CHAINS(chains_sse, "sse2", __m128, _mm_set1_ps, POTOP_SSE_MULADD, _mm_cvtss_f32)
#undef POTOP_SSE_MULADD
#undef POTOP_FMA_CHAINS

struct Variant {
  const char* isa;
  int lanes;
  float (*chains)(long);
};

// The widest variant this CPU runs, or the one named by `isa` (to compare them on one CPU).
Variant choose(const std::string& isa) {
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (isa.empty() ? avx512 : isa == "avx512") {
    if (!avx512) throw std::runtime_error("this CPU has no AVX-512");
    return {"avx512", 16, chains_avx512};
  }
  if (isa.empty() ? avx2 : isa == "avx2") {
    if (!avx2) throw std::runtime_error("this CPU has no AVX2 with FMA");
    return {"avx2", 8, chains_avx2};
  }
  if (isa.empty() || isa == "sse") return {"sse", 4, chains_sse};
  throw std::runtime_error("unknown ISA " + isa + " (avx512, avx2 or sse)");
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Doubles `iters` until one call of `run` takes a fiftieth of `seconds`, then returns ten times
// that, so each timed repetition takes about a fifth of it.
template <typename Run>
long calibrate(Run run, double seconds) {
  long iters = 1 << 16;
  for (;;) {
    const auto t0 = Clock::now();
    run(iters);
    if (seconds_since(t0) > seconds / 50) return iters * 10;
    iters *= 2;
  }
}

// `iters` × 8 dependent adds: each needs the one before, so they take one cycle each.
std::uint64_t add_chain(long iters) {
  std::uint64_t v = 0;
  for (long i = 0; i < iters; ++i) {
    asm volatile(
        "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
        "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0"
        : "+r"(v));
  }
  return v;
}

}  // namespace

FmaPeak measure_fma_peak(int threads, double seconds, const std::string& isa) {
  const Variant v = choose(isa);
  FmaPeak peak;
  peak.isa = v.isa;
  peak.lanes = v.lanes;
  const double flops_per_iter = kChains * v.lanes * 2.0;  // multiply + add

  const long iters = calibrate([&](long n) { volatile float sink = v.chains(n); (void)sink; }, seconds);
  for (int rep = 0; rep < 5; ++rep) {  // best of 5
    float sink = 0.0f;
    const auto t0 = Clock::now();
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    sink += v.chains(iters);
    const double dt = seconds_since(t0);
    peak.gflops = std::max(peak.gflops, threads * iters * flops_per_iter / dt / 1e9 + 0.0f * sink);
  }

  // The clock of every thread while all of them run, the same load as the FMA loop's.
  const long adds = calibrate([](long n) { volatile std::uint64_t sink = add_chain(n); (void)sink; }, seconds / 2);
  for (int rep = 0; rep < 3; ++rep) {
    std::uint64_t sink = 0;
    const auto t0 = Clock::now();
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    sink += add_chain(adds);
    const double dt = seconds_since(t0);
    peak.ghz = std::max(peak.ghz, adds * 8.0 / dt / 1e9 + 0.0 * double(sink));
  }
  peak.flops_per_cycle = peak.ghz > 0 ? peak.gflops / threads / peak.ghz : 0.0;
  return peak;
}

}  // namespace potop::bench
