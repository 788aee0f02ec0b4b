// Byte-level tokenizer: the 4 special tokens (<pad> 0, <bos> 1, <eos> 2, <unk> 3), then one
// token per byte value: byte b is id 4 + b (ids 4..259). It needs no training and has no file;
// any UTF-8 text encodes (one token per byte, never an unknown) and decodes back exactly. A
// character outside ASCII is 2 to 4 tokens, so sequences are longer than with char or bpe.
#pragma once
#include "tokenizer/tokenizer.h"

namespace potop {

class ByteTokenizer final : public Tokenizer {
 public:
  static constexpr int kFirstByteId = kSpecialCount;  // id of byte 0x00
  static constexpr int kSize = kSpecialCount + 256;

  std::string kind() const override { return "byte"; }
  int size() const override { return kSize; }
  // Invalid UTF-8 throws potop::Error naming `what`, the byte offset and the line; the policy
  // and the report are unused (nothing is ever unknown).
  std::vector<int> encode(std::string_view text, std::string_view what, Unknown unknown,
                          UnknownReport* report) const override;
  using Tokenizer::encode;
  bool can_encode(std::string_view text) const override;  // valid UTF-8
  // Bytes that are not valid UTF-8 become U+FFFD; <pad>/<bos>/<eos> nothing; <unk> U+FFFD.
  std::string decode(std::span<const int> ids) const override;
  std::string decode_one(int id) const override;  // the raw byte (maybe part of a character)
  std::string piece(int id) const override;       // "a", "▁", "<0xC5>", "<bos>"
  int char_count(int id) const override;
  // FNV-1a-64 of "byte", the specials' names and the bytes 0..255: a constant, the same for
  // every byte tokenizer.
  uint64_t hash() const override;
  nlohmann::json to_json() const override;  // {"kind": "byte"}
  void save_files(const std::filesystem::path& dir) const override {}  // tokenizer.json says it all
};

}  // namespace potop
