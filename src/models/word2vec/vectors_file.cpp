#include "models/word2vec/vectors_file.h"

#include <bit>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include "core/error.h"
#include "core/file_io.h"

namespace potop {
namespace {

std::string header(const KeyedVectors& v) { return std::to_string(v.size()) + " " + std::to_string(v.dim) + "\n"; }

// A cursor over the file's bytes that knows the file's name for its errors.
struct Reader {
  const std::string& bytes;
  std::string name;
  size_t at = 0;
  [[noreturn]] void fail(const std::string& what) const { throw Error(name + ": " + what); }
  bool done() const { return at >= bytes.size(); }
  std::string_view line() {  // up to (not including) the next '\n'; at moves past it
    const size_t end = bytes.find('\n', at);
    std::string_view l(bytes.data() + at, (end == std::string::npos ? bytes.size() : end) - at);
    at = end == std::string::npos ? bytes.size() : end + 1;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    return l;
  }
};

void parse_header(Reader& r, long& words, int& dim) {
  const std::string_view h = r.line();
  const char* p = h.data();
  const char* end = h.data() + h.size();
  auto number = [&](long& out) {
    while (p < end && *p == ' ') ++p;
    auto [q, ec] = std::from_chars(p, end, out);
    if (ec != std::errc() || q == p) return false;
    p = q;
    return true;
  };
  long d = 0;
  if (!number(words) || !number(d) || words < 1 || d < 1 || d > 1000000)
    r.fail("the first line must be '<words> <dim>' (two positive integers), got '" +
           std::string(h.substr(0, 60)) + "'");
  while (p < end && *p == ' ') ++p;
  if (p != end) r.fail("the first line must be '<words> <dim>', got '" + std::string(h.substr(0, 60)) + "'");
  dim = static_cast<int>(d);
}

void check_unique(Reader& r, std::unordered_set<std::string>& seen, const std::string& word, long index) {
  if (word.empty()) r.fail("word " + std::to_string(index + 1) + " is empty");
  if (!seen.insert(word).second) r.fail("word " + std::to_string(index + 1) + " '" + word + "' appears twice");
}

KeyedVectors read_text(Reader& r) {
  long words = 0;
  KeyedVectors v;
  parse_header(r, words, v.dim);
  std::unordered_set<std::string> seen;
  v.words.reserve(static_cast<size_t>(words));
  v.data.reserve(static_cast<size_t>(words) * v.dim);
  long line_number = 1;
  for (long i = 0; i < words; ++i) {
    if (r.done())
      r.fail("ends after " + std::to_string(i) + " of the " + std::to_string(words) +
             " words its first line announces (truncated?)");
    const std::string_view l = r.line();
    ++line_number;
    const std::string where = "line " + std::to_string(line_number) + ": ";
    size_t space = l.find(' ');
    if (space == std::string_view::npos) r.fail(where + "expected a word and " + std::to_string(v.dim) + " numbers");
    v.words.emplace_back(l.substr(0, space));
    check_unique(r, seen, v.words.back(), i);
    const char* p = l.data() + space;
    const char* end = l.data() + l.size();
    int count = 0;
    for (;;) {
      while (p < end && *p == ' ') ++p;
      if (p == end) break;
      float x = 0;
      auto [q, ec] = std::from_chars(p, end, x);
      if (ec != std::errc() || (q < end && *q != ' '))
        r.fail(where + "'" + std::string(p, std::min<size_t>(20, static_cast<size_t>(end - p))) + "' is not a number");
      if (++count <= v.dim) v.data.push_back(x);
      p = q;
    }
    if (count != v.dim)
      r.fail(where + "'" + v.words.back() + "' has " + std::to_string(count) + " values, but the first line says dim " +
             std::to_string(v.dim));
  }
  while (!r.done()) {
    const std::string_view l = r.line();
    ++line_number;
    if (l.find_first_not_of(" \t") != std::string_view::npos)
      r.fail("line " + std::to_string(line_number) + ": more words than the " + std::to_string(words) +
             " its first line announces");
  }
  return v;
}

KeyedVectors read_binary(Reader& r) {
  long words = 0;
  KeyedVectors v;
  parse_header(r, words, v.dim);
  std::unordered_set<std::string> seen;
  const size_t row_bytes = static_cast<size_t>(v.dim) * sizeof(float);
  v.data.resize(static_cast<size_t>(words) * v.dim);
  for (long i = 0; i < words; ++i) {
    const std::string truncated = "ends inside word " + std::to_string(i + 1) + " of the " + std::to_string(words) +
                                  " its first line announces (truncated?)";
    while (!r.done() && (r.bytes[r.at] == '\n' || r.bytes[r.at] == ' ')) ++r.at;  // gensim skips these too
    const size_t space = r.bytes.find(' ', r.at);
    if (r.done() || space == std::string::npos) r.fail(truncated);
    v.words.emplace_back(r.bytes.substr(r.at, space - r.at));
    if (v.words.back().find('\n') != std::string::npos || v.words.back().size() > 10000)
      r.fail("word " + std::to_string(i + 1) + " is not followed by its " + std::to_string(v.dim) +
             " values where expected: the file is not in the binary format its first line promises");
    check_unique(r, seen, v.words.back(), i);
    r.at = space + 1;
    if (r.bytes.size() - r.at < row_bytes) r.fail(truncated);
    std::memcpy(v.data.data() + static_cast<size_t>(i) * v.dim, r.bytes.data() + r.at, row_bytes);
    r.at += row_bytes;
  }
  while (!r.done() && (r.bytes[r.at] == '\n' || r.bytes[r.at] == ' ')) ++r.at;
  if (!r.done())
    r.fail(std::to_string(r.bytes.size() - r.at) + " bytes after the " + std::to_string(words) +
           " words its first line announces (the header disagrees with the body)");
  return v;
}

}  // namespace

void write_word2vec_text(const std::filesystem::path& path, const KeyedVectors& v) {
  write_file_atomic(path, [&](FileSink& out) {
    out.write(header(v));
    std::string line;
    char number[32];
    for (int i = 0; i < v.size(); ++i) {
      line = v.words[static_cast<size_t>(i)];
      const float* row = v.row(i);
      for (int j = 0; j < v.dim; ++j) {
        const int n = std::snprintf(number, sizeof number, " %.9g", static_cast<double>(row[j]));
        line.append(number, static_cast<size_t>(n));
      }
      line += '\n';
      out.write(line);
    }
  });
}

void write_word2vec_binary(const std::filesystem::path& path, const KeyedVectors& v) {
  static_assert(std::endian::native == std::endian::little, "the binary format is little-endian");
  write_file_atomic(path, [&](FileSink& out) {
    out.write(header(v));
    for (int i = 0; i < v.size(); ++i) {
      out.write(v.words[static_cast<size_t>(i)] + " ");
      out.write(v.row(i), static_cast<size_t>(v.dim) * sizeof(float));
      out.write("\n");
    }
  });
}

KeyedVectors read_word2vec(const std::filesystem::path& path) {
  const std::filesystem::path file = std::filesystem::is_directory(path) ? path / "vectors.bin" : path;
  const std::string bytes = read_file(file);
  Reader r{bytes, file.string()};
  if (bytes.empty()) r.fail("is empty, expected word vectors");
  return file.extension() == ".bin" ? read_binary(r) : read_text(r);
}

}  // namespace potop
