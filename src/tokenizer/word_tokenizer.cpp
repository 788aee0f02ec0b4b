#include "tokenizer/word_tokenizer.h"

#include <unicode/ubrk.h>
#include <unicode/ucasemap.h>
#include <unicode/utext.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_io.h"
#include "core/hash.h"
#include "tokenizer/pieces.h"
#include "tokenizer/utf8.h"

namespace potop {
namespace {

constexpr const char* kUnkText = "<unk>";

struct BreakIteratorCloser {
  void operator()(UBreakIterator* b) const { ubrk_close(b); }
};

// ICU's word break iterator for the root locale, one per thread (an iterator holds the text it
// walks, so threads cannot share one; opening one costs more than a short sentence's split).
UBreakIterator* word_breaker() {
  thread_local std::unique_ptr<UBreakIterator, BreakIteratorCloser> breaker;
  if (!breaker) {
    UErrorCode status = U_ZERO_ERROR;
    breaker.reset(ubrk_open(UBRK_WORD, "", nullptr, 0, &status));
    if (U_FAILURE(status)) throw Error(std::string("ICU cannot open its word break iterator: ") + u_errorName(status));
  }
  return breaker.get();
}

// Calls f(segment) for each segment of one line (valid UTF-8 without '\n') between two word
// boundaries, in order; the segments concatenate to the line.
template <class F>
void split_line(std::string_view line, F&& f) {
  if (line.empty()) return;
  UErrorCode status = U_ZERO_ERROR;
  // The UText holds a buffer ICU allocates; closed however the loop ends (f may throw).
  struct ClosedText {
    UText text = UTEXT_INITIALIZER;
    ~ClosedText() { utext_close(&text); }
  } closed;
  utext_openUTF8(&closed.text, line.data(), static_cast<int64_t>(line.size()), &status);
  UBreakIterator* breaker = word_breaker();
  ubrk_setUText(breaker, &closed.text, &status);
  if (U_FAILURE(status)) throw Error(std::string("ICU cannot split a line into words: ") + u_errorName(status));
  int32_t start = ubrk_first(breaker);
  for (int32_t end = ubrk_next(breaker); end != UBRK_DONE; start = end, end = ubrk_next(breaker))
    f(line.substr(static_cast<size_t>(start), static_cast<size_t>(end - start)));
}

struct CaseMapCloser {
  void operator()(UCaseMap* m) const { ucasemap_close(m); }
};

// Unicode's full lowercase mapping (root locale) of valid UTF-8, into out.
void lowercase_into(std::string_view in, std::string& out) {
  static const std::unique_ptr<UCaseMap, CaseMapCloser> map = [] {
    UErrorCode status = U_ZERO_ERROR;
    UCaseMap* m = ucasemap_open("", 0, &status);
    if (U_FAILURE(status)) throw Error(std::string("ICU cannot open its case mapping: ") + u_errorName(status));
    return std::unique_ptr<UCaseMap, CaseMapCloser>(m);
  }();
  out.resize(in.size() + in.size() / 2 + 16);
  for (;;) {
    UErrorCode status = U_ZERO_ERROR;
    const int32_t n = ucasemap_utf8ToLower(map.get(), out.data(), static_cast<int32_t>(out.size()), in.data(),
                                           static_cast<int32_t>(in.size()), &status);
    if (status == U_BUFFER_OVERFLOW_ERROR) {
      out.resize(static_cast<size_t>(n));
      continue;
    }
    if (U_FAILURE(status)) throw Error(std::string("ICU cannot lowercase the text: ") + u_errorName(status));
    out.resize(static_cast<size_t>(n));
    return;
  }
}

// Calls f(word, line number) for every word of text (valid UTF-8): each line's segments, then
// "\n" between lines. Lines longer than ICU's 32-bit indexes are not expected (a line of 2 GiB).
template <class F>
void for_each_word(std::string_view text, bool lowercase, F&& f) {
  std::string lowered;
  long line_number = 1;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find('\n', start);
    std::string_view line = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (line.size() >= (size_t{1} << 31) - 1)
      throw Error("line " + std::to_string(line_number) + " is longer than 2 GiB, more than a word splitter takes");
    if (lowercase && !line.empty()) {
      lowercase_into(line, lowered);
      line = lowered;
    }
    split_line(line, [&](std::string_view word) { f(word, line_number); });
    if (end == std::string_view::npos) return;
    f(std::string_view("\n"), line_number);
    ++line_number;
    start = end + 1;
  }
}

std::string json_quoted(std::string_view s) { return nlohmann::json(std::string(s)).dump(-1, ' ', false); }

}  // namespace

