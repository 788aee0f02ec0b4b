// The run harness: what every training command shares, whatever model it trains. It loops over
// the job's step callback and owns everything around it:
//   - evaluation cadence: at step 0, every eval_interval steps and at the end;
//   - checkpoints: latest.safetensors, best.safetensors when the score improved, a step-<N>
//     snapshot with keep, and the resumable training state last (its rename is the commit point);
//   - resume: the loop starts from a saved state; metrics.jsonl records written after that
//     state are dropped and written again, and temporary files a killed writer left are removed;
//   - metrics (metrics.jsonl; tokens/s of the steps since the previous record) and the live
//     progress line (step, loss, lr, tokens/s, ETA);
//   - stop requests (Ctrl-C, SIGTERM): finish the step (or abandon the evaluation under way: the
//     state then says it is still due), checkpoint, return interrupted;
//   - numerical guards: a step whose loss or gradient norm is not finite stops the run naming
//     the last good checkpoint, or is skipped (skip_nonfinite) and counted.
// A job (train/trainer.cpp for the GPT) sets up its model and data, fills in RunJob and calls
// run_training; docs/architecture.md shows how a new model's trainer plugs in.
#pragma once
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/train_state.h"
#include "core/safetensors.h"
#include "train/train_step.h"

namespace potop {

namespace fs = std::filesystem;

struct RunSettings {
  fs::path out;  // the model directory
  int steps = 0, eval_interval = 1, log_interval = 1;
  int keep = 0;                 // also a resumable step-<N> snapshot every keep steps (0: none)
  // Early stopping: stop when this many evaluations in a row have not improved the best score
  // (0: never). The best checkpoint stays the best one.
  int patience = 0;
  bool skip_nonfinite = false;  // skip non-finite steps instead of stopping
  long tokens_per_step = 0;     // for tokens/s
  bool profile = false;         // print the per-kernel table at the end
  std::string command = "potop train";  // how the user resumes: "<command> --resume <out>"
  // false on the ranks other than 0 of a multi-process run: they run every step and evaluation
  // but write no file (checkpoints, metrics.jsonl); rank 0 writes them alone.
  bool writes = true;
};

// One evaluation: the mean loss on the training data and on the held-out data (NaN when the run
// has none; the training loss then decides which checkpoint is best).
struct Evaluation {
  float train_loss = 0;
  float val_loss = 0;
  // More scores of the model (a translation model's dev BLEU): printed and written to
  // metrics.jsonl under their names; the validation loss still decides which checkpoint is best.
  std::vector<std::pair<std::string, double>> extra = {};
  // The score that decides which checkpoint is best, lower being better, when it is not the
  // loss (a classifier's dev error rate, 1 - accuracy); NaN: the validation (or training) loss.
  float selection = std::numeric_limits<float>::quiet_NaN();
};

struct RunJob {
  // Optimizer step `step` (0-based): usually train_step with the job's batches.
  std::function<StepResult(int step)> step;
  // The evaluation at `step`; stop() turns true when the user asks the run to stop, and the
  // evaluation then gives up (nullopt) rather than keep them waiting.
  std::function<std::optional<Evaluation>(int step, const std::function<bool()>& stop)> evaluate;
  // Writes the model's weights (latest, best) with this metadata.
  std::function<void(const fs::path& path, const Metadata& metadata)> save_weights;
  // Writes the whole training state: the harness has filled in the run's part of `state` (step,
  // scores, threads, time); the job adds its own (optimizer, data position, hashes, options).
  std::function<void(const fs::path& path, TrainState& state)> save_state;
  // Polled before each step with the steps done; true makes the run checkpoint and stop.
  std::function<bool(int steps_done)> stop_requested;
};

struct RunResult {
  float final_train_loss = 0;  // of the last evaluation
  float final_val_loss = 0;    // NaN without a validation split
  float best_val_loss = 0;  // the best score: the val (or train) loss, or Evaluation::selection
  double tokens_per_second = 0;
  double seconds = 0;
  int steps_done = 0;        // optimizer steps completed, over all sessions of the run
  bool interrupted = false;  // stopped early by stop_requested (a checkpoint was written)
  int nonfinite_skipped = 0;
  bool early_stopped = false;  // stopped by RunSettings::patience (steps_done: where)
};

// Runs steps state.step .. settings.steps. `state` is the training state resumed from (resuming)
// or a fresh one. Throws potop::Error when a step is not finite (unless skip_nonfinite) and for
// failed writes; every checkpoint written before stays loadable.
RunResult run_training(const RunSettings& settings, const RunJob& job, TrainState state, bool resuming, std::FILE* log);

// Drops the records of metrics.jsonl that lie after a checkpoint at `step` (train records with
// step > step, eval records with step > step — or >= step when that step's evaluation is still
// pending — and any line that is not a complete JSON object, such as one cut short by a crash),
// so a resumed run appends exactly what an uninterrupted run would have written. A missing file
// is left missing.
void truncate_metrics(const fs::path& metrics, int step, bool eval_pending = false);

// The files a run writes into its directory, of those present in `dir` (config.json, the
// tokenizer's files, metrics.jsonl, the checkpoints).
std::vector<fs::path> run_files_in(const fs::path& dir);
// The files of an earlier run in `out` that a new run would replace. Unless `force`, their
// presence is a potop::Error naming --out and the ways on (--resume, --force, another --out).
std::vector<fs::path> previous_run_files(const fs::path& out, bool force);

// Removes "<name>.tmp-<pid>" files that a killed process left in dir (write_file_atomic's
// temporaries) for the files a run writes. Returns how many were removed.
int remove_stale_temporaries(const fs::path& dir);

}  // namespace potop
