// FNV-1a, 64-bit: a small, stable, non-cryptographic hash. Checkpoints store it for the
// vocabulary and the training data, so resuming with a different vocab.json or text file is
// caught instead of silently training on mismatched ids. The value must never change between
// versions: the constants are those of the FNV specification.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace potop {

inline constexpr uint64_t kFnv1a64Offset = 0xcbf29ce484222325ull;
inline constexpr uint64_t kFnv1a64Prime = 0x100000001b3ull;

// Hash of n bytes. Pass a previous result as h to hash several pieces as one stream.
// (Named apart from fnv1a64 so that fnv1a64("text", h) can never pick this overload.)
inline uint64_t fnv1a64_raw(const void* data, size_t n, uint64_t h = kFnv1a64Offset) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= kFnv1a64Prime;
  }
  return h;
}

inline uint64_t fnv1a64(std::string_view bytes, uint64_t h = kFnv1a64Offset) {
  return fnv1a64_raw(bytes.data(), bytes.size(), h);
}

// 16 lowercase hex digits, e.g. "cbf29ce484222325" (how hashes appear in JSON and messages;
// JSON numbers cannot hold every uint64 exactly).
inline std::string hash_hex(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace potop
