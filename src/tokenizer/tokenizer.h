// What every tokenizer offers, so that training, sampling, evaluation, pictures and checkpoints
// work with any of them: text (UTF-8) <-> token ids, the vocabulary's size, a stable hash, and its
// data as JSON (which every checkpoint embeds, so that a weights file alone can be used) and as
// files in a model directory. The kinds (docs/tokenizers.md has the details):
//   char     one token per code point of the training text (char_tokenizer.h); no special tokens
//   byte     the 4 specials, then the 256 byte values (byte_tokenizer.h)
//   word     the 4 specials, then the training text's words, spaces and punctuation (word_tokenizer.h)
//   bpe, unigram   SentencePiece models with byte fallback (sentencepiece_tokenizer.h)
//   byte_bpe GPT-2's byte-level BPE, from its vocab.json and merges.txt (byte_bpe_tokenizer.h)
//   wordpiece BERT's WordPiece, from its vocab.txt or tokenizer.json (wordpiece_tokenizer.h)
// A new kind implements this interface and adds its row to tokenizer_kind_rows() (and, if it can be
// trained, to train_tokenizer in train_tokenizer.h).
#pragma once
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/fields.h"

namespace potop {

// The special tokens: the same ids in every kind but char (which has none, so that the ids of
// the first potop models never change). <pad> fills batches, <bos>/<eos> mark a document's
// start and end, <unk> stands for what the vocabulary lacks (word: a rare word).
inline constexpr int kPadId = 0, kBosId = 1, kEosId = 2, kUnkId = 3;
inline constexpr int kSpecialCount = 4;
inline constexpr const char* kSpecialPieces[kSpecialCount] = {"<pad>", "<bos>", "<eos>", "<unk>"};
// Token ids are int32 (what data files and batches hold), so a vocabulary has at most this many.
inline constexpr long kMaxVocabSize = std::numeric_limits<int32_t>::max();

// The ids of a vocabulary's special tokens, -1 where it has none. potop's own kinds but char have
// <pad> 0, <bos> 1, <eos> 2 and <unk> 3 (kPotopSpecials); a vocabulary made elsewhere has its own
// (GPT-2's: <|endoftext|> 50256 both begins and ends a text; no <pad>, no <unk>).
struct SpecialTokens {
  int pad = -1, bos = -1, eos = -1, unk = -1;
  int mask = -1;  // BERT's [MASK] (a WordPiece vocabulary's); potop's own kinds have none
  bool operator==(const SpecialTokens&) const = default;
};
inline constexpr SpecialTokens kPotopSpecials{kPadId, kBosId, kEosId, kUnkId};

// What encoding does with text the vocabulary cannot express (a character a char model never
// saw, a word a word tokenizer never counted, a character SentencePiece reserves): refuse it,
// leave it out, or put a stand-in in its place (char: a space; word and SentencePiece: <unk>).
enum class Unknown { kError, kSkip, kReplace };
Choice unknown_choice(Unknown& value);  // "error", "skip", "replace"

// What an encoding left out or replaced: characters, or for the word tokenizer, words.
struct UnknownReport {
  struct Item {
    char32_t c;         // the character (when word is empty)
    long count;
    long first_line;    // 1-based
    std::string word;   // the word (UTF-8), for the word tokenizer; empty for a character
  };
  long count = 0;            // characters (or words) affected
  std::vector<Item> items;   // each distinct one, in order of first appearance

  // Counts one more c (or word, when not empty) seen on `line`.
  void add(char32_t c, long line, std::string_view word = {});
  // "3 characters outside the vocabulary (2 distinct): 'Ж' (U+0416) ×2 from line 1, 'ы' (U+044B)
  // on line 3", or for words "2 words outside the vocabulary (1 distinct): "Kmicic" ×2 from
  // line 1" — at most max_items listed.
  std::string describe(size_t max_items = 8) const;

 private:
  std::unordered_map<std::string, size_t> index_;  // add's: a character or word -> its item
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // "char", "byte", "word", "bpe", "unigram", "byte_bpe" or "wordpiece": the kind, stored in config.json and in checkpoints.
  virtual std::string kind() const = 0;
  virtual int size() const = 0;

  // UTF-8 text -> ids. Invalid UTF-8 throws potop::Error naming `what` and the place; so does
  // text the vocabulary cannot express (char: a character it lacks; word: a word it lacks;
  // bpe/unigram: U+2581, which SentencePiece decodes as a space, and with a model imported
  // without byte fallback, a character it lacks; wordpiece: a word it cannot spell), unless `unknown` says to skip or replace it,
  // which report (when given) then counts. byte never meets an unknown. No kind adds <bos> or
  // <eos>: callers that want them add the ids.
  virtual std::vector<int> encode(std::string_view text, std::string_view what, Unknown unknown,
                                  UnknownReport* report) const = 0;
  std::vector<int> encode(std::string_view text, std::string_view what = "text") const {
    return encode(text, what, Unknown::kError, nullptr);
  }
  // Whether encode(text) would succeed.
  virtual bool can_encode(std::string_view text) const = 0;
  // Ids -> UTF-8. An id outside [0, size()) throws potop::Error. decode(encode(text)) == text
  // for every text encode accepts without an unknown (word: up to lowercasing, see
  // word_tokenizer.h). <pad>, <bos> and <eos> decode to nothing; <unk> to a stand-in (byte:
  // U+FFFD, word: "<unk>", SentencePiece: its unk_surface, " ⁇ "). Byte tokens that do not form valid UTF-8 (ids a model
  // sampled) decode to U+FFFD, one per bad byte, so the result is always valid UTF-8.
  virtual std::string decode(std::span<const int> ids) const = 0;
  // One token's text, for streaming output token by token. A byte token (byte; SentencePiece's
  // byte fallback <0xE2>) gives its single raw byte, which may be part of a UTF-8 character:
  // callers concatenate the bytes and print them as they come (a terminal assembles the
  // character), or hold back an incomplete tail. For valid UTF-8 the concatenation of
  // decode_one over ids equals decode(ids).
  virtual std::string decode_one(int id) const = 0;
  // A token's name for display (`potop tokenizer encode --pieces`): never empty and never holds
  // whitespace or control characters. SentencePiece's own pieces ("▁Pan", "<0x0A>", "<bos>");
  // other kinds write a space as "▁" and a control character or stray byte as "<0x0A>".
  virtual std::string piece(int id) const = 0;
  // How many characters (Unicode code points) of decode()'s output this token accounts for, so
  // that over ids whose text is valid UTF-8 the sum is the text's number of code points: 1 for a
  // char token; a word's or piece's code points; for a byte token 1 if it starts a character
  // (ASCII or a lead byte) and 0 for a continuation byte; 0 for <pad>, <bos> and <eos>; the
  // code points of the stand-in for <unk>. bits/char = total nats / ln 2 / the sum over the
  // targets scored.
  virtual int char_count(int id) const = 0;

