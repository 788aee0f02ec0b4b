#include "models/encoder_decoder/translation_trainer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "checkpoint/model_dir.h"
#include "checkpoint/train_state.h"
#include "models/encoder_decoder/translation_model.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/hash.h"
#include "core/threads.h"
#include "core/arena.h"
#include "kernels/gemm.h"
#include "data/text_file.h"
#include "models/encoder_decoder/translator.h"
#include "models/encoder_decoder/encoder_decoder.h"
#include "report/translation_metrics.h"
#include "tokenizer/train_tokenizer.h"
#include "train/batch_parallel.h"
#include "train/evaluate.h"
#include "train/run_kit.h"

namespace potop {

namespace {

// Which column holds `language`; an error naming the flag otherwise.
int column_of(const TranslationOptions& o, const std::string& language, const char* flag) {
  const size_t comma = o.columns.find(',');
  if (comma == std::string::npos || o.columns.find(',', comma + 1) != std::string::npos)
    throw Error("--columns " + o.columns + ": expected two languages, comma-separated (like en,pl)");
  const std::string first = o.columns.substr(0, comma), second = o.columns.substr(comma + 1);
  if (language == first) return 0;
  if (language == second) return 1;
  throw Error(std::string("--") + flag + " " + language + ": not a column of the data (--columns " + o.columns + ")");
}

struct Side {
  int source_column = 0;
  const std::string& source(const SentencePair& p) const { return source_column == 0 ? p.first : p.second; }
  const std::string& target(const SentencePair& p) const { return source_column == 0 ? p.second : p.first; }
};

// Ids of source (+ </s>) and target; pairs too long for block_size are left out and counted.
std::vector<EncodedPair> encode_pairs(const std::vector<SentencePair>& pairs, const Side& side,
                                      const Tokenizer& tokenizer, int block_size, int& too_long) {
  std::vector<EncodedPair> out;
  too_long = 0;
  for (const SentencePair& p : pairs) {
    EncodedPair e{tokenizer.encode(side.source(p), "source", Unknown::kReplace, nullptr),
                  tokenizer.encode(side.target(p), "target", Unknown::kReplace, nullptr)};
    e.source.push_back(kEosId);
    if (int(e.source.size()) > block_size || int(e.target.size()) + 1 > block_size) {
      ++too_long;
      continue;
    }
    out.push_back(std::move(e));
  }
  return out;
}


// The source and target columns of --source and --target.
Side sides(const TranslationOptions& o) {
  const Side side{column_of(o, o.source, "source")};
  if (column_of(o, o.target, "target") == side.source_column)
    throw Error("--target " + o.target + ": the same column as --source " + o.source);
  return side;
}

// One subword vocabulary for both languages, learned from both sides of the training pairs.
std::unique_ptr<Tokenizer> shared_bpe(const TranslationOptions& o, const PairSplit& split) {
  std::string text;
  for (const SentencePair& p : split.train) text.append(p.first).append("\n").append(p.second).append("\n");
  TokenizerTrainOptions t;
  t.kind = TokenizerKind::kBpe, t.vocab_size = o.vocab_size;
  return train_tokenizer(text, o.data, t);
}

std::string skipped_note(const TranslationOptions& o, const PairFile& file) {
  std::string lines;
  for (const std::string& n : file.notes) lines += (lines.empty() ? "" : ", ") + n;
  return "note: " + o.data + ": " + std::to_string(file.skipped) + " bad lines skipped: " + lines +
         (file.skipped > int(file.notes.size()) ? ", ..." : "") + " (--bad-lines error refuses such a file)";
}

// The dev sentences each evaluation translates (greedy) for BLEU and chrF, and their references.
struct DevSentences {
  std::vector<std::vector<int>> sources;
  std::vector<std::string> references;
};

DevSentences dev_sentences_of(const TranslationOptions& o, const PairSplit& split, const Side& side,
                              const Tokenizer& tokenizer) {
  DevSentences d;
  for (int i = 0; i < std::min<int>(o.eval_sentences, int(split.dev.size())); ++i) {
    std::vector<int> src = tokenizer.encode(side.source(split.dev[i]), "source", Unknown::kReplace, nullptr);
    src.push_back(kEosId);
    if (int(src.size()) > o.model.block_size) src.resize(o.model.block_size);
    d.sources.push_back(std::move(src));
    d.references.push_back(side.target(split.dev[i]));
  }
  return d;
}

// A translation model's evaluation: the loss on every dev batch and on as many training batches
// spread over the lengths, and the dev BLEU and chrF of greedy translations. nullopt when stopped.
std::optional<Evaluation> evaluate_translation(BatchParallel& parallel, EncoderDecoder& model,
                                               PairBatches& batches, PairBatches& dev_batches,
                                               const DevSentences& dev, const Tokenizer& tokenizer,
                                               const std::function<bool()>& stop) {
  auto mean_loss = [&](PairBatches& from, int n) -> std::optional<float> {
    int next = 0;
    bool stopped = false;
    const LossTotal loss = evaluate_loss(parallel, [&](Batch& b) {
      if (next == n) return false;
      if (stop()) return !(stopped = true);
      from.fill_sorted(int(long(next++) * from.size() / n), b);
      return true;
    });
    if (stopped) return std::nullopt;
    return static_cast<float>(loss.mean());
  };
  const int n = std::min(dev_batches.size(), batches.size());
  const std::optional<float> train_loss = mean_loss(batches, n);
  const std::optional<float> dev_loss = train_loss ? mean_loss(dev_batches, dev_batches.size()) : std::nullopt;
  if (!dev_loss) return std::nullopt;
  Evaluation e{*train_loss, *dev_loss, {}};
  const auto outs = translate_in_batches(model, dev.sources, DecodeOptions{}, kDefaultBatchSentences, stop);
  if (!outs) return std::nullopt;
  std::vector<std::string> hyps;
  for (const std::vector<int>& out : *outs) hyps.push_back(tokenizer.decode(out));
  if (!hyps.empty()) {
    e.extra.push_back({"dev_bleu", corpus_bleu(hyps, dev.references).score});
    e.extra.push_back({"dev_chrf", corpus_chrf(hyps, dev.references)});
  }
  return e;
}

}  // namespace

RunResult train_translation(const TranslationOptions& requested, std::FILE* log, const RunControl& control) {
  RunKit kit(control, kEncoderDecoderKind, "potop translate train", log);
  const TranslationOptions options = kit.resume(requested);
  validate(options);
  const Side side = sides(options);
  kit.start(options, {"train.tsv", "dev.tsv", "test.tsv"});
  // Data: pairs, the split (the same for both directions), the tokenizer.
  const PairFile file = read_pairs(options.data, options.bad_lines);
  if (file.skipped > 0) std::fprintf(log, "%s\n", skipped_note(options, file).c_str());
  const uint64_t data_hash = fnv1a64(read_text_file(options.data));
  kit.check_data(data_hash, options.data, "pairs");
  const PairSplit split = split_pairs(file.pairs, options.dev_size, options.test_size);
  const std::unique_ptr<Tokenizer> tokenizer = kit.resuming() ? kit.resumed_tokenizer() : shared_bpe(options, split);
  int too_long_train = 0, too_long_dev = 0;
  const int block = options.model.block_size;
  const std::vector<EncodedPair> train = encode_pairs(split.train, side, *tokenizer, block, too_long_train);
  const std::vector<EncodedPair> dev = encode_pairs(split.dev, side, *tokenizer, block, too_long_dev);
  if (train.empty()) throw Error(options.data + ": no training pair fits in --block-size " + std::to_string(block));

  EncoderDecoderConfig config = options.model;
  config.vocab_size = tokenizer->size();
  config.validate("model");
  kit.check_config(config, encoder_decoder_fields);
  const BatchShape largest{std::max(1, options.batch_tokens / block), block, block};  // B·max(S, T) <= batch_tokens
  EncoderDecoder& model = kit.build<EncoderDecoder>(config, largest, [&](EncoderDecoder& m) { m.init_weights(options.seed); });
  PairBatches batches(train, options.batch_tokens, hash64(options.seed, 1));
  PairBatches dev_batches(dev.empty() ? train : dev, options.batch_tokens, 0);

  std::fprintf(log, "data: %s: %zu pairs (%d bad lines skipped), %s -> %s; train %zu, dev %zu, test %zu%s\n",
               options.data.c_str(), file.pairs.size(), file.skipped, options.source.c_str(), options.target.c_str(), split.train.size(), split.dev.size(),
               split.test.size(), too_long_train + too_long_dev ? (", " + std::to_string(too_long_train) + " training and " +
                                      std::to_string(too_long_dev) + " dev pairs longer than --block-size left out").c_str() : "");
  std::fprintf(log, "tokenizer: shared %s, %d tokens; %d batches of about %d tokens per epoch\n",
               tokenizer->kind().c_str(), tokenizer->size(), batches.size(), options.batch_tokens);
  std::fprintf(log, "model: encoder-decoder, %d+%d layers, %d heads, %d wide, %s-LN, %s, %s positions: %zu parameters\n",
               config.n_layer, config.n_layer, config.n_head, config.n_embd, to_string(config.norm).c_str(),
               to_string(config.activation).c_str(), to_string(config.positions).c_str(), model.num_parameters());

  ModelJob job;
  job.next_batch = [&](long index) {  // batch k is a function of k alone
    Batch b;
    batches.fill(index, b);
    return b;
  };
  const DevSentences dev_sentences = dev_sentences_of(options, split, side, *tokenizer);
  job.evaluate = [&](int, const std::function<bool()>& stop) {
    return evaluate_translation(kit.parallel(), model, batches, dev_batches, dev_sentences, *tokenizer, stop);
  };
  job.tokens_per_batch = std::max<long>(1, batches.target_tokens() / batches.size()), job.d_model = config.n_embd;
  job.batch_text = "about " + std::to_string(options.batch_tokens) + " padded tokens (--batch-tokens)";
  job.sampler_state = [&] { return Rng(hash64(options.seed, 1)).state(); };  // unused: batches are indexed
  job.write_model_files = [&](const nlohmann::json& saved) {
    if (!kit.resuming()) {
      write_pairs(fs::path(options.out) / "train.tsv", split.train);
      write_pairs(fs::path(options.out) / "dev.tsv", split.dev);
      write_pairs(fs::path(options.out) / "test.tsv", split.test);
    }
    save_translation_files(options.out, config, *tokenizer, options.source, options.target, saved);
  };
  return kit.run(job, *tokenizer, to_json(config), to_json(options), data_hash);
}

}  // namespace potop
