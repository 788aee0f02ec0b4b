// word2vec: the vocabulary and corpus, subsampling and the negative-sampling table, training on
// a synthetic corpus whose nearest neighbours are known by construction, the vector file
// formats and their readers' errors, and the analogy evaluation on vectors built by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include "core/error.h"
#include "core/file_io.h"
#include "core/rng.h"
#include "support/testing.h"
#include "models/word2vec/analogy.h"
#include "models/word2vec/word2vec_trainer.h"
#include "models/word2vec/vectors_file.h"
#include "models/word2vec/vocabulary.h"

namespace potop {
namespace {

CorpusOptions corpus_options(WordSplit split, long min_count, bool lowercase = false) {
  CorpusOptions o;
  o.split = split;
  o.min_count = min_count;
  o.lowercase = lowercase;
  return o;
}

TEST(Word2VecVocabulary, CountsSortsAndDropsRareWords) {
  Vocabulary vocab;
  Corpus corpus;
  build_vocabulary("b a c a\nb a d\n\nz", "text", corpus_options(WordSplit::kSpace, 2), vocab, corpus);
  EXPECT_EQ(vocab.words, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(vocab.counts, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(corpus.raw_words, 8);
  EXPECT_EQ(corpus.ids, (std::vector<int32_t>{1, 0, 0, 1, 0}));
  EXPECT_EQ(corpus.sentence_starts, (std::vector<int64_t>{0, 3, 5}));  // empty lines make no sentence
  EXPECT_EQ(vocab.id_of("b"), 1);
  EXPECT_EQ(vocab.id_of("c"), -1);
}

TEST(Word2VecVocabulary, TiesAreOrderedByBytes) {
  Vocabulary vocab;
  Corpus corpus;
  build_vocabulary("zeta alfa beta", "text", corpus_options(WordSplit::kSpace, 1), vocab, corpus);
  EXPECT_EQ(vocab.words, (std::vector<std::string>{"alfa", "beta", "zeta"}));
}

TEST(Word2VecVocabulary, IcuSplitKeepsWordsWithLettersOrDigits) {
  std::vector<std::string> words;
  split_words("Kmicic, pan Zagłoba — 3.14 can't!\nŻywo", corpus_options(WordSplit::kIcu, 1, true),
              [&](std::string_view w) { words.emplace_back(w); });
  EXPECT_EQ(words, (std::vector<std::string>{"kmicic", "pan", "zagłoba", "3.14", "can't", "\n", "żywo"}));
}

TEST(Word2VecVocabulary, SpaceSplitIsWhitespace) {
  std::vector<std::string> words;
  split_words(" a\tb,  c\r\nd", corpus_options(WordSplit::kSpace, 1), [&](std::string_view w) { words.emplace_back(w); });
  EXPECT_EQ(words, (std::vector<std::string>{"a", "b,", "c", "\n", "d"}));
}

TEST(Word2VecVocabulary, LongLinesAreCutIntoSentences) {
  std::string text;
  for (long i = 0; i < kMaxSentence + 5; ++i) text += "w ";
  Vocabulary vocab;
  Corpus corpus;
  build_vocabulary(text, "text", corpus_options(WordSplit::kSpace, 1), vocab, corpus);
  EXPECT_EQ(corpus.sentence_starts, (std::vector<int64_t>{0, kMaxSentence, kMaxSentence + 5}));
}

TEST(Word2VecVocabulary, ErrorsNameTheProblem) {
  Vocabulary vocab;
  Corpus corpus;
  EXPECT_EQ(testing::error_message([&] { build_vocabulary("a b a", "f.txt", corpus_options(WordSplit::kSpace, 3), vocab, corpus); }),
            "f.txt: no word is seen --min-count 3 times (the most frequent is seen 2 times): lower --min-count");
  EXPECT_EQ(testing::error_message([&] { build_vocabulary(" , ;\n", "f.txt", corpus_options(WordSplit::kIcu, 1), vocab, corpus); }),
            "f.txt: holds no words");
  EXPECT_EQ(testing::error_message([&] { build_vocabulary("a", "f.txt", corpus_options(WordSplit::kSpace, 0), vocab, corpus); }),
            "--min-count must be at least 1, got 0");
}

TEST(Word2VecVocabulary, SubsamplingFollowsWord2vecFormula) {
  Vocabulary vocab;
  vocab.words = {"the", "rare"};
  vocab.counts = {9990, 10};
  const auto keep = subsampling_thresholds(vocab, 1e-3);
  const double t = 1e-3 * 10000;
  const double p_the = (std::sqrt(9990 / t) + 1) * t / 9990;
  EXPECT_NEAR(static_cast<double>(keep[0]) / 4294967296.0, p_the, 1e-9);
  EXPECT_EQ(keep[1], uint64_t{1} << 32);  // (√1 + 1)·1 ≥ 1: always kept
  EXPECT_EQ(subsampling_thresholds(vocab, 0)[0], uint64_t{1} << 32);
}

TEST(Word2VecVocabulary, UnigramTableFollowsCountsToThePower) {
  Vocabulary vocab;
  vocab.words = {"a", "b", "c"};
  vocab.counts = {1000, 100, 10};
  const auto table = unigram_table(vocab);
  std::vector<double> share(3, 0.0);
  for (int32_t w : table) share[static_cast<size_t>(w)] += 1.0 / static_cast<double>(table.size());
  const double norm = std::pow(1000, 0.75) + std::pow(100, 0.75) + std::pow(10, 0.75);
  EXPECT_NEAR(share[0], std::pow(1000, 0.75) / norm, 1e-5);
  EXPECT_NEAR(share[1], std::pow(100, 0.75) / norm, 1e-5);
  EXPECT_NEAR(share[2], std::pow(10, 0.75) / norm, 1e-5);
}

// Ten topics; each sentence draws 6 words from its topic's 4 context words and puts one of the
// topic's two target words, a<i> or b<i>, in the middle. a<i> and b<i> thus have the same
// contexts and no other target does: each must be the other's nearest among the targets.
std::string synthetic_corpus(int sentences_per_topic) {
  Rng rng(7);
  std::string text;
  for (int s = 0; s < sentences_per_topic; ++s)
    for (int topic = 0; topic < 10; ++topic) {
      const std::string t = std::to_string(topic);
      for (int j = 0; j < 7; ++j) {
        if (j == 3)
          text += (rng.next_u64() % 2 ? "a" : "b") + t;
        else
          text += "ctx" + t + "_" + std::to_string(rng.next_u64() % 4);
        text += j == 6 ? "\n" : " ";
      }
    }
  return text;
}

// prefix + number, built by append: GCC 12 at -O3 warns (-Wrestrict, a false positive) on
// "a" + std::to_string(i).
std::string word(const char* prefix, int number) { return std::string(prefix).append(std::to_string(number)); }

void expect_pairs_are_neighbours(Word2VecModel model) {
  Vocabulary vocab;
  Corpus corpus;
  build_vocabulary(synthetic_corpus(200), "synthetic", corpus_options(WordSplit::kSpace, 1), vocab, corpus);
  Word2VecOptions o;
  o.model = model;
  o.dim = 24;
  o.window = 3;
  o.sample = 0;
  o.epochs = 5;
  o.threads = 1;
  const WordVectors v = train_word2vec(vocab, corpus, o);
  const VectorIndex index(KeyedVectors{vocab.words, v.dim, v.input});
  std::vector<int> targets;
  for (int i = 0; i < 10; ++i)
    for (const char* p : {"a", "b"}) targets.push_back(index.id_of(word(p, i)));
  for (int i = 0; i < 10; ++i) {
    const int a = index.id_of(word("a", i)), b = index.id_of(word("b", i));
    int best = -1;
    float best_cos = -2;
    for (int t : targets)
      if (t != a && index.cosine(a, t) > best_cos) best = t, best_cos = index.cosine(a, t);
    EXPECT_EQ(best, b) << "a" << i << "'s nearest target is " << vocab.words[static_cast<size_t>(best)];
    EXPECT_GT(index.cosine(a, b), 0.8f) << "a" << i << " and b" << i;
  }
}

TEST(Word2VecTraining, CbowFindsWordsWithTheSameContexts) { expect_pairs_are_neighbours(Word2VecModel::kCbow); }
TEST(Word2VecTraining, SkipgramFindsWordsWithTheSameContexts) {
  expect_pairs_are_neighbours(Word2VecModel::kSkipgram);
}

TEST(Word2VecTraining, OneThreadIsDeterministic) {
  Vocabulary vocab;
  Corpus corpus;
  build_vocabulary(synthetic_corpus(20), "synthetic", corpus_options(WordSplit::kSpace, 1), vocab, corpus);
  Word2VecOptions o;
  o.dim = 8;
  o.threads = 1;
  o.sample = 1e-2;
  const std::vector<float> first = train_word2vec(vocab, corpus, o).input;
  EXPECT_TRUE(testing::bitwise_equal(first, train_word2vec(vocab, corpus, o).input));
  o.seed = 2;
  EXPECT_FALSE(testing::bitwise_equal(first, train_word2vec(vocab, corpus, o).input));
}

TEST(Word2VecTraining, ProgressReachesTheEnd) {
  Vocabulary vocab;
  Corpus corpus;
  build_vocabulary(synthetic_corpus(20), "synthetic", corpus_options(WordSplit::kSpace, 1), vocab, corpus);
  Word2VecOptions o;
  o.dim = 8;
  o.threads = 2;
  o.epochs = 3;
  Word2VecProgress last;
  train_word2vec(vocab, corpus, o, [&](const Word2VecProgress& p) { last = p; });
  EXPECT_EQ(last.words_done, last.words_total);
  EXPECT_EQ(last.words_total, 3 * static_cast<int64_t>(corpus.ids.size()));
  // At the end the rate is alpha · max(1e-4, 1 - done / (total + 1)).
  EXPECT_NEAR(last.alpha, 0.025 * std::max(1e-4, 1.0 / static_cast<double>(last.words_total + 1)), 1e-12);
}

TEST(Word2VecTraining, OptionsOutOfRangeNameTheFlag) {
  auto message = [](void (*change)(Word2VecOptions&)) {
    Word2VecOptions o;
    change(o);
    return testing::error_message([&] { validate(o); });
  };
  EXPECT_EQ(message([](Word2VecOptions& o) { o.dim = 0; }), "--dim 0: must be between 1 and 100000");
  EXPECT_NE(message([](Word2VecOptions& o) { o.negative = -1; }).find("--negative -1:"), std::string::npos);
  EXPECT_NE(message([](Word2VecOptions& o) { o.window = 0; }).find("--window 0:"), std::string::npos);
  EXPECT_NE(message([](Word2VecOptions& o) { o.epochs = 0; }).find("--epochs 0:"), std::string::npos);
  EXPECT_NE(message([](Word2VecOptions& o) { o.alpha = 0; }).find("--alpha"), std::string::npos);
  EXPECT_NE(message([](Word2VecOptions& o) { o.threads = 0; }).find("--threads 0:"), std::string::npos);
  EXPECT_NE(message([](Word2VecOptions& o) { o.sample = -1; }).find("--sample"), std::string::npos);
}

KeyedVectors small_vectors() {
  return KeyedVectors{{"król", "królowa", "mężczyzna", "kobieta"}, 3,
                      {1.0f, 0.5f, -0.25f, 1e-8f, 3.5f, 2.0f, -1.0f, 0.125f, 7.0f, 123456.789f, -0.0f, 1e30f}};
}

TEST(Word2VecFiles, TextAndBinaryRoundTripExactly) {
  const testing::TempDir dir("w2v_files");
  const KeyedVectors v = small_vectors();
  write_word2vec_text(dir / "v.txt", v);
  write_word2vec_binary(dir / "v.bin", v);
  for (const char* name : {"v.txt", "v.bin"}) {
    const KeyedVectors r = read_word2vec(dir / name);
    EXPECT_EQ(r.words, v.words) << name;
    EXPECT_EQ(r.dim, 3) << name;
    EXPECT_TRUE(testing::bitwise_equal(r.data, v.data)) << name;
  }
}

TEST(Word2VecFiles, BadFilesGiveOneClearLine) {
  const testing::TempDir dir("w2v_bad_files");
  const KeyedVectors v = small_vectors();
  write_word2vec_text(dir / "v.txt", v);
  write_word2vec_binary(dir / "v.bin", v);
  const std::string txt = read_file(dir / "v.txt"), bin = read_file(dir / "v.bin");
  auto message = [&](const std::string& name, const std::string& bytes) {
    testing::write_file(dir / name, bytes);
    return testing::error_message([&] { read_word2vec(dir / name); });
  };
  const std::string p = (dir / "").string();
  // head + body[from..], by append (GCC 12 -O3's -Wrestrict false positive on "3" + s.substr(1)).
  auto rehead = [](std::string head, const std::string& body, size_t from) { return head.append(body, from); };
  EXPECT_EQ(message("cut.txt", txt.substr(0, txt.rfind("mężczyzna"))),
            p + "cut.txt: ends after 2 of the 4 words its first line announces (truncated?)");
  EXPECT_EQ(message("cut.bin", bin.substr(0, bin.size() - 7)),
            p + "cut.bin: ends inside word 4 of the 4 its first line announces (truncated?)");
  EXPECT_EQ(message("more.txt", rehead("3", txt, 1)), p + "more.txt: line 5: more words than the 3 its first line announces");
  EXPECT_EQ(message("more.bin", rehead("3", bin, 1)).substr(0, p.size() + 10), p + "more.bin: ");
  EXPECT_NE(message("more.bin", rehead("3", bin, 1)).find("header disagrees with the body"), std::string::npos);
  EXPECT_EQ(message("dim.txt", rehead("4 4", txt, 3)), p + "dim.txt: line 2: 'król' has 3 values, but the first line says dim 4");
  EXPECT_EQ(message("hdr.txt", "four 3\n"), p + "hdr.txt: the first line must be '<words> <dim>' (two positive integers), got 'four 3'");
  EXPECT_EQ(message("empty.txt", ""), p + "empty.txt: is empty, expected word vectors");
  EXPECT_EQ(message("nan.txt", "1 2\nx 1 zz\n"), p + "nan.txt: line 2: 'zz' is not a number");
  EXPECT_EQ(message("twice.txt", "2 1\nx 1\nx 2\n"), p + "twice.txt: word 2 'x' appears twice");
}

// Vectors where a : b :: c : d holds exactly for the "capital" pairs, and "Paris" (capitalised)
// has to be found through its lowercase form.
TEST(Word2VecAnalogy, EvaluatesLikeGensim) {
  const testing::TempDir dir("w2v_analogy");
  // capital(x) = x + e0; countries spread on e1..e3.
  KeyedVectors v{{"france", "Paris", "germany", "berlin", "poland", "warsaw", "noise"}, 4,
                 {0, 1, 0, 0,  1, 1, 0, 0,  0, 0, 1, 0,  1, 0, 1, 0,  0, 0, 0, 1,  1, 0, 0, 1,  0.1f, 0.2f, 0.3f, 0.4f}};
  const VectorIndex index(v);
  const auto best = index.most_similar({index.id_of("berlin"), index.id_of("france")}, {index.id_of("germany")}, 1);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(v.words[static_cast<size_t>(best[0].first)], "Paris");
  testing::write_file(dir / "q.txt",
                      ": capitals\nGermany Berlin France Paris\nfrance paris poland warsaw\nfrance paris spain madrid\n"
                      "broken line\n: other\npoland warsaw germany noise\n");
  const AnalogyReport r = evaluate_analogies(index, dir / "q.txt");
  ASSERT_EQ(r.sections.size(), 2u);
  EXPECT_EQ(r.sections[0].correct, 2);
  EXPECT_EQ(r.sections[0].skipped, 1);
  EXPECT_EQ(r.sections[1].incorrect, 1);
  EXPECT_EQ(r.total.correct, 2);
  EXPECT_EQ(r.total.incorrect, 1);
  EXPECT_EQ(r.malformed_lines, (std::vector<long>{5}));
  EXPECT_NEAR(r.coverage(), 0.75, 1e-12);
  testing::write_file(dir / "nosection.txt", "a b c d\n");
  EXPECT_EQ(testing::error_message([&] { evaluate_analogies(index, dir / "nosection.txt"); }),
            (dir / "nosection.txt").string() + ": line 1: a question before any ': section' line");
  // No question at all is an error, not a report of zeros; a byte-order mark is skipped.
  testing::write_file(dir / "empty.txt", "");
  testing::write_file(dir / "broken.txt", ": capitals\nfrance paris\n");
  for (const char* f : {"empty.txt", "broken.txt"})
    EXPECT_NE(testing::error_message([&] { evaluate_analogies(index, dir / f); }).find(": holds no analogy question"),
              std::string::npos)
        << f;
  testing::write_file(dir / "bom.txt", "\xEF\xBB\xBF: capitals\ngermany berlin france paris\n");
  EXPECT_EQ(evaluate_analogies(index, dir / "bom.txt").total.correct, 1);
}

}  // namespace
}  // namespace potop
