// BERT's masked-LM corruption (models/bert/masking.h) and the rows it is applied to
// (MaskedRows, models/bert/masked_batches.h): how many tokens are chosen, which ones, what they
// become (80% [MASK] / 10% a random ordinary token / 10% kept, within statistical bounds over
// many draws), that [CLS], [SEP] and padding are never chosen, that a seed fixes everything, and
// the layout of short rows.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/rng.h"
#include "models/bert/masked_batches.h"
#include "models/bert/masking.h"
#include "tokenizer/tokenizer.h"

namespace potop {
namespace {

// A vocabulary of the 4 specials, 50 ordinary tokens and [MASK] (id 54).
constexpr int kOrdinaryEnd = kSpecialCount + 50, kMask = kOrdinaryEnd;
const MaskingRule kRule{0.15, kMask, kSpecialCount, kOrdinaryEnd};

std::vector<int> ordinary_tokens(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<int> v(n);
  for (int& t : v) t = kSpecialCount + static_cast<int>(rng.below(kOrdinaryEnd - kSpecialCount));
  return v;
}

// |observed - expected| within z standard deviations of a binomial proportion over n trials.
::testing::AssertionResult proportion_near(const std::string& what, long hits, long n, double p, double z = 5) {
  const double observed = double(hits) / n, sigma = std::sqrt(p * (1 - p) / n);
  if (std::fabs(observed - p) <= z * sigma) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": " << observed << " of " << n << ", expected " << p << " ± "
                                       << z * sigma;
}

TEST(Masking, MaskedCountIsTheRoundedFractionAtLeastOne) {
  EXPECT_EQ(masked_count(kRule, 0), 0);
  EXPECT_EQ(masked_count(kRule, -3), 0);
  EXPECT_EQ(masked_count(kRule, 1), 1);    // 0.15 rounds to 0: at least one
  EXPECT_EQ(masked_count(kRule, 3), 1);    // 0.45
  EXPECT_EQ(masked_count(kRule, 10), 2);   // 1.5 rounds away from zero
  EXPECT_EQ(masked_count(kRule, 30), 5);   // 4.5
  EXPECT_EQ(masked_count(kRule, 126), 19); // 18.9: BERT's 15% of a 128-token row less [CLS], [SEP]
  EXPECT_EQ(masked_count(kRule, 1000), 150);
  MaskingRule most = kRule;
  most.fraction = 0.99;
  EXPECT_EQ(masked_count(most, 10), 10);
  EXPECT_EQ(masked_count(most, 1000), 990);
  most.fraction = 1e-9;
  EXPECT_EQ(masked_count(most, 1000), 1);
}

TEST(Masking, ChoosesExactlyTheCountInsideTheSpanAndRecordsTheOriginals) {
  for (int n : {1, 2, 7, 40}) {
    const int first = 3, T = first + n + 2;
    const std::vector<int> original = ordinary_tokens(T, 5 + n);
    for (uint64_t seed = 0; seed < 50; ++seed) {
      std::vector<int> tokens = original, targets(size_t(T), -1);
      Rng rng(seed);
      mask_tokens(tokens, targets, first, first + n, kRule, rng);
      int chosen = 0;
      for (int t = 0; t < T; ++t) {
        const bool inside = t >= first && t < first + n;
        if (targets[t] >= 0) {
          ++chosen;
          ASSERT_TRUE(inside) << "position " << t << " outside [" << first << ", " << first + n << ")";
          ASSERT_EQ(targets[t], original[t]) << "the target is the original token";
        } else {
          ASSERT_EQ(tokens[t], original[t]) << "a position not chosen changed: " << t;
        }
      }
      ASSERT_EQ(chosen, masked_count(kRule, n)) << "n " << n << " seed " << seed;
    }
  }
}

// Over many draws: 80% of the chosen tokens become [MASK], 10% a uniformly drawn ordinary token
// (which is the original itself 1 time in 50), 10% stay; every position of the span is chosen
// equally often, and every ordinary token is drawn as a replacement.
TEST(Masking, EightyTenTenOverManyDraws) {
  const int n = 126, rows = 3000, N = kOrdinaryEnd - kSpecialCount;
  std::vector<long> by_position(size_t(n), 0), replacement(size_t(kOrdinaryEnd + 1), 0);
  long chosen = 0, masks = 0, replaced = 0, same = 0;
  Rng rng(2024);
  for (int r = 0; r < rows; ++r) {
    const std::vector<int> original = ordinary_tokens(n, 100 + r);
    std::vector<int> tokens = original, targets(size_t(n), -1);
    mask_tokens(tokens, targets, 0, n, kRule, rng);
    for (int t = 0; t < n; ++t) {
      if (targets[t] < 0) continue;
      ++chosen, ++by_position[size_t(t)];
      if (tokens[t] == kMask) {
        ++masks;
      } else if (tokens[t] == original[t]) {
        ++same;
      } else {
        ++replaced;
        ASSERT_GE(tokens[t], kSpecialCount) << "a special token as a random replacement";
        ASSERT_LT(tokens[t], kOrdinaryEnd) << "[MASK] or beyond as a random replacement";
        ++replacement[size_t(tokens[t])];
      }
    }
  }
  ASSERT_EQ(chosen, long(rows) * masked_count(kRule, n));
  EXPECT_TRUE(proportion_near("[MASK]", masks, chosen, 0.8));
  EXPECT_TRUE(proportion_near("random, another token", replaced, chosen, 0.1 * (N - 1) / N));
  EXPECT_TRUE(proportion_near("unchanged (kept, or drawn itself)", same, chosen, 0.1 + 0.1 / N));
  const double per_position = double(masked_count(kRule, n)) / n;
  for (int t = 0; t < n; ++t)
    EXPECT_TRUE(proportion_near("position " + std::to_string(t), by_position[size_t(t)], rows, per_position));
  for (int v = kSpecialCount; v < kOrdinaryEnd; ++v)
    EXPECT_TRUE(proportion_near("replacement " + std::to_string(v), replacement[size_t(v)], replaced, 1.0 / N, 6));
}

TEST(Masking, ASeedFixesTheMask) {
  const std::vector<int> original = ordinary_tokens(60, 1);
  auto draw = [&](uint64_t seed) {
    std::vector<int> tokens = original, targets(original.size(), -1);
    Rng rng(seed);
    mask_tokens(tokens, targets, 0, 60, kRule, rng);
    tokens.insert(tokens.end(), targets.begin(), targets.end());
    return tokens;
  };
  EXPECT_EQ(draw(9), draw(9));
  EXPECT_NE(draw(9), draw(10));
}

TEST(Masking, BadSpansAndRulesAreContractViolations) {
  std::vector<int> tokens = ordinary_tokens(8, 1), targets(8, -1);
  Rng rng(1);
  EXPECT_DEATH(mask_tokens(tokens, targets, 5, 3, kRule, rng), "span");
  EXPECT_DEATH(mask_tokens(tokens, targets, 0, 9, kRule, rng), "span");
  MaskingRule none = kRule;
  none.vocab_end = none.first_random;
  EXPECT_DEATH(mask_tokens(tokens, targets, 0, 8, none, rng), "ordinary token");
}

// [CLS] window [SEP] <pad>...: lengths are the windows' plus 2, [CLS], [SEP] and the padding are
// never chosen and stay as they are, each row gets masked_count of its window, and the targets
// are the window's tokens.
TEST(MaskedRows, ShortRowsArePaddedAndOnlyTheWindowIsMasked) {
  const int B = 4, T = 12, W = T - 2;
  const std::vector<int> windows = ordinary_tokens(size_t(B) * W, 3), lengths{W, 1, 4, 7};
  MaskedRows rows;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Rng rng(seed);
    const Batch batch = rows.fill(windows.data(), lengths.data(), B, T, kRule, rng);
    ASSERT_EQ(batch.B, B);
    ASSERT_EQ(batch.T, T);
    ASSERT_EQ(batch.tokens, rows.tokens.data());
    ASSERT_EQ(batch.targets, rows.targets.data());
    ASSERT_EQ(batch.lengths, rows.lengths.data());
    for (int b = 0; b < B; ++b) {
      const int n = lengths[b];
      ASSERT_EQ(batch.lengths[b], n + 2);
      const int* row = batch.tokens + b * T;
      const int* target = batch.targets + b * T;
      ASSERT_EQ(row[0], kBosId) << "[CLS]";
      ASSERT_EQ(target[0], -1);
      ASSERT_EQ(row[n + 1], kEosId) << "[SEP]";
      ASSERT_EQ(target[n + 1], -1);
      for (int t = n + 2; t < T; ++t) {
        ASSERT_EQ(row[t], kPadId) << "row " << b << " position " << t;
        ASSERT_EQ(target[t], -1);
      }
      int chosen = 0;
      for (int t = 1; t <= n; ++t) {
        const int original = windows[size_t(b) * W + t - 1];
        if (target[t] < 0) {
          ASSERT_EQ(row[t], original);
          continue;
        }
        ++chosen;
        ASSERT_EQ(target[t], original);
        ASSERT_GE(target[t], kSpecialCount) << "a special token chosen";
        ASSERT_TRUE(row[t] == kMask || (row[t] >= kSpecialCount && row[t] < kOrdinaryEnd)) << row[t];
      }
      ASSERT_EQ(chosen, masked_count(kRule, n)) << "row " << b;
    }
  }
  // Without lengths every window is full: rows of T real tokens.
  Rng rng(1);
  const Batch full = rows.fill(windows.data(), nullptr, B, T, kRule, rng);
  for (int b = 0; b < B; ++b) {
    EXPECT_EQ(full.lengths[b], T);
    EXPECT_EQ(full.tokens[b * T + T - 1], kEosId);
  }
  // The same generator state gives the same batch; a longer window than T - 2 is a bug.
  Rng again(1);
  const std::vector<int> first(rows.tokens);
  rows.fill(windows.data(), nullptr, B, T, kRule, again);
  EXPECT_EQ(rows.tokens, first);
  const std::vector<int> too_long{W + 1, 1, 1, 1};
  EXPECT_DEATH(rows.fill(windows.data(), too_long.data(), B, T, kRule, again), "longer than T - 2");
}

}  // namespace
}  // namespace potop
