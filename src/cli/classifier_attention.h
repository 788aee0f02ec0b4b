// A classifier's self-attention for the attention page (report/attention_map.h): what `potop
// classify attention --html` and `potop attention` draw for a text, as the classifier reads it
// ([CLS] text [SEP], or the text's tokens; cut to the block size).
#pragma once
#include <string>
#include <vector>

#include "models/classifier/classifier_kind.h"
#include "report/attention_map.h"

namespace potop::cli {

// A token as the table and the page show it: [CLS] and [SEP] by name, whitespace visible.
std::string classifier_token_text(const ClassifierConfig& config, const Tokenizer& tokenizer, int id);

struct ClassifierMaps {
  std::vector<int> ids;  // the row the model reads
  bool truncated = false;
  SelfAttentionMaps maps;
};
// m must outlive the result.
ClassifierMaps classifier_attention_maps(LoadedClassifier& m, const std::string& text);

}  // namespace potop::cli
