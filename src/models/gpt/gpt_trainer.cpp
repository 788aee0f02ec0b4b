#include "models/gpt/gpt_trainer.h"

#include "core/error.h"
#include "models/decoder/decoder_trainer.h"
#include "models/gpt/gpt.h"
#include "models/gpt/gpt_kind.h"

namespace potop {

namespace {

std::string describe_gpt_model(const GPTConfig& c) {
  return std::to_string(c.n_layer) + " layers, " + std::to_string(c.n_head) + " heads, " + std::to_string(c.n_embd) +
         " wide, block " + std::to_string(c.block_size) + ", " + to_string(c.norm) + "-LN, " +
         to_string(c.activation) + ", " + to_string(c.positions) + " positions";
}

void refuse_bert_head(const GPTConfig& c) {
  if (c.mlm_transform || c.mask_in_vocab)
    throw Error(std::string("--") + (c.mlm_transform ? "mlm-transform" : "mask-in-vocab") +
                ": a BERT's masked-LM head (potop bert pretrain); the GPT predicts every next token with its tied head");
}

}  // namespace

RunResult train_gpt(const GptOptions& requested, std::FILE* log, const RunControl& control) {
  static const DecoderRecipe<GptOptions, LoadedGpt> recipe{kGptKind, "potop train", load_gpt_dir, gpt_fields,
                                                           describe_gpt_model,
                                                           refuse_bert_head};
  return train_decoder<GPT>(recipe, requested, log, control);
}

DecoderArch gpt2_arch() {
  return {"gpt2", kGptKind, "learned positions, LayerNorm, GELU",
          [] { return std::make_unique<OptionsTrainer<GptOptions>>(gpt_option_fields, train_gpt); }};
}

}  // namespace potop
