#include "generate/generator.h"

#include <algorithm>

#include "core/error.h"

namespace potop {

std::vector<int> generate(GPT& model, const std::vector<int>& prompt, int n_tokens, const SamplingOptions& options,
                          uint64_t seed, const GenerationHooks& hooks) {
  POTOP_CHECK(!prompt.empty(), "generation needs at least one prompt token");
  const int block = model.config().block_size, V = model.config().vocab_size;
  Sampler sampler(options, seed);
  KVCache cache = model.new_cache();
  std::vector<int> context = prompt;  // everything so far; the cache holds its tail
  std::vector<int> generated;
  generated.reserve(n_tokens);

  // Fill the cache with the last `keep` tokens of the context.
  auto prefill = [&](int keep) {
    cache.length = 0;
    const int n = std::min<int>(keep, static_cast<int>(context.size()));
    model.forward(context.data() + context.size() - n, n, cache);
  };
  prefill(block);
  if (hooks.on_prompt) hooks.on_prompt(model.logits(), model.last_rows());
  for (int i = 0; i < n_tokens; ++i) {
    const float* last = model.logits() + static_cast<size_t>(model.last_rows() - 1) * V;
    const int token = sampler.sample(last, V, context);
    generated.push_back(token);
    context.push_back(token);
    if (hooks.on_token && !hooks.on_token(token, last)) break;
    if (i + 1 == n_tokens) break;
    if (cache.length == block) prefill(std::max(1, block / 2));
    else model.forward(&context.back(), 1, cache);
  }
  return generated;
}

std::vector<int> generate(GPT& model, const std::vector<int>& prompt, int n_tokens, const SamplingOptions& options,
                          uint64_t seed, const std::function<bool(int)>& on_token) {
  GenerationHooks hooks;
  if (on_token) hooks.on_token = [&](int id, const float*) { return on_token(id); };
  return generate(model, prompt, n_tokens, options, seed, hooks);
}

}  // namespace potop
