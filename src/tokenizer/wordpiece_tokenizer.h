// WordPiece, the tokenizer of BERT (and DistilBERT, ELECTRA, ...), as Hugging Face's tokenizers run
// it from BERT's vocab.txt or a tokenizer.json whose model is WordPiece:
//   1. special tokens ([CLS], [SEP], [MASK], ... : the vocabulary's added tokens) written in the
//      text are found first and kept whole;
//   2. BertNormalizer, on the rest: control characters, U+0000 and U+FFFD are dropped and whitespace
//      becomes a space (clean_text); CJK ideographs get a space on each side
//      (handle_chinese_chars); the text is lower-cased (lowercase, with Unicode's full mappings
//      and its final-sigma rule, as Python's str.lower and JavaScript's toLowerCase), and its
//      accents stripped: NFD, then the non-spacing marks (Mn) dropped (strip_accents; unset
//      follows lowercase);
//   3. BertPreTokenizer: words split at whitespace, and every punctuation character (Unicode's
//      P*, and ASCII's symbols such as $ + < = > ^ ` | ~) a word of its own;
//   4. WordPiece: each word, greedily from its start, the longest vocabulary entry, continued by
//      "##" entries; a word with no such spelling, or of more than max_input_chars_per_word (100)
//      characters, is [UNK] as a whole.
// Decoding joins words with spaces and "##" pieces to the piece before, then closes up the space
// before . ? ! , and before 's 've 're 'm n't (clean_up_tokenization). Lower-casing and stripping
// lose what they lose: decode gives the normalized text back, not the original.
//
// Where Hugging Face's implementations differ, potop follows BERT's own (Python and Rust):
// unassigned code points are control characters, and CJK ideographs outside the Basic
// Multilingual Plane (U+20000 ...) are spaced. JavaScript's tokenizers (npm @huggingface/tokenizers,
// which the tests compare with) keep the first and do not space the second.
//
// Ids and special tokens are the file's: BERT's [PAD] 0, [UNK] 100, [CLS] 101 (the <bos> of
// potop's specials), [SEP] 102 (<eos>), [MASK] 103.
#pragma once
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace potop {

struct WordPieceOptions {
  bool clean_text = true;
  bool handle_chinese_chars = true;
  bool lowercase = true;
  std::optional<bool> strip_accents;  // unset: as lowercase
  std::string prefix = "##";          // continuing_subword_prefix
  int max_input_chars_per_word = 100;
  std::string unk_token = "[UNK]";
  bool cleanup = true;  // the decoder's clean_up_tokenization
  bool operator==(const WordPieceOptions&) const = default;
};

class WordPieceTokenizer final : public Tokenizer {
 public:
  // tokens[id]; `added` the special tokens matched whole in a text (contents present in tokens).
  // Errors name `source`: an empty or duplicated token, an unk_token the vocabulary lacks.
  WordPieceTokenizer(std::vector<std::string> tokens, std::vector<std::string> added, WordPieceOptions options,
                     const std::string& source);
  // BERT's vocab.txt (a token per line, ids by line); options from tokenizer_config.json beside it
  // when there is one (do_lower_case, strip_accents, tokenize_chinese_chars), else bert-base-uncased's.
  static std::unique_ptr<WordPieceTokenizer> load_vocab_txt(const std::filesystem::path& vocab_txt);
  // A Hugging Face tokenizer.json whose model is WordPiece (BertNormalizer, BertPreTokenizer).
  static std::unique_ptr<WordPieceTokenizer> from_hf_json(const nlohmann::json& j, const std::string& source);
  // A potop directory's vocab.txt and wordpiece.json (save_files).
  static std::unique_ptr<WordPieceTokenizer> load(const std::filesystem::path& dir);
  static std::unique_ptr<WordPieceTokenizer> from_json(const nlohmann::json& j, std::string_view source);

  std::string kind() const override { return "wordpiece"; }
  int size() const override { return static_cast<int>(tokens_.size()); }
  // A word the vocabulary cannot spell is [UNK] with Unknown::kReplace, left out with kSkip, and
  // an Error naming it with kError (report counts the words).
  std::vector<int> encode(std::string_view text, std::string_view what, Unknown unknown,
                          UnknownReport* report) const override;
  using Tokenizer::encode;
  bool can_encode(std::string_view text) const override;
  std::string decode(std::span<const int> ids) const override;  // [PAD], [CLS], [SEP] give nothing
  // A word with the space before it, a "##" piece without its prefix: the concatenation is
  // decode()'s text with a space in front and before punctuation.
  std::string decode_one(int id) const override;
  std::string piece(int id) const override;  // as vocab.txt spells it: "##ing"
  int char_count(int id) const override;     // the piece's characters, without "##"
  SpecialTokens specials() const override;   // [PAD], [CLS], [SEP], [UNK], [MASK]
  uint64_t hash() const override;
  nlohmann::json to_json() const override;  // {"kind": "wordpiece", "tokens", "added", "options"}
  void save_files(const std::filesystem::path& dir) const override;  // vocab.txt, wordpiece.json

  const WordPieceOptions& options() const { return options_; }
  // The normalized text (step 2), for tests.
  std::string normalize(std::string_view text) const;

 private:
  // Steps 2–4 on a text without special tokens, appending ids.
  void encode_plain(std::string_view text, long line, Unknown unknown, UnknownReport* report,
                    std::string_view what, std::vector<int>& out) const;
  int id_of(const std::string& token) const;  // -1 when absent

  std::vector<std::string> tokens_;
  std::vector<std::string> added_;
  WordPieceOptions options_;
  std::unordered_map<std::string, int> ids_;
  int unk_ = -1, pad_ = -1, cls_ = -1, sep_ = -1, mask_ = -1;
};

}  // namespace potop
