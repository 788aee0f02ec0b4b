#include "models/bow/bow_kind.h"

#include "models/bow/bow.h"

namespace potop {

namespace {

std::string describe_bow(const nlohmann::json& j) {
  const BowConfig c = config_from_json<BowConfig>(j);
  return "bag-of-words LM, attention " + to_string(c.attention) + ", " + std::to_string(c.n_embd) + " wide, window " +
         std::to_string(c.block_size) + " words" +
         (c.attention == BowAttention::kAdditive ? ", scorer " + std::to_string(c.attn_hidden) + " wide" : "");
}

}  // namespace

const ModelKind& bow_kind() {
  static const ModelKind kind = model_kind_row<BowLM, BowConfig>({
      .name = kBowKind,
      .description = "a bigram + attention bag-of-words language model",
      .noun = "a bag-of-words LM",
      .tokenizer = "word",
      .tasks = {Task::kLanguageModel, Task::kWordAttention},
      .commands = {"info", "eval", "attention", "bow attention"},
      .hint = "use potop eval or potop attention (it does not generate text)",
      .trainer = "potop bow train",
      .describe = describe_bow,
      .scored_unknown = Unknown::kReplace,  // trained with <unk> for the words its vocabulary lacks
  });
  return kind;
}

}  // namespace potop
