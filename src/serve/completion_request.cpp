#include "serve/completion_request.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "serve/api_error.h"

namespace potop::serve {

namespace {

using nlohmann::json;

std::string type_name(const json& v) {
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

[[noreturn]] void wrong_type(const std::string& field, const char* want, const json& v) {
  throw ApiError::invalid(field, std::string(field) + " must be " + want + " (got " + type_name(v) + ")");
}

// Each reader takes the field when present and not null (null means "the default").
const json* field(const json& body, const char* name) {
  auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

float read_number(const json& v, const char* name) {
  if (!v.is_number()) wrong_type(name, "a number", v);
  const double d = v.get<double>();
  if (!std::isfinite(d) || std::fabs(d) > 1e30) throw ApiError::invalid(name, std::string(name) + " is out of range");
  return static_cast<float>(d);
}

long long read_integer(const json& v, const char* name, long long lo, long long hi) {
  if (!v.is_number_integer()) wrong_type(name, "an integer", v);
  // Positive numbers parse as unsigned: compare those unsigned, so that 2^64 - 1 is not -1.
  const bool above = v.is_number_unsigned() ? v.get<unsigned long long>() > static_cast<unsigned long long>(hi)
                                            : v.get<long long>() > hi;
  if (above || (!v.is_number_unsigned() && v.get<long long>() < lo))
    throw ApiError::invalid(name, std::string(name) + " must be between " + std::to_string(lo) + " and " +
                                      std::to_string(hi) + " (got " + v.dump() + ")");
  return v.get<long long>();
}

bool read_bool(const json& v, const char* name) {
  if (!v.is_boolean()) wrong_type(name, "true or false", v);
  return v.get<bool>();
}

// Fields OpenAI defines that potop cannot honour: refused rather than silently ignored.
void refuse_unsupported_completion_fields(const json& body) {
  if (const json* v = field(body, "n"); v && !(v->is_number_integer() && v->get<long long>() == 1))
    throw ApiError::invalid("n", "n must be 1: one completion per request (send several requests instead)");
  if (const json* v = field(body, "best_of"); v && !(v->is_number_integer() && v->get<long long>() == 1))
    throw ApiError::invalid("best_of", "best_of must be 1: potop does not rank several completions");
  if (const json* v = field(body, "logit_bias"); v && !(v->is_object() && v->empty()))
    throw ApiError::invalid("logit_bias", "logit_bias is not supported");
  if (const json* v = field(body, "suffix"); v && !(v->is_string() && v->get<std::string>().empty()))
    throw ApiError::invalid("suffix", "suffix is not supported: potop only continues text");
  if (const json* v = field(body, "frequency_penalty"); v && !(v->is_number() && v->get<double>() == 0))
    throw ApiError::invalid("frequency_penalty",
                            "frequency_penalty is not supported: use presence_penalty or repeat_penalty");
}

}  // namespace

json parse_request_json(std::string_view text) {
  json body;
  try {
    body = json::parse(text);
  } catch (const json::exception& e) {  // a syntax error, or a number beyond double's range (1e400)
    std::string what = e.what();  // "[json.exception.parse_error.101] parse error at line 1, ..."
    if (auto at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
    throw ApiError::invalid("", "the request body must be a JSON object; it is not valid JSON: " + what);
  }
  if (!body.is_object()) throw ApiError::invalid("", "the request body must be a JSON object (got " + type_name(body) + ")");
  return body;
}

CompletionRequest parse_completion_request(std::string_view text, const Limits& limits) {
  return completion_request_from_json(parse_request_json(text), limits);
}

CompletionRequest completion_request_from_json(const json& body, const Limits& limits) {
  refuse_unsupported_completion_fields(body);

  CompletionRequest r;
  const json* prompt = field(body, "prompt");
  if (!prompt) throw ApiError::invalid("prompt", "prompt is required");
  if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) prompt = &(*prompt)[0];
  if (!prompt->is_string()) {
    if (prompt->is_array()) throw ApiError::invalid("prompt", "prompt must be one string (batches of prompts are not supported)");
    wrong_type("prompt", "a string", *prompt);
  }
  r.prompt = prompt->get<std::string>();

  r.max_tokens = limits.default_max_tokens;
  const json* max_tokens = field(body, "max_tokens");
  const char* max_name = "max_tokens";
  if (!max_tokens) max_tokens = field(body, "n_predict"), max_name = "n_predict";
  if (max_tokens) r.max_tokens = static_cast<int>(read_integer(*max_tokens, max_name, 0, limits.max_tokens));

  SamplingOptions& s = r.sampling;
  if (const json* v = field(body, "temperature")) s.temperature = read_number(*v, "temperature");
  if (const json* v = field(body, "top_k")) s.top_k = static_cast<int>(read_integer(*v, "top_k", 0, 1 << 30));
  if (const json* v = field(body, "top_p")) s.top_p = read_number(*v, "top_p");
  if (const json* v = field(body, "min_p")) s.min_p = read_number(*v, "min_p");
  if (const json* v = field(body, "repeat_penalty")) s.repeat_penalty = read_number(*v, "repeat_penalty");
  if (const json* v = field(body, "presence_penalty")) s.presence_penalty = read_number(*v, "presence_penalty");
  if (const json* v = field(body, "repeat_last_n"))
    s.repeat_last_n = static_cast<int>(read_integer(*v, "repeat_last_n", 0, 1 << 20));
  if (auto problem = find_problem(s)) throw ApiError::invalid(problem->field, problem->field + " " + problem->message);

  if (const json* v = field(body, "stop")) {
    if (v->is_string()) {
      r.stop.push_back(v->get<std::string>());
    } else if (v->is_array()) {
      if (v->size() > 16) throw ApiError::invalid("stop", "stop may hold at most 16 strings (got " + std::to_string(v->size()) + ")");
      for (const json& element : *v) {
        if (!element.is_string())
          throw ApiError::invalid("stop", "stop must be a string or an array of strings (an element is " + type_name(element) + ")");
        r.stop.push_back(element.get<std::string>());
      }
    } else {
      wrong_type("stop", "a string or an array of strings", *v);
    }
    for (const std::string& stop : r.stop)
      if (stop.size() > 256) throw ApiError::invalid("stop", "a stop string may be at most 256 bytes long");
  }
  // Seeds stay within JavaScript's safe integers, so that a seed a client reads back and re-sends
  // is the same number; -1 asks for a random one, as llama.cpp's server takes it.
  if (const json* v = field(body, "seed")) {
    const long long seed = read_integer(*v, "seed", -1, kMaxSeed);
    if (seed >= 0) r.seed = static_cast<uint64_t>(seed);
  }
  if (const json* v = field(body, "logprobs")) r.logprobs = static_cast<int>(read_integer(*v, "logprobs", 0, limits.max_logprobs));
  if (const json* v = field(body, "echo")) r.echo = read_bool(*v, "echo");
  if (const json* v = field(body, "stream")) r.stream = read_bool(*v, "stream");
  if (const json* v = field(body, "ignore_eos")) r.ignore_eos = read_bool(*v, "ignore_eos");
  return r;
}

}  // namespace potop::serve
