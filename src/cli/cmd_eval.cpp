// `potop eval`: a model's loss and perplexity, whatever its kind. A language model (GPT, bag of
// words) scores the windows of a text (bits per character too); a translation model scores the
// target side of a TSV of sentence pairs given the source side (by default the test.tsv its
// training run held out).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/model_args.h"
#include "core/error.h"
#include "core/threads.h"
#include "data/dataset.h"
#include "data/parallel_corpus.h"
#include "data/prepared_data.h"
#include "data/text_file.h"
#include "models/bert/bert_kind.h"
#include "models/bert/masked_batches.h"
#include "models/encoder_decoder/translation_model.h"
#include "train/batch_parallel.h"
#include "train/evaluate.h"
#include "tokenizer/utf8.h"

namespace potop::cli {

namespace {

struct EvalArgs {
  ModelArgs model;
  std::string data;
  std::string split;    // prepared data: "val" (default) or "train"
  std::string columns;  // sentence pairs: the languages of the file's columns
  Unknown unknown = Unknown::kError;
  bool unknown_given = false;
  int batch_size = 16, stride = 0;
  double mask_fraction = 0.15;  // a BERT's masking
  uint64_t seed = 1;
  bool json = false;
};

void print_json(const nlohmann::json& j) {
  std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

// The tokens a language model scores: a text, encoded here, or a prepared data directory's split,
// read through its mapped shards.
struct EvalTokens {
  UnknownReport unknown;
  std::vector<int> encoded;
  std::optional<PreparedData> prepared;
  TokenView tokens;
};

void read_tokens(const EvalArgs& a, const LoadedModel& m, Unknown policy, EvalTokens& out) {
  if (is_data_directory(a.data)) {
    out.prepared.emplace(PreparedData::open(a.data));
    check_tokenizer(*out.prepared, *m.tokenizer, "the model's tokenizer (" + m.weights.string() + ")");
    const DataSplit split = a.split == "train" ? DataSplit::kTrain : DataSplit::kVal;
    if (out.prepared->size(split) == 0)
      throw Error(a.data + ": has no " + to_string(split) + " split (prepared with --val-fraction 0); pass --split train");
    out.tokens = TokenView(*out.prepared, split);
    return;
  }
  if (!a.split.empty()) throw Error("--split " + a.split + ": only for a data directory from potop prepare");
  const std::string text = read_utf8_text(a.data);
  // Characters the vocabulary lacks are counted first, so that the error names them all.
  out.encoded = m.tokenizer->encode(text, a.data, policy == Unknown::kError ? Unknown::kSkip : policy, &out.unknown);
  if (out.unknown.count > 0 && policy == Unknown::kError)
    throw Error(a.data + ": " + out.unknown.describe() + "; pass --unknown skip or --unknown replace to score the rest");
  out.tokens = TokenView(out.encoded);
}

// A language model (GPT, bag of words) on every window of a text: loss per token, perplexity and
// bits per character.
int eval_windows_of_text(const EvalArgs& a, LoadedModel& m) {
  if (a.data.empty()) throw Error("--data is required for " + m.kind->noun + ": a text file, or a data directory");
  // A bag-of-words LM was trained with the words its vocabulary lacks as <unk>: scored as such.
  const Unknown policy = a.unknown_given ? a.unknown : m.kind->scored_unknown;
  EvalTokens text;
  read_tokens(a, m, policy, text);
  const int B = a.batch_size, T = m.config.at("block_size").get<int>();
  const std::vector<EvalWindow> windows = eval_windows(text.tokens.size(), T, a.stride);
  if (windows.empty()) throw Error(a.data + ": needs at least 2 tokens to score");
  announce(m);
  if (text.unknown.count > 0)
    std::fprintf(stderr, "note: %s: %s %s\n", a.data.c_str(), text.unknown.describe().c_str(),
                 !a.unknown_given                ? "scored as <unk>, as in training"
                 : policy == Unknown::kSkip ? "left out (--unknown)"
                                            : "replaced (--unknown)");
  // Bits per character, the unit every tokenizer shares: each scored token counts the
  // characters of its text (Tokenizer::char_count; a byte token counts 1 for a character's
  // first byte, 0 for the others).
  std::vector<int> characters(static_cast<size_t>(m.tokenizer->size()));
  for (int id = 0; id < m.tokenizer->size(); ++id) characters[size_t(id)] = m.tokenizer->char_count(id);
  std::vector<int> x(size_t(B) * T), y(size_t(B) * T);
  BatchParallel parallel(*m.model, std::min(get_threads(), B));
  size_t first = 0;
  long scored_chars = 0;
  const LossTotal total = evaluate_loss(parallel, [&](Batch& batch) {
    if (first >= windows.size()) return false;
    fill_eval_batch(x.data(), y.data(), text.tokens, windows, first, B, T);
    for (const int target : y)
      if (target >= 0) scored_chars += characters[size_t(target)];
    first += B;
    batch = Batch{{B, T}, x.data(), y.data()};
    return true;
  });
  const long counted = total.targets;
  const double loss = total.mean();
  const double perplexity = std::exp(loss), bits = total.sum / std::log(2.0) / std::max(1L, scored_chars);
  if (a.json) {
    print_json({{"kind", m.kind->name},
                {"loss", loss},
                {"perplexity", perplexity},
                {"bits_per_char", bits},
                {"tokens", counted},
                {"characters", scored_chars},
                {"unknown", text.unknown.count},
                {"checkpoint", m.weights.string()}});
  } else {
    std::printf("%s (%s): %ld tokens, %ld characters scored\nloss %.4f per token | perplexity %.3f | bits/char %.4f\n",
                a.data.c_str(), m.weights.string().c_str(), counted, scored_chars, loss, perplexity, bits);
  }
  return 0;
}

// A BERT on a text: every window of block_size - 2 tokens, in order, as [CLS] window [SEP], masked
// as in training with a fixed seed (--seed), so that two models are scored on the same masks:
// the masked-token loss, its perplexity, and how often the top guess is the original token.
int eval_masked_lm(const EvalArgs& a, LoadedModel& m) {
  if (a.data.empty()) throw Error("--data is required for " + m.kind->noun + ": a text file, or a data directory");
  if (a.stride != 0) throw Error("--stride: not for " + m.kind->noun + ", whose windows do not overlap");
  EvalTokens text;
  read_tokens(a, m, a.unknown, text);
  const BertConfig config = config_from_json<BertConfig>(m.config);
  const int B = a.batch_size, T = config.block_size, W = T - 2;
  const long n = static_cast<long>(text.tokens.size());
  if (n < 1) throw Error(a.data + ": has no token to score");
  const MaskingRule rule = masking_rule(a.mask_fraction, bert_specials(config, *m.tokenizer), *m.tokenizer);
  announce(m);
  BatchParallel parallel(*m.model, std::min(get_threads(), B));
  std::vector<int> windows(static_cast<size_t>(B) * W), lengths(static_cast<size_t>(B));
  MaskedRows rows;
  MaskedLMScore score;
  Rng rng(a.seed);
  for (long start = 0; start < n;) {
    int rows_now = 0;
    for (; rows_now < B && start < n; ++rows_now, start += W) {
      const int len = static_cast<int>(std::min<long>(W, n - start));
      text.tokens.read(size_t(start), size_t(len), windows.data() + size_t(rows_now) * W);
      lengths[size_t(rows_now)] = len;
    }
    score.add(parallel, rows.fill(windows.data(), lengths.data(), rows_now, T, rule, rng));
  }
  if (a.json) {
    print_json({{"kind", m.kind->name},
                {"loss", score.loss()},
                {"perplexity", std::exp(score.loss())},
                {"accuracy", score.accuracy()},
                {"masked", score.masked},
                {"tokens", n},
                {"checkpoint", m.weights.string()}});
  } else {
    std::printf("%s (%s): %ld tokens, %ld masked (%.0f%%)\nmasked-LM loss %.4f per token | perplexity %.3f | "
                "accuracy %.2f%%\n",
                a.data.c_str(), m.weights.string().c_str(), n, score.masked, 100 * a.mask_fraction, score.loss(),
                std::exp(score.loss()), 100 * score.accuracy());
  }
  return 0;
}

// A translation model on a TSV of pairs: the loss of each reference target given its source,
// per target token (</s> included), over every pair that fits the model's block size.
int eval_pairs(const EvalArgs& a, const ModelKind& kind, const TranslationModel& m) {
  require_sentence_pairs(m, a.model.model);
  const std::string data = !a.data.empty() ? a.data : (fs::path(a.model.model) / "test.tsv").string();
  const bool source_first = source_is_first_column(m, a.columns, data);
  const PairFile file = read_pairs(data);
  const int block = m.config.block_size;
  std::vector<EncodedPair> examples;
  int too_long = 0;
  for (const SentencePair& p : file.pairs) {
    const std::string where = data + ":" + std::to_string(p.line);
    EncodedPair e{m.tokenizer->encode(source_first ? p.first : p.second, where, Unknown::kReplace, nullptr),
                  m.tokenizer->encode(source_first ? p.second : p.first, where, Unknown::kReplace, nullptr)};
    e.source.push_back(kEosId);
    if (int(e.source.size()) > block || int(e.target.size()) + 1 > block) {
      ++too_long;
      continue;
    }
    examples.push_back(std::move(e));
  }
  if (examples.empty()) throw Error(data + ": no pair fits in the model's block size " + std::to_string(block));
  announce(m);
  // The model's probabilities, not the label-smoothed training loss: the same weights in a model
  // built without smoothing.
  EncoderDecoderConfig plain = m.config;
  plain.label_smoothing = 0;
  EncoderDecoder model(plain);
  const Arena& weights = m.model->parameters().values();
  std::memcpy(model.parameters().values().data(), weights.data(), weights.bytes());
  PairBatches batches(examples, std::max(1, a.batch_size) * block, 0);
  BatchParallel parallel(model, get_threads());
  int next = 0;
  const LossTotal total = evaluate_loss(parallel, [&](Batch& b) {
    if (next == batches.size()) return false;
    batches.fill_sorted(next++, b);
    return true;
  });
  const double loss = total.mean(), perplexity = std::exp(loss);
  if (a.json) {
    print_json({{"kind", kind.name},
                {"loss", loss},
                {"perplexity", perplexity},
                {"tokens", total.targets},
                {"pairs", examples.size()},
                {"too_long", too_long},
                {"bad_lines", file.skipped},
                {"checkpoint", m.weights.string()}});
  } else {
    std::printf("%s (%s): %zu pairs, %ld target tokens scored%s\nloss %.4f per target token | perplexity %.3f\n",
                data.c_str(), m.weights.string().c_str(), examples.size(), total.targets,
                too_long ? (", " + std::to_string(too_long) + " longer than the block size left out").c_str() : "",
                loss, perplexity);
  }
  return 0;
}

}  // namespace

Run add_eval(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "eval", "loss and perplexity of a model: a language model on a text, a translation model on sentence pairs");
  auto a = std::make_shared<EvalArgs>();
  add_model_options(cmd, a->model);
  cmd->add_option("--data", a->data,
                  "UTF-8 text file to score, or a data directory from potop prepare; for a translation model a TSV "
                  "of sentence pairs (default: the model directory's test.tsv)");
  cmd->add_option("--split", a->split, "with a prepared data directory: the split to score, val (default) or train")
      ->check(CLI::IsMember({"val", "train"}));
  auto* unknown = add_choice(cmd, "--unknown", unknown_choice(a->unknown),
                             "characters the model's vocabulary lacks: error (refuse the text), skip them, or replace "
                             "them (by a space, or the first character); the count and which ones are reported (a "
                             "bag-of-words LM: replace, by <unk>)");
  cmd->add_option("--columns", a->columns,
                  "sentence pairs: the languages of the file's columns (default: the model's training data)");
  cmd->add_option("--batch-size", a->batch_size, "windows (sentences) per forward pass")->capture_default_str();
  cmd->add_option("--stride", a->stride, "window advance; 0 = block size (non-overlapping)")->capture_default_str();
  cmd->add_option("--mask-fraction", a->mask_fraction, "a BERT: the fraction of tokens masked and scored")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0).description("") & CLI::TypeValidator<double>());
  add_seed(cmd, "--seed", a->seed, "a BERT: the seed of the masks (the same seed, the same masks)");
  cmd->add_flag("--json", a->json, "print the result as one JSON object");
  return [a, cmd, unknown]() {
    if (a->batch_size < 1) throw Error("--batch-size must be positive (got " + std::to_string(a->batch_size) + ")");
    a->unknown_given = unknown->count() > 0;
    LoadedModel m = load_model(a->model);
    const ModelKind& kind = *m.kind;
    if (!kind.can(Task::kLanguageModel) && !kind.can(Task::kSeq2Seq) && !kind.can(Task::kMaskedLM))
      throw wrong_kind(a->model.model, kind, "a model potop eval scores");
    const bool pairs = kind.can(Task::kSeq2Seq);
    // Flags of the other way of scoring are refused, not ignored.
    for (const char* flag : pairs ? std::vector<const char*>{"--split", "--stride", "--unknown"}
                                  : std::vector<const char*>{"--columns"})
      if (cmd->get_option(flag)->count() > 0)
        throw Error(std::string(flag) + ": not for " + m.kind->noun + " (" + a->model.model + ")");
    if (pairs) return eval_pairs(*a, kind, as_translation_model(std::move(m)));
    if (kind.can(Task::kMaskedLM)) return eval_masked_lm(*a, m);
    for (const char* flag : {"--mask-fraction", "--seed"})
      if (cmd->get_option(flag)->count() > 0) throw Error(std::string(flag) + ": only for a BERT, not " + m.kind->noun);
    return eval_windows_of_text(*a, m);
  };
}

}  // namespace potop::cli
