// A Hugging Face BertForSequenceClassification directory as a potop text classifier (`potop
// import`; docs/import.md): BERT's encoder as bert_hf_import.h reads it (bert.* names), its pooler
// (bert.pooler.dense: tanh of a dense layer on [CLS]) as the classifier's pooler, and classifier.*
// as the head; rows [CLS] text [SEP], pooled at [CLS], as transformers runs it. The classes are
// config.json's id2label in id order (LABEL_0, LABEL_1, ... without one). A problem_type other
// than single_label_classification is refused in one line.
#pragma once
#include "nn/foreign_model.h"

namespace potop {

ImportedModel import_bert_classifier_hf(const ImportRequest& request);

}  // namespace potop
