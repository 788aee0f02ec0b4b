#include "tokenizer/wordpiece_tokenizer.h"

#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "core/hash.h"
#include "tokenizer/pieces.h"
#include "tokenizer/utf8.h"

namespace potop {
namespace {

// BERT's control characters: every category C but tab, newline and carriage return.
bool is_control(char32_t c) {
  if (c == U'\t' || c == U'\n' || c == U'\r') return false;
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_CONTROL_CHAR:
    case U_FORMAT_CHAR:
    case U_PRIVATE_USE_CHAR:
    case U_SURROGATE:
    case U_UNASSIGNED:
      return true;
    default:
      return false;
  }
}

bool is_whitespace(char32_t c) { return u_isUWhiteSpace(static_cast<UChar32>(c)); }

// BERT's CJK ideograph blocks (the CJK Unified Ideographs and their extensions, the compatibility
// ideographs); not Hangul, Hiragana or Katakana, which are written with spaces.
bool is_cjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// Unicode's punctuation, and ASCII's symbols that BERT treats as punctuation.
bool is_punctuation(char32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return true;
  return u_ispunct(static_cast<UChar32>(c));
}

std::u32string to_u32(const icu::UnicodeString& u) {
  std::u32string out;
  out.reserve(static_cast<size_t>(u.length()));
  for (int32_t i = 0; i < u.length();) {
    const UChar32 c = u.char32At(i);
    out.push_back(static_cast<char32_t>(c));
    i += U16_LENGTH(c);
  }
  return out;
}

icu::UnicodeString to_icu(const std::u32string& s) {
  return icu::UnicodeString::fromUTF32(reinterpret_cast<const UChar32*>(s.data()), static_cast<int32_t>(s.size()));
}

// clean_up_tokenization: the spaces tokenization put before punctuation and English clitics.
std::string clean_up(std::string s) {
  static const std::pair<const char*, const char*> kRules[] = {{" .", "."},   {" ?", "?"},     {" !", "!"},
                                                                {" ,", ","},   {" ' ", "'"},    {" n't", "n't"},
                                                                {" 'm", "'m"}, {" 's", "'s"},   {" 've", "'ve"},
                                                                {" 're", "'re"}};
  for (const auto& [from, to] : kRules) {
    const std::string f = from, t = to;
    std::string out;
    size_t i = 0;
    for (size_t hit; (hit = s.find(f, i)) != std::string::npos; i = hit + f.size()) out += s.substr(i, hit - i) + t;
    s = out + s.substr(i);
  }
  return s;
}

std::string options_string(const WordPieceOptions& o) {
  return std::string(o.clean_text ? "c" : "-") + (o.handle_chinese_chars ? "h" : "-") + (o.lowercase ? "l" : "-") +
         (o.strip_accents ? (*o.strip_accents ? "s" : "k") : "=") + (o.cleanup ? "u" : "-") + "|" + o.prefix + "|" +
         std::to_string(o.max_input_chars_per_word) + "|" + o.unk_token;
}

nlohmann::json options_json(const WordPieceOptions& o) {
  return {{"clean_text", o.clean_text},
          {"handle_chinese_chars", o.handle_chinese_chars},
          {"lowercase", o.lowercase},
          {"strip_accents", o.strip_accents ? nlohmann::json(*o.strip_accents) : nlohmann::json(nullptr)},
          {"continuing_subword_prefix", o.prefix},
          {"max_input_chars_per_word", o.max_input_chars_per_word},
          {"unk_token", o.unk_token},
          {"cleanup", o.cleanup}};
}

WordPieceOptions options_from_json(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw Error(source + ": expected an object of WordPiece options");
  WordPieceOptions o;
  try {
    o.clean_text = j.value("clean_text", o.clean_text);
    o.handle_chinese_chars = j.value("handle_chinese_chars", o.handle_chinese_chars);
    o.lowercase = j.value("lowercase", o.lowercase);
    if (j.contains("strip_accents") && !j["strip_accents"].is_null()) o.strip_accents = j["strip_accents"].get<bool>();
    o.prefix = j.value("continuing_subword_prefix", o.prefix);
    o.max_input_chars_per_word = j.value("max_input_chars_per_word", o.max_input_chars_per_word);
    o.unk_token = j.value("unk_token", o.unk_token);
    o.cleanup = j.value("cleanup", o.cleanup);
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": a WordPiece option has the wrong type (" + std::string(e.what()) + ")");
  }
  if (o.prefix.empty()) throw Error(source + ": continuing_subword_prefix is empty");
  if (o.max_input_chars_per_word < 1) throw Error(source + ": max_input_chars_per_word must be at least 1");
  return o;
}

