// Rng::shuffle and Rng::shuffle_first: the draws and swaps of the Fisher-Yates loops the data
// samplers wrote inline before (so every order, and so every trained weight, stays the same), a
// permutation of what they were given, and nothing drawn for fewer than two items.
#include "core/rng.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <span>
#include <vector>

namespace potop {
namespace {

std::vector<int> iota_of(int n) {
  std::vector<int> v(size_t(n), 0);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(Rng, ShuffleDrawsAsTheLoopsItReplaced) {
  for (int n : {0, 1, 2, 3, 7, 100, 1001}) {
    for (uint64_t seed : {0ull, 1ull, 42ull}) {
      std::vector<int> from_back = iota_of(n), from_top = iota_of(n), shuffled = iota_of(n);
      Rng a(seed), b(seed), c(seed);
      for (int i = n - 1; i > 0; --i) std::swap(from_back[size_t(i)], from_back[a.below(uint64_t(i) + 1)]);
      for (size_t i = size_t(n); i > 1; --i) std::swap(from_top[i - 1], from_top[b.below(i)]);
      c.shuffle(shuffled);
      EXPECT_EQ(shuffled, from_back) << "n " << n << " seed " << seed;
      EXPECT_EQ(shuffled, from_top) << "n " << n << " seed " << seed;
      EXPECT_EQ(c.state(), a.state()) << "the same number of draws";
      EXPECT_EQ(c.state(), b.state());
      std::vector<int> sorted = shuffled;
      std::sort(sorted.begin(), sorted.end());
      EXPECT_EQ(sorted, iota_of(n)) << "a permutation";
    }
  }
}

TEST(Rng, ShuffleOfFewerThanTwoDrawsNothing) {
  Rng rng(5);
  const Rng::State before = rng.state();
  std::vector<int> none, one{9};
  rng.shuffle(none);
  rng.shuffle(one);
  EXPECT_EQ(rng.state(), before);
  EXPECT_EQ(one, std::vector<int>{9});
}

TEST(Rng, ShuffleChangesTheOrder) {
  // 1000 items come back in their order with probability 1/1000!.
  std::vector<int> v = iota_of(1000);
  Rng(3).shuffle(v);
  EXPECT_NE(v, iota_of(1000));
}

TEST(Rng, ShuffleFirstDrawsAsThePartialLoopItReplaced) {
  for (int n : {1, 2, 5, 64}) {
    for (int k = 0; k <= n; ++k) {
      std::vector<int> partial = iota_of(n), shuffled = iota_of(n);
      Rng a(11), b(11);
      for (int i = 0; i < k; ++i) std::swap(partial[size_t(i)], partial[size_t(i) + a.below(uint64_t(n - i))]);
      b.shuffle_first(shuffled, uint64_t(k));
      EXPECT_EQ(shuffled, partial) << "n " << n << " k " << k;
      EXPECT_EQ(b.state(), a.state()) << "n " << n << " k " << k << ": one draw per chosen item";
      std::vector<int> sorted = shuffled;
      std::sort(sorted.begin(), sorted.end());
      EXPECT_EQ(sorted, iota_of(n)) << "a permutation";
    }
  }
}

TEST(Rng, ShuffleTakesASpan) {
  std::vector<int> whole = iota_of(20), part = iota_of(20);
  Rng(8).shuffle(std::span<int>(part).subspan(5, 10));
  std::vector<int> expected = iota_of(10);
  for (int& x : expected) x += 5;
  Rng(8).shuffle(expected);
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), part.begin() + 5));
  EXPECT_TRUE(std::equal(part.begin(), part.begin() + 5, whole.begin()));
  EXPECT_TRUE(std::equal(part.begin() + 15, part.end(), whole.begin() + 15));
}

}  // namespace
}  // namespace potop
