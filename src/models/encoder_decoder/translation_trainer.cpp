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
#include "train/adamw.h"
#include "train/batch_parallel.h"
#include "train/evaluate.h"
#include "train/memory_check.h"
#include "train/resume.h"
#include "train/schedule.h"

namespace potop {

std::vector<Field> translation_fields(TranslationOptions& o) {
  std::vector<Field> fields = {
      {"data", "TSV file of sentence pairs, one pair a line: FIRST<tab>SECOND", &o.data, false},
      {"out", "model directory to write", &o.out, false},
      {"source", "language to translate from (one of --columns)", &o.source, false},
      {"target", "language to translate into (one of --columns)", &o.target, false},
      {"columns", "languages of the file's two columns, comma-separated", &o.columns, false},
      {"bad-lines", "a line without one tab or with an empty side: skip (counted, reported) or error",
       choice(o.bad_lines, {{BadLines::kSkip, "skip"}, {BadLines::kError, "error"}}), false},
      {"dev-size", "pairs held out for evaluation during training (dev.tsv)", &o.dev_size, false},
      {"test-size", "pairs held out for the final test (test.tsv)", &o.test_size, false},
      {"vocab-size", "subword tokens of the shared source/target BPE tokenizer", &o.vocab_size, true},
  };
  for (Field& f : encoder_decoder_fields(o.model)) fields.push_back(std::move(f));
  const std::vector<Field> rest = {
      {"batch-tokens", "padded tokens per batch (B x longest sentence), batches of similar lengths",
       &o.batch_tokens, false},
      {"steps", "optimizer steps", &o.steps, false},
      {"lr-schedule", "noam (the paper's warm-up then 1/sqrt(step)) or cosine (potop's)",
       choice(o.schedule, {{LrSchedule::kNoam, "noam"}, {LrSchedule::kCosine, "cosine"}}), false},
      {"lr", "noam: factor on d^-0.5 min(step^-0.5, step warmup^-1.5); cosine: peak learning rate", &o.lr, false},
      {"min-lr", "cosine: final learning rate", &o.min_lr, false},
      {"warmup", "warm-up steps", &o.warmup, false},
      {"beta1", "Adam beta1", &o.beta1, false},
      {"beta2", "Adam beta2", &o.beta2, false},
      {"eps", "Adam epsilon", &o.eps, false},
      {"weight-decay", "decoupled weight decay (0: Adam, as the paper)", &o.weight_decay, false},
      {"grad-clip", "clip the gradient norm to this (0: no clipping)", &o.grad_clip, false},
      {"eval-interval", "evaluate dev loss and BLEU every this many steps", &o.eval_interval, false},
      {"eval-sentences", "dev sentences translated (greedy) for BLEU and chrF at each evaluation",
       &o.eval_sentences, false},
      {"log-interval", "print progress every this many steps", &o.log_interval, false},
      {"seed", "random seed (initialisation, batch order, dropout)", &o.seed, false},
      {"threads", "threads (0: all cores)", &o.threads, false},
      {"keep", "also keep a resumable step-<N>.safetensors every this many steps (0: none)", &o.keep, false},
      {"skip-nonfinite", "skip steps whose loss or gradient norm is not finite", &o.skip_nonfinite, false},
  };
  fields.insert(fields.end(), rest.begin(), rest.end());
  return fields;
}

nlohmann::json to_json(const TranslationOptions& options) {
  TranslationOptions copy = options;
  return fields_to_json(translation_fields(copy));
}

void validate(const TranslationOptions& o) {
  auto positive = [](int v, const char* flag) {
    if (v <= 0) throw Error(std::string("--") + flag + " must be positive (got " + std::to_string(v) + ")");
  };
  if (o.data.empty()) throw Error("--data is required: a TSV file of sentence pairs");
  positive(o.steps, "steps"), positive(o.batch_tokens, "batch-tokens"), positive(o.eval_interval, "eval-interval");
  positive(o.log_interval, "log-interval"), positive(o.vocab_size, "vocab-size"), positive(o.warmup, "warmup");
  if (o.eval_sentences < 0) throw Error("--eval-sentences must be >= 0");
  if (!(o.lr > 0 && std::isfinite(o.lr))) throw Error("--lr must be positive");
  if (o.batch_tokens < o.model.block_size)
    throw Error("--batch-tokens " + std::to_string(o.batch_tokens) + " is below --block-size " +
                std::to_string(o.model.block_size) + ": the longest pair would not fit in a batch");
  EncoderDecoderConfig shape = o.model;
  shape.vocab_size = std::max(shape.vocab_size, 1);  // comes from the tokenizer, later
  shape.validate("model");
}

float learning_rate(const TranslationOptions& o, int step) {
  if (o.schedule == LrSchedule::kCosine) return LRSchedule{o.lr, o.min_lr, o.warmup, o.steps}.at(step);
  // The paper: lr = d^-0.5 · min(s^-0.5, s · warmup^-1.5), s = step + 1.
  const double s = step + 1.0, w = o.warmup;
  return static_cast<float>(o.lr / std::sqrt(double(o.model.n_embd)) * std::min(1.0 / std::sqrt(s), s * std::pow(w, -1.5)));
}

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

}  // namespace

