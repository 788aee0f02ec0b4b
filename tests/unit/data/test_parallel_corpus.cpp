// Reading sentence pairs (bad lines skipped with their line numbers, or refused; invalid UTF-8
// refused with the line), the deterministic split, and batches by length counted in tokens.
#include <gtest/gtest.h>

#include <optional>
#include <set>

#include "core/error.h"
#include "core/file_io.h"
#include "data/parallel_corpus.h"
#include "support/testing.h"
#include "tokenizer/tokenizer.h"

namespace potop {
namespace {

TEST(ParallelCorpus, ReadsPairsAndReportsBadLines) {
  const testing::TempDir dir("pairs");
  write_file_atomic(dir / "p.tsv", "Hello.\tCześć.\r\nno tab\n\n \tempty first\nA\tB\tC\nŻółw\tTurtle\n");
  const PairFile f = read_pairs(dir / "p.tsv");
  ASSERT_EQ(f.pairs.size(), 2u);
  EXPECT_EQ(f.pairs[0].second, "Cześć.");  // \r dropped
  EXPECT_EQ(f.pairs[1].first, "Żółw");
  EXPECT_EQ(f.pairs[1].line, 6);
  EXPECT_EQ(f.skipped, 3);
  ASSERT_EQ(f.notes.size(), 3u);
  EXPECT_EQ(f.notes[0], "line 2: no tab");
  EXPECT_EQ(f.notes[1], "line 4: empty first column");
  EXPECT_EQ(f.notes[2], "line 5: more than one tab");
  try {
    read_pairs(dir / "p.tsv", BadLines::kError);
    ADD_FAILURE() << "a bad line must be refused with BadLines::kError";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("p.tsv:2: no tab"), std::string::npos) << e.what();
  }
  write_file_atomic(dir / "u.tsv", "a\tb\nc\t\xc3\x28\n");
  try {
    read_pairs(dir / "u.tsv");
    ADD_FAILURE() << "invalid UTF-8 must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("u.tsv:2: invalid UTF-8"), std::string::npos) << e.what();
  }
}

TEST(ParallelCorpus, ByteOrderMarkIsNotPartOfTheFirstSentence) {
  const testing::TempDir dir("pairs");
  write_file_atomic(dir / "bom.tsv", "\xEF\xBB\xBFHello.\tCześć.\nno tab\nA\tB\n");
  const PairFile f = read_pairs(dir / "bom.tsv");
  ASSERT_EQ(f.pairs.size(), 2u);
  EXPECT_EQ(f.pairs[0].first, "Hello.");
  EXPECT_EQ(f.pairs[0].line, 1);
  EXPECT_EQ(describe_skipped("bom.tsv", f), "bom.tsv: 1 bad line skipped: line 2: no tab");
}

TEST(ParallelCorpus, SkippedLinesAreNamedThenCounted) {
  const testing::TempDir dir("pairs");
  write_file_atomic(dir / "p.tsv", "a\tb\n1\n2\n3\n4\n5\n6\n7\n");
  const PairFile f = read_pairs(dir / "p.tsv");
  EXPECT_EQ(describe_skipped("p.tsv", f), "p.tsv: 7 bad lines skipped: line 2: no tab, line 3: no tab, line 4: no tab, "
                                          "line 5: no tab, line 6: no tab, and 2 more");
}

TEST(ParallelCorpus, ColumnsAreTwoLanguagesAroundOneComma) {
  const std::optional<PairColumns> c = parse_pair_columns("en,pl");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->first, "en");
  EXPECT_EQ(c->second, "pl");
  EXPECT_FALSE(parse_pair_columns("en"));
  EXPECT_FALSE(parse_pair_columns(""));
  EXPECT_FALSE(parse_pair_columns("en,pl,de")) << "a third column";
  EXPECT_FALSE(parse_pair_columns("en,pl,")) << "a third, empty column";
  const std::optional<PairColumns> empty_second = parse_pair_columns("en,");
  ASSERT_TRUE(empty_second) << "an empty name is no language of the pairs, refused by whoever looks it up";
  EXPECT_EQ(empty_second->second, "");
}

TEST(ParallelCorpus, HeldOutIsAFractionWithACap) {
  EXPECT_EQ(held_out_count(1510, 0.05, 500), 76);     // a small file keeps most pairs for training
  EXPECT_EQ(held_out_count(40878, 0.05, 500), 500);   // a large one holds out the cap
  EXPECT_EQ(held_out_count(40878, 0.05, 1000), 1000);
  EXPECT_EQ(held_out_count(3, 0.05, 500), 1);          // at least one when the fraction is not 0
  EXPECT_EQ(held_out_count(100, 1.0, 20), 20);         // --dev-size 20 given alone: exactly 20
  EXPECT_EQ(held_out_count(100, 0.0, 20), 0);
  EXPECT_EQ(held_out_count(100, 0.5, 0), 0);
}

TEST(ParallelCorpus, SplitIsDeterministicAndDisjoint) {
  std::vector<SentencePair> pairs;
  for (int i = 0; i < 50; ++i) {
    std::string first = "s", second = "t";  // not "s" + …: GCC 12 -Wrestrict
    first += std::to_string(i), second += std::to_string(i);
    pairs.push_back({first, second, i + 1});
  }
  const PairSplit a = split_pairs(pairs, 5, 7), b = split_pairs(pairs, 5, 7);
  ASSERT_EQ(a.dev.size(), 5u);
  ASSERT_EQ(a.test.size(), 7u);
  ASSERT_EQ(a.train.size(), 38u);
  std::set<int> seen;
  for (const auto* part : {&a.train, &a.dev, &a.test})
    for (const SentencePair& p : *part) EXPECT_TRUE(seen.insert(p.line).second);
  for (size_t i = 0; i < a.dev.size(); ++i) EXPECT_EQ(a.dev[i].line, b.dev[i].line);
  EXPECT_THROW(split_pairs(pairs, 25, 25), Error);
}

TEST(ParallelCorpus, BatchesAreBoundedInTokensAndPadded) {
  std::vector<EncodedPair> examples;
  for (int i = 0; i < 40; ++i)
    examples.push_back({std::vector<int>(1 + i % 9, 5 + i % 3), std::vector<int>(1 + (i * 7) % 11, 9)});
  PairBatches batches(examples, 48, 1);
  long targets = 0;
  for (int k = 0; k < batches.size(); ++k) {
    Batch b;
    batches.fill_sorted(k, b);
    EXPECT_LE(b.B * std::max(b.S, b.T), 48);
    for (int r = 0; r < b.B; ++r) {
      EXPECT_EQ(b.tokens[r * b.T], kBosId);
      EXPECT_GE(b.source_lengths[r], 1);
      for (int s = b.source_lengths[r]; s < b.S; ++s) EXPECT_EQ(b.source[r * b.S + s], kPadId);
      for (int t = 0; t < b.T; ++t) targets += b.targets[r * b.T + t] >= 0;
    }
  }
  EXPECT_EQ(targets, batches.target_tokens());  // every example once, each target + </s> counted
  // Batch k of a run is a function of k: two samplers agree, and an epoch visits every batch.
  PairBatches again(examples, 48, 1);
  for (long k = 0; k < 2L * batches.size(); ++k) {
    Batch x, y;
    batches.fill(k, x);
    again.fill(k, y);
    ASSERT_EQ(x.B, y.B);
    ASSERT_EQ(x.S, y.S);
    for (int i = 0; i < x.B * x.S; ++i) ASSERT_EQ(x.source[i], y.source[i]);
  }
}

}  // namespace
}  // namespace potop
