// The LM head's loss-only passes over a large vocabulary (nn/lm_head.h): a chunk of rows at a
// time, keeping no (rows × V) logits. The same loss and gradients as the whole pass, up to the
// GEMM's rounding; passes that read the logits keep them whole; the memory plan counts one chunk.
// (The parity tests check the chunked pass against PyTorch: TorchParity.LmHeadInChunks and
// LlamaParity.LmHeadInChunksUntied.)
#include "nn/lm_head.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/rng.h"
#include "models/gpt/gpt.h"
#include "support/lm_head_chunks.h"
#include "support/testing.h"
#include "support/torch_oracle.h"

namespace potop {
namespace {

GPTConfig config(int vocab_size) {
  GPTConfig c;
  c.vocab_size = vocab_size, c.block_size = 16, c.n_layer = 1, c.n_head = 2, c.n_embd = 16;
  return c;
}

struct Outcome {
  float loss = 0;
  std::vector<float> losses, grads;
};

Outcome train_pass(GPT& model, const Batch& batch) {
  model.parameters().zero_grad();
  Outcome r;
  r.loss = model.forward(batch, {/*training=*/true, 1});
  model.backward(1.0f);
  const int N = batch.B * batch.T;
  r.losses.assign(model.losses(), model.losses() + N);
  const Arena& g = model.parameters().grads();
  r.grads.assign(g.data(), g.data() + g.floats());
  return r;
}

TEST(LmHeadChunks, SameLossAndGradientsAsTheWholePass) {
  const GPTConfig c = config(37);
  GPT model(c);
  model.init_weights(3);
  const int B = 3, T = 13, N = B * T;
  Rng rng(5);
  std::vector<int> x(N), y(N);
  for (int i = 0; i < N; ++i) {
    x[i] = int(rng.below(c.vocab_size));
    y[i] = i % 5 == 2 ? -1 : int(rng.below(c.vocab_size));  // some targets ignored
  }
  const Batch batch{{B, T}, x.data(), y.data()};
  const Outcome whole = train_pass(model, batch);
  for (int rows : {1, 4, 7, N - 1}) {
    const testing::LmHeadChunksGuard chunks(rows, c.vocab_size);
    const Outcome chunked = train_pass(model, batch);
    SCOPED_TRACE("chunks of " + std::to_string(rows) + " rows");
    EXPECT_NEAR(chunked.loss, whole.loss, 1e-6f);
    testing::DiffReport report("chunked vs whole", 1e-12);
    report.add("losses", chunked.losses, whole.losses);
    report.add("gradients", chunked.grads, whole.grads);
    report.check();
  }
}

TEST(LmHeadChunks, PassesThatReadTheLogitsKeepThemWhole) {
  const GPTConfig c = config(29);
  GPT model(c);
  model.init_weights(4);
  const int T = 9;
  std::vector<int> x(T, 3);
  model.forward(Batch{{1, T}, x.data(), nullptr}, {});
  const std::vector<float> whole(model.logits(), model.logits() + size_t(T) * c.vocab_size);
  const testing::LmHeadChunksGuard chunks(2, c.vocab_size);
  model.forward(Batch{{1, T}, x.data(), nullptr}, {});  // no targets: logits are what it is for
  const std::vector<float> kept(model.logits(), model.logits() + size_t(T) * c.vocab_size);
  EXPECT_EQ(kept, whole);
}

TEST(LmHeadChunks, MemoryPlanCountsOneChunkOfALargeVocabulary) {
  GPTConfig c = config(50257);  // GPT-2's vocabulary
  c.block_size = 1024;
  const double N = 4.0 * 1024;
  auto logits_bytes = [&](const MemoryPlan& plan) {
    for (const auto& line : plan.lines)
      if (line.what == "activation logits") return line.bytes;
    return -1.0;
  };
  const double chunk_rows = double(TiedLMHead::kept_rows(int64_t(N), c.vocab_size, true));
  EXPECT_LT(chunk_rows, N / 10);
  EXPECT_EQ(TiedLMHead::kept_rows(int64_t(N), c.vocab_size, false), int64_t(N));
  EXPECT_EQ(logits_bytes(GPT::plan(c, {4, 1024})), 4.0 * chunk_rows * c.vocab_size);
  // A small vocabulary keeps its logits whole, as before.
  c.vocab_size = 95;
  EXPECT_EQ(logits_bytes(GPT::plan(c, {4, 1024})), 4.0 * N * c.vocab_size);
}

}  // namespace
}  // namespace potop
