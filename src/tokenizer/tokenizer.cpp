#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "tokenizer/byte_bpe_tokenizer.h"
#include "tokenizer/byte_tokenizer.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/utf8.h"
#include "tokenizer/word_tokenizer.h"
#include "tokenizer/wordpiece_tokenizer.h"

namespace potop {

namespace {

// A SentencePiece model of `kind` (bpe or unigram) from its bytes; errors name `source`.
std::unique_ptr<Tokenizer> sentencepiece_of(std::unique_ptr<SentencePieceTokenizer> t, std::string_view kind,
                                            const std::string& source) {
  if (t->kind() != kind) throw Error(source + ": says " + std::string(kind) + " but holds a " + t->kind() + " model");
  return t;
}

std::unique_ptr<Tokenizer> sentencepiece_from_json(const nlohmann::json& j, const std::string& src) {
  const std::string kind = j["kind"].get<std::string>();
  if (!j.contains("model") || !j["model"].is_string())
    throw Error(src + ": the " + kind + " tokenizer has no \"model\" (base64 of a SentencePiece model)");
  return sentencepiece_of(
      SentencePieceTokenizer::from_model(base64_decode(j["model"].get<std::string>(), src + ": model"), src + ": model"),
      kind, src);
}

std::unique_ptr<Tokenizer> sentencepiece_load(const std::filesystem::path& dir, const std::filesystem::path& file,
                                              std::string_view kind) {
  auto t = SentencePieceTokenizer::load(file);
  if (t->kind() != kind)
    throw Error(file.string() + ": a " + t->kind() + " model, but the directory says " + std::string(kind));
  return t;
}

}  // namespace

const std::vector<TokenizerKindRow>& tokenizer_kind_rows() {
  using fs_path = std::filesystem::path;
  static const std::vector<TokenizerKindRow> kinds = {
      {"char", "vocab.json",
       [](const nlohmann::json& j, const std::string& src) -> std::unique_ptr<Tokenizer> {
         if (!j.contains("vocab")) throw Error(src + ": the char tokenizer has no \"vocab\"");
         return std::make_unique<CharTokenizer>(CharTokenizer::from_vocab_json(j["vocab"], src + ": vocab"));
       },
       [](const fs_path&, const fs_path& file, std::string_view) -> std::unique_ptr<Tokenizer> {
         return std::make_unique<CharTokenizer>(CharTokenizer::load(file));
       }},
      {"byte", "",
       [](const nlohmann::json&, const std::string&) -> std::unique_ptr<Tokenizer> {
         return std::make_unique<ByteTokenizer>();
       },
       [](const fs_path&, const fs_path&, std::string_view) -> std::unique_ptr<Tokenizer> {
         return std::make_unique<ByteTokenizer>();
       }},
      {"word", "words.json",
       [](const nlohmann::json& j, const std::string& src) -> std::unique_ptr<Tokenizer> {
         return std::make_unique<WordTokenizer>(WordTokenizer::from_json(j, src));
       },
       [](const fs_path&, const fs_path& file, std::string_view) -> std::unique_ptr<Tokenizer> {
         return std::make_unique<WordTokenizer>(WordTokenizer::load(file));
       }},
      {"bpe", "tokenizer.model", sentencepiece_from_json, sentencepiece_load, true},
      {"unigram", "tokenizer.model", sentencepiece_from_json, sentencepiece_load, true},
      {"byte_bpe", "vocab.json",
       [](const nlohmann::json& j, const std::string& src) -> std::unique_ptr<Tokenizer> {
         return ByteBpeTokenizer::from_json(j, src);
       },
       [](const fs_path& dir, const fs_path&, std::string_view) -> std::unique_ptr<Tokenizer> {
         return ByteBpeTokenizer::load(dir);
       }},
      {"wordpiece", "vocab.txt",
       [](const nlohmann::json& j, const std::string& src) -> std::unique_ptr<Tokenizer> {
         return WordPieceTokenizer::from_json(j, src);
       },
       [](const fs_path& dir, const fs_path&, std::string_view) -> std::unique_ptr<Tokenizer> {
         return WordPieceTokenizer::load(dir);
       }},
  };
  return kinds;
}

const TokenizerKindRow* find_tokenizer_kind(std::string_view name) {
  for (const TokenizerKindRow& k : tokenizer_kind_rows())
    if (name == k.name) return &k;
  return nullptr;
}

bool is_sentencepiece(const Tokenizer& tokenizer) {
  const TokenizerKindRow* k = find_tokenizer_kind(tokenizer.kind());
  return k && k->sentencepiece;
}

namespace {

// "char, byte, ...": for errors about a kind this potop does not know.
std::string known_kinds() {
  std::string s;
  for (const TokenizerKindRow& k : tokenizer_kind_rows()) s += (s.empty() ? "" : ", ") + std::string(k.name);
  return s;
}

}  // namespace

Choice unknown_choice(Unknown& value) {
  return choice(value, {{Unknown::kError, "error"}, {Unknown::kSkip, "skip"}, {Unknown::kReplace, "replace"}});
}

void UnknownReport::add(char32_t c, long line, std::string_view word) {
  ++count;
  // Most texts have few distinct unknowns; a word model's held-out text can have thousands, so
  // look them up in an index.
  // (Appended, not "c" + ...: g++ 12 warns falsely about operator+ on a temporary, -Wrestrict.)
  std::string key(1, word.empty() ? 'c' : 'w');
  if (word.empty()) utf8_append(key, c);
  else key.append(word);
  const auto [it, inserted] = index_.emplace(std::move(key), items.size());
  if (inserted) items.push_back({c, 1, line, std::string(word)});
  else ++items[it->second].count;
}

std::string UnknownReport::describe(size_t max_items) const {
  const bool words = !items.empty() && !items[0].word.empty();
  const char* unit = words ? (count == 1 ? " word" : " words") : (count == 1 ? " character" : " characters");
  std::string s = std::to_string(count) + unit + " outside the vocabulary (" + std::to_string(items.size()) +
                  " distinct): ";
  for (size_t i = 0; i < items.size() && i < max_items; ++i) {
    const Item& item = items[i];
    if (i > 0) s += ", ";
    s += item.word.empty() ? describe_char(item.c) : nlohmann::json(item.word).dump(-1, ' ', false);
    if (item.count > 1) s += " ×" + std::to_string(item.count) + " from line " + std::to_string(item.first_line);
    else s += " on line " + std::to_string(item.first_line);
  }
  if (items.size() > max_items) s += ", and " + std::to_string(items.size() - max_items) + " more";
  return s;
}

std::unique_ptr<Tokenizer> tokenizer_from_json(const nlohmann::json& j, std::string_view source) {
  const std::string src(source);
  if (!j.is_object() || !j.contains("kind") || !j["kind"].is_string())
    throw Error(src + ": expected a tokenizer object with a \"kind\"");
  const std::string kind = j["kind"].get<std::string>();
  if (const TokenizerKindRow* k = find_tokenizer_kind(kind)) return k->from_json(j, src);
  throw Error(src + ": unknown tokenizer kind '" + kind + "' (this potop knows: " + known_kinds() + ")");
}

std::vector<int> Tokenizer::special_ids() const {
  const SpecialTokens s = specials();
  std::vector<int> ids;
  for (const int id : {s.bos, s.eos, s.pad, s.unk})
    if (id >= 0 && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  return ids;
}

std::string tokenizer_file(std::string_view kind) {
  const TokenizerKindRow* k = find_tokenizer_kind(kind);
  return k ? k->file : "";
}

std::filesystem::path tokenizer_file_in(const std::filesystem::path& dir, std::string_view kind) {
  const std::string file = tokenizer_file(kind);
  return file.empty() ? dir : dir / file;
}

std::vector<std::string> all_tokenizer_files() {
  return {tokenizer_file("char"), tokenizer_file("word"), tokenizer_file("bpe"), "tokenizer.vocab", "merges.txt", "byte_bpe.json",
          tokenizer_file("wordpiece"), "wordpiece.json"};
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& dir, std::string_view kind) {
  const std::filesystem::path file = tokenizer_file_in(dir, kind);
  if (const TokenizerKindRow* k = find_tokenizer_kind(kind)) return k->load(dir, file, kind);
  throw Error(dir.string() + ": unknown tokenizer kind '" + std::string(kind) + "' (this potop knows: " + known_kinds() +
              ")");
}

void save_tokenizer_dir(const Tokenizer& tokenizer, const std::filesystem::path& dir) {
  ensure_writable_directory(dir);
  tokenizer.save_files(dir);
  write_file_atomic(dir / "tokenizer.json", nlohmann::json{{"kind", tokenizer.kind()}}.dump() + "\n");
}

std::unique_ptr<Tokenizer> load_tokenizer_dir(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw Error(dir.string() + ": tokenizer directory does not exist");
  if (!fs::is_directory(dir, ec)) throw Error(dir.string() + ": not a directory (expected a tokenizer directory)");
  // tokenizer.json names the kind; a model directory's config.json does too; a lone vocab.json is char.
  for (const char* file : {"tokenizer.json", "config.json"}) {
    const fs::path path = dir / file;
    if (!fs::exists(path, ec)) continue;
    const nlohmann::json j = nlohmann::json::parse(read_file(path), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) throw Error(path.string() + ": not a JSON object");
    const auto kind = j.find(std::string(file) == "tokenizer.json" ? "kind" : "tokenizer");
    if (kind == j.end()) {
      if (std::string(file) == "config.json") break;  // an older model directory: char
      if (j.contains("model") && j.contains("pre_tokenizer"))  // Hugging Face's, not potop's
        throw Error(path.string() + ": a Hugging Face tokenizer.json; import it first: potop tokenizer import --hf-json " +
                    path.string() + " --out DIR");
      throw Error(path.string() + ": no \"kind\"");
    }
    if (!kind->is_string()) throw Error(path.string() + ": the tokenizer kind is not a string");
    return load_tokenizer(dir, kind->get<std::string>());
  }
  if (fs::exists(dir / tokenizer_file("char"), ec)) return load_tokenizer(dir, "char");
  throw Error(dir.string() + ": not a tokenizer directory (no tokenizer.json, config.json or vocab.json)");
}

bool is_hf_tokenizer_json(const nlohmann::json& j) {
  return j.is_object() && !j.contains("kind") && j.contains("model") && j["model"].is_object();
}

std::unique_ptr<Tokenizer> load_hf_tokenizer_json(const std::filesystem::path& tokenizer_json) {
  const nlohmann::json j = read_json_file(tokenizer_json);
  const std::string src = tokenizer_json.string();
  if (!is_hf_tokenizer_json(j)) throw Error(src + ": not a Hugging Face tokenizer.json (no \"model\" object)");
  const std::string type = j["model"].value("type", std::string("absent"));
  if (type == "WordPiece") return WordPieceTokenizer::from_hf_json(j, src);
  const std::filesystem::path config_file = tokenizer_json.parent_path() / "tokenizer_config.json";
  const nlohmann::json config = std::filesystem::exists(config_file) ? read_json_file(config_file) : nlohmann::json();
  const nlohmann::json& decoder = j.contains("decoder") ? j["decoder"] : nlohmann::json();
  if (type == "BPE" && decoder.is_object() && decoder.value("type", std::string()) == "Fuse")
    return std::make_unique<CharTokenizer>(CharTokenizer::from_hf_json(j, src));
  if (type == "BPE") return ByteBpeTokenizer::from_hf_json(j, config, src);
  throw Error(src + ": model.type " + type +
              ": potop reads WordPiece and byte-level BPE tokenizer.json files (a Unigram or SentencePiece model: "
              "import its tokenizer.model)");
}

}  // namespace potop
