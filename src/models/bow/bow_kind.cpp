#include "models/bow/bow_kind.h"

#include "models/bow/bow.h"

namespace potop {

namespace {

ModelKind make_bow_kind() {
  ModelKind k;
  k.name = "bow";
  k.description = "a bigram + attention bag-of-words language model";
  k.noun = "a bag-of-words LM";
  k.tokenizer = "word";
  k.commands = {"info", "eval", "attention", "bow attention"};
  k.hint = "use potop eval or potop attention (it does not generate text)";
  fill_model_functions<BowLM, BowConfig>(k);
  k.describe = [](const nlohmann::json& j) {
    const BowConfig c = config_from_json<BowConfig>(j);
    return "bag-of-words LM, attention " + to_string(c.attention) + ", " + std::to_string(c.n_embd) +
           " wide, window " + std::to_string(c.block_size) + " words" +
           (c.attention == BowAttention::kAdditive ? ", scorer " + std::to_string(c.attn_hidden) + " wide" : "");
  };
  return k;
}

}  // namespace

const ModelKind& bow_kind() {
  static const ModelKind kind = make_bow_kind();
  return kind;
}

}  // namespace potop
