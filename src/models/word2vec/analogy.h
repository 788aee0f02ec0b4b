// Questions asked of word vectors, with gensim's KeyedVectors conventions (4.2):
//  - similarity is the cosine; most_similar ranks every word (or the first `restrict` words of
//    the file, the most frequent) by cosine with the unit-length mean of the unit-length
//    positive vectors and negated negative vectors, leaving the query words out;
//  - an analogy a : b :: c : ? is most_similar(positive {b, c}, negative {a}) (3CosAdd);
//  - evaluate_analogies is gensim's evaluate_word_analogies(restrict_vocab=30000,
//    case_insensitive=True): words are compared lowercased (ICU root locale; gensim uppercases),
//    only the 30000 most frequent words are known (a lowercased form means its most frequent
//    spelling), a question with a word outside them is skipped (it counts against coverage),
//    and the answer is the first of the 5 best candidates that is not a question word.
// The analogy file: ": section name" lines, then lines of 4 words. Like gensim, a question
// before any section is an error, and a line that is not 4 words is skipped; potop reports the
// skipped lines' numbers.
#pragma once
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/word2vec/vectors_file.h"

namespace potop {

class VectorIndex {
 public:
  explicit VectorIndex(KeyedVectors vectors);
  const KeyedVectors& vectors() const { return v_; }
  int id_of(const std::string& word) const;  // exact spelling; -1 when absent
  float cosine(int a, int b) const;
  // (word id, cosine) best first, at most k, ranking words [0, restrict) (0: all) and leaving
  // out the ids in positive and negative.
  std::vector<std::pair<int, float>> most_similar(const std::vector<int>& positive, const std::vector<int>& negative,
                                                  int k, int restrict = 0) const;

 private:
  KeyedVectors v_;
  std::vector<float> unit_;  // rows scaled to length 1
  std::unordered_map<std::string, int> index_;
};

struct AnalogySection {
  std::string name;
  long correct = 0, incorrect = 0;  // questions asked (all their words known)
  long skipped = 0;                 // questions with a word outside the known words
  double accuracy() const { return correct + incorrect ? static_cast<double>(correct) / (correct + incorrect) : 0.0; }
};

struct AnalogyReport {
  std::vector<AnalogySection> sections;  // file order
  AnalogySection total{"Total accuracy"};
  std::vector<long> malformed_lines;     // 1-based numbers of the lines skipped as malformed
  double coverage() const {
    const long all = total.correct + total.incorrect + total.skipped;
    return all ? static_cast<double>(total.correct + total.incorrect) / all : 0.0;
  }
};

// Throws potop::Error naming the file (and line) when it cannot be read, a question comes
// before any section, or it holds no question at all (empty, or no line of 4 words after a
// section). A UTF-8 byte-order mark at its start is skipped, and so are blank lines before the
// first section.
AnalogyReport evaluate_analogies(const VectorIndex& index, const std::filesystem::path& file, int restrict = 30000);

}  // namespace potop
