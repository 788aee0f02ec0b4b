// The batches and the evaluation of a language model trained on windows of one token sequence —
// the GPT and the bag-of-words LM: B windows of T tokens drawn by a BatchSampler seeded from the
// run's seed (its state resumed from the checkpoint), and every evaluation's estimate of the
// training and validation loss on the same fixed windows. One copy for every such model.
#pragma once
#include <vector>

#include "data/dataset.h"
#include "train/run_kit.h"

namespace potop {

class WindowBatches {
 public:
  // After kit.build: the sampler continues where the resumed run's stopped.
  WindowBatches(const RunKit& kit, TokenView train, TokenView val, int B, int T, const RunOptions& options);
  WindowBatches(const WindowBatches&) = delete;
  WindowBatches& operator=(const WindowBatches&) = delete;

  // The job's batches (next_batch, skip_batch, sampler_state, tokens_per_batch) and evaluation,
  // run on `parallel`.
  void fill(ModelJob& job, BatchParallel& parallel);

 private:
  TokenView train_, val_;
  int B_, T_, eval_iters_;
  uint64_t eval_seed_;
  BatchSampler sampler_;
  std::vector<int> x_, y_;
};

}  // namespace potop
