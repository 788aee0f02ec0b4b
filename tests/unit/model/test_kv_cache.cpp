// Generation with a KV cache must give exactly what a full forward pass over the whole
// context gives, for every variant of the model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "generate/generator.h"
#include "models/gpt/gpt.h"
#include "support/testing.h"

namespace potop {
namespace {

GPTConfig small_config(NormPlacement norm, PositionEncoding positions) {
  GPTConfig c;
  c.vocab_size = 13, c.block_size = 12, c.n_layer = 2, c.n_head = 3, c.n_embd = 18;
  c.norm = norm, c.positions = positions;
  return c;
}

// A block of token ids drawn from `seed`.
std::vector<int> block_of_tokens(const GPTConfig& c, uint64_t seed) {
  Rng rng(seed);
  std::vector<int> tokens(c.block_size);
  for (int& t : tokens) t = static_cast<int>(rng.below(c.vocab_size));
  return tokens;
}

class KVCacheTest : public ::testing::TestWithParam<std::pair<NormPlacement, PositionEncoding>> {};

TEST_P(KVCacheTest, CachedLogitsMatchFullForward) {
  const GPTConfig c = small_config(GetParam().first, GetParam().second);
  GPT model(c);
  model.init_weights(3);
  const std::vector<int> tokens = block_of_tokens(c, 5);

  // Reference: full forward over the first n tokens, last row, for each n.
  std::vector<std::vector<float>> expected;
  for (int n = 1; n <= c.block_size; ++n) {
    model.forward(Batch{{1, n}, tokens.data(), nullptr}, Pass{});
    expected.emplace_back(model.logits() + size_t(n - 1) * c.vocab_size, model.logits() + size_t(n) * c.vocab_size);
  }
  // Cached: a 4-token prompt, then one token at a time.
  KVCache cache = model.new_cache();
  model.forward(tokens.data(), 4, cache, LogitRows::kAll);
  for (int n = 4; n <= c.block_size; ++n) {
    if (n > 4) model.forward(tokens.data() + n - 1, 1, cache, LogitRows::kAll);
    const float* got = model.logits() + size_t(model.last_rows() - 1) * c.vocab_size;
    for (int v = 0; v < c.vocab_size; ++v) ASSERT_NEAR(got[v], expected[n - 1][v], 1e-4) << "n=" << n << " v=" << v;
  }
  EXPECT_EQ(cache.length, c.block_size);
}

// Reading a prompt for generation, the head gives the last position's logits only: the same row
// (one GEMM row instead of T: equal to float rounding).
TEST_P(KVCacheTest, LastRowLogitsAreTheLastRowOfAll) {
  const GPTConfig c = small_config(GetParam().first, GetParam().second);
  GPT model(c);
  model.init_weights(6);
  const std::vector<int> tokens = {3, 1, 4, 1, 5, 9, 2};
  KVCache all = model.new_cache(), last = model.new_cache();
  model.forward(tokens.data(), 5, all, LogitRows::kAll);
  ASSERT_EQ(model.last_rows(), 5);
  const std::vector<float> want(model.logits() + size_t(4) * c.vocab_size, model.logits() + size_t(5) * c.vocab_size);
  model.forward(tokens.data(), 5, last, LogitRows::kLast);
  for (int v = 0; v < c.vocab_size; ++v) ASSERT_NEAR(model.logits()[v], want[v], 1e-5) << "v=" << v;
  EXPECT_EQ(last.length, 5);
  // The caches hold the same keys and values: the next token's logits agree too.
  model.forward(tokens.data() + 5, 2, all, LogitRows::kAll);
  const std::vector<float> next(model.logits() + c.vocab_size, model.logits() + size_t(2) * c.vocab_size);
  model.forward(tokens.data() + 5, 2, last, LogitRows::kLast);
  for (int v = 0; v < c.vocab_size; ++v) ASSERT_NEAR(model.logits()[v], next[v], 1e-5) << "v=" << v;
}

// A cache of type f16 (sample --kv-cache f16) holds each key and value rounded to a half: half
// the bytes, and logits that differ from the full forward pass by that rounding only.
TEST_P(KVCacheTest, HalfCacheGivesTheFullForwardToHalfPrecision) {
  const GPTConfig c = small_config(GetParam().first, GetParam().second);
  GPT model(c);
  model.init_weights(3);
  const std::vector<int> tokens = block_of_tokens(c, 5);
  model.forward(Batch{{1, c.block_size}, tokens.data(), nullptr}, Pass{});
  const std::vector<float> full(model.logits(), model.logits() + size_t(c.block_size) * c.vocab_size);

  KVCache exact = model.new_cache();
  model.set_kv_cache_type(KVCacheType::kF16);
  KVCache half = model.new_cache();
  EXPECT_EQ(half.type, KVCacheType::kF16);
  EXPECT_EQ(half.k.size() * 2, exact.k.size());
  EXPECT_EQ(half.v.size() * 2, exact.v.size());
  double worst = 0.0;
  model.forward(tokens.data(), 5, half, LogitRows::kAll);  // a prompt, then one token at a time
  for (int n = 5; n <= c.block_size; ++n) {
    if (n > 5) model.forward(tokens.data() + n - 1, 1, half, LogitRows::kAll);
    const float* got = model.logits() + size_t(model.last_rows() - 1) * c.vocab_size;
    for (int v = 0; v < c.vocab_size; ++v)
      worst = std::max(worst, std::fabs(double(got[v]) - full[size_t(n - 1) * c.vocab_size + v]));
  }
  EXPECT_LT(worst, 2e-3);
  EXPECT_GT(worst, 0.0);  // the keys and values were rounded (an f32 cache agrees to ~1e-6)
}

INSTANTIATE_TEST_SUITE_P(Variants, KVCacheTest,
                         ::testing::Values(std::pair{NormPlacement::kPre, PositionEncoding::kLearned},
                                           std::pair{NormPlacement::kPost, PositionEncoding::kSinusoidal}));

TEST(Generate, GreedyIsDeterministicAndRunsPastTheBlockSize) {
  GPTConfig c = small_config(NormPlacement::kPre, PositionEncoding::kLearned);
  GPT model(c);
  model.init_weights(9);
  SamplingOptions greedy;
  greedy.temperature = 0;
  const std::vector<int> prompt = {1, 2, 3};
  // 40 tokens: the context passes block_size (12) several times.
  const auto a = generate(model, prompt, 40, greedy, 1);
  const auto b = generate(model, prompt, 40, greedy, 2);
  ASSERT_EQ(a.size(), 40u);
  EXPECT_EQ(a, b) << "temperature 0 must not depend on the seed";
  // Until the context first fills, greedy generation equals argmax of a full forward pass.
  std::vector<int> context = prompt;
  for (int i = 0; i + int(prompt.size()) < c.block_size; ++i) {
    model.forward(Batch{{1, int(context.size())}, context.data(), nullptr}, Pass{});
    const float* last = model.logits() + size_t(context.size() - 1) * c.vocab_size;
    const int argmax = int(std::max_element(last, last + c.vocab_size) - last);
    ASSERT_EQ(a[i], argmax) << "token " << i;
    context.push_back(a[i]);
  }
}

// When the context reaches block_size, generation rebuilds the cache from the last block_size / 2
// tokens. Every token's logits must be those of a fresh forward pass over exactly the window the
// cache holds then — before, at and after each rebuild.
TEST_P(KVCacheTest, RebuiltCacheMatchesAFreshForward) {
  const GPTConfig c = small_config(GetParam().first, GetParam().second);
  GPT model(c);
  model.init_weights(4);
  SamplingOptions greedy;
  greedy.temperature = 0;
  const std::vector<int> prompt = {1, 5, 2};
  const int n = 3 * c.block_size;  // several rebuilds
  std::vector<std::vector<float>> cached;
  GenerationHooks hooks;
  hooks.on_token = [&](int, const float* last) {
    cached.emplace_back(last, last + c.vocab_size);
    return true;
  };
  const std::vector<int> generated = generate(model, prompt, n, greedy, 1, hooks);
  ASSERT_EQ(cached.size(), size_t(n));
  std::vector<int> context = prompt;
  int window = std::min<int>(c.block_size, int(prompt.size()));  // what the cache holds
  int rebuilds = 0;
  for (int i = 0; i < n; ++i) {
    const int* tail = context.data() + context.size() - window;
    model.forward(Batch{{1, window}, tail, nullptr}, Pass{});
    const float* want = model.logits() + size_t(window - 1) * c.vocab_size;
    for (int v = 0; v < c.vocab_size; ++v)
      ASSERT_NEAR(cached[i][v], want[v], 1e-4) << "token " << i << " (window " << window << ") v=" << v;
    context.push_back(generated[i]);
    if (window == c.block_size) window = std::max(1, c.block_size / 2), ++rebuilds;
    else ++window;
  }
  EXPECT_GE(rebuilds, 4);
}

TEST(Generate, SamplingFollowsTheSeed) {
  GPTConfig c = small_config(NormPlacement::kPre, PositionEncoding::kLearned);
  GPT model(c);
  model.init_weights(9);
  SamplingOptions o;
  o.temperature = 1.0f, o.top_k = 5, o.top_p = 0.9f;
  EXPECT_EQ(generate(model, {1}, 30, o, 42), generate(model, {1}, 30, o, 42));
  EXPECT_NE(generate(model, {1}, 30, o, 42), generate(model, {1}, 30, o, 43));
}

TEST(Sampler, TopKAndTopPRestrictTheCandidates) {
  const std::vector<float> logits = {0.0f, 5.0f, 4.0f, -1.0f, 3.0f};
  SamplingOptions k1;
  k1.temperature = 1.0f, k1.top_k = 1;
  Sampler only_best(k1, 1);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(only_best.sample(logits.data(), 5), 1);
  SamplingOptions p;
  p.temperature = 1.0f, p.top_p = 0.5f;  // token 1 alone has probability ≈ 0.66
  Sampler nucleus(p, 1);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(nucleus.sample(logits.data(), 5), 1);
  SamplingOptions two;
  two.temperature = 1.0f, two.top_k = 2;
  Sampler top2(two, 3);
  for (int i = 0; i < 200; ++i) {
    const int t = top2.sample(logits.data(), 5);
    EXPECT_TRUE(t == 1 || t == 2) << t;
  }
}

}  // namespace
}  // namespace potop
