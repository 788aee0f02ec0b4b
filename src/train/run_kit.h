// The run kit: everything a trainer does that is not its model or its data, written once for every
// model. A trainer (models/<name>/<name>_trainer.cpp) reads like this:
//
//   RunKit kit(control, "bow", "potop bow train", log);
//   const BowOptions options = kit.resume(requested);   // the checkpoint's options, flags on top
//   validate(options);
//   kit.start(options);                                  // threads, ranks, --out / --force
//   ... its data and tokenizer (kit.resumed_tokenizer(), kit.check_data(hash, ...)) ...
//   BowLM& model = kit.build<BowLM>(config, shape, [&](BowLM& m) { m.init_weights(seed); });
//   ModelJob job{...};                                   // next_batch, evaluate, its sizes
//   return kit.run(job, *tokenizer, to_json(config), to_json(options), data_hash);
//
// and the kit does, the same way for every model:
//   - resume: the state file, the saved options with the flags given now on top, refusing a new
//     shape, a moved data split (without --allow-data-change), --steps below the saved step and
//     another --out; more --steps keeps the run's learning-rate schedule (only --lr-decay-steps
//     stretches it); changes that make the run differ from an uninterrupted one are noted;
//   - a new run: an --out holding an earlier run is refused without --force, and with it every
//     file that run wrote is removed (checkpoints, snapshots, metrics, its model's own files);
//   - the memory check, the model and its replicas, AdamW, the saved state's tensors;
//   - ranks (mpirun): the agreement on one setup, micro-batches dealt to the ranks, one writer,
//     a stop seen by any rank stops all, the exchange timeout;
//   - the start-up lines, config.json, and the harness (run.h): progress, evaluation,
//     checkpoints, metrics, stop signals.
#pragma once
#include <algorithm>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/train_state.h"
#include "core/dir_lock.h"
#include "core/safetensors.h"
#include "dist/communicator.h"
#include "tokenizer/tokenizer.h"
#include "train/adamw.h"
#include "train/batch_parallel.h"
#include "train/memory_check.h"
#include "train/run.h"
#include "train/resume.h"
#include "train/run_control.h"
#include "train/run_options.h"

namespace potop {

// What a model's trainer hands the kit to run: its batches, its evaluation, its sizes.
struct ModelJob {
  // Micro-batch `index` of the whole run (step · grad_accum · ranks + its place in the step): the
  // rows this rank trains on. A job whose batches are a function of the index (a translation
  // model's length buckets) uses it; a job with a sequential sampler draws its next batch.
  std::function<Batch(long index)> next_batch;
  // Called, in order, for the micro-batches other ranks train on, so that a sequential sampler
  // stays in step with one process's (null: the batches are a function of the index).
  std::function<void()> skip_batch;
  // The evaluation at `step` (run.h's RunJob::evaluate).
  std::function<std::optional<Evaluation>(int step, const std::function<bool()>& stop)> evaluate;
  // Tokens of one micro-batch, for tokens/s.
  long tokens_per_batch = 0;
  // The model's width, for the noam schedule's d_model^-0.5.
  int d_model = 1;
  // How one micro-batch is sized, for the ranks' start-up line ("8 rows of 64 tokens"); empty:
  // --batch-size rows of the largest shape's T tokens.
  std::string batch_text;
  // The sampler's state saved with a checkpoint (resumed through RunKit::state().sampler).
  std::function<Rng::State()> sampler_state;
  // Early stopping (RunSettings::patience): evaluations without a better score before the run
  // stops; 0: never.
  int patience = 0;
  // Writes the model directory's files beside the checkpoints: config.json, the tokenizer's.
  std::function<void(const nlohmann::json& options)> write_model_files;
};

class RunKit {
 public:
  // kind: the model kind saved in checkpoints ("gpt", "bow", "encoder-decoder"); command: how
  // users run this trainer ("potop bow train"), for messages.
  RunKit(const RunControl& control, std::string kind, std::string command, std::FILE* log);
  ~RunKit();
  RunKit(const RunKit&) = delete;
  RunKit& operator=(const RunKit&) = delete;

  bool resuming() const { return !control_.resume.empty(); }
  // Resuming: the first of `fresh_only` that was given (a flag only a new run takes: a tokenizer,
  // a model to start from) is refused, "<flag> starts a new run; a resumed run keeps its <kept>".
  struct FreshOnly {
    const char* flag;
    bool given;
  };
  void refuse_on_resume(std::initializer_list<FreshOnly> fresh_only, const std::string& kept) const;
  // The saved training state (resuming; a fresh one otherwise).
  const TrainState& state() const { return state_; }
  const RunControl& control() const { return control_; }
  std::FILE* log() const { return log_; }

