#include "tokenizer/char_tokenizer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "core/hash.h"
#include "tokenizer/pieces.h"
#include "tokenizer/utf8.h"

namespace potop {
namespace {

std::string json_type_name(const nlohmann::json& j) {
  if (j.is_number()) return "a number";
  if (j.is_array()) return "an array";
  if (j.is_object()) return "an object";
  if (j.is_boolean()) return "a boolean";
  if (j.is_null()) return "null";
  if (j.is_string()) return "a string";
  return j.type_name();
}

// Shows a string entry in a message without letting control characters through.
std::string json_quoted(const std::string& s) { return nlohmann::json(s).dump(-1, ' ', false); }

}  // namespace

CharTokenizer::CharTokenizer(std::vector<char32_t> chars, std::string_view source) : chars_(std::move(chars)) {
  if (chars_.empty()) throw Error(std::string(source) + ": the vocabulary is empty");
  for (size_t i = 0; i < chars_.size(); ++i)
    if (!is_scalar_value(chars_[i]))
      throw Error(std::string(source) + ": entry " + std::to_string(i) + " is " + code_point_name(chars_[i]) +
                  ", which is not a Unicode character");
  index();
  for (size_t i = 0; i < chars_.size(); ++i) {
    const int first = id_of(chars_[i]);
    if (first != static_cast<int>(i))
      throw Error(std::string(source) + ": entry " + std::to_string(i) + " repeats " + describe_char(chars_[i]) +
                  ", already entry " + std::to_string(first));
  }
}

void CharTokenizer::index() {
  direct_.assign(kDirect, -1);
  rest_.clear();
  utf8_.clear();
  utf8_.reserve(chars_.size());
  // Walk backwards so that, with duplicates, the index holds the first occurrence (the
  // constructor reports the later one as the repeat).
  for (size_t i = chars_.size(); i-- > 0;) {
    const char32_t c = chars_[i];
    if (c < kDirect)
      direct_[c] = static_cast<int>(i);
    else
      rest_[c] = static_cast<int>(i);
  }
  packed_.clear();
  for (char32_t c : chars_) {
    utf8_.push_back(is_scalar_value(c) ? utf8_encode(c) : std::string{});
    Packed p{};
    std::memcpy(p.bytes, utf8_.back().data(), utf8_.back().size());
    p.len = static_cast<uint32_t>(utf8_.back().size());
    packed_.push_back(p);
  }
}

CharTokenizer CharTokenizer::from_text(std::u32string_view text) {
  if (text.empty()) throw Error("cannot build a vocabulary from an empty text");
  // A presence table over the BMP is cheaper than sorting millions of code points.
  std::vector<uint8_t> seen(0x10000, 0);
  std::vector<char32_t> astral;
  for (char32_t c : text) {
    if (c < 0x10000)
      seen[c] = 1;
    else
      astral.push_back(c);
  }
  std::vector<char32_t> chars;
  for (char32_t c = 0; c < 0x10000; ++c)
    if (seen[c]) chars.push_back(c);
  std::sort(astral.begin(), astral.end());
  astral.erase(std::unique(astral.begin(), astral.end()), astral.end());
  chars.insert(chars.end(), astral.begin(), astral.end());
  return CharTokenizer(std::move(chars), "text");
}

char32_t CharTokenizer::char_of(int id) const {
  POTOP_CHECK(id >= 0 && id < size(), "token id " + std::to_string(id) + " out of range");
  return chars_[static_cast<size_t>(id)];
}

std::vector<int> CharTokenizer::encode(std::u32string_view text, std::string_view what) const {
  std::vector<int> ids(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const int id = id_of(text[i]);
    if (id < 0)
      throw Error(std::string(what) + " contains " + describe_char(text[i]) + " at character " + std::to_string(i) +
                  ", which the model never saw in training");
    ids[i] = id;
  }
  return ids;
}

std::vector<int> CharTokenizer::encode(std::string_view text, std::string_view what, Unknown unknown,
                                       UnknownReport* report) const {
  const std::u32string chars = utf8_decode(text, what);
  if (unknown == Unknown::kError) return encode(chars, what);
  const int stand_in = id_of(U' ') >= 0 ? id_of(U' ') : 0;
  std::vector<int> ids;
  ids.reserve(chars.size());
  long line = 1;
  for (const char32_t c : chars) {
    const int id = id_of(c);
    if (id >= 0) {
      ids.push_back(id);
    } else {
      if (unknown == Unknown::kReplace) ids.push_back(stand_in);
      if (report) report->add(c, line);
    }
    if (c == U'\n') ++line;
  }
  return ids;
}

bool CharTokenizer::can_encode(std::string_view text) const {
  if (!utf8_valid(text)) return false;
  for (char32_t c : utf8_decode(text, "text"))
    if (!contains(c)) return false;
  return true;
}

std::string CharTokenizer::decode_one(int id) const {
  if (id < 0 || id >= size())
    throw Error("token id " + std::to_string(id) + " is outside the vocabulary (ids 0.." + std::to_string(size() - 1) +
                ")");
  return utf8_[static_cast<size_t>(id)];
}

std::string CharTokenizer::piece(int id) const { return display_piece(decode_one(id)); }

int CharTokenizer::char_count(int id) const {
  decode_one(id);  // checks the id
  return 1;
}

std::string CharTokenizer::decode(std::span<const int> ids) const {
  // Sized for the worst case (4 bytes a character) and trimmed once at the end.
  std::string out(ids.size() * 4, '\0');
  char* o = out.data();
  for (int id : ids) {
    if (id < 0 || id >= size()) decode_one(id);  // throws
    const Packed& p = packed_[static_cast<size_t>(id)];
    std::memcpy(o, p.bytes, 4);  // constant size: one store; the spare bytes are overwritten or trimmed
    o += p.len;
  }
  out.resize(static_cast<size_t>(o - out.data()));
  return out;
}

uint64_t CharTokenizer::hash() const {
  uint64_t h = kFnv1a64Offset;
  for (const auto& s : utf8_) h = fnv1a64(s, h);
  return h;
}

nlohmann::json CharTokenizer::to_json() const { return {{"kind", kind()}, {"vocab", vocab_json()}}; }

void CharTokenizer::save_files(const std::filesystem::path& dir) const { save(dir / tokenizer_file(kind())); }

nlohmann::json CharTokenizer::vocab_json() const {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& s : utf8_) j.push_back(s);
  return j;
}

