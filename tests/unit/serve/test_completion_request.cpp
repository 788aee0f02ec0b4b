// Request validation of POST /v1/completions: every client mistake is an ApiError (4xx) that
// names the field, and every valid field lands where it belongs.
#include <gtest/gtest.h>

#include <string>

#include "serve/api_error.h"
#include "serve/completion_request.h"

namespace potop::serve::test_completion_request {
namespace {

// The ApiError a body earns: its status and param, and a message that holds `needle`.
void expect_refused(const std::string& body, const std::string& param, const std::string& needle, int status = 400) {
  try {
    parse_completion_request(body, Limits{});
    ADD_FAILURE() << "accepted: " << body;
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, status) << body;
    EXPECT_EQ(e.param, param) << body << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << body << ": " << e.what();
    const auto json = e.body();
    EXPECT_TRUE(json["error"]["message"].is_string());
    EXPECT_TRUE(json["error"]["type"].is_string());
  }
}

TEST(CompletionRequest, ReadsEveryField) {
  const auto r = parse_completion_request(
      R"({"prompt":"Litwo","max_tokens":7,"temperature":0.5,"top_k":3,"top_p":0.9,"min_p":0.05,
          "repeat_penalty":1.1,"presence_penalty":0.2,"repeat_last_n":8,"stop":["\n","ab"],"seed":42,
          "logprobs":2,"echo":true,"stream":true,"model":"ignored","user":"x"})",
      Limits{});
  EXPECT_EQ(r.prompt, "Litwo");
  EXPECT_EQ(r.max_tokens, 7);
  EXPECT_FLOAT_EQ(r.sampling.temperature, 0.5f);
  EXPECT_EQ(r.sampling.top_k, 3);
  EXPECT_FLOAT_EQ(r.sampling.top_p, 0.9f);
  EXPECT_FLOAT_EQ(r.sampling.min_p, 0.05f);
  EXPECT_FLOAT_EQ(r.sampling.repeat_penalty, 1.1f);
  EXPECT_FLOAT_EQ(r.sampling.presence_penalty, 0.2f);
  EXPECT_EQ(r.sampling.repeat_last_n, 8);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"\n", "ab"}));
  ASSERT_TRUE(r.seed.has_value());
  EXPECT_EQ(*r.seed, 42u);
  EXPECT_EQ(r.logprobs, 2);
  EXPECT_TRUE(r.echo);
  EXPECT_TRUE(r.stream);
}

TEST(CompletionRequest, DefaultsAndAliases) {
  Limits limits;
  limits.default_max_tokens = 9;
  auto r = parse_completion_request(R"({"prompt":"a"})", limits);
  EXPECT_EQ(r.max_tokens, 9);
  EXPECT_FALSE(r.seed.has_value());
  EXPECT_EQ(r.logprobs, -1);
  EXPECT_FALSE(r.echo || r.stream);
  EXPECT_TRUE(r.stop.empty());
  EXPECT_EQ(parse_completion_request(R"({"prompt":"a","n_predict":5})", limits).max_tokens, 5);
  EXPECT_EQ(parse_completion_request(R"({"prompt":"a","stop":"xy"})", limits).stop, std::vector<std::string>{"xy"});
  EXPECT_EQ(parse_completion_request(R"({"prompt":["one"]})", limits).prompt, "one");
  // null means "the default", as OpenAI's clients send it
  EXPECT_EQ(parse_completion_request(R"({"prompt":"a","temperature":null,"stop":null})", limits).stop.size(), 0u);
  EXPECT_FALSE(parse_completion_request(R"({"prompt":"a","seed":-1})", limits).seed.has_value());  // random
  EXPECT_EQ(parse_completion_request(R"({"prompt":"a","seed":9007199254740991})", limits).seed.value(), 9007199254740991u);
}

TEST(CompletionRequest, MalformedJson) {
  expect_refused("{\"prompt\": ", "", "not valid JSON");
  expect_refused("", "", "not valid JSON");
  expect_refused("[1, 2]", "", "must be a JSON object");
  expect_refused("\"text\"", "", "must be a JSON object");
}

