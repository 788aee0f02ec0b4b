#include "models/gpt/gpt_options.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "core/threads.h"

namespace potop {

std::vector<Field> gpt_option_fields(GptOptions& o) { return decoder_option_fields(o, gpt_fields); }

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
