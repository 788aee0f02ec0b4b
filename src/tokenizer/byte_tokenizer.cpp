#include "tokenizer/byte_tokenizer.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/hash.h"
#include "tokenizer/pieces.h"
#include "tokenizer/utf8.h"

namespace potop {
namespace {

}  // namespace

std::vector<int> ByteTokenizer::encode(std::string_view text, std::string_view what, Unknown, UnknownReport*) const {
  if (!utf8_valid(text)) utf8_decode(text, what);  // throws, naming the place
  std::vector<int> ids(text.size());
  for (size_t i = 0; i < text.size(); ++i) ids[i] = kFirstByteId + static_cast<unsigned char>(text[i]);
  return ids;
}

bool ByteTokenizer::can_encode(std::string_view text) const { return utf8_valid(text); }

std::string ByteTokenizer::decode_one(int id) const {
  check_token_id(id, kSize);
  if (id >= kFirstByteId) return std::string(1, static_cast<char>(id - kFirstByteId));
  return id == kUnkId ? "\xEF\xBF\xBD" : "";
}

std::string ByteTokenizer::decode(std::span<const int> ids) const {
  std::string bytes;
  bytes.reserve(ids.size());
  for (const int id : ids) {
    if (id >= kFirstByteId && id < kSize) bytes.push_back(static_cast<char>(id - kFirstByteId));
    else bytes += decode_one(id);  // a special, or throws
  }
  return utf8_repair(bytes);
}

std::string ByteTokenizer::piece(int id) const {
  check_token_id(id, kSize);
  if (id < kFirstByteId) return kSpecialPieces[id];
  const auto b = static_cast<unsigned char>(id - kFirstByteId);
  if (b == ' ') return "\u2581";
  if (b > ' ' && b < 0x7F) return std::string(1, static_cast<char>(b));
  return byte_piece(b);
}

int ByteTokenizer::char_count(int id) const {
  check_token_id(id, kSize);
  if (id < kFirstByteId) return id == kUnkId ? 1 : 0;
  return count_char_starts(std::string(1, static_cast<char>(id - kFirstByteId)));
}

uint64_t ByteTokenizer::hash() const {
  uint64_t h = fnv1a64("byte");
  for (const char* special : kSpecialPieces) h = fnv1a64(special, h);
  for (int b = 0; b < 256; ++b) {
    const auto byte = static_cast<unsigned char>(b);
    h = fnv1a64_raw(&byte, 1, h);
  }
  return h;
}

nlohmann::json ByteTokenizer::to_json() const { return {{"kind", kind()}}; }

}  // namespace potop
