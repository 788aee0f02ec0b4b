#include "models/gpt/gpt_kind.h"

#include "models/gpt/gpt.h"

namespace potop {

namespace {

std::string describe_gpt(const nlohmann::json& j) {
  const GPTConfig c = config_from_json<GPTConfig>(j);
  return "GPT, " + std::to_string(c.n_layer) + " layers, " + std::to_string(c.n_head) + " heads, " +
         std::to_string(c.n_embd) + " wide, block " + std::to_string(c.block_size) + ", " + to_string(c.norm) +
         "-LN, " + to_string(c.activation) + ", " + to_string(c.positions) + " positions, " +
         (c.bias ? "with" : "no") + " biases";
}

}  // namespace

const ModelKind& gpt_kind() {
  static const ModelKind kind = model_kind_row<GPT, GPTConfig>({
      .name = "gpt",
      .description = "a decoder-only Transformer language model",
      .noun = "a GPT",
      .tokenizer = "char",  // directories from before the other tokenizers name none
      .commands = {"info", "eval", "sample", "attention", "serve", "quantize", "export", "train --init-from"},
      .hint = "it generates text with potop sample",
      .trainer = "potop train",
      .describe = describe_gpt,
  });
  return kind;
}

}  // namespace potop