std::vector<std::string> string_list(const nlohmann::json& j, const std::string& source) {
  if (!j.is_array()) throw Error(source + ": expected an array of strings");
  std::vector<std::string> out;
  for (const auto& t : j) {
    if (!t.is_string()) throw Error(source + ": expected an array of strings");
    out.push_back(t.get<std::string>());
  }
  return out;
}

// The special tokens BERT's files name, those the vocabulary has.
std::vector<std::string> bert_specials(const std::vector<std::string>& tokens) {
  std::vector<std::string> out;
  for (const char* s : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
    if (std::find(tokens.begin(), tokens.end(), s) != tokens.end()) out.push_back(s);
  return out;
}

}  // namespace

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> tokens, std::vector<std::string> added,
                                       WordPieceOptions options, const std::string& source)
    : tokens_(std::move(tokens)), added_(std::move(added)), options_(std::move(options)) {
  if (tokens_.empty()) throw Error(source + ": the vocabulary is empty");
  if (tokens_.size() > static_cast<size_t>(kMaxVocabSize)) throw Error(source + ": too many tokens");
  for (size_t id = 0; id < tokens_.size(); ++id) {
    const std::string& t = tokens_[id];
    if (t.empty()) throw Error(source + ": token " + std::to_string(id) + " is empty");
    if (!utf8_valid(t)) throw Error(source + ": token " + std::to_string(id) + " is not valid UTF-8");
    if (!ids_.emplace(t, static_cast<int>(id)).second)
      throw Error(source + ": token " + nlohmann::json(t).dump() + " appears twice");
  }
  unk_ = id_of(options_.unk_token);
  if (unk_ < 0) throw Error(source + ": the vocabulary lacks its unk_token " + nlohmann::json(options_.unk_token).dump());
  for (const std::string& a : added_)
    if (id_of(a) < 0) throw Error(source + ": the vocabulary lacks the special token " + nlohmann::json(a).dump());
  // Longest first, so that a special token containing another is matched whole.
  std::stable_sort(added_.begin(), added_.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  pad_ = id_of("[PAD]"), cls_ = id_of("[CLS]"), sep_ = id_of("[SEP]"), mask_ = id_of("[MASK]");
}

int WordPieceTokenizer::id_of(const std::string& token) const {
  const auto it = ids_.find(token);
  return it == ids_.end() ? -1 : it->second;
}

std::string WordPieceTokenizer::normalize(std::string_view text) const {
  std::u32string s = utf8_decode(text, "text");
  if (options_.clean_text || options_.handle_chinese_chars) {
    std::u32string out;
    out.reserve(s.size());
    for (const char32_t c : s) {
      if (options_.clean_text) {
        if (c == 0 || c == 0xFFFD || is_control(c)) continue;
        if (is_whitespace(c)) {
          out.push_back(U' ');
          continue;
        }
      }
      if (options_.handle_chinese_chars && is_cjk(c)) {
        out += U' ';
        out += c;
        out += U' ';
      } else {
        out.push_back(c);
      }
    }
    s.swap(out);
  }
  const bool strip = options_.strip_accents.value_or(options_.lowercase);
  if (options_.lowercase || strip) {
    icu::UnicodeString u = to_icu(s);
    if (options_.lowercase) u.toLower(icu::Locale::getRoot());  // full mappings, final sigma in context
    if (strip) {
      UErrorCode status = U_ZERO_ERROR;
      const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
      POTOP_CHECK(U_SUCCESS(status), std::string("ICU has no NFD: ") + u_errorName(status));
      u = nfd->normalize(u, status);
      POTOP_CHECK(U_SUCCESS(status), std::string("ICU cannot decompose: ") + u_errorName(status));
      std::u32string kept;
      for (const char32_t c : to_u32(u))
        if (u_charType(static_cast<UChar32>(c)) != U_NON_SPACING_MARK) kept.push_back(c);
      return utf8_encode(kept);
    }
    s = to_u32(u);
  }
  return utf8_encode(s);
}

void WordPieceTokenizer::encode_plain(std::string_view text, long line, Unknown unknown, UnknownReport* report,
                                      std::string_view what, std::vector<int>& out) const {
  const std::u32string s = utf8_decode(normalize(text), what);
  std::u32string word;
  std::vector<int> pieces;
  const auto finish_word = [&]() {
    if (word.empty()) return;
    pieces.clear();
    bool known = static_cast<int>(word.size()) <= options_.max_input_chars_per_word;
    for (size_t start = 0; known && start < word.size();) {
      int found = -1;
      size_t end = word.size();
      for (; end > start; --end) {
        const std::string sub = (start > 0 ? options_.prefix : "") + utf8_encode(word.substr(start, end - start));
        if ((found = id_of(sub)) >= 0) break;
      }
      if (found < 0) known = false;
      else pieces.push_back(found), start = end;
    }
    if (known) {
      out.insert(out.end(), pieces.begin(), pieces.end());
    } else {
      const std::string w = utf8_encode(word);
      if (unknown == Unknown::kError)
        throw Error(std::string(what) + (line > 0 ? ": line " + std::to_string(line) : std::string()) + ": the word " +
                    nlohmann::json(w).dump() +
                    " is outside the vocabulary (it would be " + options_.unk_token + "; --unknown replace allows it)");
      if (report) report->add(0, std::max(line, 1L), w);
      if (unknown == Unknown::kReplace) out.push_back(unk_);
    }
    word.clear();
  };
  for (const char32_t c : s) {
    if (is_whitespace(c)) {
      finish_word();
    } else if (is_punctuation(c)) {
      finish_word();
      word.push_back(c);
      finish_word();
    } else {
      word.push_back(c);
    }
  }
  finish_word();
}

std::vector<int> WordPieceTokenizer::encode(std::string_view text, std::string_view what, Unknown unknown,
                                            UnknownReport* report) const {
  if (!utf8_valid(text)) utf8_decode(text, what);  // throws, naming the place
  std::vector<int> ids;
  // Line by line (a word never spans lines), the special tokens in each kept whole. Errors name
  // the line when the text has several (line 0: one line, which the caller's `what` names).
  const size_t newline = text.find('\n');
  const bool one_line = newline == std::string_view::npos || newline + 1 == text.size();
  long line = one_line ? 0 : 1;
  for (size_t begin = 0; begin <= text.size(); line += one_line ? 0 : 1) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view l = text.substr(begin, end - begin);
    size_t plain = 0;
    for (size_t i = 0; i < l.size(); ++i) {
      for (const std::string& a : added_) {
        if (l.compare(i, a.size(), a) != 0) continue;
        encode_plain(l.substr(plain, i - plain), line, unknown, report, what, ids);
        ids.push_back(id_of(a));
        i += a.size() - 1;
        plain = i + 1;
        break;
      }
    }
    encode_plain(l.substr(plain), line, unknown, report, what, ids);
    begin = end + 1;
  }
  return ids;
}

