// How a completion is written back: OpenAI's legacy text completion (/v1/completions), a chat
// completion (/v1/chat/completions) or a response (/v1/responses), whole or as server-sent
// events. The generation is the same; only the JSON around its text differs:
//   legacy  {"id", "object": "text_completion", "choices": [{"text", "index", "logprobs",
//           "finish_reason"}], ...}; logprobs {"tokens", "token_logprobs", "top_logprobs" (one
//           object per token, likeliest first), "text_offset"}
//   chat    {"id", "object": "chat.completion", "choices": [{"index", "message": {"role",
//           "content"}, "logprobs": {"content": [{"token", "logprob", "bytes", "top_logprobs"}]},
//           "finish_reason"}], ...}; streamed as "chat.completion.chunk"s whose "delta" holds the
//           role first, then the text; with include_usage a last chunk with no choices and the usage.
//   response {"id", "object": "response", "status", "output": [{"type": "message", "content":
//           [{"type": "output_text", "text"}]}], "usage": {"input_tokens", "output_tokens"}};
//           streamed as typed events (event: response.created, response.output_item.added,
//           response.content_part.added, response.output_text.delta per token, then the .done
//           events and response.completed, or response.incomplete when max_output_tokens cut it).
// Every answer and every streamed chunk (a response's: its first and last) carries the seed.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/completion.h"

namespace potop::serve {

enum class Api { kCompletions, kChat, kResponses };

class CompletionShape {
 public:
  // logprobs: the request's (-1: none). The id's prefix (cmpl-, chatcmpl-, resp_) is the API's.
  CompletionShape(Api api, long number, std::string model, uint64_t seed, int logprobs, bool include_usage);

  // The events, in order, from one thread (a response's events are numbered).
  std::string head();                             // events before the first text (chat: the role)
  std::string event(const CompletionChunk& chunk);  // one "data: {...}\n\n" (empty: nothing to send)
  std::string tail(const CompletionResult& result);  // the last events, through "data: [DONE]"
  std::string body(const CompletionResult& result) const;  // the whole answer, not streamed

 private:
  // One chunk: a chat's delta, or the legacy text; finish_reason null until the last.
  nlohmann::ordered_json chunk_json(const nlohmann::ordered_json& delta, const std::string& text,
                                    const std::vector<TokenScore>& scores,
                                    const nlohmann::ordered_json& finish_reason) const;

  // A response's object, in_progress (no result yet) or finished.
  nlohmann::ordered_json response_json(const CompletionResult* result) const;
  std::string typed_event(const std::string& type, nlohmann::ordered_json fields);

  Api api_;
  bool chat_;
  std::string id_, item_id_, model_;
  long sequence_ = 0;  // a response's events' sequence_number
  uint64_t seed_;
  int logprobs_;
  bool include_usage_;
  long created_;
  // A text-only event is the same JSON but for its text: built once, the text goes between.
  std::string text_head_, text_tail_;
};

}  // namespace potop::serve
