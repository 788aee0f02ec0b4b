// POST /v1/chat/completions: messages rendered through a chat template (the plain default, a
// model's, a custom one), the chat fields mapped onto a completion's, and every mistake a 400
// naming the field; a bad template is an Error naming its source.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "serve/api_error.h"
#include "serve/chat_request.h"

namespace potop::serve {
namespace {

using nlohmann::json;

ChatRequest parse(const std::string& body, const ChatTemplate& t = ChatTemplate{}) {
  return parse_chat_request(body, Limits{}, t);
}

void expect_refused(const std::string& body, const std::string& param, const std::string& needle) {
  try {
    parse(body);
    ADD_FAILURE() << "accepted: " << body;
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400) << body;
    EXPECT_EQ(e.param, param) << body << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << body << ": " << e.what();
  }
}

TEST(ChatRequest, PlainTemplateIsTheConversationAsText) {
  const ChatRequest r = parse(R"({"messages": [{"role": "system", "content": "Be brief."},
      {"role": "user", "content": "Pan Kmicic"}, {"role": "assistant", "content": "ruszył"},
      {"role": "developer", "content": [{"type": "text", "text": "a "}, {"type": "text", "text": "b"}]},
      {"role": "user", "content": "z kopyta"}]})");
  EXPECT_EQ(r.completion.prompt, "Be brief.\n\nPan Kmicic\nruszył\na b\n\nz kopyta\n");
  EXPECT_TRUE(r.completion.stop.empty());
  EXPECT_EQ(r.completion.logprobs, -1);
  EXPECT_FALSE(r.completion.echo);
}

TEST(ChatRequest, CustomTemplateRendersRolesAndAddsItsStops) {
  const ChatTemplate t = chat_template_from_json(
      json::parse(R"({"user": "User: {content}\n", "assistant": "Assistant: {content}\n", "generation": "Assistant:",
                      "stop": ["\nUser:"], "name": "dialogue"})"),
      "test");
  EXPECT_EQ(t.name, "dialogue");
  const ChatRequest r = parse(R"({"messages": [{"role": "user", "content": "hi {content}"}], "stop": "x"})", t);
  EXPECT_EQ(r.completion.prompt, "User: hi {content}\nAssistant:");  // a message's own braces stay
  EXPECT_EQ(r.completion.stop, (std::vector<std::string>{"x", "\nUser:"}));
}

TEST(ChatRequest, ModelTemplateFromConfigJson) {
  EXPECT_EQ(model_chat_template(json::object()).name, "plain");
  const ChatTemplate t = model_chat_template(json::parse(R"({"chat_template": {"user": "Q: {content}\n"}})"));
  EXPECT_EQ(t.name, "the model's");
  EXPECT_EQ(t.user, "Q: {content}\n");
  EXPECT_EQ(t.system, ChatTemplate{}.system);  // fields absent keep the plain template's
}

