#include "serve/chat_request.h"

#include "core/error.h"
#include "core/file_io.h"
#include "serve/api_error.h"
#include "serve/guarded_http_server.h"
#include "tokenizer/special_texts.h"

namespace potop::serve {

namespace {

using nlohmann::json;

constexpr std::string_view kContent = "{content}";

std::string fill(const std::string& pattern, const std::string& content) {
  std::string out;
  size_t at = 0;
  for (size_t next; (next = pattern.find(kContent, at)) != std::string::npos; at = next + kContent.size())
    out += pattern.substr(at, next - at) + content;
  return out + pattern.substr(at);
}

// Checks the messages and hands each to `write` (its role and text).
template <typename Write>
void each_message(const json& messages, std::string& last_user, Write write) {
  if (!messages.is_array() || messages.empty())
    throw ApiError::invalid("messages", "messages must be a non-empty array of {\"role\", \"content\"} objects");
  for (size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      throw ApiError::invalid("messages", where + " must be an object with a string role");
    const std::string role = m["role"].get<std::string>();
    if (role != "system" && role != "developer" && role != "user" && role != "assistant")
      throw ApiError::invalid("messages", where + ".role '" + role + "' is not supported: use system, developer, "
                                                  "user or assistant (tools are not supported)");
    if (m.contains("tool_calls") && !m["tool_calls"].is_null())
      throw ApiError::invalid("messages", where + ": tool calls are not supported");
    if (!m.contains("content") || m["content"].is_null())
      throw ApiError::invalid("messages", where + ".content is required");
    const std::string content = message_text(m["content"], where);
    if (role == "user") last_user = content;
    write(role, content);
  }
}

// Fields OpenAI's chat API defines that a potop model cannot honour.
void refuse_unsupported_chat_fields(const json& body) {
  for (const char* name : {"tools", "functions"})
    if (auto it = body.find(name); it != body.end() && !it->is_null() && !(it->is_array() && it->empty()))
      throw ApiError::invalid(name, std::string(name) + " are not supported: a potop model has no tool calling");
  for (const char* name : {"tool_choice", "function_call"})
    if (auto it = body.find(name); it != body.end() && !it->is_null() && *it != "none" && *it != "auto")
      throw ApiError::invalid(name, std::string(name) + " is not supported: a potop model has no tool calling");
  if (auto it = body.find("response_format"); it != body.end() && !it->is_null()) {
    if (!it->is_object() || it->value("type", "") != "text")
      throw ApiError::invalid("response_format", "response_format must be {\"type\": \"text\"}: JSON modes are not supported");
  }
  if (auto it = body.find("modalities"); it != body.end() && !it->is_null() && *it != json::array({"text"}))
    throw ApiError::invalid("modalities", "only the text modality is supported");
  if (auto it = body.find("audio"); it != body.end() && !it->is_null())
    throw ApiError::invalid("audio", "audio output is not supported");
}

}  // namespace

std::string message_text(const json& content, const std::string& where) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) throw ApiError::invalid("messages", where + ".content must be a string or an array of text parts");
  std::string text;
  for (const json& part : content) {
    if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") || !part["text"].is_string())
      throw ApiError::invalid("messages", where + ".content: only text parts ({\"type\": \"text\", \"text\": ...}) are "
                                                  "supported (images and audio are not)");
    text += part["text"].get<std::string>();
  }
  return text;
}

ChatTemplate chat_template_from_json(const json& j, const std::string& source) {
  if (!j.is_object()) throw Error(source + ": a chat template must be a JSON object");
  ChatTemplate t;
  t.name = "custom";
  for (const auto& [key, value] : j.items()) {
    std::string* field = key == "system"       ? &t.system
                         : key == "user"       ? &t.user
                         : key == "assistant"  ? &t.assistant
                         : key == "generation" ? &t.generation
                         : key == "name"       ? &t.name
                                               : nullptr;
    if (key == "stop") {
      if (!value.is_array()) throw Error(source + ": \"stop\" must be an array of strings");
      for (const json& s : value) {
        if (!s.is_string() || s.get<std::string>().empty()) throw Error(source + ": \"stop\" must hold non-empty strings");
        t.stop.push_back(s.get<std::string>());
      }
      continue;
    }
    if (!field)
      throw Error(source + ": unknown chat template field \"" + key +
                  "\" (the fields: system, user, assistant, generation, stop, name)");
    if (!value.is_string()) throw Error(source + ": \"" + key + "\" must be a string");
    *field = value.get<std::string>();
    if (key != "generation" && key != "name" && field->find(kContent) == std::string::npos)
      throw Error(source + ": \"" + key + "\" must hold {content}, where the message goes");
  }
  return t;
}

