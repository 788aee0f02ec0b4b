#include "models/encoder_decoder/encoder_decoder_kind.h"

#include "models/encoder_decoder/encoder_decoder.h"
#include "models/encoder_decoder/translation_eval.h"

namespace potop {

namespace {

std::string describe_encoder_decoder(const nlohmann::json& j) {
  const EncoderDecoderConfig c = config_from_json<EncoderDecoderConfig>(j);
  return "encoder-decoder, " + std::to_string(c.n_layer) + "+" + std::to_string(c.n_layer) + " layers, " +
         std::to_string(c.n_head) + " heads, " + std::to_string(c.n_embd) + " wide, block " +
         std::to_string(c.block_size) + ", " + to_string(c.norm) + "-LN, " + to_string(c.activation) + ", " +
         to_string(c.positions) + " positions";
}

}  // namespace

const ModelKind& encoder_decoder_kind() {
  static const ModelKind kind = model_kind_row<EncoderDecoder, EncoderDecoderConfig>({
      .name = kEncoderDecoderKind,
      .description = "an encoder-decoder translation model",
      .noun = "a translation model",
      .tokenizer = "bpe",
      .tasks = {Task::kSeq2Seq},
      .commands = {"info", "eval", "attention", "translate", "translate eval", "translate attention", "serve",
                   "quantize", "translate train --init-from"},
      .hint = "use potop translate (translate eval, translate attention)",
      .trainer = "potop translate train",
      .describe = describe_encoder_decoder,
      // T5 span-corruption sentinels (potop translate pretrain) are ids past the tokenizer's.
      .extra_ids = [](const nlohmann::json& c) { return c.value("sentinels", 0); },
      .evaluate = evaluate_pairs,  // sentence pairs, not windows of a text
  });
  return kind;
}

}  // namespace potop
