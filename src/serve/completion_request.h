// POST /v1/completions: the request body, parsed and checked. Field names and meanings follow
// OpenAI's legacy completions API and llama.cpp's server:
//   prompt (string, required), max_tokens (alias n_predict), temperature, top_k, top_p, min_p,
//   repeat_penalty, presence_penalty, repeat_last_n, stop (string or array of strings), seed
//   (0..2^53-1, or -1: random),
//   logprobs (0..limit: alternatives per token), echo, stream, ignore_eos (llama.cpp's and vLLM's:
//   go on past the model's end of text).
// Unknown fields are ignored, as OpenAI's clients send fields a server may not know ("model",
// "user", ...). Fields whose request potop cannot honour are refused: n or best_of above 1, a
// non-empty logit_bias or suffix, a non-zero frequency_penalty. Every mistake is an ApiError
// (400) naming the field.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "generate/sampler.h"
#include "serve/limits.h"

namespace potop::serve {

// The largest seed: 2^53 - 1, JavaScript's largest safe integer (a larger one would not survive
// a round trip through a JavaScript client).
inline constexpr long long kMaxSeed = (1LL << 53) - 1;

struct CompletionRequest {
  std::string prompt;
  int max_tokens = 16;
  SamplingOptions sampling;
  std::vector<std::string> stop;
  std::optional<uint64_t> seed;  // none: the server picks one (and reports it)
  int logprobs = -1;             // -1: no log-probs; k >= 0: each token's, with k alternatives
  bool echo = false;             // return the prompt too, with its log-probs
  bool stream = false;
  // The prompt holds special tokens written out (a Jinja chat template's "<|im_start|>", "<s>"):
  // their texts are read as the tokens (tokenizer/special_texts.h).
  bool special_texts = false;
  bool ignore_eos = false;   // generate past the model's ends of text (as potop sample --ignore-eos)
  std::vector<int> end_ids;  // the model's ends of text (not the request's: the server sets them)
};

// A request body as a JSON object: malformed JSON (a number beyond a double's range included) or
// another value is an ApiError (400) saying so.
nlohmann::json parse_request_json(std::string_view body);

// Parses a request body (JSON). Throws ApiError for malformed JSON, a wrong type, a value out of
// range or beyond `limits`.
CompletionRequest parse_completion_request(std::string_view body, const Limits& limits);
// The same for a body already parsed (an object): what the chat and responses parsers map theirs onto.
CompletionRequest completion_request_from_json(const nlohmann::json& body, const Limits& limits);

}  // namespace potop::serve
