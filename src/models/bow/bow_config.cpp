#include "models/bow/bow_config.h"

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace potop {

namespace {

void require(bool ok, const std::string& source, const std::string& field, const std::string& what) {
  if (!ok) throw Error(source + ": " + field + " " + what);
}

std::vector<Field> all_fields(BowConfig& c) {
  std::vector<Field> fields{{"vocab-size", "words in the vocabulary", &c.vocab_size, true}};
  for (Field& f : bow_fields(c)) fields.push_back(std::move(f));
  return fields;
}

}  // namespace

Choice bow_attention_choice(BowAttention& value) {
  return choice(value, {{BowAttention::kNone, "none"},
                        {BowAttention::kMean, "mean"},
                        {BowAttention::kIdf, "idf"},
                        {BowAttention::kDot, "dot"},
                        {BowAttention::kAdditive, "additive"}});
}

std::string to_string(BowAttention v) {
  BowAttention copy = v;
  return bow_attention_choice(copy).get();
}

std::vector<Field> bow_fields(BowConfig& c) {
  return {
      {"attention", "weights of the bag of earlier words: none (plain bigram), mean, idf, dot or additive",
       bow_attention_choice(c.attention), true},
      {"dim", "word vector width d", &c.n_embd, true},
      {"block-size", "context window T in words (the bag holds up to T-1 earlier words)", &c.block_size, true},
      {"attn-hidden", "additive attention: width of W[E(w_k); E(w_{i-1})] + b and of v", &c.attn_hidden, true},
  };
}

void BowConfig::validate(const std::string& source) const {
  require(vocab_size > 0, source, "vocab_size", "must be positive (got " + std::to_string(vocab_size) + ")");
  require(block_size > 0, source, "block_size", "must be positive (got " + std::to_string(block_size) + ")");
  require(block_size <= 4096, source, "block_size", "is too large (max 4096: the scores are T×T per row)");
  require(n_embd > 0, source, "dim", "must be positive (got " + std::to_string(n_embd) + ")");
  require(n_embd <= 65536, source, "dim", "is too large (max 65536)");
  require(attn_hidden > 0, source, "attn_hidden", "must be positive (got " + std::to_string(attn_hidden) + ")");
  require(attn_hidden <= 65536, source, "attn_hidden", "is too large (max 65536)");
}

nlohmann::json to_json(const BowConfig& config) {
  BowConfig copy = config;
  return fields_to_json(all_fields(copy));
}

void update_from_json(BowConfig& config, const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw Error(source + ": expected a JSON object with the model config");
  apply_json(all_fields(config), j, source, "model field");
}

}  // namespace potop
