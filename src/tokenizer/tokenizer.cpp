#include "tokenizer/tokenizer.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/utf8.h"

namespace potop {

Choice unknown_choice(Unknown& value) {
  return choice(value, {{Unknown::kError, "error"}, {Unknown::kSkip, "skip"}, {Unknown::kReplace, "replace"}});
}

std::string UnknownReport::describe(size_t max_items) const {
  std::string s = std::to_string(count) + (count == 1 ? " character" : " characters") + " outside the vocabulary (" +
                  std::to_string(items.size()) + " distinct): ";
  for (size_t i = 0; i < items.size() && i < max_items; ++i) {
    const Item& item = items[i];
    if (i > 0) s += ", ";
    s += describe_char(item.c);
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
  if (kind == "char") {
    if (!j.contains("vocab")) throw Error(src + ": the char tokenizer has no \"vocab\"");
    return std::make_unique<CharTokenizer>(CharTokenizer::from_vocab_json(j["vocab"], src + ": vocab"));
  }
  throw Error(src + ": unknown tokenizer kind '" + kind + "' (this potop knows: char)");
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& dir, std::string_view kind) {
  if (kind == "char") return std::make_unique<CharTokenizer>(CharTokenizer::load(dir / "vocab.json"));
  throw Error((dir / "config.json").string() + ": unknown tokenizer kind '" + std::string(kind) +
              "' (this potop knows: char)");
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
      throw Error(path.string() + ": no \"kind\"");
    }
    if (!kind->is_string()) throw Error(path.string() + ": the tokenizer kind is not a string");
    return load_tokenizer(dir, kind->get<std::string>());
  }
  if (fs::exists(dir / "vocab.json", ec)) return load_tokenizer(dir, "char");
  throw Error(dir.string() + ": not a tokenizer directory (no tokenizer.json, config.json or vocab.json)");
}

}  // namespace potop
