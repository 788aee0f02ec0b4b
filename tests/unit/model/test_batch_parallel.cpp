// BatchParallel must compute the loss and gradients of the whole batch: the same as one model
// over all rows, up to float rounding, for any split of the rows.
#include "train/batch_parallel.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/rng.h"
#include "models/gpt/gpt.h"
#include "support/testing.h"

namespace potop {
namespace {

GPTConfig config(NormPlacement norm, float dropout = 0.0f) {
  GPTConfig c;
  c.vocab_size = 11, c.block_size = 8, c.n_layer = 2, c.n_head = 2, c.n_embd = 16;
  c.norm = norm, c.dropout = dropout;
  return c;
}

struct Tokens {
  std::vector<int> x, y;
  Batch batch(int B, int T) const { return Batch{{B, T}, x.data(), y.data()}; }
};

Tokens random_batch(const GPTConfig& c, int B, int T, uint64_t seed, bool some_ignored) {
  Rng rng(seed);
  Tokens b{std::vector<int>(size_t(B) * T), std::vector<int>(size_t(B) * T)};
  for (int& t : b.x) t = static_cast<int>(rng.below(c.vocab_size));
  for (int& t : b.y) t = static_cast<int>(rng.below(c.vocab_size));
  if (some_ignored) {
    for (size_t i = 0; i < b.y.size(); i += 3) b.y[i] = -1;  // uneven counts per shard
  }
  return b;
}

struct Result {
  std::vector<float> losses, grads;
};

// Two micro-batches of gradient accumulation, as the trainer runs them.
Result run(const GPTConfig& c, int replicas, int B, int T, bool some_ignored) {
  GPT model(c);
  model.init_weights(7);
  BatchParallel parallel(model, replicas);
  parallel.reserve({B, T});
  parallel.zero_grad();
  Result r;
  for (int micro = 0; micro < 2; ++micro) {
    const Tokens b = random_batch(c, B, T, 100 + micro, some_ignored);
    r.losses.push_back(parallel.forward(b.batch(B, T), {/*training=*/true, 55}));
    parallel.backward(0.5f);
  }
  parallel.reduce_grads();
  const Arena& g = model.parameters().grads();
  r.grads.assign(g.data(), g.data() + g.floats());
  return r;
}

TEST(BatchParallel, MatchesOneModelOverTheWholeBatch) {
  for (NormPlacement norm : {NormPlacement::kPre, NormPlacement::kPost}) {
    for (bool ignored : {false, true}) {
      const GPTConfig c = config(norm);
      const Result one = run(c, 1, 5, 8, ignored);
      for (int replicas : {2, 3, 5, 8}) {
        SCOPED_TRACE("replicas=" + std::to_string(replicas) + " ignored=" + std::to_string(ignored));
        const Result many = run(c, replicas, 5, 8, ignored);
        for (size_t i = 0; i < one.losses.size(); ++i) EXPECT_NEAR(many.losses[i], one.losses[i], 1e-6);
        const std::vector<double> ref(one.grads.begin(), one.grads.end());
        EXPECT_LT(testing::nmse(many.grads.data(), ref.data(), ref.size()), 1e-12);
      }
    }
  }
}

TEST(BatchParallel, SameInputsSameBits) {
  const GPTConfig c = config(NormPlacement::kPre, 0.2f);
  const Result a = run(c, 3, 7, 8, true), b = run(c, 3, 7, 8, true);
  EXPECT_EQ(a.losses, b.losses);
  EXPECT_TRUE(testing::bitwise_equal(a.grads, b.grads));
}

TEST(BatchParallel, OneReplicaIsTheModelItself) {
  // Dropout included: shard 0 keeps the step's seed, so one replica is bit for bit one model.
  const GPTConfig c = config(NormPlacement::kPre, 0.2f);
  const Result parallel = run(c, 1, 4, 8, false);
  GPT model(c);
  model.init_weights(7);
  model.parameters().zero_grad();
  std::vector<float> losses;
  for (int micro = 0; micro < 2; ++micro) {
    const Tokens b = random_batch(c, 4, 8, 100 + micro, false);
    losses.push_back(model.forward(b.batch(4, 8), {true, 55}));
    model.backward(0.5f);
  }
  EXPECT_EQ(parallel.losses, losses);
  const Arena& g = model.parameters().grads();
  EXPECT_TRUE(testing::bitwise_equal(parallel.grads, std::vector<float>(g.data(), g.data() + g.floats())));
}

TEST(BatchParallel, ShardsNeverExceedRows) {
  GPT model(config(NormPlacement::kPre));
  BatchParallel parallel(model, 4);
  EXPECT_EQ(parallel.max_replicas(), 4);
  EXPECT_EQ(parallel.shards(1), 1);
  EXPECT_EQ(parallel.shards(3), 3);
  EXPECT_EQ(parallel.shards(12), 4);
}

TEST(BatchParallel, MemoryPlanCountsEveryReplica) {
  const GPTConfig c = config(NormPlacement::kPre);
  GPT model(c);
  model.reserve({6, 8});
  size_t one_grads = 0;
  for (const auto& line : model.memory_plan({6, 8}).lines)
    if (line.what == "gradients") one_grads = line.bytes;
  BatchParallel parallel(model, 3);
  parallel.reserve({6, 8});
  size_t params = 0, grads = 0;
  for (const auto& line : parallel.memory_plan({6, 8}).lines) {
    if (line.what == "parameters") params = line.bytes;
    if (line.what == "gradients") grads = line.bytes;
  }
  EXPECT_EQ(grads, 3 * one_grads);
  EXPECT_EQ(params, one_grads);  // shared, counted once
}

}  // namespace
}  // namespace potop
