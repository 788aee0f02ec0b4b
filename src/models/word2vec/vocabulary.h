// The words word2vec trains on, with word2vec.c's and gensim's conventions.
//
// What a word is. Two splitters, chosen by --split:
//  - icu (the default): potop's `word` tokenizer's splitting (ICU word boundaries, UAX #29,
//    optional --lowercase), keeping only the segments that hold a letter or a digit: spaces and
//    punctuation are not words here, so "Kmicic, pan" gives the words "Kmicic" and "pan",
//    exactly the words a word-level GPT with the same --lowercase sees (plus its punctuation).
//  - space: runs of characters between ASCII whitespace, as word2vec.c, gensim's LineSentence
//    and fastText split. `potop word2vec split` writes a text split by icu as space-separated
//    words, so gensim and fastText can be fed the very same words (bench/word2vec.py does).
// Each line is one sentence (a window never crosses a line end, as with LineSentence); a line
// longer than kMaxSentence words is cut into sentences of that length, as gensim does.
//
// The vocabulary: the words seen at least min_count times, by decreasing count (ties by their
// UTF-8 bytes, so it is deterministic); the corpus keeps only those words (others are dropped
// before windows are taken, as in word2vec.c and gensim).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace potop {

enum class WordSplit { kIcu, kSpace };

struct CorpusOptions {
  WordSplit split = WordSplit::kIcu;
  bool lowercase = false;
  long min_count = 5;
};

inline constexpr long kMaxSentence = 10000;

struct Vocabulary {
  std::vector<std::string> words;  // id order: decreasing count
  std::vector<int64_t> counts;
  int size() const { return static_cast<int>(words.size()); }
  int64_t total() const;  // Σ counts: the corpus words kept
  int id_of(std::string_view word) const;  // -1 when absent
  void build_index();

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int, Hash, std::equal_to<>> index_;
};

// The training text as word ids, sentence by sentence.
struct Corpus {
  std::vector<int32_t> ids;               // every kept word, in text order
  std::vector<int64_t> sentence_starts;   // sentence s is ids[starts[s], starts[s + 1]); ends with ids.size()
  int64_t raw_words = 0;                  // words before the min-count filter
  int64_t sentences() const { return static_cast<int64_t>(sentence_starts.size()) - 1; }
};

// Calls f(word) for every word of a line of text (no '\n'), as the splitter defines it, and
// f("\n") at every line end. Text must be valid UTF-8.
void split_words(std::string_view text, const CorpusOptions& options, const std::function<void(std::string_view)>& f);

// Splits text (named `what` in errors), counts, builds the vocabulary and the corpus. Throws
// potop::Error naming `what` and --min-count when no word is left, and --min-count when < 1.
void build_vocabulary(std::string_view text, std::string_view what, const CorpusOptions& options,
                      Vocabulary& vocab, Corpus& corpus);

// Frequent-word subsampling (word2vec.c, gensim): a word of count c is kept with probability
// min(1, (√(c / t) + 1) · t / c), t = sample · total; sample 0 keeps every word. As a threshold
// out of 2^32: keep when a uniform 32-bit draw < keep[w] (2^32: always).
std::vector<uint64_t> subsampling_thresholds(const Vocabulary& vocab, double sample);

// The negative-sampling table: word w fills a share count_w^0.75 / Σ count^0.75 of its slots
// (word2vec.c's table, sized to the vocabulary: from 1e6 up to 1e7 slots).
std::vector<int32_t> unigram_table(const Vocabulary& vocab, double power = 0.75);

}  // namespace potop