bool WordPieceTokenizer::can_encode(std::string_view text) const {
  if (!utf8_valid(text)) return false;
  try {
    encode(text);
  } catch (const Error&) {
    return false;
  }
  return true;
}

std::string WordPieceTokenizer::decode(std::span<const int> ids) const {
  std::string out;
  bool first = true;
  for (const int id : ids) {
    check_token_id(id, size());
    if (id == pad_ || id == cls_ || id == sep_) continue;
    std::string t = tokens_[static_cast<size_t>(id)];
    if (!first) t = t.compare(0, options_.prefix.size(), options_.prefix) == 0 ? t.substr(options_.prefix.size()) : " " + t;
    out += options_.cleanup ? clean_up(t) : t;
    first = false;
  }
  return clean_up(out);  // tokenizer_config's clean_up_tokenization_spaces, true for BERT
}

std::string WordPieceTokenizer::decode_one(int id) const {
  check_token_id(id, size());
  if (id == pad_ || id == cls_ || id == sep_) return "";
  const std::string& t = tokens_[static_cast<size_t>(id)];
  return t.compare(0, options_.prefix.size(), options_.prefix) == 0 ? t.substr(options_.prefix.size()) : " " + t;
}

std::string WordPieceTokenizer::piece(int id) const {
  check_token_id(id, size());
  return display_piece(tokens_[static_cast<size_t>(id)]);
}

