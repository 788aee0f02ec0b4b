// The BERT model (models/bert/bert.h) on its own: every parameter's gradient against central
// finite differences of the masked-LM loss, padding that changes nothing of the real positions
// (whatever the padded tokens are, the loss, the real positions' outputs and the gradients are
// the same bits, and a padded row scores as the row alone), a forward without targets, and a
// tiny BERT that learns to fill in a pattern only both sides of a gap determine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/rng.h"
#include "models/bert/bert.h"
#include "models/bert/masked_batches.h"
#include "support/testing.h"
#include "tokenizer/tokenizer.h"
#include "train/adamw.h"
#include "train/batch_parallel.h"
#include "train/train_step.h"
#include "unit/kernels/kernel_testing.h"

namespace potop {
namespace {

BertConfig tiny_config() {
  BertConfig c;
  c.vocab_size = 13;  // 4 specials, 8 ordinary tokens, [MASK]
  c.block_size = 8;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 8;
  c.dropout = 0.0f;
  return c;
}

// Weights of GPT-2's init scaled up, biases (lm_head.bias too) and gains perturbed: large enough
// that attention is far from uniform, so a wrong gradient through it shows.
void randomise(Bert& model, uint64_t seed) {
  model.init_weights(seed);
  Rng rng(seed + 1);
  const ParameterSet& params = model.parameters();
  for (const TensorSpec& spec : params.layout().specs()) {
    float* w = params.values().at(spec);
    for (size_t i = 0; i < spec.numel; ++i) {
      if (spec.init.kind == TensorInit::Kind::kNormal) w[i] *= 10.0f;
      else w[i] += static_cast<float>(0.2 * rng.normal());
    }
  }
}

// A masked batch of rows [CLS] window [SEP] <pad>... of the given window lengths.
struct MaskedBatch {
  MaskedRows rows;
  Batch batch;
  MaskedBatch(const BertConfig& c, int B, int T, const std::vector<int>& window_lengths, uint64_t seed,
              double fraction = 0.4) {
    Rng rng(seed);
    std::vector<int> windows(size_t(B) * (T - 2));
    for (int& t : windows) t = kSpecialCount + static_cast<int>(rng.below(uint64_t(c.vocab_size - 1 - kSpecialCount)));
    const MaskingRule rule{fraction, c.vocab_size - 1 /* [MASK] */, kSpecialCount, c.vocab_size - 1};
    batch = rows.fill(windows.data(), window_lengths.data(), B, T, rule, rng);
  }
};

std::vector<float> copy_of(const float* p, size_t n) { return {p, p + n}; }

// Models this small run on one thread: OpenMP's threads would only wait for one another (and
// spin for long on a loaded machine).
TEST(Bert, GradientsMatchFiniteDifferences) {
  const testing::ScopedThreads one_thread(1);
  // Pre-LN, post-LN, and Hugging Face's BERT: post-LN, erf GELU, the segment table, the embedding
  // LayerNorm and the masked-LM head's transform.
  for (const int variant : {0, 1, 2}) {
    BertConfig config = tiny_config();
    config.norm = variant == 0 ? NormPlacement::kPre : NormPlacement::kPost;
    if (variant == 2) {
      config.activation = Activation::kGeluErf;
      config.token_types = 2;
      config.embedding_norm = true;
      config.mlm_transform = true;
    }
    SCOPED_TRACE(describe_shape(config));
    Bert model(config);
    randomise(model, 3);
    const MaskedBatch data(config, 3, 8, {6, 3, 1}, 5);
    ParameterSet& params = model.parameters();
    params.zero_grad();
    model.forward(data.batch, Pass{});
    model.backward(1.0f);
    ASSERT_GE(model.masked_rows().size(), 3u);
    const std::vector<float> grads = copy_of(params.grads().data(), params.grads().floats());
    auto loss = [&] { return double(model.forward(data.batch, Pass{})); };
    // Every element of every tensor: the model has about 1,900 parameters.
    for (const TensorSpec& spec : params.layout().specs()) {
      EXPECT_TRUE(testing::gradient_matches(loss, params.values().at(spec), grads.data() + spec.offset, spec.numel,
                                            1e-2f, 5e-4, 3e-2))
          << spec.name;
    }
    // The head's bias: the mean over the masked rows of softmax - onehot, which is not 0 (the
    // bias is used) and sums to 0 over the vocabulary.
    const TensorSpec* bias = params.layout().find("lm_head.bias");
    ASSERT_NE(bias, nullptr);
    double sum = 0, norm1 = 0;
    for (size_t v = 0; v < bias->numel; ++v) sum += grads[bias->offset + v], norm1 += std::fabs(grads[bias->offset + v]);
    EXPECT_GT(norm1, 1e-3);
    EXPECT_NEAR(sum, 0.0, 1e-6);
  }
}

// Padding is exact: the tokens past a row's length are never seen by a real position, so
// garbage there (any id, [MASK] included) leaves the loss, the real positions' outputs and every
// gradient bit for bit as they were.
TEST(Bert, PaddingChangesNothing) {
  const BertConfig c = tiny_config();
  Bert model(c);
  randomise(model, 7);
  const int B = 3, T = 8, C = c.n_embd;
  MaskedBatch data(c, B, T, {6, 2, 4}, 9);
  ParameterSet& params = model.parameters();
  auto run = [&] {
    params.zero_grad();
    const float loss = model.forward(data.batch, Pass{});
    model.backward(1.0f);
    return loss;
  };
  const float loss = run();
  const std::vector<float> hidden = copy_of(model.hidden(), size_t(B) * T * C);
  const std::vector<float> grads = copy_of(params.grads().data(), params.grads().floats());
  Rng rng(1);
  int changed = 0;
  for (int b = 0; b < B; ++b)
    for (int t = data.batch.lengths[b]; t < T; ++t, ++changed)
      data.rows.tokens[size_t(b) * T + t] = static_cast<int>(rng.below(uint64_t(c.vocab_size)));
  ASSERT_GT(changed, 0);
  const float garbage = run();
  EXPECT_EQ(loss, garbage);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < data.batch.lengths[b]; ++t)
      for (int i = 0; i < C; ++i) {
        const size_t k = (size_t(b) * T + t) * C + i;
        ASSERT_EQ(hidden[k], model.hidden()[k]) << "row " << b << " position " << t;
      }
  EXPECT_TRUE(testing::bitwise_equal(grads, copy_of(params.grads().data(), params.grads().floats())));

