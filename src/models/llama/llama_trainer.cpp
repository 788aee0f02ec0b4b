#include "models/llama/llama_trainer.h"

#include "models/decoder/decoder_trainer.h"
#include "models/llama/llama.h"
#include "models/llama/llama_kind.h"

namespace potop {

namespace {

std::string describe_llama_model(const LlamaConfig& c) { return llama_kind().describe(to_json(c)); }

}  // namespace

RunResult train_llama(const LlamaOptions& requested, std::FILE* log, const RunControl& control) {
  static const DecoderRecipe<LlamaOptions, LoadedLlama> recipe{kLlamaKind, "potop train --arch llama",
                                                               load_llama_dir, llama_fields, describe_llama_model};
  return train_decoder<Llama>(recipe, requested, log, control);
}

DecoderArch llama_arch() {
  return {"llama", kLlamaKind, "RoPE, RMSNorm, SwiGLU, grouped-query attention",
          [] { return std::make_unique<OptionsTrainer<LlamaOptions>>(llama_option_fields, train_llama); }};
}

}  // namespace potop
