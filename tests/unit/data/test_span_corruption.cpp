// T5's span corruption (data/span_corruption.h): the counts of its random_spans_noise_mask, the
// statistics of many draws, and that input and target together give back the tokens exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "data/span_corruption.h"
#include "tokenizer/tokenizer.h"

namespace potop {
namespace {

// Puts the spans of the target back into the sentinels' places of the input.
std::vector<int> reconstruct(const CorruptedChunk& c, int first_sentinel) {
  std::vector<std::vector<int>> spans;
  for (int id : c.target) {
    if (id >= first_sentinel) {
      EXPECT_EQ(id, first_sentinel + int(spans.size())) << "sentinels in order";
      spans.emplace_back();
    } else {
      EXPECT_FALSE(spans.empty()) << "the target starts with a sentinel";
      if (!spans.empty()) spans.back().push_back(id);
    }
  }
  std::vector<int> out;
  EXPECT_FALSE(c.input.empty());
  EXPECT_EQ(c.input.back(), kEosId);
  for (size_t i = 0; i + 1 < c.input.size(); ++i) {
    const int id = c.input[i];
    if (id < first_sentinel) {
      out.push_back(id);
      continue;
    }
    const size_t s = size_t(id - first_sentinel);
    EXPECT_LT(s, spans.size());
    if (s < spans.size()) out.insert(out.end(), spans[s].begin(), spans[s].end());
  }
  return out;
}

TEST(SpanCorruption, CountsAreT5s) {
  const SpanCorruption c;
  // T5: noise = round(L·0.15) (half to even), at least 1 and at most L-1; spans = max(1, round(noise/3)).
  Rng rng(1);
  for (int L : {1, 2, 5, 10, 20, 47, 100, 512}) {
    const std::vector<bool> mask = random_spans_noise_mask(L, c, rng);
    ASSERT_EQ(int(mask.size()), L);
    const int noise = int(std::count(mask.begin(), mask.end(), true));
    const int expected = L == 1 ? 1 : std::min(std::max(int(std::nearbyint(L * 0.15)), 1), L - 1);
    int spans = 0;
    for (int i = 0; i < L; ++i) spans += mask[size_t(i)] && (i == 0 || !mask[size_t(i) - 1]);
    if (L == 1) {
      EXPECT_EQ(noise, 0);  // the mask of two, cut to one: its non-noise first token
      continue;
    }
    EXPECT_EQ(noise, expected) << L;
    EXPECT_EQ(spans, std::max(1, int(std::nearbyint(expected / 3.0)))) << L;
    EXPECT_FALSE(mask[0]) << "starts with non-noise";
  }
  EXPECT_EQ(noise_spans(512, c), 26);  // round(77 / 3)
  EXPECT_EQ(noise_spans(10, c), 1);    // noise round(1.5) = 2, spans round(0.67) = 1
  EXPECT_EQ(max_sentinels(47, c), 2);  // noise 7, spans round(2.33) = 2
}

TEST(SpanCorruption, NoiseFractionAndMeanSpanOverManyDraws) {
  const SpanCorruption c;
  Rng rng(7);
  const int L = 200, draws = 4000;
  long noise = 0, spans = 0;
  std::vector<long> at(size_t(L), 0);  // how often each position is noise
  for (int d = 0; d < draws; ++d) {
    const std::vector<bool> mask = random_spans_noise_mask(L, c, rng);
    for (int i = 0; i < L; ++i) {
      noise += mask[size_t(i)], at[size_t(i)] += mask[size_t(i)];
      spans += mask[size_t(i)] && (i == 0 || !mask[size_t(i) - 1]);
    }
  }
  EXPECT_NEAR(double(noise) / (double(L) * draws), 0.15, 1e-9);  // exactly 30 of 200 each time
  EXPECT_NEAR(double(noise) / double(spans), 3.0, 1e-9);          // 30 in 10 spans each time
  // The spans are spread over the chunk, not piled up at one end: away from the ends every
  // position is noise about 15% of the time. T5's interleaving starts with non-noise and ends
  // with noise, so the first token is never noise and the last always is.
  for (int i = 20; i < L - 20; ++i) EXPECT_NEAR(double(at[size_t(i)]) / draws, 0.15, 0.04) << i;
  EXPECT_EQ(at[0], 0);
  EXPECT_EQ(at[size_t(L) - 1], draws);

  // Lengths: over draws, each span's length varies (a random segmentation), with mean 3 and a
  // longest span well above it.
  int longest = 0;
  for (int d = 0; d < 200; ++d) {
    const std::vector<bool> mask = random_spans_noise_mask(L, c, rng);
    int run = 0;
    for (bool m : mask) run = m ? run + 1 : 0, longest = std::max(longest, run);
  }
  EXPECT_GE(longest, 8);
}

TEST(SpanCorruption, OtherDensitiesAndSpans) {
  const SpanCorruption c{0.3, 5.0};
  Rng rng(3);
  long noise = 0, spans = 0;
  for (int d = 0; d < 500; ++d) {
    const std::vector<bool> mask = random_spans_noise_mask(100, c, rng);
    for (int i = 0; i < 100; ++i) noise += mask[size_t(i)], spans += mask[size_t(i)] && (i == 0 || !mask[size_t(i) - 1]);
  }
  EXPECT_EQ(noise, 500L * 30);
  EXPECT_EQ(spans, 500L * 6);
}

TEST(SpanCorruption, InputAndTargetReconstructTheTokens) {
  const SpanCorruption c;
  Rng rng(11);
  const int first_sentinel = 1000;
  // One token: T5 draws the mask of two and cuts it, so nothing is noise.
  const CorruptedChunk one = corrupt_spans(std::vector<int>{42}, c, first_sentinel, rng);
  EXPECT_EQ(one.input, (std::vector<int>{42, kEosId}));
  EXPECT_TRUE(one.target.empty());
  for (int L = 2; L <= 120; ++L) {
    std::vector<int> tokens(static_cast<size_t>(L));
    for (int& t : tokens) t = 4 + int(rng.below(900));
    for (int d = 0; d < 5; ++d) {
      const CorruptedChunk x = corrupt_spans(tokens, c, first_sentinel, rng);
      EXPECT_EQ(reconstruct(x, first_sentinel), tokens) << L;
      const int s = int(std::count_if(x.target.begin(), x.target.end(), [](int id) { return id >= first_sentinel; }));
      EXPECT_EQ(s, noise_spans(L, c)) << L;
      EXPECT_LE(s, max_sentinels(120, c));
      EXPECT_LE(x.input.size(), tokens.size() + 1);
    }
  }
}

TEST(SpanCorruption, TheWorkedExample) {
  // The paper's figure: "Thank you <X> me to your party <Y> week ." / "<X> for inviting <Y> last <Z>".
  const std::vector<int> tokens{10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  std::vector<bool> mask(tokens.size(), false);
  mask[2] = mask[3] = mask[8] = true;
  const CorruptedChunk x = apply_noise_mask(tokens, mask, 100);
  EXPECT_EQ(x.input, (std::vector<int>{10, 11, 100, 14, 15, 16, 17, 101, 19, 20, kEosId}));
  EXPECT_EQ(x.target, (std::vector<int>{100, 12, 13, 101, 18}));
}

TEST(SpanCorruption, PackChunks) {
  const std::vector<std::vector<int>> lines{{1, 2, 3}, {}, {4, 5}, {6, 7, 8, 9, 10, 11, 12}, {13}};
  const std::vector<std::vector<int>> chunks = pack_chunks(lines, 5);
  EXPECT_EQ(chunks, (std::vector<std::vector<int>>{{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}, {11, 12, 13}}));
}

}  // namespace
}  // namespace potop
