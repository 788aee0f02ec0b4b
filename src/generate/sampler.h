// Picks the next token from a row of logits: temperature, then top-k, then top-p (nucleus).
#pragma once
#include <cstdint>
#include <vector>

#include "core/rng.h"

namespace potop {

struct SamplingOptions {
  float temperature = 0.8f;  // 0 = greedy (argmax), deterministic
  int top_k = 0;             // keep the k most likely tokens; 0 = all
  float top_p = 1.0f;        // keep the smallest set whose probability reaches p; 1 = all
};

// Throws potop::Error naming --temperature / --top-k / --top-p when out of range.
void validate(const SamplingOptions& options, int vocab_size);

class Sampler {
 public:
  Sampler(const SamplingOptions& options, uint64_t seed) : options_(options), rng_(seed) {}
  int sample(const float* logits, int V);

 private:
  SamplingOptions options_;
  Rng rng_;
  std::vector<std::pair<float, int>> candidates_;  // reused: no allocation per token
};

}  // namespace potop
