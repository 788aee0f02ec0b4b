#include "models/encoder_decoder/pretrain_options.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace potop {

std::vector<std::string> PretrainOptions::data_files() const {
  std::vector<std::string> files;
  size_t start = 0;
  while (start <= data.size() && !data.empty()) {
    const size_t end = std::min(data.find('\n', start), data.size());
    files.push_back(data.substr(start, end - start));
    start = end + 1;
  }
  return files;
}

std::vector<Field> pretrain_fields(PretrainOptions& o) {
  std::vector<Field> fields = {
      {"data", "text file, one text a line (repeat the flag for more files, such as one per language)", &o.data},
      {"tokenizer", "tokenizer directory (potop tokenizer train --kind bpe or unigram); the fine-tuning uses it too",
       &o.tokenizer},
      {"dev-size", "chunks held out for the validation loss", &o.dev_size},
      {"noise-density", "fraction of each chunk's tokens corrupted (T5: 0.15)", &o.corruption.noise_density},
      {"mean-span", "mean length of a corrupted span (T5: 3)", &o.corruption.mean_span},
  };
  for (Field& f : encoder_decoder_fields(o.model)) fields.push_back(std::move(f));
  for (Field& f : run_option_fields(o)) fields.push_back(std::move(f));
  return fields;
}

nlohmann::json to_json(const PretrainOptions& options) {
  PretrainOptions copy = options;
  return fields_to_json(pretrain_fields(copy));
}

void validate(const PretrainOptions& o) {
  if (o.data.empty()) throw Error("--data is required: a text file, one text a line (repeatable)");
  for (const std::string& f : o.data_files())
    if (f.empty()) throw Error("--data: an empty file name");
  if (o.tokenizer.empty())
    throw Error("--tokenizer is required: a tokenizer directory (potop tokenizer train --kind bpe), which the "
                "fine-tuning will share");
  validate(static_cast<const RunOptions&>(o));
  require_option(o.dev_size >= 1, "dev-size", "must be positive (got " + std::to_string(o.dev_size) + ")");
  const double d = o.corruption.noise_density, m = o.corruption.mean_span;
  require_option(std::isfinite(d) && d > 0 && d < 1, "noise-density", "must be in (0, 1) (got " + option_number(d) + ")");
  require_option(std::isfinite(m) && m >= 1, "mean-span", "must be at least 1 (got " + option_number(m) + ")");
  require_option(o.model.block_size >= 3, "block-size", "must be at least 3 for span corruption (got " +
                                                            std::to_string(o.model.block_size) + ")");
  EncoderDecoderConfig shape = o.model;
  shape.vocab_size = std::max(shape.vocab_size, 1);  // comes from the tokenizer, later
  shape.validate("model");
}

}  // namespace potop