void for_each_word_segment(std::string_view text, bool lowercase,
                           const std::function<void(std::string_view segment, long line)>& f) {
  for_each_word(text, lowercase, f);
}

std::string lowercase_text(std::string_view text) {
  std::string out;
  lowercase_into(text, out);
  return out;
}

WordTokenizer::WordTokenizer(std::vector<std::string> tokens, bool lowercase, std::string_view source)
    : tokens_(std::move(tokens)), lowercase_(lowercase) {
  const std::string src(source);
  if (tokens_.size() < static_cast<size_t>(kSpecialCount))
    throw Error(src + ": a word vocabulary starts with the " + std::to_string(kSpecialCount) +
                " special tokens, found only " + std::to_string(tokens_.size()) + " entries");
  if (tokens_.size() > static_cast<size_t>(kMaxVocabSize))
    throw Error(src + ": " + std::to_string(tokens_.size()) + " tokens, more than the " + std::to_string(kMaxVocabSize) +
                " token ids can number");
  index_.reserve(tokens_.size());
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const std::string& t = tokens_[i];
    const std::string where = src + ": entry " + std::to_string(i);
    if (i < static_cast<size_t>(kSpecialCount)) {
      if (t != kSpecialPieces[i])
        throw Error(where + " is " + json_quoted(t) + ", expected " + json_quoted(kSpecialPieces[i]) + " (the specials come first)");
      continue;
    }
    if (t.empty()) throw Error(where + " is empty");
    if (!utf8_valid(t)) throw Error(where + " is not valid UTF-8");
    if (std::find(std::begin(kSpecialPieces), std::end(kSpecialPieces), t) != std::end(kSpecialPieces))
      throw Error(where + " repeats the special token " + t);
    const auto [it, inserted] = index_.emplace(t, static_cast<int>(i));
    if (!inserted) throw Error(where + " repeats " + json_quoted(t) + ", already entry " + std::to_string(it->second));
  }
}

WordTokenizer WordTokenizer::train(std::string_view text, std::string_view what, const WordTrainOptions& options) {
  const std::string src(what);
  if (options.min_count < 1) throw Error("--min-count must be at least 1 (got " + std::to_string(options.min_count) + ")");
  if (options.vocab_size != 0 && options.vocab_size <= kSpecialCount)
    throw Error("--vocab-size " + std::to_string(options.vocab_size) + ": a word vocabulary needs more than its " +
                std::to_string(kSpecialCount) + " special tokens");
  if (options.vocab_size > kMaxVocabSize)
    throw Error("--vocab-size " + std::to_string(options.vocab_size) + ": more than the " +
                std::to_string(kMaxVocabSize) + " token ids can number");
  if (!utf8_valid(text)) utf8_decode(text, what);  // throws, naming the place
  std::unordered_map<std::string, long, Hash, std::equal_to<>> counts;
  for_each_word(text, options.lowercase, [&](std::string_view word, long) {
    auto it = counts.find(word);
    if (it == counts.end()) counts.emplace(std::string(word), 1);
    else ++it->second;
  });
  std::vector<std::pair<const std::string*, long>> kept;
  for (const auto& [word, count] : counts)
    if (count >= options.min_count) kept.emplace_back(&word, count);
  if (kept.empty())
    throw Error(src + ": no word occurs " + std::to_string(options.min_count) + " times (--min-count " +
                std::to_string(options.min_count) + ")");
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : *a.first < *b.first;
  });
  if (options.vocab_size > 0 && kept.size() > static_cast<size_t>(options.vocab_size - kSpecialCount))
    kept.resize(static_cast<size_t>(options.vocab_size - kSpecialCount));
  std::vector<std::string> tokens(std::begin(kSpecialPieces), std::end(kSpecialPieces));
  for (const auto& [word, count] : kept) {
    // A word spelled like a special token cannot come out of the splitter ("<" "pad" ">").
    tokens.push_back(*word);
  }
  return WordTokenizer(std::move(tokens), options.lowercase, src);
}

int WordTokenizer::id_of(std::string_view word) const {
  const auto it = index_.find(word);
  return it == index_.end() ? -1 : it->second;
}