CharTokenizer CharTokenizer::from_vocab_json(const nlohmann::json& j, std::string_view source) {
  const std::string src(source);
  if (!j.is_array())
    throw Error(src + ": expected a JSON array of one-character strings, found " + json_type_name(j));
  if (j.empty()) throw Error(src + ": the vocabulary is empty");
  std::vector<char32_t> chars;
  chars.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    const auto& e = j[i];
    const std::string where = src + ": entry " + std::to_string(i);
    if (!e.is_string())
      throw Error(where + " is " + json_type_name(e) + ", expected a string of exactly one character");
    const std::string& s = e.get_ref<const std::string&>();
    const std::u32string cps = utf8_decode(s, where);
    if (cps.size() != 1)
      throw Error(where + " is " + json_quoted(s) + " (" + std::to_string(cps.size()) +
                  " characters), expected exactly one character");
    chars.push_back(cps[0]);
  }
  return CharTokenizer(std::move(chars), source);
}

CharTokenizer CharTokenizer::from_hf_json(const nlohmann::json& j, std::string_view source) {
  const std::string src(source);
  const nlohmann::json& model = j.at("model");
  for (const char* key : {"normalizer", "pre_tokenizer"})
    if (j.contains(key) && !j[key].is_null())
      throw Error(src + ": " + key + ": a character model's tokenizer.json (a Fuse decoder) has none");
  if (model.contains("merges") && !(model["merges"].is_array() && model["merges"].empty()))
    throw Error(src + ": model.merges: a character model's tokenizer.json (a Fuse decoder) has none");
  const nlohmann::json& vocab = model.contains("vocab") ? model["vocab"] : nlohmann::json();
  if (!vocab.is_object() || vocab.empty()) throw Error(src + ": model.vocab: expected an object of characters and ids");
  nlohmann::json by_id = nlohmann::json::array();
  for (size_t i = 0; i < vocab.size(); ++i) by_id.push_back(nullptr);
  for (const auto& [token, id] : vocab.items()) {
    if (!id.is_number_integer() || id.get<long long>() < 0 || id.get<long long>() >= static_cast<long long>(vocab.size()))
      throw Error(src + ": model.vocab: " + json_quoted(token) + " has id " + id.dump() + ", expected 0 to " +
                  std::to_string(vocab.size() - 1));
    by_id[id.get<size_t>()] = token;
  }
  for (size_t i = 0; i < by_id.size(); ++i)
    if (by_id[i].is_null()) throw Error(src + ": model.vocab: no token has id " + std::to_string(i));
  return from_vocab_json(by_id, src + ": model.vocab");
}

CharTokenizer CharTokenizer::load(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error(name + ": vocabulary file not found");
  if (std::filesystem::is_directory(path, ec)) throw Error(name + ": is a directory, expected vocab.json");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(name + ": cannot open (" + std::strerror(errno) + ")");
  std::stringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw Error(name + ": cannot read (" + std::strerror(errno) + ")");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(buf.str());
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number like 1e999999
    throw Error(name + ": not valid JSON (" + e.what() + ")");
  }
  return from_vocab_json(j, name);
}

void CharTokenizer::save(const std::filesystem::path& path) const {
  write_file_atomic(path, vocab_json().dump(1) + "\n");  // errors name the path
}

}  // namespace potop
