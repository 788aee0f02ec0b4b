#include "nn/transformer_config.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/decimal.h"
#include "core/error.h"

namespace potop {

namespace {

void require(bool ok, const std::string& source, const std::string& field, const std::string& what) {
  if (!ok) throw Error(source + ": " + field + " " + what);
}

// transformer_fields with vocab_size in front: everything a saved config holds.
std::vector<Field> all_fields(TransformerConfig& c) {
  std::vector<Field> fields{{"vocab-size", "tokens in the vocabulary", &c.vocab_size, true}};
  for (Field& f : transformer_fields(c)) fields.push_back(std::move(f));
  return fields;
}

}  // namespace

std::vector<Field> transformer_fields(TransformerConfig& c) {
  return {
      {"n-layer", "number of Transformer blocks", &c.n_layer, true},
      {"n-head", "attention heads per block", &c.n_head, true},
      {"n-embd", "embedding width C (divisible by n-head)", &c.n_embd, true},
      {"block-size", "context length T in tokens", &c.block_size, true},
      {"dropout", "dropout probability in [0, 1)", &c.dropout, false},
      {"bias", "biases in linear layers and LayerNorms", &c.bias, true},
      {"norm", "LayerNorm placement: pre (GPT-2) or post (the original Add & Norm)",
       choice(c.norm, {{NormPlacement::kPre, "pre"}, {NormPlacement::kPost, "post"}}), true},
      {"activation", "feed-forward non-linearity: gelu (tanh form, GPT-2's), relu, or gelu-erf (exact, BERT's)",
       choice(c.activation,
              {{Activation::kGelu, "gelu"}, {Activation::kRelu, "relu"}, {Activation::kGeluErf, "gelu-erf"}}),
       true},
      {"positions", "position encoding: learned or sinusoidal",
       choice(c.positions, {{PositionEncoding::kLearned, "learned"}, {PositionEncoding::kSinusoidal, "sinusoidal"}}),
       true},
      {"norm-eps", "the LayerNorms' epsilon (GPT-2's 1e-5; BERT's 1e-12)", &c.norm_eps, true},
      {"token-types", "rows of a segment embedding added to every token's (row 0; BERT's 2); 0: none",
       &c.token_types, true},
      {"embedding-norm", "a LayerNorm after the embeddings are summed (BERT's)", &c.embedding_norm, true},
      {"mlm-transform", "a BERT's masked-LM head: dense + activation + LayerNorm before the decoder (Hugging Face's)",
       &c.mlm_transform, true},
      {"mask-in-vocab", "a BERT's [MASK] is the tokenizer's own token (an imported BERT's), not an id after it",
       &c.mask_in_vocab, true},
  };
}

void TransformerConfig::validate(const std::string& source) const {
  require(vocab_size > 0, source, "vocab_size", "must be positive (got " + std::to_string(vocab_size) + ")");
  require(block_size > 0, source, "block_size", "must be positive (got " + std::to_string(block_size) + ")");
  require(block_size <= 65536, source, "block_size", "is too large (max 65536)");
  require(n_layer > 0, source, "n_layer", "must be positive (got " + std::to_string(n_layer) + ")");
  require(n_layer <= 1024, source, "n_layer", "is too large (max 1024)");
  require(n_head > 0, source, "n_head", "must be positive (got " + std::to_string(n_head) + ")");
  require(n_embd > 0, source, "n_embd", "must be positive (got " + std::to_string(n_embd) + ")");
  require(n_embd <= 65536, source, "n_embd", "is too large (max 65536)");
  require(n_embd % n_head == 0, source, "n_embd",
          std::string("(") + std::to_string(n_embd) + ") must be divisible by n_head (" + std::to_string(n_head) + ")");
  require(std::isfinite(dropout) && dropout >= 0.0f && dropout < 1.0f, source, "dropout",
          "must be in [0, 1) (got " + std::to_string(dropout) + ")");
  require(token_types >= 0 && token_types <= 1024, source, "token_types",
          "must be in [0, 1024] (got " + std::to_string(token_types) + ")");
  require(std::isfinite(norm_eps) && norm_eps > 0.0f && norm_eps < 1.0f, source, "norm_eps",
          "must be in (0, 1) (got " + std::to_string(norm_eps) + ")");
}

std::string describe_shape(const TransformerConfig& c) {
  std::string s = std::to_string(c.n_layer) + " layers, " + std::to_string(c.n_head) + " heads, " +
                  std::to_string(c.n_embd) + " wide, block " + std::to_string(c.block_size) + ", " + to_string(c.norm) +
                  "-LN, " + to_string(c.activation) + ", " + to_string(c.positions) + " positions";
  if (c.norm_eps != 1e-5f) s += ", LayerNorm eps " + nlohmann::json(as_written(c.norm_eps)).dump();
  if (c.token_types > 0) s += ", " + std::to_string(c.token_types) + " segment rows";
  if (c.embedding_norm) s += ", embedding LayerNorm";
  if (c.mlm_transform) s += ", masked-LM transform";
  return s;
}

std::string to_string(NormPlacement v) { return v == NormPlacement::kPre ? "pre" : "post"; }
std::string to_string(Activation v) {
  switch (v) {
    case Activation::kGelu: return "gelu";
    case Activation::kRelu: return "relu";
    case Activation::kGeluErf: return "gelu-erf";
    case Activation::kSwiGlu: return "swiglu";
  }
  return "?";
}
std::string to_string(PositionEncoding v) {
  switch (v) {
    case PositionEncoding::kLearned: return "learned";
    case PositionEncoding::kSinusoidal: return "sinusoidal";
    case PositionEncoding::kRotary: return "rotary";
  }
  return "?";
}

nlohmann::json to_json(const TransformerConfig& config) {
  TransformerConfig copy = config;
  return fields_to_json(all_fields(copy));
}

void update_from_json(TransformerConfig& config, const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw Error(source + ": expected a JSON object with the model config");
  apply_json(all_fields(config), j, source, "model field");
}

}  // namespace potop
