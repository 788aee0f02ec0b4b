#include "serve/completion_shape.h"

#include <ctime>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace potop::serve {

namespace {

// Insertion-ordered, so that top_logprobs run from the likeliest, as OpenAI sends them.
using ojson = nlohmann::ordered_json;

// Generated text may hold stray bytes (a byte token alone): they become U+FFFD, never an exception.
std::string dump_ordered(const ojson& j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }
std::string data(const ojson& j) { return "data: " + dump_ordered(j) + "\n\n"; }

ojson legacy_logprobs(const std::vector<TokenScore>& scores) {
  ojson tokens = ojson::array(), token_logprobs = ojson::array(), top = ojson::array(), offsets = ojson::array();
  for (const TokenScore& s : scores) {
    tokens.push_back(s.text);
    token_logprobs.push_back(s.logprob ? ojson(*s.logprob) : ojson());
    if (s.logprob) {
      ojson alternatives = ojson::object();
      for (const auto& [text, lp] : s.top) alternatives.emplace(text, lp);  // the likelier of equal texts stays
      top.push_back(alternatives);
    } else {
      top.push_back(nullptr);
    }
    offsets.push_back(s.text_offset);
  }
  return {{"tokens", tokens}, {"token_logprobs", token_logprobs}, {"top_logprobs", top}, {"text_offset", offsets}};
}

ojson utf8_bytes(const std::string& text) {
  ojson bytes = ojson::array();
  for (unsigned char c : text) bytes.push_back(int(c));
  return bytes;
}

ojson chat_logprobs(const std::vector<TokenScore>& scores) {
  ojson content = ojson::array();
  for (const TokenScore& s : scores) {
    if (!s.logprob) continue;  // an echoed first token: chat has no echo
    ojson top = ojson::array();
    for (const auto& [text, lp] : s.top) top.push_back({{"token", text}, {"logprob", lp}, {"bytes", utf8_bytes(text)}});
    content.push_back({{"token", s.text}, {"logprob", *s.logprob}, {"bytes", utf8_bytes(s.text)}, {"top_logprobs", top}});
  }
  return {{"content", content}};
}

ojson usage(const CompletionResult& r) {
  return {{"prompt_tokens", r.prompt_tokens}, {"completion_tokens", r.completion_tokens},
          {"total_tokens", r.prompt_tokens + r.completion_tokens}};
}

}  // namespace

CompletionShape::CompletionShape(Api api, long number, std::string model, uint64_t seed, int logprobs,
                                 bool include_usage)
    : api_(api),
      chat_(api == Api::kChat),
      id_((api == Api::kChat ? "chatcmpl-" : api == Api::kResponses ? "resp_" : "cmpl-") + std::to_string(number)),
      item_id_("msg_" + std::to_string(number)),
      model_(std::move(model)),
      seed_(seed),
      logprobs_(logprobs),
      include_usage_(include_usage),
      created_(static_cast<long>(std::time(nullptr))) {
  const std::string event = data(chunk_json(chat_ ? ojson{{"content", ""}} : ojson(), "", {}, ojson()));
  const std::string empty = chat_ ? "\"content\":\"\"" : "\"text\":\"\"";
  const size_t at = event.find(empty);
  POTOP_CHECK(at != std::string::npos, "an event holds its text");
  text_head_ = event.substr(0, at + empty.size() - 2);  // through the key and its colon
  text_tail_ = event.substr(at + empty.size());
}

ojson CompletionShape::chunk_json(const ojson& delta, const std::string& text, const std::vector<TokenScore>& scores,
                                 const ojson& finish_reason) const {
  ojson choice;
  const ojson logprobs = logprobs_ < 0 ? ojson() : chat_ ? chat_logprobs(scores) : legacy_logprobs(scores);
  if (chat_) {
    choice = {{"index", 0}, {"delta", delta}, {"logprobs", logprobs}, {"finish_reason", finish_reason}};
  } else {
    choice = {{"text", text}, {"index", 0}, {"logprobs", logprobs}, {"finish_reason", finish_reason}};
  }
  return {{"id", id_}, {"object", chat_ ? "chat.completion.chunk" : "text_completion"}, {"created", created_},
          {"model", model_}, {"seed", seed_}, {"choices", ojson::array({choice})}};
}

ojson CompletionShape::response_json(const CompletionResult* r) const {
  ojson out = {{"id", id_}, {"object", "response"}, {"created_at", created_}, {"model", model_}, {"seed", seed_}};
  if (!r) {
    out["status"] = "in_progress";
    out["output"] = ojson::array();
    return out;
  }
  const bool cut = r->finish_reason != "stop";  // max_output_tokens, the context or the time limit
  out["status"] = cut ? "incomplete" : "completed";
  out["incomplete_details"] = cut ? ojson{{"reason", r->finish_reason == "time_limit" ? "time_limit" : "max_output_tokens"}}
                                  : ojson();
  ojson part = {{"type", "output_text"}, {"text", r->text}, {"annotations", ojson::array()}};
  if (logprobs_ >= 0) part["logprobs"] = chat_logprobs(r->scores)["content"];  // include: message.output_text.logprobs
  out["output"] = ojson::array({{{"type", "message"}, {"id", item_id_}, {"status", "completed"}, {"role", "assistant"},
                                {"content", ojson::array({part})}}});
  out["usage"] = {{"input_tokens", r->prompt_tokens}, {"output_tokens", r->completion_tokens},
                  {"total_tokens", r->prompt_tokens + r->completion_tokens}};
  return out;
}