TEST(ChatRequest, BadTemplatesNameTheirSource) {
  auto message = [](const std::string& text) {
    try {
      chat_template_from_json(json::parse(text), "tmpl.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message(R"([1])").find("tmpl.json: a chat template must be a JSON object"), std::string::npos);
  EXPECT_NE(message(R"({"user": "no placeholder"})").find("\"user\" must hold {content}"), std::string::npos);
  EXPECT_NE(message(R"({"usr": "{content}"})").find("unknown chat template field \"usr\""), std::string::npos);
  EXPECT_NE(message(R"({"stop": "x"})").find("\"stop\" must be an array"), std::string::npos);
  EXPECT_NE(message(R"({"user": 3})").find("\"user\" must be a string"), std::string::npos);
}

TEST(ChatRequest, ChatFieldsBecomeACompletions) {
  const ChatRequest r = parse(R"({"messages": [{"role": "user", "content": "a"}], "max_completion_tokens": 7,
      "max_tokens": 99, "temperature": 0.5, "top_p": 0.9, "seed": 3, "logprobs": true, "top_logprobs": 4,
      "stream": true, "stream_options": {"include_usage": true}, "model": "m", "user": "u", "n": 1})");
  EXPECT_EQ(r.completion.max_tokens, 7);  // max_completion_tokens wins over the deprecated max_tokens
  EXPECT_FLOAT_EQ(r.completion.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(r.completion.sampling.top_p, 0.9f);
  EXPECT_EQ(r.completion.seed.value(), 3u);
  EXPECT_EQ(r.completion.logprobs, 4);
  EXPECT_TRUE(r.completion.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(parse(R"({"messages": [{"role": "user", "content": "a"}], "max_tokens": 9})").completion.max_tokens, 9);
  EXPECT_EQ(parse(R"({"messages": [{"role": "user", "content": "a"}], "logprobs": true})").completion.logprobs, 0);
}

TEST(ChatRequest, MistakesNameTheField) {
  expect_refused(R"({"messages": "hi"})", "messages", "non-empty array");
  expect_refused(R"({"model": "m"})", "messages", "messages is required");
  expect_refused(R"({"messages": [{"content": "a"}]})", "messages", "messages[0] must be an object with a string role");
  expect_refused(R"({"messages": [{"role": "user"}]})", "messages", "messages[0].content is required");
  expect_refused(R"({"messages": [{"role": "user", "content": 3}]})", "messages", "must be a string or an array");
  expect_refused(R"({"messages": [{"role": "function", "content": "a"}]})", "messages", "role 'function' is not supported");
  expect_refused(R"({"messages": [{"role": "assistant", "content": "a", "tool_calls": [{}]}]})", "messages",
                 "tool calls are not supported");
  const std::string m = R"("messages": [{"role": "user", "content": "a"}])";
  expect_refused("{" + m + R"(, "tools": [{"type": "function"}]})", "tools", "not supported");
  expect_refused("{" + m + R"(, "tool_choice": "required"})", "tool_choice", "not supported");
  expect_refused("{" + m + R"(, "response_format": {"type": "json_schema"}})", "response_format", "not supported");
  expect_refused("{" + m + R"(, "logprobs": 3})", "logprobs", "true or false");
  expect_refused("{" + m + R"(, "top_logprobs": 3})", "top_logprobs", "needs logprobs: true");
  expect_refused("{" + m + R"(, "logprobs": true, "top_logprobs": 21})", "top_logprobs", "top_logprobs must be between 0 and 20");
  expect_refused("{" + m + R"(, "max_completion_tokens": -1})", "max_completion_tokens", "max_completion_tokens must be between");
  expect_refused("{" + m + R"(, "stream_options": {"include_usage": true}})", "stream_options", "only allowed with stream");
  expect_refused("{" + m + R"(, "stream": true, "stream_options": {"include_usage": 1}})", "stream_options", "true or false");
  expect_refused("{" + m + R"(, "n": 2})", "n", "must be 1");
  expect_refused("{" + m + R"(, "seed": 1e400})", "", "not valid JSON");
  expect_refused(R"([1])", "", "JSON object");
  // Tool fields that ask for nothing are accepted, as clients send them by default.
  EXPECT_NO_THROW(parse("{" + m + R"(, "tools": [], "tool_choice": "auto", "response_format": {"type": "text"}})"));
}

TEST(ResponsesRequest, InputAndInstructionsAreTheChatsMessages) {
  const ChatRequest r = parse_responses_request(
      R"({"instructions": "Be brief.", "input": [{"role": "user", "content": [{"type": "input_text", "text": "a"}]},
          {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "b"}]},
          {"role": "user", "content": "c"}], "max_output_tokens": 9, "temperature": 0.5, "stream": true,
          "store": false, "include": []})",
      Limits{}, ChatTemplate{});
  EXPECT_EQ(r.completion.prompt, "Be brief.\n\na\nb\nc\n");
  EXPECT_EQ(r.last_user, "c");
  EXPECT_EQ(r.completion.max_tokens, 9);
  EXPECT_FLOAT_EQ(r.completion.sampling.temperature, 0.5f);
  EXPECT_TRUE(r.completion.stream);
  EXPECT_EQ(parse_responses_request(R"({"input": "hi"})", Limits{}, ChatTemplate{}).completion.prompt, "hi\n");
  EXPECT_EQ(r.completion.logprobs, -1);
}

TEST(ResponsesRequest, LogprobsAreServedWhenIncludeAsksForThem) {
  const auto logprobs = [](const std::string& body) {
    return parse_responses_request(body, Limits{}, ChatTemplate{}).completion.logprobs;
  };
  EXPECT_EQ(logprobs(R"({"input": "a", "include": ["message.output_text.logprobs"]})"), 0);
  EXPECT_EQ(logprobs(R"({"input": "a", "include": ["message.output_text.logprobs"], "top_logprobs": 3})"), 3);
  EXPECT_EQ(logprobs(R"({"input": "a", "include": null})"), -1);
}

