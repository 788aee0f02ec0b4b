// What BLAS can do on a model's GEMM shapes (gemm_ceiling.cpp): the second reference line of
// the benchmark, next to the FMA peak.
#pragma once

#include "models/gpt/gpt.h"

namespace potop::bench {

// GFLOP/s of `threads` threads each running, single-threaded and all at once, the linear
// layers' GEMMs of one training step over `rows` rows (a batch-parallel replica's share: the
// forward product, the input gradient and the weight gradient of qkv, attention projection,
// fc, fc projection per layer, and of the tied LM head), timed over about `seconds`; best of
// 3 repetitions. This is the rate a step could reach if everything outside GEMM took no time.
double gemm_ceiling_gflops(const GPTConfig& config, int rows, int threads, double seconds);

}  // namespace potop::bench
