#include "generate/generator.h"

#include <algorithm>

#include "core/error.h"

namespace potop {

Generation::Generation(const GPT& model, std::vector<int> prompt, int n_tokens, const SamplingOptions& options,
                       uint64_t seed, GenerationHooks hooks, int prefill_chunk)
    : block_(model.config().block_size),
      V_(model.config().vocab_size),
      n_tokens_(n_tokens),
      chunk_(prefill_chunk > 0 ? prefill_chunk : model.config().block_size),
      sampler_(options, seed),
      hooks_(std::move(hooks)),
      cache_(model.new_cache()),
      context_(std::move(prompt)) {
  POTOP_CHECK(!context_.empty(), "generation needs at least one prompt token");
  generated_.reserve(n_tokens);
  refill(block_);
  done_ = n_tokens <= 0 && !hooks_.on_prompt;
}

void Generation::refill(int keep) {
  cache_.length = 0;
  prefilling_ = true;
  feed_begin_ = context_.size() - std::min<size_t>(keep, context_.size());
  feed_end_ = std::min(context_.size(), feed_begin_ + chunk_);
}

std::span<const int> Generation::pending() const {
  return {context_.data() + feed_begin_, feed_end_ - feed_begin_};
}

void Generation::advance(const float* logits, int rows) {
  POTOP_CHECK(!done_ && rows == static_cast<int>(feed_end_ - feed_begin_), "advance() after the pending tokens");
  const bool first_read = prefilling_ && !prompt_read_;
  if (prefilling_ && feed_end_ < context_.size()) {  // more of the prompt (or context) to read
    if (first_read && hooks_.on_prompt) prompt_logits_.insert(prompt_logits_.end(), logits, logits + size_t(rows) * V_);
    feed_begin_ = feed_end_;
    feed_end_ = std::min(context_.size(), feed_begin_ + chunk_);
    return;
  }
  if (first_read) {
    prompt_read_ = true;
    if (hooks_.on_prompt) {
      if (prompt_logits_.empty()) {
        hooks_.on_prompt(logits, rows);
      } else {
        prompt_logits_.insert(prompt_logits_.end(), logits, logits + size_t(rows) * V_);
        hooks_.on_prompt(prompt_logits_.data(), static_cast<int>(prompt_logits_.size() / V_));
        std::vector<float>().swap(prompt_logits_);
      }
    }
  }
  prefilling_ = false;
  if (static_cast<int>(generated_.size()) >= n_tokens_) {
    done_ = true;
    return;
  }
  const float* last = logits + static_cast<size_t>(rows - 1) * V_;
  const int token = sampler_.sample(last, V_, context_);
  generated_.push_back(token);
  context_.push_back(token);
  if ((hooks_.on_token && !hooks_.on_token(token, last)) || static_cast<int>(generated_.size()) == n_tokens_) {
    done_ = true;
    return;
  }
  if (cache_.length == block_) {
    refill(std::max(1, block_ / 2));
  } else {
    feed_begin_ = context_.size() - 1;
    feed_end_ = context_.size();
  }
}

std::vector<int> generate(GPT& model, const std::vector<int>& prompt, int n_tokens, const SamplingOptions& options,
                          uint64_t seed, const GenerationHooks& hooks) {
  Generation g(model, prompt, n_tokens, options, seed, hooks);
  while (!g.done()) {
    const std::span<const int> feed = g.pending();
    model.forward(feed.data(), static_cast<int>(feed.size()), g.cache());
    g.advance(model.logits(), model.last_rows());
  }
  return g.generated();
}

std::vector<int> generate(GPT& model, const std::vector<int>& prompt, int n_tokens, const SamplingOptions& options,
                          uint64_t seed, const std::function<bool(int)>& on_token) {
  GenerationHooks hooks;
  if (on_token) hooks.on_token = [&](int id, const float*) { return on_token(id); };
  return generate(model, prompt, n_tokens, options, seed, hooks);
}

}  // namespace potop
