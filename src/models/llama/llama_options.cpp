#include "models/llama/llama_options.h"

#include <nlohmann/json.hpp>


namespace potop {

std::vector<Field> llama_option_fields(LlamaOptions& o) { return decoder_option_fields(o, llama_fields); }

LlamaConfig LlamaOptions::model_config(int vocab_size) const {
  LlamaConfig c = model.resolved();
  c.vocab_size = vocab_size;
  return c;
}

nlohmann::json to_json(const LlamaOptions& options) {
  LlamaOptions copy = options;
  return fields_to_json(llama_option_fields(copy));
}

void validate(const LlamaOptions& o) {
  validate(static_cast<const TextDataOptions&>(o));
  const LlamaConfig& m = o.model;
  const auto require = require_option;
  for (auto [flag, value] : {std::pair{"n-layer", m.n_layer}, {"n-head", m.n_head}, {"n-embd", m.n_embd},
                             {"block-size", m.block_size}})
    require(value > 0, flag, "must be positive (got " + std::to_string(value) + ")");
  require(m.n_kv_head >= 0, "n-kv-head", "must be positive (got " + std::to_string(m.n_kv_head) + ")");
  require(m.ffn_hidden >= 0, "ffn-hidden", "must be positive (got " + std::to_string(m.ffn_hidden) + ")");
  // The rest: the config's own checks, naming the flags.
  LlamaConfig c = m.resolved();
  c.vocab_size = 1;
  c.validate("");
}

}  // namespace potop
