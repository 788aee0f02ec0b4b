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
#include "data/parallel_corpus.h"
#include "data/text_file.h"
#include "models/encoder_decoder/translator.h"
#include "models/encoder_decoder/encoder_decoder.h"
#include "report/translation_metrics.h"
#include "tokenizer/train_tokenizer.h"
#include "train/batch_parallel.h"
#include "train/evaluate.h"
#include "train/run_kit.h"
#include "train/fine_tune.h"
#include "models/encoder_decoder/encoder_decoder_training.h"

namespace potop {

namespace {

// Which column holds `language`; an error naming the flag otherwise.
int column_of(const TranslationOptions& o, const std::string& language, const char* flag) {
  const std::optional<PairColumns> columns = parse_pair_columns(o.columns);
  if (!columns) throw Error("--columns " + o.columns + ": expected two languages, comma-separated (like en,pl)");
  if (language == columns->first) return 0;
  if (language == columns->second) return 1;
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

// Fewer training pairs than this draw a warning: a model of the default size learns to translate
// from tens of thousands (the measured Tatoeba runs had 39,378); on a few hundred it memorizes.
constexpr int kFewTrainingPairs = 3000;

// An explicit --dev-size N (or --test-size N) without its fraction holds out exactly N pairs, as
// before the fractions existed; so does a run resumed from a checkpoint saved before them (its
// options have sizes only), so that it keeps its split.
void exact_sizes_where_asked(TranslationOptions& o, const RunControl& control, const nlohmann::json* saved) {
  const bool before_fractions = saved && !saved->contains("dev_fraction");
  if ((before_fractions || control.was_given("dev-size")) && !control.was_given("dev-fraction")) o.dev_fraction = 1;
  if ((before_fractions || control.was_given("test-size")) && !control.was_given("test-fraction")) o.test_fraction = 1;
}

// "3 dev pairs (--dev-fraction 0.05, at most --dev-size 500)", or "(--dev-size 3)" for exact sizes.
std::string held_out_text(int count, const char* what, double fraction, int cap) {
  const std::string flag = std::string("--") + what;
  return std::to_string(count) + " " + what + (count == 1 ? " pair (" : " pairs (") +
         (fraction >= 1 ? flag + "-size " + std::to_string(cap)
                        : flag + "-fraction " + option_number(fraction) + ", at most " + flag + "-size " +
                              std::to_string(cap)) +
         ")";
}

// The split of n pairs, refused (naming the flags) when it leaves no pair to train on.
PairSplit split_of(const TranslationOptions& o, const std::vector<SentencePair>& pairs) {
  const int n = int(pairs.size());
  const int dev = held_out_count(n, o.dev_fraction, o.dev_size), test = held_out_count(n, o.test_fraction, o.test_size);
  if (dev + test >= n)
    throw Error(o.data + ": " + std::to_string(n) + (n == 1 ? " pair is" : " pairs are") + " too few: holding out " +
                held_out_text(dev, "dev", o.dev_fraction, o.dev_size) + " and " +
                held_out_text(test, "test", o.test_fraction, o.test_size) + " leaves none to train on");
  return split_pairs(pairs, dev, test);
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

// Without dev pairs (--dev-size 0), the training loss is measured on this many batches at most.
constexpr int kTrainBatchesWithoutDev = 10;

// A translation model's evaluation: the loss on every dev batch and on as many training batches
// spread over the lengths, and the dev BLEU and chrF of greedy translations. Without dev pairs
// (dev_batches null) the training loss alone, and the dev loss NaN: the run says there is no
// validation split rather than call the training loss a dev loss. nullopt when stopped.
std::optional<Evaluation> evaluate_translation(BatchParallel& parallel, EncoderDecoder& model,
                                               PairBatches& batches, PairBatches* dev_batches,
                                               const DevSentences& dev, const Tokenizer& tokenizer,
                                               const std::function<bool()>& stop) {
  auto mean_loss = [&](PairBatches& from, int n) {  // n batches spread over the lengths
    return mean_batch_loss(parallel, n, [&](int i, Batch& b) { from.fill_sorted(int(long(i) * from.size() / n), b); },
                           stop);
  };
  const int n = std::min(dev_batches ? dev_batches->size() : kTrainBatchesWithoutDev, batches.size());
  const std::optional<float> train_loss = mean_loss(batches, n);
  if (!train_loss) return std::nullopt;
  std::optional<float> dev_loss = std::numeric_limits<float>::quiet_NaN();
  if (dev_batches) dev_loss = mean_loss(*dev_batches, dev_batches->size());
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

// The training and dev pairs encoded, but for those longer than --block-size, left out and
// counted; none left to train on, or none of the dev pairs held out, is an Error.
struct EncodedSplit {
  std::vector<EncodedPair> train, dev;
  int too_long_train = 0, too_long_dev = 0;
};

EncodedSplit encode_split(const TranslationOptions& options, const PairSplit& split, const Side& side,
                          const Tokenizer& tokenizer) {
  EncodedSplit e;
  const int block = options.model.block_size;
  e.train = encode_pairs(split.train, side, tokenizer, block, e.too_long_train);
  e.dev = encode_pairs(split.dev, side, tokenizer, block, e.too_long_dev);
  if (e.train.empty()) throw Error(options.data + ": no training pair fits in --block-size " + std::to_string(block));
  if (e.dev.empty() && !split.dev.empty())  // held out, yet nothing to evaluate: not what was asked for
    throw Error(options.data + ": none of the " + std::to_string(split.dev.size()) + " dev pairs fits in --block-size " +
                std::to_string(block) + "; raise it, or hold out more pairs (--dev-fraction, --dev-size)");
  return e;
}

// The start-up lines of the data: the pairs and their split, a warning when too few train, a note
// when none is held out for evaluation.
void print_split(std::FILE* log, const TranslationOptions& options, const PairFile& file, const PairSplit& split,
                 const EncodedSplit& encoded) {
  const int too_long = encoded.too_long_train + encoded.too_long_dev;
  std::fprintf(log, "data: %s: %zu pairs (%d bad lines skipped), %s -> %s; train %zu, dev %zu, test %zu%s\n",
               options.data.c_str(), file.pairs.size(), file.skipped, options.source.c_str(), options.target.c_str(),
               split.train.size(), split.dev.size(), split.test.size(),
               too_long ? (", " + std::to_string(encoded.too_long_train) + " training and " +
                           std::to_string(encoded.too_long_dev) + " dev pairs longer than --block-size left out")
                              .c_str()
                        : "");
  if (int(split.train.size()) < kFewTrainingPairs)
    std::fprintf(log, "warning: %s: only %zu training pairs (of %zu; %zu dev and %zu test held out): from fewer than "
                 "%d a model mostly memorizes its pairs (docs/translation.md's runs trained on 39,378)\n",
                 options.data.c_str(), split.train.size(), file.pairs.size(), split.dev.size(), split.test.size(),
                 kFewTrainingPairs);
  if (split.dev.empty())
    std::fprintf(log, "note: %s: no dev pairs: the evaluations measure the training loss only (no dev loss, "
                 "BLEU or chrF), and best.safetensors is the lowest training loss\n",
                 options.dev_fraction == 0 ? "--dev-fraction 0" : "--dev-size 0");
}

// How a new run starts: its tokenizer, and when fine-tuning the base model and its sentinels.
struct Start {
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<EncoderDecoder> base;
  int sentinels = 0;
  std::string from;  // the base model's checkpoint, as loading it said
};

// --init-from: the base model's tokenizer (a --tokenizer given too must be the same one), its
// shape (options.model becomes it, flags that would change it refused) and its weights;
// otherwise --tokenizer, or a BPE learned from the training pairs.
Start new_start(TranslationOptions& options, const std::vector<std::string>& given, const PairSplit& split) {
  // --vocab-size sizes the BPE learned from the pairs: with a tokenizer given, it would be ignored.
  if (std::find(given.begin(), given.end(), "vocab-size") != given.end() &&
      (!options.init_from.empty() || !options.tokenizer.empty()))
    throw Error("--vocab-size: the vocabulary is that of " +
                (options.init_from.empty() ? "--tokenizer " + options.tokenizer : "--init-from " + options.init_from) +
                "; --vocab-size sizes the BPE learned from the pairs without one, so drop the flag");
  std::unique_ptr<Tokenizer> named = options.tokenizer.empty() ? nullptr : subword_tokenizer(options.tokenizer);
  if (options.init_from.empty()) return {named ? std::move(named) : shared_bpe(options, split), nullptr, 0, ""};
  TranslationModel base = load_translation_model(options.init_from);
  refuse_quantized(base.metadata, "--init-from " + options.init_from, "fine-tuning");
  if (named && (named->kind() != base.tokenizer->kind() || named->hash() != base.tokenizer->hash()))
    throw Error("--tokenizer " + options.tokenizer + ": is not the tokenizer of --init-from " + options.init_from +
                " (" + named->kind() + " of " + std::to_string(named->size()) + " tokens vs " + base.tokenizer->kind() +
                " of " + std::to_string(base.tokenizer->size()) + "); leave --tokenizer out, the model brings its own");
  options.model = fine_tuned_config(base.config, options.model, given, options.init_from, encoder_decoder_fields);
  return {std::move(base.tokenizer), std::move(base.model), base.config.sentinels, base.choice};
}

}  // namespace

RunResult train_translation(const TranslationOptions& requested, std::FILE* log, const RunControl& control) {
  RunKit kit(control, kEncoderDecoderKind, "potop translate train", log);
  kit.refuse_on_resume({{"--init-from", !requested.init_from.empty()}, {"--tokenizer", !requested.tokenizer.empty()}},
                       "model and tokenizer");
  TranslationOptions options = kit.resume(requested);
  exact_sizes_where_asked(options, kit.control(), kit.resuming() ? &kit.state().options : nullptr);
  validate(options);
  const Side side = sides(options);
  kit.start(options, {"train.tsv", "dev.tsv", "test.tsv"}, options.init_from);
  // Data: pairs, the split (the same for both directions), the tokenizer.
  const PairFile file = read_pairs(options.data, options.bad_lines);
  if (file.skipped > 0)
    std::fprintf(log, "note: %s (--bad-lines error refuses such a file)\n", describe_skipped(options.data, file).c_str());
  const uint64_t data_hash = fnv1a64(read_text_file(options.data));
  kit.check_data(data_hash, options.data, "pairs");
  const PairSplit split = split_of(options, file.pairs);
  Start start = kit.resuming() ? Start{kit.resumed_tokenizer(), nullptr, sentinels_of_run(kit, 0), ""}
                               : new_start(options, kit.control().given, split);
  const Tokenizer& tokenizer = *start.tokenizer;
  const EncodedSplit encoded = encode_split(options, split, side, tokenizer);

  const EncoderDecoderConfig config = run_config(kit, options.model, tokenizer, start.sentinels);
  const int block = options.model.block_size;
  const BatchShape largest{std::max(1, options.batch_tokens / block), block, block};  // B·max(S, T) <= batch_tokens
  EncoderDecoder& model = build_encoder_decoder(kit, config, largest, options.seed, std::move(start.base));
  PairBatches batches(encoded.train, options.batch_tokens, hash64(options.seed, 1));
  std::optional<PairBatches> dev_batches;
  if (!encoded.dev.empty()) dev_batches.emplace(encoded.dev, options.batch_tokens, 0);

  print_split(log, options, file, split, encoded);
  std::fprintf(log, "tokenizer: shared %s, %d tokens; %d batches of about %d tokens per epoch\n",
               tokenizer.kind().c_str(), tokenizer.size(), batches.size(), options.batch_tokens);
  if (!start.from.empty())
    std::fprintf(log, "fine-tuning from %s (its sentinels, %d, stay in the vocabulary, never emitted)\n",
                 start.from.c_str(), config.sentinels);
  log_model(log, config, model);

  ModelJob job = encoder_decoder_job(
      config, [&](long k, Batch& b) { batches.fill(k, b); }, batches.target_tokens() / batches.size(),
      "about " + std::to_string(options.batch_tokens) + " padded tokens (--batch-tokens)", options.seed,
      [&](const nlohmann::json& saved) {
        // config.json first: split files without it would look like the user's to the next run.
        save_translation_files(options.out, config, tokenizer, options.source, options.target, saved);
        if (!kit.resuming()) {
          write_pairs(fs::path(options.out) / "train.tsv", split.train);
          write_pairs(fs::path(options.out) / "dev.tsv", split.dev);
          write_pairs(fs::path(options.out) / "test.tsv", split.test);
        }
      });
  const DevSentences dev_sentences = dev_sentences_of(options, split, side, tokenizer);
  job.evaluate = [&](int, const std::function<bool()>& stop) {
    return evaluate_translation(kit.parallel(), model, batches, dev_batches ? &*dev_batches : nullptr, dev_sentences,
                                tokenizer, stop);
  };
  return kit.run(job, tokenizer, to_json(config), to_json(options), data_hash);
}

}  // namespace potop
