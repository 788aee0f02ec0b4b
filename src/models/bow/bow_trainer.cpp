#include "models/bow/bow_trainer.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "models/bow/bow_model_dir.h"
#include "checkpoint/model_dir.h"
#include "checkpoint/train_state.h"
#include "core/error.h"
#include "core/file_io.h"
#include "core/hash.h"
#include "core/threads.h"
#include "data/dataset.h"
#include "data/text_file.h"
#include "kernels/gemm.h"
#include "models/bow/bow.h"
#include "tokenizer/train_tokenizer.h"
#include "tokenizer/utf8.h"
#include "train/adamw.h"
#include "train/batch_parallel.h"
#include "train/evaluate.h"
#include "train/memory_check.h"
#include "train/resume.h"
#include "train/schedule.h"

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

}  // namespace

RunResult train_bow(const BowOptions& requested, std::FILE* log, const TrainControl& control) {
  const bool resuming = !control.resume.empty();
  std::optional<SafetensorsFile> state_file;
  TrainState state;
  BowOptions options = requested;
  fs::path resume_dir;
  if (resuming) {
    // The run's options, with those given on the command line on top (--steps to extend it).
    state_file.emplace(resolve_resume_path(control.resume, resume_dir));
    state = read_train_state(*state_file);
    if (read_model_kind(*state_file) != kBowKind)
      throw Error(state_file->path() + ": not the training state of potop bow train (kind '" +
                  read_model_kind(*state_file) + "')");
    options = BowOptions{};
    apply_options_json(options, state.options, state_file->path() + ": training options", {});
    apply_json(bow_option_fields(options), to_json(requested), "command line", "option",
               [&] {  // skip every option not given
                 std::vector<std::string> skip;
                 for (const Field& f : bow_option_fields(options))
                   if (std::find(control.given.begin(), control.given.end(), f.name) == control.given.end())
                     skip.push_back(f.name);
                 return skip;
               }());
    for (const Field& f : bow_option_fields(options))
      if (f.shape && std::find(control.given.begin(), control.given.end(), f.name) != control.given.end())
        throw Error("--" + f.name + ": a resumed run keeps its model's shape; drop the flag");
    options.out = resume_dir.string();
    if (options.steps < state.step)
      throw Error("--steps " + std::to_string(options.steps) + " is below the checkpoint's step " +
                  std::to_string(state.step));
  }
  validate(options);
  apply_threads_flag(options.threads);
  const fs::path out = options.out;

  // Data: text -> words -> ids -> train/val split.
  const std::string text_utf8 = read_utf8_text(options.data);
  const uint64_t data_hash = hash_training_text(utf8_decode(text_utf8, options.data));
  std::unique_ptr<Tokenizer> tokenizer;
  if (resuming) {
    tokenizer = load_tokenizer_dir(out);
    if (tokenizer->hash() != state.vocab_hash)
      throw Error(tokenizer_file_in(out, tokenizer->kind()).string() + ": does not match the vocabulary of " +
                  state_file->path());
    if (data_hash != state.data_hash && !control.allow_data_change)
      throw Error("--data " + options.data + ": differs from the text the run in " + out.string() +
                  " was trained on; pass --allow-data-change to continue on this text");
  } else if (!options.tokenizer.empty()) {
    tokenizer = load_tokenizer_dir(options.tokenizer);
  } else {
    TokenizerTrainOptions t;
    t.kind = TokenizerKind::kWord, t.min_count = options.min_count;
    tokenizer = train_tokenizer(text_utf8, options.data, t);
  }
  if (tokenizer->size() <= 4 && tokenizer->kind() == "word")
    throw Error("--min-count " + std::to_string(options.min_count) + ": no word of " + options.data +
                " is that frequent, so the vocabulary is empty; lower it");
  UnknownReport unknown;
  const std::vector<int> tokens = tokenizer->encode(text_utf8, options.data, Unknown::kReplace, &unknown);
  const TokenSplit split = split_tokens(tokens, options.val_fraction, options.model.block_size, options.data);
  ensure_writable_directory(out);
  const std::vector<fs::path> previous = resuming ? std::vector<fs::path>{} : previous_run_files(out, control.force);

  // The model, checked against the machine's memory before anything is allocated.
  BowConfig config = options.model;
  config.vocab_size = tokenizer->size();
  config.validate("model");
  if (resuming) {
    BowConfig saved;
    update_from_json(saved, state.config, state_file->path() + ": potop.config");
    if (to_json(saved) != to_json(config))
      throw Error(state_file->path() + ": its model config " + state.config.dump() + " does not match " +
                  to_json(config).dump());
  }
  const int B = options.batch_size, T = config.block_size;
  const int replicas = std::min(get_threads(), B);
  MemoryPlan plan = BatchParallel::plan([&](const BatchShape& s) { return BowLM::plan(config, s); }, {B, T}, replicas);
  plan.lines.push_back({"AdamW moments (m, v)", 2.0 * BowLM::parameter_layout(config).total_bytes()});
  check_training_fits(plan, replicas);
  BowLM model(config);
  long documents = 0;
  if (!resuming) {
    model.init_weights(options.seed);
    if (config.attention == BowAttention::kIdf) {
      std::vector<long> df;
      documents = document_frequencies(split.train, newline_id(*tokenizer), config.vocab_size, df);
      model.set_idf(df, documents);
    }
  }
  BatchParallel parallel(model, replicas);
  parallel.reserve({B, T});
  parallel.zero_grad();
  AdamW optimizer(model.parameters().layout(), {options.lr, options.beta1, options.beta2, 1e-8f, options.weight_decay});
  const std::vector<TensorGroup> optimizer_state{{"adamw.m.", &optimizer.m()}, {"adamw.v.", &optimizer.v()}};
  BatchSampler sampler(split.train, B, T, hash64(options.seed, 1));
  if (resuming) {
    load_train_state_tensors(*state_file, model.parameters(), optimizer_state);
    optimizer.set_steps_taken(state.adam_steps);
    sampler.set_state(state.sampler);
    state_file.reset();
  }

  std::fprintf(log, "data: %s: %s tokenizer, vocabulary %d words, train %zu / val %zu words\n", options.data.c_str(),
               tokenizer->kind().c_str(), tokenizer->size(), split.train.size(), split.val.size());
  if (unknown.count > 0)
    std::fprintf(log, "note: %s: %s replaced by <unk>\n", options.data.c_str(), unknown.describe().c_str());
  std::fprintf(log, "model: bag-of-words LM, attention %s, d %d, window %d%s: %zu parameters\n",
               to_string(config.attention).c_str(), config.n_embd, config.block_size,
               config.attention == BowAttention::kAdditive ? (", hidden " + std::to_string(config.attn_hidden)).c_str()
                                                           : "",
               model.num_parameters());
  if (config.attention == BowAttention::kIdf && !resuming)
    std::fprintf(log, "idf: document frequencies over %ld lines of the training words\n", documents);
  std::fprintf(log, "threads: %d, %d running the model side by side, GEMM: %s\n", get_threads(), replicas,
               blas_name());
  if (options.verbose) print_memory_plan(log, plan);
  if (resuming) {
    std::fprintf(log, "resuming %s at step %d of %d\n", out.string().c_str(), state.step, options.steps);
  } else if (!previous.empty()) {
    for (const fs::path& f : previous) fs::remove(f);
    std::fprintf(log, "note: --force: the model that was in %s is removed; a new run starts\n", out.string().c_str());
  }
  save_model_files(out, kBowKind, to_json(config), *tokenizer, to_json(options));

  // The job the run harness runs: the GPT trainer's, with this model.
  const LRSchedule schedule{options.lr, options.min_lr, options.warmup, options.decay_steps()};
  const uint64_t eval_seed = hash64(options.seed, 2), dropout_seed = hash64(options.seed, 3);
  std::vector<int> x(size_t(B) * T), y(size_t(B) * T);
  const ModelHeader header{kBowKind, to_json(config), tokenizer.get()};
  RunJob job;
  job.step = [&](int step) {
    const StepSettings s{schedule.at(step), options.grad_clip, options.grad_accum, dropout_seed, step};
    return train_step(parallel, optimizer, s, [&] {
      sampler.next(x.data(), y.data());
      return Batch{{B, T}, x.data(), y.data()};
    });
  };
  job.evaluate = [&](int, const std::function<bool()>& stop) {
    return evaluate_train_val(parallel, split.train, split.val, B, T, options.eval_iters, eval_seed, x, y, stop);
  };
  job.save_weights = [&](const fs::path& path, const Metadata& meta) {
    save_weights(path, model.parameters(), header, meta);
  };
  job.save_state = [&](const fs::path& path, TrainState& s) {
    s.adam_steps = optimizer.steps_taken(), s.sampler = sampler.state();
    s.data_hash = data_hash, s.vocab_hash = tokenizer->hash();
    s.options = to_json(options), s.config = to_json(config);
    save_train_state(path, model.parameters(), header, optimizer_state, s);
  };
  job.stop_requested = control.stop_requested;
  RunSettings settings;
  settings.out = out, settings.steps = options.steps, settings.eval_interval = options.eval_interval;
  settings.log_interval = options.log_interval, settings.keep = options.keep;
  settings.skip_nonfinite = options.skip_nonfinite;
  settings.tokens_per_step = long(B) * T * options.grad_accum;
  settings.command = "potop bow train";
  return run_training(settings, job, state, resuming, log);
}

}  // namespace potop
