// Character-level tokenizer: one token per Unicode code point.
// The vocabulary is the sorted set of distinct code points of the training text, so the
// same text always gives the same ids. It is saved next to the model as vocab.json — a JSON
// array of one-character strings in id order — e.g. ["\n", " ", "!", ..., "ż"].
// Code points, not grapheme clusters: an emoji ZWJ sequence or a letter with a combining
// accent is several tokens, and any text decodes back to exactly its bytes.
#pragma once
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tokenizer/tokenizer.h"

namespace potop {

class CharTokenizer final : public Tokenizer {
 public:
  CharTokenizer() { index(); }  // empty; encode rejects every character
  // chars[id] is the character of token id. Throws potop::Error if chars is empty, holds a
  // duplicate or a value that is not a Unicode scalar value; source names it in messages.
  explicit CharTokenizer(std::vector<char32_t> chars, std::string_view source = "vocabulary");

  // The sorted distinct code points of text. Throws potop::Error if text is empty.
  static CharTokenizer from_text(std::u32string_view text);

  // vocab.json. load throws potop::Error naming the file (and the entry index) when the file
  // is missing or unreadable, is not JSON, is not an array, holds an entry that is not a
  // string of exactly one character, holds a duplicate, or is empty.
  static CharTokenizer load(const std::filesystem::path& path);
  void save(const std::filesystem::path& path) const;  // throws potop::Error if it cannot write
  // The same array as a JSON value (e.g. to embed in another file); from_vocab_json validates
  // like load, with source naming the value in messages.
  nlohmann::json vocab_json() const;
  static CharTokenizer from_vocab_json(const nlohmann::json& j, std::string_view source);
  // potop's own Hugging Face export of a character model (export/hf_files.cpp): a tokenizer.json
  // BPE without merges over the characters themselves, no normalizer, no pre-tokenizer, tokens
  // joined by a Fuse decoder; its ids must be 0..n-1, each a token of one character.
  static CharTokenizer from_hf_json(const nlohmann::json& j, std::string_view source);

  // The Tokenizer interface. to_json() is {"kind": "char", "vocab": vocab_json()}; the model
  // directory's file is vocab.json.
  std::string kind() const override { return "char"; }
  int size() const override { return static_cast<int>(chars_.size()); }
  nlohmann::json to_json() const override;
  void save_files(const std::filesystem::path& dir) const override;
  bool empty() const { return chars_.empty(); }
  const std::vector<char32_t>& chars() const { return chars_; }
  char32_t char_of(int id) const;  // id must be in [0, size()) (POTOP_CHECK)
  // Token id of c, or -1 when c is not in the vocabulary.
  int id_of(char32_t c) const {
    if (c < kDirect) return direct_[c];
    auto it = rest_.find(c);
    return it == rest_.end() ? -1 : it->second;
  }
  bool contains(char32_t c) const { return id_of(c) >= 0; }

  // Code points -> ids. A character outside the vocabulary throws potop::Error, e.g.
  //   "prompt contains 'ж' (U+0436) at character 3, which the model never saw in training"
  // where what ("prompt") names the text and the position is the 0-based index of the
  // character (code point) in the text.
  std::vector<int> encode(std::u32string_view text, std::string_view what = "text") const;
  // UTF-8 -> ids: decodes first (errors name what), then encodes. kReplace puts the space in
  // place of an unknown character, or the first character when the vocabulary has no space.
  std::vector<int> encode(std::string_view text, std::string_view what, Unknown unknown,
                          UnknownReport* report) const override;
  using Tokenizer::encode;
  bool can_encode(std::string_view text) const override;

  // Ids -> UTF-8. An id outside [0, size()) throws potop::Error.
  std::string decode(std::span<const int> ids) const override;
  // One token's UTF-8 bytes, for streaming output token by token.
  std::string decode_one(int id) const override;
  // The character; a space as "▁", a control character or other whitespace as "<0x0A>" bytes.
  std::string piece(int id) const override;
  int char_count(int id) const override;  // 1

  // FNV-1a-64 of the vocabulary's characters in id order, as UTF-8 (concatenated code points
  // cannot be ambiguous). Stable across versions; checkpoints store it to catch a
  // mismatched vocab.json.
  SpecialTokens specials() const override { return {}; }  // none
  uint64_t hash() const override;

 private:
  static constexpr char32_t kDirect = 0x800;  // ASCII, Latin, Greek, Cyrillic: table lookup
  void index();

  std::vector<char32_t> chars_;
  std::vector<std::string> utf8_;     // utf8_[id]: the encoding of chars_[id]
  struct Packed {
    char bytes[4];
    uint32_t len;
  };
  std::vector<Packed> packed_;        // the same, fixed size, for the decode loop
  std::vector<int> direct_;           // code point < kDirect -> id or -1
  std::unordered_map<char32_t, int> rest_;
};

}  // namespace potop
