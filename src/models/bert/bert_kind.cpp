#include "models/bert/bert_kind.h"

#include "models/bert/bert_eval.h"
#include "models/bert/bert_hf_import.h"
#include "models/bert/bert_trainer.h"

namespace potop {

namespace {

std::string describe_bert(const nlohmann::json& j) {
  const BertConfig c = config_from_json<BertConfig>(j);
  return "BERT (masked-LM encoder), " + describe_shape(c);
}

}  // namespace

const ModelKind& bert_kind() {
  static const ModelKind kind = model_kind_row<Bert, BertConfig>({
      .name = kBertKind,
      .description = "a BERT masked-LM encoder",
      .noun = "a BERT",
      .tokenizer = "bpe",
      .tasks = {Task::kMaskedLM, Task::kTextEncoder, Task::kSelfAttention},
      .commands = {"info", "eval", "attention", "bert fill", "serve", "quantize", "classify train --init-from"},
      .hint = "it fills in [MASK] with potop bert fill, and is fine-tuned with potop classify train --init-from",
      .trainer = "potop bert pretrain",
      .describe = describe_bert,
      // [MASK] after the tokenizer's vocabulary, unless it is the tokenizer's own (an imported BERT's)
      .extra_ids = [](const nlohmann::json& j) { return j.value("mask_in_vocab", false) ? 0 : 1; },
      .evaluate = evaluate_masked_lm,  // masked tokens
      .lends_body = true,
      .hf_architectures = {"BertForMaskedLM", "BertModel"},
      .import_hf = import_bert_hf,
  });
  return kind;
}

LoadedBert load_bert_dir(const std::filesystem::path& dir, const std::string& which) {
  return load_model_dir_as<Bert, BertConfig>(dir, which, kBertKind);
}

}  // namespace potop