int WordPieceTokenizer::char_count(int id) const {
  check_token_id(id, size());
  if (id == pad_ || id == cls_ || id == sep_) return 0;
  const std::string& t = tokens_[static_cast<size_t>(id)];
  const bool continued = t.size() > options_.prefix.size() && t.compare(0, options_.prefix.size(), options_.prefix) == 0;
  return count_char_starts(continued ? std::string_view(t).substr(options_.prefix.size()) : std::string_view(t));
}

SpecialTokens WordPieceTokenizer::specials() const { return {pad_, cls_, sep_, unk_, mask_}; }

uint64_t WordPieceTokenizer::hash() const {
  uint64_t h = fnv1a64("wordpiece");
  const char nul = '\0';
  for (const std::string& t : tokens_) h = fnv1a64_raw(&nul, 1, fnv1a64(t, h));
  h = fnv1a64("added", h);
  std::vector<std::string> added = added_;
  std::sort(added.begin(), added.end());
  for (const std::string& a : added) h = fnv1a64_raw(&nul, 1, fnv1a64(a, h));
  return fnv1a64(options_string(options_), h);
}

nlohmann::json WordPieceTokenizer::to_json() const {
  std::vector<std::string> added = added_;
  std::sort(added.begin(), added.end(), [&](const std::string& a, const std::string& b) { return id_of(a) < id_of(b); });
  return {{"kind", kind()}, {"tokens", tokens_}, {"added", added}, {"options", options_json(options_)}};
}

void WordPieceTokenizer::save_files(const std::filesystem::path& dir) const {
  std::string vocab;
  for (const std::string& t : tokens_) vocab += t + "\n";
  write_file_atomic(dir / "vocab.txt", vocab);
  nlohmann::json j = to_json();
  j.erase("tokens");
  write_file_atomic(dir / "wordpiece.json", j.dump(2) + "\n");
}

std::unique_ptr<WordPieceTokenizer> WordPieceTokenizer::from_json(const nlohmann::json& j, std::string_view source) {
  const std::string src(source);
  if (!j.is_object() || !j.contains("tokens") || !j.contains("options"))
    throw Error(src + ": the wordpiece tokenizer needs \"tokens\" and \"options\"");
  return std::make_unique<WordPieceTokenizer>(string_list(j["tokens"], src + ": tokens"),
                                              string_list(j.value("added", nlohmann::json::array()), src + ": added"),
                                              options_from_json(j["options"], src + ": options"), src);
}

namespace {

std::vector<std::string> read_vocab_txt(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  std::vector<std::string> tokens;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string t = text.substr(begin, end - begin);
    if (!t.empty() && t.back() == '\r') t.pop_back();
    tokens.push_back(std::move(t));
    begin = end + 1;
  }
  return tokens;
}

}  // namespace

std::unique_ptr<WordPieceTokenizer> WordPieceTokenizer::load(const std::filesystem::path& dir) {
  const std::filesystem::path options = dir / "wordpiece.json";
  if (!std::filesystem::exists(options)) throw Error(options.string() + ": missing (a wordpiece tokenizer's options)");
  nlohmann::json j = read_json_file(options);
  if (!j.is_object()) throw Error(options.string() + ": expected a JSON object");
  j["tokens"] = read_vocab_txt(dir / "vocab.txt");
  return from_json(j, options.string());
}

std::unique_ptr<WordPieceTokenizer> WordPieceTokenizer::load_vocab_txt(const std::filesystem::path& vocab_txt) {
  std::vector<std::string> tokens = read_vocab_txt(vocab_txt);
  WordPieceOptions o;
  const std::filesystem::path config = vocab_txt.parent_path() / "tokenizer_config.json";
  if (std::filesystem::exists(config)) {
    const nlohmann::json c = read_json_file(config);
    try {
      o.lowercase = c.value("do_lower_case", true);
      if (c.contains("strip_accents") && !c["strip_accents"].is_null()) o.strip_accents = c["strip_accents"].get<bool>();
      o.handle_chinese_chars = c.value("tokenize_chinese_chars", true);
      if (c.contains("unk_token") && c["unk_token"].is_string()) o.unk_token = c["unk_token"].get<std::string>();
    } catch (const nlohmann::json::exception& e) {
      throw Error(config.string() + ": a field has the wrong type (" + std::string(e.what()) + ")");
    }
  }
  std::vector<std::string> added = bert_specials(tokens);
  return std::make_unique<WordPieceTokenizer>(std::move(tokens), std::move(added), o, vocab_txt.string());
}

