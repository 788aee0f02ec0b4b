// Byte-level BPE, the tokenizer of GPT-2 (and of GPT-J, RoBERTa, SmolLM, Llama 3...): text is
// split into pieces by a regular expression (words with the space before them, numbers, runs of
// punctuation, runs of whitespace), each piece's UTF-8 bytes are spelled in GPT-2's byte alphabet
// (byte_level.h) and merged pairwise by the merge list, lowest rank first. Every text encodes;
// nothing is unknown. Its files are GPT-2's own: vocab.json ({"Ġthe": 262, ...}) and merges.txt
// ("#version: 0.2", then "Ġ t" per line); the ids and the special tokens are theirs, not potop's
// <pad> 0 .. <unk> 3 (GPT-2: <|endoftext|> 50256 begins and ends a text; no <pad>, no <unk>).
//
// The split is GPT-2's expression unless the tokenizer says otherwise: a Hugging Face tokenizer.json
// (from_hf_json) may split by other expressions first (Llama 3's, a digit at a time as SmolLM's),
// each splitting every piece into its matches and the text between them (their Split, behavior
// "Isolated"), and may look a whole piece up before merging (ignore_merges, Llama 3's).
//
// GPT-2's split expression has \s being Unicode's White_Space as in OpenAI's encoder (Python's
// regex module), Hugging Face's and llama.cpp's. npm's gpt-3-encoder, which the tests compare
// with (tests/tokenizers), takes \s as JavaScript does: U+FEFF is whitespace there and U+0085 is
// not, so texts holding those two split differently there (tests/cli/tokenizers_gpt2.sh compares
// those with llama.cpp instead). A text that holds "<|endoftext|>" encodes it as its characters,
// as all of them do unless told to look for special tokens.
#pragma once
#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace potop {

// What a tokenizer.json may change; the defaults are GPT-2's.
struct ByteBpeOptions {
  // ICU expressions, applied in turn (the last splits the pieces the others left).
  std::vector<std::string> split = {gpt2_split_expression()};
  bool ignore_merges = false;  // a piece that is a token is that token, merged or not
  std::string bos = "<|endoftext|>", eos = "<|endoftext|>";  // tokens' texts; absent ones count as none
  // The other special tokens' texts (tokenizer.json's added tokens marked special, a GGUF file's
  // control tokens: Llama 3's "<|start_header_id|>"), which a rendered chat prompt writes out
  // (tokenizer/special_texts.h).
  std::vector<std::string> special;
  static std::string gpt2_split_expression();
  bool operator==(const ByteBpeOptions&) const = default;
};

// llama.cpp names the pre-tokenizers it knows by model (GGUF's tokenizer.ggml.pre) and keeps their
// expressions in its code. Those potop runs: "gpt-2", "llama-bpe" (Llama 3's expression,
// ignore_merges), "qwen2" (the same with one digit a piece) and "smollm" (a digit a piece, then
// GPT-2's). The name of o's split and ignore_merges, or "" where llama.cpp has none.
std::string llama_cpp_pre_tokenizer(const ByteBpeOptions& o);
// Sets o's split and ignore_merges to those of a name above; false (o untouched) for another.
bool set_llama_cpp_pre_tokenizer(std::string_view name, ByteBpeOptions& o);

class ByteBpeTokenizer final : public Tokenizer {
 public:
  // tokens[id] in the byte alphabet (as vocab.json spells them), merges as "left right" in rank
  // order. Errors name `source`: ids that are not 0..n-1, a byte missing from the vocabulary, a
  // merge whose parts or result the vocabulary lacks.
  // Options: expressions that do not compile are refused naming `source`.
  ByteBpeTokenizer(std::vector<std::string> tokens, const std::vector<std::string>& merges, const std::string& source,
                   ByteBpeOptions options = {});
  ~ByteBpeTokenizer() override;
  // GPT-2's files (errors name the file and the line or entry).
  static std::unique_ptr<ByteBpeTokenizer> load(const std::filesystem::path& vocab_json,
                                                const std::filesystem::path& merges_txt);
  // A potop directory's vocab.json, merges.txt and, where the options are not GPT-2's, byte_bpe.json.
  static std::unique_ptr<ByteBpeTokenizer> load(const std::filesystem::path& dir);
  static std::unique_ptr<ByteBpeTokenizer> from_json(const nlohmann::json& j, std::string_view source);
  // A Hugging Face tokenizer.json whose model is BPE over GPT-2's byte alphabet: no normalizer, a
  // ByteLevel pre-tokenizer (alone, or last in a Sequence after Split expressions and Digits), a
  // ByteLevel decoder; added tokens join the vocabulary. `config` is tokenizer_config.json (or
  // null): its bos_token and eos_token name the specials. Anything else is refused by name.
  static std::unique_ptr<ByteBpeTokenizer> from_hf_json(const nlohmann::json& j, const nlohmann::json& config,
                                                        const std::string& source);
  // Its split as a tokenizer.json pre_tokenizer, which from_hf_json reads back to the same options.
  nlohmann::json hf_pre_tokenizer() const;

  std::string kind() const override { return "byte_bpe"; }
  int size() const override { return static_cast<int>(tokens_.size()); }
  // Invalid UTF-8 throws naming `what`; the policy and report are unused (nothing is unknown).
  std::vector<int> encode(std::string_view text, std::string_view what, Unknown unknown,
                          UnknownReport* report) const override;
  using Tokenizer::encode;
  bool can_encode(std::string_view text) const override;  // valid UTF-8
  std::string decode(std::span<const int> ids) const override;  // bad bytes become U+FFFD
  std::string decode_one(int id) const override;                // the token's bytes
  std::string piece(int id) const override;                     // as vocab.json spells it: "Ġthe"
  int char_count(int id) const override;
  SpecialTokens specials() const override;
  std::vector<int> special_ids() const override;  // bos, eos and the options' special tokens
  uint64_t hash() const override;  // of the tokens and the merges
  // {"kind": "byte_bpe", "tokens": [...], "merges": [...]}, and "options" where they are not GPT-2's.
  nlohmann::json to_json() const override;
  void save_files(const std::filesystem::path& dir) const override;  // vocab.json, merges.txt (byte_bpe.json)

  const std::vector<std::string>& merges() const { return merges_; }
  const ByteBpeOptions& options() const { return options_; }
  // vocab.json's text, {"!":0,...}, in id order (no final newline).
  std::string vocab_json() const;
  // merges.txt's text: "#version: 0.2", then the merges by rank.
  std::string merges_txt() const;
  const std::string& token(int id) const { return tokens_.at(static_cast<size_t>(id)); }  // as vocab.json spells it

 private:
  struct Splitter;  // the split expressions (ICU)
  // One piece's ids: its bytes, merged.
  void encode_piece(std::string_view bytes, std::vector<int>& out) const;

  std::vector<std::string> tokens_;  // as vocab.json spells them
  std::vector<std::string> bytes_;   // what each token stands for
  std::vector<bool> spelled_in_bytes_;  // whether the token is spelled in the byte alphabet (not an added special)
  std::vector<std::string> merges_;  // "left right", by rank
  std::unordered_map<uint64_t, std::pair<int, int>> merge_of_;  // (left id, right id) -> (rank, merged id)
  int byte_id_[256];
  ByteBpeOptions options_;
  int bos_ = -1, eos_ = -1;  // where the vocabulary has them
  std::vector<int> special_ids_;  // options_.special's
  std::unordered_map<std::string, int> whole_;  // bytes -> token, with ignore_merges
  std::unique_ptr<Splitter> splitter_;
};

}  // namespace potop
