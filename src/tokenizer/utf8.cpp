#include "tokenizer/utf8.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "core/error.h"

namespace potop {
namespace {

std::string hex_byte(unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02X", b);
  return buf;
}

// Continuation bytes a lead byte needs; -1 for bytes that cannot start a sequence.
int continuation_count(unsigned char b) {
  if (b < 0x80) return 0;
  if (b < 0xC0) return -1;  // continuation byte
  if (b < 0xC2) return -1;  // 0xC0, 0xC1: only overlong forms of ASCII
  if (b < 0xE0) return 1;
  if (b < 0xF0) return 2;
  if (b < 0xF5) return 3;
  return -1;  // 0xF5..0xFF: would encode above U+10FFFF (or are not UTF-8 at all)
}

bool is_continuation(unsigned char b) { return (b & 0xC0) == 0x80; }

// Decodes one multi-byte sequence starting at bytes[i] (a non-ASCII byte). On success
// stores the code point and the sequence length; otherwise returns false and says why.
bool decode_sequence(std::string_view bytes, size_t i, char32_t& cp, int& len, std::string* why) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const unsigned char lead = p[i];
  const int extra = continuation_count(lead);
  if (extra < 0) {
    if (why) {
      if (is_continuation(lead))
        *why = "unexpected continuation byte " + hex_byte(lead) + " (no lead byte before it)";
      else if (lead < 0xC2)
        *why = "invalid lead byte " + hex_byte(lead) + " (it only starts overlong encodings)";
      else
        *why = "invalid byte " + hex_byte(lead) + " (never used in UTF-8)";
    }
    return false;
  }
  char32_t value = lead & (0x3F >> extra);
  for (int k = 1; k <= extra; ++k) {
    if (i + k >= bytes.size()) {
      if (why)
        *why = "truncated sequence: lead byte " + hex_byte(lead) + " needs " + std::to_string(extra) +
               " continuation byte" + (extra > 1 ? "s" : "") + " but the input ends after " + std::to_string(k - 1);
      return false;
    }
    const unsigned char c = p[i + k];
    if (!is_continuation(c)) {
      if (why)
        *why = "truncated sequence: lead byte " + hex_byte(lead) + " needs " + std::to_string(extra) +
               " continuation byte" + (extra > 1 ? "s" : "") + " but byte " + hex_byte(c) + " at offset " +
               std::to_string(i + k) + " is not one";
      return false;
    }
    value = (value << 6) | (c & 0x3F);
  }
  static constexpr char32_t kMin[4] = {0, 0x80, 0x800, 0x10000};
  if (value < kMin[extra]) {
    if (why)
      *why = "overlong " + std::to_string(extra + 1) + "-byte encoding of " + code_point_name(value);
    return false;
  }
  if (value >= 0xD800 && value <= 0xDFFF) {
    if (why) *why = "encoded surrogate " + code_point_name(value) + " (surrogates are not allowed in UTF-8)";
    return false;
  }
  if (value > 0x10FFFF) {
    if (why) *why = "code point " + code_point_name(value) + " is above U+10FFFF";
    return false;
  }
  cp = value;
  len = extra + 1;
  return true;
}

// Length of the run of ASCII bytes starting at i, checked 8 bytes at a time.
size_t ascii_run(const unsigned char* p, size_t i, size_t n) {
  const size_t start = i;
  while (i + 8 <= n) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (w & 0x8080808080808080ull) break;
    i += 8;
  }
  while (i < n && p[i] < 0x80) ++i;
  return i - start;
}

}  // namespace

std::u32string utf8_decode(std::string_view bytes, std::string_view source) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  // Every code point takes at least one byte, so n code points is an upper bound; writing
  // through a raw pointer and shrinking at the end keeps the loop free of reallocation.
  std::u32string out(n, U'\0');
  char32_t* o = out.data();
  size_t i = 0;
  while (i < n) {
    const size_t run = ascii_run(p, i, n);
    for (size_t k = 0; k < run; ++k) o[k] = p[i + k];
    o += run;
    i += run;
    while (i < n && p[i] >= 0x80) {
      // Two-byte sequences (Latin, Greek, Cyrillic...) inline; the rest through the full check.
      if (p[i] >= 0xC2 && p[i] <= 0xDF && i + 1 < n && is_continuation(p[i + 1])) {
        *o++ = (static_cast<char32_t>(p[i] & 0x1F) << 6) | (p[i + 1] & 0x3F);
        i += 2;
        continue;
      }
      char32_t cp;
      int len;
      if (!decode_sequence(bytes, i, cp, len, nullptr)) {
        std::string why;
        decode_sequence(bytes, i, cp, len, &why);
        const size_t line = 1 + static_cast<size_t>(std::count(bytes.begin(), bytes.begin() + i, '\n'));
        throw Error(std::string(source) + ": invalid UTF-8 at byte offset " + std::to_string(i) + " (line " +
                    std::to_string(line) + "): " + why);
      }
      *o++ = cp;
      i += static_cast<size_t>(len);
    }
  }
  out.resize(static_cast<size_t>(o - out.data()));
  return out;
}

bool utf8_valid(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t i = 0;
  while (i < bytes.size()) {
    i += ascii_run(p, i, bytes.size());
    if (i == bytes.size()) break;
    char32_t cp;
    int len;
    if (!decode_sequence(bytes, i, cp, len, nullptr)) return false;
    i += static_cast<size_t>(len);
  }
  return true;
}

std::string utf8_repair(std::string_view bytes) {
  if (utf8_valid(bytes)) return std::string(bytes);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  std::string out;
  out.reserve(bytes.size() + 8);
  size_t i = 0;
  while (i < bytes.size()) {
    if (p[i] < 0x80) {
      out.push_back(static_cast<char>(p[i++]));
      continue;
    }
    char32_t cp;
    int len;
    if (decode_sequence(bytes, i, cp, len, nullptr)) {
      out.append(bytes.substr(i, static_cast<size_t>(len)));
      i += static_cast<size_t>(len);
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    }
  }
  return out;
}

void utf8_append(std::string& out, char32_t cp) {
  POTOP_CHECK(is_scalar_value(cp), "cannot encode " + code_point_name(cp) + " as UTF-8");
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string utf8_encode(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t cp : text) utf8_append(out, cp);
  return out;
}

std::string utf8_encode(char32_t cp) {
  std::string out;
  utf8_append(out, cp);
  return out;
}

std::string code_point_name(char32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(cp));
  return buf;
}

std::string describe_char(char32_t cp) {
  switch (cp) {
    case U'\n': return "newline (U+000A)";
    case U'\t': return "tab (U+0009)";
    case U'\r': return "carriage return (U+000D)";
    default: break;
  }
  const bool control = cp < 0x20 || (cp >= 0x7F && cp <= 0x9F);
  const bool noncharacter = (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE;
  if (control || noncharacter || !is_scalar_value(cp)) return code_point_name(cp);
  // Appended piece by piece: "'" + std::string(...) trips GCC 12's -Wrestrict false positive.
  std::string s = "'";
  s += utf8_encode(cp);
  s += "' (";
  s += code_point_name(cp);
  s += ')';
  return s;
}

}  // namespace potop