nlohmann::ordered_json special_token_texts(const Tokenizer& tokenizer) {
  const SpecialTokens s = tokenizer.specials();
  nlohmann::ordered_json texts = nlohmann::ordered_json::object();
  for (const auto& [name, id] : {std::pair{"bos_token", s.bos}, {"eos_token", s.eos}, {"unk_token", s.unk}, {"pad_token", s.pad}})
    if (id >= 0) texts[name] = special_text(tokenizer, id);
  return texts;
}

ChatTemplate jinja_chat_template(const std::string& text, const std::string& source) {
  ChatTemplate t;
  try {
    t.jinja = std::make_shared<const jinja::Template>(text);
  } catch (const jinja::TemplateError& e) {
    throw jinja::TemplateError(e.kind, source + ": " + e.what());
  }
  t.name = "jinja";
  return t;
}

ChatTemplate chat_template_from_file(const std::string& path) {
  if (path.ends_with(".json")) return chat_template_from_json(read_json_file(path), "--chat-template " + path);
  return jinja_chat_template(read_file(path), "--chat-template " + path);
}

ChatTemplate model_chat_template(const json& files, const nlohmann::ordered_json& special_texts, std::string* fallback) {
  if (!files.is_object() || !files.contains("chat_template")) return ChatTemplate{};
  const json& source = files["chat_template"];
  if (source.is_string()) {
    try {
      ChatTemplate t = jinja_chat_template(source.get<std::string>(), "config.json: chat_template");
      t.name = "the model's (jinja)";
      t.variables = special_texts;
      return t;
    } catch (const jinja::TemplateError& e) {
      if (fallback) *fallback = e.what();
      return ChatTemplate{};
    }
  }
  ChatTemplate t = chat_template_from_json(source, "config.json: chat_template");
  if (t.name == "custom") t.name = "the model's";
  return t;
}

namespace {
thread_local std::string current_client;
}  // namespace

void set_request_client(const std::string& client) { current_client = client; }
const std::string& request_client() { return current_client; }

jinja::RenderBudget& chat_render_budget() {
  static jinja::RenderBudget budget(kChatRenderBudget, std::chrono::milliseconds(1000));
  return budget;
}

std::string render_chat(const ChatTemplate& t, const json& messages, std::string& last_user, bool add_generation_prompt) {
  if (!t.jinja) {
    std::string text;
    each_message(messages, last_user, [&](const std::string& role, const std::string& content) {
      const std::string& pattern = role == "system" || role == "developer" ? t.system : role == "user" ? t.user : t.assistant;
      text += fill(pattern, content);
    });
    return add_generation_prompt ? text + t.generation : text;
  }
  // Hugging Face's templates know system, user and assistant; OpenAI's developer role is its system.
  // Each message as {"role", "content"}, in that order (a template's tojson prints them so).
  nlohmann::ordered_json conversation = nlohmann::ordered_json::array();
  each_message(messages, last_user, [&](const std::string& role, const std::string& content) {
    nlohmann::ordered_json m;
    m["role"] = role == "developer" ? "system" : role;
    m["content"] = content;
    conversation.push_back(std::move(m));
  });
  nlohmann::ordered_json context = t.variables;
  context["messages"] = std::move(conversation);
  context["add_generation_prompt"] = add_generation_prompt;
  // Every chat's rendering draws on one budget (a hostile template in a model took 90 MB a
  // request, and 32 requests at once 3 GB): past it a request is refused as a full queue is.
  // Its turn (one rendering at a time, one per client: render_budget.h).
  jinja::RenderBudget& budget = chat_render_budget();
  switch (budget.begin(request_client())) {
    case jinja::RenderBudget::Turn::kGot: break;
    case jinja::RenderBudget::Turn::kStopped: throw ApiError(503, "server_busy", "", "the server is stopping");
    case jinja::RenderBudget::Turn::kClientHasOne:
      throw ApiError(503, "server_busy", "",
                     "this client's chat template is being rendered for another request: one at a time per client; "
                     "retry shortly");
    case jinja::RenderBudget::Turn::kWaitedTooLong:
      throw ApiError(503, "server_busy", "",
                     "chat templates render one at a time, and no turn came within " +
                         std::to_string(budget.wait().count()) + " ms; retry shortly");
  }
  // What it built was freed in this request thread's arena, where glibc keeps it: the server's
  // loop hands it back to the system (a hostile template's 32 MiB, again and again).
  size_t built = 0;
  struct Done {
    jinja::RenderBudget& budget;
    const size_t& bytes;
    ~Done() {
      budget.end();
      note_memory_freed(bytes);
    }
  } done{budget, built};
  try {
    return t.jinja->render(context, &budget, &built);
  } catch (const jinja::TemplateError& e) {
    if (e.kind == jinja::TemplateError::Kind::kBusy) throw ApiError(503, "server_busy", "", e.what());
    throw ApiError::invalid("messages", std::string("the model's chat template: ") + e.what());
  }
}