RunResult train_translation(const TranslationOptions& requested, std::FILE* log, const TranslationControl& control) {
  const bool resuming = !control.resume.empty();
  TranslationOptions options = requested;
  std::optional<SafetensorsFile> state_file;
  TrainState state;
  fs::path resume_dir;
  if (resuming) {
    state_file.emplace(resolve_resume_path(control.resume, resume_dir));
    state = read_train_state(*state_file);
    // The checkpoint's options, with the flags given now on top (the model's shape is checked below).
    apply_json(translation_fields(options), state.options, state_file->path() + ": options", "option", control.given);
    options.out = resume_dir.string();
  }
  validate(options);
  apply_threads_flag(options.threads);
  const fs::path out = options.out;
  const Side side{column_of(options, options.source, "source")};
  if (column_of(options, options.target, "target") == side.source_column)
    throw Error("--target " + options.target + ": the same column as --source " + options.source);

  // Data: pairs, the split (the same for both directions), the tokenizer.
  const PairFile file = read_pairs(options.data, options.bad_lines);
  if (file.skipped > 0) {
    std::string lines;
    for (const std::string& n : file.notes) lines += (lines.empty() ? "" : ", ") + n;
    std::fprintf(log, "note: %s: %d bad lines skipped: %s%s (--bad-lines error refuses such a file)\n",
                 options.data.c_str(), file.skipped, lines.c_str(), file.skipped > int(file.notes.size()) ? ", ..." : "");
  }
  const uint64_t data_hash = fnv1a64(read_text_file(options.data));
  if (resuming && data_hash != state.data_hash)
    throw Error("--data " + options.data + ": differs from the pairs the run in " + out.string() + " was trained on");
  const PairSplit split = split_pairs(file.pairs, options.dev_size, options.test_size);
  ensure_writable_directory(out);
  if (!resuming && fs::exists(out / "config.json") && !control.force)
    throw Error("--out " + out.string() + " already holds a model; continue it with --resume " + out.string() +
                ", replace it with --force, or choose another --out");
  std::unique_ptr<Tokenizer> tokenizer;
  if (resuming) {
    tokenizer = load_tokenizer_dir(out);
    if (tokenizer->hash() != state.vocab_hash) throw Error(out.string() + ": its tokenizer does not match the checkpoint");
  } else {
    std::string text;  // both sides of the training pairs: one shared vocabulary
    for (const SentencePair& p : split.train) text.append(p.first).append("\n").append(p.second).append("\n");
    TokenizerTrainOptions t;
    t.kind = TokenizerKind::kBpe, t.vocab_size = options.vocab_size;
    tokenizer = train_tokenizer(text, options.data, t);
  }
  int too_long_train = 0, too_long_dev = 0;
  const int block = options.model.block_size;
  const std::vector<EncodedPair> train = encode_pairs(split.train, side, *tokenizer, block, too_long_train);
  const std::vector<EncodedPair> dev = encode_pairs(split.dev, side, *tokenizer, block, too_long_dev);
  if (train.empty()) throw Error(options.data + ": no training pair fits in --block-size " + std::to_string(block));

  EncoderDecoderConfig config = options.model;
  config.vocab_size = tokenizer->size();
  config.validate("model");
  if (resuming) {
    EncoderDecoderConfig saved;
    update_from_json(saved, state.config, state_file->path() + ": potop.config");
    saved.dropout = config.dropout, saved.label_smoothing = config.label_smoothing;  // may change on resume
    if (to_json(saved) != to_json(config))
      throw Error(state_file->path() + ": its model config " + state.config.dump() + " does not match " +
                  to_json(config).dump() + "; a resumed run keeps the model's shape");
  }
  const int threads = get_threads();
  const BatchShape largest{std::max(1, options.batch_tokens / block), block, block};  // B·max(S, T) <= batch_tokens
  MemoryPlan plan = BatchParallel::plan([&](const BatchShape& s) { return EncoderDecoder::plan(config, s); }, largest,
                                        threads);
  plan.lines.push_back({"Adam moments (m, v)", 2.0 * EncoderDecoder::parameter_layout(config).total_bytes()});
  check_training_fits(plan, threads);
  EncoderDecoder model(config);
  if (!resuming) model.init_weights(options.seed);
  BatchParallel parallel(model, threads);
  parallel.zero_grad();
  AdamW optimizer(model.parameters().layout(),
                  {options.lr, options.beta1, options.beta2, options.eps, options.weight_decay});
  const std::vector<TensorGroup> optimizer_state{{"adamw.m.", &optimizer.m()}, {"adamw.v.", &optimizer.v()}};
  if (resuming) {
    load_train_state_tensors(*state_file, model.parameters(), optimizer_state);
    optimizer.set_steps_taken(state.adam_steps);
    state_file.reset();
  }
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
  std::fprintf(log, "threads: %d, GEMM: %s; memory: about %s\n", threads, blas_name(),
               format_bytes(size_t(plan.total())).c_str());
  if (resuming) std::fprintf(log, "resuming %s at step %d of %d\n", out.string().c_str(), state.step, options.steps);
  if (!resuming) {
    write_pairs(out / "train.tsv", split.train);
    write_pairs(out / "dev.tsv", split.dev);
    write_pairs(out / "test.tsv", split.test);
    for (const char* name : {"latest.safetensors", "best.safetensors", "metrics.jsonl", kResumeFile}) {
      std::error_code ec;
      fs::remove(out / name, ec);  // --force: the previous model's files go
    }
  }
  save_translation_files(out, config, *tokenizer, options.source, options.target, to_json(options));

  const ModelHeader header = encoder_decoder_header(config, *tokenizer);
  const uint64_t dropout_seed = hash64(options.seed, 3);
  const DecodeOptions greedy{};
  RunJob job;
  job.step = [&](int step) {
    const StepSettings s{learning_rate(options, step), options.grad_clip, 1, dropout_seed, step};
    return train_step(parallel, optimizer, s, [&] {
      Batch b;
      batches.fill(step, b);
      return b;
    });
  };
  job.evaluate = [&](int, const std::function<bool()>& stop) -> std::optional<Evaluation> {
    // The loss on every dev batch, and on as many training batches spread over the lengths.
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
    std::vector<std::string> hyps, refs;
    std::vector<std::vector<int>> sources;
    for (int i = 0; i < std::min<int>(options.eval_sentences, int(split.dev.size())); ++i) {
      std::vector<int> src = tokenizer->encode(side.source(split.dev[i]), "source", Unknown::kReplace, nullptr);
      src.push_back(kEosId);
      if (int(src.size()) > block) src.resize(block);
      sources.push_back(std::move(src));
      refs.push_back(side.target(split.dev[i]));
    }
    const auto outs = translate_in_batches(model, sources, greedy, kDefaultBatchSentences, stop);
    if (!outs) return std::nullopt;
    for (const std::vector<int>& out : *outs) hyps.push_back(tokenizer->decode(out));
    if (!hyps.empty()) {
      e.extra.push_back({"dev_bleu", corpus_bleu(hyps, refs).score});
      e.extra.push_back({"dev_chrf", corpus_chrf(hyps, refs)});
    }
    return e;
  };
  job.save_weights = [&](const fs::path& path, const Metadata& meta) {
    save_weights(path, model.parameters(), header, meta);
  };
  job.save_state = [&](const fs::path& path, TrainState& s) {
    s.adam_steps = optimizer.steps_taken();
    s.sampler = Rng(hash64(options.seed, 1)).state();  // unused: batch k is a function of k alone
    s.data_hash = data_hash, s.vocab_hash = tokenizer->hash();
    s.options = to_json(options), s.config = to_json(config);
    save_train_state(path, model.parameters(), header, optimizer_state, s);
  };
  job.stop_requested = control.stop_requested;
  RunSettings settings;
  settings.out = out, settings.steps = options.steps, settings.eval_interval = options.eval_interval;
  settings.log_interval = options.log_interval, settings.keep = options.keep;
  settings.skip_nonfinite = options.skip_nonfinite;
  settings.tokens_per_step = std::max<long>(1, batches.target_tokens() / batches.size());
  settings.command = "potop translate train";
  return run_training(settings, job, state, resuming, log);
}

}  // namespace potop
