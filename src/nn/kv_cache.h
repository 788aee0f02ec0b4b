// Keys and values of every self-attention layer for the positions generated so far (batch 1), so
// that each new token costs one position's work. Slot s belongs to one attention layer and holds
// (heads, block_size, head_size) keys and as many values: a head's keys one after another, so
// that attending reads them front to back.
#pragma once
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kernels/attention.h"

namespace potop {

// What a KV cache stores its keys and values as. f32 keeps them exactly, so decoding with the
// cache gives the logits of a full forward pass; f16 (llama.cpp's default) halves the bytes a
// decoding step reads from it, rounding each key and value to the nearest half.
enum class KVCacheType { kF32, kF16 };
std::string to_string(KVCacheType type);
KVCacheType parse_kv_cache_type(const std::string& name, const std::string& flag);  // "f32", "f16"

// A cache's bytes, not initialised: every position is written before it is read, so a new cache
// costs no zeroing (GPT-2 124M's is 75 MB in f32). A large one is mapped pages (core/pages.h),
// faulted in only as far as the sequence grows, in huge pages where the kernel gives them.
// Copies (a beam's hypotheses) copy the bytes.
class CacheBytes {
 public:
  explicit CacheBytes(size_t n);
  CacheBytes(const CacheBytes& other) : CacheBytes(other.n_) { std::memcpy(data(), other.data(), n_); }
  CacheBytes(CacheBytes&& other) noexcept : n_(std::exchange(other.n_, 0)), p_(std::exchange(other.p_, nullptr)) {}
  CacheBytes& operator=(const CacheBytes& other) { return *this = CacheBytes(other); }
  CacheBytes& operator=(CacheBytes&& other) noexcept {
    std::swap(n_, other.n_);
    std::swap(p_, other.p_);
    return *this;
  }
  ~CacheBytes();

  std::byte* data() { return p_; }
  const std::byte* data() const { return p_; }
  size_t size() const { return n_; }

 private:
  size_t n_;
  std::byte* p_;
};

struct KVCache {
  // `slots` attention layers, each of `positions` positions (the block size) of `heads` key/value
  // heads of `head_size` numbers.
  KVCache(int slots, int positions, int heads, int head_size, KVCacheType type = KVCacheType::kF32);

  // Position pos of slot's keys and values: head g's head_size numbers at k + g·head_size (and v
  // alike), stored as the cache's type.
  void store(int slot, int pos, const float* k, const float* v);
  // out (Tq, H·head_size) = softmax(q kᵀ / √d)·v of d.Tq queries (q, rows d.q_stride apart, the
  // last Tq of d.Tk positions) over slot's first d.Tk positions, causally: d gives B = 1, Tq, Tk,
  // H, head_size and q_stride (and Hkv where query heads share key/value heads); the cache fills
  // in its own strides. stats as attention_forward's.
  void attend(int slot, float* out, float* stats, const float* q, AttentionDims d) const;

  int block_size, heads, head_size;
  KVCacheType type;
  CacheBytes k, v;
  int length = 0;  // positions filled

 private:
  size_t slot_numbers() const { return static_cast<size_t>(block_size) * heads * head_size; }
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
