#include "tokenizer/pieces.h"

#include <unicode/uchar.h>

#include <cstdio>

#include "core/error.h"
#include "tokenizer/utf8.h"

namespace potop {

void check_token_id(int id, int size) {
  if (id < 0 || id >= size)
    throw Error("token id " + std::to_string(id) + " is outside the vocabulary (ids 0.." + std::to_string(size - 1) +
                ")");
}

std::string byte_piece(unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "<0x%02X>", b);
  return buf;
}

int count_char_starts(std::string_view bytes) {
  int n = 0;
  for (const char c : bytes) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string display_piece(std::string_view text) {
  if (!utf8_valid(text)) {
    std::string out;
    for (const char c : text) out += byte_piece(static_cast<unsigned char>(c));
    return out;
  }
  const std::u32string chars = utf8_decode(text, "token");
  bool all_format = !chars.empty();
  for (const char32_t c : chars) all_format = all_format && u_charType(static_cast<UChar32>(c)) == U_FORMAT_CHAR;
  std::string out;
  for (const char32_t c : chars) {
    const auto u = static_cast<UChar32>(c);
    if (c == U' ') {
      out += "\u2581";
    } else if (all_format || u_iscntrl(u) || u_isUWhiteSpace(u)) {
      for (const char b : utf8_encode(c)) out += byte_piece(static_cast<unsigned char>(b));
    } else {
      utf8_append(out, c);
    }
  }
  return out;
}

}  // namespace potop
