// Keys and values of every self-attention layer for the positions generated so far (batch 1), so
// that each new token costs one position's work. Slot s belongs to one attention layer and holds
// (n_head, block_size, head_size) keys and as many values: a head's keys one after another, so
// that attending reads them front to back.
#pragma once
#include <cstddef>
#include <vector>

namespace potop {

struct KVCache {
  // `slots` attention layers, each of `positions` positions (the block size) of `floats` =
  // n_head · head_size floats.
  KVCache(int slots, int positions, int floats)
      : block_size(positions),
        width(floats),
        k(static_cast<size_t>(slots) * block_size * width),
        v(static_cast<size_t>(slots) * block_size * width) {}

  float* keys(int slot) { return k.data() + static_cast<size_t>(slot) * block_size * width; }
  float* values(int slot) { return v.data() + static_cast<size_t>(slot) * block_size * width; }

  int block_size, width;
  std::vector<float> k, v;
  int length = 0;  // positions filled
};

// One encoded source sentence as the decoder's cross-attention reads it: for every cross-attention
// layer (slot s), [K V] = memory·W_kv + b_kv of the S source positions, (S, 2·width) in the
// projection's own row layout (keys in the first width floats of a row, values in the next).
// Computed once per sentence, since the memory does not change while it is decoded, and read by
// every hypothesis of that sentence at every step.
struct MemoryKV {
  MemoryKV() = default;
  MemoryKV(int slots, int positions, int floats)
      : S(positions), width(floats), kv(static_cast<size_t>(slots) * S * 2 * width) {}

  float* slot(int s) { return kv.data() + static_cast<size_t>(s) * S * 2 * width; }
  const float* slot(int s) const { return kv.data() + static_cast<size_t>(s) * S * 2 * width; }

  int S = 0, width = 0;
  std::vector<float> kv;
};

}  // namespace potop
