#include "models/gpt/gpt_options.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "core/threads.h"

namespace potop {

std::vector<Field> text_data_fields(TextDataOptions& o) {
  return {
      {"data", "training text file (UTF-8)", &o.data},
      {"val-fraction", "fraction of the text, taken from its end, held out for validation", &o.val_fraction},
      {"unknown", "characters the vocabulary lacks, in a text a resumed or fine-tuned run trains on: error, skip or "
                  "replace (by a space, or the first character)", unknown_choice(o.unknown)},
      {"tokenizer", "a tokenizer directory (potop tokenizer train); default: one token per character of the text",
       &o.tokenizer},
      {"init-from", "fine-tune: start from this model's weights and tokenizer (a model directory or .safetensors), "
                    "with a new optimizer and schedule", &o.init_from},
      {"init-embeddings", "with a word --tokenizer: start the token embeddings from these word2vec vectors (a "
                          "potop word2vec directory or a vectors .bin/.txt file, dimension n-embd)",
       &o.init_embeddings},
  };
}

std::vector<Field> gpt_option_fields(GptOptions& o) {
  std::vector<Field> fields = text_data_fields(o);
  for (Field& f : gpt_fields(o.model)) fields.push_back(std::move(f));
  for (Field& f : run_option_fields(o)) fields.push_back(std::move(f));
  return fields;
}

GPTConfig GptOptions::model_config(int vocab_size) const {
  GPTConfig c = model;
  c.vocab_size = vocab_size;
  return c;
}

std::vector<std::string> apply_config_file(GptOptions& options, const std::string& path,
                                           const std::vector<std::string>& skip) {
  return apply_options_file(gpt_option_fields(options), path, skip);
}

std::vector<std::string> apply_options_json(GptOptions& options, const nlohmann::json& j, const std::string& path,
                                            const std::vector<std::string>& skip) {
  return apply_options_json(gpt_option_fields(options), j, path, skip);
}

nlohmann::json to_json(const GptOptions& options) {
  GptOptions copy = options;
  return fields_to_json(gpt_option_fields(copy));
}

void validate(const TextDataOptions& o) {
  const auto require = require_option;
  const auto num = option_number;
  require(!o.data.empty(), "data", "is required (a UTF-8 text file to train on)");
  validate(static_cast<const RunOptions&>(o));
  require(o.tokenizer.empty() || o.init_from.empty(), "tokenizer",
          "does not go with --init-from, which brings the model's own tokenizer");
  require(o.init_embeddings.empty() || o.init_from.empty(), "init-embeddings",
          "does not go with --init-from, which brings the model's own weights");
  require(std::isfinite(o.val_fraction) && o.val_fraction >= 0 && o.val_fraction < 1, "val-fraction",
          "must be in [0, 1) (got " + num(o.val_fraction) + ")");
}

void validate(const GptOptions& o) {
  const auto require = require_option;
  const auto num = option_number;
  validate(static_cast<const TextDataOptions&>(o));
  const GPTConfig& m = o.model;
  for (auto [flag, value] : {std::pair{"n-layer", m.n_layer}, {"n-head", m.n_head}, {"n-embd", m.n_embd},
                             {"block-size", m.block_size}})
    require(value > 0, flag, "must be positive (got " + std::to_string(value) + ")");
  require(m.n_embd % m.n_head == 0, "n-embd",
          std::string("(").append(std::to_string(m.n_embd)).append(") must be divisible by --n-head (")
              .append(std::to_string(m.n_head)).append(")"));  // append, not "(" + …: GCC 12 -Wrestrict
  require(m.block_size <= 65536, "block-size", "is too large (max 65536)");
  require(m.n_embd <= 65536, "n-embd", "is too large (max 65536)");
  require(m.n_layer <= 1024, "n-layer", "is too large (max 1024)");
  require(std::isfinite(m.dropout) && m.dropout >= 0 && m.dropout < 1, "dropout", "must be in [0, 1) (got " + num(m.dropout) + ")");
}

}  // namespace potop
