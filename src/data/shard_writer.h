// Writes a stream of token ids as shard files (data/data_format.h): "<prefix>-00000.bin",
// "<prefix>-00001.bin", ..., each at most max_tokens ids of raw little-endian u16 or u32, with
// the XXH64 of each computed as it is written. Each shard is fsynced when it is complete.
// potop prepare writes into a temporary directory that it renames only when everything is
// written, so a shard is never seen half-written under its final name.
#pragma once
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "core/safetensors.h"
#include "data/data_format.h"

namespace potop {

class ShardWriter {
 public:
  // vocab_size bounds the ids written (POTOP_CHECK: the tokenizer's ids are in range).
  ShardWriter(std::filesystem::path dir, std::string prefix, IdType ids, int vocab_size, uint64_t max_tokens);
  ~ShardWriter();
  ShardWriter(const ShardWriter&) = delete;
  ShardWriter& operator=(const ShardWriter&) = delete;

  // Appends ids. Throws potop::Error naming the shard when a write fails (a full disk).
  void write(std::span<const int> ids);
  // Completes the last shard; returns every shard written, in order (none when no id was).
  std::vector<ShardInfo> finish();
  uint64_t tokens() const { return total_; }

 private:
  void open_next();
  void flush();
  void close_current();

  std::filesystem::path dir_;
  std::string prefix_;
  int width_;
  uint32_t vocab_size_;
  uint64_t max_tokens_;
  int fd_ = -1;
  std::filesystem::path path_;
  uint64_t in_shard_ = 0, total_ = 0;
  Xxh64 hash_;
  std::vector<unsigned char> buffer_;
  std::vector<ShardInfo> shards_;
};

}  // namespace potop
