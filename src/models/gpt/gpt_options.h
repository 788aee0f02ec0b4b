// Everything `potop train` can be told, as one struct and one field list. The field list
// drives the command-line flags (--n-layer), the JSON config file keys (n_layer), the help
// text and what is saved in config.json, so a new option is added in exactly one place. The
// model's fields are the Transformer config's own list (nn/transformer_config.h), not copies of it.
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/fields.h"
#include "models/gpt/gpt_config.h"
#include "models/decoder/text_data.h"

namespace potop {

struct GptOptions : TextDataOptions {
  // model: its vocab_size comes from the data
  GPTConfig model;
  // the run: nanoGPT's small character-level recipe (RunOptions' defaults)

  GPTConfig model_config(int vocab_size) const;
};

// The options in --help order: data, the model's gpt_fields, then the run's (run_options.h).
std::vector<Field> gpt_option_fields(GptOptions& options);
inline std::vector<Field> fields_of(GptOptions& options) { return gpt_option_fields(options); }

// Applies a JSON config file's keys to options, skipping keys in `skip` (flags given on the
// command line, which win). Unknown keys and wrong types are errors naming the file and key. A
// model directory's config.json works too: its "training" object is used.
// Returns the names (kebab-case) of the options the file set.
std::vector<std::string> apply_config_file(GptOptions& options, const std::string& path,
                                           const std::vector<std::string>& skip);
// The same for a parsed JSON value; source names it in messages.
std::vector<std::string> apply_options_json(GptOptions& options, const nlohmann::json& j, const std::string& source,
                                            const std::vector<std::string>& skip = {});
nlohmann::json to_json(const GptOptions& options);

// Impossible values are a potop::Error naming the flag: the run's (validate(RunOptions)), and
// the data's and the model's (n_embd divisible by n_head, and so on).
void validate(const GptOptions& options);

}  // namespace potop
