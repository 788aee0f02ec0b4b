// A tiny GPT must learn a task it can only solve with attention: copy a random sequence.
// Input "d1 … d8 | d1 … d8"; the loss counts only the copied half, so a model that has not
// learned to look back cannot do better than chance (ln 10 ≈ 2.30).
#include <gtest/gtest.h>

#include "core/rng.h"
#include "models/gpt/gpt.h"
#include "train/adamw.h"
#include "train/batch_parallel.h"
#include "train/train_step.h"

namespace potop {
namespace {

constexpr int kDigits = 10, kSeparator = 10, kLen = 8;

void copy_batch(Rng& rng, int B, std::vector<int>& x, std::vector<int>& y) {
  const int T = 2 * kLen + 1;
  x.assign(size_t(B) * T, 0);
  y.assign(size_t(B) * T, -1);
  for (int b = 0; b < B; ++b) {
    int* row = x.data() + b * T;
    for (int i = 0; i < kLen; ++i) row[i] = row[kLen + 1 + i] = static_cast<int>(rng.below(kDigits));
    row[kLen] = kSeparator;
    // position kLen (the separator) and after predict the copy
    for (int i = kLen; i < T - 1; ++i) y[b * T + i] = row[i + 1];
    y[b * T + T - 1] = -1;
  }
}

TEST(Learning, TinyGptLearnsToCopyASequence) {
  GPTConfig c;
  c.vocab_size = kDigits + 1, c.block_size = 2 * kLen + 1, c.n_layer = 2, c.n_head = 2, c.n_embd = 32;
  GPT model(c);
  model.init_weights(7);
  BatchParallel one(model, 1);
  AdamW optimizer(model.parameters().layout(), {3e-3f, 0.9f, 0.99f, 1e-8f, 0.0f});
  Rng rng(11);
  std::vector<int> x, y;
  const int B = 16, T = c.block_size;
  float first = 0, last = 0;
  for (int step = 0; step < 400; ++step) {
    const StepSettings s{3e-3f, /*grad_clip=*/1.0f, /*micro_batches=*/1, /*dropout_seed=*/7, step};
    const float loss = train_step(one, optimizer, s, [&] {
                         copy_batch(rng, B, x, y);
                         return Batch{{B, T}, x.data(), y.data()};
                       }).loss;
    if (step == 0) first = loss;
    last = loss;
  }
  EXPECT_GT(first, 2.0f) << "an untrained model should be at chance";
  // Held-out batch: the copy must be nearly perfect.
  copy_batch(rng, B, x, y);
  const float held_out = model.forward(Batch{{B, T}, x.data(), y.data()}, Pass{});
  EXPECT_LT(held_out, 0.1f) << "last training loss " << last;
}

}  // namespace
}  // namespace potop
