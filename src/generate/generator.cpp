#include "generate/generator.h"

#include <algorithm>

#include "core/error.h"

namespace potop {

Generation::Generation(const CausalLM& model, std::vector<int> prompt, int n_tokens, const SamplingOptions& options,
                       uint64_t seed, GenerationHooks hooks, int prefill_chunk)
    : block_(model.context_length()),
      V_(model.vocab_size()),
      n_tokens_(n_tokens),
      chunk_(prefill_chunk > 0 ? prefill_chunk : model.context_length()),
      sampler_(options, seed),
      hooks_(std::move(hooks)),
      cache_(model.new_cache()),
      context_(std::move(prompt)) {
  POTOP_CHECK(!context_.empty(), "generation needs at least one prompt token");
  generated_.reserve(n_tokens);
  prompt_size_ = context_.size();
  if (hooks_.on_prompt) {  // every position is read, from the first, a window at a time
    feed_begin_ = 0;
    feed_end_ = std::min<size_t>({context_.size(), size_t(chunk_), size_t(block_)});
  } else {
    refill(block_);
  }
  done_ = n_tokens <= 0 && !hooks_.on_prompt;
}

void Generation::next_prompt_chunk() {
  if (cache_.length >= block_) {  // the window is full: slide it, keeping the last half
    const size_t keep = std::max<size_t>(1, size_t(block_) / 2);
    cache_.length = 0;
    feed_begin_ = feed_end_ - keep;
  } else {
    feed_begin_ = feed_end_;
  }
  const size_t room = size_t(block_ - cache_.length);
  feed_end_ = std::min({prompt_size_, feed_begin_ + size_t(chunk_), feed_begin_ + room});
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

LogitRows Generation::logit_rows() const {
  return prefilling_ && !prompt_read_ && hooks_.on_prompt ? LogitRows::kAll : LogitRows::kLast;
}

void Generation::advance(const float* logits) {
  POTOP_CHECK(!done_, "advance() after the generation is done");
  const int rows = logit_rows() == LogitRows::kAll ? static_cast<int>(feed_end_ - feed_begin_) : 1;
  const bool first_read = prefilling_ && !prompt_read_;
  if (first_read && hooks_.on_prompt && feed_end_ > reported_) {  // positions a slide re-read are not new
    const size_t skip = reported_ - feed_begin_;
    hooks_.on_prompt(logits + skip * V_, static_cast<int>(reported_), static_cast<int>(feed_end_ - reported_));
    reported_ = feed_end_;
  }
  if (prefilling_ && feed_end_ < context_.size()) {  // more of the prompt (or context) to read
    if (first_read && hooks_.on_prompt) {
      next_prompt_chunk();
    } else {
      feed_begin_ = feed_end_;
      feed_end_ = std::min(context_.size(), feed_begin_ + chunk_);
    }
    return;
  }
  if (first_read) prompt_read_ = true;
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

std::vector<int> generate(CausalLM& model, const std::vector<int>& prompt, int n_tokens, const SamplingOptions& options,
                          uint64_t seed, const GenerationHooks& hooks) {
  Generation g(model, prompt, n_tokens, options, seed, hooks);
  while (!g.done()) {
    const std::span<const int> feed = g.pending();
    model.forward(feed.data(), static_cast<int>(feed.size()), g.cache(), g.logit_rows());
    g.advance(model.logits());
  }
  return g.generated();
}

std::vector<int> generate(CausalLM& model, const std::vector<int>& prompt, int n_tokens, const SamplingOptions& options,
                          uint64_t seed, const std::function<bool(int)>& on_token) {
  GenerationHooks hooks;
  if (on_token) hooks.on_token = [&](int id, const float*) { return on_token(id); };
  return generate(model, prompt, n_tokens, options, seed, hooks);
}

}  // namespace potop
