#include "models/encoder_decoder/span_batches.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"

namespace potop {

namespace {
// Streams of random numbers of the same seed kept apart: the epoch shuffles, the training
// corruption, the evaluation's fixed corruption.
constexpr uint64_t kShuffle = 1, kNoise = 2, kFixedNoise = 3;
}  // namespace

SpanBatches::SpanBatches(const std::vector<std::vector<int>>& chunks, int rows, const SpanCorruption& corruption,
                         int first_sentinel, uint64_t seed)
    : chunks_(chunks), rows_(rows), corruption_(corruption), first_sentinel_(first_sentinel), seed_(seed) {
  POTOP_CHECK(!chunks.empty() && rows > 0, "SpanBatches: no chunks to batch");
}

void SpanBatches::fill(long k, Batch& batch) {
  const long epoch = k / size();
  if (epoch != cached_epoch_) {
    order_.resize(chunks_.size());
    std::iota(order_.begin(), order_.end(), 0);
    Rng(hash64(hash64(seed_, kShuffle), uint64_t(epoch))).shuffle(order_);
    cached_epoch_ = epoch;
  }
  const size_t first = size_t(k % size()) * size_t(rows_);
  members_.assign(order_.begin() + long(first), order_.begin() + long(std::min(order_.size(), first + size_t(rows_))));
  Rng rng(hash64(hash64(seed_, kNoise), uint64_t(k)));
  fill_rows(members_, rng, batch);
}

void SpanBatches::fill_fixed(int i, int n, Batch& batch) {
  POTOP_CHECK(i >= 0 && i < n && n <= size(), "SpanBatches::fill_fixed: no batch " + std::to_string(i));
  const size_t N = chunks_.size(), stride = std::max<size_t>(1, N / (size_t(n) * size_t(rows_)));
  members_.clear();
  for (size_t r = 0; r < size_t(rows_); ++r) {
    const size_t at = (size_t(i) * size_t(rows_) + r) * stride;
    if (at < N) members_.push_back(int(at));
  }
  Rng rng(hash64(hash64(seed_, kFixedNoise), uint64_t(i)));
  fill_rows(members_, rng, batch);
}

long SpanBatches::target_tokens_per_batch() const {
  long tokens = 0;
  for (const std::vector<int>& c : chunks_) {
    const int n = int(c.size());
    tokens += long(std::nearbyint(n * corruption_.noise_density)) + noise_spans(n, corruption_) + 1;
  }
  return std::max(1L, tokens * rows_ / long(chunks_.size()));
}

void SpanBatches::fill_rows(const std::vector<int>& members, Rng& rng, Batch& batch) {
  examples_.resize(members.size());
  pointers_.clear();
  for (size_t r = 0; r < members.size(); ++r) {
    CorruptedChunk c = corrupt_spans(chunks_[size_t(members[r])], corruption_, first_sentinel_, rng);
    examples_[r] = EncodedPair{std::move(c.input), std::move(c.target)};
    pointers_.push_back(&examples_[r]);
  }
  arrays_.fill(pointers_, batch);
}

}  // namespace potop
