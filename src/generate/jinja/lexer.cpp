#include "generate/jinja/lexer.h"

#include <array>
#include <utility>

#include "generate/jinja/error.h"
#include "generate/jinja/js_text.h"
#include "tokenizer/utf8.h"

namespace potop::jinja {

namespace {

bool ascii_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool ascii_digit(char c) { return c >= '0' && c <= '9'; }

// Where the code point before s[i] starts.
size_t previous_code_point(std::string_view s, size_t i) {
  do --i;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80);
  return i;
}

bool space_at(std::string_view s, size_t i) {
  return i < s.size() && js_space(next_code_point(s, i));
}

size_t skip_spaces(std::string_view s, size_t i) {
  while (space_at(s, i)) next_code_point(s, i);
  return i;
}

// JavaScript's multiline ^: the start, or after \n, \r, U+2028 or U+2029.
bool line_start(std::string_view s, size_t i) {
  if (i == 0 || s[i - 1] == '\n' || s[i - 1] == '\r') return true;
  return i >= 3 && s.substr(i - 3, 2) == "\xE2\x80" && (s[i - 1] == '\xA8' || s[i - 1] == '\xA9');
}

// lstrip_blocks: /^[ \t]*({[#%-])/gm -> "$1".
std::string lstrip_blocks(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (line_start(s, i)) {
      size_t j = i;
      while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
      if (j + 1 < s.size() && s[j] == '{' && (s[j + 1] == '#' || s[j + 1] == '%' || s[j + 1] == '-')) i = j;
    }
    out += s[i++];
  }
  return out;
}

// trim_blocks: /([#%-]})\n/g -> "$1".
std::string trim_blocks(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (i + 2 < s.size() && (s[i] == '#' || s[i] == '%' || s[i] == '-') && s[i + 1] == '}' && s[i + 2] == '\n') {
      out += s.substr(i, 2);
      i += 3;
    } else {
      out += s[i++];
    }
  }
  return out;
}

// /(\s*){%(-?)\s*(?:end)?generation\s*(-?)%}(\s*)/gs -> the whitespace each side unless stripped.
std::string drop_generation_tags(std::string_view s) {
  std::string out;
  size_t last = 0;  // the end of the previous match
  for (size_t k = s.find("{%"); k != std::string_view::npos; k = s.find("{%", k + 1)) {
    size_t j = k + 2;
    const bool lstrip = j < s.size() && s[j] == '-';
    if (lstrip) ++j;
    j = skip_spaces(s, j);
    if (s.substr(j).starts_with("end")) j += 3;
    if (!s.substr(j).starts_with("generation")) continue;
    j = skip_spaces(s, j + 10);
    const bool rstrip = j < s.size() && s[j] == '-';
    if (rstrip) ++j;
    if (!s.substr(j).starts_with("%}")) continue;
    const size_t tag_end = j + 2, after_end = skip_spaces(s, tag_end);
    size_t before = k;
    while (before > last) {
      const size_t p = previous_code_point(s, before);
      if (!space_at(s, p)) break;
      before = p;
    }
    out += s.substr(last, before - last);
    if (!lstrip) out += s.substr(before, k - before);
    if (!rstrip) out += s.substr(tag_end, after_end - tag_end);
    last = after_end;
    k = after_end - 1;
  }
  return out + std::string(s.substr(last));
}

constexpr std::array<std::pair<std::string_view, TokenType>, 29> kSymbols{{
    {"{%", TokenType::kOpenStatement}, {"%}", TokenType::kCloseStatement}, {"{{", TokenType::kOpenExpression},
    {"}}", TokenType::kCloseExpression}, {"(", TokenType::kOpenParen}, {")", TokenType::kCloseParen},
    {"{", TokenType::kOpenCurly}, {"}", TokenType::kCloseCurly}, {"[", TokenType::kOpenSquare},
    {"]", TokenType::kCloseSquare}, {",", TokenType::kComma}, {".", TokenType::kDot}, {":", TokenType::kColon},
    {"|", TokenType::kPipe}, {"<=", TokenType::kComparison}, {">=", TokenType::kComparison},
    {"==", TokenType::kComparison}, {"!=", TokenType::kComparison}, {"<", TokenType::kComparison},
    {">", TokenType::kComparison}, {"+", TokenType::kAdditive}, {"-", TokenType::kAdditive},
    {"~", TokenType::kAdditive}, {"**", TokenType::kPower}, {"*", TokenType::kMultiplicative},
    {"//", TokenType::kMultiplicative}, {"/", TokenType::kMultiplicative}, {"%", TokenType::kMultiplicative},
    {"=", TokenType::kEquals},
}};

