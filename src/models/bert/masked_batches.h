// What BERT trains and is evaluated on: B windows of T - 2 tokens of the text, each written as
// [CLS] window [SEP] and masked (masking.h) with a generator seeded from the micro-batch's index,
// so a sequence gets a new mask every time it is drawn (dynamic masking) and a resumed run the
// masks of an uninterrupted one. No next-sentence task (RoBERTa dropped it): a row is one stretch
// of text. Evaluation: the masked-token loss and accuracy on fixed windows with fixed masks.
#pragma once
#include <vector>

#include "data/dataset.h"
#include "models/bert/masking.h"
#include "train/run_kit.h"

namespace potop {

// Rows [CLS] window [SEP] of B windows (B, T - 2), window b holding lengths[b] tokens (all T - 2
// when lengths is null; a shorter row is padded with <pad> and masked in attention), each masked
// with `rng`: the batch a BERT trains on or is scored on. The batch points into this object.
struct MaskedRows {
  std::vector<int> tokens, targets, lengths;
  Batch fill(const int* windows, const int* window_lengths, int B, int T, const MaskingRule& rule, Rng& rng);
};

// The masked-LM loss and accuracy (the arg max of a masked position's logits is the original
// token) summed over batches: what the trainer's evaluation and potop eval report.
struct MaskedLMScore {
  double loss_sum = 0;
  long masked = 0, correct = 0;
  // Runs `batch` forward without dropout on `parallel` (whose model is a Bert) and adds it.
  void add(BatchParallel& parallel, const Batch& batch);
  double loss() const { return masked ? loss_sum / masked : 0.0; }
  double accuracy() const { return masked ? double(correct) / masked : 0.0; }
};

class MaskedBatches {
 public:
  // After kit.build: the sampler continues where the resumed run's stopped.
  MaskedBatches(const RunKit& kit, TokenView train, TokenView val, int B, int T, const RunOptions& options,
                const MaskingRule& rule);
  MaskedBatches(const MaskedBatches&) = delete;
  MaskedBatches& operator=(const MaskedBatches&) = delete;

  // The job's batches and evaluation (val_loss, and mlm_accuracy on the held-out windows), run on
  // `parallel`, whose model is a Bert.
  void fill(ModelJob& job, BatchParallel& parallel);

 private:
  // Loss and accuracy over eval_iters_ batches of fixed windows and masks; false when stopped.
  bool score(BatchParallel& parallel, TokenView tokens, MaskedLMScore& s, const std::function<bool()>& stop);

  TokenView train_, val_;
  int B_, T_, eval_iters_;
  uint64_t mask_seed_, eval_seed_;
  MaskingRule rule_;
  BatchSampler sampler_;
  std::vector<int> window_, unused_;
  MaskedRows rows_;
};

}  // namespace potop
