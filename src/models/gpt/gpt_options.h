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
#include "tokenizer/tokenizer.h"
#include "train/run_options.h"

namespace potop {

// What a model of one token sequence trains on (token_data.h): the GPT's, a Llama's and a BERT's
// data flags, and the run's.
struct TextDataOptions : RunOptions {
  std::string data;
  double val_fraction = 0.1;
  Unknown unknown = Unknown::kError;  // characters outside a kept vocabulary (resume, new text)
  std::string tokenizer;  // a tokenizer directory; empty: a char tokenizer of the text
  std::string init_from;  // a model to start from (fine-tuning): its weights and tokenizer
  std::string init_embeddings;  // word2vec vectors to start a word tokenizer's wte from
};

// The data fields alone, in --help order (the model's and the run's follow them).
std::vector<Field> text_data_fields(TextDataOptions& options);
// The run's checks (validate(RunOptions)) and the data's.
void validate(const TextDataOptions& options);

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
