// `potop train`: read the text, build the tokenizer and model, and run the training loop with
// periodic evaluation, progress, metrics and atomic checkpoints; or continue a saved run
// (train_state.h) so that its losses match an uninterrupted run bit for bit.
#pragma once
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "train/options.h"

namespace potop {

struct TrainResult {
  float final_train_loss = 0;  // mean over eval_iters batches at the end
  float final_val_loss = 0;    // NaN without a validation split
  float best_val_loss = 0;
  double tokens_per_second = 0;
  double seconds = 0;
  int steps_done = 0;          // optimizer steps completed, over all sessions of the run
  bool interrupted = false;    // stopped early by stop_requested (a checkpoint was written)
  int nonfinite_skipped = 0;   // steps skipped by --skip-nonfinite
};

// How one invocation runs, beyond the options saved with the model.
struct TrainControl {
  // Continue the run saved in this model directory (or state file) instead of starting anew.
  std::string resume;
  // Option names (kebab-case, as in option_fields) the user set explicitly. On resume they
  // override the checkpoint's options; every other option comes from the checkpoint.
  std::vector<std::string> given;
  // Let a resumed run continue on a text whose hash differs from the checkpoint's.
  bool allow_data_change = false;
  // Polled before each step with the number of steps done; returning true makes the trainer
  // write a checkpoint and return with interrupted = true (the CLI sets it on SIGINT/SIGTERM).
  std::function<bool(int steps_done)> stop_requested;
};

// Throws potop::Error for every bad input (file, flag, directory, checkpoint), and when a
// step's loss or gradient norm is not finite (unless options.skip_nonfinite).
TrainResult train(const TrainOptions& options, std::FILE* log = stderr, const TrainControl& control = {});

}  // namespace potop