  // A padded row scores as the row alone, unpadded: its loss, and its masked positions' logits.
  const int b = 1, n = data.batch.lengths[b];
  std::vector<int> masked_of_row;
  for (size_t m = 0; m < model.masked_rows().size(); ++m)
    if (model.masked_rows()[m] / T == b) masked_of_row.push_back(int(m));
  ASSERT_FALSE(masked_of_row.empty());
  const std::vector<float> logits = copy_of(model.logits(), model.masked_rows().size() * c.vocab_size);
  Batch alone{{1, n}, data.batch.tokens + size_t(b) * T, data.batch.targets + size_t(b) * T};
  double padded_loss = 0;
  Bert single(c);
  std::copy_n(params.values().data(), params.values().floats(), single.parameters().values().data());
  const float alone_loss = single.forward(alone, Pass{});
  for (size_t m = 0; m < masked_of_row.size(); ++m)
    for (int v = 0; v < c.vocab_size; ++v)
      EXPECT_NEAR(single.logits()[m * c.vocab_size + v], logits[size_t(masked_of_row[m]) * c.vocab_size + v], 1e-4);
  // The row's loss is the mean of its positions' cross-entropies, from those logits.
  for (size_t m = 0; m < masked_of_row.size(); ++m) {
    const float* l = logits.data() + size_t(masked_of_row[m]) * c.vocab_size;
    const int target = data.batch.targets[size_t(model.masked_rows()[size_t(masked_of_row[m])])];
    double z = 0;
    const float top = *std::max_element(l, l + c.vocab_size);
    for (int v = 0; v < c.vocab_size; ++v) z += std::exp(double(l[v]) - top);
    padded_loss += std::log(z) + top - l[target];
  }
  EXPECT_NEAR(alone_loss, padded_loss / masked_of_row.size(), 1e-4);
}

// Without targets the encoder runs alone: the same hidden states, no loss, nothing to backward.
TEST(Bert, ForwardWithoutTargetsRunsTheEncoder) {
  const BertConfig c = tiny_config();
  Bert model(c);
  randomise(model, 11);
  const MaskedBatch data(c, 2, 8, {6, 3}, 2);
  model.forward(data.batch, Pass{});
  const std::vector<float> hidden = copy_of(model.hidden(), size_t(2) * 8 * c.n_embd);
  Batch encode = data.batch;
  encode.targets = nullptr;
  EXPECT_EQ(model.forward(encode, Pass{}), 0.0f);
  EXPECT_TRUE(model.masked_rows().empty());
  EXPECT_TRUE(testing::bitwise_equal(hidden, copy_of(model.hidden(), hidden.size())));
  EXPECT_DEATH(model.backward(1.0f), "targets");
}

// Rows count up modulo 8 from a random start: "3 4 5 6 7 0 1 2". A masked token is its left
// neighbour + 1 and its right neighbour - 1; the first one has only a right neighbour, which a
// left-to-right model could not see. Chance is ln 8 ≈ 2.08; the trained model must fill nearly
// every gap, the first position's too, on rows it has not seen, 10% random replacements included.
TEST(Bert, TinyBertLearnsToFillACountingPattern) {
  const testing::ScopedThreads one_thread(1);
  constexpr int kCycle = 8;
  BertConfig c;
  c.vocab_size = kSpecialCount + kCycle + 1;
  c.block_size = 12;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 32;
  c.dropout = 0.0f;
  const int B = 16, T = c.block_size, W = T - 2;
  const MaskingRule rule{0.15, c.vocab_size - 1 /* [MASK] */, kSpecialCount, kSpecialCount + kCycle};
  Bert model(c);
  model.init_weights(5);
  BatchParallel one(model, 1);
  AdamW optimizer(model.parameters().layout(), {3e-3f, 0.9f, 0.99f, 1e-8f, 0.0f});
  Rng rng(17);
  std::vector<int> windows(size_t(B) * W);
  MaskedRows rows;
  auto next_batch = [&] {
    for (int b = 0; b < B; ++b) {
      const int start = static_cast<int>(rng.below(kCycle));
      for (int i = 0; i < W; ++i) windows[size_t(b) * W + i] = kSpecialCount + (start + i) % kCycle;
    }
    return rows.fill(windows.data(), nullptr, B, T, rule, rng);
  };
  float first = 0;
  for (int step = 0; step < 800; ++step) {
    const StepSettings s{3e-3f, /*grad_clip=*/1.0f, /*micro_batches=*/1, /*dropout_seed=*/1, step};
    const float loss = train_step(one, optimizer, s, next_batch).loss;
    if (step == 0) first = loss;
  }
  EXPECT_GT(first, 1.8f) << "an untrained model should be near chance (ln 8)";
  MaskedLMScore score;
  long first_position = 0, first_correct = 0;
  for (int i = 0; i < 20; ++i) {
    const Batch batch = next_batch();
    score.add(one, batch);
    const std::vector<int>& masked = model.masked_rows();
    for (size_t m = 0; m < masked.size(); ++m) {
      if (masked[m] % T != 1) continue;
      const float* l = model.logits() + m * c.vocab_size;
      ++first_position;
      first_correct += std::max_element(l, l + c.vocab_size) - l == batch.targets[masked[m]];
    }
  }
  std::printf("held out: loss %.4f, accuracy %.4f over %ld masked tokens; first position %ld of %ld\n", score.loss(),
              score.accuracy(), score.masked, first_correct, first_position);
  EXPECT_LT(score.loss(), 0.1);
  EXPECT_GT(score.accuracy(), 0.97);
  ASSERT_GT(first_position, 10);
  EXPECT_GT(double(first_correct) / first_position, 0.9) << "the first token, seen only from its right";
}

}  // namespace
}  // namespace potop
