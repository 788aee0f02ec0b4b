#include "models/gpt/gpt_trainer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "checkpoint/model_dir.h"
#include "checkpoint/train_state.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/hash.h"
#include "core/profile.h"
#include "core/threads.h"
#include "data/dataset.h"
#include "data/prepared_data.h"
#include "data/text_file.h"
#include "data/token_corpus.h"
#include "kernels/gemm.h"
#include "models/gpt/gpt.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"
#include "tokenizer/word_tokenizer.h"
#include "train/evaluate.h"
#include "train/run_kit.h"
#include "train/window_batches.h"
#include "models/word2vec/init_embeddings.h"

namespace potop {

namespace {

// --init-embeddings: the token table's rows of the words word2vec knows (word2vec/init_embeddings.h).
void start_embeddings(GPT& model, const Tokenizer& tokenizer, const std::string& vectors_path, std::FILE* log) {
  const auto* words = dynamic_cast<const WordTokenizer*>(&tokenizer);
  if (!words)
    throw Error("--init-embeddings needs a word tokenizer (--tokenizer DIR of kind word), not a " + tokenizer.kind() +
                " tokenizer: word2vec vectors are per word");
  ParameterSet& params = model.parameters();
  const auto& specs = params.layout().specs();
  const auto wte = std::find_if(specs.begin(), specs.end(), [](const TensorSpec& s) { return s.name == "wte.weight"; });
  POTOP_CHECK(wte != specs.end(), "the GPT has no wte.weight");
  const EmbeddingInit r = init_embeddings(params.values().at(*wte), static_cast<int>(wte->shape[0]),
                                          static_cast<int>(wte->shape[1]), *words, read_word2vec(vectors_path),
                                          vectors_path);
  std::fprintf(log, "init-embeddings: %d of %d token embeddings from %s (scaled by %.4g to the init's size); %d kept "
               "their random init\n", r.copied, r.copied + r.kept, vectors_path.c_str(), r.scale, r.kept);
}

// The model of a fine-tuning run: the base model's shape. A shape flag given with another value
// is refused (the weights could not be used); dropout is the run's own when given.
GPTConfig fine_tuned_config(const GPTConfig& base, const GPTConfig& requested, const std::vector<std::string>& given,
                            const std::string& init_from) {
  GPTConfig config = base, want = requested;
  const std::vector<Field> have = gpt_fields(config), asked = gpt_fields(want);
  const nlohmann::json a = to_json(config), b = to_json(want);
  std::string refused;
  for (size_t i = 0; i < have.size(); ++i) {
    const bool is_given = std::find(given.begin(), given.end(), have[i].name) != given.end();
    if (!is_given) continue;
    const std::string key = have[i].json_key();
    if (have[i].shape && a[key] != b[key])
      refused += (refused.empty() ? "" : ", ") + ("--" + have[i].name + " " + b[key].dump() + " (the model has " +
                                                   a[key].dump() + ")");
    else copy_value(asked[i], have[i]);
  }
  if (!refused.empty())
    throw Error("--init-from " + init_from + ": cannot change " + refused +
                ": fine-tuning keeps the model's shape; drop the flag");
  return config;
}

// What a GPT trains on: the tokens of a text (read, encoded and split here) or of prepared data
// (memory-mapped shards), and the tokenizer that made them.
struct GptData {
  std::unique_ptr<Tokenizer> tokenizer;
  TokenCorpus corpus;
  uint64_t hash = 0;
  std::optional<LoadedGpt> base;  // --init-from: the model fine-tuned
  std::string summary;              // the "data:" line
  UnknownReport unknown;
};

// The tokenizer: the resumed run's, the fine-tuned model's, a given directory's, the prepared
// data's, or one token per character of the text. Prepared ids must be of that tokenizer.
std::unique_ptr<Tokenizer> choose_tokenizer(TrainOptions& options, const RunKit& kit, GptData& data,
                                            const PreparedData* prepared, const std::u32string& text) {
  if (kit.resuming()) {
    std::unique_ptr<Tokenizer> t = kit.resumed_tokenizer();
    if (prepared) check_tokenizer(*prepared, *t, "the tokenizer of the run in " + options.out);
    return t;
  }
  if (!options.init_from.empty()) {
    data.base.emplace(load_gpt_dir(options.init_from));
    options.model = fine_tuned_config(data.base->config, options.model, kit.control().given, options.init_from);
    if (prepared) check_tokenizer(*prepared, *data.base->tokenizer, "the tokenizer of --init-from " + options.init_from);
    return std::move(data.base->tokenizer);
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

// --data is a text file (read and encoded here, in memory) or a data directory written by potop
// prepare (memory-mapped shards, already encoded and split). A resumed run keeps its vocabulary.
GptData load_data(TrainOptions& options, const TrainOptions& requested, const RunKit& kit) {
  const RunControl& control = kit.control();
  if (kit.resuming() && !control.was_given("data") && !fs::exists(options.data))
    throw Error("--resume " + options.out + ": the training text " + options.data +
                " named by the checkpoint is not found (a path relative to where the run started?); pass --data");
  if (kit.resuming() && (!requested.tokenizer.empty() || !requested.init_from.empty()))
    throw Error(std::string(requested.tokenizer.empty() ? "--init-from" : "--tokenizer") +
                " starts a new run; a resumed run keeps its model and tokenizer");
  if (kit.resuming() && !requested.init_embeddings.empty())
    throw Error("--init-embeddings starts a new run; a resumed run keeps its weights");
  GptData data;
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
  data.tokenizer = choose_tokenizer(options, kit, data, prepared ? &*prepared : nullptr, text);
  const Tokenizer& tokenizer = *data.tokenizer;
  kit.check_data(data.hash, options.data, prepared ? "data" : "text");
  char line[512];
  if (prepared) {
    const DataManifest& m = prepared->manifest();
    check_block_size(*prepared, options.model.block_size);
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
        TokenCorpus::in_memory(split_tokens(tokens, options.val_fraction, options.model.block_size, options.data));
    std::snprintf(line, sizeof line, ": %zu characters, %s tokenizer, vocabulary %d", text.size(),
                  tokenizer.kind().c_str(), tokenizer.size());
  }
  data.summary = "data: " + options.data + line + ", train " + std::to_string(data.corpus.train().size()) + " / val " +
                 std::to_string(data.corpus.val().size()) + " tokens";
  return data;
}

}  // namespace

TrainResult train(const TrainOptions& requested, std::FILE* log, const RunControl& control) {
  RunKit kit(control, "gpt", "potop train", log);
  TrainOptions options = kit.resume(requested);
  validate(options);
  kit.start(options);
  GptData data = load_data(options, requested, kit);
  const GPTConfig config = options.model_config(data.tokenizer->size());
  config.validate("model");
  kit.check_config(config, gpt_fields);
  const int B = options.batch_size, T = config.block_size;
  GPT& model = kit.build<GPT>(config, {B, T}, [&](GPT& m) {
    if (data.base) {  // fine-tuning: the base model's weights (the same layout: the same config)
      const Arena& from = data.base->model->parameters().values();
      std::copy_n(from.data(), from.floats(), m.parameters().values().data());
      data.base->model.reset();
      return;
    }
    m.init_weights(options.seed);
    if (!options.init_embeddings.empty()) start_embeddings(m, *data.tokenizer, options.init_embeddings, log);
  });
  kit.parallel().reserve({B, T});
  WindowBatches windows(kit, data.corpus.train(), data.corpus.val(), B, T, options);

  std::fprintf(log, "%s\n", data.summary.c_str());
  if (data.base) std::fprintf(log, "fine-tuning from %s\n", data.base->choice.c_str());
  std::fprintf(log, "model: %d layers, %d heads, %d wide, block %d, %s-LN, %s, %s positions: %zu parameters\n",
               config.n_layer, config.n_head, config.n_embd, config.block_size, to_string(config.norm).c_str(),
               to_string(config.activation).c_str(), to_string(config.positions).c_str(), model.num_parameters());
  if (data.unknown.count > 0)
    std::fprintf(log, "note: %s: %s %s (--unknown)\n", options.data.c_str(), data.unknown.describe().c_str(),
                 options.unknown == Unknown::kSkip ? "left out" : "replaced");

  ModelJob job;
  windows.fill(job, kit.parallel());
  job.d_model = config.n_embd;
  job.write_model_files = [&](const nlohmann::json& saved) { save_model_files(options.out, config, *data.tokenizer, saved); };
  return kit.run(job, *data.tokenizer, to_json(config), to_json(options), data.hash);
}

}  // namespace potop
