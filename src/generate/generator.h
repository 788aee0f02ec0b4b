// Autoregressive generation with a KV cache: the prompt is read in one forward pass, then each
// new token costs one position's work. When the context reaches block_size, the cache is
// rebuilt from the last block_size/2 tokens (learned absolute positions cannot simply shift),
// so the amortised cost stays one position per token.
#pragma once
#include <functional>
#include <vector>

#include "generate/sampler.h"
#include "model/gpt.h"

namespace potop {

// Calls on_token(id) for each of up to n_tokens new tokens as soon as it is sampled, and stops
// early when it returns false; returns the generated ids. prompt must be non-empty and contain
// valid ids.
std::vector<int> generate(GPT& model, const std::vector<int>& prompt, int n_tokens, const SamplingOptions& options,
                          uint64_t seed, const std::function<bool(int)>& on_token = {});

}  // namespace potop
