// The sampler's filters and penalties: min-p and the llama.cpp-style repeat and presence penalties.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "core/error.h"
#include "generate/sampler.h"

namespace potop {
namespace {

TEST(Sampler, MinPDropsTheUnlikely) {
  // Probabilities ∝ e^logit: 1, e^-1 ≈ 0.37, e^-3 ≈ 0.05 of the likeliest.
  const std::vector<float> logits = {0.0f, -1.0f, -3.0f};
  SamplingOptions o;
  o.temperature = 1.0f, o.min_p = 0.2f;
  Sampler s(o, 3);
  std::set<int> seen;
  for (int i = 0; i < 400; ++i) seen.insert(s.sample(logits.data(), 3));
  EXPECT_EQ(seen, (std::set<int>{0, 1}));
}

TEST(Sampler, PenaltiesMoveGreedyAwayFromRecentTokens) {
  const std::vector<float> logits = {2.0f, 1.5f, -1.0f};
  SamplingOptions greedy;
  greedy.temperature = 0;
  EXPECT_EQ(Sampler(greedy, 1).sample(logits.data(), 3, std::vector<int>{0, 0}), 0);  // no penalty
  SamplingOptions repeat = greedy;
  repeat.repeat_penalty = 1.5f;  // 2.0 / 1.5 < 1.5
  EXPECT_EQ(Sampler(repeat, 1).sample(logits.data(), 3, std::vector<int>{0}), 1);
  SamplingOptions presence = greedy;
  presence.presence_penalty = 0.6f;  // once per distinct token, however often it occurred
  EXPECT_EQ(Sampler(presence, 1).sample(logits.data(), 3, std::vector<int>{0, 0, 0}), 1);
  presence.presence_penalty = 0.4f;
  EXPECT_EQ(Sampler(presence, 1).sample(logits.data(), 3, std::vector<int>{0, 0, 0}), 0);
  // Only the last repeat_last_n tokens count.
  repeat.repeat_last_n = 1;
  EXPECT_EQ(Sampler(repeat, 1).sample(logits.data(), 3, std::vector<int>{0, 2}), 0);
  // A negative logit is multiplied, so it gets less likely too.
  const std::vector<float> negative = {-1.0f, -1.2f};
  repeat.repeat_last_n = 64;
  EXPECT_EQ(Sampler(repeat, 1).sample(negative.data(), 2, std::vector<int>{0}), 1);
}

TEST(Sampler, RefusesImpossibleSettings) {
  SamplingOptions o;
  o.min_p = 1.0f;
  EXPECT_THROW(validate(o, 10), Error);
  o = {};
  o.repeat_penalty = 0.0f;
  EXPECT_THROW(validate(o, 10), Error);
  o = {};
  o.repeat_last_n = -1;
  EXPECT_THROW(validate(o, 10), Error);
}

}  // namespace
}  // namespace potop
