// One completion on one model slot: encodes the prompt, generates with the request's sampling
// options and seed (generate/generator.h: its own KV cache), holds back possible stop strings
// (generate/stop_strings.h), and scores tokens with log-probs when asked. The HTTP layer only
// turns what this reports into JSON or server-sent events.
#pragma once
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "generate/generator.h"
#include "generate/stop_strings.h"
#include "nn/tasks.h"
#include "serve/completion_request.h"
#include "tokenizer/tokenizer.h"

namespace potop::serve {

// One token with its log-probability under the model (log-softmax of the raw logits: before
// penalties, temperature or truncation, so that scores do not depend on sampling options).
struct TokenScore {
  std::string text;
  std::optional<float> logprob;  // none for the first prompt token: nothing predicts it
  std::vector<std::pair<std::string, float>> top;  // the likeliest alternatives, best first
  long text_offset = 0;  // characters (code points) from the start of the prompt
};

// What may be sent now: the text shown so far held back for stop strings, and the scores of the
// tokens it came from (empty without logprobs), held back with their text: a token's score goes
// out once its text has, and a stop string's tokens never do (the one that straddles the stop
// goes with its text cut where the returned text ends).
struct CompletionChunk {
  std::string text;
  std::vector<TokenScore> scores;
};

struct CompletionResult {
  std::string text;           // the returned text (the prompt first with echo)
  // "stop" (a stop string, the model's end of text), "length" (max_tokens, the context) or
  // "time_limit" (the request's time limit ended it)
  std::string finish_reason;
  int prompt_tokens = 0, completion_tokens = 0;
  std::vector<TokenScore> scores;  // with logprobs: the prompt's (with echo), then each generated token's
  uint64_t seed = 0;
  bool cancelled = false;  // on_chunk returned false: the client left
  bool timed_out = false;
};

// The prompt's ids, checked against limits and the model: ApiError (400, param "prompt") when
// it is too long, or holds a character the tokenizer cannot encode and `unknown` is kError
// (kSkip leaves such characters out, kReplace puts the tokenizer's stand-in in their place).
std::vector<int> encode_prompt(const Tokenizer& tokenizer, const CompletionRequest& request, const Limits& limits,
                               Unknown unknown = Unknown::kError);

// One request's completion as a Generation (generate/generator.h) that whoever runs the model
// steps: complete() below alone, or the server's batcher together with others. Chunks go to
// on_chunk from the thread that steps it; returning false cancels. Neither copied nor moved (the
// generation's hooks point at it).
class Completion {
 public:
  Completion(const CausalLM& model, const Tokenizer& tokenizer, const CompletionRequest& request,
             const std::vector<int>& prompt_ids, uint64_t seed, std::chrono::steady_clock::time_point deadline,
             std::function<bool(const CompletionChunk&)> on_chunk, int prefill_chunk = 0);
  ~Completion();
  Completion(const Completion&) = delete;
  Completion& operator=(const Completion&) = delete;

  Generation& generation() { return *generation_; }
  void cancel() { result_.cancelled = true, generation_->stop(); }
  // Once the generation is done: sends what stop strings held back, and the result.
  CompletionResult finish();

 private:
  bool send(CompletionChunk chunk);
  bool send_echo();
  bool on_token(int id, const float* logits);
  // Moves to `chunk` the held-back scores whose text has been released (released_ bytes).
  void release_scores(CompletionChunk& chunk);

  const Tokenizer& tokenizer_;
  CompletionRequest request_;  // a copy: the caller's may go before the batcher is done
  std::vector<int> prompt_ids_;
  std::chrono::steady_clock::time_point deadline_;
  std::function<bool(const CompletionChunk&)> on_chunk_;
  CompletionResult result_;
  class Scorer;
  std::unique_ptr<Scorer> scorer_;
  StopStrings stops_;
  CompletionChunk echoed_;
  bool echo_sent_ = false;
  bool ended_ = false;  // at one of request_.end_ids
  long offset_ = 0;  // of the next generated token's text
  long echo_offset_ = 0;  // of the next scored prompt token's text
  std::deque<TokenScore> held_scores_;  // scored tokens whose text the stop strings still hold
  size_t held_start_ = 0;  // bytes of generated text before the first held score's
  size_t released_ = 0;    // bytes of generated text released so far
  std::unique_ptr<Generation> generation_;
};

// Runs the request. on_chunk (optional) is called with the echoed prompt (with echo) and then
// once per generated token; returning false cancels the generation. Generation also ends at
// `deadline` (finish_reason "length", timed_out).
CompletionResult complete(CausalLM& model, const Tokenizer& tokenizer, const CompletionRequest& request,
                          const std::vector<int>& prompt_ids, uint64_t seed,
                          std::chrono::steady_clock::time_point deadline,
                          const std::function<bool(const CompletionChunk&)>& on_chunk = {});

}  // namespace potop::serve
