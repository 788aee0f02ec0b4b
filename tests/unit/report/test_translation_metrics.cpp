// BLEU and chrF against values computed once with the reference definitions by
// scripts/translation_metrics_expected.py (nltk's corpus_bleu with smoothing method3 on
// 13a-tokenised text; sacreBLEU's chrF2 written out from its definition).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/translation_metrics.h"

namespace potop {
namespace {

const std::vector<std::string> kHypotheses = {
    "The cat sat on the mat.",
    "I don't know, Tom - it's 3.5 km away!",
    "Przyjdź szybko, proszę.",
    "He said \"hello\" & left at 10-11 o'clock.",
    "Nothing matches here at all",
    "Mam psa i dwa koty.",
};
const std::vector<std::string> kReferences = {
    "The cat is sitting on the mat.",
    "I don't know, Tom; it's 3.5 km from here!",
    "Przyjdź szybko!",
    "He said \"hello\" and left at 10-11 o'clock.",
    "Completely different words",
    "Mam psa i trzy koty.",
};

std::string joined(const std::vector<std::string>& tokens) {
  std::string s;
  for (const std::string& t : tokens) s += (s.empty() ? "" : " ") + t;
  return s;
}

template <class T>
std::vector<T> slice(const std::vector<T>& v, size_t from, size_t to) {
  return std::vector<T>(v.begin() + long(from), v.begin() + long(to));
}

TEST(TranslationMetrics, Tokenize13aSplitsAsSacreBleu) {
  EXPECT_EQ(joined(tokenize_13a(kHypotheses[0])), "The cat sat on the mat .");
  EXPECT_EQ(joined(tokenize_13a(kHypotheses[1])), "I don't know , Tom - it's 3.5 km away !");
  EXPECT_EQ(joined(tokenize_13a(kHypotheses[2])), "Przyjdź szybko , proszę .");
  EXPECT_EQ(joined(tokenize_13a(kHypotheses[3])), "He said \" hello \" & left at 10 - 11 o'clock .");
  EXPECT_EQ(joined(tokenize_13a("a &amp; b &lt;c&gt;")), "a & b < c >");
  EXPECT_TRUE(tokenize_13a("   ").empty());
}

TEST(TranslationMetrics, CorpusBleuMatchesNltkMethod3) {
  EXPECT_NEAR(corpus_bleu(kHypotheses, kReferences).score, 48.7157106834, 1e-6);
  EXPECT_NEAR(corpus_bleu(slice(kHypotheses, 0, 2), slice(kReferences, 0, 2)).score, 43.4921178572, 1e-6);
  EXPECT_NEAR(corpus_bleu(slice(kHypotheses, 2, 3), slice(kReferences, 2, 3)).score, 21.3643503198, 1e-6);
  EXPECT_NEAR(corpus_bleu(kReferences, kReferences).score, 100.0, 1e-9);
  EXPECT_EQ(corpus_bleu({""}, {"a b c d"}).score, 0.0);
}

TEST(TranslationMetrics, CorpusChrfMatchesSacreBleuDefinition) {
  EXPECT_NEAR(corpus_chrf(kHypotheses, kReferences), 57.5574452894, 1e-6);
  EXPECT_NEAR(corpus_chrf(slice(kHypotheses, 2, 3), slice(kReferences, 2, 3)), 81.1143678057, 1e-6);
  EXPECT_NEAR(corpus_chrf(slice(kHypotheses, 4, 5), slice(kReferences, 4, 5)), 11.3301579777, 1e-6);
  EXPECT_NEAR(corpus_chrf(kReferences, kReferences), 100.0, 1e-9);
}

}  // namespace
}  // namespace potop
