#include "data/corpus_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace potop {

namespace fs = std::filesystem;

namespace {

std::string plural(size_t n, const std::string& what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); }

bool hidden(const fs::path& p) { return p.filename().string().starts_with("."); }

}  // namespace

CorpusListing list_corpus(const fs::path& data) {
  const std::string name = data.string();
  std::error_code ec;
  const fs::file_status st = fs::status(data, ec);
  if (st.type() == fs::file_type::not_found) throw Error(name + ": file or directory not found");
  if (ec) throw Error(name + ": cannot access (" + ec.message() + ")");
  CorpusListing listing;
  if (st.type() == fs::file_type::regular) {
    const uint64_t size = fs::file_size(data, ec);
    if (ec) throw Error(name + ": cannot access (" + ec.message() + ")");
    if (size == 0) throw Error(name + ": file is empty");
    listing.files.push_back({data, name, size});
    listing.bytes = size;
    return listing;
  }
  if (st.type() != fs::file_type::directory)
    throw Error(name + ": not a regular file or directory (a device, pipe or socket?); expected text files");

  listing.directory = true;
  std::vector<std::pair<std::string, fs::path>> found;  // relative path, path
  fs::recursive_directory_iterator it(data, fs::directory_options::none, ec), end;
  if (ec) throw Error(name + ": cannot read directory (" + ec.message() + ")");
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    const fs::path& p = it->path();
    if (hidden(p)) {
      ++listing.skipped_hidden;
      if (it->is_directory(ec) && !it->is_symlink(ec)) it.disable_recursion_pending();
      continue;
    }
    const fs::file_status s = it->status(ec);  // follows a link
    if (ec) throw Error(p.string() + ": cannot access (" + ec.message() + ")");
    if (s.type() == fs::file_type::directory) continue;  // a real one is descended; a link to one is not
    if (s.type() != fs::file_type::regular) {
      ++listing.skipped_special;
      continue;
    }
    found.emplace_back(p.lexically_relative(data).generic_string(), p);
  }
  if (ec) throw Error(name + ": cannot read directory (" + ec.message() + ")");
  std::sort(found.begin(), found.end());
  for (const auto& [rel, path] : found) {
    const uint64_t size = fs::file_size(path, ec);
    if (ec) throw Error(path.string() + ": cannot access (" + ec.message() + ")");
    if (size == 0) {
      ++listing.skipped_empty;
      continue;
    }
    listing.files.push_back({path, (data / rel).string(), size});
    listing.bytes += size;
  }
  if (listing.files.empty()) {
    std::string skipped;
    if (listing.skipped_empty) skipped += plural(listing.skipped_empty, "empty file");
    if (listing.skipped_hidden) skipped += (skipped.empty() ? "" : ", ") + plural(listing.skipped_hidden, "hidden entry");
    if (listing.skipped_special)
      skipped += (skipped.empty() ? "" : ", ") + plural(listing.skipped_special, "entry that is not a regular file");
    throw Error(name + ": no text files in this directory" + (skipped.empty() ? " (it is empty)" : " (skipped " + skipped + ")"));
  }
  return listing;
}

size_t chunk_cut(const std::string& text) {
  if (const size_t nl = text.rfind('\n'); nl != std::string::npos) return nl + 1;
  if (const size_t sp = text.find_last_of(" \t"); sp != std::string::npos && sp > 0) return sp;
  // No line or word boundary: cut before the last character (at its lead byte).
  size_t cut = text.size() - 1;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return cut > 0 ? cut : text.size();
}

ChunkReader::ChunkReader(const CorpusFile& file, size_t file_index, size_t max_bytes)
    : file_(file), index_(file_index), max_bytes_(std::max<size_t>(max_bytes, 16)) {
  fd_ = ::open(file.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error(file.name + ": cannot open (" + std::strerror(errno) + ")");
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
}

ChunkReader::~ChunkReader() {
  if (fd_ >= 0) ::close(fd_);
}

bool ChunkReader::fill(std::string& s, size_t n) {
  const size_t old = s.size();
  s.resize(old + n);
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd_, s.data() + old + got, n - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw Error(file_.name + ": cannot read (" + std::strerror(errno) + ")");
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  s.resize(old + got);
  read_ += got;
  return got == n;
}

bool ChunkReader::next(TextChunk& chunk) {
  chunk.text = std::move(carry_);
  carry_.clear();
  if (!eof_ && chunk.text.size() < max_bytes_) eof_ = !fill(chunk.text, max_bytes_ - chunk.text.size());
  chunk.file = index_;
  chunk.offset = offset_;
  chunk.first = !started_;
  if (!started_) {
    started_ = true;
    if (chunk.text.starts_with("\xEF\xBB\xBF")) {
      chunk.text.erase(0, 3);
      chunk.offset = offset_ = 3;
    }
    if (chunk.text.empty() && eof_) return true;  // only a byte-order mark: one empty chunk
  }
  if (chunk.text.empty()) return false;
  if (!eof_) {
    const size_t cut = chunk_cut(chunk.text);
    carry_.assign(chunk.text, cut, std::string::npos);
    chunk.text.resize(cut);
  }
  offset_ += chunk.text.size();
  return true;
}

}  // namespace potop
