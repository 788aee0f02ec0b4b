#include "models/bow/bow_options.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "models/gpt/gpt_options.h"

namespace potop {

std::vector<Field> bow_option_fields(BowOptions& o) {
  std::vector<Field> fields{
      {"data", "training text file (UTF-8)", &o.data},
      {"val-fraction", "fraction of the words, taken from the end of the text, held out for validation",
       &o.val_fraction},
      {"tokenizer", "a word tokenizer directory (potop tokenizer train --kind word; the model is word level, other "
                    "kinds are refused); default: a word tokenizer of the text with --min-count", &o.tokenizer},
      {"min-count", "without --tokenizer: words seen fewer times in the text become <unk>", &o.min_count},
  };
  for (Field& f : bow_fields(o.model)) fields.push_back(std::move(f));
  for (Field& f : run_option_fields(o)) fields.push_back(std::move(f));
  return fields;
}

nlohmann::json to_json(const BowOptions& options) {
  BowOptions copy = options;
  return fields_to_json(bow_option_fields(copy));
}

void validate(const BowOptions& o) {
  auto require = [](bool ok, const std::string& message) {
    if (!ok) throw Error(message);
  };
  auto positive = [&](int v, const char* flag) {
    require(v > 0, std::string(flag) + " must be positive (got " + std::to_string(v) + ")");
  };
  require(!o.data.empty(), "--data: a training text file is required");
  require(std::isfinite(o.val_fraction) && o.val_fraction >= 0 && o.val_fraction < 1,
          "--val-fraction must be in [0, 1) (got " + std::to_string(o.val_fraction) + ")");
  positive(o.min_count, "--min-count");
  positive(o.model.n_embd, "--dim");
  positive(o.model.block_size, "--block-size");
  positive(o.model.attn_hidden, "--attn-hidden");
  require(o.model.block_size <= 4096, "--block-size " + std::to_string(o.model.block_size) +
                                          " is too large (max 4096: the scores are T×T per window)");
  require(o.model.n_embd <= 65536, "--dim " + std::to_string(o.model.n_embd) + " is too large (max 65536)");
  require(o.model.attn_hidden <= 65536,
          "--attn-hidden " + std::to_string(o.model.attn_hidden) + " is too large (max 65536)");
  validate(static_cast<const RunOptions&>(o));
}

}  // namespace potop
