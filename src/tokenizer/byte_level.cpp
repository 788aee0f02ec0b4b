#include "tokenizer/byte_level.h"

#include <array>

#include "tokenizer/utf8.h"

namespace potop {
namespace {

// code point -> byte for the 256 characters of the alphabet (all below U+0144), -1 elsewhere.
constexpr char32_t kAlphabetEnd = 0x144;
const std::array<int, kAlphabetEnd>& byte_of() {
  static const std::array<int, kAlphabetEnd> table = [] {
    std::array<int, kAlphabetEnd> t;
    t.fill(-1);
    for (int b = 0; b < 256; ++b) t[utf8_decode(byte_level_char(static_cast<unsigned char>(b)), "")[0]] = b;
    return t;
  }();
  return table;
}

}  // namespace

const std::string& byte_level_char(unsigned char b) {
  static const std::array<std::string, 256> table = [] {
    std::array<std::string, 256> t;
    char32_t next = 256;
    for (int c = 0; c < 256; ++c) {
      const bool printable = (c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF);
      t[static_cast<size_t>(c)] = utf8_encode(printable ? static_cast<char32_t>(c) : next++);
    }
    return t;
  }();
  return table[b];
}

std::string byte_level(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) out += byte_level_char(static_cast<unsigned char>(c));
  return out;
}

bool byte_level_bytes(std::string_view text, std::string& out) {
  if (!utf8_valid(text)) return false;
  for (const char32_t c : utf8_decode(text, "")) {
    if (c >= kAlphabetEnd || byte_of()[c] < 0) return false;
    out.push_back(static_cast<char>(byte_of()[c]));
  }
  return true;
}

}  // namespace potop
