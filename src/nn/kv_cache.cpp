#include "nn/kv_cache.h"

#include <cstdint>

#include "core/error.h"
#include "core/pages.h"
#include "kernels/quant.h"

namespace potop {

std::string to_string(KVCacheType type) { return type == KVCacheType::kF16 ? "f16" : "f32"; }

KVCacheType parse_kv_cache_type(const std::string& name, const std::string& flag) {
  if (name == "f32") return KVCacheType::kF32;
  if (name == "f16") return KVCacheType::kF16;
  throw Error(flag + " must be f32 or f16 (got \"" + name + "\")");
}

CacheBytes::CacheBytes(size_t n) : n_(n), p_(PageAllocator<std::byte>().allocate(n)) {}

CacheBytes::~CacheBytes() { PageAllocator<std::byte>().deallocate(p_, n_); }

namespace {
size_t bytes_of(KVCacheType type) { return type == KVCacheType::kF16 ? sizeof(uint16_t) : sizeof(float); }
}  // namespace

KVCache::KVCache(int slots, int positions, int n_heads, int n_head_size, KVCacheType cache_type)
    : block_size(positions),
      heads(n_heads),
      head_size(n_head_size),
      type(cache_type),
      k(static_cast<size_t>(slots) * slot_numbers() * bytes_of(type)),
      v(static_cast<size_t>(slots) * slot_numbers() * bytes_of(type)) {}

void KVCache::store(int slot, int pos, const float* k_row, const float* v_row) {
  POTOP_CHECK(pos >= 0 && pos < block_size, "KV cache position out of range");
  const int D = head_size;
  for (int g = 0; g < heads; ++g) {
    // head g's row pos within the slot: (heads, block_size, D)
    const size_t at = static_cast<size_t>(slot) * slot_numbers() + (static_cast<size_t>(g) * block_size + pos) * D;
    if (type == KVCacheType::kF16) {
      floats_to_halves(k_row + g * D, D, reinterpret_cast<uint16_t*>(k.data()) + at);
      floats_to_halves(v_row + g * D, D, reinterpret_cast<uint16_t*>(v.data()) + at);
    } else {
      std::memcpy(reinterpret_cast<float*>(k.data()) + at, k_row + g * D, D * sizeof(float));
      std::memcpy(reinterpret_cast<float*>(v.data()) + at, v_row + g * D, D * sizeof(float));
    }
  }
}

void KVCache::attend(int slot, float* out, float* stats, const float* q, AttentionDims d) const {
  POTOP_CHECK(d.B == 1 && d.D == head_size && (d.Hkv ? d.Hkv : d.H) == heads && d.Tk <= block_size,
              "attention dimensions do not match the KV cache");
  d.k_stride = d.v_stride = head_size;
  d.k_head_stride = d.v_head_stride = block_size * head_size;
  const size_t at = static_cast<size_t>(slot) * slot_numbers();
  const AttentionMask causal{MaskKind::kCausal, nullptr};
  if (type == KVCacheType::kF16) {
    attention_forward(out, stats, nullptr, q, reinterpret_cast<const uint16_t*>(k.data()) + at,
                      reinterpret_cast<const uint16_t*>(v.data()) + at, d, causal);
  } else {
    attention_forward(out, stats, nullptr, q, reinterpret_cast<const float*>(k.data()) + at,
                      reinterpret_cast<const float*>(v.data()) + at, d, causal);
  }
}

}  // namespace potop