ChatRequest parse_chat_request(std::string_view text, const Limits& limits, const ChatTemplate& chat_template) {
  return chat_request_from_json(parse_request_json(text), limits, chat_template);
}

ChatRequest chat_request_from_json(const json& body, const Limits& limits, const ChatTemplate& chat_template) {
  refuse_unsupported_chat_fields(body);
  if (!body.contains("messages")) throw ApiError::invalid("messages", "messages is required");

  // The chat fields become /v1/completions' and that parser checks them all.
  json completion = json::object();
  for (const char* name : {"temperature", "top_p", "top_k", "min_p", "repeat_penalty", "presence_penalty",
                           "repeat_last_n", "frequency_penalty", "logit_bias", "stop", "seed", "stream", "n"})
    if (auto it = body.find(name); it != body.end()) completion[name] = *it;
  if (auto it = body.find("max_completion_tokens"); it != body.end() && !it->is_null()) completion["max_tokens"] = *it;
  else if (auto legacy = body.find("max_tokens"); legacy != body.end()) completion["max_tokens"] = *legacy;

  const json logprobs = body.value("logprobs", json());
  const json top = body.value("top_logprobs", json());
  if (!logprobs.is_null() && !logprobs.is_boolean()) throw ApiError::invalid("logprobs", "logprobs must be true or false");
  if (logprobs == true) completion["logprobs"] = top.is_null() ? json(0) : top;
  else if (!top.is_null()) throw ApiError::invalid("top_logprobs", "top_logprobs needs logprobs: true");

  ChatRequest r;
  const std::string prompt = render_chat(chat_template, body["messages"], r.last_user);
  completion["prompt"] = prompt;
  try {
    r.completion = completion_request_from_json(completion, limits);
  } catch (const ApiError& e) {  // named as the chat API names them
    if (e.param == "max_tokens" && body.contains("max_completion_tokens"))
      throw ApiError::invalid("max_completion_tokens", std::string(e.what()).replace(0, 10, "max_completion_tokens"));
    if (e.param == "logprobs" && body.contains("top_logprobs"))
      throw ApiError::invalid("top_logprobs", std::string(e.what()).replace(0, 8, "top_logprobs"));
    throw;
  }
  r.completion.special_texts = chat_template.jinja != nullptr;
  for (const std::string& s : chat_template.stop)
    if (r.completion.stop.size() < 16) r.completion.stop.push_back(s);

  if (auto it = body.find("stream_options"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) throw ApiError::invalid("stream_options", "stream_options must be an object");
    if (!r.completion.stream) throw ApiError::invalid("stream_options", "stream_options is only allowed with stream: true");
    if (auto usage = it->find("include_usage"); usage != it->end() && !usage->is_null()) {
      if (!usage->is_boolean()) throw ApiError::invalid("stream_options", "stream_options.include_usage must be true or false");
      r.include_usage = usage->get<bool>();
    }
  }
  return r;
}

ChatRequest parse_responses_request(std::string_view text, const Limits& limits, const ChatTemplate& chat_template) {
  return responses_request_from_json(parse_request_json(text), limits, chat_template);
}

