#include "tokenizer/byte_bpe_tokenizer.h"

#include <algorithm>
#include <unicode/regex.h>
#include <unicode/unistr.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "core/hash.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/pieces.h"
#include "tokenizer/utf8.h"

namespace potop {
namespace {

// GPT-2's split expression, \s as Unicode's White_Space (the header says why).
#define POTOP_SPACE "\\p{White_Space}"
constexpr const char* kGpt2Split = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" POTOP_SPACE
                                   "\\p{L}\\p{N}]+|[" POTOP_SPACE "]+(?![^" POTOP_SPACE "])|[" POTOP_SPACE "]+";
#undef POTOP_SPACE

uint64_t pair_key(int left, int right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

// vocab.json's {token: id} as tokens by id.
std::vector<std::string> tokens_by_id(const nlohmann::json& vocab, const std::string& source) {
  if (!vocab.is_object() || vocab.empty()) throw Error(source + ": expected a JSON object of tokens and their ids");
  std::vector<std::string> tokens(vocab.size());
  std::vector<bool> seen(vocab.size());
  for (const auto& [token, id] : vocab.items()) {
    if (!id.is_number_integer() || id.get<long long>() < 0 || id.get<long long>() >= static_cast<long long>(vocab.size()))
      throw Error(source + ": token " + nlohmann::json(token).dump() + " has id " + id.dump() + ", expected 0.." +
                  std::to_string(vocab.size() - 1) + " (ids must number the tokens from 0)");
    const auto i = static_cast<size_t>(id.get<long long>());
    if (seen[i]) throw Error(source + ": id " + std::to_string(i) + " is given to two tokens");
    seen[i] = true;
    tokens[i] = token;
  }
  return tokens;
}

nlohmann::json options_json(const ByteBpeOptions& o) {
  nlohmann::json j = {{"split", o.split}, {"ignore_merges", o.ignore_merges}, {"bos", o.bos}, {"eos", o.eos}};
  if (!o.special.empty()) j["special"] = o.special;  // absent where none, so older hashes stay
  return j;
}

ByteBpeOptions options_from_json(const nlohmann::json& j, const std::string& source) {
  ByteBpeOptions o;
  if (!j.is_object()) throw Error(source + ": expected an object");
  for (const auto& [key, value] : j.items()) {
    if (key == "split") {
      if (!value.is_array() || value.empty()) throw Error(source + ": split: expected a list of expressions");
      o.split.clear();
      for (const auto& e : value) {
        if (!e.is_string()) throw Error(source + ": split: expected strings");
        o.split.push_back(e.get<std::string>());
      }
    } else if (key == "ignore_merges") {
      if (!value.is_boolean()) throw Error(source + ": ignore_merges: expected true or false");
      o.ignore_merges = value.get<bool>();
    } else if (key == "special") {
      if (!value.is_array()) throw Error(source + ": special: expected a list of tokens' texts");
      for (const auto& e : value) {
        if (!e.is_string() || e.get<std::string>().empty()) throw Error(source + ": special: expected tokens' texts");
        o.special.push_back(e.get<std::string>());
      }
    } else if (key == "bos" || key == "eos") {
      if (!value.is_string()) throw Error(source + ": " + key + ": expected a token's text");
      (key == "bos" ? o.bos : o.eos) = value.get<std::string>();
    } else {
      throw Error(source + ": unknown option \"" + key + "\" (known: split, ignore_merges, bos, eos, special)");
    }
  }
  return o;
}

}  // namespace

std::string ByteBpeOptions::gpt2_split_expression() { return kGpt2Split; }

// Every expression compiled once; matchers per encode call (ICU's matchers hold their text and
// state), one per expression, each reused for every piece of its level.
struct ByteBpeTokenizer::Splitter {
  std::vector<std::unique_ptr<icu::RegexPattern>> patterns;
  Splitter(const std::vector<std::string>& expressions, const std::string& source) {
    for (const std::string& e : expressions) {
      UErrorCode status = U_ZERO_ERROR;
      UParseError parse{};
      patterns.emplace_back(icu::RegexPattern::compile(icu::UnicodeString::fromUTF8(e), parse, status));
      if (U_FAILURE(status))
        throw Error(source + ": the split expression " + nlohmann::json(e).dump() + " does not compile (" +
                    u_errorName(status) + " at character " + std::to_string(parse.offset) + ")");
    }
  }