TEST(CompletionRequest, WrongTypes) {
  expect_refused(R"({})", "prompt", "required");
  expect_refused(R"({"prompt":5})", "prompt", "must be a string");
  expect_refused(R"({"prompt":["a","b"]})", "prompt", "batches");
  expect_refused(R"({"prompt":"a","max_tokens":"5"})", "max_tokens", "must be an integer (got a string)");
  expect_refused(R"({"prompt":"a","max_tokens":2.5})", "max_tokens", "must be an integer");
  expect_refused(R"({"prompt":"a","temperature":"hot"})", "temperature", "must be a number");
  expect_refused(R"({"prompt":"a","top_k":1.5})", "top_k", "must be an integer");
  expect_refused(R"({"prompt":"a","stop":5})", "stop", "string or an array");
  expect_refused(R"({"prompt":"a","stop":["a",1]})", "stop", "an element is an integer");
  expect_refused(R"({"prompt":"a","seed":"1"})", "seed", "must be an integer");
  expect_refused(R"({"prompt":"a","seed":1.5})", "seed", "must be an integer");
  expect_refused(R"({"prompt":"a","seed":-3})", "seed", "between -1 and 9007199254740991");
  expect_refused(R"({"prompt":"a","seed":9007199254740992})", "seed", "between -1 and 9007199254740991");
  expect_refused(R"({"prompt":"a","temperature":1e400})", "", "not valid JSON");
  expect_refused(R"({"prompt":"a","echo":1})", "echo", "true or false");
  expect_refused(R"({"prompt":"a","stream":"yes"})", "stream", "true or false");
  expect_refused(R"({"prompt":"a","logprobs":true})", "logprobs", "must be an integer");
}

TEST(CompletionRequest, OutOfRange) {
  expect_refused(R"({"prompt":"a","max_tokens":-1})", "max_tokens", "between 0 and 2048");
  expect_refused(R"({"prompt":"a","max_tokens":100000})", "max_tokens", "between 0 and 2048");
  expect_refused(R"({"prompt":"a","n_predict":18446744073709551615})", "n_predict", "between 0 and 2048");
  expect_refused(R"({"prompt":"a","temperature":-0.5})", "temperature", ">= 0");
  expect_refused(R"({"prompt":"a","temperature":1e300})", "temperature", "out of range");
  expect_refused(R"({"prompt":"a","top_p":0})", "top_p", "(0, 1]");
  expect_refused(R"({"prompt":"a","top_p":1.5})", "top_p", "(0, 1]");
  expect_refused(R"({"prompt":"a","min_p":1})", "min_p", "[0, 1)");
  expect_refused(R"({"prompt":"a","top_k":-2})", "top_k", "between 0");
  expect_refused(R"({"prompt":"a","repeat_penalty":0})", "repeat_penalty", "positive");
  expect_refused(R"({"prompt":"a","logprobs":21})", "logprobs", "between 0 and 20");
  expect_refused(R"({"prompt":"a","stop":["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17"]})",
                 "stop", "at most 16");
}

TEST(CompletionRequest, RefusesWhatItCannotHonour) {
  expect_refused(R"({"prompt":"a","n":2})", "n", "must be 1");
  expect_refused(R"({"prompt":"a","best_of":3})", "best_of", "must be 1");
  expect_refused(R"({"prompt":"a","logit_bias":{"5":1}})", "logit_bias", "not supported");
  expect_refused(R"({"prompt":"a","suffix":"end"})", "suffix", "not supported");
  expect_refused(R"({"prompt":"a","frequency_penalty":0.5})", "frequency_penalty", "not supported");
  // ... but their neutral values pass, as clients send them by default
  EXPECT_NO_THROW(parse_completion_request(
      R"({"prompt":"a","n":1,"best_of":1,"logit_bias":{},"suffix":"","frequency_penalty":0})", Limits{}));
}

TEST(CompletionRequest, LimitsAreConfigurable) {
  Limits limits;
  limits.max_tokens = 10;
  limits.max_logprobs = 3;
  EXPECT_EQ(parse_completion_request(R"({"prompt":"a","max_tokens":10})", limits).max_tokens, 10);
  EXPECT_THROW(parse_completion_request(R"({"prompt":"a","max_tokens":11})", limits), ApiError);
  EXPECT_THROW(parse_completion_request(R"({"prompt":"a","logprobs":4})", limits), ApiError);
}

}  // namespace
}  // namespace potop::serve::test_completion_request
