// Sentence pairs for translation: a TSV file of pairs (one pair a line, the two sides separated
// by a tab), a deterministic train/dev/test split, and batches of similar lengths counted in
// tokens.
//
// Bad lines: a line without a tab, with more than one, or with an empty side is skipped and
// counted (the first few line numbers are reported), or with BadLines::kError refused naming the
// line. Invalid UTF-8 is always refused, naming the line: the file is not text of the kind
// expected, and skipping would hide it. A byte-order mark at the start of the file is dropped: it
// marks the encoding and is not part of the first sentence.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/rng.h"
#include "data/batch.h"

namespace potop {

namespace fs = std::filesystem;

struct SentencePair {
  std::string first, second;  // the file's two columns
  int line = 0;               // 1-based line in the file
};

// The languages of a pairs file's two columns, as --columns names them ("en,pl"): two names around
// one comma; nullopt for anything else (no comma, or a third column), which each command refuses
// in its own words.
struct PairColumns {
  std::string first, second;
};
std::optional<PairColumns> parse_pair_columns(const std::string& columns);

enum class BadLines { kSkip, kError };

struct PairFile {
  std::vector<SentencePair> pairs;
  int skipped = 0;                  // bad lines left out
  std::vector<std::string> notes;   // the first few: "line 17: no tab"
};

// "<path>: 7 bad lines skipped: line 2: no tab, ..., line 9: empty first column, and 2 more"
// (empty when none was skipped).
std::string describe_skipped(const std::string& path, const PairFile& file);

// Throws potop::Error naming the file (missing, empty, binary) or the line (invalid UTF-8, or
// any bad line with BadLines::kError), and when no pair is left.
PairFile read_pairs(const fs::path& path, BadLines bad_lines = BadLines::kSkip);

// A deterministic split of the pairs (a shuffle with a fixed seed, whatever the direction of
// translation, so en->pl and pl->en runs hold out the same sentences).
struct PairSplit {
  std::vector<SentencePair> train, dev, test;
};
PairSplit split_pairs(const std::vector<SentencePair>& pairs, int dev_size, int test_size, uint64_t seed = 1);

// How many of n pairs a split holds out: round(fraction · n), at least 1 when fraction > 0, and at
// most `cap` (so a small file keeps most of its pairs for training and a large one holds out
// `cap`).
int held_out_count(int n, double fraction, int cap);

// Writes pairs as TSV (first \t second), atomically.
void write_pairs(const fs::path& path, const std::vector<SentencePair>& pairs);

// One training example: source ids ending in </s>, and the target ids (without <s> and </s>).
struct EncodedPair {
  std::vector<int> source;
  std::vector<int> target;
};

// The arrays of one padded batch of examples, which `batch` points at once filled: source (B, S)
// padded with <pad> and its lengths; decoder input <s> + target and targets target + </s>,
// padded with <pad> and -1 (not counted). Shared by PairBatches and the span-corruption batches
// of pre-training (models/encoder_decoder/span_batches.h).
struct PairBatchArrays {
  std::vector<int> source, lengths, input, targets;
  void fill(const std::vector<const EncodedPair*>& rows, Batch& batch);
};

// Batches of examples of similar lengths: examples are sorted by (source, target) length and cut
// into batches whose padded size B · max(S, T + 1) stays within `batch_tokens`. The order of the
// batches is shuffled per epoch from (seed, epoch), so batch k of a run is a function of k alone
// and a resumed run draws exactly the batches an uninterrupted one would.
class PairBatches {
 public:
  PairBatches(const std::vector<EncodedPair>& examples, int batch_tokens, uint64_t seed);

  int size() const { return static_cast<int>(batches_.size()); }
  // Fills the arrays with batch k of the run (k counts every batch drawn, over epochs) and
  // points `batch` at them: source (B, S) padded with <pad> and its lengths; decoder input
  // <s> + target and targets target + </s>, padded with <pad> and -1 (not counted).
  void fill(long k, Batch& batch);
  // The same for the i-th batch in length order (evaluation: every batch once).
  void fill_sorted(int i, Batch& batch);
  long target_tokens() const { return target_tokens_; }  // counted targets over all examples

 private:
  void fill_members(const std::vector<int>& members, Batch& batch);

  const std::vector<EncodedPair>& examples_;
  std::vector<std::vector<int>> batches_;  // example indices
  uint64_t seed_;
  long cached_epoch_ = -1;
  std::vector<int> order_;
  long target_tokens_ = 0;
  PairBatchArrays arrays_;
  std::vector<const EncodedPair*> rows_;
};

}  // namespace potop
