// What a model of one token sequence trains on — every causal decoder, and BERT, which takes the
// same data flags: the tokens of a text (read, encoded and split here) or of prepared data
// (memory-mapped shards), and the tokenizer that made them.
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/fields.h"
#include "data/token_corpus.h"
#include "nn/parameters.h"
#include "tokenizer/tokenizer.h"
#include "train/run_options.h"

namespace potop {

class RunKit;

// The data flags every decoder and BERT take, and the run's.
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
// A decoder's options in --help order: the data's, its model's (`model_fields` of options.model),
// then the run's (train/run_options.h).
template <class Options, class Config>
std::vector<Field> decoder_option_fields(Options& options, std::vector<Field> (*model_fields)(Config&)) {
  std::vector<Field> fields = text_data_fields(options);
  for (Field& f : model_fields(options.model)) fields.push_back(std::move(f));
  for (Field& f : run_option_fields(options)) fields.push_back(std::move(f));
  return fields;
}
// The run's checks (validate(RunOptions)) and the data's.
void validate(const TextDataOptions& options);

struct TokenData {
  std::unique_ptr<Tokenizer> tokenizer;
  TokenCorpus corpus;
  uint64_t hash = 0;
  std::string summary;  // the "data:" line
  UnknownReport unknown;
};

// --init-from: loads the model started from (the caller keeps it, and sets options.model to its
// shape) and returns its tokenizer.
using InitFrom = std::function<std::unique_ptr<Tokenizer>()>;

// The tokenizer is the resumed run's, the --init-from model's, --tokenizer's, the prepared data's,
// or one token per character of the text; prepared ids must be of it. Errors name the flag or file.
// block_size: the model's context, which a validation split must hold; read after init_from has
// run, which may set it (a fine-tuned model keeps its base's).
TokenData load_token_data(TextDataOptions& options, const TextDataOptions& requested, const int& block_size,
                          const RunKit& kit, const InitFrom& init_from);

// What a fine-tuned model's config.json keeps of the model it started from: "generation" (an
// imported model's ends of text, checkpoint/model_dir.h's end_of_text_ids) and "chat_template"
// (its Jinja chat template), from --init-from's config.json (base_files), or on resume from the
// run's own in `out`. {} when there is none.
nlohmann::json inherited_generation(const RunKit& kit, const std::string& out, const nlohmann::json* base_files);

// --init-embeddings: the rows of the token table (the tensor named `table`) of the words word2vec
// knows (word2vec/init_embeddings.h); needs a word tokenizer.
void start_embeddings(ParameterSet& params, const Tokenizer& tokenizer, const std::string& vectors_path, std::FILE* log,
                      const std::string& table = "wte.weight");

}  // namespace potop
