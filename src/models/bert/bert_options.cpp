#include "models/bert/bert_options.h"

#include <cmath>

#include "train/run_options.h"

namespace potop {

BertOptions::BertOptions() {
  // A word-piece encoder of a few layers: the width, depth and context of a small BERT
  // (Turc et al.'s BERT-mini is 4 × 256) and the dropout of every BERT.
  model.block_size = 128;
  model.n_embd = 256;
  model.n_head = 4;
  model.n_layer = 4;
  model.dropout = 0.1f;
}

std::vector<Field> bert_option_fields(BertOptions& o) {
  std::vector<Field> fields;
  for (Field& f : gpt_option_fields(o))
    if (f.name != "init-from") fields.push_back(std::move(f));  // pre-training starts from scratch
  fields.insert(fields.begin() + 4, Field{"mask-fraction", "fraction of each sequence's tokens the masked LM predicts "
                                                           "(each: 80% [MASK], 10% a random token, 10% kept)",
                                          &o.mask_fraction});
  return fields;
}

nlohmann::json to_json(const BertOptions& options) {
  BertOptions copy = options;
  return fields_to_json(bert_option_fields(copy));
}

void validate(const BertOptions& o) {
  validate(static_cast<const GptOptions&>(o));
  require_option(std::isfinite(o.mask_fraction) && o.mask_fraction > 0 && o.mask_fraction < 1, "mask-fraction",
                 "must be in (0, 1) (got " + option_number(o.mask_fraction) + ")");
  require_option(o.model.block_size >= 3, "block-size", "must be at least 3 for a BERT ([CLS], a token, [SEP])");
}

}  // namespace potop
