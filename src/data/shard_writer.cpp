#include "data/shard_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.h"

namespace potop {

namespace {
constexpr size_t kBufferBytes = size_t{1} << 20;
}

ShardWriter::ShardWriter(std::filesystem::path dir, std::string prefix, IdType ids, int vocab_size, uint64_t max_tokens)
    : dir_(std::move(dir)),
      prefix_(std::move(prefix)),
      width_(id_bytes(ids)),
      vocab_size_(static_cast<uint32_t>(vocab_size)),
      max_tokens_(max_tokens) {
  POTOP_CHECK(max_tokens >= 1, "a shard must hold at least one token");
  POTOP_CHECK(ids == IdType::kU32 || vocab_size <= 65536, "u16 ids for a vocabulary above 65536");
  buffer_.reserve(kBufferBytes);
}

ShardWriter::~ShardWriter() {
  if (fd_ >= 0) ::close(fd_);  // an error path: the temporary directory is removed
}

void ShardWriter::open_next() {
  char name[64];
  std::snprintf(name, sizeof name, "%s-%05zu.bin", prefix_.c_str(), shards_.size());
  path_ = dir_ / name;
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(path_.string() + ": cannot create shard: " + std::strerror(errno));
  in_shard_ = 0;
  hash_ = Xxh64();
}

void ShardWriter::flush() {
  hash_.update(buffer_.data(), buffer_.size());
  const unsigned char* p = buffer_.data();
  size_t n = buffer_.size();
  while (n > 0) {
    const ssize_t r = ::write(fd_, p, n);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw Error(path_.string() + ": write failed: " + std::strerror(errno));
    }
    p += r;
    n -= static_cast<size_t>(r);
  }
  buffer_.clear();
}

void ShardWriter::close_current() {
  flush();
  if (::fsync(fd_) != 0) throw Error(path_.string() + ": fsync failed: " + std::strerror(errno));
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) throw Error(path_.string() + ": close failed: " + std::strerror(errno));
  shards_.push_back({path_.filename().string(), in_shard_, hash_.digest()});
}

void ShardWriter::write(std::span<const int> ids) {
  size_t i = 0;
  while (i < ids.size()) {
    if (fd_ < 0) open_next();
    const size_t room = static_cast<size_t>(max_tokens_ - in_shard_);
    const size_t take = std::min(room, ids.size() - i);
    for (size_t k = 0; k < take; ++k) {
      const uint32_t v = static_cast<uint32_t>(ids[i + k]);
      POTOP_CHECK(v < vocab_size_, "the tokenizer gave an id outside its vocabulary");
      // Little-endian, whatever the machine.
      buffer_.push_back(static_cast<unsigned char>(v));
      buffer_.push_back(static_cast<unsigned char>(v >> 8));
      if (width_ == 4) {
        buffer_.push_back(static_cast<unsigned char>(v >> 16));
        buffer_.push_back(static_cast<unsigned char>(v >> 24));
      }
      if (buffer_.size() >= kBufferBytes) flush();
    }
    i += take;
    in_shard_ += take;
    total_ += take;
    if (in_shard_ == max_tokens_) close_current();
  }
}

std::vector<ShardInfo> ShardWriter::finish() {
  if (fd_ >= 0) close_current();
  return shards_;
}

}  // namespace potop