class Lexer {
 public:
  explicit Lexer(std::string src) : src_(std::move(src)) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) step();
    return std::move(tokens_);
  }

 private:
  const TokenType* last_type() const { return tokens_.empty() ? nullptr : &tokens_.back().type; }
  bool at(std::string_view s) const { return std::string_view(src_).substr(pos_).starts_with(s); }
  void push(std::string value, TokenType type) { tokens_.push_back({std::move(value), type}); }

  // The reference's consumeWhile: what satisfies `keep`, with a string's escapes; running into
  // the end of the template is an error.
  template <typename Keep>
  std::string consume_while(Keep keep) {
    std::string out;
    while (keep(pos_)) {
      if (pos_ < src_.size() && src_[pos_] == '\\') {
        if (++pos_ >= src_.size()) syntax_error("unexpected end of input");
        const char e = src_[pos_++];
        if (e == 'x' || e == 'u') {
          const size_t n = e == 'x' ? 2 : 4;
          const std::string hex = src_.substr(pos_, n);
          if (hex.size() != n || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
            syntax_error(std::string("invalid hexadecimal escape sequence \\") + e + hex);
          auto cp = static_cast<char32_t>(std::stoul(hex, nullptr, 16));
          pos_ += n;
          // "\uD83D\uDE00": two UTF-16 escapes that make one character.
          if (e == 'u' && cp >= 0xD800 && cp <= 0xDBFF && src_.compare(pos_, 2, "\\u") == 0) {
            const std::string low = src_.substr(pos_ + 2, 4);
            if (low.size() == 4 && low.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos) {
              const auto l = static_cast<char32_t>(std::stoul(low, nullptr, 16));
              if (l >= 0xDC00 && l <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (l - 0xDC00);
                pos_ += 6;
              }
            }
          }
          if (!is_scalar_value(cp)) unsupported("a string escape of a lone surrogate (\\u" + hex + ")");
          utf8_append(out, cp);
          continue;
        }
        const std::string_view from = "ntrbfv'\"\\", to = "\n\t\r\b\f\v'\"\\";
        const size_t k = from.find(e);
        if (k == std::string_view::npos) syntax_error(std::string("unexpected escaped character ") + e);
        out += to[k];
        continue;
      }
      out += src_[pos_++];
      if (pos_ >= src_.size()) syntax_error("unexpected end of input");
    }
    return out;
  }

  void strip_trailing_whitespace() {
    if (tokens_.empty() || tokens_.back().type != TokenType::kText) return;
    tokens_.back().value = js_trim_end(tokens_.back().value);
    if (tokens_.back().value.empty()) tokens_.pop_back();
  }

  void step() {
    const TokenType* last = last_type();
    if (!last || *last == TokenType::kCloseStatement || *last == TokenType::kCloseExpression ||
        *last == TokenType::kComment) {
      size_t end = pos_;
      while (end < src_.size() &&
             !(src_[end] == '{' && end + 1 < src_.size() &&
               (src_[end + 1] == '%' || src_[end + 1] == '{' || src_[end + 1] == '#')))
        ++end;
      if (end > pos_) {
        push(src_.substr(pos_, end - pos_), TokenType::kText);
        pos_ = end;
        return;
      }
    }
    if (at("{#")) return comment();
    if (at("{%-") || at("{{-")) {
      strip_trailing_whitespace();
      const bool statement = at("{%-");
      push(statement ? "{%" : "{{", statement ? TokenType::kOpenStatement : TokenType::kOpenExpression);
      if (!statement) curly_depth_ = 0;
      pos_ += 3;
      return;
    }
    // Whitespace inside a tag, JavaScript's \s (U+00A0, U+3000, ...): skipped; running into the
    // end of the template is an error, as the reference's consumeWhile makes it.
    if (const size_t end = skip_spaces(src_, pos_); end > pos_) {
      if (end >= src_.size()) syntax_error("unexpected end of input");
      pos_ = end;
    }
    if (at("-%}") || at("-}}")) {
      const bool statement = at("-%}");
      push(statement ? "%}" : "}}", statement ? TokenType::kCloseStatement : TokenType::kCloseExpression);
      pos_ = skip_spaces(src_, pos_ + 3);
      return;
    }
    const char c = src_[pos_];
    if (c == '-' || c == '+') {
      last = last_type();
      if (!last || *last == TokenType::kText) syntax_error(std::string("unexpected character ") + c);
      const bool binary = *last == TokenType::kIdentifier || *last == TokenType::kNumber ||
                          *last == TokenType::kString || *last == TokenType::kCloseParen ||
                          *last == TokenType::kCloseSquare;
      if (!binary) {
        ++pos_;
        std::string num = consume_while([&](size_t i) { return i < src_.size() && ascii_digit(src_[i]); });
        if (!num.empty() && pos_ + 1 < src_.size() && src_[pos_] == '.' && ascii_digit(src_[pos_ + 1])) {
          ++pos_;
          num += '.';
          num += consume_while([&](size_t i) { return i < src_.size() && ascii_digit(src_[i]); });
        }
        push(c + num, num.empty() ? TokenType::kUnary : TokenType::kNumber);
        return;
      }
    }
    for (const auto& [seq, type] : kSymbols) {
      if (seq == "}}" && curly_depth_ > 0) continue;
      if (!at(seq)) continue;
      push(std::string(seq), type);
      if (type == TokenType::kOpenExpression) curly_depth_ = 0;
      if (type == TokenType::kOpenCurly) ++curly_depth_;
      if (type == TokenType::kCloseCurly) --curly_depth_;
      pos_ += seq.size();
      return;
    }
    if (c == '\'' || c == '"') {
      ++pos_;
      std::string s = consume_while([&](size_t i) { return i >= src_.size() || src_[i] != c; });
      push(std::move(s), TokenType::kString);
      ++pos_;
      return;
    }
    if (ascii_digit(c)) {
      std::string num = consume_while([&](size_t i) { return i < src_.size() && ascii_digit(src_[i]); });
      if (tokens_.back().type != TokenType::kDot && pos_ + 1 < src_.size() && src_[pos_] == '.' &&
          ascii_digit(src_[pos_ + 1])) {
        ++pos_;
        num += '.';
        num += consume_while([&](size_t i) { return i < src_.size() && ascii_digit(src_[i]); });
      }
      push(std::move(num), TokenType::kNumber);
      return;
    }
    if (ascii_word(c)) {
      push(consume_while([&](size_t i) { return i < src_.size() && ascii_word(src_[i]); }), TokenType::kIdentifier);
      return;
    }
    size_t end = pos_;
    next_code_point(src_, end);
    syntax_error(std::string("unexpected character ").append(src_, pos_, end - pos_));
  }

  void comment() {
    pos_ += 2;
    const bool strip_before = pos_ < src_.size() && src_[pos_] == '-';
    if (strip_before) ++pos_;
    std::string text;
    while (!(pos_ + 1 < src_.size() && src_[pos_] == '#' && src_[pos_ + 1] == '}')) {
      if (pos_ + 2 >= src_.size()) syntax_error("missing end of comment tag");
      text += src_[pos_++];
    }
    const bool strip_after = text.ends_with('-');
    if (strip_after) text.pop_back();
    if (strip_before) strip_trailing_whitespace();
    push(std::move(text), TokenType::kComment);
    pos_ += 2;
    if (strip_after) pos_ = skip_spaces(src_, pos_);
  }

  std::string src_;
  size_t pos_ = 0;
  int curly_depth_ = 0;
  std::vector<Token> tokens_;
};

}  // namespace

std::string preprocess(std::string_view source) {
  std::string s(source);
  if (s.ends_with('\n')) s.pop_back();
  return drop_generation_tags(trim_blocks(lstrip_blocks(s)));
}

std::vector<Token> tokenize(std::string_view source) { return Lexer(preprocess(source)).run(); }

}  // namespace potop::jinja
