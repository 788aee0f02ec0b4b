// The prepared-data format: what `potop prepare` writes and `PreparedData` reads
// (docs/data.md has the whole description and a numpy snippet).
//
// A data directory holds data.json, the tokenizer (a tokenizer directory named "tokenizer") and
// shard files of raw little-endian token ids, uint16 when
// the vocabulary has at most 65536 tokens and uint32 otherwise, with no header:
//   tail split:      tokens-00000.bin, tokens-00001.bin, ...  one stream; the training split is
//                    its first tokens and the validation split the rest, so one shard may hold
//                    the end of one and the start of the other
//   documents split: train-00000.bin ..., val-00000.bin ...  one stream per split
// data.json lists every shard with its token count and XXH64 checksum, and each split as a list
// of pieces (a range of tokens of one shard) that, concatenated, make the split.
#pragma once
#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/fields.h"

namespace potop {

inline constexpr const char* kDataFile = "data.json";
// The tokenizer the ids are of, a tokenizer directory (save_tokenizer_dir) inside the data one.
inline constexpr const char* kTokenizerDir = "tokenizer";
inline constexpr const char* kDataFormat = "potop.data";
inline constexpr int kDataFormatVersion = 1;
// A shard holds at most this many bytes of ids unless --shard-tokens says otherwise.
inline constexpr uint64_t kDefaultShardBytes = uint64_t{256} << 20;

enum class IdType { kU16, kU32 };
int id_bytes(IdType t);                 // 2 or 4
std::string to_string(IdType t);        // "u16", "u32"
IdType id_type_for(int vocab_size);     // u16 when every id fits (vocab_size <= 65536)

// How the validation split is made (docs/data.md):
//   tail:      the last floor(n * val_fraction) of the n tokens, as the raw-text path does;
//   documents: document i (a file, 0-based in sorted order) goes to validation when
//              floor((i + 1) * val_fraction) > floor(i * val_fraction): every k-th one for
//              val_fraction = 1/k, evenly spread for any other fraction.
enum class SplitBy { kTail, kDocuments };
Choice split_by_choice(SplitBy& value);  // "tail", "documents"
std::string to_string(SplitBy s);
bool document_in_val(uint64_t index, double val_fraction);

struct ShardInfo {
  std::string file;     // a plain file name inside the data directory
  uint64_t tokens = 0;  // ids it holds: its size is tokens * id_bytes
  uint64_t checksum = 0;  // XXH64 (seed 0) of its bytes
};

// tokens [begin, begin + tokens) of shards[shard].
struct SplitPiece {
  size_t shard = 0;
  uint64_t begin = 0, tokens = 0;
};

struct SplitInfo {
  uint64_t tokens = 0;     // the sum of its pieces
  uint64_t documents = 0;  // files that gave it tokens (for the tail split, a file across the
                           // boundary counts in both)
  std::vector<SplitPiece> pieces;
};

// One input file, in the order it was read.
struct SourceFile {
  std::string path;  // as potop prepare named it: --data FILE, or --data DIR joined with its relative path
  uint64_t bytes = 0, characters = 0, tokens = 0;
  std::string split;  // "train", "val", or "train+val" (tail split, across the boundary)
};

struct DataManifest {
  int version = kDataFormatVersion;
  std::string tokenizer_kind;
  int vocab_size = 0;
  uint64_t tokenizer_hash = 0;
  IdType ids = IdType::kU16;
  SplitBy split_by = SplitBy::kTail;
  double val_fraction = 0;
  uint64_t shard_tokens = 0;  // the most ids one shard holds
  std::vector<ShardInfo> shards;
  SplitInfo train, val;
  uint64_t documents = 0, bytes = 0, characters = 0, tokens = 0;
  std::string source;  // --data as given
  std::vector<SourceFile> files;
};

nlohmann::json to_json(const DataManifest& m);
// Reads and validates data.json's object: the format and version, every key's type, shard file
// names (plain names, no directories), pieces inside their shards, counts that add up. Every
// problem is a potop::Error naming `source` and the key.
DataManifest manifest_from_json(const nlohmann::json& j, const std::string& source);

// "xxh64:0123456789abcdef" <-> the hash; parse_checksum returns false for anything else.
bool parse_checksum(std::string_view s, uint64_t& hash);

}  // namespace potop
