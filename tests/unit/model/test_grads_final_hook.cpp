// ParameterSet::grads_final_from: multi-process training sends the gradients from `first` to the
// end of the arena as soon as the backward pass says they are final (train/train_step.cpp). If a
// model's backward touched any of them afterwards, the ranks would exchange unfinished sums, so:
// at every call, the arena's tail must already hold its final values, and the calls must go down
// the arena, one per sub-layer of the residual stacks.
#include <gtest/gtest.h>

#include <vector>

#include "core/rng.h"
#include "models/encoder_decoder/encoder_decoder.h"
#include "models/gpt/gpt.h"

namespace potop {
namespace {

struct Snapshot {
  size_t from;
  std::vector<float> tail;  // gradients [from, end) at the call
};

// Runs one forward/backward with the hook set; checks every snapshot against the final gradients.
void check_hook(Model& model, const Batch& batch, int expected_calls) {
  model.reserve(batch);
  model.parameters().zero_grad();
  ParameterSet& params = model.parameters();
  std::vector<Snapshot> snapshots;
  params.set_grads_final_hook([&](ParamId first) {
    const Arena& g = params.grads();
    const size_t from = params.spec(first).offset;
    snapshots.push_back({from, std::vector<float>(g.data() + from, g.data() + g.floats())});
  });
  model.forward(batch, {/*training=*/true, 3});
  model.backward(1.0f);
  params.set_grads_final_hook(nullptr);
  ASSERT_EQ(static_cast<int>(snapshots.size()), expected_calls);
  const Arena& g = params.grads();
  for (size_t i = 0; i < snapshots.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(snapshots[i].from, snapshots[i - 1].from) << "call " << i << " does not go down the arena";
    }
    bool nonzero = false;
    for (size_t j = 0; j < snapshots[i].tail.size(); ++j) {
      ASSERT_EQ(snapshots[i].tail[j], g.data()[snapshots[i].from + j])
          << "call " << i << ": gradient float " << snapshots[i].from + j << " changed after it was called final";
      nonzero = nonzero || snapshots[i].tail[j] != 0.0f;
    }
    EXPECT_TRUE(nonzero) << "call " << i << ": an all-zero tail says nothing";
  }
}

std::vector<int> ids(Rng& rng, size_t n, int lo, int V) {
  std::vector<int> v(n);
  for (int& t : v) t = lo + static_cast<int>(rng.below(uint64_t(V - lo)));
  return v;
}

TEST(GradsFinalHook, GptFinishesEachSubLayerFromTheEndDown) {
  for (NormPlacement norm : {NormPlacement::kPre, NormPlacement::kPost}) {
    GPTConfig c;
    c.vocab_size = 11, c.block_size = 8, c.n_layer = 3, c.n_head = 2, c.n_embd = 16, c.norm = norm, c.dropout = 0.1f;
    GPT model(c);
    model.init_weights(5);
    Rng rng(9);
    const int B = 2, T = 8;
    std::vector<int> x = ids(rng, B * T, 0, c.vocab_size), y = ids(rng, B * T, 0, c.vocab_size);
    check_hook(model, Batch{{B, T}, x.data(), y.data()}, 2 * c.n_layer);
  }
}

TEST(GradsFinalHook, EncoderDecoderFinishesDecoderThenEncoder) {
  for (NormPlacement norm : {NormPlacement::kPre, NormPlacement::kPost}) {
    EncoderDecoderConfig c;
    c.vocab_size = 23, c.block_size = 16, c.n_layer = 2, c.n_head = 2, c.n_embd = 16, c.dropout = 0.1f, c.norm = norm;
    EncoderDecoder model(c);
    model.init_weights(5);
    Rng rng(9);
    const int B = 2, T = 6, S = 5;
    std::vector<int> x = ids(rng, B * T, 4, c.vocab_size), y = ids(rng, B * T, 4, c.vocab_size);
    std::vector<int> src = ids(rng, B * S, 4, c.vocab_size);
    Batch batch{{B, T, S}, x.data(), y.data()};
    batch.source = src.data();
    // The decoder's 3 sub-layers per layer, then the encoder's 2.
    check_hook(model, batch, 5 * c.n_layer);
  }
}

}  // namespace
}  // namespace potop
