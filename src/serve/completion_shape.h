// How a completion is written back: OpenAI's legacy text completion (/v1/completions) or a chat
// completion (/v1/chat/completions), whole or as server-sent events. The generation is the same;
// only the JSON around its text differs:
//   legacy  {"id", "object": "text_completion", "choices": [{"text", "index", "logprobs",
//           "finish_reason"}], ...}; logprobs {"tokens", "token_logprobs", "top_logprobs" (one
//           object per token, likeliest first), "text_offset"}
//   chat    {"id", "object": "chat.completion", "choices": [{"index", "message": {"role",
//           "content"}, "logprobs": {"content": [{"token", "logprob", "bytes", "top_logprobs"}]},
//           "finish_reason"}], ...}; streamed as "chat.completion.chunk"s whose "delta" holds the
//           role first, then the text; with include_usage a last chunk with no choices and the usage.
// Every answer and every streamed chunk carries the seed.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/completion.h"

namespace potop::serve {

class CompletionShape {
 public:
  // logprobs: the request's (-1: none).
  CompletionShape(bool chat, std::string id, std::string model, uint64_t seed, int logprobs, bool include_usage);

  std::string head() const;                             // events before the first text (chat: the role)
  std::string event(const CompletionChunk& chunk) const;  // one "data: {...}\n\n" (empty: nothing to send)
  std::string tail(const CompletionResult& result) const;  // the last events, through "data: [DONE]"
  std::string body(const CompletionResult& result) const;  // the whole answer, not streamed

 private:
  // One chunk: a chat's delta, or the legacy text; finish_reason null until the last.
  nlohmann::ordered_json chunk_json(const nlohmann::ordered_json& delta, const std::string& text,
                                    const std::vector<TokenScore>& scores,
                                    const nlohmann::ordered_json& finish_reason) const;

  bool chat_;
  std::string id_, model_;
  uint64_t seed_;
  int logprobs_;
  bool include_usage_;
  long created_;
  // A text-only event is the same JSON but for its text: built once, the text goes between.
  std::string text_head_, text_tail_;
};

}  // namespace potop::serve
