// Word-level tokenizer: the 4 special tokens (<pad> 0, <bos> 1, <eos> 2, <unk> 3), then the
// "words" of the training text by decreasing count (ties by their UTF-8 bytes). A word is a
// segment between two Unicode word boundaries (UAX #29, ICU's word BreakIterator, root locale):
// a word ("Kmicic", "can't", "3.14"), a run of spaces, a punctuation mark, an emoji; Chinese
// and Japanese are split into words by ICU's dictionary. A newline is its own word ("\r" too).
// Spaces and punctuation are tokens like words, so decode(encode(text)) gives back the text
// exactly, except that
//   - with lowercase, text is lowercased (ICU's full Unicode case mapping, root locale: "Ż" →
//     "ż", "Я" → "я"; Turkish dotted/dotless i get the default mapping) before it is split, so
//     case is lost;
//   - a word outside the vocabulary (rarer than min_count in the training text, or beyond
//     vocab_size, or never seen) is <unk>, which decodes to the text "<unk>".
// encode's policy for such a word: Unknown::kError throws naming it and its line; kReplace
// gives <unk> (the usual word-model choice) and kSkip leaves it out, both counting it in the
// report as a word. The vocabulary is saved as words.json:
//   {"lowercase": false, "words": ["<pad>", "<bos>", "<eos>", "<unk>", " ", ",", "się", ...]}
// (every token in id order, specials first).
#pragma once
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace potop {

struct WordTrainOptions {
  bool lowercase = false;
  long min_count = 1;    // keep words seen at least this often
  long vocab_size = 0;   // at most this many tokens, specials included; 0: no limit
};

// The word tokenizer's splitting, for other word-level models (word2vec): calls f(segment,
// line number) for every segment between two word boundaries of each line (after lowercasing
// when asked), and f("\n", line) between lines, exactly the words WordTokenizer counts.
void for_each_word_segment(std::string_view text, bool lowercase,
                           const std::function<void(std::string_view segment, long line)>& f);
// ICU's full lowercase mapping, root locale (what lowercase means above).
std::string lowercase_text(std::string_view text);

class WordTokenizer final : public Tokenizer {
 public:
  // tokens[id]: every token in id order, the 4 specials first. Throws potop::Error naming
  // source when the specials are not first, a word is empty, repeated, a special's name or not
  // valid UTF-8, or there are more than kMaxVocabSize tokens.
  WordTokenizer(std::vector<std::string> tokens, bool lowercase, std::string_view source);

  // Counts the words of text (named `what` in messages). Throws potop::Error when no word is
  // seen min_count times or an option is out of range (messages name --min-count and
  // --vocab-size, as potop tokenizer train calls them).
  static WordTokenizer train(std::string_view text, std::string_view what, const WordTrainOptions& options);
  // words.json; errors name the file.
  static WordTokenizer load(const std::filesystem::path& path);
  // {"lowercase": ..., "words": [...]} (to_json's object minus "kind"); errors name source.
  static WordTokenizer from_json(const nlohmann::json& j, std::string_view source);

  std::string kind() const override { return "word"; }
  int size() const override { return static_cast<int>(tokens_.size()); }
  bool lowercase() const { return lowercase_; }
  // Token id of a word (after lowercasing, if the tokenizer lowercases), or -1.
  int id_of(std::string_view word) const;

  std::vector<int> encode(std::string_view text, std::string_view what, Unknown unknown,
                          UnknownReport* report) const override;
  using Tokenizer::encode;
  bool can_encode(std::string_view text) const override;  // valid UTF-8 and every word known
  std::string decode(std::span<const int> ids) const override;
  std::string decode_one(int id) const override;
  std::string piece(int id) const override;  // the word, a space as "▁", "\n" as "<0x0A>"
  int char_count(int id) const override;
  // FNV-1a-64 of "word", the lowercase flag and every token's bytes each followed by a 0 byte.
  uint64_t hash() const override;
  nlohmann::json to_json() const override;  // {"kind": "word", "lowercase": ..., "words": [...]}
  void save_files(const std::filesystem::path& dir) const override;  // words.json

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int, Hash, std::equal_to<>> index_;
  bool lowercase_ = false;
};

}  // namespace potop
