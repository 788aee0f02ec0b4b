// Keys and values of every self-attention layer for the positions generated so far (batch 1), so
// that each new token costs one position's work. Slot s belongs to one attention layer and holds
// (n_head, block_size, head_size) keys and as many values: a head's keys one after another, so
// that attending reads them front to back.
#pragma once
#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

namespace potop {

// A cache's floats, not initialised: every position is written before it is read, so a new cache
// costs no zeroing (GPT-2 124M's is 75 MB) and its pages are faulted in only as far as the
// sequence grows. Copies (a beam's hypotheses) copy the bytes.
class CacheFloats {
 public:
  explicit CacheFloats(size_t n) : n_(n), p_(std::make_unique_for_overwrite<float[]>(n)) {}
  CacheFloats(const CacheFloats& other) : CacheFloats(other.n_) { std::memcpy(data(), other.data(), n_ * sizeof(float)); }
  CacheFloats(CacheFloats&&) noexcept = default;
  CacheFloats& operator=(const CacheFloats& other) { return *this = CacheFloats(other); }
  CacheFloats& operator=(CacheFloats&&) noexcept = default;

  float* data() { return p_.get(); }
  const float* data() const { return p_.get(); }
  size_t size() const { return n_; }

 private:
  size_t n_;
  std::unique_ptr<float[]> p_;
};

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
  CacheFloats k, v;
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