  // text split by every expression in turn, each piece handed to `piece` as [begin, end).
  template <class Piece>
  void split(const icu::UnicodeString& text, std::string_view what, const Piece& piece) const {
    std::vector<std::unique_ptr<icu::RegexMatcher>> matchers;
    for (const auto& p : patterns) {
      UErrorCode status = U_ZERO_ERROR;
      matchers.emplace_back(p->matcher(text, status));
      POTOP_CHECK(U_SUCCESS(status), std::string("ICU cannot match the split expression: ") + u_errorName(status));
    }
    split(matchers, 0, text.length(), 0, what, piece);
  }

 private:
  // [begin, end) split by the expressions from `level` on: the matches and the text between them
  // (Hugging Face's "Isolated"), each seen as a string of its own (region's opaque bounds: a
  // look-ahead does not see past the piece).
  template <class Piece>
  void split(std::vector<std::unique_ptr<icu::RegexMatcher>>& matchers, int32_t begin, int32_t end, size_t level,
             std::string_view what, const Piece& piece) const {
    if (begin >= end) return;
    if (level == matchers.size()) return piece(begin, end);
    icu::RegexMatcher& m = *matchers[level];
    UErrorCode status = U_ZERO_ERROR;
    m.region(begin, end, status);
    int32_t last = begin;
    while (U_SUCCESS(status) && m.find(status) && U_SUCCESS(status)) {
      const int32_t start = m.start(status), stop = m.end(status);
      if (start == stop) continue;
      split(matchers, last, start, level + 1, what, piece);
      split(matchers, start, stop, level + 1, what, piece);
      last = stop;
    }
    POTOP_CHECK(U_SUCCESS(status), std::string("ICU failed splitting ") + std::string(what) + ": " + u_errorName(status));
    split(matchers, last, end, level + 1, what, piece);
  }
};

ByteBpeTokenizer::ByteBpeTokenizer(std::vector<std::string> tokens, const std::vector<std::string>& merges,
                                   const std::string& source, ByteBpeOptions options)
    : tokens_(std::move(tokens)),
      merges_(merges),
      options_(std::move(options)),
      splitter_(std::make_unique<Splitter>(options_.split, source)) {
  if (tokens_.empty()) throw Error(source + ": the vocabulary is empty");
  if (tokens_.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    throw Error(source + ": too many tokens");
  std::unordered_map<std::string, int> id_of;
  id_of.reserve(tokens_.size());
  merge_of_.reserve(merges_.size());
  bytes_.resize(tokens_.size());
  spelled_in_bytes_.assign(tokens_.size(), true);
  for (size_t id = 0; id < tokens_.size(); ++id) {
    const std::string& t = tokens_[id];
    if (t.empty()) throw Error(source + ": token " + std::to_string(id) + " is empty");
    if (!id_of.emplace(t, static_cast<int>(id)).second)
      throw Error(source + ": token " + nlohmann::json(t).dump() + " appears twice");
    // A token outside the byte alphabet (an added special such as "<|im_start|>" spelled in
    // other characters) stands for its own text and is never the result of a merge.
    if (!byte_level_bytes(t, bytes_[id])) {
      spelled_in_bytes_[id] = false;
      if (!utf8_valid(t)) throw Error(source + ": token " + std::to_string(id) + " is not valid UTF-8");
      bytes_[id] = t;
    }
    if (t == options_.bos) bos_ = static_cast<int>(id);
    if (t == options_.eos) eos_ = static_cast<int>(id);
    if (options_.ignore_merges && spelled_in_bytes_[id]) whole_.emplace(bytes_[id], static_cast<int>(id));
  }
  for (const std::string& text : options_.special) {
    const auto it = id_of.find(text);
    if (it == id_of.end()) throw Error(source + ": special token " + nlohmann::json(text).dump() + " is not in the vocabulary");
    special_ids_.push_back(it->second);
  }
  for (int b = 0; b < 256; ++b) {
    const auto it = id_of.find(byte_level_char(static_cast<unsigned char>(b)));
    if (it == id_of.end())
      throw Error(source + ": the vocabulary lacks the byte " + byte_piece(static_cast<unsigned char>(b)) + " (" +
                  nlohmann::json(byte_level_char(static_cast<unsigned char>(b))).dump() +
                  "): a byte-level BPE needs all 256");
    byte_id_[b] = it->second;
  }
  for (size_t rank = 0; rank < merges_.size(); ++rank) {
    const std::string& m = merges_[rank];
    const size_t space = m.find(' ');
    // Spelled only for a refusal, not for each of the 50,000 merges of a load.
    const auto where = [&] { return source + ": merge " + std::to_string(rank + 1) + " " + nlohmann::json(m).dump(); };
    if (space == std::string::npos || space == 0 || space + 1 == m.size() || m.find(' ', space + 1) != std::string::npos)
      throw Error(where() + ": expected two tokens separated by one space");
    const std::string left = m.substr(0, space), right = m.substr(space + 1);
    const auto l = id_of.find(left), r = id_of.find(right), merged = id_of.find(left + right);
    if (l == id_of.end() || r == id_of.end() || merged == id_of.end())
      throw Error(where() + ": the vocabulary lacks " +
                  nlohmann::json(l == id_of.end() ? left : r == id_of.end() ? right : left + right).dump());
    // A merge listed twice keeps its later rank, as GPT-2's encoder (a dict of the list) does.
    merge_of_[pair_key(l->second, r->second)] = {static_cast<int>(rank), merged->second};
  }
}

ByteBpeTokenizer::~ByteBpeTokenizer() = default;

namespace {

std::vector<std::string> read_merges_txt(const std::filesystem::path& merges_txt) {
  const std::string text = read_file(merges_txt);
  std::vector<std::string> merges;
  size_t line_no = 0;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    at = end + 1, ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (line_no == 1 && line.rfind("#version", 0) == 0)) continue;
    if (!utf8_valid(line)) throw Error(merges_txt.string() + ": line " + std::to_string(line_no) + " is not valid UTF-8");
    merges.push_back(std::move(line));
  }
  return merges;
}

}  // namespace

std::unique_ptr<ByteBpeTokenizer> ByteBpeTokenizer::load(const std::filesystem::path& vocab_json,
                                                         const std::filesystem::path& merges_txt) {
  std::vector<std::string> tokens = tokens_by_id(read_json_file(vocab_json), vocab_json.string());
  return std::make_unique<ByteBpeTokenizer>(std::move(tokens), read_merges_txt(merges_txt),
                                            vocab_json.string() + " and " + merges_txt.string());
}

std::unique_ptr<ByteBpeTokenizer> ByteBpeTokenizer::load(const std::filesystem::path& dir) {
  const std::filesystem::path options_file = dir / "byte_bpe.json";
  if (!std::filesystem::exists(options_file)) return load(dir / "vocab.json", dir / "merges.txt");
  ByteBpeOptions options = options_from_json(read_json_file(options_file), options_file.string());
  std::vector<std::string> tokens = tokens_by_id(read_json_file(dir / "vocab.json"), (dir / "vocab.json").string());
  return std::make_unique<ByteBpeTokenizer>(std::move(tokens), read_merges_txt(dir / "merges.txt"),
                                            options_file.string(), std::move(options));
}

std::unique_ptr<ByteBpeTokenizer> ByteBpeTokenizer::from_json(const nlohmann::json& j, std::string_view source) {
  const std::string src(source);
  for (const char* key : {"tokens", "merges"})
    if (!j.contains(key) || !j[key].is_array()) throw Error(src + ": the byte_bpe tokenizer has no \"" + key + "\" array");
  std::vector<std::string> tokens, merges;
  for (const auto& t : j["tokens"]) {
    if (!t.is_string()) throw Error(src + ": tokens: expected strings");
    tokens.push_back(t.get<std::string>());
  }
  for (const auto& m : j["merges"]) {
    if (!m.is_string()) throw Error(src + ": merges: expected strings");
    merges.push_back(m.get<std::string>());
  }
  ByteBpeOptions options;
  if (j.contains("options")) options = options_from_json(j["options"], src + ": options");
  return std::make_unique<ByteBpeTokenizer>(std::move(tokens), merges, src, std::move(options));
}

void ByteBpeTokenizer::encode_piece(std::string_view bytes, std::vector<int>& out) const {
  if (!whole_.empty()) {
    const auto it = whole_.find(std::string(bytes));
    if (it != whole_.end()) return out.push_back(it->second);
  }
  std::vector<int> syms(bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) syms[i] = byte_id_[static_cast<unsigned char>(bytes[i])];
  // GPT-2's loop: the adjacent pair of lowest rank, merged wherever it occurs (left to right,
  // not overlapping), until no pair has a merge.
  std::vector<int> next;
  while (syms.size() > 1) {
    int best = std::numeric_limits<int>::max(), left = -1, right = -1, merged = -1;
    for (size_t i = 0; i + 1 < syms.size(); ++i) {
      const auto it = merge_of_.find(pair_key(syms[i], syms[i + 1]));
      if (it != merge_of_.end() && it->second.first < best)
        best = it->second.first, left = syms[i], right = syms[i + 1], merged = it->second.second;
    }
    if (merged < 0) break;
    next.clear();
    for (size_t i = 0; i < syms.size(); ++i) {
      if (i + 1 < syms.size() && syms[i] == left && syms[i + 1] == right) {
        next.push_back(merged);
        ++i;
      } else {
        next.push_back(syms[i]);
      }
    }
    syms.swap(next);
  }
  out.insert(out.end(), syms.begin(), syms.end());
}

std::vector<int> ByteBpeTokenizer::encode(std::string_view text, std::string_view what, Unknown, UnknownReport*) const {
  if (!utf8_valid(text)) utf8_decode(text, what);  // throws, naming the place
  std::vector<int> ids;
  if (text.empty()) return ids;
  const icu::UnicodeString u = icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
  std::string piece;
  splitter_->split(u, what, [&](int32_t begin, int32_t end) {
    piece.clear();
    u.tempSubStringBetween(begin, end).toUTF8String(piece);
    encode_piece(piece, ids);
  });
  return ids;
}

bool ByteBpeTokenizer::can_encode(std::string_view text) const { return utf8_valid(text); }

std::string ByteBpeTokenizer::decode_one(int id) const {
  check_token_id(id, size());
  return bytes_[static_cast<size_t>(id)];
}

std::string ByteBpeTokenizer::decode(std::span<const int> ids) const {
  std::string bytes;
  for (const int id : ids) bytes += decode_one(id);
  return utf8_repair(bytes);
}

std::string ByteBpeTokenizer::piece(int id) const {
  check_token_id(id, size());
  const std::string& t = tokens_[static_cast<size_t>(id)];
  return spelled_in_bytes_[static_cast<size_t>(id)] ? t : display_piece(t);  // the alphabet is printable, no spaces
}

int ByteBpeTokenizer::char_count(int id) const {
  check_token_id(id, size());
  return count_char_starts(bytes_[static_cast<size_t>(id)]);
}

SpecialTokens ByteBpeTokenizer::specials() const {
  SpecialTokens s;
  s.bos = bos_;
  s.eos = eos_;
  return s;
}

std::vector<int> ByteBpeTokenizer::special_ids() const {
  std::vector<int> ids;
  for (const int id : {bos_, eos_})
    if (id >= 0 && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  for (const int id : special_ids_)
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  return ids;
}

uint64_t ByteBpeTokenizer::hash() const {
  uint64_t h = fnv1a64("byte_bpe");
  const char nul = '\0';
  for (const std::string& t : tokens_) h = fnv1a64_raw(&nul, 1, fnv1a64(t, h));
  h = fnv1a64("merges", h);
  for (const std::string& m : merges_) h = fnv1a64_raw(&nul, 1, fnv1a64(m, h));
  // GPT-2's options leave the hash as it was before there were options.
  return options_ == ByteBpeOptions{} ? h : fnv1a64(options_json(options_).dump(), h);
}

nlohmann::json ByteBpeTokenizer::to_json() const {
  nlohmann::json j = {{"kind", kind()}, {"tokens", tokens_}, {"merges", merges_}};
  if (!(options_ == ByteBpeOptions{})) j["options"] = options_json(options_);
  return j;
}

std::string ByteBpeTokenizer::vocab_json() const {
  // Written by hand in id order: ordered_json's operator[] searches its keys linearly, which for
  // GPT-2's 50257 tokens took a second.
  std::string vocab = "{";
  for (size_t id = 0; id < tokens_.size(); ++id) {
    if (id) vocab += ',';
    vocab += nlohmann::json(tokens_[id]).dump();
    vocab += ':';
    vocab += std::to_string(id);
  }
  return vocab + "}";
}

std::string ByteBpeTokenizer::merges_txt() const {
  std::string text = "#version: 0.2\n";
  for (const std::string& m : merges_) text += m + "\n";
  return text;
}

void ByteBpeTokenizer::save_files(const std::filesystem::path& dir) const {
  write_file_atomic(dir / "vocab.json", vocab_json() + "\n");
  write_file_atomic(dir / "merges.txt", merges_txt());
  const std::filesystem::path options = dir / "byte_bpe.json";
  if (options_ == ByteBpeOptions{}) std::filesystem::remove(options);
  else write_file_atomic(options, options_json(options_).dump(2) + "\n");
}

}  // namespace potop