  // The options of the run: `requested` for a new run; resuming, the checkpoint's with the
  // options given on the command line on top. Options is a model's options type, derived from
  // RunOptions, with a field list found by `fields_of(Options&)`.
  template <class Options>
  Options resume(const Options& requested) {
    if (!resuming()) return requested;
    open_state();
    Options mine;
    refuse_others_options(fields_of(mine));
    return resume_options(state_, requested, control_, out_, notes_);
  }

  // After the options are validated: threads, ranks, the output directory (an earlier run in it
  // is refused without --force; the directory is created once the model is built, so a run
  // refused for its data leaves none). own_files: the files the model writes into its directory
  // beside every run's (a translation model's train/dev/test.tsv), removed with them; found in an
  // --out without a run, they are the user's, and refused. init_from: the model a fine-tuning run
  // starts from, refused when it is in --out, which the run would replace.
  void start(const RunOptions& options, const std::vector<std::string>& own_files = {},
             const std::string& init_from = "");

  Communicator& comm() { return *comm_; }
  int ranks() const { return comm_->size(); }
  bool writer() const { return comm_->rank() == 0; }

  // Resuming: the tokenizer saved in the run's directory, checked against the state.
  std::unique_ptr<Tokenizer> resumed_tokenizer() const;
  // Resuming: data of another hash is refused unless --allow-data-change. what: "text", "pairs".
  void check_data(uint64_t data_hash, const std::string& data, const std::string& what) const;
  // Resuming: the model's config must be the saved one, but for the fields that are not part of
  // its shape (dropout: see `fields`, the config's field list).
  template <class Config>
  void check_config(const Config& config, std::vector<Field> (*fields)(Config&)) const {
    if (!resuming()) return;
    Config saved, now = config;
    update_from_json(saved, state_.config, state_path() + ": potop.config");
    std::vector<std::string> free;
    for (const Field& f : fields(now))
      if (!f.shape) free.push_back(f.json_key());
    compare_configs(to_json(saved), to_json(config), free);
  }

  // Replicas a batch of up to `rows` rows is split over: one per thread with --parallel batch.
  int replicas(int rows) const;

  // The model of the run, checked against the machine's memory before anything is allocated:
  // built from `config`, initialised by `init` on a new run or loaded from the saved state on
  // resume; its replicas for batches up to `largest` and AdamW over its parameters.
  template <class M, class Config>
  M& build(const Config& config, const BatchShape& largest, const std::function<void(M&)>& init) {
    const int n = replicas(largest.B);
    MemoryPlan plan = BatchParallel::plan([&](const BatchShape& s) { return M::plan(config, s); }, largest, n);
    plan.lines.push_back({"AdamW moments (m, v)", 2.0 * M::parameter_layout(config).total_bytes()});
    check_training_fits(plan, n);
    auto model = std::make_unique<M>(config);
    M& m = *model;
    if (!resuming()) init(m);
    adopt(std::move(model), plan, n, largest);
    return m;
  }
  BatchParallel& parallel() { return *parallel_; }
  AdamW& optimizer() { return *optimizer_; }

  // The start-up lines a run prints after the model's own (threads, ranks, memory, resume notes),
  // the agreement of the ranks, the model directory's files, then the harness until the end.
  // config: the model's config as saved; options: the run's options as saved (to_json).
  RunResult run(const ModelJob& job, const Tokenizer& tokenizer, const nlohmann::json& config,
                const nlohmann::json& options, uint64_t data_hash);

 private:
  void open_state();
  void refuse_init_from_out(const std::string& init_from) const;
  void refuse_others_options(const std::vector<Field>& fields) const;
  void refuse_users_files(const std::vector<std::string>& own_files) const;
  std::string state_path() const;
  void compare_configs(nlohmann::json saved, nlohmann::json now, const std::vector<std::string>& free) const;
  void adopt(std::unique_ptr<Model> model, const MemoryPlan& plan, int replicas, const BatchShape& largest);
  void agree(const nlohmann::json& options, uint64_t data_hash, const Tokenizer& tokenizer);

  const RunControl& control_;
  std::string kind_, command_;
  std::FILE* log_;
  std::optional<SafetensorsFile> state_file_;
  std::optional<DirectoryLock> lock_;    // held from the moment the output directory exists
  TrainState state_;
  fs::path out_;
  std::vector<std::string> notes_;       // resume: what differs from an uninterrupted run
  std::vector<fs::path> previous_;       // --force: the earlier run's files, removed at run()
  std::unique_ptr<Communicator> single_;  // the communicator of a one-process run
  Communicator* comm_ = nullptr;
  RunOptions options_;
  std::unique_ptr<Model> model_;
  std::optional<BatchParallel> parallel_;
  std::optional<AdamW> optimizer_;
  std::vector<TensorGroup> optimizer_state_;
  MemoryPlan plan_;
  BatchShape largest_;
};

}  // namespace potop
