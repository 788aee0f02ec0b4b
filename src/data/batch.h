// A batch of token rows, as every model takes it and every data source fills it: below the models,
// so data/ (a corpus's batches) needs nothing of nn/ or models/.
#pragma once

namespace potop {

// The size of a batch: B sequences of T positions (and, for an encoder-decoder, sources of S).
struct BatchShape {
  int B = 0;
  int T = 0;
  int S = 0;  // source positions; 0 for a decoder-only model
};

// A batch of B rows. Every array is row-major with B rows, so rows(first, count) — the shard one
// replica trains on — is a matter of offsets. A model with more inputs (an encoder-decoder's
// source side) adds its row-major fields here and to rows().
struct Batch : BatchShape {
  const int* tokens = nullptr;   // (B, T) input ids
  const int* targets = nullptr;  // (B, T) the id to predict at each position; < 0 is not counted;
                                 // null: no loss (forward only)
  // An encoder-decoder's source side: (B, S) ids, and the real length of each row (positions
  // from there on are padding, masked in attention); null for a decoder-only model.
  const int* source = nullptr;
  const int* source_lengths = nullptr;  // (B), or null: no padding
  // An encoder's (BERT's, a classifier's) tokens are padded too: the real length of each row
  // (positions from there on are padding, masked in attention); null: no padding.
  const int* lengths = nullptr;
  // A classifier's: one class id per row (B); null: no loss (forward only).
  const int* labels = nullptr;
  Batch rows(int first, int count) const;
};

}  // namespace potop
