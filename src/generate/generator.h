// Autoregressive generation with a KV cache: the prompt is read in one forward pass (or in
// chunks), then each new token costs one position's work. When the context reaches block_size,
// the cache is rebuilt from the last block_size/2 tokens (learned absolute positions cannot
// simply shift), so the amortised cost stays one position per token. A prompt longer than
// block_size is read whole only when its logits are watched (on_prompt: scoring a text), through
// the same sliding window; otherwise only its last block_size tokens are.
//
// Generation is one sequence's state, stepped by whoever runs the forward passes: generate()
// below for one sequence, or the server's batcher (serve/batcher.h), which decodes many
// sequences in one forward pass (CausalLM::forward_rows) and reads long prompts a chunk at a time.
#pragma once
#include <functional>
#include <span>
#include <vector>

#include "generate/sampler.h"
#include "nn/tasks.h"

namespace potop {

// What a caller may watch besides the ids (the server's log-probs and scoring of the prompt).
struct GenerationHooks {
  // The logits (rows, V) of prompt positions [first, first + rows), as the prompt is read:
  // every position once, in order, from 0. A position past block_size sees the block_size/2 to
  // block_size tokens before it (the sliding window generation uses).
  std::function<void(const float* logits, int first, int rows)> on_prompt;
  // Each new token as soon as it is sampled, with the logits (V) it was drawn from (before
  // penalties and temperature); generation stops early when it returns false.
  std::function<bool(int id, const float* logits)> on_token;
};

class Generation {
 public:
  // Up to n_tokens new tokens after prompt (non-empty, valid ids). prefill_chunk > 0 reads the
  // prompt at most that many tokens per forward pass; 0 reads it in one.
  Generation(const CausalLM& model, std::vector<int> prompt, int n_tokens, const SamplingOptions& options, uint64_t seed,
             GenerationHooks hooks, int prefill_chunk = 0);

  bool done() const { return done_; }
  // The tokens the next forward pass must append to cache(): a chunk of the prompt (or of the
  // context being re-read after the cache filled up), or the last sampled token.
  std::span<const int> pending() const;
  bool decoding() const { return !done_ && !prefilling_; }  // pending() is one sampled token
  KVCache& cache() { return cache_; }
  // The logits the forward pass of pending() must give: every position's while on_prompt watches
  // the prompt, else the last one's (all that sampling the next token reads).
  LogitRows logit_rows() const;
  // After the forward pass that appended pending() to cache(): the logits it gave, as
  // logit_rows() asked: (pending().size(), V) or (1, V). Samples the next token once the prompt
  // is read.
  void advance(const float* logits);
  void stop() { done_ = true; }  // the caller gives up (the client left)
  const std::vector<int>& generated() const { return generated_; }

 private:
  void refill(int keep);  // re-read the last `keep` tokens of the context into an empty cache
  // The next piece of the prompt to read, sliding the window when the cache is full.
  void next_prompt_chunk();

  int block_, V_, n_tokens_, chunk_;
  Sampler sampler_;
  GenerationHooks hooks_;
  KVCache cache_;
  std::vector<int> context_;  // everything so far; the cache holds its tail
  std::vector<int> generated_;
  size_t feed_begin_ = 0, feed_end_ = 0;  // context_[feed_begin_, feed_end_) is pending()
  bool prefilling_ = true, prompt_read_ = false, done_ = false;
  size_t prompt_size_ = 0;  // the prompt's tokens (context_'s first ones)
  size_t reported_ = 0;     // prompt positions whose logits on_prompt has had
};

// Generates up to n_tokens new tokens and returns their ids. prompt must be non-empty and
// contain valid ids.
std::vector<int> generate(CausalLM& model, const std::vector<int>& prompt, int n_tokens, const SamplingOptions& options,
                          uint64_t seed, const GenerationHooks& hooks);
// The same, calling on_token(id) for each new token (stop early when it returns false).
std::vector<int> generate(CausalLM& model, const std::vector<int>& prompt, int n_tokens, const SamplingOptions& options,
                          uint64_t seed, const std::function<bool(int)>& on_token = {});

}  // namespace potop
