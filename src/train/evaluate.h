// The one evaluation loop: a model's loss over a sequence of batches, without dropout. The
// trainer's periodic evaluation (eval_iters random windows drawn with a fixed seed) and
// `potop eval` (every window of a text, in order) both run it.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "nn/model.h"
#include "data/dataset.h"
#include "train/batch_parallel.h"
#include "train/run.h"

namespace potop {

struct LossTotal {
  double sum = 0;    // Σ of the per-target losses
  long targets = 0;  // counted targets
  double mean() const { return targets ? sum / targets : 0.0; }
};

// Runs the forward pass on every batch next() fills in, until it returns false.
LossTotal evaluate_loss(BatchParallel& model, const std::function<bool(Batch&)>& next);

// Mean loss over `iters` batches of B windows of T tokens drawn with a fixed seed, so every
// evaluation of a run scores the same windows and the curve shows the model changing, not the
// sample (x, y: B·T ids of scratch). nullopt when stop() turned true before the last batch.
std::optional<float> estimate_loss(BatchParallel& model, TokenView tokens, int B, int T, int iters, uint64_t seed,
                                   std::vector<int>& x, std::vector<int>& y, const std::function<bool()>& stop);

// A language model's periodic evaluation: estimate_loss on the training tokens and, when there
// are any, on the validation tokens (val_loss NaN when there are none). nullopt when stopped.
std::optional<Evaluation> evaluate_train_val(BatchParallel& model, TokenView train, TokenView val, int B, int T,
                                             int iters, uint64_t seed, std::vector<int>& x, std::vector<int>& y,
                                             const std::function<bool()>& stop);

}  // namespace potop
