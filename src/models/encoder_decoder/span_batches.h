// The batches of T5 pre-training: chunks of text corrupted afresh every time they are seen
// (data/span_corruption.h), as an encoder-decoder's source (the text with sentinels) and target
// (the spans). Micro-batch k of a run is a function of k alone — the chunks are reshuffled per
// epoch from (seed, epoch) and the corruption is drawn from (seed, k) — so a resumed run draws
// exactly the batches an uninterrupted one would.
#pragma once
#include <cstdint>
#include <vector>

#include "data/batch.h"
#include "data/parallel_corpus.h"
#include "data/span_corruption.h"

namespace potop {

class SpanBatches {
 public:
  // rows chunks a batch (the last batch of an epoch may hold fewer); sentinel i is first_sentinel + i.
  SpanBatches(const std::vector<std::vector<int>>& chunks, int rows, const SpanCorruption& corruption,
              int first_sentinel, uint64_t seed);

  int size() const { return static_cast<int>((chunks_.size() + size_t(rows_) - 1) / size_t(rows_)); }
  // Micro-batch k of the run (k counts every batch drawn, over epochs).
  void fill(long k, Batch& batch);
  // Batch i of n for evaluation: chunks spread evenly over all of them (every chunk when n
  // batches hold them all), with a corruption fixed by i, the same at every evaluation so that
  // losses compare.
  void fill_fixed(int i, int n, Batch& batch);
  // Target tokens of a full batch, on average (the spans, their sentinels and </s>), for tokens/s.
  long target_tokens_per_batch() const;

 private:
  void fill_rows(const std::vector<int>& members, Rng& rng, Batch& batch);

  const std::vector<std::vector<int>>& chunks_;
  int rows_;
  SpanCorruption corruption_;
  int first_sentinel_;
  uint64_t seed_;
  long cached_epoch_ = -1;
  std::vector<int> order_, members_;
  std::vector<EncodedPair> examples_;
  std::vector<const EncodedPair*> pointers_;
  PairBatchArrays arrays_;
};

}  // namespace potop
