#include "models/encoder_decoder/encoder_decoder_config.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace potop {

namespace {

std::vector<Field> all_fields(EncoderDecoderConfig& c) {
  std::vector<Field> fields{{"vocab-size", "tokens in the shared vocabulary", &c.vocab_size, true},
                            {"sentinels", "span-corruption sentinel ids at the end of the vocabulary", &c.sentinels, true}};
  for (Field& f : encoder_decoder_fields(c)) fields.push_back(std::move(f));
  return fields;
}

// The GPT's checks cover the shared fields (sizes, divisibility, dropout).
TransformerConfig as_gpt(const EncoderDecoderConfig& c) {
  TransformerConfig g;
  g.vocab_size = c.vocab_size, g.block_size = c.block_size, g.n_layer = c.n_layer, g.n_head = c.n_head;
  g.n_embd = c.n_embd, g.dropout = c.dropout;
  return g;
}

}  // namespace

std::vector<Field> encoder_decoder_fields(EncoderDecoderConfig& c) {
  return {
      {"n-layer", "blocks in the encoder and in the decoder", &c.n_layer, true},
      {"n-head", "attention heads per attention layer", &c.n_head, true},
      {"n-embd", "model width d_model (divisible by n-head); the feed-forward is 4x", &c.n_embd, true},
      {"block-size", "longest source and longest target sentence, in subword tokens", &c.block_size, true},
      {"dropout", "dropout probability in [0, 1)", &c.dropout, false},
      {"label-smoothing", "label smoothing of the training loss, in [0, 1)", &c.label_smoothing, false},
      {"bias", "biases in linear layers and LayerNorms", &c.bias, true},
      {"norm", "LayerNorm placement: post (the paper's Add & Norm) or pre",
       choice(c.norm, {{NormPlacement::kPre, "pre"}, {NormPlacement::kPost, "post"}}), true},
      {"activation", "feed-forward non-linearity: relu (the paper) or gelu",
       choice(c.activation, {{Activation::kGelu, "gelu"}, {Activation::kRelu, "relu"}}), true},
      {"positions", "position encoding: sinusoidal (the paper) or learned",
       choice(c.positions, {{PositionEncoding::kLearned, "learned"}, {PositionEncoding::kSinusoidal, "sinusoidal"}}),
       true},
  };
}

void EncoderDecoderConfig::validate(const std::string& source) const {
  as_gpt(*this).validate(source);
  if (!(std::isfinite(label_smoothing) && label_smoothing >= 0.0f && label_smoothing < 1.0f))
    throw Error(source + ": label_smoothing must be in [0, 1) (got " + std::to_string(label_smoothing) + ")");
  if (sentinels < 0 || sentinels >= vocab_size)
    throw Error(source + ": sentinels must be in [0, vocab_size) (got " + std::to_string(sentinels) + " of " +
                std::to_string(vocab_size) + ")");
}

nlohmann::json to_json(const EncoderDecoderConfig& config) {
  EncoderDecoderConfig copy = config;
  return fields_to_json(all_fields(copy));
}

void update_from_json(EncoderDecoderConfig& config, const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw Error(source + ": expected a JSON object with the model config");
  apply_json(all_fields(config), j, source, "model field");
}

}  // namespace potop
