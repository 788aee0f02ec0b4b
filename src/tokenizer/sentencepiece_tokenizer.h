// SentencePiece subword tokenizers, "bpe" and "unigram", through Debian's libsentencepiece.
// potop trains them in-process (SentencePieceTrainer) with the options of sentencepiece_flags()
// — potop's special ids (<pad> 0, <bos> 1, <eos> 2, <unk> 3), byte fallback (the 256 byte
// pieces <0x00>..<0xFF> are ids 4..259, so no text is ever unknown), and no normalization
// (identity rule, no dummy prefix, spaces kept as they are), so that decode(encode(text)) ==
// text for any UTF-8 text but one that holds U+2581 "▁", which SentencePiece itself writes for
// a space (encode treats that character as unknown). docs/tokenizers.md says why each option.
//
// Text is encoded line by line, as spm_encode does: the ids of each line are SentencePiece's,
// and a newline is the piece "\n" if the model has one, else the byte piece <0x0A>. So for a
// model trained by spm_train with the same flags, ids and pieces equal spm_encode's.
//
// An existing .model file (spm_train's, Llama 2's) can be imported when it is bpe or unigram; its
// special ids are its own (Llama 2: <unk> 0, <s> 1, </s> 2, no pad), potop's where potop trained
// it. One without byte fallback works too, its unknown characters being unknowns for encode's
// policy (Unknown::kReplace gives <unk>). The model is kept as its
// serialized ModelProto: tokenizer.model in a directory (spm_encode --model reads it), base64
// in checkpoints.
#pragma once
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace potop {

struct SentencePieceTrainOptions {
  std::string kind = "unigram";  // "bpe" or "unigram"
  long vocab_size = 8000;        // every piece: the specials, the 256 bytes, the rest
  // SentencePiece's num_threads. The unigram result depends on it, so it is fixed (16, as
  // spm_train's default) rather than the machine's core count: same text, same tokenizer.
  int threads = 16;
  bool verbose = false;  // SentencePiece's own log on stderr
  // potop's notes: lines SentencePiece leaves out (longer than 64 KiB, or holding U+2585).
  std::FILE* log = stderr;
};

// The spm_train flags (name, value) potop trains with, besides --model_type, --vocab_size and
// --num_threads: pass them to spm_train to get potop's model.
std::vector<std::pair<std::string, std::string>> sentencepiece_flags();

class SentencePieceTokenizer final : public Tokenizer {
 public:
  // The bytes of a .model file (a serialized ModelProto). Throws potop::Error naming source
  // when they are not a SentencePiece model, the model is neither bpe nor unigram, or it has no
  // <unk>.
  static std::unique_ptr<SentencePieceTokenizer> from_model(std::string model, std::string_view source);
  // A .model file; errors name it.
  static std::unique_ptr<SentencePieceTokenizer> load(const std::filesystem::path& path);
  // Trains on text, one sentence per line (named `what` in messages). Throws potop::Error for
  // invalid UTF-8, a vocabulary size out of range, or what SentencePiece refuses, said in potop's
  // terms: a --vocab-size too small for the text's characters (naming the smallest that works) or
  // too large for its text (naming the largest SentencePiece reports), no line or no character to
  // learn from.
  static std::unique_ptr<SentencePieceTokenizer> train(std::string_view text, std::string_view what,
                                                       const SentencePieceTrainOptions& options);
  ~SentencePieceTokenizer() override;

  std::string kind() const override { return kind_; }
  int size() const override { return static_cast<int>(text_.size()); }
  std::vector<int> encode(std::string_view text, std::string_view what, Unknown unknown,
                          UnknownReport* report) const override;
  using Tokenizer::encode;
  bool can_encode(std::string_view text) const override;
  std::string decode(std::span<const int> ids) const override;
  std::string decode_one(int id) const override;
  std::string piece(int id) const override;  // SentencePiece's piece: "▁Pan", "<0x0A>", "<bos>"
  SpecialTokens specials() const override { return specials_; }  // the model's own ids
  int char_count(int id) const override;
  uint64_t hash() const override;            // FNV-1a-64 of the serialized model
  nlohmann::json to_json() const override;   // {"kind": "bpe", "model": base64 of the model}
  // tokenizer.model (the model, as spm_train writes it) and tokenizer.vocab (piece TAB score
  // per line, for people; never read back).
  void save_files(const std::filesystem::path& dir) const override;

  const std::string& model() const { return model_; }
  bool byte_fallback() const { return byte_fallback_; }
  // How its normalizer treats spaces: a "▁" put before the text (Llama 2's models; potop's never),
  // and runs of spaces squeezed. Both SentencePiece's defaults are true.
  bool adds_dummy_prefix() const;
  bool removes_extra_whitespaces() const;
  // Whether encode goes word by word through its cache (see word_cache_ok_).
  bool encodes_by_word() const { return word_cache_ok_; }

 private:
  SentencePieceTokenizer();
  void check_id(int id) const;
  // Appends one line's ids (no '\n' in line).
  void encode_line(std::string_view line, long line_number, std::string_view what, Unknown unknown,
                   UnknownReport* report, std::vector<int>& ids) const;

  std::string kind_;
  std::string model_;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  bool byte_fallback_ = false;
  int newline_id_ = -1;            // "\n" or <0x0A>; -1 when the model has neither
  SpecialTokens specials_;         // the model's pad, bos, eos and unk ids (-1: none)

  // Encoding word by word through a cache. Most of a text's words are frequent, and looking one
  // up is several times faster than SentencePiece's merges or lattice. It gives SentencePiece's
  // own result only when a line's encoding is the concatenation of its "words" (a run of spaces
  // and the characters up to the next space) encoded alone: no normalization (identity), no
  // dummy prefix, spaces kept as they are, and no piece with a space after another character —
  // true of every model potop trains (split_by_whitespace), checked when a model is loaded.
  bool word_cache_ok_ = false;
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int>, Hash, std::equal_to<>> cache_;
  // Appends a word's ids from the cache or SentencePiece; false (nothing appended) when the
  // word holds a character the model cannot encode.
  bool encode_word(std::string_view word, std::vector<int>& ids) const;
  std::vector<std::string> text_;  // decode_one's text of each id
};

// base64 (RFC 4648, with padding) of bytes, and back; decode throws potop::Error naming source
// on a character outside the alphabet or a wrong length.
std::string base64_encode(std::string_view bytes);
std::string base64_decode(std::string_view text, std::string_view source);

}  // namespace potop
