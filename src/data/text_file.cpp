#include "data/text_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/error.h"
#include "core/hash.h"
#include "tokenizer/utf8.h"

namespace potop {

std::string read_text_file(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  const std::string name = path.string();
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) throw Error(name + ": file not found");
  if (ec) throw Error(name + ": cannot access (" + ec.message() + ")");
  if (st.type() == fs::file_type::directory) throw Error(name + ": is a directory, expected a text file");

  struct Close { void operator()(std::FILE* f) const { std::fclose(f); } };
  std::unique_ptr<std::FILE, Close> f(std::fopen(name.c_str(), "rb"));
  if (!f) throw Error(name + ": cannot open (" + std::strerror(errno) + ")");

  std::string bytes;
  if (st.type() == fs::file_type::regular) {
    const auto size = fs::file_size(path, ec);
    if (!ec) bytes.reserve(static_cast<size_t>(size));
  }
  // Read to the end rather than trusting the size: pipes and /proc files report 0.
  char buf[1 << 16];
  for (;;) {
    const size_t got = std::fread(buf, 1, sizeof buf, f.get());
    bytes.append(buf, got);
    if (got < sizeof buf) break;
  }
  if (std::ferror(f.get())) throw Error(name + ": cannot read (" + std::strerror(errno) + ")");

  if (bytes.empty()) throw Error(name + ": file is empty");
  if (const size_t nul = bytes.find('\0'); nul != std::string::npos)
    throw Error(name + ": looks binary (NUL byte at offset " + std::to_string(nul) + "), expected UTF-8 text");
  return bytes;
}

std::string read_utf8_text(const std::filesystem::path& path) {
  std::string bytes = read_text_file(path);
  if (!utf8_valid(bytes)) utf8_decode(bytes, path.string());  // throws, naming the first bad byte
  if (bytes.starts_with("\xEF\xBB\xBF")) bytes.erase(0, 3);  // the byte-order mark
  if (bytes.empty()) throw Error(path.string() + ": file holds only a byte-order mark, no text");
  return bytes;
}

std::u32string read_utf8_file(const std::filesystem::path& path) {
  std::u32string text = utf8_decode(read_text_file(path), path.string());
  if (!text.empty() && text.front() == U'\uFEFF') text.erase(0, 1);
  if (text.empty()) throw Error(path.string() + ": file holds only a byte-order mark, no text");
  return text;
}

uint64_t hash_training_text(std::u32string_view text) {
  return fnv1a64_raw(text.data(), text.size() * sizeof(char32_t));
}

}  // namespace potop
