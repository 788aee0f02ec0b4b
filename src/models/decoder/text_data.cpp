#include "models/decoder/text_data.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/error.h"
#include "core/file_io.h"
#include "core/hash.h"
#include "data/dataset.h"
#include "data/prepared_data.h"
#include "data/text_file.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/utf8.h"
#include "train/run_kit.h"
#include "checkpoint/model_dir.h"
#include "models/word2vec/init_embeddings.h"
#include "tokenizer/word_tokenizer.h"

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


nlohmann::json inherited_generation(const RunKit& kit, const std::string& out, const nlohmann::json* base_files) {
  nlohmann::json extra = nlohmann::json::object();
  const nlohmann::json files = base_files ? *base_files : kit.resuming() ? read_config_json(out) : nlohmann::json();
  // The ends of its texts, and the chat template a chat of it is written in (an imported model's).
  for (const char* key : {"generation", "chat_template"})
    if (files.is_object() && files.contains(key)) extra[key] = files[key];
  return extra;
}

namespace {

// The tokenizer: the resumed run's, the fine-tuned model's, a given directory's, the prepared
// data's, or one token per character of the text. Prepared ids must be of that tokenizer.
std::unique_ptr<Tokenizer> choose_tokenizer(TextDataOptions& options, const RunKit& kit, const InitFrom& init_from,
                                            const PreparedData* prepared, const std::u32string& text) {
  if (kit.resuming()) {
    std::unique_ptr<Tokenizer> t = kit.resumed_tokenizer();
    if (prepared) check_tokenizer(*prepared, *t, "the tokenizer of the run in " + options.out);
    return t;
  }
  if (!options.init_from.empty()) {
    std::unique_ptr<Tokenizer> t = init_from();
    if (prepared) check_tokenizer(*prepared, *t, "the tokenizer of --init-from " + options.init_from);
    return t;
  }
  if (!options.tokenizer.empty()) {
    std::unique_ptr<Tokenizer> t = load_tokenizer_dir(options.tokenizer);
    if (prepared) check_tokenizer(*prepared, *t, "--tokenizer " + options.tokenizer);
    return t;
  }
  if (prepared) {
    const fs::path dir = fs::path(options.data) / kTokenizerDir;
    std::unique_ptr<Tokenizer> t = load_tokenizer_dir(dir);
    check_tokenizer(*prepared, *t, "its copy in " + dir.string());
    return t;
  }
  return std::make_unique<CharTokenizer>(CharTokenizer::from_text(text));
}

}  // namespace

// --data is a text file (read and encoded here, in memory) or a data directory written by potop
// prepare (memory-mapped shards, already encoded and split). A resumed run keeps its vocabulary.
TokenData load_token_data(TextDataOptions& options, const TextDataOptions& requested, const int& block_size,
                          const RunKit& kit, const InitFrom& init_from) {
  const RunControl& control = kit.control();
  if (kit.resuming() && !control.was_given("data") && !fs::exists(options.data))
    throw Error("--resume " + options.out + ": the training text " + options.data +
                " named by the checkpoint is not found (a path relative to where the run started?); pass --data");
  kit.refuse_on_resume({{"--tokenizer", !requested.tokenizer.empty()}, {"--init-from", !requested.init_from.empty()}},
                       "model and tokenizer");
  kit.refuse_on_resume({{"--init-embeddings", !requested.init_embeddings.empty()}}, "weights");
  TokenData data;
  std::optional<PreparedData> prepared;
  std::string text_utf8;
  std::u32string text;
  if (is_data_directory(options.data)) {
    prepared.emplace(PreparedData::open(options.data));
    data.hash = prepared->content_hash();
    // Its split was made by potop prepare: a different --val-fraction cannot apply.
    const double f = prepared->manifest().val_fraction;
    if (control.was_given("val-fraction") && requested.val_fraction != f)
      throw Error("--val-fraction " + nlohmann::json(requested.val_fraction).dump() + ": " + options.data +
                  " was split by potop prepare (val_fraction " + nlohmann::json(f).dump() +
                  "); prepare it again with that --val-fraction, or leave the flag out");
    options.val_fraction = f;
  } else {
    text_utf8 = read_utf8_text(options.data);
    text = utf8_decode(text_utf8, options.data);
    data.hash = hash_training_text(text);
  }
  data.tokenizer = choose_tokenizer(options, kit, init_from, prepared ? &*prepared : nullptr, text);
  const Tokenizer& tokenizer = *data.tokenizer;
  kit.check_data(data.hash, options.data, prepared ? "data" : "text");
  char line[512];
  if (prepared) {
    const DataManifest& m = prepared->manifest();
    check_block_size(*prepared, block_size);
    data.corpus = TokenCorpus::prepared(std::move(*prepared));
    std::snprintf(line, sizeof line, " (prepared): %llu characters in %llu file%s, %s tokenizer, vocabulary %d",
                  static_cast<unsigned long long>(m.characters), static_cast<unsigned long long>(m.documents),
                  m.documents == 1 ? "" : "s", tokenizer.kind().c_str(), tokenizer.size());
  } else {
    // Characters the vocabulary lacks are all counted first, so that refusing them names them all.
    const Unknown policy = options.unknown == Unknown::kError ? Unknown::kSkip : options.unknown;
    const std::vector<int> tokens = tokenizer.encode(text_utf8, options.data, policy, &data.unknown);
    if (data.unknown.count > 0 && options.unknown == Unknown::kError)
      throw Error(options.data + ": " + data.unknown.describe() + ", which the model never saw in training; pass "
                  "--unknown skip or --unknown replace to train on the rest");
    data.corpus =
        TokenCorpus::in_memory(split_tokens(tokens, options.val_fraction, block_size, options.data));
    std::snprintf(line, sizeof line, ": %zu characters, %s tokenizer, vocabulary %d", text.size(),
                  tokenizer.kind().c_str(), tokenizer.size());
  }
  data.summary = "data: " + options.data + line + ", train " + std::to_string(data.corpus.train().size()) + " / val " +
                 std::to_string(data.corpus.val().size()) + " tokens";
  return data;
}


// --init-embeddings: the token table's rows of the words word2vec knows (word2vec/init_embeddings.h).
void start_embeddings(ParameterSet& params, const Tokenizer& tokenizer, const std::string& vectors_path, std::FILE* log,
                      const std::string& table) {
  const auto* words = dynamic_cast<const WordTokenizer*>(&tokenizer);
  if (!words)
    throw Error("--init-embeddings needs a word tokenizer (--tokenizer DIR of kind word), not a " + tokenizer.kind() +
                " tokenizer: word2vec vectors are per word");
  const auto& specs = params.layout().specs();
  const auto wte = std::find_if(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == table; });
  POTOP_CHECK(wte != specs.end(), "the model has no " + table);
  const EmbeddingInit r = init_embeddings(params.values().at(*wte), static_cast<int>(wte->shape[0]),
                                          static_cast<int>(wte->shape[1]), *words, read_word2vec(vectors_path),
                                          vectors_path);
  std::fprintf(log, "init-embeddings: %d of %d token embeddings from %s (scaled by %.4g to the init's size); %d kept "
               "their random init\n", r.copied, r.copied + r.kept, vectors_path.c_str(), r.scale, r.kept);
}

}  // namespace potop
