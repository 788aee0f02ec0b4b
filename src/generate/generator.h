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

// What a caller may watch besides the ids (the server's log-probs and scoring of the prompt).
struct GenerationHooks {
  // Once, after the prompt's forward pass: the logits (rows, V) of its last `rows` positions,
  // all of them unless the prompt was longer than block_size.
  std::function<void(const float* logits, int rows)> on_prompt;
  // Each new token as soon as it is sampled, with the logits (V) it was drawn from (before
  // penalties and temperature); generation stops early when it returns false.
  std::function<bool(int id, const float* logits)> on_token;
};

// Generates up to n_tokens new tokens and returns their ids. prompt must be non-empty and
// contain valid ids.
std::vector<int> generate(GPT& model, const std::vector<int>& prompt, int n_tokens, const SamplingOptions& options,
                          uint64_t seed, const GenerationHooks& hooks);
// The same, calling on_token(id) for each new token (stop early when it returns false).
std::vector<int> generate(GPT& model, const std::vector<int>& prompt, int n_tokens, const SamplingOptions& options,
                          uint64_t seed, const std::function<bool(int)>& on_token = {});

}  // namespace potop
