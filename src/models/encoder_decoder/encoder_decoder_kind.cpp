#include "models/encoder_decoder/encoder_decoder_kind.h"

#include "models/encoder_decoder/encoder_decoder.h"

namespace potop {

namespace {

ModelKind make_encoder_decoder_kind() {
  ModelKind k;
  k.name = "encoder-decoder";
  k.description = "an encoder-decoder translation model";
  k.noun = "a translation model";
  k.tokenizer = "bpe";
  k.commands = {"info", "eval", "translate", "translate eval", "translate attention"};
  k.hint = "use potop translate (translate eval, translate attention)";
  fill_model_functions<EncoderDecoder, EncoderDecoderConfig>(k);
  k.describe = [](const nlohmann::json& j) {
    const EncoderDecoderConfig c = config_from_json<EncoderDecoderConfig>(j);
    return "encoder-decoder, " + std::to_string(c.n_layer) + "+" + std::to_string(c.n_layer) + " layers, " +
           std::to_string(c.n_head) + " heads, " + std::to_string(c.n_embd) + " wide, block " +
           std::to_string(c.block_size) + ", " + to_string(c.norm) + "-LN, " + to_string(c.activation) + ", " +
           to_string(c.positions) + " positions";
  };
  return k;
}

}  // namespace

const ModelKind& encoder_decoder_kind() {
  static const ModelKind kind = make_encoder_decoder_kind();
  return kind;
}

}  // namespace potop
