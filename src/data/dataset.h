// Token streams for training and evaluation.
//  - split_tokens: train/validation split (validation is the tail of the text).
//  - TokenView: the tokens of one split, in memory (a span) or in a prepared data directory
//    (data/prepared_data.h); what the samplers read from.
//  - BatchSampler: random training windows, reproducible and resumable.
//  - eval_windows / fill_eval_batch: a deterministic pass over a whole token array for
//    `potop eval` (loss, perplexity, bits per character).
// Tokens are int32 ids; targets of -1 are ignored by the cross-entropy.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/rng.h"

namespace potop {

class PreparedData;
enum class DataSplit;

struct TokenSplit {
  std::vector<int> train, val;
};

// The last val_fraction of tokens (rounded down) becomes the validation set, the rest the
// training set; val_fraction 0 means no validation set. Each non-empty split must hold at
// least block_size + 1 tokens (one window plus its last target). Throws potop::Error naming
// `--val-fraction` when it is outside [0, 1), `--block-size` when it is below 1, and source
// (e.g. the data file) when a split is too short.
TokenSplit split_tokens(std::span<const int> tokens, double val_fraction, int block_size, std::string_view source);

// A borrowed, read-only sequence of token ids: an in-memory array, or one split of a prepared
// data directory (memory-mapped shards). Cheap to copy; what it views must outlive it (and a
// PreparedData must not move while viewed).
class TokenView {
 public:
  TokenView() = default;
  TokenView(std::span<const int> tokens) : memory_(tokens), size_(tokens.size()) {}
  TokenView(const std::vector<int>& tokens) : TokenView(std::span<const int>(tokens)) {}
  TokenView(const PreparedData& data, DataSplit split);

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool in_memory() const { return data_ == nullptr; }
  // The tokens themselves when in memory (empty for prepared data).
  std::span<const int> memory() const { return memory_; }

  // Copies tokens [begin, begin + n) into out; begin + n <= size() (POTOP_CHECK). Prepared data
  // may throw potop::Error (a shard that changed or holds an id out of range).
  void read(size_t begin, size_t n, int* out) const;

 private:
  std::span<const int> memory_;
  const PreparedData* data_ = nullptr;
  DataSplit split_{};
  size_t size_ = 0;
};

// Draws B windows of T + 1 consecutive tokens at uniformly random starts in [0, n - T - 1]:
// x[b] = tokens[s .. s + T), y[b] = tokens[s + 1 .. s + T + 1). The tokens are borrowed and
// must outlive the sampler. The same seed (or restored state) gives the same batches, and the
// same tokens give the same batches whether in memory or prepared: one generator draw per row.
// Windows of prepared data may span shard and document boundaries, like the text's.
class BatchSampler {
 public:
  // Requires B >= 1, T >= 1 and tokens.size() >= T + 1 (POTOP_CHECK: split_tokens and
  // check_block_size guarantee it).
  BatchSampler(TokenView tokens, int B, int T, uint64_t seed);

  // x (B, T), y (B, T).
  void next(int* x, int* y);
  // Moves past the batch next() would give, without reading it: the batches of the other ranks
  // of a multi-process run, which all draw from one sequence (train/trainer.cpp).
  void skip();

  // The generator state: saved in checkpoints so a resumed run draws the same batches.
  Rng::State state() const { return rng_.state(); }
  void set_state(const Rng::State& s) { rng_.set_state(s); }

  int batch_size() const { return B_; }
  int seq_len() const { return T_; }

 private:
  TokenView tokens_;
  int B_, T_;
  Rng rng_;
  std::vector<int> window_;  // T + 1 tokens read from prepared data
};

// One window of a sequential evaluation pass over n tokens:
//   x = tokens[start .. start + length), y = tokens[start + 1 .. start + length + 1);
// positions [first_scored, length) are scored, earlier ones only give context.
// Target index j (the prediction of tokens[j + 1]) is scored exactly once over all windows,
// for every j in [0, n - 1): every token except the first is predicted exactly once.
struct EvalWindow {
  size_t start = 0;
  int length = 0;        // == T, except when n - 1 < T (one short window)
  int first_scored = 0;  // 0 for the first window
};

// Windows of length T that advance by stride (1 <= stride <= T; 0 means T). Window 0 scores
// its T targets; each later window scores the next `stride` targets with the T - stride
// tokens before them as context, and the last window is moved back to end exactly at the end
// of the text (so it is full length, with more context and fewer scored targets). stride = T
// gives non-overlapping windows (fast); a smaller stride gives every scored token more
// context (lower, fairer loss) at T / stride times the cost. Empty when n < 2 (nothing to
// predict). Throws potop::Error when stride is outside [0, T] or T < 1.
std::vector<EvalWindow> eval_windows(size_t n_tokens, int T, int stride = 0);

// Fills x (B, T) and y (B, T) from windows[first .. first + B). y is -1 wherever a position
// is not scored: context positions, padding after a short window, and whole rows past the
// last window (their x is 0). Returns the number of scored targets in the batch.
int fill_eval_batch(int* x, int* y, TokenView tokens, std::span<const EvalWindow> windows, size_t first, int B,
                    int T);

}  // namespace potop
