#include "models/classifier/classifier_kind.h"

#include "models/classifier/classifier_hf_import.h"

namespace potop {

namespace {

std::string describe_classifier(const nlohmann::json& j) {
  const ClassifierConfig c = config_from_json<ClassifierConfig>(j);
  std::string classes;
  for (const std::string& l : c.labels) classes += (classes.empty() ? "" : ", ") + l;
  return "text classifier, " + std::to_string(c.n_classes()) + " classes (" + classes + "), " +
         (c.causal ? "causal" : "bidirectional") + " body of " + std::to_string(c.body.n_layer) + " layers, " +
         std::to_string(c.body.n_head) + " heads, " + std::to_string(c.body.n_embd) + " wide, block " +
         std::to_string(c.body.block_size) + ", pooling " + to_string(c.pooling);
}

}  // namespace

const ModelKind& classifier_kind() {
  static const ModelKind kind = model_kind_row<Classifier, ClassifierConfig>({
      .name = kClassifierKind,
      .description = "a text classifier",
      .noun = "a text classifier",
      .tokenizer = "word",
      .tasks = {Task::kSequenceClassifier, Task::kSelfAttention},
      .commands = {"info", "attention", "classify eval", "classify predict", "classify attention", "serve", "quantize"},
      .hint = "use potop classify eval, predict or attention (it labels texts, it does not generate them)",
      .trainer = "potop classify train",
      .describe = describe_classifier,
      .extra_ids = [](const nlohmann::json& j) { return j.value("extra_ids", 0); },
      .hf_architectures = {"BertForSequenceClassification"},
      .import_hf = import_bert_classifier_hf,
  });
  return kind;
}

LoadedClassifier load_classifier_dir(const std::filesystem::path& dir, const std::string& which) {
  return load_model_dir_as<Classifier, ClassifierConfig>(dir, which, kClassifierKind);
}

}  // namespace potop
