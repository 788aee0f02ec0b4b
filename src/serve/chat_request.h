// POST /v1/chat/completions: the request body, parsed and checked, and the chat template that
// turns its messages into the text a language model continues.
//
// A template says how each role's message is written and what begins the assistant's turn:
//   {"system": "{content}\n\n", "user": "{content}\n", "assistant": "{content}\n",
//    "generation": "", "stop": []}
// ("{content}" is replaced by the message's text). That is the default, "plain", for base
// models trained on running text: the conversation is the text so far, and the model continues
// it. A model directory may carry its own in config.json's "chat_template": that JSON form, or
// a Hugging Face chat template (Jinja source, as `potop import` copies it from
// tokenizer_config.json), rendered as @huggingface/jinja renders it (generate/jinja/template.h).
// `potop serve --chat-template FILE` (a .json of the JSON form, or a Jinja file) overrides both
// (docs/serve.md).
//
// The request's fields are OpenAI's: messages (role system, developer, user or assistant; content
// a string or an array of text parts), max_completion_tokens (or max_tokens), temperature, top_p,
// stop, seed, logprobs (true/false) and top_logprobs, stream and stream_options.include_usage,
// plus the sampling fields /v1/completions takes (top_k, min_p, repeat_penalty, ...). Tools,
// function calls, images and response formats other than text are refused with a 400.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <memory>
#include <nlohmann/json.hpp>

#include "generate/jinja/template.h"
#include "serve/completion_request.h"
#include "serve/limits.h"
#include "tokenizer/tokenizer.h"

namespace potop::serve {

struct ChatTemplate {
  std::string system = "{content}\n\n", user = "{content}\n", assistant = "{content}\n";
  std::string generation;          // written after the last message: the assistant's turn begins
  std::vector<std::string> stop;   // where the assistant's turn ends (added to the request's stop)
  std::string name = "plain";      // what /v1/models reports
  // A Jinja template writes the whole conversation (the fields above are then unused), given the
  // messages, add_generation_prompt and `variables` (bos_token, eos_token, ... as Hugging Face
  // passes the tokenizer's special tokens).
  std::shared_ptr<const jinja::Template> jinja;
  nlohmann::ordered_json variables = nlohmann::ordered_json::object();
};

// A template from its JSON (fields absent keep the plain template's); `source` names the file or
// config for errors (potop::Error).
ChatTemplate chat_template_from_json(const nlohmann::json& j, const std::string& source);

// The texts of a tokenizer's special tokens as Hugging Face hands them to a chat template:
// {"bos_token": "<|im_start|>", "eos_token": ..., "unk_token": ..., "pad_token": ...}, those it has.
nlohmann::ordered_json special_token_texts(const Tokenizer& tokenizer);

// A Jinja template from its source; `source` names it for errors (TemplateError).
ChatTemplate jinja_chat_template(const std::string& text, const std::string& source);
// `potop serve --chat-template FILE`: a .json file holds the JSON form, any other a Jinja template.
ChatTemplate chat_template_from_file(const std::string& path);

// The template a model directory carries (config.json's "chat_template", `files` being config.json
// as a whole), else the plain one. `special_texts` (bos_token, eos_token, ...) become a Jinja
// template's variables. A Jinja template potop cannot parse gives the plain template, and
// `fallback` (when given) says why; every other mistake throws potop::Error.
ChatTemplate model_chat_template(const nlohmann::json& files,
                                 const nlohmann::ordered_json& special_texts = nlohmann::ordered_json::object(),
                                 std::string* fallback = nullptr);

// The prompt a conversation becomes: messages checked as the chat API takes them (400s naming
// the message), then rendered; a Jinja template that raises or fails is a 400 too. Every Jinja
// rendering of the process shares one budget (generate/jinja/render_budget.h): one at a time and
// one per client, each waiting 1 s at most for its turn, kChatRenderBudget bytes; a request that
// finds no turn or the bytes taken is a 503, as a full queue is. The server stops it when it stops.
inline constexpr size_t kChatRenderBudget = 64u << 20;
jinja::RenderBudget& chat_render_budget();
// The address of the request this thread answers (set as it arrives, server.cpp): the client
// whose rendering waits or runs ("": none, as in a test).
void set_request_client(const std::string& client);
const std::string& request_client();
std::string render_chat(const ChatTemplate& t, const nlohmann::json& messages, std::string& last_user,
                        bool add_generation_prompt = true);

struct ChatRequest {
  CompletionRequest completion;  // prompt: the rendered conversation; logprobs: top_logprobs or -1
  bool include_usage = false;    // stream_options.include_usage: a last chunk with the usage
  std::string last_user;         // the last user message's text (what a translation model translates)
};

// A message's text: its content, a string or an array of text parts joined; anything else is a
// 400 naming `where` ("messages[2]").
std::string message_text(const nlohmann::json& content, const std::string& where);

// Parses a request body. Throws ApiError (400) naming the field for every mistake.
ChatRequest parse_chat_request(std::string_view body, const Limits& limits, const ChatTemplate& chat_template);
// The same for a body already parsed (an object).
ChatRequest chat_request_from_json(const nlohmann::json& body, const Limits& limits, const ChatTemplate& chat_template);

// POST /v1/responses (OpenAI's Responses API, the Vercel AI SDK's default): "input" (a string, or
// messages whose content is a string or input_text/output_text parts), "instructions" (a system
// message), "max_output_tokens", and the chat's sampling fields, read as the chat request they
// amount to. Tools, non-text inputs and formats other than text are refused with a 400.
ChatRequest parse_responses_request(std::string_view body, const Limits& limits, const ChatTemplate& chat_template);
ChatRequest responses_request_from_json(const nlohmann::json& body, const Limits& limits,
                                        const ChatTemplate& chat_template);

}  // namespace potop::serve
