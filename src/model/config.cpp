#include "model/config.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace potop {

namespace {

void require(bool ok, const std::string& source, const std::string& field, const std::string& what) {
  if (!ok) throw Error(source + ": " + field + " " + what);
}

}  // namespace

void GPTConfig::validate(const std::string& source) const {
  require(vocab_size > 0, source, "vocab_size", "must be positive (got " + std::to_string(vocab_size) + ")");
  require(block_size > 0, source, "block_size", "must be positive (got " + std::to_string(block_size) + ")");
  require(block_size <= 65536, source, "block_size", "is too large (max 65536)");
  require(n_layer > 0, source, "n_layer", "must be positive (got " + std::to_string(n_layer) + ")");
  require(n_layer <= 1024, source, "n_layer", "is too large (max 1024)");
  require(n_head > 0, source, "n_head", "must be positive (got " + std::to_string(n_head) + ")");
  require(n_embd > 0, source, "n_embd", "must be positive (got " + std::to_string(n_embd) + ")");
  require(n_embd <= 65536, source, "n_embd", "is too large (max 65536)");
  require(n_embd % n_head == 0, source, "n_embd",
          "(" + std::to_string(n_embd) + ") must be divisible by n_head (" + std::to_string(n_head) + ")");
  require(std::isfinite(dropout) && dropout >= 0.0f && dropout < 1.0f, source, "dropout",
          "must be in [0, 1) (got " + std::to_string(dropout) + ")");
}

std::string to_string(NormPlacement v) { return v == NormPlacement::kPre ? "pre" : "post"; }
std::string to_string(Activation v) { return v == Activation::kGelu ? "gelu" : "relu"; }
std::string to_string(PositionEncoding v) { return v == PositionEncoding::kLearned ? "learned" : "sinusoidal"; }

NormPlacement parse_norm(const std::string& s, const std::string& field) {
  if (s == "pre") return NormPlacement::kPre;
  if (s == "post") return NormPlacement::kPost;
  throw Error(field + ": expected 'pre' or 'post', got '" + s + "'");
}
Activation parse_activation(const std::string& s, const std::string& field) {
  if (s == "gelu") return Activation::kGelu;
  if (s == "relu") return Activation::kRelu;
  throw Error(field + ": expected 'gelu' or 'relu', got '" + s + "'");
}
PositionEncoding parse_positions(const std::string& s, const std::string& field) {
  if (s == "learned") return PositionEncoding::kLearned;
  if (s == "sinusoidal") return PositionEncoding::kSinusoidal;
  throw Error(field + ": expected 'learned' or 'sinusoidal', got '" + s + "'");
}

nlohmann::json to_json(const GPTConfig& c) {
  return {{"vocab_size", c.vocab_size}, {"block_size", c.block_size}, {"n_layer", c.n_layer},
          {"n_head", c.n_head},         {"n_embd", c.n_embd},         {"dropout", c.dropout},
          {"bias", c.bias},             {"norm", to_string(c.norm)},  {"activation", to_string(c.activation)},
          {"positions", to_string(c.positions)}};
}

void update_from_json(GPTConfig& c, const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw Error(source + ": expected a JSON object with the model config");
  auto get_int = [&](const std::string& key, int& out) {
    const auto& v = j.at(key);
    if (!v.is_number_integer()) throw Error(source + ": " + key + " must be an integer");
    out = v.get<int>();
  };
  for (const auto& [key, value] : j.items()) {
    if (key == "vocab_size") get_int(key, c.vocab_size);
    else if (key == "block_size") get_int(key, c.block_size);
    else if (key == "n_layer") get_int(key, c.n_layer);
    else if (key == "n_head") get_int(key, c.n_head);
    else if (key == "n_embd") get_int(key, c.n_embd);
    else if (key == "dropout") {
      if (!value.is_number()) throw Error(source + ": dropout must be a number");
      c.dropout = value.get<float>();
    } else if (key == "bias") {
      if (!value.is_boolean()) throw Error(source + ": bias must be true or false");
      c.bias = value.get<bool>();
    } else if (key == "norm" || key == "activation" || key == "positions") {
      if (!value.is_string()) throw Error(source + ": " + key + " must be a string");
      const std::string field = source + ": " + key;
      if (key == "norm") c.norm = parse_norm(value.get<std::string>(), field);
      else if (key == "activation") c.activation = parse_activation(value.get<std::string>(), field);
      else c.positions = parse_positions(value.get<std::string>(), field);
    } else {
      throw Error(source + ": unknown model field '" + key + "'");
    }
  }
}

}  // namespace potop
