// The shape of an encoder-decoder Transformer (model/encoder_decoder.h) and its switches, with
// one field list driving its JSON (checkpoints), the `potop translate train` flags and their help.
// The defaults are the paper's choices at a small size: post-LN, ReLU, sinusoidal positions,
// label smoothing 0.1, dropout 0.1.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/fields.h"
#include "nn/transformer_config.h"

namespace potop {

struct EncoderDecoderConfig {
  int vocab_size = 0;   // the shared source/target subword vocabulary, sentinels included
  // Sentinel ids of T5's span corruption (data/span_corruption.h), the last `sentinels` ids of
  // the vocabulary, past the tokenizer's: a model pre-trained by `potop translate pretrain` has
  // them, a plain translation model none. Decoding never emits them.
  int sentinels = 0;
  int block_size = 64;  // the longest source and the longest target, in tokens
  int n_layer = 3;      // blocks in the encoder, and as many in the decoder
  int n_head = 4;
  int n_embd = 128;     // d_model; the feed-forward width is 4·d_model
  float dropout = 0.1f;
  float label_smoothing = 0.1f;  // of the training loss (not part of the shape)
  bool bias = true;
  NormPlacement norm = NormPlacement::kPost;
  Activation activation = Activation::kRelu;
  PositionEncoding positions = PositionEncoding::kSinusoidal;

  // Throws potop::Error "<source>: <field> <what is wrong>".
  void validate(const std::string& source = "config") const;
  // The ids a decoder may emit: the tokenizer's, [0, vocab_size - sentinels).
  int emitted_vocab() const { return vocab_size - sentinels; }
};

// Every field but vocab_size and sentinels (which come from the tokenizer and the data), in the order of `potop translate train --help`.
std::vector<Field> encoder_decoder_fields(EncoderDecoderConfig& config);

nlohmann::json to_json(const EncoderDecoderConfig& config);
void update_from_json(EncoderDecoderConfig& config, const nlohmann::json& j, const std::string& source);

}  // namespace potop