TEST(ResponsesRequest, MistakesNameTheResponsesFields) {
  auto refused = [](const std::string& body, const std::string& param, const std::string& needle) {
    try {
      parse_responses_request(body, Limits{}, ChatTemplate{});
      ADD_FAILURE() << "accepted: " << body;
    } catch (const ApiError& e) {
      EXPECT_EQ(e.param, param) << body << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << body << ": " << e.what();
    }
  };
  refused(R"({"model": "m"})", "input", "input is required");
  refused(R"({"input": []})", "input", "non-empty list");
  refused(R"({"input": [{"type": "function_call_output", "output": "x"}]})", "input", "must be a message");
  refused(R"({"input": [{"role": "user", "content": [{"type": "input_image"}]}]})", "input", "only input_text");
  refused(R"({"input": [{"role": "tool", "content": "x"}]})", "input", "input[0].role 'tool' is not supported");
  refused(R"({"input": "a", "max_output_tokens": -1})", "max_output_tokens", "max_output_tokens must be between");
  refused(R"({"input": "a", "tools": [{"type": "web_search"}]})", "tools", "not supported");
  refused(R"({"input": "a", "text": {"format": {"type": "json_schema"}}})", "text", "JSON modes");
  refused(R"({"input": "a", "instructions": 3})", "instructions", "must be a string");
  refused(R"({"input": "a", "previous_response_id": "resp_1"})", "previous_response_id", "keeps no responses");
  refused(R"({"input": "a", "temperature": 1e999})", "", "valid JSON");
  refused(R"({"input": "a", "include": ["reasoning.encrypted_content"]})", "include", "is not supported");
  refused(R"({"input": "a", "include": "message.output_text.logprobs"})", "include", "a list of strings");
  refused(R"({"input": "a", "top_logprobs": 2})", "top_logprobs", "needs include");
  refused(R"({"input": "a", "include": ["message.output_text.logprobs"], "top_logprobs": 99})", "top_logprobs", "");
}

}  // namespace
}  // namespace potop::serve

namespace potop::serve {
namespace {

// A model's Jinja template (Hugging Face's chat_template): the whole conversation is its output,
// with the tokenizer's special texts as variables, and the prompt's special texts read as tokens.
const char* kChatML =
    "{% for m in messages %}{{ bos_token + m.role + '\\n' + m.content | trim + eos_token + '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ bos_token + 'assistant\\n' }}{% endif %}";

TEST(ChatRequest, JinjaTemplateWritesTheWholeConversation) {
  json files = {{"chat_template", kChatML}};
  nlohmann::ordered_json specials = {{"bos_token", "<|im_start|>"}, {"eos_token", "<|im_end|>"}};
  const ChatTemplate t = model_chat_template(files, specials);
  ASSERT_TRUE(t.jinja);
  const ChatRequest r = parse(R"({"messages": [{"role": "developer", "content": "Bądź zwięzły."},
      {"role": "user", "content": " Pan Kmicic "}]})", t);
  EXPECT_EQ(r.completion.prompt, "<|im_start|>system\nBądź zwięzły.<|im_end|>\n<|im_start|>user\nPan Kmicic<|im_end|>\n"
                                 "<|im_start|>assistant\n");
  EXPECT_TRUE(r.completion.special_texts);
  EXPECT_EQ(r.last_user, " Pan Kmicic ");
  EXPECT_FALSE(parse(R"({"messages": [{"role": "user", "content": "x"}]})").completion.special_texts);
}

TEST(ChatRequest, JinjaTemplateThatRaisesIsThatRequests400) {
  json files = {{"chat_template", "{% if messages[0].role != 'user' %}{{ raise_exception('Conversation roles must "
                                  "alternate user/assistant/user/assistant/...') }}{% endif %}{{ messages[0].content }}"}};
  const ChatTemplate t = model_chat_template(files);
  try {
    parse(R"({"messages": [{"role": "assistant", "content": "x"}]})", t);
    ADD_FAILURE() << "accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, "messages");
    EXPECT_NE(std::string(e.what()).find("Conversation roles must alternate"), std::string::npos) << e.what();
  }
  EXPECT_EQ(parse(R"({"messages": [{"role": "user", "content": "ok"}]})", t).completion.prompt, "ok");
}

TEST(ChatRequest, JinjaTemplatePotopCannotParseFallsBackToPlainAndSaysWhy) {
  for (const std::string bad : {"{% for m in messages %}{{ m.content }}", "{% include 'other.jinja' %}",
                                "{{ messages | tojson(sort_keys=true) }}"}) {
    json files = {{"chat_template", bad}};
    std::string why;
    const ChatTemplate t = model_chat_template(files, nlohmann::ordered_json::object(), &why);
    if (bad.find("sort_keys") != std::string::npos) {  // parses; refused when rendered
      ASSERT_TRUE(t.jinja) << bad;
      try {
        parse(R"({"messages": [{"role": "user", "content": "x"}]})", t);
        ADD_FAILURE() << "rendered: " << bad;
      } catch (const ApiError& e) {
        EXPECT_NE(std::string(e.what()).find("not supported"), std::string::npos) << e.what();
      }
      continue;
    }
    EXPECT_FALSE(t.jinja) << bad;
    EXPECT_EQ(t.name, "plain") << bad;
    EXPECT_NE(why.find("config.json: chat_template"), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace potop::serve
