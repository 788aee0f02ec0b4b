#include "serve/completion_shape.h"

#include <ctime>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace potop::serve {

namespace {

// Insertion-ordered, so that top_logprobs run from the likeliest, as OpenAI sends them.
using json = nlohmann::ordered_json;

// Generated text may hold stray bytes (a byte token alone): they become U+FFFD, never an exception.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }
std::string data(const json& j) { return "data: " + dump(j) + "\n\n"; }

json legacy_logprobs(const std::vector<TokenScore>& scores) {
  json tokens = json::array(), token_logprobs = json::array(), top = json::array(), offsets = json::array();
  for (const TokenScore& s : scores) {
    tokens.push_back(s.text);
    token_logprobs.push_back(s.logprob ? json(*s.logprob) : json());
    if (s.logprob) {
      json alternatives = json::object();
      for (const auto& [text, lp] : s.top) alternatives.emplace(text, lp);  // the likelier of equal texts stays
      top.push_back(alternatives);
    } else {
      top.push_back(nullptr);
    }
    offsets.push_back(s.text_offset);
  }
  return {{"tokens", tokens}, {"token_logprobs", token_logprobs}, {"top_logprobs", top}, {"text_offset", offsets}};
}

json utf8_bytes(const std::string& text) {
  json bytes = json::array();
  for (unsigned char c : text) bytes.push_back(int(c));
  return bytes;
}

json chat_logprobs(const std::vector<TokenScore>& scores) {
  json content = json::array();
  for (const TokenScore& s : scores) {
    if (!s.logprob) continue;  // an echoed first token: chat has no echo
    json top = json::array();
    for (const auto& [text, lp] : s.top) top.push_back({{"token", text}, {"logprob", lp}, {"bytes", utf8_bytes(text)}});
    content.push_back({{"token", s.text}, {"logprob", *s.logprob}, {"bytes", utf8_bytes(s.text)}, {"top_logprobs", top}});
  }
  return {{"content", content}};
}

json usage(const CompletionResult& r) {
  return {{"prompt_tokens", r.prompt_tokens}, {"completion_tokens", r.completion_tokens},
          {"total_tokens", r.prompt_tokens + r.completion_tokens}};
}

}  // namespace

CompletionShape::CompletionShape(bool chat, std::string id, std::string model, uint64_t seed, int logprobs,
                                 bool include_usage)
    : chat_(chat),
      id_(std::move(id)),
      model_(std::move(model)),
      seed_(seed),
      logprobs_(logprobs),
      include_usage_(include_usage),
      created_(static_cast<long>(std::time(nullptr))) {
  const std::string event = data(chunk_json(chat_ ? json{{"content", ""}} : json(), "", {}, json()));
  const std::string empty = chat_ ? "\"content\":\"\"" : "\"text\":\"\"";
  const size_t at = event.find(empty);
  POTOP_CHECK(at != std::string::npos, "an event holds its text");
  text_head_ = event.substr(0, at + empty.size() - 2);  // through the key and its colon
  text_tail_ = event.substr(at + empty.size());
}

json CompletionShape::chunk_json(const json& delta, const std::string& text, const std::vector<TokenScore>& scores,
                                 const json& finish_reason) const {
  json choice;
  const json logprobs = logprobs_ < 0 ? json() : chat_ ? chat_logprobs(scores) : legacy_logprobs(scores);
  if (chat_) {
    choice = {{"index", 0}, {"delta", delta}, {"logprobs", logprobs}, {"finish_reason", finish_reason}};
  } else {
    choice = {{"text", text}, {"index", 0}, {"logprobs", logprobs}, {"finish_reason", finish_reason}};
  }
  return {{"id", id_}, {"object", chat_ ? "chat.completion.chunk" : "text_completion"}, {"created", created_},
          {"model", model_}, {"seed", seed_}, {"choices", json::array({choice})}};
}

std::string CompletionShape::head() const {
  if (!chat_) return "";
  return data(chunk_json({{"role", "assistant"}, {"content", ""}}, "", {}, json()));
}

std::string CompletionShape::event(const CompletionChunk& chunk) const {
  if (chunk.text.empty() && chunk.scores.empty()) return "";
  if (logprobs_ < 0) return text_head_ + dump(json(chunk.text)) + text_tail_;
  return data(chunk_json(chat_ ? json{{"content", chunk.text}} : json(), chunk.text, chunk.scores, json()));
}

std::string CompletionShape::tail(const CompletionResult& result) const {
  json last = chunk_json(json::object(), "", {}, result.finish_reason);
  if (!chat_) last["usage"] = usage(result);  // the legacy stream's last chunk has always carried it
  std::string out = data(last);
  if (chat_ && include_usage_)  // as OpenAI sends it: no choices, the usage
    out += data({{"id", id_}, {"object", "chat.completion.chunk"}, {"created", created_}, {"model", model_},
                 {"seed", seed_}, {"choices", json::array()}, {"usage", usage(result)}});
  return out + "data: [DONE]\n\n";
}

std::string CompletionShape::body(const CompletionResult& result) const {
  json choice;
  if (chat_) {
    choice = {{"index", 0}, {"message", {{"role", "assistant"}, {"content", result.text}, {"refusal", nullptr}}},
              {"logprobs", logprobs_ < 0 ? json() : chat_logprobs(result.scores)},
              {"finish_reason", result.finish_reason}};
  } else {
    choice = {{"text", result.text}, {"index", 0},
              {"logprobs", logprobs_ < 0 ? json() : legacy_logprobs(result.scores)},
              {"finish_reason", result.finish_reason}};
  }
  return dump({{"id", id_}, {"object", chat_ ? "chat.completion" : "text_completion"}, {"created", created_},
               {"model", model_}, {"seed", seed_}, {"choices", json::array({choice})}, {"usage", usage(result)}});
}

}  // namespace potop::serve
