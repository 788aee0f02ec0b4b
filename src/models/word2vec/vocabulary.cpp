#include "models/word2vec/vocabulary.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "tokenizer/word_tokenizer.h"

namespace potop {
namespace {

// Whether an ICU segment is a word for word2vec: it holds a letter or a digit.
bool has_letter_or_digit(std::string_view segment) {
  const auto* s = reinterpret_cast<const uint8_t*>(segment.data());
  const int32_t n = static_cast<int32_t>(segment.size());
  for (int32_t i = 0; i < n;) {
    UChar32 c;
    U8_NEXT(s, i, n, c);
    if (c >= 0 && u_isalnum(c)) return true;
  }
  return false;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

}  // namespace

int64_t Vocabulary::total() const { return std::accumulate(counts.begin(), counts.end(), int64_t{0}); }

int Vocabulary::id_of(std::string_view word) const {
  auto it = index_.find(word);
  return it == index_.end() ? -1 : it->second;
}

void Vocabulary::build_index() {
  index_.clear();
  index_.reserve(words.size());
  for (size_t i = 0; i < words.size(); ++i) index_.emplace(words[i], static_cast<int>(i));
}

void split_words(std::string_view text, const CorpusOptions& options, const std::function<void(std::string_view)>& f) {
  if (options.split == WordSplit::kIcu) {
    for_each_word_segment(text, options.lowercase, [&](std::string_view segment, long) {
      if (segment == "\n" || has_letter_or_digit(segment)) f(segment);
    });
    return;
  }
  std::string lowered;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find('\n', start);
    std::string_view line = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (options.lowercase && !line.empty()) {
      lowered = lowercase_text(line);
      line = lowered;
    }
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && is_space(line[i])) ++i;
      size_t j = i;
      while (j < line.size() && !is_space(line[j])) ++j;
      if (j > i) f(line.substr(i, j - i));
      i = j;
    }
    if (end == std::string_view::npos) return;
    f(std::string_view("\n"));
    start = end + 1;
  }
}

void build_vocabulary(std::string_view text, std::string_view what, const CorpusOptions& options,
                      Vocabulary& vocab, Corpus& corpus) {
  if (options.min_count < 1)
    throw Error("--min-count must be at least 1, got " + std::to_string(options.min_count));
  // One pass: words get provisional ids in order of first appearance; the stream of those ids
  // (with -1 at line ends) is remapped once the final order is known.
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> seen;
  std::vector<std::string_view> first_words;  // views into seen's keys (stable in a node map)
  std::vector<int64_t> first_counts;
  std::vector<int32_t> stream;
  split_words(text, options, [&](std::string_view w) {
    if (w == "\n") {
      stream.push_back(-1);
      return;
    }
    auto it = seen.find(w);
    if (it == seen.end()) {
      it = seen.emplace(std::string(w), static_cast<int32_t>(first_words.size())).first;
      first_words.push_back(it->first);
      first_counts.push_back(0);
    }
    ++first_counts[static_cast<size_t>(it->second)];
    stream.push_back(it->second);
  });

  std::vector<int32_t> order;
  for (size_t i = 0; i < first_words.size(); ++i)
    if (first_counts[i] >= options.min_count) order.push_back(static_cast<int32_t>(i));
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (first_counts[a] != first_counts[b]) return first_counts[a] > first_counts[b];
    return first_words[a] < first_words[b];
  });
  if (order.empty()) {
    if (first_words.empty()) throw Error(std::string(what) + ": holds no words");
    const long max_count = static_cast<long>(*std::max_element(first_counts.begin(), first_counts.end()));
    throw Error(std::string(what) + ": no word is seen --min-count " + std::to_string(options.min_count) +
                " times (the most frequent is seen " + std::to_string(max_count) + " times): lower --min-count");
  }
  std::vector<int32_t> final_id(first_words.size(), -1);
  vocab.words.clear();
  vocab.counts.clear();
  for (int32_t i : order) {
    final_id[static_cast<size_t>(i)] = static_cast<int32_t>(vocab.words.size());
    vocab.words.emplace_back(first_words[static_cast<size_t>(i)]);
    vocab.counts.push_back(first_counts[static_cast<size_t>(i)]);
  }
  vocab.build_index();

  corpus = Corpus{};
  corpus.raw_words = static_cast<int64_t>(stream.size()) - std::count(stream.begin(), stream.end(), -1);
  corpus.sentence_starts.push_back(0);
  auto end_sentence = [&] {
    if (static_cast<int64_t>(corpus.ids.size()) > corpus.sentence_starts.back())
      corpus.sentence_starts.push_back(static_cast<int64_t>(corpus.ids.size()));
  };
  for (int32_t s : stream) {
    if (s < 0) {
      end_sentence();
      continue;
    }
    const int32_t id = final_id[static_cast<size_t>(s)];
    if (id < 0) continue;
    corpus.ids.push_back(id);
    if (static_cast<int64_t>(corpus.ids.size()) - corpus.sentence_starts.back() == kMaxSentence) end_sentence();
  }
  end_sentence();
}

std::vector<uint64_t> subsampling_thresholds(const Vocabulary& vocab, double sample) {
  constexpr uint64_t kAlways = uint64_t{1} << 32;
  std::vector<uint64_t> keep(vocab.counts.size(), kAlways);
  if (sample <= 0) return keep;
  const double t = sample * static_cast<double>(vocab.total());
  for (size_t w = 0; w < keep.size(); ++w) {
    const double c = static_cast<double>(vocab.counts[w]);
    const double p = (std::sqrt(c / t) + 1.0) * t / c;
    keep[w] = p >= 1.0 ? kAlways : static_cast<uint64_t>(std::llround(p * 4294967296.0));
  }
  return keep;
}

std::vector<int32_t> unigram_table(const Vocabulary& vocab, double power) {
  const size_t size = std::clamp<size_t>(vocab.counts.size() * 100, 1000000, 10000000);
  double norm = 0;
  for (int64_t c : vocab.counts) norm += std::pow(static_cast<double>(c), power);
  std::vector<int32_t> table(size);
  // Slot i goes to the word whose cumulative share first reaches (i + 1) / size.
  size_t w = 0;
  double cumulative = std::pow(static_cast<double>(vocab.counts[0]), power) / norm;
  for (size_t i = 0; i < size; ++i) {
    table[i] = static_cast<int32_t>(w);
    while (static_cast<double>(i + 1) / static_cast<double>(size) > cumulative && w + 1 < vocab.counts.size()) {
      ++w;
      cumulative += std::pow(static_cast<double>(vocab.counts[w]), power) / norm;
    }
  }
  return table;
}

}  // namespace potop
