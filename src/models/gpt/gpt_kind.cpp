#include "models/gpt/gpt_kind.h"

#include "models/gpt/gpt.h"

namespace potop {

namespace {

ModelKind make_gpt_kind() {
  ModelKind k;
  k.name = "gpt";
  k.description = "a decoder-only Transformer language model";
  k.noun = "a GPT";
  k.tokenizer = "char";  // older directories, from before the other tokenizers, name none
  k.commands = {"info", "eval", "sample", "attention", "serve", "train --init-from"};
  k.hint = "it generates text with potop sample";
  fill_model_functions<GPT, GPTConfig>(k);
  k.describe = [](const nlohmann::json& j) {
    const GPTConfig c = config_from_json<GPTConfig>(j);
    return "GPT, " + std::to_string(c.n_layer) + " layers, " + std::to_string(c.n_head) + " heads, " +
           std::to_string(c.n_embd) + " wide, block " + std::to_string(c.block_size) + ", " + to_string(c.norm) +
           "-LN, " + to_string(c.activation) + ", " + to_string(c.positions) + " positions, " +
           (c.bias ? "with" : "no") + " biases";
  };
  return k;
}

}  // namespace

const ModelKind& gpt_kind() {
  static const ModelKind kind = make_gpt_kind();
  return kind;
}

}  // namespace potop
