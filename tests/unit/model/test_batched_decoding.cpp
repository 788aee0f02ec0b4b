// Batched decoding (GPT::forward_rows): rows of independent sequences, each at its own position
// in its own KV cache, must give what decoding each sequence alone gives.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "models/gpt/gpt.h"
#include "support/testing.h"

namespace potop {
namespace {

GPTConfig small_config(NormPlacement norm, PositionEncoding positions) {
  GPTConfig c;
  c.vocab_size = 13, c.block_size = 16, c.n_layer = 2, c.n_head = 3, c.n_embd = 18;
  c.norm = norm, c.positions = positions;
  return c;
}

class BatchedDecodingTest : public ::testing::TestWithParam<std::pair<NormPlacement, PositionEncoding>> {};

TEST_P(BatchedDecodingTest, RowsMatchEachSequenceDecodedAlone) {
  const GPTConfig c = small_config(GetParam().first, GetParam().second);
  GPT model(c);
  model.init_weights(4);
  Rng rng(8);
  constexpr int kRows = 4;
  const int prompt_lengths[kRows] = {1, 5, 3, 9};  // every row at a different position
  std::vector<std::vector<int>> seqs(kRows);
  for (auto& s : seqs) {
    s.resize(c.block_size);
    for (int& t : s) t = static_cast<int>(rng.below(c.vocab_size));
  }
  // Alone: each sequence's prompt, then one token at a time through the batch-1 KV-cache path.
  // Batched: the same prompts, then all rows together through forward_rows.
  std::vector<KVCache> alone, batched;
  for (int b = 0; b < kRows; ++b) {
    alone.push_back(model.new_cache());
    batched.push_back(model.new_cache());
    model.forward(seqs[b].data(), prompt_lengths[b], alone[b], LogitRows::kAll);
    model.forward(seqs[b].data(), prompt_lengths[b], batched[b], LogitRows::kAll);
  }
  KVCache* caches[kRows];
  for (int b = 0; b < kRows; ++b) caches[b] = &batched[b];
  double worst = 0;
  for (int step = 0; step < 6; ++step) {
    std::vector<std::vector<float>> expected(kRows);
    int tokens[kRows];
    for (int b = 0; b < kRows; ++b) {
      tokens[b] = seqs[b][prompt_lengths[b] + step];
      model.forward(&tokens[b], 1, alone[b], LogitRows::kAll);
      expected[b].assign(model.logits(), model.logits() + c.vocab_size);
    }
    model.forward_rows(tokens, kRows, caches);
    ASSERT_EQ(model.last_rows(), kRows);
    for (int b = 0; b < kRows; ++b) {
      EXPECT_EQ(batched[b].length, alone[b].length);
      for (int v = 0; v < c.vocab_size; ++v) {
        const float got = model.logits()[size_t(b) * c.vocab_size + v];
        ASSERT_NEAR(got, expected[b][v], 1e-5) << "step " << step << " row " << b << " v " << v;
        worst = std::max(worst, std::fabs(double(got) - expected[b][v]));
      }
    }
  }
  RecordProperty("worst_abs_difference", std::to_string(worst));
}

INSTANTIATE_TEST_SUITE_P(Variants, BatchedDecodingTest,
                         ::testing::Values(std::pair{NormPlacement::kPre, PositionEncoding::kLearned},
                                           std::pair{NormPlacement::kPost, PositionEncoding::kSinusoidal}));

TEST(BatchedDecoding, OneRowIsBitwiseTheBatchOnePath) {
  const GPTConfig c = small_config(NormPlacement::kPre, PositionEncoding::kLearned);
  GPT model(c);
  model.init_weights(6);
  const int prompt[3] = {1, 2, 3};
  KVCache a = model.new_cache(), b = model.new_cache();
  model.forward(prompt, 3, a, LogitRows::kAll);
  model.forward(prompt, 3, b, LogitRows::kAll);
  const int next = 7;
  model.forward(&next, 1, a, LogitRows::kAll);
  const std::vector<float> expected(model.logits(), model.logits() + c.vocab_size);
  KVCache* caches[1] = {&b};
  model.forward_rows(&next, 1, caches);
  for (int v = 0; v < c.vocab_size; ++v) EXPECT_EQ(model.logits()[v], expected[v]) << v;
}

TEST(BatchedDecodingDeathTest, RefusesARowWithAFullCache) {
  const GPTConfig c = small_config(NormPlacement::kPre, PositionEncoding::kLearned);
  GPT model(c);
  model.init_weights(6);
  std::vector<int> prompt(c.block_size, 1);
  KVCache full = model.new_cache();
  model.forward(prompt.data(), c.block_size, full, LogitRows::kAll);
  KVCache* caches[1] = {&full};
  EXPECT_DEATH(model.forward_rows(prompt.data(), 1, caches), "context longer than block_size");
}

}  // namespace
}  // namespace potop
