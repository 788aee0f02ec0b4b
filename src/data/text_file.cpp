#include "data/text_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/error.h"
#include "core/hash.h"
#include "core/memory.h"
#include "tokenizer/utf8.h"

namespace potop {

namespace {
constexpr double kMemoryPerByte = 14.0;
}

std::string read_text_file(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  const std::string name = path.string();
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) throw Error(name + ": file not found");
  if (ec) throw Error(name + ": cannot access (" + ec.message() + ")");
  if (st.type() == fs::file_type::directory) throw Error(name + ": is a directory, expected a text file");
  // A device, pipe or socket may never end (/dev/zero, /dev/urandom): refuse it before reading.
  if (st.type() != fs::file_type::regular)
    throw Error(name + ": not a regular file (a device, pipe or socket?); expected a text file");
  const auto size = fs::file_size(path, ec);
  if (ec) throw Error(name + ": cannot access (" + ec.message() + ")");
  // Reading a text into memory takes about kMemoryPerByte bytes for each of its bytes (the bytes,
  // the decoded code points, the token ids, the split): refuse what cannot fit, before reading.
  const double have = physical_memory_bytes(), need = kMemoryPerByte * static_cast<double>(size);
  if (have > 0 && need > have)
    throw Error(name + ": is " + format_gib(static_cast<double>(size)) + "; reading it needs about " + format_gib(need) +
                " of memory, more than this machine has (" + format_gib(have) + ")");

  struct Close { void operator()(std::FILE* f) const { std::fclose(f); } };
  std::unique_ptr<std::FILE, Close> f(std::fopen(name.c_str(), "rb"));
  if (!f) throw Error(name + ": cannot open (" + std::strerror(errno) + ")");

  std::string bytes;
  bytes.reserve(static_cast<size_t>(size));
  // Read to the end rather than trusting the size (/proc files report 0), but no further than
  // memory allows (a file that grows while it is read).
  char buf[1 << 16];
  for (;;) {
    const size_t got = std::fread(buf, 1, sizeof buf, f.get());
    bytes.append(buf, got);
    if (got < sizeof buf) break;
    if (have > 0 && kMemoryPerByte * static_cast<double>(bytes.size()) > have)
      throw Error(name + ": grew past what this machine's memory can hold while it was read");
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
