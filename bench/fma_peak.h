// The FMA peak of this CPU, measured (fma_peak.cpp).
#pragma once

#include <string>

namespace potop::bench {

struct FmaPeak {
  const char* isa = "";        // the widest vector ISA measured: avx512, avx2 or sse
  int lanes = 0;               // float lanes of one vector of it
  double gflops = 0.0;         // all threads together, best of 5
  double ghz = 0.0;            // the clock while all threads run, from dependent integer adds
  double flops_per_cycle = 0;  // per core: gflops / threads / ghz
};

// `threads` threads running independent FMA chains together for about `seconds`, with the
// widest ISA the CPU has, or with `isa` ("avx512", "avx2", "sse"; std::runtime_error when the
// CPU lacks it).
FmaPeak measure_fma_peak(int threads, double seconds, const std::string& isa = "");

}  // namespace potop::bench