std::vector<int> WordTokenizer::encode(std::string_view text, std::string_view what, Unknown unknown,
                                       UnknownReport* report) const {
  if (!utf8_valid(text)) utf8_decode(text, what);  // throws, naming the place
  std::vector<int> ids;
  ids.reserve(text.size() / 4 + 1);
  for_each_word(text, lowercase_, [&](std::string_view word, long line) {
    const int id = id_of(word);
    if (id >= 0) {
      ids.push_back(id);
      return;
    }
    if (unknown == Unknown::kError)
      throw Error(std::string(what) + ": line " + std::to_string(line) + ": the word " + json_quoted(word) +
                  " is not in the vocabulary (" + std::to_string(size()) + " tokens)");
    if (unknown == Unknown::kReplace) ids.push_back(kUnkId);
    if (report) report->add(0, line, word);
  });
  return ids;
}

bool WordTokenizer::can_encode(std::string_view text) const {
  if (!utf8_valid(text)) return false;
  bool known = true;
  for_each_word(text, lowercase_, [&](std::string_view word, long) { known = known && id_of(word) >= 0; });
  return known;
}

std::string WordTokenizer::decode_one(int id) const {
  if (id < 0 || id >= size())
    throw Error("token id " + std::to_string(id) + " is outside the vocabulary (ids 0.." + std::to_string(size() - 1) +
                ")");
  if (id < kSpecialCount) return id == kUnkId ? kUnkText : "";
  return tokens_[static_cast<size_t>(id)];
}

std::string WordTokenizer::decode(std::span<const int> ids) const {
  std::string out;
  for (const int id : ids) {
    if (id >= kSpecialCount && id < size()) out += tokens_[static_cast<size_t>(id)];
    else out += decode_one(id);  // a special, or throws
  }
  return out;
}

std::string WordTokenizer::piece(int id) const {
  decode_one(id);  // checks the id
  return id < kSpecialCount ? tokens_[static_cast<size_t>(id)] : display_piece(tokens_[static_cast<size_t>(id)]);
}

int WordTokenizer::char_count(int id) const { return count_char_starts(decode_one(id)); }

uint64_t WordTokenizer::hash() const {
  uint64_t h = fnv1a64("word");
  h = fnv1a64(lowercase_ ? "1" : "0", h);
  const char zero = 0;
  for (const std::string& t : tokens_) h = fnv1a64_raw(&zero, 1, fnv1a64(t, h));
  return h;
}

nlohmann::json WordTokenizer::to_json() const {
  return {{"kind", kind()}, {"lowercase", lowercase_}, {"words", tokens_}};
}

WordTokenizer WordTokenizer::from_json(const nlohmann::json& j, std::string_view source) {
  const std::string src(source);
  if (!j.is_object()) throw Error(src + ": expected a JSON object with \"lowercase\" and \"words\"");
  const auto lowercase = j.find("lowercase");
  if (lowercase == j.end() || !lowercase->is_boolean()) throw Error(src + ": \"lowercase\" must be true or false");
  const auto words = j.find("words");
  if (words == j.end() || !words->is_array()) throw Error(src + ": \"words\" must be an array of strings");
  std::vector<std::string> tokens;
  tokens.reserve(words->size());
  for (size_t i = 0; i < words->size(); ++i) {
    if (!(*words)[i].is_string()) throw Error(src + ": entry " + std::to_string(i) + " of \"words\" is not a string");
    tokens.push_back((*words)[i].get<std::string>());
  }
  return WordTokenizer(std::move(tokens), lowercase->get<bool>(), src);
}

WordTokenizer WordTokenizer::load(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error(name + ": word vocabulary file not found");
  const nlohmann::json j = nlohmann::json::parse(read_file(path), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw Error(name + ": not valid JSON");
  return from_json(j, name);
}

void WordTokenizer::save_files(const std::filesystem::path& dir) const {
  // One word per line: a vocabulary people can read and diff.
  std::string out = "{\"lowercase\": " + std::string(lowercase_ ? "true" : "false") + ", \"words\": [\n";
  for (size_t i = 0; i < tokens_.size(); ++i)
    out += nlohmann::json(tokens_[i]).dump() + (i + 1 < tokens_.size() ? ",\n" : "\n");
  out += "]}\n";
  write_file_atomic(dir / tokenizer_file(kind()), out);
}

}  // namespace potop