  // Its special tokens (the default: potop's, kPotopSpecials).
  virtual SpecialTokens specials() const { return kPotopSpecials; }
  // Every special token a chat template may write out as text (tokenizer/special_texts.h): the
  // specials' ids (the default), and a Hugging Face vocabulary's other added special tokens.
  virtual std::vector<int> special_ids() const;

  // FNV-1a-64 of the vocabulary (SentencePiece: of the serialized model), stable across versions:
  // checkpoints keep it to catch a mismatch.
  virtual uint64_t hash() const = 0;
  // {"kind": "char", ...}: everything needed to rebuild it (tokenizer_from_json).
  virtual nlohmann::json to_json() const = 0;
  // Writes its files into a model directory, atomically: char vocab.json, word words.json,
  // bpe/unigram tokenizer.model (and tokenizer.vocab, for people), byte_bpe vocab.json and
  // merges.txt, wordpiece vocab.txt and wordpiece.json, byte none.
  virtual void save_files(const std::filesystem::path& dir) const = 0;
};

// The table of kinds: how each is rebuilt from its JSON and loaded from a directory.
struct TokenizerKindRow {
  const char* name;  // Tokenizer::kind()
  const char* file;  // its file in a directory (tokenizer_file); "" for byte, which has none
  std::unique_ptr<Tokenizer> (*from_json)(const nlohmann::json& j, const std::string& source);
  std::unique_ptr<Tokenizer> (*load)(const std::filesystem::path& dir, const std::filesystem::path& file,
                                     std::string_view kind);
  bool sentencepiece = false;  // a SentencePiece model (bpe, unigram)
};
const std::vector<TokenizerKindRow>& tokenizer_kind_rows();
const TokenizerKindRow* find_tokenizer_kind(std::string_view name);  // nullptr: none of that name
// Whether the tokenizer is a SentencePiece model (bpe or unigram).
bool is_sentencepiece(const Tokenizer& tokenizer);

// Rebuilds a tokenizer from to_json()'s object; errors name `source`.
std::unique_ptr<Tokenizer> tokenizer_from_json(const nlohmann::json& j, std::string_view source);
// The file of kind `kind` that save_files writes and load_tokenizer reads: "vocab.json" (char,
// byte_bpe, which has merges.txt beside it), "words.json" (word), "tokenizer.model" (bpe,
// unigram), "vocab.txt" (wordpiece, with wordpiece.json); empty for byte, which has none.
std::string tokenizer_file(std::string_view kind);
// dir / tokenizer_file(kind), or dir itself for byte: what an error about it names.
std::filesystem::path tokenizer_file_in(const std::filesystem::path& dir, std::string_view kind);
// Every file any kind's save_files may write (bpe and unigram add "tokenizer.vocab", for people,
// byte_bpe "merges.txt" and "byte_bpe.json", wordpiece "wordpiece.json"):
// what a model directory holds for its tokenizer.
std::vector<std::string> all_tokenizer_files();

// The tokenizer of kind `kind` saved in a model directory by Tokenizer::save_files. Errors name
// the file and what is missing or wrong.
std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& dir, std::string_view kind);

// A tokenizer directory — what `potop tokenizer train` writes and `--tokenizer DIR` reads:
// tokenizer.json ({"kind": ...}) and the kind's files (save_files). A model directory is one
// too (its config.json names the kind), and so is a directory with only a char tokenizer's
// vocab.json. Errors name the directory and what is missing or wrong.
void save_tokenizer_dir(const Tokenizer& tokenizer, const std::filesystem::path& dir);
std::unique_ptr<Tokenizer> load_tokenizer_dir(const std::filesystem::path& dir);

// A Hugging Face tokenizer.json (not potop's own {"kind": ...}): a WordPiece model is read as
// wordpiece, a byte-level BPE as byte_bpe, with tokenizer_config.json beside it where there is one,
// and potop's own export of a character model (a BPE of characters, a Fuse decoder) as char.
// Other models are refused naming the file and the field.
std::unique_ptr<Tokenizer> load_hf_tokenizer_json(const std::filesystem::path& tokenizer_json);
// Whether j is Hugging Face's tokenizer.json rather than potop's.
bool is_hf_tokenizer_json(const nlohmann::json& j);

}  // namespace potop
