// The self-attention of the two bidirectional kinds, BERT and the classifier, for the attention
// page (attention_map.h), `potop classify attention` and the studio (serve): a text as the model
// reads it ([CLS] text [SEP], or the text's tokens) and the maps of one forward pass over it.
#pragma once
#include <string>
#include <vector>

#include "models/bert/bert_kind.h"
#include "models/classifier/classifier_kind.h"
#include "report/attention_map.h"

namespace potop {

// A token as the table and the page show it: [CLS] and [SEP] by name, whitespace visible.
std::string classifier_token_text(const ClassifierConfig& config, const Tokenizer& tokenizer, int id);

// The row a model reads for a text, and its maps. `focus` is the query position whose row the
// model's output is read from: a classifier's [CLS] or last token (0 for mean pooling), a BERT's
// first [MASK] (else [CLS]).
struct EncoderMaps {
  std::vector<int> ids;
  bool truncated = false;  // the text was cut to the block size (a classifier's; a BERT refuses)
  int focus = 0;
  SelfAttentionMaps maps;
};

// m must outlive the result.
EncoderMaps classifier_attention_maps(LoadedClassifier& m, const std::string& text);
// A BERT's maps of a text, where "[MASK]" is the mask token; a text longer than the block is an Error.
EncoderMaps bert_attention_maps(LoadedBert& m, const std::string& text);

}  // namespace potop