std::unique_ptr<WordPieceTokenizer> WordPieceTokenizer::from_hf_json(const nlohmann::json& j, const std::string& source) {
  const auto section = [&](const char* key) -> const nlohmann::json& {
    static const nlohmann::json null;
    return j.contains(key) ? j.at(key) : null;
  };
  const nlohmann::json& model = section("model");
  if (!model.is_object() || model.value("type", "") != "WordPiece")
    throw Error(source + ": model.type is " + (model.is_object() ? model.value("type", "absent") : "absent") +
                "; potop reads WordPiece tokenizer.json files here");
  WordPieceOptions o;
  o.unk_token = model.value("unk_token", o.unk_token);
  o.prefix = model.value("continuing_subword_prefix", o.prefix);
  o.max_input_chars_per_word = model.value("max_input_chars_per_word", o.max_input_chars_per_word);
  const nlohmann::json& norm = section("normalizer");
  if (norm.is_null()) {
    o.clean_text = o.handle_chinese_chars = o.lowercase = false;
    o.strip_accents = false;
  } else if (norm.value("type", "") == "BertNormalizer") {
    o.clean_text = norm.value("clean_text", true);
    o.handle_chinese_chars = norm.value("handle_chinese_chars", true);
    o.lowercase = norm.value("lowercase", true);
    if (norm.contains("strip_accents") && !norm["strip_accents"].is_null()) o.strip_accents = norm["strip_accents"].get<bool>();
  } else {
    throw Error(source + ": normalizer " + norm.value("type", "?") + ": potop reads BertNormalizer with WordPiece");
  }
  const nlohmann::json& pre = section("pre_tokenizer");
  if (!pre.is_object() || pre.value("type", "") != "BertPreTokenizer")
    throw Error(source + ": pre_tokenizer " + (pre.is_object() ? pre.value("type", "?") : std::string("null")) +
                ": potop reads BertPreTokenizer with WordPiece");
  const nlohmann::json& dec = section("decoder");
  if (dec.is_object()) o.cleanup = dec.value("cleanup", true);
  const nlohmann::json& vocab = model.contains("vocab") ? model["vocab"] : nlohmann::json();
  if (!vocab.is_object() || vocab.empty()) throw Error(source + ": model.vocab is not an object of tokens and ids");
  std::vector<std::string> tokens(vocab.size());
  std::vector<bool> seen(vocab.size());
  for (const auto& [token, id] : vocab.items()) {
    if (!id.is_number_integer() || id.get<long long>() < 0 || id.get<long long>() >= static_cast<long long>(vocab.size()))
      throw Error(source + ": model.vocab: token " + nlohmann::json(token).dump() + " has id " + id.dump() +
                  ", expected 0.." + std::to_string(vocab.size() - 1));
    const auto i = static_cast<size_t>(id.get<long long>());
    if (seen[i]) throw Error(source + ": model.vocab: id " + std::to_string(i) + " is given to two tokens");
    seen[i] = true;
    tokens[i] = token;
  }
  std::vector<std::string> added;
  for (const auto& a : section("added_tokens")) {
    if (!a.is_object() || !a.contains("content") || !a.contains("id") || !a["id"].is_number_integer())
      throw Error(source + ": added_tokens: expected objects with content and id");
    const std::string content = a["content"].get<std::string>();
    const long long id = a["id"].get<long long>();
    if (id < 0 || id >= static_cast<long long>(tokens.size()) || tokens[static_cast<size_t>(id)] != content)
      throw Error(source + ": added_tokens: " + nlohmann::json(content).dump() + " is not model.vocab's id " +
                  std::to_string(id) + " (potop reads added tokens that are in the vocabulary)");
    if (a.value("normalized", false))
      throw Error(source + ": added_tokens: " + nlohmann::json(content).dump() +
                  " is matched after normalization, which potop does not do");
    added.push_back(content);
  }
  return std::make_unique<WordPieceTokenizer>(std::move(tokens), std::move(added), o, source);
}

}  // namespace potop
