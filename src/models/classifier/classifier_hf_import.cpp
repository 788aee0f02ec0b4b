#include "models/classifier/classifier_hf_import.h"

#include <string>

#include "models/bert/bert_hf_import.h"
#include "models/classifier/classifier.h"

namespace potop {

namespace {

// id2label's names in id order: {"0": "NEGATIVE", "1": "POSITIVE"}.
std::vector<std::string> class_names(const nlohmann::json& config, const ForeignConfig& f) {
  const int n = f.integer("num_labels", config.contains("id2label") ? int(config.at("id2label").size()) : 2);
  std::vector<std::string> labels(size_t(std::max(n, 0)));
  if (!config.contains("id2label")) {
    for (int i = 0; i < n; ++i) labels[size_t(i)] = "LABEL_" + std::to_string(i);
    return labels;
  }
  const nlohmann::json& map = config.at("id2label");
  if (!map.is_object() || int(map.size()) != n)
    throw f.refuse("id2label", "expected an object naming each of the " + std::to_string(n) + " classes by its id");
  for (int i = 0; i < n; ++i) {
    const auto it = map.find(std::to_string(i));
    if (it == map.end() || !it->is_string()) throw f.refuse("id2label", "has no name for class " + std::to_string(i));
    labels[size_t(i)] = it->get<std::string>();
  }
  return labels;
}

}  // namespace

ImportedModel import_bert_classifier_hf(const ImportRequest& r) {
  const ForeignConfig f(r.config, r.config_file);
  const ForeignTensors& t = r.tensors;
  ImportedModel out;
  if (f.string("problem_type", "single_label_classification") != "single_label_classification")
    throw f.refuse("problem_type", "potop's classifier picks one class per text (single_label_classification)");
  ClassifierConfig c;
  c.body = bert_hf_config(f, /*has_head=*/false, out.notes);
  c.body.mask_in_vocab = false;  // the masked-LM head's, which a classifier has not
  if (c.body.vocab_size != r.tokenizer.size())
    throw f.refuse("vocab_size", "the tokenizer beside it has " + std::to_string(r.tokenizer.size()) + " tokens");
  const SpecialTokens s = r.tokenizer.specials();
  if (s.bos < 0 || s.eos < 0)
    throw Error(f.file() + ": BERT reads [CLS] text [SEP], and the " + r.tokenizer.kind() +
                " tokenizer beside it lacks [CLS] or [SEP]");
  c.causal = false, c.cls_sep = true, c.pooling = Pooling::kCls, c.pooler = true;
  c.classifier_dropout = static_cast<float>(f.number("classifier_dropout", f.number("hidden_dropout_prob", 0.1)));
  c.labels = class_names(r.config, f);
  c.validate(f.file());
  auto model = std::make_unique<Classifier>(c);
  ParameterFiller fill(model->parameters(), t);
  fill_bert_body(fill, t, c.body, "bert.", out.notes);
  fill.linear("pooler.weight", "bert.pooler.dense.weight");
  fill.same("pooler.bias", "bert.pooler.dense.bias");
  fill.same("classifier.weight", "classifier.weight");  // (K, C), nn.Linear's layout and potop's
  fill.same("classifier.bias", "classifier.bias");
  fill.finish("BertForSequenceClassification");
  out.notes.insert(out.notes.end(), fill.notes().begin(), fill.notes().end());
  out.config = to_json(c);
  out.model = std::move(model);
  return out;
}

}  // namespace potop
