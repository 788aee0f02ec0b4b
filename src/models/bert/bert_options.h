// Everything `potop bert pretrain` can be told: the GPT's options (the same data flags — a text
// or a prepared directory, --tokenizer —, the same shape fields and run flags) and the masking.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/fields.h"
#include "models/gpt/gpt_options.h"

namespace potop {

struct BertOptions : GptOptions {
  double mask_fraction = 0.15;  // BERT's 15%
  BertOptions();
};

std::vector<Field> bert_option_fields(BertOptions& options);
inline std::vector<Field> fields_of(BertOptions& options) { return bert_option_fields(options); }
nlohmann::json to_json(const BertOptions& options);
// The GPT's checks, the masking's, and what a BERT cannot take (--init-from: use a classifier's).
void validate(const BertOptions& options);

}  // namespace potop
