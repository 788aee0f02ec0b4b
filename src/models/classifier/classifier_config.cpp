#include "models/classifier/classifier_config.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"

namespace potop {

Choice pooling_choice(Pooling& value) {
  return choice(value, {{Pooling::kAuto, "auto"}, {Pooling::kCls, "cls"}, {Pooling::kLast, "last"}, {Pooling::kMean, "mean"}});
}

std::string to_string(Pooling v) {
  Pooling copy = v;
  return pooling_choice(copy).get();
}

std::vector<Field> classifier_head_fields(ClassifierConfig& c) {
  return {
      {"causal", "the body has the look-ahead mask (a GPT's); otherwise it is bidirectional (a BERT's)", &c.causal,
       true},
      {"extra-ids", "ids past the tokenizer's vocabulary the body has (a BERT's [MASK])", &c.extra_ids, true},
      {"cls-sep", "rows are [CLS] text [SEP] (<bos> text <eos>)", &c.cls_sep, true},
      {"pooling", "the vector the head reads: cls ([CLS], bidirectional bodies), last (the last token, GPT-1), mean "
                  "(over the tokens) or auto (cls, or last for a causal body, or mean without [CLS])",
       pooling_choice(c.pooling), true},
      {"pooler", "tanh of a dense layer on the pooled vector, before the head (BERT's pooler: an imported "
                 "BertForSequenceClassification has it)", &c.pooler, true},
      {"classifier-dropout", "dropout probability on the pooled vector before the head", &c.classifier_dropout, false},
      {"freeze-encoder", "train the head only: the body's weights stay as initialised (feature extraction)",
       &c.freeze_encoder, false},
  };
}

std::vector<Field> classifier_fields(ClassifierConfig& c) {
  std::vector<Field> fields{{"vocab-size", "tokens in the vocabulary", &c.body.vocab_size, true}};
  for (Field& f : transformer_fields(c.body)) fields.push_back(std::move(f));
  for (Field& f : classifier_head_fields(c)) fields.push_back(std::move(f));
  return fields;
}

void ClassifierConfig::validate(const std::string& source) const {
  body.validate(source);
  auto require = [&](bool ok, const std::string& field, const std::string& what) {
    if (!ok) throw Error(source + ": " + field + " " + what);
  };
  require(extra_ids >= 0 && extra_ids < body.vocab_size, "extra_ids", "must be in [0, vocab_size)");
  require(pooling != Pooling::kAuto, "pooling", "must be cls, last or mean");
  require(!(pooling == Pooling::kCls && causal), "pooling",
          "cls needs a bidirectional body: in a causal one the first position sees only itself");
  require(!(pooling == Pooling::kCls && !cls_sep), "pooling", "cls needs rows that start with [CLS] (cls_sep)");
  require(std::isfinite(classifier_dropout) && classifier_dropout >= 0 && classifier_dropout < 1,
          "classifier_dropout", "must be in [0, 1)");
  require(labels.size() >= 2, "labels", "must name at least two classes (got " + std::to_string(labels.size()) + ")");
  require(std::set<std::string>(labels.begin(), labels.end()).size() == labels.size(), "labels", "repeat a class");
  for (const std::string& l : labels) require(!l.empty(), "labels", "hold an empty name");
}

nlohmann::json to_json(const ClassifierConfig& config) {
  ClassifierConfig copy = config;
  nlohmann::json j = fields_to_json(classifier_fields(copy));
  j["labels"] = config.labels;
  return j;
}

void update_from_json(ClassifierConfig& config, const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw Error(source + ": expected a JSON object with the model config");
  nlohmann::json fields = j;
  fields.erase("labels");  // not a field: a list
  apply_json(classifier_fields(config), fields, source, "model field");
  if (const auto it = j.find("labels"); it != j.end()) {
    if (!it->is_array()) throw Error(source + ": labels must be an array of class names");
    config.labels.clear();
    for (const nlohmann::json& l : *it) {
      if (!l.is_string()) throw Error(source + ": labels must be an array of class names");
      config.labels.push_back(l.get<std::string>());
    }
  }
}

}  // namespace potop
