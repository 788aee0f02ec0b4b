#include "models/bow/bow_trainer.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "models/bow/bow_model_dir.h"
#include "checkpoint/model_dir.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/hash.h"
#include "data/dataset.h"
#include "data/text_file.h"
#include "models/bow/bow.h"
#include "tokenizer/train_tokenizer.h"
#include "tokenizer/utf8.h"
#include "train/evaluate.h"
#include "train/run_kit.h"
#include "train/window_batches.h"

namespace potop {

long document_frequencies(std::span<const int> tokens, int newline_id, int vocab_size, std::vector<long>& df) {
  df.assign(size_t(vocab_size), 0);
  std::vector<long> last_seen(size_t(vocab_size), -1);  // the last document each word was counted in
  long document = 0, documents = 0;
  bool empty = true;
  for (const int id : tokens) {
    if (id == newline_id) {
      if (!empty) ++document, empty = true;
      continue;
    }
    if (empty) ++documents, empty = false;
    if (last_seen[size_t(id)] != document) last_seen[size_t(id)] = document, ++df[size_t(id)];
  }
  return documents;
}

namespace {

// The id of the newline word, or -1 when the vocabulary has none.
int newline_id(const Tokenizer& tokenizer) {
  if (!tokenizer.can_encode("\n")) return -1;
  const std::vector<int> ids = tokenizer.encode("\n");
  return ids.size() == 1 ? ids[0] : -1;
}

// The vocabulary of a new run: a given tokenizer directory, or the text's words seen --min-count
// times.
std::unique_ptr<Tokenizer> word_tokenizer(const BowOptions& options, const std::string& text) {
  std::unique_ptr<Tokenizer> tokenizer;
  if (!options.tokenizer.empty()) {
    tokenizer = load_tokenizer_dir(options.tokenizer);
    // The model's bag, window and idf are of words: a char or subword vocabulary would train,
    // but everything it prints and documents would call its tokens words.
    if (tokenizer->kind() != "word")
      throw Error("--tokenizer " + options.tokenizer + ": a " + tokenizer->kind() +
                  " tokenizer; the bag-of-words LM is word level: give a word tokenizer (potop tokenizer train "
                  "--kind word) or leave --tokenizer out");
  } else {
    TokenizerTrainOptions t;
    t.kind = TokenizerKind::kWord, t.min_count = options.min_count;
    tokenizer = train_tokenizer(text, options.data, t);
  }
  if (tokenizer->size() <= 4 && tokenizer->kind() == "word")
    throw Error("--min-count " + std::to_string(options.min_count) + ": no word of " + options.data +
                " is that frequent, so the vocabulary is empty; lower it");
  return tokenizer;
}

}  // namespace

RunResult train_bow(const BowOptions& requested, std::FILE* log, const RunControl& control) {
  RunKit kit(control, kBowKind, "potop bow train", log);
  const BowOptions options = kit.resume(requested);
  validate(options);
  kit.start(options);
  // Data: text -> words -> ids -> train/val split.
  const std::string text_utf8 = read_utf8_text(options.data);
  const uint64_t data_hash = hash_training_text(utf8_decode(text_utf8, options.data));
  std::unique_ptr<Tokenizer> tokenizer = kit.resuming() ? kit.resumed_tokenizer() : word_tokenizer(options, text_utf8);
  kit.check_data(data_hash, options.data, "text");
  UnknownReport unknown;
  const std::vector<int> tokens = tokenizer->encode(text_utf8, options.data, Unknown::kReplace, &unknown);
  const TokenSplit split = split_tokens(tokens, options.val_fraction, options.model.block_size, options.data);

  BowConfig config = options.model;
  config.vocab_size = tokenizer->size();
  config.validate("model");
  kit.check_config(config, bow_fields);
  const int B = options.batch_size, T = config.block_size;
  long documents = 0;
  BowLM& model = kit.build<BowLM>(config, {B, T}, [&](BowLM& m) {
    m.init_weights(options.seed);
    if (config.attention != BowAttention::kIdf) return;
    std::vector<long> df;
    documents = document_frequencies(split.train, newline_id(*tokenizer), config.vocab_size, df);
    m.set_idf(df, documents);
  });
  kit.parallel().reserve({B, T});
  WindowBatches windows(kit, split.train, split.val, B, T, options);

  std::fprintf(log, "data: %s: %s tokenizer, vocabulary %d words, train %zu / val %zu words\n", options.data.c_str(),
               tokenizer->kind().c_str(), tokenizer->size(), split.train.size(), split.val.size());
  if (unknown.count > 0)
    std::fprintf(log, "note: %s: %s replaced by <unk>\n", options.data.c_str(), unknown.describe().c_str());
  std::fprintf(log, "model: bag-of-words LM, attention %s, d %d, window %d%s: %zu parameters\n",
               to_string(config.attention).c_str(), config.n_embd, config.block_size,
               config.attention == BowAttention::kAdditive ? (", hidden " + std::to_string(config.attn_hidden)).c_str()
                                                           : "",
               model.num_parameters());
  if (config.attention == BowAttention::kIdf && !kit.resuming())
    std::fprintf(log, "idf: document frequencies over %ld lines of the training words\n", documents);

  ModelJob job;
  windows.fill(job, kit.parallel());
  job.d_model = config.n_embd;
  job.write_model_files = [&](const nlohmann::json& saved) {
    save_model_files(options.out, kBowKind, to_json(config), *tokenizer, saved);
  };
  return kit.run(job, *tokenizer, to_json(config), to_json(options), data_hash);
}

}  // namespace potop
