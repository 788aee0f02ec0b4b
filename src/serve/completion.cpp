#include "serve/completion.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "serve/api_error.h"
#include "tokenizer/special_texts.h"

namespace potop::serve {

namespace {

// Code points in a piece of UTF-8: every byte but continuation bytes starts one, so that over a
// token sequence whose text is valid UTF-8 the sum is the text's character count.
long code_points(const std::string& s) {
  return std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

}  // namespace

// Scores token `id` under one row of logits, with the k likeliest alternatives.
class Completion::Scorer {
 public:
  Scorer(const Tokenizer& tokenizer, int vocab_size, int k) : tokenizer_(tokenizer), V_(vocab_size), k_(k) {}

  TokenScore score(const float* logits, int id, long offset) {
    const float max = *std::max_element(logits, logits + V_);
    double sum = 0;
    for (int i = 0; i < V_; ++i) sum += std::exp(static_cast<double>(logits[i] - max));
    const float log_z = max + static_cast<float>(std::log(sum));
    TokenScore s{tokenizer_.decode_one(id), logits[id] - log_z, {}, offset};
    const int k = std::min(k_, V_);
    order_.resize(V_);
    std::iota(order_.begin(), order_.end(), 0);
    std::partial_sort(order_.begin(), order_.begin() + k, order_.end(),
                      [&](int a, int b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
    for (int i = 0; i < k; ++i) s.top.emplace_back(tokenizer_.decode_one(order_[i]), logits[order_[i]] - log_z);
    return s;
  }

 private:
  const Tokenizer& tokenizer_;
  int V_, k_;
  std::vector<int> order_;
};


std::vector<int> encode_prompt(const Tokenizer& tokenizer, const CompletionRequest& request, const Limits& limits,
                               Unknown unknown) {
  std::vector<int> ids;
  try {
    ids = request.special_texts ? encode_with_specials(tokenizer, request.prompt, "prompt", unknown, nullptr)
                                : tokenizer.encode(request.prompt, "prompt", unknown, nullptr);
  } catch (const Error& e) {
    throw ApiError::invalid("prompt", e.what());
  }
  if (static_cast<long>(ids.size()) > limits.max_prompt_tokens)
    throw ApiError::invalid("prompt", "prompt is " + std::to_string(ids.size()) + " tokens; the limit is " +
                                          std::to_string(limits.max_prompt_tokens));
  return ids;
}

Completion::Completion(const CausalLM& model, const Tokenizer& tokenizer, const CompletionRequest& request,
                       const std::vector<int>& prompt_ids, uint64_t seed,
                       std::chrono::steady_clock::time_point deadline,
                       std::function<bool(const CompletionChunk&)> on_chunk, int prefill_chunk)
    : tokenizer_(tokenizer),
      request_(request),
      prompt_ids_(prompt_ids),
      deadline_(deadline),
      on_chunk_(std::move(on_chunk)),
      scorer_(std::make_unique<Scorer>(tokenizer, model.vocab_size(), std::max(0, request.logprobs))),
      stops_(request.stop),
      offset_(code_points(request.prompt)) {
  result_.seed = seed;
  result_.prompt_tokens = static_cast<int>(prompt_ids.size());
  const bool scoring = request.logprobs >= 0;
  const int V = model.vocab_size();
  // An empty prompt starts from what `potop sample` starts from: a newline, or the first token.
  std::vector<int> context = prompt_ids;
  if (context.empty()) context.push_back(tokenizer.can_encode("\n") ? tokenizer.encode("\n").at(0) : 0);

  GenerationHooks hooks;
  if (request.echo) {
    echoed_.text = request.prompt;
    if (scoring && !prompt_ids.empty())
      hooks.on_prompt = [this, V](const float* logits, int first, int rows) {
        // Position p's logits score token p + 1: the last position of one read scores the first
        // token of the next.
        for (int r = 0; r < rows; ++r) {
          const int p = first + r;
          if (p == 0) {
            echoed_.scores.push_back(TokenScore{tokenizer_.decode_one(prompt_ids_[0]), std::nullopt, {}, 0});
            echo_offset_ = code_points(echoed_.scores.back().text);
          }
          if (p + 1 < static_cast<int>(prompt_ids_.size())) {
            echoed_.scores.push_back(scorer_->score(logits + static_cast<size_t>(r) * V, prompt_ids_[p + 1], echo_offset_));
            echo_offset_ += code_points(echoed_.scores.back().text);
          }
        }
      };
  }
  hooks.on_token = [this](int id, const float* logits) { return on_token(id, logits); };
  generation_ = std::make_unique<Generation>(model, std::move(context), request.max_tokens, request.sampling, seed,
                                             std::move(hooks), prefill_chunk);
}

Completion::~Completion() = default;

bool Completion::send(CompletionChunk chunk) {
  result_.scores.insert(result_.scores.end(), chunk.scores.begin(), chunk.scores.end());
  if (on_chunk_ && !on_chunk_(chunk)) result_.cancelled = true;
  return !result_.cancelled;
}

bool Completion::send_echo() {
  if (echo_sent_) return true;
  echo_sent_ = true;
  if (!request_.echo) return true;
  return send(std::move(echoed_));
}

void Completion::release_scores(CompletionChunk& chunk) {
  while (!held_scores_.empty() && held_start_ + held_scores_.front().text.size() <= released_) {
    held_start_ += held_scores_.front().text.size();
    chunk.scores.push_back(std::move(held_scores_.front()));
    held_scores_.pop_front();
  }
}

bool Completion::on_token(int id, const float* logits) {
  ++result_.completion_tokens;
  if (!send_echo()) return false;
  if (std::find(request_.end_ids.begin(), request_.end_ids.end(), id) != request_.end_ids.end()) {
    ended_ = true;  // the model's end of text: not shown
    return false;
  }
  CompletionChunk chunk;
  const std::string piece = tokenizer_.decode_one(id);
  if (request_.logprobs >= 0) held_scores_.push_back(scorer_->score(logits, id, offset_));
  offset_ += code_points(piece);
  chunk.text = stops_.push(piece);
  released_ += chunk.text.size();
  release_scores(chunk);
  if (!send(std::move(chunk))) return false;
  if (std::chrono::steady_clock::now() >= deadline_) {
    result_.timed_out = true;
    return false;
  }
  return !stops_.stopped();
}

CompletionResult Completion::finish() {
  if (!result_.cancelled && send_echo()) {
    CompletionChunk rest{stops_.flush(), {}};
    released_ += rest.text.size();
    release_scores(rest);
    // The token a stop string begins inside: its score, with the text that was returned.
    if (!held_scores_.empty() && held_start_ < released_) {
      held_scores_.front().text.resize(released_ - held_start_);
      rest.scores.push_back(std::move(held_scores_.front()));
    }
    held_scores_.clear();  // the stop string's own tokens
    if (!rest.text.empty() || !rest.scores.empty()) send(std::move(rest));
  }
  result_.text = (request_.echo ? request_.prompt : std::string()) + stops_.text();
  result_.finish_reason = stops_.stopped() || ended_ ? "stop" : result_.timed_out ? "time_limit" : "length";
  return std::move(result_);
}

CompletionResult complete(CausalLM& model, const Tokenizer& tokenizer, const CompletionRequest& request,
                          const std::vector<int>& prompt_ids, uint64_t seed,
                          std::chrono::steady_clock::time_point deadline,
                          const std::function<bool(const CompletionChunk&)>& on_chunk) {
  Completion completion(model, tokenizer, request, prompt_ids, seed, deadline, on_chunk);
  Generation& g = completion.generation();
  while (!g.done()) {
    const std::span<const int> feed = g.pending();
    model.forward(feed.data(), static_cast<int>(feed.size()), g.cache(), g.logit_rows());
    g.advance(model.logits());
  }
  return completion.finish();
}

}  // namespace potop::serve
