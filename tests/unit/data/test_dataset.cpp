#include "data/dataset.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <string>

#include "core/error.h"

namespace potop {
namespace {

std::vector<int> iota_tokens(size_t n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

std::string split_error(size_t n, double frac, int block) {
  try {
    split_tokens(iota_tokens(n), frac, block, "data.txt");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SplitTokens, ValidationIsTheTail) {
  const auto tokens = iota_tokens(1000);
  const TokenSplit s = split_tokens(tokens, 0.1, 16, "data.txt");
  ASSERT_EQ(s.train.size(), 900u);
  ASSERT_EQ(s.val.size(), 100u);
  EXPECT_EQ(s.train.front(), 0);
  EXPECT_EQ(s.train.back(), 899);
  EXPECT_EQ(s.val.front(), 900);
  EXPECT_EQ(s.val.back(), 999);
  const TokenSplit r = split_tokens(iota_tokens(1005), 0.25, 16, "d");
  EXPECT_EQ(r.val.size(), 251u);  // floor(1005 * 0.25)
  EXPECT_EQ(r.train.size(), 754u);
}

TEST(SplitTokens, ZeroFractionMeansNoValidation) {
  const TokenSplit s = split_tokens(iota_tokens(50), 0.0, 49, "d");
  EXPECT_EQ(s.train.size(), 50u);
  EXPECT_TRUE(s.val.empty());
}

TEST(SplitTokens, ExactMinimumSizesAreAccepted) {
  // train 17 = 16 + 1 and val 17.
  const TokenSplit s = split_tokens(iota_tokens(34), 0.5, 16, "d");
  EXPECT_EQ(s.train.size(), 17u);
  EXPECT_EQ(s.val.size(), 17u);
}

TEST(SplitTokens, Errors) {
  EXPECT_EQ(split_error(1000, 1.0, 16), "--val-fraction must be in [0, 1), got 1");
  EXPECT_EQ(split_error(1000, -0.1, 16), "--val-fraction must be in [0, 1), got -0.1");
  EXPECT_NE(split_error(1000, std::nan(""), 16).find("--val-fraction"), std::string::npos);
  EXPECT_NE(split_error(1000, 0.1, 0).find("--block-size"), std::string::npos);
  const std::string train = split_error(100, 0.1, 128);
  EXPECT_EQ(train.rfind("data.txt: the training split has 90 tokens (of 100)", 0), 0u) << train;
  EXPECT_NE(train.find("--block-size + 1 = 129"), std::string::npos) << train;
  const std::string val = split_error(1000, 0.01, 16);
  EXPECT_EQ(val.rfind("data.txt: the validation split has 10 tokens (--val-fraction 0.01 of 1000)", 0), 0u) << val;
  EXPECT_NE(val.find("--block-size + 1 = 17"), std::string::npos) << val;
  EXPECT_EQ(split_error(16, 0.0, 16).rfind("data.txt: the training split has 16 tokens", 0), 0u);
  EXPECT_EQ(split_error(0, 0.0, 1).rfind("data.txt: the training split has 0 tokens", 0), 0u);
}

TEST(BatchSampler, YIsXShiftedByOne) {
  const auto tokens = iota_tokens(100);
  const int B = 4, T = 8;
  BatchSampler sampler(tokens, B, T, 42);
  std::vector<int> x(B * T), y(B * T);
  for (int step = 0; step < 50; ++step) {
    sampler.next(x.data(), y.data());
    for (int b = 0; b < B; ++b) {
      const int s = x[b * T];
      ASSERT_GE(s, 0);
      ASSERT_LE(s, 100 - T - 1);
      for (int t = 0; t < T; ++t) {
        ASSERT_EQ(x[b * T + t], s + t);
        ASSERT_EQ(y[b * T + t], s + t + 1);
      }
    }
  }
}

TEST(BatchSampler, ReachesEveryStartIncludingBothEnds) {
  const auto tokens = iota_tokens(12);
  const int T = 4;  // starts 0..7
  BatchSampler sampler(tokens, 1, T, 3);
  std::vector<int> x(T), y(T), seen(12, 0);
  for (int i = 0; i < 400; ++i) {
    sampler.next(x.data(), y.data());
    seen[x[0]]++;
    ASSERT_EQ(y[T - 1], x[0] + T);  // last target can be the last token
  }
  for (int s = 0; s <= 7; ++s) EXPECT_GT(seen[s], 0) << s;
  for (int s = 8; s < 12; ++s) EXPECT_EQ(seen[s], 0) << s;
  // The smallest possible data: exactly one window.
  BatchSampler one(tokens, 2, 11, 5);
  std::vector<int> x1(22), y1(22);
  one.next(x1.data(), y1.data());
  EXPECT_EQ(x1[11], 0);
  EXPECT_EQ(y1[21], 11);
}

TEST(BatchSampler, DeterministicForASeed) {
  const auto tokens = iota_tokens(1000);
  BatchSampler a(tokens, 3, 5, 7), b(tokens, 3, 5, 7), c(tokens, 3, 5, 8);
  std::vector<int> xa(15), ya(15), xb(15), yb(15), xc(15), yc(15);
  bool differs = false;
  for (int i = 0; i < 20; ++i) {
    a.next(xa.data(), ya.data());
    b.next(xb.data(), yb.data());
    c.next(xc.data(), yc.data());
    ASSERT_EQ(xa, xb);
    ASSERT_EQ(ya, yb);
    differs |= xa != xc;
  }
  EXPECT_TRUE(differs);
}

TEST(BatchSampler, StateRestoreContinuesTheSameSequence) {
  const auto tokens = iota_tokens(500);
  BatchSampler a(tokens, 2, 6, 11);
  std::vector<int> x(12), y(12);
  for (int i = 0; i < 5; ++i) a.next(x.data(), y.data());
  const Rng::State saved = a.state();
  std::vector<std::vector<int>> expected;
  for (int i = 0; i < 5; ++i) {
    a.next(x.data(), y.data());
    expected.push_back(x);
  }
  BatchSampler b(tokens, 2, 6, 999);  // seed does not matter once the state is restored
  b.set_state(saved);
  for (int i = 0; i < 5; ++i) {
    b.next(x.data(), y.data());
    EXPECT_EQ(x, expected[i]) << i;
  }
}

// Runs a full evaluation pass and checks that every target (token 1..n-1) is scored exactly
// once, with y = the next token of x wherever it is scored.
void check_eval_coverage(size_t n, int T, int stride, int B) {
  SCOPED_TRACE("n=" + std::to_string(n) + " T=" + std::to_string(T) + " stride=" + std::to_string(stride));
  const auto tokens = iota_tokens(n);
  const auto windows = eval_windows(n, T, stride);
  std::vector<int> scored(n, 0);
  std::vector<int> x(B * T), y(B * T);
  size_t total = 0;
  for (size_t first = 0; first < windows.size(); first += B) {
    const int count = fill_eval_batch(x.data(), y.data(), tokens, windows, first, B, T);
    int counted = 0;
    for (int i = 0; i < B * T; ++i) {
      if (y[i] < 0) continue;
      ASSERT_EQ(y[i], x[i] + 1);
      ASSERT_LT(static_cast<size_t>(y[i]), n);
      scored[y[i]]++;
      counted++;
    }
    ASSERT_EQ(count, counted);
    total += count;
  }
  EXPECT_EQ(total, n < 2 ? 0 : n - 1);
  if (n >= 1) {
    EXPECT_EQ(scored[0], 0);
  }
  for (size_t i = 1; i < n; ++i) ASSERT_EQ(scored[i], 1) << "token " << i;
  for (size_t w = 0; w < windows.size(); ++w) {
    ASSERT_LE(windows[w].length, T);
    if (w > 0 || n > static_cast<size_t>(T)) {
      ASSERT_EQ(windows[w].length, T);  // only a text shorter than one window gets a short one
    }
  }
}

TEST(EvalWindows, EveryTokenPredictedExactlyOnce) {
  for (size_t n : {0, 1, 2, 3, 5, 8, 9, 10, 17, 64, 65, 100, 257})
    for (int T : {1, 3, 8, 16})
      for (int stride : {0, 1, T / 2 + 1, T}) check_eval_coverage(n, T, stride, 3);
}

TEST(EvalWindows, NonOverlappingLayout) {
  // 21 tokens, T = 8: targets 0..19 -> windows [0,8), [8,16) and a last one moved back to
  // end at the text's end: start 12, scoring its last 4 positions.
  const auto w = eval_windows(21, 8);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].start, 0u);
  EXPECT_EQ(w[0].first_scored, 0);
  EXPECT_EQ(w[1].start, 8u);
  EXPECT_EQ(w[1].first_scored, 0);
  EXPECT_EQ(w[2].start, 12u);
  EXPECT_EQ(w[2].first_scored, 4);
  // Fewer tokens than one window: a single short window.
  const auto s = eval_windows(5, 8);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].length, 4);
}

TEST(EvalWindows, PadsShortWindowsAndRowsPastTheEnd) {
  const auto tokens = iota_tokens(4);
  const auto w = eval_windows(4, 6);
  std::vector<int> x(2 * 6, 99), y(2 * 6, 99);
  EXPECT_EQ(fill_eval_batch(x.data(), y.data(), tokens, w, 0, 2, 6), 3);
  EXPECT_EQ(x, (std::vector<int>{0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(y, (std::vector<int>{1, 2, 3, -1, -1, -1, -1, -1, -1, -1, -1, -1}));
}

TEST(EvalWindows, RejectsBadStride) {
  EXPECT_THROW(eval_windows(100, 8, 9), Error);
  try {
    eval_windows(100, 8, 9);
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--stride must be between 1 and the block size 8 (or 0 for the block size), got 9");
  }
  EXPECT_THROW(eval_windows(100, 8, -1), Error);
  EXPECT_THROW(eval_windows(100, 0), Error);
  EXPECT_TRUE(eval_windows(1, 8).empty());
}

}  // namespace
}  // namespace potop
