// `potop train`: read the text, build the tokenizer and model, and run the training loop with
// periodic evaluation, progress, metrics and atomic checkpoints.
#pragma once
#include <cstdio>

#include "train/options.h"

namespace potop {

struct TrainResult {
  float final_train_loss = 0;  // mean over eval_iters batches at the end
  float final_val_loss = 0;    // NaN without a validation split
  float best_val_loss = 0;
  double tokens_per_second = 0;
  double seconds = 0;
};

// Throws potop::Error for every bad input (file, flag, directory).
TrainResult train(const TrainOptions& options, std::FILE* log = stderr);

}  // namespace potop
