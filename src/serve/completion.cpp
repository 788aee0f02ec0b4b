#include "serve/completion.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "generate/generator.h"
#include "generate/stop_strings.h"
#include "serve/api_error.h"

namespace potop::serve {

namespace {

// Code points in a piece of UTF-8: every byte but continuation bytes starts one, so that over a
// token sequence whose text is valid UTF-8 the sum is the text's character count.
long code_points(const std::string& s) {
  return std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

// Scores token `id` under one row of logits, with the k likeliest alternatives.
class Scorer {
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

}  // namespace

std::vector<int> encode_prompt(const Tokenizer& tokenizer, const CompletionRequest& request, const Limits& limits,
                               int block_size) {
  std::vector<int> ids;
  try {
    ids = tokenizer.encode(request.prompt, "prompt");
  } catch (const Error& e) {
    throw ApiError::invalid("prompt", e.what());
  }
  if (static_cast<long>(ids.size()) > limits.max_prompt_tokens)
    throw ApiError::invalid("prompt", "prompt is " + std::to_string(ids.size()) + " tokens; the limit is " +
                                          std::to_string(limits.max_prompt_tokens));
  if (request.echo && request.logprobs >= 0 && static_cast<int>(ids.size()) > block_size)
    throw ApiError::invalid("prompt", "with echo and logprobs the prompt may be at most the model's context, " +
                                          std::to_string(block_size) + " tokens (got " + std::to_string(ids.size()) + ")");
  return ids;
}

CompletionResult complete(GPT& model, const Tokenizer& tokenizer, const CompletionRequest& request,
                          const std::vector<int>& prompt_ids, uint64_t seed,
                          std::chrono::steady_clock::time_point deadline,
                          const std::function<bool(const CompletionChunk&)>& on_chunk) {
  CompletionResult result;
  result.seed = seed;
  result.prompt_tokens = static_cast<int>(prompt_ids.size());
  const bool scoring = request.logprobs >= 0;
  Scorer scorer(tokenizer, model.config().vocab_size, std::max(0, request.logprobs));
  // An empty prompt starts from what `potop sample` starts from: a newline, or the first token.
  std::vector<int> context = prompt_ids;
  if (context.empty()) context.push_back(tokenizer.can_encode("\n") ? tokenizer.encode("\n").at(0) : 0);

  const long prompt_chars = code_points(request.prompt);
  GenerationHooks hooks;
  CompletionChunk echoed;
  if (request.echo) {
    echoed.text = request.prompt;
    if (scoring && !prompt_ids.empty())
      hooks.on_prompt = [&](const float* logits, int rows) {
        POTOP_CHECK(rows == static_cast<int>(prompt_ids.size()), "echo scores a prompt within the context");
        const int V = model.config().vocab_size;
        long offset = 0;
        for (int i = 0; i < rows; ++i) {
          TokenScore s;
          if (i == 0) s = TokenScore{tokenizer.decode_one(prompt_ids[0]), std::nullopt, {}, 0};
          else s = scorer.score(logits + static_cast<size_t>(i - 1) * V, prompt_ids[i], offset);
          offset += code_points(s.text);
          echoed.scores.push_back(std::move(s));
        }
      };
  }

  StopStrings stops(request.stop);
  long offset = prompt_chars;  // of the next generated token's text
  bool echo_sent = false;
  auto send = [&](CompletionChunk chunk) {
    result.scores.insert(result.scores.end(), chunk.scores.begin(), chunk.scores.end());
    if (on_chunk && !on_chunk(chunk)) result.cancelled = true;
    return !result.cancelled;
  };
  auto send_echo = [&] {
    if (echo_sent) return true;
    echo_sent = true;
    if (!request.echo) return true;
    return send(std::move(echoed));
  };
  hooks.on_token = [&](int id, const float* logits) {
    ++result.completion_tokens;
    if (!send_echo()) return false;
    CompletionChunk chunk;
    const std::string piece = tokenizer.decode_one(id);
    if (scoring) chunk.scores.push_back(scorer.score(logits, id, offset));
    offset += code_points(piece);
    chunk.text = stops.push(piece);
    if (!send(std::move(chunk))) return false;
    if (std::chrono::steady_clock::now() >= deadline) {
      result.timed_out = true;
      return false;
    }
    return !stops.stopped();
  };
  generate(model, context, request.max_tokens, request.sampling, seed, hooks);
  if (!result.cancelled && send_echo()) {
    CompletionChunk rest{stops.flush(), {}};
    if (!rest.text.empty()) send(std::move(rest));
  }
  result.text = (request.echo ? request.prompt : std::string()) + stops.text();
  result.finish_reason = stops.stopped() ? "stop" : "length";
  return result;
}

}  // namespace potop::serve