ChatRequest responses_request_from_json(const json& body, const Limits& limits, const ChatTemplate& chat_template) {
  if (auto it = body.find("tools"); it != body.end() && !it->is_null() && !(it->is_array() && it->empty()))
    throw ApiError::invalid("tools", "tools are not supported: a potop model has no tool calling");
  if (auto format = body.find("text"); format != body.end() && format->is_object() && format->contains("format") &&
                                       (*format)["format"].value("type", "text") != "text")
    throw ApiError::invalid("text", "text.format must be {\"type\": \"text\"}: JSON modes are not supported");
  if (auto it = body.find("previous_response_id"); it != body.end() && !it->is_null())
    throw ApiError::invalid("previous_response_id", "previous_response_id is not supported: the server keeps no "
                                                    "responses; send the whole conversation as input");
  if (!body.contains("input")) throw ApiError::invalid("input", "input is required: a string or a list of messages");

  json messages = json::array();
  if (auto it = body.find("instructions"); it != body.end() && !it->is_null()) {
    if (!it->is_string()) throw ApiError::invalid("instructions", "instructions must be a string");
    messages.push_back({{"role", "system"}, {"content", *it}});
  }
  const json& input = body["input"];
  if (input.is_string()) {
    messages.push_back({{"role", "user"}, {"content", input}});
  } else if (input.is_array() && !input.empty()) {
    for (size_t i = 0; i < input.size(); ++i) {
      const json& item = input[i];
      const std::string where = "input[" + std::to_string(i) + "]";
      if (!item.is_object() || item.value("type", "message") != "message" || !item.contains("role"))
        throw ApiError::invalid("input", where + " must be a message {\"role\", \"content\"} (tool calls and other "
                                                 "items are not supported)");
      json content = item.value("content", json());
      if (content.is_array()) {  // input_text and output_text parts become the chat's text parts
        json parts = json::array();
        for (const json& part : content) {
          const std::string type = part.is_object() ? part.value("type", "") : "";
          if ((type != "input_text" && type != "output_text") || !part.contains("text"))
            throw ApiError::invalid("input", where + ".content: only input_text and output_text parts are supported "
                                                     "(images, files and audio are not)");
          parts.push_back({{"type", "text"}, {"text", part["text"]}});
        }
        content = parts;
      }
      messages.push_back({{"role", item["role"]}, {"content", content}});
    }
  } else {
    throw ApiError::invalid("input", "input must be a string or a non-empty list of messages");
  }

  json chat = {{"messages", messages}};
  // The Responses API's log-probabilities: asked for by name in include, each token's alternatives
  // by top_logprobs; anything else include names is not something this server has.
  if (auto it = body.find("include"); it != body.end() && !it->is_null()) {
    if (!it->is_array()) throw ApiError::invalid("include", "include must be a list of strings");
    for (const json& item : *it) {
      if (item != "message.output_text.logprobs")
        throw ApiError::invalid("include", "include: " + item.dump() + " is not supported (the only one served is "
                                           "\"message.output_text.logprobs\")");
      chat["logprobs"] = true;
    }
  }
  if (auto it = body.find("top_logprobs"); it != body.end() && !it->is_null()) {
    if (!chat.contains("logprobs"))
      throw ApiError::invalid("top_logprobs", "top_logprobs needs include: [\"message.output_text.logprobs\"]");
    chat["top_logprobs"] = *it;
  }
  for (const char* name : {"temperature", "top_p", "top_k", "min_p", "repeat_penalty", "presence_penalty",
                           "repeat_last_n", "frequency_penalty", "seed", "stream"})
    if (auto it = body.find(name); it != body.end()) chat[name] = *it;
  if (auto it = body.find("max_output_tokens"); it != body.end()) chat["max_completion_tokens"] = *it;
  try {
    return chat_request_from_json(chat, limits, chat_template);
  } catch (const ApiError& e) {  // named as the Responses API names them
    std::string message = e.what();
    if (e.param == "max_completion_tokens") {
      message.replace(0, std::string("max_completion_tokens").size(), "max_output_tokens");
      throw ApiError::invalid("max_output_tokens", message);
    }
    if (e.param == "messages") {
      for (size_t at; (at = message.find("messages[")) != std::string::npos;) message.replace(at, 8, "input");
      throw ApiError::invalid("input", message);
    }
    throw;
  }
}

}  // namespace potop::serve
