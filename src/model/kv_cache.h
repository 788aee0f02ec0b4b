// Keys and values of every self-attention layer for the positions generated so far (batch 1), so
// that each new token costs one position's work. Slot s belongs to one attention layer and holds
// (n_head, block_size, head_size) keys and as many values: a head's keys one after another, so
// that attending reads them front to back.
#pragma once
#include <cstddef>
#include <vector>

namespace potop {

struct KVCache {
  // `slots` attention layers, `block_size` positions, `width` = n_head · head_size floats each.
  KVCache(int slots, int block_size, int width)
      : block_size(block_size),
        width(width),
        k(static_cast<size_t>(slots) * block_size * width),
        v(static_cast<size_t>(slots) * block_size * width) {}

  float* keys(int slot) { return k.data() + static_cast<size_t>(slot) * block_size * width; }
  float* values(int slot) { return v.data() + static_cast<size_t>(slot) * block_size * width; }

  int block_size, width;
  std::vector<float> k, v;
  int length = 0;  // positions filled
};

}  // namespace potop
