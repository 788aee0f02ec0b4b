// The one evaluation loop: a model's loss over a sequence of batches, without dropout. The
// trainer's periodic evaluation (eval_iters random windows drawn with a fixed seed) and
// `potop eval` (every window of a text, in order) both run it.
#pragma once
#include <functional>

#include "model/model.h"
#include "train/batch_parallel.h"

namespace potop {

struct LossTotal {
  double sum = 0;    // Σ of the per-target losses
  long targets = 0;  // counted targets
  double mean() const { return targets ? sum / targets : 0.0; }
};

// Runs the forward pass on every batch next() fills in, until it returns false.
LossTotal evaluate_loss(BatchParallel& model, const std::function<bool(Batch&)>& next);

}  // namespace potop
