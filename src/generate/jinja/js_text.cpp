#include "generate/jinja/js_text.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include <unicode/locid.h>
#include <unicode/unistr.h>

#include "tokenizer/utf8.h"

namespace potop::jinja {

char32_t next_code_point(std::string_view s, size_t& i) {
  const auto b = static_cast<unsigned char>(s[i]);
  const int n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
  char32_t c = n == 1 ? b : n == 2 ? b & 0x1F : n == 3 ? b & 0x0F : b & 0x07;
  for (int k = 1; k < n && i + k < s.size(); ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += n;
  return c;
}

bool js_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
         c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000 || c == 0xFEFF;
}

std::string js_trim_start(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t next = i;
    if (!js_space(next_code_point(s, next))) break;
    i = next;
  }
  return std::string(s.substr(i));
}

std::string js_trim_end(std::string_view s) {
  size_t end = 0;  // just past the last character that is not whitespace
  for (size_t i = 0; i < s.size();)
    if (!js_space(next_code_point(s, i))) end = i;
  return std::string(s.substr(0, end));
}

std::string js_trim(std::string_view s) { return js_trim_end(js_trim_start(s)); }

long js_length(std::string_view s) {
  long n = 0;
  for (size_t i = 0; i < s.size();) n += next_code_point(s, i) > 0xFFFF ? 2 : 1;
  return n;
}

namespace {

std::string utf8_of(const icu::UnicodeString& u) {
  std::string out;
  u.toUTF8String(out);
  return out;
}

}  // namespace

std::string js_upper(std::string_view s) {
  icu::UnicodeString u = icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), static_cast<int32_t>(s.size())));
  return utf8_of(u.toUpper(icu::Locale::getRoot()));
}

std::string js_lower(std::string_view s) {
  icu::UnicodeString u = icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), static_cast<int32_t>(s.size())));
  return utf8_of(u.toLower(icu::Locale::getRoot()));
}

int js_compare(std::string_view a, std::string_view b) {
  const icu::UnicodeString ua = icu::UnicodeString::fromUTF8(icu::StringPiece(a.data(), static_cast<int32_t>(a.size())));
  const icu::UnicodeString ub = icu::UnicodeString::fromUTF8(icu::StringPiece(b.data(), static_cast<int32_t>(b.size())));
  const int c = ua.compare(ub);  // by code units, as JavaScript compares
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

std::string js_number(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  if (x == 0) return "0";
  if (x < 0) {
    std::string out = "-";
    return out += js_number(-x);
  }
  // The shortest digits that read back as x, and where the decimal point goes (x = 0.d1d2… × 10^n).
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  const std::string sci(buf, r.ptr);
  const size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e))
    if (c != '.') digits += c;
  const int k = static_cast<int>(digits.size());
  const int n = std::stoi(sci.substr(e + 1)) + 1;
  if (k <= n && n <= 21) return digits + std::string(n - k, '0');
  if (0 < n && n <= 21) return digits.substr(0, n) + "." + digits.substr(n);
  if (-6 < n && n <= 0) {
    std::string out = "0.";
    out.append(static_cast<size_t>(-n), '0');
    return out += digits;
  }
  const int exp = n - 1;
  std::string out = digits.substr(0, 1);
  if (k > 1) out.append(".").append(digits, 1);
  out += exp >= 0 ? "e+" : "e-";
  return out += std::to_string(std::abs(exp));
}

std::string js_quote(std::string_view s, bool ensure_ascii) {
  static const char* kHex = "0123456789abcdef";
  auto unit = [&](std::string& out, unsigned u) {
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(u >> shift) & 0xF];
  };
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const size_t start = i;
    const char32_t c = next_code_point(s, i);
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      default: break;
    }
    if (c < 0x20) {
      unit(out, c);
    } else if (ensure_ascii && c >= 0x7F) {
      if (c > 0xFFFF) {
        unit(out, 0xD800 + ((c - 0x10000) >> 10));
        unit(out, 0xDC00 + ((c - 0x10000) & 0x3FF));
      } else {
        unit(out, c);
      }
    } else {
      out.append(s.substr(start, i - start));
    }
  }
  return out + "\"";
}

namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }

// The length of the decimal literal (StrDecimalLiteral, Infinity included) at the start of s; 0 if none.
size_t decimal_prefix(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (s.substr(i).starts_with("Infinity")) return i + 8;
  size_t mantissa = 0;
  while (i < s.size() && digit(s[i])) ++i, ++mantissa;
  if (i < s.size() && s[i] == '.') {
    size_t j = i + 1, fraction = 0;
    while (j < s.size() && digit(s[j])) ++j, ++fraction;
    if (mantissa + fraction > 0) i = j, mantissa += fraction;
  }
  if (mantissa == 0) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    if (j < s.size() && digit(s[j])) {
      while (j < s.size() && digit(s[j])) ++j;
      i = j;
    }
  }
  return i;
}

double decimal_value(std::string_view literal) {
  const bool negative = literal.starts_with('-');
  std::string_view body = literal;
  if (body.starts_with('+') || body.starts_with('-')) body.remove_prefix(1);
  const double v = body == "Infinity" ? HUGE_VAL : std::strtod(std::string(body).c_str(), nullptr);
  return negative ? -v : v;
}

}  // namespace

double js_to_number(std::string_view s) {
  const std::string t = js_trim(s);
  if (t.empty()) return 0;
  if (t.size() > 2 && t[0] == '0' && std::string_view("xXoObB").find(t[1]) != std::string_view::npos) {
    const int base = t[1] == 'x' || t[1] == 'X' ? 16 : t[1] == 'o' || t[1] == 'O' ? 8 : 2;
    double v = 0;
    for (char c : t.substr(2)) {
      const int d = digit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99;
      if (d >= base) return NAN;
      v = v * base + d;
    }
    return v;
  }
  return decimal_prefix(t) == t.size() ? decimal_value(t) : NAN;
}

double js_parse_float(std::string_view s) {
  const std::string t = js_trim_start(s);
  const size_t n = decimal_prefix(t);
  return n == 0 ? NAN : decimal_value(std::string_view(t).substr(0, n));
}

double js_parse_int(std::string_view s) {
  const std::string t = js_trim_start(s);
  size_t i = 0;
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
  const size_t first = i;
  while (i < t.size() && digit(t[i])) ++i;
  if (i == first) return NAN;
  const double v = std::strtod(t.substr(first, i - first).c_str(), nullptr);
  return t[0] == '-' ? -v : v;
}

}  // namespace potop::jinja
