// Everything `potop train --arch llama` can be told: the GPT's data flags and run flags
// (TextDataOptions), and the Llama's shape (llama_fields).
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "core/fields.h"
#include "models/gpt/gpt_options.h"
#include "models/llama/llama_config.h"

namespace potop {

struct LlamaOptions : TextDataOptions {
  LlamaConfig model;  // its vocab_size comes from the data; n_kv_head and ffn_hidden may be 0 (their defaults)

  LlamaConfig model_config(int vocab_size) const;  // resolved
};

// The options in --help order: data, the model's llama_fields, then the run's.
std::vector<Field> llama_option_fields(LlamaOptions& options);
inline std::vector<Field> fields_of(LlamaOptions& options) { return llama_option_fields(options); }
nlohmann::json to_json(const LlamaOptions& options);
// The data's and the run's checks, and the model's, each naming its flag.
void validate(const LlamaOptions& options);

}  // namespace potop
