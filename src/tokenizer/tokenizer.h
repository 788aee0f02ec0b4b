// What every tokenizer offers, so that training, sampling, evaluation, pictures and checkpoints
// work with any of them: text (UTF-8) <-> token ids, the vocabulary's size, a stable hash, and its
// data as JSON (which every checkpoint embeds, so that a weights file alone can be used) and as
// files in a model directory. CharTokenizer (one token per code point) is the first kind; a new
// kind implements this interface and adds itself to tokenizer_from_json and load_tokenizer.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/fields.h"

namespace potop {

// What encoding does with text the vocabulary cannot express (a character a char model never
// saw): refuse it, leave it out, or put a stand-in in its place.
enum class Unknown { kError, kSkip, kReplace };
Choice unknown_choice(Unknown& value);  // "error", "skip", "replace"

// What an encoding left out or replaced.
struct UnknownReport {
  struct Item {
    char32_t c;
    long count;
    long first_line;  // 1-based
  };
  long count = 0;            // characters affected
  std::vector<Item> items;   // each distinct one, in order of first appearance

  // "3 characters outside the vocabulary (2 distinct): 'Ж' (U+0416) ×2 from line 1, 'ы' (U+044B)
  // on line 3" — at most max_items listed.
  std::string describe(size_t max_items = 8) const;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // "char": the kind, stored in config.json and in checkpoints.
  virtual std::string kind() const = 0;
  virtual int size() const = 0;

  // UTF-8 text -> ids. Invalid UTF-8 throws potop::Error naming `what` and the place; so does
  // text the vocabulary cannot express (for char, a character it lacks), unless `unknown` says
  // to skip or replace it, which report (when given) then counts.
  virtual std::vector<int> encode(std::string_view text, std::string_view what, Unknown unknown,
                                  UnknownReport* report) const = 0;
  std::vector<int> encode(std::string_view text, std::string_view what = "text") const {
    return encode(text, what, Unknown::kError, nullptr);
  }
  // Whether encode(text) would succeed.
  virtual bool can_encode(std::string_view text) const = 0;
  // Ids -> UTF-8. An id outside [0, size()) throws potop::Error.
  virtual std::string decode(std::span<const int> ids) const = 0;
  // One token's text, for streaming output token by token.
  virtual std::string decode_one(int id) const = 0;

  // FNV-1a-64 of the vocabulary, stable across versions: checkpoints keep it to catch a mismatch.
  virtual uint64_t hash() const = 0;
  // {"kind": "char", ...}: everything needed to rebuild it (tokenizer_from_json).
  virtual nlohmann::json to_json() const = 0;
  // Writes its files into a model directory (char: vocab.json), atomically.
  virtual void save_files(const std::filesystem::path& dir) const = 0;
};

// Rebuilds a tokenizer from to_json()'s object; errors name `source`.
std::unique_ptr<Tokenizer> tokenizer_from_json(const nlohmann::json& j, std::string_view source);
// The tokenizer of kind `kind` saved in a model directory by Tokenizer::save_files.
std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& dir, std::string_view kind);

// A tokenizer directory — what `potop tokenizer train` writes and `--tokenizer DIR` reads:
// tokenizer.json ({"kind": ...}) and the kind's files (save_files). A model directory is one
// too (its config.json names the kind), and so is a directory with only a char tokenizer's
// vocab.json. Errors name the directory and what is missing or wrong.
void save_tokenizer_dir(const Tokenizer& tokenizer, const std::filesystem::path& dir);
std::unique_ptr<Tokenizer> load_tokenizer_dir(const std::filesystem::path& dir);

}  // namespace potop