std::string CompletionShape::typed_event(const std::string& type, ojson fields) {
  ojson event = {{"type", type}, {"sequence_number", sequence_++}};
  for (auto& [key, value] : fields.items()) event[key] = std::move(value);
  return "event: " + type + "\n" + data(event);
}

std::string CompletionShape::head() {
  if (api_ == Api::kResponses) {
    const ojson item = {{"type", "message"}, {"id", item_id_}, {"status", "in_progress"}, {"role", "assistant"},
                       {"content", ojson::array()}};
    // One statement each: the events are numbered in the order they are made.
    std::string out = typed_event("response.created", {{"response", response_json(nullptr)}});
    out += typed_event("response.in_progress", {{"response", response_json(nullptr)}});
    out += typed_event("response.output_item.added", {{"output_index", 0}, {"item", item}});
    out += typed_event("response.content_part.added",
                       {{"item_id", item_id_}, {"output_index", 0}, {"content_index", 0},
                        {"part", {{"type", "output_text"}, {"text", ""}, {"annotations", ojson::array()}}}});
    return out;
  }
  if (!chat_) return "";
  return data(chunk_json({{"role", "assistant"}, {"content", ""}}, "", {}, ojson()));
}

std::string CompletionShape::event(const CompletionChunk& chunk) {
  if (chunk.text.empty() && chunk.scores.empty()) return "";
  if (api_ == Api::kResponses) {
    if (chunk.text.empty() && logprobs_ < 0) return "";
    ojson delta = {{"item_id", item_id_}, {"output_index", 0}, {"content_index", 0}, {"delta", chunk.text}};
    if (logprobs_ >= 0) delta["logprobs"] = chat_logprobs(chunk.scores)["content"];
    return typed_event("response.output_text.delta", std::move(delta));
  }
  if (logprobs_ < 0) return text_head_ + dump_ordered(ojson(chunk.text)) + text_tail_;
  return data(chunk_json(chat_ ? ojson{{"content", chunk.text}} : ojson(), chunk.text, chunk.scores, ojson()));
}

std::string CompletionShape::tail(const CompletionResult& result) {
  if (api_ == Api::kResponses) {  // no [DONE]: the last event is response.completed (or .incomplete)
    const ojson finished = response_json(&result);
    const ojson& part = finished["output"][0]["content"][0];
    std::string out = typed_event("response.output_text.done", {{"item_id", item_id_}, {"output_index", 0},
                                                                {"content_index", 0}, {"text", result.text}});
    out += typed_event("response.content_part.done",
                       {{"item_id", item_id_}, {"output_index", 0}, {"content_index", 0}, {"part", part}});
    out += typed_event("response.output_item.done", {{"output_index", 0}, {"item", finished["output"][0]}});
    out += typed_event(finished["status"] == "completed" ? "response.completed" : "response.incomplete",
                       {{"response", finished}});
    return out;
  }
  ojson last = chunk_json(ojson::object(), "", {}, result.finish_reason);
  if (!chat_) last["usage"] = usage(result);  // the legacy stream's last chunk has always carried it
  std::string out = data(last);
  if (chat_ && include_usage_)  // as OpenAI sends it: no choices, the usage
    out += data({{"id", id_}, {"object", "chat.completion.chunk"}, {"created", created_}, {"model", model_},
                 {"seed", seed_}, {"choices", ojson::array()}, {"usage", usage(result)}});
  return out + "data: [DONE]\n\n";
}

std::string CompletionShape::body(const CompletionResult& result) const {
  if (api_ == Api::kResponses) return dump_ordered(response_json(&result));
  ojson choice;
  if (chat_) {
    choice = {{"index", 0}, {"message", {{"role", "assistant"}, {"content", result.text}, {"refusal", nullptr}}},
              {"logprobs", logprobs_ < 0 ? ojson() : chat_logprobs(result.scores)},
              {"finish_reason", result.finish_reason}};
  } else {
    choice = {{"text", result.text}, {"index", 0},
              {"logprobs", logprobs_ < 0 ? ojson() : legacy_logprobs(result.scores)},
              {"finish_reason", result.finish_reason}};
  }
  return dump_ordered({{"id", id_}, {"object", chat_ ? "chat.completion" : "text_completion"}, {"created", created_},
               {"model", model_}, {"seed", seed_}, {"choices", ojson::array({choice})}, {"usage", usage(result)}});
}

}  // namespace potop::serve
