// The options every trainer shares — batches, steps, schedule, AdamW, evaluation, checkpoints,
// threads and ranks — as one struct with one field list. Each model's options derive from it
// (models/<name>/<name>_options.h) and add their data and model fields, so a run option is
// written, parsed, saved, resumed and validated in exactly one place, the same way for every
// model. A model sets its own defaults in its options' constructor (a translation model starts
// from the paper's Adam and warm-up; a GPT from nanoGPT's character-level recipe).
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/fields.h"
#include "train/schedule.h"

namespace potop {

struct RunOptions {
  std::string out = "runs/potop";  // the model directory
  // batches: a step is grad_accum micro-batches of batch_size rows on every rank
  int batch_size = 12;
  int grad_accum = 1;
  int steps = 2000;
  // learning rate
  LrShape lr_schedule = LrShape::kCosine;
  float lr = 1e-3f, min_lr = 1e-4f;
  int warmup = 100;
  int lr_decay_steps = 0;  // steps of the cosine decay; 0 = steps (nanoGPT's lr_decay_iters)
  // AdamW
  float beta1 = 0.9f, beta2 = 0.99f, eps = 1e-8f, weight_decay = 0.1f, grad_clip = 1.0f;
  // evaluation and logging
  int eval_interval = 250, eval_iters = 20, log_interval = 10;
  // run
  uint64_t seed = 1337;
  int threads = 0;                 // 0 = all cores
  std::string parallel = "batch";  // split the batch over threads (BatchParallel), or each kernel
  bool profile = false;            // a per-kernel breakdown of the step time at the end
  bool verbose = false;            // the memory plan at the start
  // checkpoints and numerical guards
  int keep = 0;                 // also a resumable step-<N>.safetensors every `keep` steps
  bool skip_nonfinite = false;  // skip steps whose loss or gradient norm is not finite
  // multi-process training (docs/distributed.md)
  double mpi_bucket_mb = 2;  // gradients sent in buckets of this size during backward; 0: after it
  double mpi_timeout = 300;  // seconds a rank waits for the others; 0: forever

  // The step at which the cosine decay reaches min_lr.
  int decay_steps() const { return lr_decay_steps > 0 ? lr_decay_steps : steps; }
  // The schedule of a model d_model wide (noam scales by d_model^-0.5).
  LRSchedule schedule(int d_model) const {
    return LRSchedule{lr, min_lr, warmup, decay_steps(), lr_schedule, d_model};
  }
};

// The largest --eval-iters: an evaluation that would take hours is a typing mistake.
inline constexpr int kMaxEvalIters = 100000;

// The run options' fields in --help order, less those named in `omit` (a model that sizes its
// batches in tokens has no --batch-size).
std::vector<Field> run_option_fields(RunOptions& options, const std::vector<std::string>& omit = {});

// Impossible values are a potop::Error naming the flag (sizes and steps positive, rates finite
// and in range, ...).
void validate(const RunOptions& options);

// Applies a JSON config file's keys to a command's option fields, skipping keys in `skip` (flags
// given on the command line, which win). Unknown keys and wrong types are errors naming the file
// and key. A model directory's config.json works too: its "training" object is used. Returns the
// names (kebab-case) of the options the file set.
std::vector<std::string> apply_options_file(const std::vector<Field>& fields, const std::string& path,
                                            const std::vector<std::string>& skip);
// The same for a parsed JSON object; source names it in messages.
std::vector<std::string> apply_options_json(const std::vector<Field>& fields, const nlohmann::json& j,
                                            const std::string& source, const std::vector<std::string>& skip = {});

// For the validation of a model's own options, worded as the run's: "--<flag> <what>" when !ok.
void require_option(bool ok, const std::string& flag, const std::string& what);
// A value in a message, as a person would write it (%g).
std::string option_number(double value);

// --name, --name2: the flags given on the command line of a resumed run that would move its data
// split and so are refused without --allow-data-change.
inline const std::vector<std::string> kSplitOptions = {"val-fraction", "dev-fraction", "dev-size", "test-fraction",
                                                      "test-size", "columns"};

}  // namespace potop
