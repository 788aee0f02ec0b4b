// The shape of a text classifier (models/classifier/classifier.h): the Transformer body's
// TransformerConfig fields, whether that body is causal (a GPT's) or bidirectional (a BERT's, or one
// trained from scratch), how its rows are pooled into one vector per text, the classes' names,
// and the head's dropout. One struct, one field list, one validate(), as for every model.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/fields.h"
#include "nn/transformer_config.h"

namespace potop {

// Which vector of the body's output the head reads:
//   cls   the first position, [CLS] (BERT); a bidirectional body only
//   last  the last real token (GPT-1's recipe: a causal body's only position that saw the whole text)
//   mean  the mean over the real tokens
//   auto  (options only) cls for a bidirectional body with [CLS], last for a causal one, else mean
enum class Pooling { kAuto, kCls, kLast, kMean };

struct ClassifierConfig {
  TransformerConfig body;        // vocab_size, block_size, widths, ... of the body
  bool causal = false;   // the look-ahead mask of a GPT's body; false: bidirectional
  int extra_ids = 0;      // ids past the tokenizer's vocabulary (a BERT body's [MASK]): vocab_size = tokenizer + this
  bool cls_sep = false;  // rows are [CLS] text [SEP] (<bos> text <eos>): a bidirectional body whose tokenizer has them
  Pooling pooling = Pooling::kCls;
  bool pooler = false;  // p = tanh(p·W_p + b_p) before the head (BERT's pooler)
  float classifier_dropout = 0.1f;  // on the pooled vector before the head (HF's classifier dropout)
  bool freeze_encoder = false;      // the body gets no gradient: only the head learns (feature extraction)
  std::vector<std::string> labels;  // the class names, in class-id order (sorted)

  int n_classes() const { return static_cast<int>(labels.size()); }
  // Throws potop::Error "<source>: <field> <what is wrong>".
  void validate(const std::string& source = "config") const;
};

Choice pooling_choice(Pooling& value);  // "auto", "cls", "last", "mean"
std::string to_string(Pooling v);
// The classifier's own fields (not the body's, not the labels): causal, cls-sep, pooling, pooler,
// classifier-dropout, freeze-encoder. The first four are shape: they fix what the weights mean.
std::vector<Field> classifier_head_fields(ClassifierConfig& config);
// Every field of the saved config but the labels: vocab-size, the body's, the head's.
std::vector<Field> classifier_fields(ClassifierConfig& config);
// {every field, "labels": [...]}.
nlohmann::json to_json(const ClassifierConfig& config);
// Reads the fields present in j (others keep their values), "labels" included; unknown fields
// and wrong types are an Error naming `source` and the field.
void update_from_json(ClassifierConfig& config, const nlohmann::json& j, const std::string& source);

}  // namespace potop
