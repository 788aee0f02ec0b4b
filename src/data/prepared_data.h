// Reading a data directory written by `potop prepare` (data/data_format.h, docs/data.md).
//
// Shards are memory-mapped a window at a time: a read maps the windows it touches (window_bytes
// each, page-aligned) and keeps the last max_windows of them, so the address space and the
// resident memory a PreparedData uses stay below window_bytes * max_windows however large the
// data is (64 MiB by default), and a process under `ulimit -v` can read more data than it may
// map. Random training windows cost one small mapping each; a sequential pass reuses each window
// until it is done.
//
// Opening checks data.json, that every shard exists with exactly the size its token count
// gives (a truncated or extended shard is refused), and, unless verify_checksums is off, each
// shard's XXH64 (read through a small buffer, not mapped). A read checks every id against the
// vocabulary size, so even an unverified corrupt shard never yields an id out of range.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "data/data_format.h"

namespace potop {

class Tokenizer;

enum class DataSplit { kTrain, kVal };
std::string to_string(DataSplit s);  // "train", "val"

class PreparedData {
 public:
  struct Options {
    bool verify_checksums = true;
    size_t window_bytes = size_t{16} << 20;  // rounded up to a multiple of the page size
    int max_windows = 4;
  };

  // Throws potop::Error naming the directory or file: not a directory, no data.json ("not a
  // prepared data directory"), data.json not JSON or not this format or version, a shard missing,
  // of the wrong size ("truncated"), or (when verifying) whose checksum differs ("corrupted").
  static PreparedData open(const std::filesystem::path& dir, const Options& options);
  static PreparedData open(const std::filesystem::path& dir) { return open(dir, Options{}); }

  PreparedData(PreparedData&&) noexcept;
  PreparedData& operator=(PreparedData&&) noexcept;
  ~PreparedData();

  const DataManifest& manifest() const;
  const std::filesystem::path& dir() const;
  uint64_t size(DataSplit split) const;

  // Copies tokens [begin, begin + n) of the split into out, across shard boundaries.
  // begin + n <= size(split) (POTOP_CHECK). Safe to call from several threads (one lock).
  // Throws potop::Error if a shard changed size since open or holds an id outside the vocabulary.
  void read(DataSplit split, uint64_t begin, size_t n, int* out) const;

  // What identifies the data (tokenizer, ids, every shard's checksum and size, the splits):
  // a training state keeps it as its data hash, so resuming on other data is caught.
  uint64_t content_hash() const;

  // The most bytes mapped at once so far (never above window_bytes * max_windows).
  size_t peak_mapped_bytes() const;

 private:
  struct Impl;
  explicit PreparedData(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Whether `data` is a directory: `potop train --data` and `potop eval --data` take it as prepared
// data (PreparedData::open then refuses one without data.json), anything else as a text file.
bool is_data_directory(const std::filesystem::path& dir);

// Throws potop::Error unless the data was prepared with this tokenizer (same kind, size and
// hash): "<dir>: prepared with the char tokenizer of 95 tokens (hash …), but <whose> is … (hash
// …); prepare it again with that tokenizer, or train with the one it was prepared with".
void check_tokenizer(const PreparedData& data, const Tokenizer& tokenizer, std::string_view whose);

// The raw-text path's rule (split_tokens): the training split must hold at least block_size + 1
// tokens, and so must the validation split unless it is empty. Throws potop::Error naming the
// directory, the split and --block-size.
void check_block_size(const PreparedData& data, int block_size);

}  // namespace potop
